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
default support is ``L = P + ceil(sigma sqrt(2 TAIL_NATS))``, where the reference's mass has fallen
by ``e^-TAIL_NATS``; the tail factor is the reference's decay over the last period,
``a = exp(-P (2L - P) / (2 sigma^2))``.

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

from optnoise.design.additive_eval import AdditiveResult, evaluate, renyi_excess, settled_result, terms
from optnoise.design.pipeline import backend_solve, proof_dual
from optnoise.engine.model import ModelBuilder
from optnoise.engine.progress import time_left
from optnoise.engine.tolerance import MIP_REL_GAP
from optnoise.engine.validation import check_positive, shown
from optnoise.privacy.renyi import (
    ALPHA_MAX,
    build_renyi_terms_model,
    check_alphas,
    check_rdp,
    solve_conic_scaled,
    zcdp_alphas,
)

__all__ = ["RENYI_NOTIONS", "TAIL_NATS", "setup_renyi", "solve_renyi", "tangent_bound", "orders_of"]

#: The Renyi notions of the additive release.
RENYI_NOTIONS = ("rdp", "zcdp")
#: The default support ends where the reference Gaussian's mass has fallen by ``e^-TAIL_NATS``.
TAIL_NATS = 40.0
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
    if design.privacy == "rdp":
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
    L = support if support is not None else P + int(math.ceil(math.sqrt(2.0 * TAIL_NATS * design.sigma2)))
    design.renyi_support = L
    design.tail_eps = P * (2 * L - P) / (2.0 * design.sigma2)


def orders_of(design: Any, scale: float = 1.0) -> tuple[list[tuple[float, float]], float | None]:
    """The orders ``(alpha, eps_alpha)`` (budgets times ``scale``) and the zCDP ``D_inf`` budget."""
    if design.privacy == "rdp":
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


def _log_ref(design: Any, L: int, mass: np.ndarray) -> np.ndarray:
    xs = np.arange(-L, L + 1, dtype=float)
    lr = -(xs * xs) / (2.0 * design.sigma2)
    return lr - float(logsumexp(lr + np.log(mass)))


#: Rounds of tangent points of :func:`tangent_bound` (each adds the cuts at a point between the design and
#: the previous LP's solution: Kelley's cutting planes stabilised towards the design). Measured: the later
#: rounds did not raise the bound (the cuts at a midpoint are dominated by its steepest tail slope), so one.
CUT_ROUNDS = 1


