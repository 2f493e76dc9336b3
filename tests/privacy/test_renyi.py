"""Renyi-DP and zCDP designs: divergences recomputed independently (float64 log-sum-exp, mpmath), the
wrapped discrete Gaussian is feasible so the optimum costs at most as much, the grid theorem."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.engine.tolerance import OPTIMAL_GAP
from optnoise.privacy.renyi import (
    RENYI_RTOL,
    achieved_rho,
    grid_margin,
    reference_log_pmf,
    renyi_curve,
    renyi_divergence,
    zcdp_alphas,
)

NB = Neighborhood.bd(1)


def _mp_renyi(p, q, alpha) -> float:
    """D_alpha in 50-digit arithmetic, straight from the definition."""
    mpmath.mp.dps = 50
    if alpha == 1:
        return float(
            mpmath.fsum(
                mpmath.mpf(a) * mpmath.log(mpmath.mpf(a) / mpmath.mpf(b)) for a, b in zip(p, q, strict=True) if a > 0
            )
        )
    s = mpmath.fsum(mpmath.mpf(a) ** alpha * mpmath.mpf(b) ** (1 - alpha) for a, b in zip(p, q, strict=True) if a > 0)
    return float(mpmath.log(s) / (alpha - 1))


def _wrapped_dg(n: int, rho: float) -> np.ndarray:
    return np.exp(reference_log_pmf(n, 1, 1.0 / (2.0 * rho)))


@pytest.fixture(scope="module")
def zcdp_small():
    return NoiseDesign(n=12, neighborhood=NB, metric="circular-mse", privacy="zcdp", rho=0.3).solve()


def test_renyi_divergence_against_mpmath():
    rng = np.random.default_rng(0)
    p, q = rng.random(7) + 0.01, rng.random(7) + 0.01
    p, q = p / p.sum(), q / q.sum()
    for a in (1.0, 1.001, 1.5, 2.0, 7.3, 40.0):
        assert renyi_divergence(p, q, a) == pytest.approx(_mp_renyi(p, q, a), rel=1e-12)
    assert renyi_divergence(p, q, np.inf) == pytest.approx(float(np.max(np.log(p / q))), rel=1e-15)
    q[0] = 0.0
    assert renyi_divergence(p, q / q.sum(), 2.0) == math.inf


def test_wrapped_discrete_gaussian_meets_zcdp_exactly_like_theory():
    """N_Z(0, 1/(2 rho)) is rho-zCDP, with equality at integer orders on Z; wrapping only lowers it."""
    rho = 0.3
    f = _wrapped_dg(40, rho)
    for a in (2.0, 3.0, 5.0):
        assert renyi_curve(f, NB, a) == pytest.approx(rho * a, rel=1e-9)
    assert renyi_curve(f, NB, 2.5) < rho * 2.5
    rho_hat, _ = achieved_rho(f, NB)
    assert rho <= rho_hat <= rho * (1 + 1e-4)


def test_grid_margin_closed_form():
    # two-point grid {1, 2}: h(a) = (2 - a) / a on (1, 2], sup 1 at a -> 1
    assert grid_margin([2.0]) == pytest.approx(1.0)
    # geometric grid in alpha - 1 with ratio r: margin about (r - 1)^2 / (4 r), at most a_1 - 1 below a_1
    al = zcdp_alphas(50.0, gap=1e-4, ratio=1.1)
    assert 0.95 * 0.1**2 / 4.4 <= grid_margin(al) <= 0.1**2 / 4
    dense = np.linspace(1.0, 3.0, 2001)[1:]
    a = np.linspace(1.2, 1.4, 100001)[1:-1]
    brute = np.max((a - 1.2) * (1.4 - a) / (a * (a - 1)))
    assert grid_margin([1.2, 1.4]) >= brute - 1e-12
    assert grid_margin(dense) < 1e-3


def test_zcdp_design_recomputed_and_cheaper_than_the_gaussian(zcdp_small):
    res = zcdp_small
    rho = 0.3
    # proven: the certified bound is within OPTIMAL_GAP of the cost (optnoise.privacy.renyi_solve)
    assert res.status == "optimal", res.message
    assert res.bound is not None and res.bound <= res.distortion
    assert res.gap is not None and res.gap <= OPTIMAL_GAP
    f = res.pmf
    # every grid order, recomputed by log-sum-exp and, for a few, in mpmath
    orders = np.array(res.design.budget.alphas)
    got = renyi_curve(f, NB, orders)
    assert np.all(got <= rho * orders * (1 + RENYI_RTOL))
    g_up, g_down = np.roll(f, -1), np.roll(f, 1)
    for a in (1.0, 2.0, 3.7):
        mp = max(_mp_renyi(f, g_up, a), _mp_renyi(f, g_down, a))
        assert mp <= rho * a * (1 + RENYI_RTOL)
        assert mp == pytest.approx(renyi_curve(f, NB, a), rel=1e-9)
    # the full guarantee: the grid theorem's bound, and the fine-grid achieved rho reported
    m = grid_margin(orders)
    assert res.achieved["zcdp"] <= rho * (1 + m) * (1 + RENYI_RTOL)
    fine = np.concatenate([[1.0], 1 + np.geomspace(1e-5, 200, 3000)])
    assert np.max(renyi_curve(f, NB, fine) / fine) <= res.achieved["zcdp"] * (1 + 1e-9)
    # the wrapped Gaussian is feasible, so the optimum costs at most as much
    dg = _wrapped_dg(12, rho)
    assert np.all(renyi_curve(dg, NB, orders) <= rho * orders * (1 + 1e-12))
    assert res.distortion <= float(np.sum(res.design.cost * dg)) * (1 + 1e-7)


def test_rdp_design_meets_listed_orders():
    rdp = [(1.0, 0.15), (2.0, 0.4), (6.0, 1.5)]
    res = NoiseDesign(n=14, neighborhood=NB, metric="circular-mse", privacy="rdp", rdp=rdp).solve()
    assert res.status == "optimal", res.message
    assert res.bound is not None and res.gap is not None and res.gap <= OPTIMAL_GAP
    for a, e in rdp:
        assert renyi_curve(res.pmf, NB, a) <= e * (1 + RENYI_RTOL)
        assert res.achieved[f"rdp@{a:g}"] == pytest.approx(renyi_curve(res.pmf, NB, a), rel=1e-12)
    # one order's budget is met by the wrapped Gaussian with sigma^2 = alpha / (2 eps); the tightest one is feasible
    sigma2 = max(a / (2 * e) for a, e in rdp)
    dg = np.exp(reference_log_pmf(14, 1, sigma2))
    assert res.distortion <= float(np.sum(res.design.cost * dg)) * (1 + 1e-7)


def test_failed_reverification_is_not_optimal(zcdp_small):
    """A PMF that breaks its budget is 'unverified', never 'optimal'."""
    from optnoise.design.result import DesignResult

    res = zcdp_small
    bad = np.roll(res.pmf, 0) * 0.0
    bad[0], bad[1] = 0.9, 0.1  # zeros elsewhere: infinite divergence
    other = DesignResult(design=res.design, status="optimal", pmf=bad, solver="test", solve_time=0.0, model_size={})
    assert other.achieved["zcdp"] == math.inf
    assert other.status == "unverified" and not other.verify()
    assert "re-verification" in other.message


def test_spec_and_validation():
    d = NoiseDesign(n=10, neighborhood=NB, metric="mse", privacy="zcdp", rho=0.2, alphas=[1, 2, 4])
    assert d.budget.alphas == (1.0, 2.0, 4.0)
    assert NoiseDesign.from_spec(d.spec()).spec() == d.spec()
    auto = NoiseDesign(n=30, neighborhood=NB, privacy="zcdp", rho=0.2)
    # the default grid reaches past the reference Gaussian's D_inf / rho
    assert max(auto.budget.alphas) >= 30 and auto.budget.alphas[0] == 1.0
    with pytest.raises(ValueError, match="rho is required"):
        NoiseDesign(n=10, neighborhood=NB, privacy="zcdp")
    with pytest.raises(ValueError, match="rdp alpha"):
        NoiseDesign(n=10, neighborhood=NB, privacy="rdp", rdp=[(0.5, 1.0)])
    with pytest.raises(ValueError, match="eps_alpha"):
        NoiseDesign(n=10, neighborhood=NB, privacy="rdp", rdp=[(2.0, 0.0)])
    with pytest.raises(ValueError, match="alphas does not apply"):
        NoiseDesign(n=10, neighborhood=NB, privacy="rdp", rdp=[(2.0, 1.0)], alphas=[2])
    with pytest.raises(ValueError, match="solver must be 'auto' or 'cvxpy'"):
        d.solve(solver="cbc")
    with pytest.raises(ValueError, match="MPS"):
        d.to_mps("/tmp/never.mps")
    with pytest.raises(ValueError, match="too large"):
        NoiseDesign(n=400, neighborhood=NB, privacy="zcdp", rho=5.0, alphas=[2]).solve()
