"""What the additive release computes from a noise: costs, exact tail sums, privacy entries, the result.

The model of :mod:`optnoise.design.additive` and the re-verification here share one list of privacy entries
(:func:`entries`) and one cost of every metric (:func:`parse_metric`, :func:`tail_weights`); everything
reported is computed from the finite PMF alone, its staircase tails derived from it (:class:`Tail`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optnoise.design.result import Accountable
from optnoise.engine.output import relative_gap
from optnoise.engine.tolerance import settle_gap
from optnoise.engine.validation import MAX_COST, check_int, real_array, shown
from optnoise.privacy import accounting
from optnoise.privacy.curves import hockey_stick, pdp_leak
from optnoise.privacy.noise_families import IntegerNoise, discrete_gaussian_noise, geometric_noise
from optnoise.privacy.notions import Notion, get_notion
from optnoise.privacy.profile import profile_satisfied
from optnoise.privacy.renyi import RENYI_RTOL, achieved_rho_pairs, renyi_divergence
from optnoise.privacy.verification import dp_eps, pdp_rtol, settle_status, within_delta

__all__ = [
    "ADDITIVE",
    "notion_of",
    "pair_rows",
    "ADDITIVE_METRICS",
    "AdditiveResult",
    "Tail",
    "entries",
    "settled_result",
    "evaluate",
    "parse_metric",
    "tail_weights",
    "additive_baselines",
    "least_noise",
    "extended",
]

#: The release name.
ADDITIVE = "additive"
#: Metric names (``"abs^p"`` and ``"exceed:t"`` take a number).
ADDITIVE_METRICS = ("mse", "mae", "er", "abs^p", "exceed:t")
_POWER = re.compile(r"abs\^([0-9]*\.?[0-9]+)$")
_EXCEED = re.compile(r"exceed:([0-9]+)$")


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


def entries(L: int, P: int, shifts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
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


def extended(design: Any, pmf: np.ndarray, L: int) -> tuple[np.ndarray, Tail]:
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
    _, tail = extended(design, f, L)
    return f / (f.sum() + tail.mass)


def lumped_pairs(
    design: Any, F: np.ndarray, L: int, factor: float | None = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per shift ``mu``, the distributions of ``eta`` and ``eta + mu`` with each geometric tail lumped into one atom.

    ``F`` is the PMF on ``-L-2P..L+2P`` (:func:`extended`). Every tail output beyond the window is ``a^m``
    times a window output, in both distributions alike: lumping them keeps every likelihood ratio and its
    probability, so every divergence, hockey stick and privacy-loss distribution of the pair is exact.
    ``factor``: the tails' factor per period (default ``e^-tail_eps``; a certified noise's exact ``A``).
    """
    P, a = design.period, math.exp(-design.tail_eps) if factor is None else factor
    k, p, q, win = entries(L, P, design.shifts)
    scale = np.where(win, 1.0 / (1.0 - a), 1.0)
    pm, qm = F[p + L + 2 * P] * scale, F[q + L + 2 * P] * scale
    return [(pm[k == i], qm[k == i]) for i in range(design.shifts.size)]


#: Relative margin below delta of every composed candidate and calibrated baseline (the accounting's float slack).
COMPOSED_MARGIN = 1e-6


def stacked_pairs(design: Any, pairs: list[tuple[np.ndarray, np.ndarray]]) -> accounting.ReleasePairs:
    """Per-shift pairs of different lengths as one :class:`~optnoise.privacy.accounting.ReleasePairs`."""
    width = max(p.size for p, _ in pairs)
    P_, Q_ = np.zeros((len(pairs), width)), np.zeros((len(pairs), width))
    for i, (u, v) in enumerate(pairs):  # zero columns in both rows of a pair change no loss
        P_[i, : u.size], Q_[i, : v.size] = u, v
    return accounting.ReleasePairs(P_, Q_, np.asarray(design.shifts))


def composed_delta(design: Any, pairs: list[tuple[np.ndarray, np.ndarray]], *, comp: Any = None) -> Any:
    """delta at the design's eps of the k-fold composition of ``pairs`` (our accounting); ``comp=True``: the latter."""
    got = accounting.compose_pairs(
        stacked_pairs(design, pairs), design.compositions, discretization=design.discretization, warn=False
    )
    return got if comp else float(got.delta(float(design.eps)))


def composed_of(design: Any, pmf: np.ndarray, L: int) -> float:
    """:func:`composed_delta` of the finite PMF ``pmf`` on ``-L..L`` with its tails (lumped, exact)."""
    F, _ = extended(design, pmf, L)
    return composed_delta(design, lumped_pairs(design, F, L))


