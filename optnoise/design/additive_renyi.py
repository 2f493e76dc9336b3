"""Renyi-DP and zCDP designs for the additive release ``q + eta`` on Z.

A noise on a finite support has infinite Renyi divergences under a shift, so the family is the
additive release's (:mod:`optnoise.design.additive`): ``f`` on ``{-L..L}`` plus staircase tails,
``f(x + P) = a f(x)`` beyond ``L``, with the tail factor ``a`` chosen by the design. In the tail both
``f(x)`` and ``f(x + mu)`` shrink by ``a`` per period, so every Renyi term ``f(x)^alpha f(x+mu)^(1-alpha)``
(and every KL term) shrinks by ``a`` too: the terms of a whole tail sum to the first period's times
``1 / (1 - a)``. Equivalently, lumping the outputs of a tail whose likelihood ratio is the same into one
atom leaves every divergence unchanged, so ``D_alpha(f || f(. + mu))`` on Z equals the divergence of two
finite distributions (:func:`divergence_pairs`): the explicit outputs plus one lumped atom per tail
entry. Nothing is truncated.

The model is the conic model of the modulo release over those terms
(:func:`optnoise.privacy.renyi.build_renyi_terms_model`, scaled by a reference discrete Gaussian);
zCDP asks ``D_alpha <= rho alpha`` on an order grid up to ``alpha_max`` plus the linear rows
``D_inf <= rho alpha_max`` (which cover every order beyond the grid), as the modulo release does.

Choices. The reference discrete Gaussian has variance ``sigma^2 = max_alpha alpha P^2 / (2 eps_alpha)``
(rdp) or ``P^2 / (2 rho)`` (zcdp), which meets the budget (Canonne, Kamath and Steinke 2020). The
first support is ``L0 = P + ceil(sigma sqrt(2 TAIL_NATS))``, where the reference's mass has fallen
by ``e^-TAIL_NATS``; the tail factor is the reference's decay over the last period at ``min(L, L0)``,
``a = exp(-P (2 min(L, L0) - P) / (2 sigma^2))``: one factor for every ``L >= L0``, so that those
families are nested (a noise on ``-L..L`` with its tails is one on ``-L'..L'``, :func:`extend`) and the
optimum only falls as ``L`` grows (with a factor that fell with ``L`` they were not, and a wider support
could cost more). The zCDP order grid depends on ``a`` alone, so it is the same for every ``L >= L0``.

The support. A given ``support > L0`` is solved at ``L0`` by the conic route, then from that optimum
extended to ``L`` (the conic solver is unreliable on wider supports). Without ``support``, ``L`` grows
from ``L0`` by a quarter at a time (:func:`optnoise.design.additive_support.grow_support`), each wider
solve warm-started the same way, until the proven lower bound at the wider support is within the
optimality gap of the optimum: the boundary is inactive, and ``support_note`` says so and gives that
bound. Growth stops at ``GROWTH * L0`` (the note then says the boundary was not proven inactive).
Each solve alternates :func:`polish` (a sequential LP) with :func:`cut_and_mix` (Kelley's cutting
planes, whose LP solutions, mixed into the point, also lower it: the sequential LP alone stalled 1e-5
above the optimum at L = 6 for zcdp rho = 0.5 bd(1)).

Re-verification and status. ``achieved`` is computed from the PMF alone on all of Z (exact lumped
sums): rdp, ``{"rdp": max_j D_alpha_j / eps_j, "rdp@<alpha>": D}``; zcdp, the certified
``sup_{alpha > 1} D_alpha / alpha`` (:func:`optnoise.privacy.renyi.achieved_rho_pairs`, every order,
not only the grid). A point that misses its budget is solved again with the budget scaled down by its
excess (:data:`RETRIES` times). The lower bound is the outer-approximation LP with tangent cuts at the
returned point (a convex 1-homogeneous constraint lies above its tangents), at exactly the rdp orders,
or at the zCDP grid orders without the ``D_inf`` rows (a relaxation of rho-zCDP); its value is proven
by weak duality (:meth:`optnoise.engine.model.LinearModel.dual_bound`). ``"optimal"`` needs that gap
within ``OPTIMAL_GAP``: then the PMF is optimal **for the family** (noises on ``{-L..L}`` with staircase
tails of factor ``a``), as the pure-DP case is optimal for its staircase family.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from scipy.special import logsumexp

from optnoise.design.additive_eval import (
    AdditiveResult,
    entries,
    evaluate,
    notion_of,
    renyi_excess,
    settled_result,
    tail_weights,
)
from optnoise.design.additive_support import grow_support
from optnoise.design.settle import backend_solve, proof_dual
from optnoise.engine.model import ModelBuilder
from optnoise.engine.output import relative_gap
from optnoise.engine.progress import time_left
from optnoise.engine.tolerance import MIP_REL_GAP, OPTIMAL_GAP
from optnoise.engine.validation import check_positive, shown
from optnoise.privacy.budget_kinds import RdpKind
from optnoise.privacy.renyi import (
    ALPHA_MAX,
    build_renyi_terms_model,
    check_alphas,
    check_rdp,
    renyi_divergence,
    solve_conic_scaled,
    zcdp_alphas,
)

__all__ = [
    "RENYI_NOTIONS",
    "TAIL_NATS",
    "divergence_pairs",
    "extend",
    "orders_of",
    "setup_renyi",
    "solve_renyi",
    "tangent_bound",
    "terms",
]

#: The Renyi notions of the additive release.
RENYI_NOTIONS = ("rdp", "zcdp")
#: The default support ends where the reference Gaussian's mass has fallen by ``e^-TAIL_NATS``.
TAIL_NATS = 8.0
#: The support grows to at most this many times the first one (each wider solve is a warm-started sequential LP
#: and cutting planes, tens of seconds at L ~ 10; an rdp budget at few orders can keep the boundary active).
GROWTH = 2
#: Re-solves with a budget scaled down by the measured excess, when a point misses its budget.
RETRIES = 3


def setup_renyi(design: Any, kw: dict[str, Any]) -> None:
    """Validate and store the rdp/zcdp budget of an additive design (module docstring)."""
    if kw["eps"] is not None or kw["delta"] is not None or kw["profile"] is not None:
        raise ValueError(
            f"privacy={shown(design.privacy)} takes its budget (rdp=[(alpha, eps_alpha), ...] or rho=...) "
            "instead of eps/delta/profile"
        )
    P = design.period
    design.eps, design.delta, design.profile = None, None, None
    design.rdp = design.rho = design.alphas = None
    if isinstance(notion_of(design).budget, RdpKind):
        if kw["rho"] is not None or kw["alphas"] is not None:
            raise ValueError("rho and alphas apply to privacy='zcdp', not 'rdp'")
        design.rdp = check_rdp(kw["rdp"])
        design.sigma2 = max(a * P * P / (2.0 * e) for a, e in design.rdp)
    else:
        if kw["rdp"] is not None:
            raise ValueError("rdp applies to privacy='rdp', not 'zcdp'")
        if kw["rho"] is None:
            raise ValueError("rho is required with privacy='zcdp' (a float > 0)")
        design.rho = check_positive("rho", kw["rho"])
        design.sigma2 = P * P / (2.0 * design.rho)
        if kw["alphas"] is not None:
            design.alphas = check_alphas(kw["alphas"])
    support = kw["support"]
    start = _start(design)
    L = support if support is not None else start
    design.renyi_support = L
    # the tail factor is the reference's at min(L, start): fixed for every L >= start, so that the families
    # there are nested (a noise on -L..L with its tails is one on -L'..L' too) and the optimum falls with L
    design.tail_eps = P * (2 * min(L, start) - P) / (2.0 * design.sigma2)


def orders_of(design: Any, scale: float = 1.0) -> tuple[list[tuple[float, float]], float | None]:
    """The orders ``(alpha, eps_alpha)`` (budgets times ``scale``) and the zCDP ``D_inf`` budget."""
    if design.rdp is not None:
        return [(a, e * scale) for a, e in design.rdp], None
    rho = design.rho * scale
    if design.alphas is not None:
        alphas = design.alphas
    else:  # past the family's largest log-ratio per period, so the D_inf row does not bind before it
        alphas = tuple(float(a) for a in zcdp_alphas(max(ALPHA_MAX, 1.25 * design.tail_eps / rho)))
    return [(a, rho * a) for a in alphas], rho * max(alphas)


# --------------------------------------------------------------------------------------------
# the solve
# --------------------------------------------------------------------------------------------


def terms(design: Any, L: int) -> dict[str, np.ndarray]:
    """Every privacy entry of :func:`entries` as ``(u f(I), v f(J))`` over the finite masses, and ``mass``/``cost``.

    An output ``x`` beyond ``L`` holds ``a^k f(x - k P)`` (``k`` periods out); a window entry stands for its
    whole tail, weight ``1 / (1 - a)``. ``mass @ f`` is the total mass and ``cost @ f`` the distortion
    (tails included, exact geometric sums).
    """
    P, a = design.period, math.exp(-design.tail_eps)
    k, p, q, win = entries(L, P, design.shifts)

    def base(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        index, periods = _fold(x, L, P)
        return index, periods * math.log(a)

    (I, lp), (J, lq) = base(p), base(q)  # noqa: E741
    lw = np.where(win, -math.log1p(-a), 0.0)
    N = 2 * L + 1
    xs = np.arange(-L, L + 1)
    mass = np.ones(N)
    mass[:P] += a / (1.0 - a)
    mass[-P:] += a / (1.0 - a)
    cost = design.cost_of.fn(xs).astype(float)
    cost[-P:] += a * tail_weights(design.cost_of, np.arange(L + 1, L + P + 1), P, a)
    cost[:P] += a * tail_weights(design.cost_of, np.arange(-L - P, -L), P, a)
    return {"group": k, "I": I, "J": J, "lu": lp + lw, "lv": lq + lw, "mass": mass, "cost": cost}


def _fold(x: np.ndarray, L: int, P: int) -> tuple[np.ndarray, np.ndarray]:
    """The index in ``-L..L`` (from 0) of the mass ``x`` repeats, and how many periods out it lies."""
    periods = np.where(np.abs(x) > L, -((L - np.abs(x)) // P), 0)  # ceil((|x| - L) / P)
    return x - np.sign(x) * periods * P + L, periods


def extend(design: Any, pmf: np.ndarray, L: int, wide: int) -> np.ndarray:
    """The same noise on ``-wide..wide`` (``wide >= L``): its tail masses ``a^k f`` written out, renormalised.

    With the design's one tail factor (:func:`setup_renyi`) it is a member of the family at ``wide``.
    """
    index, periods = _fold(np.arange(-wide, wide + 1), L, design.period)
    f = pmf[index] * math.exp(-design.tail_eps) ** periods
    return f / float(terms(design, wide)["mass"] @ f)


def divergence_pairs(design: Any, pmf: np.ndarray, L: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per shift, the two finite distributions whose divergences are those of ``f`` and ``f(x + mu)`` on Z."""
    t = terms(design, L)
    u, v = pmf[t["I"]] * np.exp(t["lu"]), pmf[t["J"]] * np.exp(t["lv"])
    return [(u[t["group"] == g], v[t["group"] == g]) for g in range(design.shifts.size)]


