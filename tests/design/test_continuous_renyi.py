"""release='continuous' with privacy='rdp'/'zcdp': the mixture argument, both bounds, the result's methods."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optnoise.design import continuous_renyi
from optnoise.design.noise import NoiseDesign
from optnoise.privacy.renyi import renyi_divergence

RHO = 0.5  # sigma = 1 for the Gaussian baseline at sensitivity 1


def zcdp(**kw):
    args = {"release": "continuous", "sensitivity": 1.0, "privacy": "zcdp", "rho": RHO, "metric": "mse"}
    args.update(kw)
    return NoiseDesign(**args)


def fine_divergence(f: np.ndarray, sub: int, shift: int, alpha: float) -> float:
    """``D_alpha`` of the piecewise-constant density with cell masses ``f`` and its shift by ``shift / sub`` cells.

    Computed on ``sub`` equal sub-cells per cell, where both densities are constant: exact for the density
    (no appeal to the mixture formula). ``f`` must vanish (to rounding) near both ends of its window.
    """
    g = np.repeat(f / sub, sub)
    p, q = g[shift:], g[:-shift]  # the output sub-cell i: density p at i, the shifted one at i - shift
    return float(renyi_divergence(p, q, alpha))


def test_fractional_shift_divergence_is_the_mixture_of_integer_shifts():
    # a two-sided geometric on cells (strictly positive, negligible beyond the window)
    k = np.arange(-300, 301)
    f = 0.6 ** np.abs(k)
    f /= f.sum()
    sub = 8
    for alpha in (1.5, 2.0, 7.0):
        E = [math.exp((alpha - 1) * fine_divergence(f, sub, j * sub, alpha)) for j in (1, 2, 3)]
        for j, r in ((1, 3), (2, 5), (1, 1), (2, 7)):
            theta = r / sub
            got = math.exp((alpha - 1) * fine_divergence(f, sub, j * sub + r, alpha))
            assert got == pytest.approx((1 - theta) * E[j - 1] + theta * E[j], rel=1e-10)
            assert got <= max(E[j - 1], E[j]) * (1 + 1e-12)


def test_gaussian_baseline_closed_form():
    d = zcdp(resolution=0.5)
    assert continuous_renyi.gaussian_baseline(d) == {"gaussian": 1.0}
    r = zcdp(resolution=0.5, metric="mae", privacy="rdp", rho=None, rdp=[(2.0, 0.5), (4.0, 1.0)])
    assert continuous_renyi.gaussian_baseline(r)["gaussian"] == pytest.approx(math.sqrt(2 * 2.0 / math.pi))


@pytest.fixture(scope="module")
def solved_dp():
    return NoiseDesign(release="continuous", sensitivity=1.0, resolution=0.5, eps=1.0, delta=0.1, metric="mae").solve()


@pytest.mark.filterwarnings("ignore:.*infinite privacy loss")
def test_pld_dominates_integer_and_fractional_shifts(solved_dp):
    res = solved_dp
    R = res.upper.L + 200
    f = res.pmf_at(np.arange(-R, R + 1))
    sub = 4
    g = np.repeat(f / sub, sub)
    once = res.compose(1)
    for eps in (0.0, 0.5, 1.0):
        bound = once.delta(eps)
        for s in range(1, res.m * sub + 1):  # every shift up to Delta in quarter cells, both orders
            for p, q in ((g[s:], g[:-s]), (g[:-s], g[s:])):
                assert float(np.clip(p - math.exp(eps) * q, 0, None).sum()) <= bound + 1e-9
    assert once.delta(1.0) <= 0.1 * (1 + 1e-6)
    assert res.compose(4).epsilon(0.1) > res.compose(1).epsilon(0.1)
    assert res.pld() is not None


def test_certify_and_opendp_refuse_naming_the_grid_release(solved_dp):
    for method in (solved_dp.certify, solved_dp.to_opendp):
        with pytest.raises(ValueError, match=r"release='grid'.*resolution=0\.5"):
            method()


def test_to_grid_is_the_same_integer_design(solved_dp):
    grid = solved_dp.to_grid()
    assert grid.release == "grid" and grid.resolution == solved_dp.resolution
    # the grid's cost (rounding included) is the cell average the continuous upper bound charges
    assert grid.distortion == pytest.approx(solved_dp.distortion, rel=1e-6)


def test_plot_draws_density_and_profile(solved_dp):
    fig = solved_dp.plot()
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="baseline"):
        solved_dp.plot(baseline=object())


@pytest.fixture(scope="module")
def solved_zcdp():
    return zcdp(resolution=0.5).solve()


def test_zcdp_upper_bound_meets_rho_at_fractional_shifts(solved_zcdp):
    res = solved_zcdp
    assert res.status in ("optimal", "feasible") and res.verify()
    R = res.upper.L + 40 * res.m  # the staircase tails beyond hold negligible mass
    f = res.pmf_at(np.arange(-R, R + 1))
    sub = 4
    for alpha in (1.5, 2.0, 5.0):
        for s in range(1, res.m * sub + 1):  # every shift up to Delta in quarter cells
            assert fine_divergence(f, sub, s, alpha) <= RHO * alpha * (1 + 1e-5)


def test_zcdp_bracket_contains_the_gaussian(solved_zcdp):
    res = solved_zcdp
    # N(0, 1) is 0.5-zCDP at sensitivity 1: a density meeting the guarantee, so never below the lower bound
    assert res.baselines == {"gaussian": 1.0}
    assert res.bound is not None and 0.0 < res.bound <= 1.0 <= res.distortion + 0.02
    assert res.bound <= res.distortion
    assert res.gap == pytest.approx((res.distortion - res.bound) / max(1.0, res.distortion))
    assert res.status == "feasible"  # the converted-profile bound is loose: optimal would need a proof


def test_conversion_is_above_the_gaussian_profile():
    # the exact hockey stick of N(0,1) vs N(1,1) (0.5-zCDP) must never exceed the converted profile
    from scipy.stats import norm

    for eps, delta in continuous_renyi.converted_profile(zcdp(resolution=0.5)):
        exact = norm.cdf(0.5 - eps) - math.exp(eps) * norm.cdf(-0.5 - eps)
        assert exact <= delta


def test_renyi_budget_validation():
    with pytest.raises(ValueError, match="rho"):
        zcdp(rho=None)
    with pytest.raises(ValueError, match="rho"):
        zcdp(rho=-1.0)
    with pytest.raises(ValueError, match="eps"):
        zcdp(eps=1.0)
    with pytest.raises(ValueError, match="rdp"):
        zcdp(privacy="rdp", rho=None)
    d = zcdp(resolution=0.5)
    assert d.spec()["rho"] == RHO and "rho=0.5" in repr(d)