def evaluate(design: Any, pmf: np.ndarray, L: int) -> dict[str, Any]:
    """Distortion, achieved deltas, released errors and tail of the noise ``pmf`` on ``-L..L`` plus tails.

    ``achieved``: ``"dp"``, the largest hockey stick over the shifts (at the slackened eps of a
    pure target, :func:`~optnoise.privacy.verification.dp_eps`), and ``"pdp"``, the largest leak
    mass (Definition 2, with :func:`~optnoise.privacy.verification.pdp_rtol`); for a profile, one
    hockey stick per pair (``"profile"``). Sums over every integer output: explicit entries
    plus the tail windows times ``1 / (1 - a)``; an output whose neighbour's mass is 0 leaks
    its whole mass (infinite loss).
    """
    P, a = design.period, math.exp(-design.tail_eps)
    F, tail = extended(design, pmf, L)
    xs = np.arange(-L - 2 * P, L + 2 * P + 1)
    c = design.cost_of

    def expectation(cost: _Cost) -> float:
        w_r = tail_weights(cost, np.arange(L + 1, L + P + 1), P, a)
        w_l = tail_weights(cost, np.arange(-L - P, -L), P, a)
        return float(cost.fn(xs[2 * P : 2 * P + 2 * L + 1]) @ pmf + w_r @ tail.right + w_l @ tail.left)

    by_shift = lumped_pairs(design, F, L)

    def dp_at(eps: float, pure: bool) -> float:
        return max(float(hockey_stick(u, v, dp_eps(eps, pure))) for u, v in by_shift)

    achieved: dict[str, Any]
    if notion_of(design).composed:  # objective="epsilon": the accounting's eps at delta is the one certified
        comp = composed_delta(design, by_shift, comp=True)
        eps = float(design.eps if design.eps is not None else comp.epsilon(design.delta))
        achieved = {"composed": float(comp.delta(eps)), "composed_eps": eps, "dp": dp_at(eps, False)}
    elif notion_of(design).renyi:
        achieved = renyi_achieved(design, by_shift)
    elif design.profile is not None:
        achieved = {"profile": [dp_at(e, d == 0.0) for e, d in design.profile]}
    else:
        eps, pure = float(design.eps), design.delta == 0.0
        leak = max(float(pdp_leak(u, v, eps, rtol=pdp_rtol(eps))) for u, v in by_shift)
        achieved = {"dp": dp_at(eps, pure), "pdp": 0.0 if pure and dp_at(eps, True) == 0.0 else leak}
    actual = {name: expectation(parse_metric(name, None)) for name in ("mse", "mae", "er")}
    return {"distortion": expectation(c), "achieved": achieved, "actual": actual, "tail": tail}


# --------------------------------------------------------------------------------------------
# Renyi divergences on Z: every entry as a weighted pair of finite masses (design/additive_renyi.py)
# --------------------------------------------------------------------------------------------


def notion_of(design: Any) -> Notion:
    """The :class:`~optnoise.privacy.notions.Notion` of an additive design, looked up from its ``privacy``.

    Looked up on every use, not stored: the composed search solves copies with ``privacy="dp"``.
    """
    return get_notion(design.privacy)


def pair_rows(design: Any) -> str:
    """The notion of an ``(eps, delta)`` pair's rows and exact check: the leak indicators or the hockey stick."""
    return "pdp" if notion_of(design).indicators else "dp"


def renyi_achieved(design: Any, pairs: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, float]:
    """The rdp/zcdp budget re-verified from each shift's lumped pair of distributions (:func:`evaluate`)."""
    if design.rdp is not None:  # rdp: its orders; zcdp: rho over every order
        vals = [max(float(renyi_divergence(p, q, a)) for p, q in pairs) for a, _ in design.rdp]
        ratio = max(v / e for v, (_, e) in zip(vals, design.rdp, strict=True))
        return {"rdp": ratio, **{f"rdp@{a:g}": v for (a, _), v in zip(design.rdp, vals, strict=True)}}
    rho_hat, where = achieved_rho_pairs(pairs)
    return {"zcdp": rho_hat, "alpha*": where}


def renyi_excess(design: Any, achieved: dict[str, float]) -> float:
    """``achieved / budget - 1`` (<= ``RENYI_RTOL`` when the budget is met)."""
    return achieved["rdp"] - 1.0 if design.rdp is not None else achieved["zcdp"] / design.rho - 1.0


