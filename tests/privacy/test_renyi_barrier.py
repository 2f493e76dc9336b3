"""The Renyi barrier path (optnoise.privacy.renyi_barrier) on small problems: its point meets the Renyi
constraints (recomputed here from their definition), and its value is within its proven gap of an
independent cvxpy/Clarabel solve of the same problem."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest
from scipy.special import logsumexp

from optnoise import Neighborhood, NoiseDesign
from optnoise.engine.tolerance import OPTIMAL_GAP
from optnoise.privacy.renyi_barrier import barrier_newton, barrier_value, centre_multipliers, newton_refine
from optnoise.privacy.renyi_problem import RenyiProblem

N = 9
ETA = np.arange(N)
#: circular squared error on Z_9, shifts +1 and -1
COST = np.minimum(ETA, N - ETA).astype(float) ** 2
IDX = np.stack([(ETA + 1) % N, (ETA - 1) % N])
#: KL <= 0.2 and D_2 <= 0.5: the two orders Clarabel takes as exponential cones and quad_over_lin
ORDERS = [(1.0, 0.2), (2.0, 0.5)]
#: Clarabel run below its default tolerances (1e-8), so its optimum is good to ~1e-9
CLARABEL_TIGHT = {"tol_feas": 1e-10, "tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10}


def divergence(p: np.ndarray, q: np.ndarray, alpha: float) -> float:
    """D_alpha(p || q) from its definition (written here, not the library's)."""
    if alpha == 1.0:
        return float(np.sum(p * np.log(p / q)))
    return float(math.log(np.sum(p**alpha * q ** (1.0 - alpha))) / (alpha - 1.0))


def clarabel_optimum(cost, idx, orders, eps_inf=None) -> float:
    """``min cost . f`` over the simplex under the Renyi rows, as a conic program (orders 1 and 2 only)."""
    n = cost.size
    f = cp.Variable(n, nonneg=True)
    cons = [cp.sum(f) == 1]
    for row in idx:
        g = f[row]
        for alpha, eps in orders:
            if alpha == 1.0:
                cons.append(cp.sum(cp.rel_entr(f, g)) <= eps)
            else:
                assert alpha == 2.0
                cons.append(cp.sum(cp.hstack([cp.quad_over_lin(f[i], g[i]) for i in range(n)])) <= math.exp(eps))
        if eps_inf is not None:
            cons.append(f <= math.exp(eps_inf) * g)
    problem = cp.Problem(cp.Minimize(cost @ f), cons)
    problem.solve(solver="CLARABEL", **CLARABEL_TIGHT)
    assert problem.status == "optimal"
    return float(problem.value)


def barrier_path(prob: RenyiProblem, eps_inf: bool = False):
    """The path from the flat PMF (strictly feasible: every divergence is 0), mu down by 10 per stage,
    then the refinement; returns the point and the certified lower bound before and after the refinement."""
    logf = np.full(prob.size, -math.log(prob.size))
    mu = 1e-2 * prob.value(logf)
    while True:
        logw = logf[prob.idx] if eps_inf else None
        logf, _ = barrier_newton(prob, logf, mu, logw, deadline=None)
        if mu * prob.constraints < 1e-9:
            break
        mu *= 0.1
    y, nu = centre_multipliers(prob, logf, mu, logw)
    before = prob.lower_bound([logf], [y], nu)
    lp, yp, nup = newton_refine(prob, logf, y, mu, logw, rtol=1e-12, deadline=None)
    return lp, before, prob.lower_bound([lp], [yp], nup)


@pytest.mark.parametrize("eps_inf", [None, 1.5])
def test_barrier_path_is_feasible_and_within_its_gap_of_clarabel(eps_inf):
    prob = RenyiProblem(COST, IDX, ORDERS, eps_inf)
    logf, before, bound = barrier_path(prob, eps_inf is not None)
    f = np.exp(logf - logsumexp(logf))
    value = float(COST @ f)
    # the Renyi constraints, recomputed from the definition for both shifts
    for row in IDX:
        for alpha, eps in ORDERS:
            assert divergence(f, f[row], alpha) <= eps * (1 + 1e-9), (alpha, row[0])
        if eps_inf is not None:
            assert np.max(f / f[row]) <= math.exp(eps_inf) * (1 + 1e-9)
    # the bound is certified and the gap small; the refinement is what closes it
    gap = (value - bound) / max(1.0, value)
    assert 0.0 <= gap <= OPTIMAL_GAP
    assert before < bound
    # an independent conic solve lands between the bound and the value (up to Clarabel's own accuracy)
    opt = clarabel_optimum(COST, IDX, ORDERS, eps_inf)
    slack = 1e-8 * max(1.0, opt)
    assert bound - slack <= opt <= value + slack, (bound, opt, value)
    assert abs(value - opt) <= (value - bound) + slack


def test_barrier_value_and_multipliers_by_hand():
    prob = RenyiProblem(COST, IDX, ORDERS)
    flat = np.full(N, -math.log(N))
    # at the flat PMF every divergence is 0: slack -G = eps for KL, -expm1(-eps) for alpha = 2 (both shifts)
    slack = np.array([0.2, 0.2, -math.expm1(-0.5), -math.expm1(-0.5)])
    mu = 0.01
    want = float(COST.mean()) - mu * float(np.sum(np.log(slack)))
    assert barrier_value(prob, flat, mu, None) == pytest.approx(want, rel=1e-12)
    y, nu = centre_multipliers(prob, flat, mu, None)
    assert nu is None and y == pytest.approx(mu / slack, rel=1e-12)
    # with a D_inf budget: each of the 2 N rows has slack s = (e^1.5 - 1) / N and weight w = f(J) = 1 / N,
    # adding -mu sum_b w_b log s_b to the barrier and multipliers nu_b = mu w_b / s_b = mu / (e^1.5 - 1)
    pure = RenyiProblem(COST, IDX, ORDERS, 1.5)
    logw = flat[IDX]
    s_b = math.expm1(1.5) / N
    extra = -mu * 2 * N * (1 / N) * math.log(s_b)
    assert barrier_value(pure, flat, mu, logw) == pytest.approx(want + extra, rel=1e-12)
    y, nu = centre_multipliers(pure, flat, mu, logw)
    assert y == pytest.approx(mu / slack, rel=1e-12) and nu == pytest.approx(np.full((2, N), mu / math.expm1(1.5)))
    # outside the strict interior the barrier is +inf: a point mass has infinite divergences
    spike = np.full(N, -800.0)
    spike[0] = 0.0
    assert barrier_value(prob, spike, mu, None) == math.inf


def test_newton_descends_and_the_design_route_agrees():
    prob = RenyiProblem(COST, IDX, ORDERS)
    flat = np.full(N, -math.log(N))
    mu = 0.05
    logf, centred = barrier_newton(prob, flat, mu, None, deadline=None)
    assert centred and barrier_value(prob, logf, mu, None) < barrier_value(prob, flat, mu, None)
    # the design (which drives this module through renyi_solve) reports a gap that contains Clarabel's optimum
    d = NoiseDesign(n=8, neighborhood=Neighborhood.bd(1), metric="circular-mse", privacy="rdp", rdp=[(2.0, 0.5)])
    out = d.solve()
    assert out.status == "optimal" and out.bound is not None
    opt = clarabel_optimum(d.cost.ravel(), d.shift_index(), [(2.0, 0.5)])
    slack = 1e-8 * max(1.0, opt)
    assert out.bound - slack <= opt <= out.distortion + slack
