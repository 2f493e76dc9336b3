"""The polish of composed designs (optnoise.design.composed_polish): never worse than its start, certified.

Every eps the polish reports is re-computed here by dp-accounting's own PLD of the ring's pairs (both orders,
pessimistic), not by optnoise's accounting; distortions from the PMF and the cost vector.
"""

from __future__ import annotations

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.design import composed_solve
from optnoise.design.composed_families import calibrate_family, family_within
from optnoise.design.composed_polish import hat_basis, polish, reach
from optnoise.design.composed_solve import ComposedProblem
from optnoise.engine.progress import Progress

N, K, DELTA, CAP, EPS = 40, 3, 1e-5, 9.0, 1.0
H = 1e-4


def _design(**kw):
    args = dict(n=N, neighborhood=Neighborhood.bd(1), metric="circular-mse", privacy="composed", compositions=K)
    return NoiseDesign(delta=DELTA, **(args | kw))


@pytest.fixture()
def problem():
    def make(**kw):
        clock = Progress("test", verbose=False, time_limit=None)
        clock.__enter__()
        return ComposedProblem(_design(**kw), clock)

    return make


def _ring_eps(dp_eps, f: np.ndarray) -> float:
    """dp-accounting's pessimistic eps at DELTA of K releases of ``q + eta mod (N + 1)``, shift 1, both orders."""
    return dp_eps(f, np.roll(f, -1), K, DELTA, H)


def test_hat_basis_is_piecewise_linear_interpolation():
    x = np.arange(0, 31, dtype=float)
    c = np.array([0.0, 2.0, -1.0, 0.5])
    B = hat_basis(x, 4, top=21.0)
    assert np.allclose(B.sum(axis=1), 1.0)
    knots = np.linspace(0.0, 21.0, 4)
    inside = x <= 21.0
    assert np.allclose((B @ c)[inside], np.interp(x[inside], knots, c))
    # beyond top: the last piece continued
    slope = (c[3] - c[2]) / (knots[3] - knots[2])
    assert np.allclose((B @ c)[~inside], c[3] + slope * (x[~inside] - 21.0))


def test_reach_leaves_at_most_the_mass_beyond():
    x = np.arange(10, dtype=float)
    f = 0.5 ** np.arange(1, 11)
    R = reach(x, f, 1e-2)
    assert f[x > R].sum() <= 1e-2 < f[x >= R].sum()


def test_epsilon_polish_improves_a_gaussian_start_and_is_certified(problem, dp_eps):
    prob = problem(objective="epsilon", max_distortion=CAP)
    start = family_within("gaussian", prob.support, prob.cost, CAP)
    e0 = prob.eps_of(start)
    out = polish(prob, start, e0, cap=CAP, knots=(4, 8), max_evals=60)
    assert out.improved and out.value < e0 - 1e-3
    assert float(prob.cost @ out.pmf) <= CAP * (1 + 1e-12)
    assert out.pmf.min() >= 0 and out.pmf.sum() == pytest.approx(1.0, abs=1e-12)
    # certified by another route: dp-accounting's pessimistic PLD (each loss rounded up by at most H)
    assert _ring_eps(dp_eps, out.pmf) <= out.value + K * H
    assert _ring_eps(dp_eps, out.pmf) < e0 - 1e-3 + K * H


def test_polish_never_returns_a_worse_point(problem):
    prob = problem(objective="epsilon", max_distortion=CAP)
    start = family_within("laplace", prob.support, prob.cost, CAP)
    claimed = prob.eps_of(start) - 0.5  # nothing the polish finds can beat this
    out = polish(prob, start, claimed, cap=CAP, knots=(4,), max_evals=20)
    assert not out.improved and out.value == claimed and np.array_equal(out.pmf, start)


def test_distortion_polish_is_private_and_no_worse(problem, dp_eps):
    prob = problem(eps=EPS)
    lap, _ = calibrate_family("laplace", prob.support, K, EPS, DELTA)
    v0 = prob.distortion(lap)
    out = polish(prob, lap, v0, eps=EPS, knots=(4,), max_evals=40)
    assert out.value <= v0
    assert float(prob.cost @ out.pmf) == pytest.approx(out.value, rel=1e-12)
    assert _ring_eps(dp_eps, out.pmf) <= EPS + K * H
    if out.improved:
        assert out.value < v0


def test_polish_needs_one_objective(problem):
    prob = problem(eps=EPS)
    f = np.full(N + 1, 1.0 / (N + 1))
    with pytest.raises(ValueError, match="exactly one of cap"):
        polish(prob, f, 1.0, cap=CAP, eps=EPS)
    with pytest.raises(ValueError, match="exactly one of cap"):
        polish(prob, f, 1.0)


def test_least_eps_search_is_polished_and_no_worse(monkeypatch, dp_eps):
    design = _design(objective="epsilon", max_distortion=CAP)
    monkeypatch.setattr(composed_solve, "POLISH", False)
    plain = design.solve()
    monkeypatch.setattr(composed_solve, "POLISH", True)
    res = design.solve()
    assert "polish: K = 4" in res.message
    assert res.eps_objective <= plain.eps_objective
    assert res.distortion <= CAP * (1 + 1e-9) and res.verify()
    assert _ring_eps(dp_eps, np.asarray(res.pmf, dtype=float).ravel()) <= res.eps_objective + K * H