# --------------------------------------------------------------------------------------------
# the result and the solve
# --------------------------------------------------------------------------------------------


@dataclass
class AdditiveResult(Accountable):
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
        How ``L`` was chosen (given, or grown until the proven bound at a larger L met the optimality gap).
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
        if notion_of(d).renyi:
            return renyi_excess(d, self.achieved) <= RENYI_RTOL
        capped = d.objective in ("delta", "epsilon")  # the distortion must meet the cap
        if capped and not within_delta(float(self.distortion or math.inf), d.max_distortion):
            return False
        if d.objective == "delta":  # its delta is what it achieves
            return True
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

    def release_pairs(self) -> accounting.ReleasePairs:
        """``(f, f(. + mu))`` per shift on all of Z, each tail lumped into one atom (:func:`lumped_pairs`).

        :meth:`pld` and :meth:`compose` account for these exactly: nothing beyond ``L`` is truncated.
        """
        if self.pmf is None:
            raise ValueError(f"this result has no PMF (status {self.status!r})")
        F, _ = extended(self.design, self.pmf, self.L)
        pairs = lumped_pairs(self.design, F, self.L)
        width = max(p.size for p, _ in pairs)
        P = np.zeros((len(pairs), width))
        Q = np.zeros((len(pairs), width))
        for i, (p, q) in enumerate(pairs):  # zero columns in both rows of a pair change no loss
            P[i, : p.size], Q[i, : q.size] = p, q
        return accounting.ReleasePairs(P, Q, np.asarray(self.design.shifts))

    def _draw(self, *, baseline: Any, eps: Any, axes: Any, label: str | None) -> Any:
        raise ValueError("plot() is not yet supported for release='additive'; use pld() or compose(k)")

    def certify(self, **kwargs: Any) -> Any:
        """Exact certificate (tails included) and exact sampler: :func:`optnoise.deploy.certify.certify_result`."""
        from optnoise.design.result import run_certifier

        return run_certifier(self, **kwargs)

    @property
    def baselines(self) -> dict[str, float]:
        """Distortion of the discrete Gaussian and Laplace calibrated to the same guarantee (lazy)."""
        if self._baselines is None:
            self._baselines = additive_baselines(self.design)
        return self._baselines

    def to_dict(self) -> dict[str, Any]:
        return {
            "release": ADDITIVE,
            "problem": self.design.spec(),  # what from_dict's caller rebuilds the design from (NoiseDesign.from_spec)
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

    @classmethod
    def from_dict(
        cls, data: Any, *, design: Any, recheck: bool = True, proof: Any = None, backend: str = ""
    ) -> AdditiveResult:
        """Rebuild a result of ``design`` from :meth:`to_dict` output; no stored number is trusted.

        The finite PMF is read (``support`` must be ``-L..L`` with one mass each) and everything
        else recomputed from it (:func:`evaluate`): tails, distortion, ``achieved``, ``actual``;
        the status claimed is settled again against the target. The stored bound and gap are
        dropped; the bound is re-derived from ``proof`` (row multipliers ``{"kind": "lp-dual",
        "dual": [...]}`` of the LP at support ``L``, by weak duality on the rebuilt model) or, with
        ``recheck``, by a fresh solve at support ``L``. An ``"optimal"`` that no re-derived bound
        proves comes back ``"feasible"``. ``ValueError`` names a missing or malformed field.
        """
        if not isinstance(data, dict):
            raise ValueError("an additive result must be a JSON object (AdditiveResult.to_dict())")
        missing = [k for k in ("release", "status", "support", "pmf") if k not in data]
        if missing:
            raise ValueError(f"result lacks the field {shown(missing[0])}")
        if data["release"] != ADDITIVE:
            raise ValueError(f"result field 'release' must be {ADDITIVE!r}; got {shown(data['release'])}")
        status = data["status"]
        if not isinstance(status, str):
            raise ValueError(f"result field 'status' must be a text; got {shown(status)}")
        raw = data["support"]
        if not isinstance(raw, list) or not raw:
            raise ValueError("result field 'support' must be the list -L..L")
        L = check_int("result field 'support'", raw[-1], minimum=1)
        if raw != list(range(-L, L + 1)):
            raise ValueError(f"result field 'support' must be the consecutive integers -L..L; got {shown(raw)}")
        support = np.arange(-L, L + 1)
        note = str(data.get("support_note") or "")
        if data["pmf"] is None:
            return cls(design, status, support, None, None, None, {}, {}, None, None, 0.0, backend, support_note=note)
        pmf = np.asarray(real_array("result field 'pmf'", data["pmf"]), dtype=float).ravel()
        if pmf.size != support.size or not np.all(np.isfinite(pmf)) or np.any(pmf < -1e-9):
            raise ValueError(f"result field 'pmf' must hold {support.size} finite masses >= 0 (eta = -L..L)")
        _, tail = extended(design, np.clip(pmf, 0.0, None), L)
        total = float(np.clip(pmf, 0.0, None).sum()) + tail.mass
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"result field 'pmf' with its staircase tails must sum to 1; it sums to {total:.10g}")
        pmf = normalised(design, pmf, L)
        res = settled_result(design, pmf, L, status, _rederived_bound(design, L, proof, recheck), "")
        if status == "optimal" and res.gap is None and res.status == "optimal":
            res.status, res.message = "feasible", "'optimal' not proven on reading back (no bound re-derived)"
        res.backend, res.support_note = backend, note
        return res