def _cuts(design: Any, t: dict[str, np.ndarray], pmf: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tangent cuts at ``pmf`` (> 0) of every order and shift: ``(rows, cols, vals)``, rows ``0..``, ``<= 0``."""
    orders, _ = orders_of(design)  # the true budgets: a relaxation, never the scaled-down ones
    lf = np.log(pmf)
    d = lf[t["I"]] + t["lu"] - lf[t["J"]] - t["lv"]
    N = pmf.size
    rows, cols, vals, r = [], [], [], 0
    for alpha, eps in orders:
        if alpha == 1.0:
            cu, cv, rhs = (1.0 + d) * np.exp(t["lu"]), -np.exp(d + t["lv"]), eps
        else:
            with np.errstate(over="ignore"):
                cu = alpha * np.exp((alpha - 1.0) * (d - eps) + t["lu"])
                cv = (1.0 - alpha) * np.exp(alpha * d - (alpha - 1.0) * eps + t["lv"])
            rhs = 1.0
        for g in range(design.shifts.size):
            sel = t["group"] == g
            coef = np.zeros(N)
            np.add.at(coef, t["I"][sel], cu[sel])
            np.add.at(coef, t["J"][sel], cv[sel])
            coef -= rhs * t["mass"]
            top = float(np.max(np.abs(coef)))
            if not np.all(np.isfinite(coef)) or top == 0.0:
                continue
            nz = np.flatnonzero(coef)
            rows.append(np.full(nz.size, r))
            cols.append(nz)
            vals.append(coef[nz] / top)
            r += 1
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)


def tangent_bound(
    design: Any, pmf: np.ndarray, L: int, time_limit: float | None, options: Any
) -> tuple[float | None, dict[str, int]]:
    """A proven lower bound over the family at ``L``: the LP with tangent cuts of every order.

    ``phi(U, V) = U^alpha V^(1-alpha)`` is convex and 1-homogeneous, so ``phi >= grad phi(U0, V0) . (U, V)``
    for all ``U, V >= 0``; the cut ``sum_e grad phi_e . (U_e, V_e) <= e^((alpha-1) eps) mass . f`` holds for
    every feasible ``f`` (KL: ``U log(U/V) >= (1 + d) U - e^d V``), at any tangent point. Cuts are taken at
    ``pmf`` and, for :data:`CUT_ROUNDS` rounds, at the midpoint of ``pmf`` and the last LP solution (a cut
    at ``pmf`` alone lets the LP exploit the far tails, where its slopes are steep). Rows are divided by
    their largest coefficient; each LP's value is proven by weak duality on the built model
    (:meth:`~optnoise.engine.model.LinearModel.dual_bound`), whatever the solver did: the best is returned.
    """
    t0 = time.perf_counter()
    t = terms(design, L)
    N = pmf.size
    points = [np.maximum(pmf, 1e-300)]
    best: float | None = None
    size: dict[str, int] = {}
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for _ in range(CUT_ROUNDS):
        parts.append(_cuts(design, t, points[-1]))
        mb = ModelBuilder()
        f = mb.add_vars(N, lb=0.0, ub=np.inf, name="f")
        mb.add_row(f, t["mass"], lower=1.0, upper=1.0)
        mb.set_objective(f, t["cost"])
        offset = 0
        for r, c, v in parts:
            if r.size:
                mb.add_rows(r, f[c], v, upper=0.0)
                offset += int(r.max()) + 1
        model = mb.build()
        size = model.size
        out = backend_solve(model, "highs", time_left(time_limit, t0), MIP_REL_GAP, False, options, concurrent=False)
        cands = []
        if out.dual is not None:
            cands += [model.dual_bound(s * np.asarray(out.dual, dtype=float)) for s in (1.0, -1.0)]
        proof = proof_dual(model, out.x) if out.status == "optimal" else None
        if proof is not None:
            cands.append(proof[0])
        got = [b for b in cands if b is not None]
        if got and (best is None or max(got) > best):
            best = max(got)
        if out.x is None or (best is not None and float(t["cost"] @ pmf) - best <= 1e-7 * max(1.0, abs(best))):
            break
        x = np.clip(out.x[f], 0.0, None)
        x = x / max(float(t["mass"] @ x), 1e-300)
        points.append(np.maximum(0.5 * (points[0] + x), 1e-300))
    return best, size


def solve_renyi(design: Any, time_limit: float | None, options: Any, verbose: bool) -> AdditiveResult:
    """Solve an rdp/zcdp additive design at its support (module docstring)."""
    t0 = time.perf_counter()
    L = design.renyi_support
    t = terms(design, L)
    log_ref = _log_ref(design, L, t["mass"])
    scale, res, spent, size = 1.0, None, 0.0, {}
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
        got = evaluate(design, pmf, L)["achieved"]
        excess = renyi_excess(design, got)
        res = (pmf, out, got)
        if excess <= 0.0:
            break
        scale *= (1.0 - 1e-9) / (1.0 + excess)  # the next solve aims below the budget by the measured excess
    if res is None:
        return AdditiveResult(
            design, out.status, np.arange(-L, L + 1), None, None, None, {}, {}, None, None,
            spent, out.solver, out.message, model_size=size,
        )  # fmt: skip
    pmf, out, _ = res
    bound, _ = tangent_bound(design, pmf, L, time_left(time_limit, t0), options)
    status = "optimal" if out.status == "optimal" else ("feasible" if out.status == "time_limit" else out.status)
    result = settled_result(design, pmf, L, status, bound, out.message)
    result.solve_time, result.backend, result.model_size = time.perf_counter() - t0, out.solver, size
    given = design.support is not None
    result.support_note = (
        f"support L = {L} {'given' if given else 'chosen from the reference discrete Gaussian'}: optimal among "
        f"noises on -L..L with staircase tails of factor a = {math.exp(-design.tail_eps):.6g} per period"
        + ("" if given else f" (its mass beyond L is below e^-{TAIL_NATS:g})")
    )
    return result
