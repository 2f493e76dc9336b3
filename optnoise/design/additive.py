"""The additive release on the integers: ``q + eta`` on Z, with no range and no ``n``.

Counts and integer sums are released as ``q + eta`` with an integer noise ``eta``, the
way OpenDP and Google's libraries add a discrete Laplace or Gaussian. Neighbouring answers
differ by the neighbourhood's shifts (``Neighborhood.bd(D)``: ``+-1..+-D``; any scalar
shift set, directed or not), so the privacy pairs are ``f(eta)`` against ``f(eta + mu)``
for every integer ``eta``: infinitely many. This module owns everything the release needs:
its noise support and shape, the cost of each metric, the neighbour pairs, the rows, the
evaluation (distortion, ``achieved``, the released errors) and the solve. It is the
"release object" of issue 29 in the making: :class:`~optnoise.design.noise.NoiseDesign`
only dispatches to it.

The noise. A finite part ``f(-L..L)`` plus *staircase tails*: beyond ``L`` the last ``P``
masses (``P`` = the largest |shift|) repeat with a factor ``a = e^-eps`` per period,
``f(x + P) = a f(x)`` for ``x > L - P``, and mirrored on the left. The family is linear in
``f``, contains the Geng-Viswanath staircase (the pure-DP optimum for MSE and MAE) and
every PMF supported on ``{-L+P..L-P}`` (zero base masses), and grows with ``L``. In the
periodic region every privacy term (a hockey-stick term, a leak mass, a ratio) is ``a``
times the term one period before, so the terms of all outputs beyond the first tail period
sum to the first period's times ``1 / (1 - a)``: the LP lists the entries whose smaller
output is at most ``L`` (and larger at least ``-L``) one by one, and one window of
*aggregated* entries ``G = F / (1 - a)`` per side. Tail mass and tail cost are exact
geometric sums (``sum_m a^m c(x + m P)``: closed forms for ``|e|^p`` with integer ``p``
and for indicator costs, a series summed to double precision otherwise); nothing is
truncated.

The support. ``support=L`` fixes the finite part; by default ``L`` starts at
:func:`initial_support` and doubles until doubling no longer lowers the optimum (relative
:data:`SUPPORT_RTOL`): the boundary is then inactive and the result says so
(:attr:`AdditiveResult.support_note`). As the families are nested, every ``L`` gives a
valid design; the optimum is proven for the family (staircase tails beyond ``L``).

Metrics (on the released error ``eta``): ``"mse"``, ``"mae"``, ``"er"`` (``P(eta != 0)``),
``"abs^p"`` (``E|eta|^p``, e.g. ``"abs^3"`` or ``"abs^1.5"``), ``"exceed:t"``
(``P(|eta| > t)``, integer ``t >= 0``), a function ``c(eta)`` of integer arrays, or a cost
vector over ``{-L..L}`` (needs ``support=L``; each tail charged its boundary value).

Notions: ``"dp"`` (pure when ``delta = 0``), ``"pdp"`` (a MILP), ``"profile"``. Not yet:
``"rdp"``, ``"zcdp"``, ``"composed"`` (refused by name), nor ``objective="delta"``.
Symmetric neighbourhoods and costs under the LP notions solve for a symmetric PMF only:
averaging a feasible PMF with its reflection keeps it feasible (the constraints are convex)
and keeps its cost, so nothing is lost, and the LP halves.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from optnoise.design.pipeline import backend_solve, proof_dual
from optnoise.design.rows import add_pair_rows
from optnoise.engine.model import LinearModel, ModelBuilder
from optnoise.engine.output import relative_gap
from optnoise.engine.solve import check_solve_args
from optnoise.engine.tolerance import MIP_REL_GAP, dp_eps, pdp_rtol, settle_gap, settle_status
from optnoise.engine.validation import (
    MAX_COST,
    MAX_EPS,
    MAX_EPS_REASON,
    check_choice,
    check_delta,
    check_eps,
    check_int,
    check_model_size,
    real_array,
    shown,
)
from optnoise.privacy.curves import hockey_stick, pdp_leak
from optnoise.privacy.neighborhood import Neighborhood
from optnoise.privacy.profile import check_profile, profile_satisfied

if TYPE_CHECKING:
    from optnoise.design.noise import NoiseDesign

__all__ = [
    "ADDITIVE",
    "ADDITIVE_NOTIONS",
    "ADDITIVE_METRICS",
    "MAX_SUPPORT",
    "AdditiveResult",
    "Tail",
    "initial_support",
    "setup",
    "solve",
]

#: The release name.
ADDITIVE = "additive"
#: Notions the additive release supports today.
ADDITIVE_NOTIONS = ("dp", "pdp", "profile")
#: Notions refused by name (not yet supported for the additive release).
NOT_YET = ("pdp-kadam", "rdp", "zcdp", "composed")
#: Metric names (``"abs^p"`` and ``"exceed:t"`` take a number).
ADDITIVE_METRICS = ("mse", "mae", "er", "abs^p", "exceed:t")
#: Largest finite half-width ``L`` (given or grown).
MAX_SUPPORT = 100_000
#: Doubling ``L`` stops when it lowers the optimum by at most this (relative to max(1, |optimum|)).
SUPPORT_RTOL = 1e-9
_POWER = re.compile(r"abs\^([0-9]*\.?[0-9]+)$")
_EXCEED = re.compile(r"exceed:([0-9]+)$")


# --------------------------------------------------------------------------------------------
# costs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Cost:
    """The cost ``c(eta)`` of a metric, with what makes its tail sums exact.

    ``power``: ``|eta|^power``; ``beyond``: the cost is this constant for ``|eta| > threshold``;
    otherwise ``fn`` is summed as a series.
    """

    name: str
    fn: Callable[[np.ndarray], np.ndarray]
    power: float | None = None
    beyond: float | None = None
    threshold: int = 0
    vector: np.ndarray | None = None

    def symmetric(self, L: int) -> bool:
        if self.power is not None or self.name in ("er",) or self.name.startswith("exceed:"):
            return True
        x = np.arange(1, L + 1)
        return bool(np.array_equal(self.fn(x), self.fn(-x)))


def _power_cost(p: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda x: np.abs(np.asarray(x, dtype=float)) ** p


def parse_metric(metric: Any, support: int | None) -> _Cost:
    """The :class:`_Cost` of ``metric`` (module docstring), or a ``ValueError`` naming it."""
    if isinstance(metric, str):
        if metric in ("mse", "mae"):
            return _Cost(metric, _power_cost(2.0 if metric == "mse" else 1.0), power=2.0 if metric == "mse" else 1.0)
        if metric == "er":
            return _Cost("er", lambda x: (np.asarray(x) != 0).astype(float), beyond=1.0, threshold=0)
        m = _POWER.match(metric)
        if m and 0.0 < float(m.group(1)) <= 16.0:
            return _Cost(metric, _power_cost(float(m.group(1))), power=float(m.group(1)))
        m = _EXCEED.match(metric)
        if m and len(m.group(1)) <= 9:
            t = int(m.group(1))
            return _Cost(metric, lambda x: (np.abs(np.asarray(x)) > t).astype(float), beyond=1.0, threshold=t)
        raise ValueError(
            f"metric must be one of {', '.join(ADDITIVE_METRICS)} for release='additive' (abs^p with 0 < p <= 16, "
            f"e.g. 'abs^3'; exceed:t with an integer t >= 0, e.g. 'exceed:2'), a function of eta or a cost vector; "
            f"got {shown(metric)}"
        )
    if callable(metric):

        def fn(x: np.ndarray) -> np.ndarray:
            v = np.broadcast_to(np.asarray(metric(np.asarray(x, dtype=np.int64)), dtype=float), np.shape(x))
            if not np.all(np.isfinite(v)) or np.any(np.abs(v) > MAX_COST):
                raise ValueError(f"metric function values must be finite with magnitude <= {MAX_COST:g}")
            return v

        return _Cost("custom", fn)
    cost = real_array("metric", metric).ravel()
    if support is None:
        raise ValueError("a metric cost vector for release='additive' needs support=L (its 2L+1 entries: eta = -L..L)")
    if cost.size != 2 * support + 1:
        raise ValueError(f"metric cost vector must have 2*support+1 = {2 * support + 1} entries; got {cost.size}")
    if not np.all(np.isfinite(cost)) or np.max(np.abs(cost)) > MAX_COST:
        raise ValueError(f"metric cost vector must be finite with magnitude <= {MAX_COST:g}")
    vec = cost.copy()

    def fn_vec(x: np.ndarray) -> np.ndarray:
        return vec[np.clip(np.asarray(x, dtype=np.int64) + support, 0, 2 * support)]

    return _Cost("custom", fn_vec, vector=vec)


def _power_sums(k_max: int, a: float) -> np.ndarray:
    """``S_k = sum_{m >= 0} m^k a^m`` for ``k = 0..k_max``: ``(1 - a) S_k = a sum_{j<k} C(k, j) S_j``."""
    S = np.zeros(k_max + 1)
    S[0] = 1.0 / (1.0 - a)
    for k in range(1, k_max + 1):
        S[k] = a * sum(math.comb(k, j) * S[j] for j in range(k)) / (1.0 - a)
    return S


def tail_weights(cost: _Cost, x: np.ndarray, period: int, a: float) -> np.ndarray:
    """``w(x) = sum_{m >= 0} a^m c(x + m P s)`` (``s`` the sign of ``x``): the exact cost of a tail.

    ``x`` lies beyond the finite part (all of one sign), ``P = period``.
    """
    x = np.asarray(x, dtype=np.int64)
    step = period * np.sign(x)
    if cost.vector is not None:
        return cost.fn(x) / (1.0 - a)  # constant beyond the boundary
    if cost.beyond is not None and np.all(np.abs(x) > cost.threshold):
        return np.full(x.shape, cost.beyond / (1.0 - a))
    if cost.power is not None and float(cost.power).is_integer():
        # sum_m a^m (|x| + m P)^p = sum_k C(p, k) |x|^(p-k) P^k S_k
        p = int(cost.power)
        S = _power_sums(p, a)
        ax = np.abs(x).astype(float)
        return sum(math.comb(p, k) * ax ** (p - k) * float(period) ** k * S[k] for k in range(p + 1))
    # a series: its terms shrink geometrically once a^m beats the cost's growth; summed until negligible
    total = np.zeros(x.shape)
    m, am = 0, 1.0
    while True:
        term = am * cost.fn(x + m * step)
        total = total + term
        m, am = m + 1, am * a
        if (m > 16 and np.all(np.abs(term) <= 1e-18 * np.maximum(np.abs(total), 1e-300))) or am < 1e-300:
            return total
        if m > 10_000_000:
            raise ValueError("the metric's tail sum does not converge fast enough (cost grows too fast)")


# --------------------------------------------------------------------------------------------
# setup (the NoiseDesign hook)
# --------------------------------------------------------------------------------------------


def scalar_shifts(neighborhood: Neighborhood) -> np.ndarray:
    """The nonzero integer shifts of a scalar neighbourhood on Z (with negatives unless directed)."""
    if neighborhood.dim != 1:
        raise ValueError("neighborhood must have scalar shifts for release='additive' (a query with integer answers)")
    raw = np.array([s[0] for s in neighborhood.raw], dtype=np.int64)
    if not neighborhood.directed:
        raw = np.concatenate([raw, -raw])
    out = np.unique(raw[raw != 0])
    if out.size == 0:
        raise ValueError("neighborhood must have a nonzero shift for release='additive'")
    if int(np.max(np.abs(out))) > MAX_SUPPORT:
        raise ValueError(f"neighborhood shifts must have |shift| <= {MAX_SUPPORT} for release='additive'")
    return out


def setup(design: Any, **kw: Any) -> None:
    """Validate and store an additive design on ``design`` (a :class:`NoiseDesign`; module docstring)."""
    if kw["n"] is not None:
        raise ValueError(
            "n applies to release='modulo' or 'clamp'; release='additive' releases q + eta on all integers "
            "and takes no n (leave it unset; support=L bounds the finite part of the noise if needed)"
        )
    privacy = kw["privacy"]
    if privacy in NOT_YET:
        raise ValueError(
            f"privacy={shown(privacy)} is not yet supported for release='additive'; use one of "
            f"{', '.join(ADDITIVE_NOTIONS)}"
        )
    design.privacy = check_choice("privacy", privacy, ADDITIVE_NOTIONS)
    if kw["objective"] != "distortion" or kw["max_distortion"] is not None:
        raise ValueError("objective must be 'distortion' for release='additive' (the others are not yet supported)")
    for name in ("shape", "rdp", "rho", "alphas", "compositions", "discretization"):
        if kw[name] is not None:
            raise ValueError(f"{name} does not apply to release='additive' with privacy={shown(design.privacy)}")
    if not isinstance(kw["neighborhood"], Neighborhood):
        raise ValueError(
            f"neighborhood must be a Neighborhood (e.g. Neighborhood.bd(3)); got {shown(kw['neighborhood'])}"
        )
    design.neighborhood = kw["neighborhood"]
    design.release, design.objective, design.n, design.max_distortion, design.budget = (
        ADDITIVE,
        "distortion",
        None,
        None,
        None,
    )
    design.compositions = design.discretization = None
    design.shifts = scalar_shifts(design.neighborhood)
    design.period = int(np.max(np.abs(design.shifts)))
    design.profile = None
    if design.privacy == "profile":
        if kw["eps"] is not None or kw["delta"] is not None:
            raise ValueError("privacy='profile' takes its budget (profile=[(eps, delta), ...]) instead of eps/delta")
        if kw["profile"] is None:
            raise ValueError("profile is required with privacy='profile'")
        design.profile = check_profile(kw["profile"])
        design.eps, design.delta = None, None
        design.tail_eps = min(e for e, _ in design.profile)  # every pair's ratio holds along the tail
    else:
        if kw["profile"] is not None:
            raise ValueError("profile applies only with privacy='profile'")
        design.eps = check_eps(kw["eps"], maximum=MAX_EPS, why=MAX_EPS_REASON)
        design.delta = 0.0 if kw["delta"] is None else check_delta(kw["delta"])
        design.tail_eps = design.eps
    support = kw["support"]
    if support is not None:
        support = check_int("support", support, minimum=1, maximum=MAX_SUPPORT)
        if support < design.period:
            raise ValueError(f"support must be at least the largest |shift| = {design.period}; got {support}")
    design.support = support
    design.cost_of = parse_metric(kw["metric"], support)
    design.metric = design.cost_of.name
    design.cost = design.cost_of.vector
    design.shape = None
    if support is not None:
        check_model_size(model_size(design, support), what=f"the {design.privacy!r} model of this design")


def initial_support(design: Any) -> int:
    """The first ``L`` tried when ``support`` is unset: a few noise scales ``P / eps``, and past ``exceed:t``."""
    eps = float(design.tail_eps)
    L = max(2 * design.period, int(math.ceil(4 * design.period / max(eps, 1e-3))), 8)
    if design.cost_of.beyond is not None:
        L = max(L, design.cost_of.threshold + design.period)
    return min(L, MAX_SUPPORT)


# --------------------------------------------------------------------------------------------
# the model
# --------------------------------------------------------------------------------------------


def _symmetric(design: Any, L: int) -> bool:
    """Solve for a symmetric PMF only (LP notions, symmetric shifts and costs; module docstring)."""
    s = design.shifts
    return design.privacy != "pdp" and np.array_equal(np.sort(-s), s) and design.cost_of.symmetric(L)


def _entries(L: int, P: int, shifts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every privacy entry ``(eta, eta + mu)`` the model or the check lists, on the grid ``-L-2P..L+2P``.

    Returns ``(k, first, second, window)``: the shift index, the two outputs, and whether the
    entry stands for its whole periodic tail (aggregated: smaller output in ``L+1..L+P``, or
    larger output in ``-L-P..-L-1``). Explicit entries have smaller output ``<= L`` and larger
    ``>= -L``; every other entry is ``a^m`` times a window entry.
    """
    eta = np.arange(-L - 2 * P, L + 2 * P + 1)
    K = shifts.size
    k = np.repeat(np.arange(K), eta.size)
    first = np.tile(eta, K)
    second = first + np.repeat(shifts, eta.size)
    lo, hi = np.minimum(first, second), np.maximum(first, second)
    inside = (second >= -L - 2 * P) & (second <= L + 2 * P)
    explicit = inside & (lo <= L) & (hi >= -L)
    window = inside & (((lo >= L + 1) & (lo <= L + P)) | ((hi <= -L - 1) & (hi >= -L - P)))
    keep = explicit | window
    return k[keep], first[keep], second[keep], window[keep]