def _rederived_bound(design: Any, L: int, proof: Any, resolve: bool) -> float | None:
    """A lower bound on the optimum at support ``L``: weak duality of ``proof``'s multipliers, else a fresh solve."""
    at_L = design if design.support == L else design.replace(support=L)
    if isinstance(proof, dict) and proof.get("kind") == "lp-dual" and isinstance(proof.get("dual"), list):
        model = at_L.build_model()
        b = None if model.is_mip else model.dual_bound(proof["dual"])
        if b is not None and math.isfinite(b):
            return float(b)
    if resolve:
        fresh = at_L.solve(solver="highs")
        if fresh.status in ("optimal", "feasible", "time_limit") and fresh.bound is not None:
            return float(fresh.bound)
    return None


def settled_result(
    design: Any, pmf: np.ndarray, L: int, status: str, bound: float | None, message: str
) -> AdditiveResult:
    """The result of ``pmf`` on ``-L..L``: re-verified, its gap to ``bound`` recomputed, its status settled."""
    ev = evaluate(design, pmf, L)
    minimised = design.objective == "delta"  # the value is the re-verified delta, the distortion is capped
    value = ev["achieved"][design.privacy] if minimised else ev["distortion"]
    value = ev["achieved"]["composed_eps"] if design.objective == "epsilon" else value
    gap = None if bound is None else relative_gap(value, bound)
    status, why = settle_gap(status, gap)
    notes = [message, why]
    if design.profile is not None:
        if status in ("optimal", "feasible", "time_limit") and not profile_satisfied(
            ev["achieved"]["profile"], design.profile
        ):
            status = "unverified"
            notes.append(f"re-verification failed: profile deltas {ev['achieved']['profile']}")
    elif notion_of(design).renyi:
        excess = renyi_excess(design, ev["achieved"])
        if status in ("optimal", "feasible", "time_limit") and not excess <= RENYI_RTOL:
            status = "unverified"
            notes.append(f"re-verification failed: the {design.privacy} budget is exceeded by {excess:.3g} relative")
    else:  # the delta rule (a minimised delta against itself); a capped objective must meet its cap too
        target = value if minimised else design.delta
        kw = {"value": ev["distortion"], "cap": design.max_distortion} if design.objective != "distortion" else {}
        status, why = settle_status(status, ev["achieved"][design.privacy], target, notion=design.privacy, **kw)
        notes.append(why)
    msg = "; ".join(n for n in notes if n)
    args = (ev["tail"], ev["distortion"], ev["achieved"], ev["actual"], bound, gap, 0.0, "")
    return AdditiveResult(design, status, np.arange(-L, L + 1), pmf, *args, message=msg)


# --------------------------------------------------------------------------------------------
# baselines: the discrete Laplace and Gaussian calibrated to the design's guarantee
# --------------------------------------------------------------------------------------------


def _padded(g: np.ndarray, mu: int) -> tuple[np.ndarray, np.ndarray]:
    """``(g(eta), g(eta + mu))`` over the window of ``g`` padded by ``|mu|``."""
    pad = np.zeros(abs(mu))
    return (
        (np.concatenate([pad, g]), np.concatenate([g, pad]))
        if mu > 0
        else (np.concatenate([g, pad]), np.concatenate([pad, g]))
    )


