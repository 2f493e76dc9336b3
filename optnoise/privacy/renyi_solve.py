"""Renyi-DP / zCDP noise design with a proven optimality gap: a log-barrier method in log space.

The problem, its homogenised constraints ``G_i`` and the certified lower bound are those of
:mod:`optnoise.privacy.renyi_problem`. :func:`solve_renyi_barrier` solves it in four parts:

1. **Search.** Log-barrier path following on ::

       phi(f) = c . f - mu sum_i log(-G_i(f)) - mu sum_b w_b log(e^eps_inf f(J_b) - f(eta_b))

   over the simplex, in the variables ``logf = log f``: a Newton step in f-space, written in the
   diagonal scaling ``diag(f)`` so that ``f`` stays positive (``f <- f exp(t dl)``) and masses of 1e-300
   keep their ratios, globalised by Armijo backtracking on the convex ``phi``. Every Newton matrix is
   assembled from log-ratios and equilibrated in log space (``log sqrt`` of its diagonal), so masses far
   below the float64 range do not underflow. The path starts at a strictly feasible wrapped Gaussian
   (variance inflated until every constraint has a relative slack of :data:`START_SLACK`); ``mu``
   decreases tenfold per stage. The weights ``w_b = f(J_b)`` (fixed per stage) make the ``D_inf``
   barrier add about ``mu`` per shift to the duality gap, not ``mu N``, and keep it from propping up
   the far tails.
2. **Refinement.** Near a centre the barrier objective cannot resolve the far tails (its gradient is
   scaled by ``f``), so the barrier's KKT system is solved by a primal-dual Newton method with the
   multipliers ``y`` as unknowns: ``c + sum_i y_i grad G_i + B^T nu - lambda = 0`` in **f-space**,
   ``y_i G_i = -mu``, ``sum f = 1`` (``nu`` follows from ``logf``), column-equilibrated. This brings the
   f-space stationarity, which the bound depends on, to working precision in every mass.
3. **Bound.** :meth:`~optnoise.privacy.renyi_problem.RenyiProblem.lower_bound` at the refined point and
   multipliers (weak duality with tangent cuts; about ``mu (I + K)`` below the value), and as a second
   source the outer-approximation LP with tangent cuts at that point (:func:`tangent_lp_bound`, HiGHS
   through :mod:`optnoise.engine`), whose dual is the best multiplier choice for that tangent point.
4. **Upper bound.** Every point the search visits is offered as it would be returned: masses floored
   at ``e^LOG_FLOOR`` (float64 holds no less), rounded to float64 and checked from scratch
   (:meth:`~optnoise.privacy.renyi_problem.RenyiProblem.feasible`, relative margin 1e-11); one that fails
   is mixed with the strictly feasible start, with the largest weight that passes. The reference
   discrete Gaussian (feasible: Canonne, Kamath and Steinke 2020) is the first incumbent, so the result
   never costs more than it.

The status is ``"optimal"`` only when ``(value - bound) / max(1, value) <= OPTIMAL_GAP``; otherwise
``"time_limit"`` when the time ran out, else ``"feasible"`` (the search stalled). Either way the PMF
meets the budget and ``bound``/``gap`` say how far from optimal it may be.

:func:`solve_renyi_design` runs this method (``method="barrier"``) or the cvxpy conic model of
:mod:`optnoise.privacy.renyi` (``method="cvxpy"``), whose point is then bounded by
:func:`tangent_lp_bound`: a conic solver's "optimal" is kept only when that bound proves the gap.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from optnoise.engine.model import ModelBuilder
from optnoise.engine.output import relative_gap
from optnoise.engine.progress import Progress
from optnoise.engine.solve import solve_model
from optnoise.engine.tolerance import OPTIMAL_GAP, proven_optimal
from optnoise.engine.validation import shown
from optnoise.privacy.renyi import RENYI_RTOL, check_reference, reference_log_pmf, solve_renyi
from optnoise.privacy.renyi_barrier import barrier_newton, barrier_value, centre_multipliers, newton_refine
from optnoise.privacy.renyi_problem import RenyiProblem

__all__ = ["RENYI_METHODS", "RenyiSolution", "solve_renyi_barrier", "solve_renyi_design", "tangent_lp_bound"]

#: Methods of :func:`solve_renyi_design`.
RENYI_METHODS = ("barrier", "cvxpy")
#: Relative slack of every constraint at the start of the barrier path.
START_SLACK = 1e-3
#: Variance factors tried in turn for a strictly feasible wrapped Gaussian start.
START_INFLATION = (1.0, 1.001, 1.003, 1.01, 1.03, 1.1, 1.3, 2.0, 4.0, 10.0, 100.0)
#: Smallest log mass of a returned PMF (e^-708 is a normal float64; masses below are floored to it).
LOG_FLOOR = -708.0
#: The search stops once the proven gap is below this (the status needs ``OPTIMAL_GAP``; half leaves room).
GAP_TARGET = 0.5 * OPTIMAL_GAP
#: Tolerances of the tangent LP (tighter than optnoise's 1e-9 defaults: its multipliers are the bound).
LP_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


@dataclass
class RenyiSolution:
    """The outcome of :func:`solve_renyi_design`.

    Attributes
    ----------
    status : str
        ``"optimal"`` (gap proven within ``OPTIMAL_GAP``), ``"feasible"``, ``"time_limit"`` or ``"error"``.
    pmf : ndarray or None
        The noise PMF of the design's shape.
    objective : float or None
        ``c . pmf``.
    bound : float or None
        A certified lower bound on the optimum (:mod:`optnoise.privacy.renyi_problem`).
    gap : float or None
        ``(objective - bound) / max(1, objective)``.
    solve_time : float
        Seconds.
    backend : str
        ``"log-barrier"`` or ``"cvxpy/<conic solver>"``.
    model_size : dict
        Rows and columns of the problem (the conic model's for cvxpy).
    message : str
        How the search ended.
    """

    status: str
    pmf: np.ndarray | None
    objective: float | None
    bound: float | None
    gap: float | None
    solve_time: float
    backend: str
    model_size: dict[str, int]
    message: str = ""


# --------------------------------------------------------------------------------------------
# bounds
# --------------------------------------------------------------------------------------------


def tangent_lp_bound(prob: RenyiProblem, logf: np.ndarray, *, time_limit: float | None = None) -> float:
    """The best certified bound from tangent cuts at one point ``f_hat = exp(logf)`` (finite logs).

    The outer-approximation LP ``min c . f`` over the simplex with ``grad G_i(f_hat) . f <= 0`` for
    every constraint and the ``D_inf`` rows (when they count, ``prob.bound_inf``) has as dual
    ``max_(y, nu >= 0) min_eta e(eta)``: the certificate with the best multipliers for this tangent
    point. It is posed in f-space, where its dual is well scaled (every cut coefficient is of order
    one; each row is divided by its largest), solved by HiGHS, and its multipliers are handed to
    :meth:`~optnoise.privacy.renyi_problem.RenyiProblem.lower_bound`: HiGHS' objective is never trusted.
    Coefficients below 1e-9 of their row's largest are dropped, which changes the LP, never the bound.
    ``-inf`` when HiGHS returns no multipliers.
    """
    N, K = prob.size, prob.shifts
    logf = logf - logsumexp(logf)
    grads = prob.gradients(prob.tangents(logf))
    ok = np.flatnonzero(np.all(np.isfinite(grads), axis=1))
    top = np.max(np.abs(grads[ok]), axis=1) if ok.size else np.zeros(0)
    ok, top = ok[top > 0], top[top > 0]
    cuts = grads[ok] / top[:, None]
    cuts[np.abs(cuts) < 1e-9] = 0.0
    mb = ModelBuilder()
    f = mb.add_vars(N, lb=0.0, ub=1.0, name="f")
    mb.set_objective(f, prob.cost)
    mb.add_row(f, np.ones(N), lower=1.0, upper=1.0)
    r, c = np.nonzero(cuts)
    cut_rows = mb.add_rows(r, c, cuts[r, c], upper=0.0) if ok.size else np.zeros(0, dtype=np.int64)
    pure_rows = None
    if prob.eps_inf is not None and prob.bound_inf:
        ee = math.exp(prob.eps_inf)
        # (f(eta) - e^eps_inf f(J)) / e^eps_inf <= 0, row (m, eta) = m N + eta
        rr = np.repeat(np.arange(K * N), 2)
        cc = np.stack([np.tile(np.arange(N), K), prob.idx.ravel()], axis=1).ravel()
        pure_rows = mb.add_rows(rr, cc, np.tile([1.0 / ee, -1.0], K * N), upper=0.0)
    out = solve_model(mb.build(), solver="highs", time_limit=time_limit, options=LP_OPTIONS)
    if out.dual is None:
        return -math.inf
    duals = -np.asarray(out.dual, dtype=float)  # HiGHS' row duals of binding <= rows are <= 0 here
    y = np.zeros(prob.constraints)
    y[ok] = np.maximum(duals[cut_rows], 0.0) / top
    nu = None
    if pure_rows is not None and prob.eps_inf is not None:
        nu = np.maximum(duals[pure_rows], 0.0).reshape(K, N) / math.exp(prob.eps_inf)
    return prob.lower_bound([logf], [y], nu)


# --------------------------------------------------------------------------------------------
# the driver
# --------------------------------------------------------------------------------------------


class _Incumbent:
    """The cheapest accepted point (as float64 would return it) and the best certified bound."""

    def __init__(self, prob: RenyiProblem, start: np.ndarray) -> None:
        self.prob = prob
        self.start = start
        self.log_pmf = start
        self.value = prob.value(start)
        self.bound = -math.inf

    def offer(self, logf: np.ndarray) -> None:
        """Accept ``logf`` (floored, rounded, re-checked; else repaired towards the start) if it is cheaper."""
        if not np.all(np.isfinite(logf)):
            return
        candidate = self._rounded(logf)
        if not self.prob.feasible(candidate):
            candidate = self._rounded(self.prob.repair(candidate, self.start)[0])
            if not self.prob.feasible(candidate):
                return
        value = self.prob.value(candidate)
        if value < self.value:
            self.log_pmf, self.value = candidate, value

    def prove(self, bound: float) -> None:
        self.bound = max(self.bound, bound)

    @property
    def gap(self) -> float | None:
        return relative_gap(self.value, self.bound)

    def proven(self, target: float) -> bool:
        gap = self.gap
        return gap is not None and gap <= target

    @staticmethod
    def _rounded(logf: np.ndarray) -> np.ndarray:
        """The logs of the float64 PMF that ``logf`` would be returned as."""
        floored = np.maximum(logf - logsumexp(logf), LOG_FLOOR)
        pmf = np.exp(floored - logsumexp(floored))
        with np.errstate(divide="ignore"):
            return np.log(pmf)


def _start(prob: RenyiProblem, shape: tuple[int, ...], sigma2: float) -> np.ndarray | None:
    """A strictly feasible wrapped Gaussian (variance inflated until every slack is :data:`START_SLACK`)."""
    for factor in START_INFLATION:
        log_pmf = reference_log_pmf(shape[0] - 1, len(shape), sigma2 * factor)
        if prob.excess(log_pmf) <= -START_SLACK:
            return log_pmf
    return None


def _search(prob: RenyiProblem, best: _Incumbent, start: np.ndarray, deadline: float | None, progress: Progress) -> int:
    """The barrier path (module docstring) from ``start``; updates ``best``, returns the stages run
    (each one counted on ``progress``, with the incumbent's value and proven gap)."""
    cscale = max(float(np.max(np.abs(prob.cost))), 1e-300)
    rows = prob.constraints + (prob.shifts if prob.eps_inf is not None else 0)
    logf = start
    mu = 1e-2 * prob.value(logf)
    stage = 0
    while deadline is None or time.perf_counter() < deadline:
        stage += 1
        logw = logf[prob.idx] if prob.eps_inf is not None else None
        logf, centred = barrier_newton(prob, logf, mu, logw, deadline=deadline)
        best.offer(logf)
        value = prob.value(logf)
        scale = max(1.0, abs(value))
        final = mu * rows <= 0.25 * OPTIMAL_GAP * scale  # the barrier's own gap is below the target
        if final or stage % 3 == 0:
            y, nu = centre_multipliers(prob, logf, mu, logw)
            best.prove(prob.lower_bound([logf], [y], nu))
            lp, yp, nup = newton_refine(
                prob, logf, y, mu, logw, rtol=1e-3 * OPTIMAL_GAP * scale / cscale, deadline=deadline
            )
            best.prove(prob.lower_bound([lp], [yp], nup))
            best.offer(lp)
            if not best.proven(GAP_TARGET):
                remaining = None if deadline is None else max(deadline - time.perf_counter(), 1.0)
                best.prove(tangent_lp_bound(prob, lp, time_limit=remaining))
            if centred and math.isfinite(barrier_value(prob, lp, mu, logw)):
                logf = lp
        gap = best.gap
        progress.step(stage=f"value {best.value:.6g}, gap {'n/a' if gap is None else f'{gap:.2g}'}", check=False)
        if best.proven(GAP_TARGET):
            break
        mu *= 0.3 if final else 0.1
        if mu < 1e-16 * scale:
            break
    return stage


def solve_renyi_barrier(
    cost: np.ndarray,
    idx: np.ndarray,
    shape: tuple[int, ...],
    orders: list[tuple[float, float]],
    sigma2: float,
    *,
    eps_inf: float | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
    bound_inf: bool = True,
) -> RenyiSolution:
    """Minimise the expected cost ``cost @ f`` under the Renyi budget with a proven gap (module docstring).

    ``sigma2`` is the variance of the reference discrete Gaussian that meets the budget
    (:class:`~optnoise.privacy.budget.Budget`); ``time_limit`` bounds the search (seconds, ``None``
    for none: it ends anyway once the gap is proven or ``mu`` is at float resolution). ``bound_inf=False``:
    the ``D_inf`` rows guide the search but the bound holds without them
    (:class:`~optnoise.privacy.renyi_problem.RenyiProblem`). ``verbose`` shows a progress bar on stderr
    (barrier stages, the incumbent's value and proven gap).
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    n, dim = shape[0] - 1, len(shape)
    reference = check_reference(n, dim, sigma2)
    prob = RenyiProblem(cost, idx, orders, eps_inf, bound_inf=bound_inf)
    start = _start(prob, shape, sigma2)
    # the reference is feasible in exact arithmetic and tight at integer orders: accepted within the
    # tolerance of the result's re-verification, as the incumbent to beat
    first = reference if prob.excess(reference) <= RENYI_RTOL or start is None else start
    best = _Incumbent(prob, first)
    stages, why = 0, ""
    if start is None:
        why = "no strictly feasible wrapped Gaussian to start from"
    else:
        best.start = start
        try:
            with Progress("renyi barrier", verbose=verbose, time_limit=None, unit="stage") as progress:
                stages = _search(prob, best, start, deadline, progress)
        except (ArithmeticError, ValueError, RuntimeError) as exc:
            # a numerical failure (LinAlgError is a ValueError; HiGHS reports RuntimeError): the incumbent, at
            # worst the reference, and the bound proven so far stand
            why = f"the search stopped on a numerical failure ({exc})"
    if not math.isfinite(best.bound):
        # still within reach after a time limit: one LP of N columns (a second at most for the designs here)
        remaining = None if deadline is None else max(deadline - time.perf_counter(), 1.0)
        best.prove(tangent_lp_bound(prob, best.log_pmf, time_limit=remaining))
    gap = best.gap
    if proven_optimal(gap):
        status = "optimal"
    elif deadline is not None and time.perf_counter() >= deadline:
        status, why = "time_limit", why or "time limit reached before the gap was proven"
    else:
        status, why = "feasible", why or "the search stalled before the gap was proven"
    message = f"log-barrier, {stages} stage(s); proven gap {'n/a' if gap is None else f'{gap:.3g}'}"
    if best.log_pmf is reference:
        message += "; the reference discrete Gaussian is returned (nothing cheaper was found)"
    N, I = prob.size, prob.constraints  # noqa: E741  (the docstrings' I)
    pure = prob.shifts * N if eps_inf is not None else 0
    return RenyiSolution(
        status=status,
        pmf=np.exp(best.log_pmf).reshape(shape),
        objective=best.value,
        bound=best.bound if math.isfinite(best.bound) else None,
        gap=gap,
        solve_time=time.perf_counter() - t0,
        backend="log-barrier",
        model_size={"rows": 1 + I + pure, "cols": N, "integers": 0, "nonzeros": N * (1 + I) + 2 * pure},
        message=f"{message}; {why}" if why else message,
    )


def solve_renyi_design(
    cost: np.ndarray,
    idx: np.ndarray,
    shape: tuple[int, ...],
    orders: list[tuple[float, float]],
    sigma2: float,
    *,
    eps_inf: float | None = None,
    method: str = "barrier",
    time_limit: float | None = None,
    verbose: bool = False,
    conic_solver: str = "clarabel",
    bound_inf: bool = True,
) -> RenyiSolution:
    """Solve a Renyi design with ``method="barrier"`` (:func:`solve_renyi_barrier`) or ``"cvxpy"``.

    The cvxpy route solves the conic model of :func:`optnoise.privacy.renyi.solve_renyi`
    (``conic_solver``, ``verbose``) and bounds its point with :func:`tangent_lp_bound` at the point
    (mixed with 1e-15 of the reference so that every mass is positive: any positive tangent point gives
    a valid bound). Its ``"optimal"`` stands only when that bound proves the gap; otherwise a point is
    ``"feasible"``. Re-verification of the PMF is the caller's (:class:`optnoise.DesignResult`).
    ``bound_inf`` as in :func:`solve_renyi_barrier`.
    """
    if method == "barrier":
        return solve_renyi_barrier(
            cost,
            idx,
            shape,
            orders,
            sigma2,
            eps_inf=eps_inf,
            time_limit=time_limit,
            bound_inf=bound_inf,
            verbose=verbose,
        )
    if method != "cvxpy":
        raise ValueError(f"method must be one of {', '.join(RENYI_METHODS)}; got {shown(method)}")
    out, pmf, size = solve_renyi(
        cost=cost,
        idx=idx,
        shape=shape,
        orders=orders,
        sigma2=sigma2,
        eps_inf=eps_inf,
        time_limit=time_limit,
        verbose=verbose,
        conic_solver=conic_solver,
    )
    t0 = time.perf_counter()
    objective = bound = gap = None
    status, message = out.status, out.message
    if pmf is not None:
        prob = RenyiProblem(cost, idx, orders, eps_inf, bound_inf=bound_inf)
        objective = float(prob.cost @ pmf.ravel())
        reference = reference_log_pmf(shape[0] - 1, len(shape), sigma2)
        with np.errstate(divide="ignore"):
            tangent = prob.mix(np.log(pmf.ravel()), reference, 1.0 - 1e-15)
        certified = tangent_lp_bound(prob, tangent)
        bound = certified if math.isfinite(certified) else None
        gap = relative_gap(objective, bound)
        if status == "optimal" and not proven_optimal(gap):
            status = "feasible"
            message = f"{message}; the conic solver's optimum is not proven (tangent-cut bound gap {gap})"
    return RenyiSolution(
        status=status,
        pmf=pmf,
        objective=objective,
        bound=bound,
        gap=gap,
        solve_time=out.solve_time + time.perf_counter() - t0,
        backend=f"cvxpy/{conic_solver}",
        model_size=size,
        message=message,
    )