def _budget(design: Any) -> list[tuple[float, float]]:
    return list(design.profile) if design.profile is not None else [(float(design.eps), float(design.delta))]


def model_size(design: Any, L: int) -> dict[str, int]:
    """Rows, columns, integers and nonzeros of the model at support ``L`` (an upper estimate, before building)."""
    K, P = design.shifts.size, design.period
    E = K * (2 * L + 4 * P + 1)  # entries, at most
    pairs = len(_budget(design))
    per = {"dp": (1, 1, 0, 3), "pdp": (3, 2, 1, 8)}["pdp" if design.privacy == "pdp" else "dp"]
    rows, cols = 1 + 8 * P + pairs * (per[0] * E + K), 2 * L + 1 + 8 * P + pairs * per[1] * E
    return {
        "rows": rows,
        "cols": cols,
        "integers": pairs * per[2] * E,
        "nonzeros": 2 * L + 1 + 24 * P + pairs * (per[3] + 1) * E,
    }


@dataclass
class _Columns:
    """Model columns of one support ``L``: ``F(x)`` and ``G(x) = F(x) / (1 - a)`` on ``-L-2P..L+2P``."""

    L: int
    F: np.ndarray
    G: np.ndarray
    f: np.ndarray  # the finite variables (x = -L..L, or 0..L when symmetric)
    symmetric: bool