def _noise_meets(design: Any, noise: IntegerNoise) -> bool:
    """True when ``q + noise`` meets the design's guarantee on Z, by the same sums as :func:`evaluate`.

    Every shift of the design, in its listed order: ``H(g || g(. + mu))`` (``"dp"``, per
    profile pair) or the leak mass (``"pdp"``), on the noise window padded by the shift (the
    window holds all but < 1e-30 of the mass, :data:`optnoise.privacy.noise_families.TAIL`).
    """
    g = noise.pmf
    pairs = [_padded(g, mu) for mu in design.shifts.tolist()]
    if notion_of(design).composed:  # the window's ends (< 1e-30 of the mass) charged as infinite loss
        return composed_delta(design, pairs) <= design.delta * (1.0 - COMPOSED_MARGIN)
    if notion_of(design).renyi:
        # the outputs where both masses are positive: the window's two ends (< 1e-30 of the mass) are left
        # out, which is why this serves the baselines only, never a design's re-verification
        return (
            renyi_excess(
                design, renyi_achieved(design, [(p[(p > 0) & (q > 0)], q[(p > 0) & (q > 0)]) for p, q in pairs])
            )
            <= 0.0
        )
    budget = list(design.profile) if design.profile is not None else [(design.eps, design.delta)]
    for p, q in pairs:
        for eps, delta in budget:
            if notion_of(design).indicators and delta > 0:
                got = float(pdp_leak(p, q, eps, rtol=pdp_rtol(eps)))
            else:
                got = float(hockey_stick(p, q, dp_eps(eps, delta == 0.0)))
            if not got <= delta:
                return False
    return True


def least_noise(design: Any, make: Callable[[float], IntegerNoise], start: float) -> IntegerNoise | None:
    """The least noisy ``make(t)`` that meets the guarantee (noise grows with ``t > 0``), from a first guess.

    A bracket is found by halving or doubling ``start``, then bisected in ``log t`` to ~1e-13.
    """
    t = start
    ok = _noise_meets(design, make(t))
    for _ in range(80):
        nxt = t / 2 if ok else t * 2
        try:
            nxt_ok = _noise_meets(design, make(nxt))
        except ValueError:  # too wide to tabulate: no member meets it
            return None
        if nxt_ok != ok:
            lo, hi = (nxt, t) if ok else (t, nxt)
            break
        t = nxt
    else:
        return make(t) if ok else None
    while hi / lo - 1.0 > 1e-13:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if _noise_meets(design, make(mid)) else (mid, hi)
    return make(hi)


def additive_baselines(design: Any) -> dict[str, float]:
    """Distortion of the discrete Laplace and the discrete Gaussian, each the least noisy of its family
    meeting the design's guarantee by the same accounting (exact hockey-stick or leak sums on Z, every
    shift of the neighbourhood); ``inf`` when no member does (the Gaussian under pure DP).
    """
    if design.objective != "distortion":  # delta minimised under a distortion cap: no guarantee to calibrate to
        return {}
    P = design.period
    out: dict[str, float] = {}
    if notion_of(design).renyi:
        # the Gaussian's calibration by Canonne, Kamath and Steinke 2020 is the first guess; both searched
        sigma2 = P * P / (2.0 * design.rho) if design.rdp is None else max(a * P * P / (2.0 * e) for a, e in design.rdp)
        noises = (
            (
                "discrete_laplace",
                least_noise(design, lambda t: geometric_noise(math.exp(-1.0 / t)), math.sqrt(sigma2)),
            ),
            ("discrete_gaussian", least_noise(design, discrete_gaussian_noise, sigma2)),
        )
        return {k: math.inf if v is None else float(design.cost_of.fn(v.values) @ v.pmf) for k, v in noises}
    eps_min = min(e for e, _ in design.profile) if design.profile is not None else float(design.eps)
    # discrete Laplace alpha = e^(-1/t): t = P / eps is pure eps-DP, which meets every notion here
    pure = design.profile is None and design.delta == 0.0
    if pure:  # exactly alpha = e^(-eps / P), its ratios tight at shift P
        lap: IntegerNoise | None = geometric_noise(math.exp(-float(design.eps) / P))
    else:
        lap = least_noise(design, lambda t: geometric_noise(math.exp(-1.0 / t)), P / eps_min)
    d_min = min(d for _, d in design.profile) if design.profile is not None else float(design.delta)
    guess = (P / eps_min) ** 2 * 2.0 * math.log(1.25 / max(d_min, 1e-300))  # the classical Gaussian scale
    gauss = None if pure or d_min == 0.0 else least_noise(design, discrete_gaussian_noise, guess)
    for name, noise in (("discrete_laplace", lap), ("discrete_gaussian", gauss)):
        out[name] = math.inf if noise is None else float(design.cost_of.fn(noise.values) @ noise.pmf)
    return out