def _log_ref(design: Any, L: int, mass: np.ndarray) -> np.ndarray:
    xs = np.arange(-L, L + 1, dtype=float)
    lr = -(xs * xs) / (2.0 * design.sigma2)
    return lr - float(logsumexp(lr + np.log(mass)))


#: Most sequential-LP steps of :func:`polish` ...
POLISH_STEPS = 200
#: ... from a trust radius of this many nats on every ``log f``, ...
TRUST = 0.05
#: ... stopping once a step gains less than this relative.
POLISH_RTOL = 1e-11


def _cuts(
    design: Any, t: dict[str, np.ndarray], pmf: np.ndarray, orders: list[tuple[float, float]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tangent cuts at ``pmf`` (> 0) of every order and shift: ``(rows, cols, vals)`` of rows ``<= 0`` (f-space).

    ``phi(U, V) = U^alpha V^(1-alpha)`` is convex and 1-homogeneous, so ``phi >= grad phi(U0, V0) . (U, V)``
    for all ``U, V >= 0``: the cut ``sum_e grad phi_e . (U_e, V_e) <= e^((alpha-1) eps) mass . f`` (divided by
    ``e^((alpha-1) eps)``) holds for every feasible ``f``, at any tangent point (KL:
    ``U log(U/V) >= (1 + d) U - e^d V``, ``d = log(U0 / V0)``).
    """
    lf = np.log(pmf)
    d = lf[t["I"]] + t["lu"] - lf[t["J"]] - t["lv"]
    N, K = pmf.size, design.shifts.size
    rows, cols, vals = [], [], []
    for j, (alpha, eps) in enumerate(orders):
        if alpha == 1.0:
            cu, cv, rhs = (1.0 + d) * np.exp(t["lu"]), -np.exp(d + t["lv"]), eps
        else:
            with np.errstate(over="ignore"):
                cu = alpha * np.exp((alpha - 1.0) * (d - eps) + t["lu"])
                cv = (1.0 - alpha) * np.exp(alpha * d - (alpha - 1.0) * eps + t["lv"])
            rhs = 1.0
        coef = np.zeros((K, N))
        np.add.at(coef, (t["group"], t["I"]), cu)
        np.add.at(coef, (t["group"], t["J"]), cv)
        coef -= rhs * t["mass"][None, :]
        r, c = np.nonzero(coef)
        rows.append(j * K + r)
        cols.append(c)
        vals.append(coef[r, c])
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)


def _inf_rows(t: dict[str, np.ndarray], eps_inf: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``D_inf <= eps_inf`` rows ``U_e - e^eps_inf V_e <= 0`` of every term (f-space)."""
    E = t["I"].size
    return (
        np.repeat(np.arange(E), 2),
        np.stack([t["I"], t["J"]], 1).ravel(),
        np.stack([np.exp(t["lu"]), -np.exp(eps_inf + t["lv"])], 1).ravel(),
    )


def _grid_excess(design: Any, t: dict[str, np.ndarray], f: np.ndarray, orders: Any, eps_inf: float | None) -> float:
    """``max D_alpha / eps_alpha - 1`` over the orders and shifts (and ``D_inf / eps_inf - 1``), from lumped pairs."""
    u, v = f[t["I"]] * np.exp(t["lu"]), f[t["J"]] * np.exp(t["lv"])
    alphas = np.array([a for a, _ in orders])
    eps = np.array([e for _, e in orders])
    worst = -math.inf
    for g in range(design.shifts.size):
        sel = t["group"] == g
        worst = max(worst, float(np.max(np.atleast_1d(renyi_divergence(u[sel], v[sel], alphas)) / eps)) - 1.0)
        if eps_inf is not None:
            worst = max(worst, float(renyi_divergence(u[sel], v[sel], math.inf)) / eps_inf - 1.0)
    return worst


def _lp(
    t: dict[str, np.ndarray],
    f: np.ndarray,
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    trust: float | None,
    time_limit: float | None,
    options: Any,
) -> tuple[Any, Any]:
    """``min cost . f`` over ``mass . f = 1`` and the rows ``parts`` (``<= 0``), in ``z = f / f_hat``.

    Scaling every column by the tangent point keeps masses of 1e-30 as well resolved as the large ones;
    rows are divided by their largest coefficient. ``trust``: ``|log z| <= trust`` (else ``z >= 0``).
    """
    mb = ModelBuilder()
    lo, hi = (0.0, np.inf) if trust is None else (math.exp(-trust), math.exp(trust))
    z = mb.add_vars(f.size, lb=lo, ub=hi, name="z")
    mb.add_row(z, t["mass"] * f, lower=1.0, upper=1.0)
    mb.set_objective(z, t["cost"] * f)
    for r, c, v in parts:
        vals = v * f[c]
        # each row over the sum of its |entries| at z = 1 (the mass term alone is 1 there): a row tolerance is
        # then relative to the whole divergence, not to its steepest tail slope
        top = np.zeros(int(r.max()) + 1)
        np.add.at(top, r, np.abs(vals))
        ok = np.isfinite(top) & (top > 0)
        keep = ok[r] & np.isfinite(vals)
        _, local = np.unique(r[keep], return_inverse=True)
        mb.add_rows(local, z[c[keep]], vals[keep] / top[r[keep]], upper=0.0)
    model = mb.build()
    return model, backend_solve(model, "highs", time_limit, MIP_REL_GAP, False, options, concurrent=False)


def polish(
    design: Any,
    t: dict[str, np.ndarray],
    f: np.ndarray,
    orders: list[tuple[float, float]],
    eps_inf: float | None,
    time_limit: float | None,
    options: Any,
) -> np.ndarray:
    """Sequential LP from a feasible ``f``: tangent cuts plus a trust region on ``log f``, line search on the mix.

    Each accepted point meets every order (and ``D_inf``) exactly by :func:`_grid_excess` (the feasible set is
    convex, so the mix ``(1 - theta) f + theta f_LP`` with the largest passing ``theta`` of a halving search
    stays feasible); the trust radius halves when no step passes and doubles after a full one. A conic
    solver leaves the far tails, whose masses barely move the cost, unresolved; the steps bring the tangent
    slopes there to stationarity, which :func:`tangent_bound` needs.
    """
    t0 = time.perf_counter()
    val = float(t["cost"] @ f)
    trust, margin = TRUST, 1e-9
    extra = [_inf_rows(t, eps_inf)] if eps_inf is not None else []
    for _ in range(POLISH_STEPS):
        if time_limit is not None and (time_left(time_limit, t0) or 0.0) <= 0.0:
            break
        # the LP aims a relative margin inside every budget, so that its step survives the curvature
        inner = [(a, e * (1.0 - margin)) for a, e in orders]
        _, out = _lp(t, f, [_cuts(design, t, f, inner), *extra], trust, time_left(time_limit, t0), options)
        if out.status != "optimal" or out.x is None:
            break
        step = f * np.clip(out.x[: f.size], 0.0, None)
        new, theta = _mix(design, t, f, step, orders, eps_inf, 30)
        if new is None or float(t["cost"] @ new) >= val:
            margin, trust = min(margin * 10.0, 1e-6), trust * 0.5
            if trust < 1e-6:
                break
            continue
        gain = val - float(t["cost"] @ new)
        f, val = new, float(t["cost"] @ new)
        if theta == 1.0:
            trust, margin = min(4.0 * TRUST, trust * 2.0), max(margin * 0.1, 1e-12)
        else:  # the linearisation was poor over this radius: shrink it to where a full step survives
            trust, margin = max(trust * 0.5, 1e-3), min(margin * 10.0, 1e-6)
        if gain <= POLISH_RTOL * max(1.0, abs(val)) and theta == 1.0:
            break
    return f


def _lp_bound(model: Any, dual: Any) -> float | None:
    """Weak duality of :func:`_lp`'s model with the cut multipliers of ``dual`` and the best mass multiplier.

    A solver's multipliers leave reduced costs of -1e-12 on the unbounded columns, where
    :meth:`~optnoise.engine.model.LinearModel.dual_bound` gives nothing; clipping the cut multipliers to
    their sign and choosing the mass row's multiplier ``lambda = min_j e_j / mass_j`` makes every reduced
    cost nonnegative, and ``dual_bound`` then evaluates the bound (rounded down) as for any multipliers.
    """
    y = np.minimum(np.asarray(dual, dtype=float), 0.0)  # cut rows are <= 0 rows: multipliers <= 0
    y[0] = 0.0
    e = model.c - model.A.T @ y
    row = model.A.getrow(0).toarray().ravel()
    pos = row > 0
    if not np.all(e[~pos] >= 0):
        return None
    lam = float(np.min(e[pos] / row[pos]))
    y[0] = lam - 1e-12 * abs(lam)  # strictly below: the reduced costs stay >= 0 in floating point
    return model.dual_bound(y)


def _cutting(
    cuts: tuple[np.ndarray, np.ndarray, np.ndarray], x: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of ``cuts`` that ``x`` violates: a cut ``x`` meets leaves the next LP's solution where it was.

    Any subset of valid cuts is a valid relaxation; keeping only these keeps each round's LP small (the
    zCDP grid has over a hundred orders, of which a few bind).
    """
    r, c, v = cuts
    with np.errstate(over="ignore", invalid="ignore"):
        act = np.bincount(r, weights=v * x[c], minlength=int(r.max()) + 1)
    keep = ~(act <= 0.0)[r]  # NaN activity (overflowing slopes) is kept: the LP rescales its rows
    return r[keep], c[keep], v[keep]


#: Most rounds of cuts of :func:`tangent_bound`.
CUT_ROUNDS = 80


def tangent_bound(
    design: Any, pmf: np.ndarray, L: int, time_limit: float | None, options: Any
) -> tuple[float | None, dict[str, int]]:
    """A proven lower bound over the family at ``L``: an LP with tangent cuts (:func:`_cuts`, :func:`cut_and_mix`)."""
    bound, size, _ = cut_and_mix(design, pmf, L, time_limit, options)
    return bound, size


def _within(value: float, bound: float) -> bool:
    """Whether ``bound`` proves ``value`` within half the optimality gap (the status needs the whole of it)."""
    gap = relative_gap(value, bound)
    return gap is not None and gap <= OPTIMAL_GAP / 2


def _mix(
    design: Any,
    t: dict[str, np.ndarray],
    f: np.ndarray,
    x: np.ndarray,
    orders: list[tuple[float, float]],
    eps_inf: float | None,
    tries: int,
) -> tuple[np.ndarray | None, float]:
    """The first feasible ``(1 - theta) f + theta x`` (normalised) of a halving search from ``theta = 1``.

    Feasible: every order (and ``D_inf``) met by :func:`_grid_excess`; the feasible set is convex, so a
    feasible ``f`` leaves some ``theta > 0`` feasible. Returns ``(None, theta)`` after ``tries`` halvings.
    """
    theta = 1.0
    for _ in range(tries):
        cand = (1.0 - theta) * f + theta * x
        cand = cand / float(t["mass"] @ cand)
        if np.all(cand > 0) and _grid_excess(design, t, cand, orders, eps_inf) <= -1e-13:
            return cand, theta
        theta *= 0.5
    return None, theta


def _mixed(design: Any, t: dict[str, np.ndarray], f: np.ndarray, x: np.ndarray, scale: float) -> np.ndarray | None:
    """:func:`_mix` at the solve's budget ``scale``, when it is cheaper than ``f`` (else ``None``)."""
    cand, _ = _mix(design, t, f, x, *orders_of(design, scale), MIX_TRIES)
    return cand if cand is not None and float(t["cost"] @ cand) < float(t["cost"] @ f) else None


#: Rounds of :func:`polish` then :func:`cut_and_mix` of a solve at one support.
MIX_PASSES = 3
#: Halvings of the mixing weight :func:`cut_and_mix` tries.
MIX_TRIES = 20


def cut_and_mix(
    design: Any, pmf: np.ndarray, L: int, time_limit: float | None, options: Any, *, scale: float | None = None
) -> tuple[float | None, dict[str, int], np.ndarray]:
    """A proven lower bound over the family at ``L`` (Kelley's cutting planes), and a point no worse than ``pmf``.

    At the true budgets and orders (zcdp: the grid, without the ``D_inf`` rows: a relaxation of
    rho-zCDP). Cuts at ``pmf`` alone are loose: their slopes at the tiny tail masses are steep, so the LP
    moves mass there (by factors of 1e7) to relax them. Each round adds the cuts at the midpoint of the
    point and the last LP's solution ``x`` (those ``x`` violates), for :data:`CUT_ROUNDS` rounds or until
    the gap meets ``OPTIMAL_GAP``. Every LP's value is proven by weak duality on the built model
    (:meth:`~optnoise.engine.model.LinearModel.dual_bound`, in the columns ``z = f / pmf``), whatever the
    solver did; the best is returned.

    With ``scale`` (the solve's budget scale), each round also replaces the point by its cheapest feasible
    mix with ``x`` (:func:`_mixed`; the feasible set is convex): the sequential LP of :func:`polish` stalls
    where its linearisation is poor (zcdp rho = 0.5 bd(1) at L = 6, 1e-5 above the optimum), while the
    midpoints of a fixed point never cut the LP's limit, so the bound stalled there too.
    """
    t0 = time.perf_counter()
    t = terms(design, L)
    f = np.maximum(pmf, 1e-300)
    start = f
    orders, _ = orders_of(design)
    parts = [_cuts(design, t, f, orders)]
    best: float | None = None
    size: dict[str, int] = {}
    for round_ in range(CUT_ROUNDS):
        value = float(t["cost"] @ f)
        model, out = _lp(t, f, parts, None, time_left(time_limit, t0), options)
        size = model.size
        cands = [] if out.dual is None else [model.dual_bound(out.dual), _lp_bound(model, out.dual)]
        got = [b for b in cands if b is not None]
        # the basis' bound costs a second solve: only where it can decide (the LP's value meets the target
        # and the solver's multipliers do not prove it), or in the last round
        near = out.objective is not None and _within(value, out.objective)
        short = not got or not _within(value, max(got))
        if out.status == "optimal" and short and (near or round_ == CUT_ROUNDS - 1):
            proof = proof_dual(model, out.x)
            got += [] if proof is None else [proof[0]]
        if got and (best is None or max(got) > best):
            best = max(got)
        if out.x is None or (best is not None and _within(value, best)):
            break
        if time_limit is not None and (time_left(time_limit, t0) or 0.0) <= 0.0:
            break
        x = f * np.clip(out.x[: f.size], 0.0, None)
        x = x / max(float(t["mass"] @ x), 1e-300)
        if scale is not None:
            better = _mixed(design, t, f, x, scale)
            f = f if better is None else better
        mid = 0.5 * (f + x)
        cut = _cutting(_cuts(design, t, np.maximum(mid, 1e-300), orders), x)
        if cut[0].size:
            parts.append(cut)
    return best, size, (pmf if f is start else f)


def _solve_at(
    design: Any,
    L: int,
    time_limit: float | None,
    options: Any,
    verbose: bool,
    *,
    family_bound: bool,
    start: np.ndarray | None = None,
    scale: float = 1.0,
) -> tuple[AdditiveResult, float]:
    """The design at support ``L`` and the budget scale its search ended at.

    From the conic model (``start=None``), or from ``start``, a re-verified point of the family at ``L``
    (a smaller support's result, :func:`extend`-ed), which :func:`polish` only lowers: the conic solver is
    unreliable on wider supports (zcdp rho = 0.5 bd(1): 0.99172 at L = 7, worse than 0.991672 at L = 5).
    """
    t0 = time.perf_counter()
    t = terms(design, L)
    out, spent, size, note = None, 0.0, {}, ""
    if start is None:
        log_ref = _log_ref(design, L, t["mass"])
        res = None
        for _ in range(1 + RETRIES):
            orders, eps_inf = orders_of(design, scale)
            model = build_renyi_terms_model(
                t["cost"], t["mass"], t["I"], t["J"], t["group"], orders, log_ref,
                log_scale=(t["lu"], t["lv"]), eps_inf=eps_inf,
            )  # fmt: skip
            size = model.size
            out, logf = solve_conic_scaled(
                model, log_ref, mass=t["mass"], time_limit=time_left(time_limit, t0), verbose=verbose
            )
            spent += out.solve_time or 0.0
            if logf is None:
                break
            pmf = np.exp(logf)
            excess = renyi_excess(design, evaluate(design, pmf, L)["achieved"])
            res = pmf
            if excess <= 0.0:
                break
            scale *= (1.0 - 1e-9) / (1.0 + excess)  # the next solve aims below the budget by the measured excess
        if res is None:
            assert out is not None
            # the conic solver can fail outright (zcdp rho = 2, bd(2): Clarabel errors at L = 6); the reference
            # discrete Gaussian, whose variance meets the budget, is then the start when it passes on Z
            ref = np.exp(log_ref)
            if renyi_excess(design, evaluate(design, ref, L)["achieved"]) <= 0.0:
                res = ref
                note = f"the conic solve ended {out.status!r}; started from the reference discrete Gaussian"
        if res is None:
            assert out is not None
            failed = AdditiveResult(
                design, out.status, np.arange(-L, L + 1), None, None, None, {}, {}, None, None,
                spent, out.solver, out.message, model_size=size,
            )  # fmt: skip
            return failed, scale
        pmf = res
    else:
        pmf = start
    orders, eps_inf = orders_of(design, scale)
    pmf = polish(design, t, pmf, orders, eps_inf, time_left(time_limit, t0), options)
    bound = None
    for _ in range(MIX_PASSES if family_bound else 0):
        got, _, better = cut_and_mix(design, pmf, L, time_left(time_limit, t0), options, scale=scale)
        bound = got if bound is None or (got is not None and got > bound) else bound
        if better is pmf or (bound is not None and _within(float(t["cost"] @ better), bound)):
            pmf = better
            break
        # the cutting planes found a cheaper feasible point: the sequential LP resumes from it
        pmf = polish(design, t, better, orders, eps_inf, time_left(time_limit, t0), options)
    # the PMF is re-verified on Z by settled_result, which keeps "optimal" only with a proven gap: the conic
    # solver's own status (often "optimal_inaccurate" on these scales) says nothing about either
    status = "optimal" if bound is not None else "feasible"
    result = settled_result(design, pmf, L, status, bound, note or ("" if out is None else out.message))
    result.solve_time = time.perf_counter() - t0
    result.backend = "sequential LP (warm start)" if out is None else out.solver
    result.model_size = size
    return result, scale


def solve_renyi(
    design: Any, time_limit: float | None, options: Any, verbose: bool, *, family_bound: bool = True
) -> AdditiveResult:
    """Solve an rdp/zcdp additive design; its support grown when not given (module docstring).

    ``family_bound=False`` skips :func:`tangent_bound` and the growth (status ``"feasible"``, no bound):
    for a caller whose bound must hold over a larger family (:mod:`optnoise.design.continuous_renyi`).
    """
    t0 = time.perf_counter()
    given, P = design.support, design.period
    a = math.exp(-design.tail_eps)
    family = f"noises on -L..L with staircase tails of factor a = {a:.6g} per period"
    first = design.renyi_support if given is None else min(given, _start(design))
    at_first = family_bound and (given is None or given == first)
    res, scale = _solve_at(design, first, time_limit, options, verbose, family_bound=at_first)
    if given is not None or not family_bound:
        if given is not None and given > first and res.pmf is not None:
            wide = extend(design, res.pmf, first, given)
            res, _ = _solve_at(
                design, given, time_left(time_limit, t0), options, verbose,
                family_bound=family_bound, start=wide, scale=scale,
            )  # fmt: skip
            res.message = f"warm-started from the design at L = {first}; {res.message}".rstrip("; ")
        res.solve_time = time.perf_counter() - t0
        res.support_note = f"support L = {res.L} {'given' if given is not None else 'chosen'}: " + (
            f"optimal among {family}" if res.status == "optimal" else f"among {family}"
        )
        return res
    last = [res, first]

    def solve_at(wide: int) -> AdditiveResult:
        prev, L = last
        if prev.pmf is None:
            return prev
        out, _ = _solve_at(
            design, wide, time_left(time_limit, t0), options, verbose,
            family_bound=True, start=extend(design, prev.pmf, L, wide), scale=scale,
        )  # fmt: skip
        last[:] = [out, wide]
        return out

    res = grow_support(
        first, res, solve_at, period=P, value=lambda r: r.distortion, time_limit=time_limit, t0=t0,
        cap=GROWTH * first,
    )  # fmt: skip
    res.support_note += (
        f"; the family: {family}, the factor of the reference discrete Gaussian at L = {first} for every L"
    )
    return res


def _start(design: Any) -> int:
    """The first support tried: where the reference Gaussian's mass has fallen by ``e^-TAIL_NATS``."""
    return design.period + int(math.ceil(math.sqrt(2.0 * TAIL_NATS * design.sigma2)))