def build(design: Any, L: int) -> tuple[LinearModel, _Columns]:
    """The LP/MILP at support ``L`` (module docstring) and where its columns are."""
    P, a = design.period, math.exp(-design.tail_eps)
    sym = _symmetric(design, L)
    mb = ModelBuilder()
    X = 2 * L + 4 * P + 1
    xs = np.arange(-L - 2 * P, L + 2 * P + 1)
    F = np.full(X, -1, dtype=np.int64)
    G = np.full(X, -1, dtype=np.int64)
    fin = np.abs(xs) <= L
    if sym:
        f = mb.add_vars(L + 1, lb=0.0, ub=1.0, name="f")
        F[fin] = f[np.abs(xs[fin])]
    else:
        f = mb.add_vars(2 * L + 1, lb=0.0, ub=1.0, name="f")
        F[fin] = f
    right = np.arange(L + 1, L + 2 * P + 1)
    sides = [right] if sym else [right, -right]
    for side in sides:
        Ft = mb.add_vars(2 * P, lb=0.0, ub=1.0, name="tail")
        Gt = mb.add_vars(2 * P, lb=0.0, ub=1.0 / (1.0 - a), name="tail_sum")
        F[side + L + 2 * P], G[side + L + 2 * P] = Ft, Gt
        back = side - P * np.sign(side)
        j = np.arange(2 * P)
        # F(x) = a F(x -+ P) and (1 - a) G(x) = F(x): the staircase and its geometric sum
        mb.add_rows(
            np.repeat(j, 2),
            np.stack([Ft, F[back + L + 2 * P]], 1).ravel(),
            np.tile([1.0, -a], 2 * P),
            lower=0.0,
            upper=0.0,
        )
        mb.add_rows(
            np.repeat(j, 2), np.stack([Gt, Ft], 1).ravel(), np.tile([1.0 - a, -1.0], 2 * P), lower=0.0, upper=0.0
        )
    if sym:
        F[: 2 * P] = F[::-1][: 2 * P]
        G[: 2 * P] = G[::-1][: 2 * P]
    cols = _Columns(L, F, G, f, sym)
    # the mass and the cost: finite part plus the first tail period's geometric sums
    c = design.cost_of
    first = np.concatenate([right[:P], -right[:P]])
    w = tail_weights(c, first, P, a)
    mass_cols = np.concatenate([F[fin], G[first + L + 2 * P]])
    mb.add_row(mass_cols, 1.0, lower=1.0, upper=1.0)
    mb.set_objective(np.concatenate([F[fin], F[first + L + 2 * P]]), np.concatenate([c.fn(xs[fin]), w]))
    k, p, q, win = _entries(L, P, design.shifts)
    if sym:  # mu and -mu give the same rows for a symmetric PMF
        keep = design.shifts[k] > 0
        k, p, q, win = k[keep], p[keep], q[keep], win[keep]
    pick = lambda x, w_: np.where(w_, G[x + L + 2 * P], F[x + L + 2 * P])  # noqa: E731
    first_c, second_c = pick(p, win), pick(q, win)
    for eps, delta in _budget(design):
        notion = "pure" if delta == 0.0 else ("pdp" if design.privacy == "pdp" else "dp")
        add_pair_rows(mb, first_c, second_c, k, eps=eps, notion=notion, delta=None if notion == "pure" else delta)
    return mb.build(), cols


# --------------------------------------------------------------------------------------------
# evaluation: everything is computed from the finite PMF, the tails derived from it
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tail:
    """The staircase tails beyond ``{-L..L}``: ``f(x + P) = a f(x)`` for ``x > L - P``, mirrored on the left.

    ``right`` holds ``f(L+1..L+P)`` (the first period beyond ``L``), ``left`` ``f(-L-P..-L-1)``;
    period ``m`` beyond is ``a^m`` times them.
    """

    period: int
    factor: float
    support: int
    right: np.ndarray
    left: np.ndarray

    @property
    def mass(self) -> float:
        """Total mass beyond ``{-L..L}`` (exact geometric sums)."""
        return float((self.right.sum() + self.left.sum()) / (1.0 - self.factor))

    def pmf_at(self, x: Any) -> np.ndarray:
        """``f(x)`` for integers ``|x| > L`` (0 never: the tail is a geometric staircase)."""
        x = np.asarray(x, dtype=np.int64)
        L, P = self.support, self.period
        if np.any(np.abs(x) <= L):
            raise ValueError(f"x must lie beyond the finite support (|x| > {L})")
        d = np.abs(x) - L - 1
        base = np.where(x > 0, self.right[d % P], self.left[::-1][d % P])
        return base * self.factor ** (d // P)

    def to_dict(self) -> dict[str, Any]:
        return {
            "period": self.period,
            "factor": self.factor,
            "right": self.right.tolist(),
            "left": self.left.tolist(),
            "mass": self.mass,
        }


def _extended(design: Any, pmf: np.ndarray, L: int) -> tuple[np.ndarray, Tail]:
    """``F(x)`` on ``-L-2P..L+2P`` from the finite PMF, and its :class:`Tail`."""
    P, a = design.period, math.exp(-design.tail_eps)
    F = np.zeros(2 * L + 4 * P + 1)
    F[2 * P : 2 * P + 2 * L + 1] = pmf
    for i in range(2 * P):  # right: index 2P + 2L + 1 + i is x = L + 1 + i
        j = 2 * P + 2 * L + 1 + i
        F[j] = a * F[j - P]
        F[2 * P - 1 - i] = a * F[2 * P - 1 - i + P]
    tail = Tail(P, a, L, F[2 * P + 2 * L + 1 : 3 * P + 2 * L + 1].copy(), F[P : 2 * P].copy())
    return F, tail


def normalised(design: Any, pmf: Any, L: int) -> np.ndarray:
    """A finite part clipped at 0 and scaled so that it and its tails sum to 1."""
    f = np.clip(np.asarray(pmf, dtype=float).ravel(), 0.0, None)
    _, tail = _extended(design, f, L)
    return f / (f.sum() + tail.mass)


def evaluate(design: Any, pmf: np.ndarray, L: int) -> dict[str, Any]:
    """Distortion, achieved deltas, released errors and tail of the noise ``pmf`` on ``-L..L`` plus tails.

    ``achieved``: ``"dp"``, the largest hockey stick over the shifts (at the slackened eps of a
    pure target, :func:`~optnoise.engine.tolerance.dp_eps`), and ``"pdp"``, the largest leak
    mass (Definition 2, with :func:`~optnoise.engine.tolerance.pdp_rtol`); for a profile, one
    hockey stick per pair (``"profile"``). Sums over every integer output: explicit entries
    plus the tail windows times ``1 / (1 - a)``; an output whose neighbour's mass is 0 leaks
    its whole mass (infinite loss).
    """
    P, a = design.period, math.exp(-design.tail_eps)
    F, tail = _extended(design, pmf, L)
    xs = np.arange(-L - 2 * P, L + 2 * P + 1)
    c = design.cost_of

    def expectation(cost: _Cost) -> float:
        w_r = tail_weights(cost, np.arange(L + 1, L + P + 1), P, a)
        w_l = tail_weights(cost, np.arange(-L - P, -L), P, a)
        return float(cost.fn(xs[2 * P : 2 * P + 2 * L + 1]) @ pmf + w_r @ tail.right + w_l @ tail.left)

    k, p, q, win = _entries(L, P, design.shifts)
    scale = np.where(win, 1.0 / (1.0 - a), 1.0)
    pm, qm = F[p + L + 2 * P] * scale, F[q + L + 2 * P] * scale
    by_shift = [(pm[k == i], qm[k == i]) for i in range(design.shifts.size)]

    def dp_at(eps: float, pure: bool) -> float:
        return max(float(hockey_stick(u, v, dp_eps(eps, pure))) for u, v in by_shift)

    achieved: dict[str, Any]
    if design.profile is not None:
        achieved = {"profile": [dp_at(e, d == 0.0) for e, d in design.profile]}
    else:
        eps, pure = float(design.eps), design.delta == 0.0
        leak = max(float(pdp_leak(u, v, eps, rtol=pdp_rtol(eps))) for u, v in by_shift)
        achieved = {"dp": dp_at(eps, pure), "pdp": 0.0 if pure and dp_at(eps, True) == 0.0 else leak}
    actual = {name: expectation(parse_metric(name, None)) for name in ("mse", "mae", "er")}
    return {"distortion": expectation(c), "achieved": achieved, "actual": actual, "tail": tail}


# --------------------------------------------------------------------------------------------
# the result and the solve
# --------------------------------------------------------------------------------------------


@dataclass
class AdditiveResult:
    """A solved additive design (module docstring): noise ``pmf`` on ``support`` plus ``tail``.

    Attributes
    ----------
    status : str
        ``"optimal"`` (re-verified, proven within the optimality gap over the family at ``L``),
        ``"feasible"``, ``"unverified"``, or the solver's status.
    support : ndarray of int
        ``-L..L``; ``pmf`` holds their masses (the tail's mass is ``tail.mass``).
    tail : Tail
        The staircase tails beyond ``L`` (exact).
    distortion : float
        The metric's expectation, tails included (exact geometric sums).
    achieved : dict
        Re-verified deltas on all of Z (:func:`evaluate`).
    actual : dict
        ``mse``, ``mae`` and ``er`` of the released answer ``q + eta`` (= of ``eta``; no clamping).
    support_note : str
        How ``L`` was chosen (given, or grown until doubling it no longer lowered the optimum).
    """

    design: Any
    status: str
    support: np.ndarray
    pmf: np.ndarray | None
    tail: Tail | None
    distortion: float | None
    achieved: dict[str, Any]
    actual: dict[str, float]
    bound: float | None
    gap: float | None
    solve_time: float
    backend: str
    message: str = ""
    support_note: str = ""
    model_size: dict[str, int] = field(default_factory=dict)
    _baselines: dict[str, float] | None = None

    @property
    def release(self) -> str:
        return ADDITIVE

    @property
    def L(self) -> int:
        """Half-width of the finite part."""
        return int(self.support[-1])

    def verify(self) -> bool:
        """True when the PMF meets the design's target by the re-verification rule."""
        if self.pmf is None:
            return False
        d = self.design
        if d.profile is not None:
            return profile_satisfied(self.achieved["profile"], d.profile)
        return settle_status("feasible", self.achieved[d.privacy], d.delta, notion=d.privacy)[0] == "feasible"

    def pmf_at(self, x: Any) -> np.ndarray:
        """``f(x)`` at any integers (finite part or tail)."""
        assert self.pmf is not None and self.tail is not None
        x = np.asarray(x, dtype=np.int64)
        out = np.zeros(x.shape)
        inside = np.abs(x) <= self.L
        out[inside] = self.pmf[x[inside] + self.L]
        if np.any(~inside):
            out[~inside] = self.tail.pmf_at(x[~inside])
        return out

    @property
    def baselines(self) -> dict[str, float]:
        """Distortion of the discrete Gaussian and Laplace calibrated to the same guarantee (lazy)."""
        if self._baselines is None:
            from optnoise.mechanisms.integers import additive_baselines

            self._baselines = additive_baselines(self.design)
        return self._baselines

    def to_dict(self) -> dict[str, Any]:
        return {
            "release": ADDITIVE,
            "status": self.status,
            "support": self.support.tolist(),
            "pmf": None if self.pmf is None else self.pmf.tolist(),
            "tail": None if self.tail is None else self.tail.to_dict(),
            "distortion": self.distortion,
            "achieved": self.achieved,
            "actual": self.actual,
            "bound": self.bound,
            "gap": self.gap,
            "solve_time": self.solve_time,
            "message": self.message,
            "support_note": self.support_note,
        }


def _solve_at(
    design: Any,
    L: int,
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    verbose: bool,
    options: Any,
    concurrent: bool,
) -> AdditiveResult:
    """Solve the model at support ``L``; re-verify; settle the status."""
    check_model_size(model_size(design, L), what=f"the {design.privacy!r} model of this design at support {L}")
    model, cols = build(design, L)
    out = backend_solve(model, solver, time_limit, mip_gap, verbose, options, concurrent=concurrent)
    pmf = None
    if out.x is not None:
        raw = out.x[cols.F[2 * design.period : 2 * design.period + 2 * L + 1]]
        if np.all(np.isfinite(raw)) and raw.max() > 0:
            pmf = normalised(design, raw, L)
    support = np.arange(-L, L + 1)
    if pmf is None:
        status = "error" if out.status == "optimal" else out.status
        return AdditiveResult(
            design,
            status,
            support,
            None,
            None,
            None,
            {},
            {},
            out.bound,
            out.gap,
            out.solve_time,
            out.solver,
            out.message,
            model_size=model.size,
        )
    ev = evaluate(design, pmf, L)
    bound, gap = out.bound, out.gap
    if not model.is_mip and out.status == "optimal" and (gap is None or gap > 0):
        # the LP bound from the optimal basis in scaled variables (as the modulo pipeline proves it)
        proof = proof_dual(model, out.x)
        if proof is not None and (bound is None or proof[0] > bound):
            bound = proof[0]
    if bound is not None:
        gap = relative_gap(ev["distortion"], bound)
    status, why = settle_gap(out.status, gap)
    notes = [out.message, why]
    if design.profile is not None:
        if status in ("optimal", "feasible", "time_limit") and not profile_satisfied(
            ev["achieved"]["profile"], design.profile
        ):
            status, why = "unverified", f"re-verification failed: profile deltas {ev['achieved']['profile']}"
            notes.append(why)
    else:
        status, why = settle_status(status, ev["achieved"][design.privacy], design.delta, notion=design.privacy)
        notes.append(why)
    return AdditiveResult(
        design,
        status,
        support,
        pmf,
        ev["tail"],
        ev["distortion"],
        ev["achieved"],
        ev["actual"],
        bound,
        gap,
        out.solve_time,
        out.solver,
        "; ".join(n for n in notes if n),
        model_size=model.size,
    )


def solve(
    design: NoiseDesign,
    solver: str = "auto",
    time_limit: float | None = None,
    *,
    mip_gap: float = MIP_REL_GAP,
    verbose: bool = False,
    options: dict[str, Any] | None = None,
    concurrent: bool = True,
    **unsupported: Any,
) -> AdditiveResult:
    """Solve an additive design (the hook of :meth:`NoiseDesign.solve`); ``support`` grown when unset."""
    given = {k: v for k, v in unsupported.items() if v not in (None, False, "hull", "clarabel")}
    if given:
        raise ValueError(f"{next(iter(given))} is not yet supported for release='additive'")
    options, time_limit, mip_gap, _ = check_solve_args(
        solver, formulation="hull", options=options, time_limit=time_limit, mip_gap=mip_gap
    )
    if solver == "cvxpy":
        raise ValueError("solver must be an LP/MILP backend for release='additive'; got 'cvxpy'")
    t0 = time.perf_counter()

    def left() -> float | None:
        return None if time_limit is None else max(time_limit - (time.perf_counter() - t0), 1e-3)

    args = (solver, mip_gap, verbose, options, concurrent)
    if design.support is not None:
        res = _solve_at(design, design.support, args[0], left(), *args[1:])
        res.support_note = f"support L = {design.support} given: optimal among noises on -L..L with staircase tails"
        return res
    L = initial_support(design)
    res = _solve_at(design, L, args[0], left(), *args[1:])
    spent = res.solve_time
    while True:
        if res.status != "optimal" or 2 * L > MAX_SUPPORT or (time_limit is not None and left() <= 1e-3):
            res.support_note = (
                f"support L = {L}: not grown further (status {res.status!r}"
                + (", MAX_SUPPORT reached" if 2 * L > MAX_SUPPORT else "")
                + "); a larger L may lower the optimum"
            )
            res.solve_time = spent
            return res
        wider = _solve_at(design, 2 * L, args[0], left(), *args[1:])
        spent += wider.solve_time
        assert res.distortion is not None
        if (
            wider.status == "optimal"
            and wider.distortion is not None
            and (res.distortion - wider.distortion > SUPPORT_RTOL * max(1.0, abs(res.distortion)))
        ):
            res, L = wider, 2 * L
            continue
        res.support_note = (
            f"support L = {L} chosen automatically: doubling it to {2 * L} lowers the optimum by at most "
            f"{SUPPORT_RTOL:g} relative (the boundary is inactive; the optimum does not depend on L)"
        )
        res.solve_time = spent
        return res


def spec(design: Any) -> dict[str, Any]:
    """The design as plain data (JSON-ready)."""
    return {
        "release": ADDITIVE,
        "eps": design.eps,
        "delta": design.delta,
        "neighborhood": design.neighborhood.to_dict(),
        "shifts": design.shifts.tolist(),
        "directed": design.neighborhood.directed,
        "metric": design.metric,
        "cost": None if design.cost is None else design.cost.tolist(),
        "privacy": design.privacy,
        "objective": "distortion",
        "support": design.support,
        **({"profile": [list(p) for p in design.profile]} if design.profile is not None else {}),
    }


def describe(design: Any) -> str:
    budget = (
        f"profile={list(design.profile)}" if design.profile is not None else f"eps={design.eps}, delta={design.delta}"
    )
    return (
        f"NoiseDesign(release='additive', {budget}, neighborhood={design.neighborhood.describe()}, "
        f"metric={design.metric!r}, privacy={design.privacy!r}"
        + (f", support={design.support})" if design.support is not None else ")")
    )
