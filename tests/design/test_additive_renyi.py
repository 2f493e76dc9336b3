"""rdp/zcdp designs of the additive release on Z (optnoise.design.additive_renyi), by independent routes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.design.additive_renyi import divergence_pairs
from optnoise.privacy.renyi import achieved_rho_pairs, renyi_divergence


@pytest.fixture(scope="module")
def zcdp_count():
    return NoiseDesign(
        release="additive", neighborhood=Neighborhood.bd(1), privacy="zcdp", rho=0.5, metric="mse"
    ).solve()


def _brute_divergence(res, shift: int, alpha: float, periods: int = 400) -> float:
    """D_alpha(f || f(. + shift)) by a plain sum over an explicit range of outputs far into both tails."""
    L, P = res.L, res.design.period
    x = np.arange(-L - periods * P, L + periods * P + 1)
    f, g = res.pmf_at(x), res.pmf_at(x + shift)
    keep = (f > 0) & (g > 0)  # masses below float range in the far tail: both 0 together
    return float(renyi_divergence(f[keep], g[keep], alpha))


def test_zcdp_meets_rho_on_all_of_z_and_beats_the_discrete_gaussian(zcdp_count):
    res = zcdp_count
    assert res.status in ("optimal", "feasible")
    assert res.achieved["zcdp"] <= 0.5 * (1 + 1e-9)
    # the discrete Gaussian with sigma^2 = 1 / (2 rho) = 1 meets 0.5-zCDP; its variance (theta-function sum)
    x = np.arange(-60, 61)
    w = np.exp(-(x**2) / 2.0)
    var = float(w @ x**2 / w.sum())
    assert res.distortion <= var
    # the bound is proven (weak duality) and below the value: the status never overclaims
    assert res.bound is None or res.bound <= res.distortion + 1e-12
    if res.status == "optimal":
        assert res.gap <= 1e-6


def test_lumped_tail_divergences_equal_plain_sums(zcdp_count):
    res = zcdp_count
    pairs = divergence_pairs(res.design, res.pmf, res.L)  # the model's terms: finite masses times a^k / (1 - a)
    for i, mu in enumerate(res.design.shifts):
        for alpha in (1.0, 1.5, 2.0, 8.0):
            lumped = float(renyi_divergence(*pairs[i], alpha))
            assert lumped == pytest.approx(_brute_divergence(res, int(mu), alpha), rel=1e-9, abs=1e-15)
    # the same pairs give the certified rho the result reports (built from the extended PMF, another route)
    assert achieved_rho_pairs(pairs)[0] == pytest.approx(res.achieved["zcdp"], rel=1e-12)


def test_achieved_rho_pairs_of_the_discrete_gaussian_is_one_over_two_sigma2():
    # Canonne, Kamath and Steinke 2020: the discrete Gaussian is 1/(2 sigma^2)-zCDP for shift 1, nearly tight
    for sigma2 in (1.0, 4.0):
        half = int(30 * math.sqrt(sigma2))  # masses down to e^-450: far inside float64, far below any term
        x = np.arange(-half, half + 1)
        lw = -(x**2) / (2 * sigma2)
        f = np.exp(lw - np.logaddexp.reduce(lw))
        rho, _ = achieved_rho_pairs([(f[:-1], f[1:]), (f[1:], f[:-1])])
        # an upper bound on the sup (chords between orders), within RENYI_RTOL = 1e-5 of it (measured 1.1e-7)
        assert 0.5 / sigma2 * (1 - 1e-6) <= rho <= 0.5 / sigma2 * (1 + 1e-5)


def test_zcdp_converges_to_the_modulo_design_with_circular_costs(zcdp_count):
    ring = NoiseDesign(n=30, neighborhood=Neighborhood.bd(1), privacy="zcdp", rho=0.5, metric="circular-mse").solve()
    assert ring.status == "optimal"
    # measured 9e-6 relative (the families differ: a ring of 31 outputs, a staircase tail beyond L = 5 on Z)
    assert zcdp_count.distortion == pytest.approx(ring.distortion, rel=1e-4)
    # the proven bound of the additive family, and the gap it leaves (measured 4.5e-7: "optimal")
    assert zcdp_count.bound is not None and zcdp_count.gap < 1e-5


def test_rdp_meets_exactly_the_listed_orders():
    # support given (the reference Gaussian's L0 = 14): growing it takes minutes here, and is tested apart
    res = NoiseDesign(
        release="additive", neighborhood=Neighborhood.bd(2), privacy="rdp", rdp=[(2, 0.5), (8, 2.0)], metric="mae",
        support=14,
    ).solve()  # fmt: skip
    assert res.status in ("optimal", "feasible")
    for (alpha, eps), key in zip([(2, 0.5), (8, 2.0)], ("rdp@2", "rdp@8"), strict=True):
        worst = max(_brute_divergence(res, int(mu), alpha) for mu in res.design.shifts)
        assert worst == pytest.approx(res.achieved[key], rel=1e-9)
        assert worst <= eps * (1 + 1e-5)
    # the discrete Gaussian calibrated to the same orders: sigma^2 = max alpha D^2 / (2 eps_alpha) = 8
    x = np.arange(-200, 201)
    w = np.exp(-(x**2) / 16.0)
    assert res.distortion <= float(w @ np.abs(x) / w.sum())


def test_bad_renyi_input_is_refused_by_name():
    nb = Neighborhood.bd(1)
    with pytest.raises(ValueError, match="rho is required"):
        NoiseDesign(release="additive", neighborhood=nb, privacy="zcdp", metric="mse")
    with pytest.raises(ValueError, match="eps/delta"):
        NoiseDesign(release="additive", neighborhood=nb, privacy="zcdp", rho=0.5, eps=1.0, metric="mse")
    with pytest.raises(ValueError, match="rho"):
        NoiseDesign(release="additive", neighborhood=nb, privacy="zcdp", rho=-1.0, metric="mse")
    with pytest.raises(ValueError, match="apply to privacy='zcdp'"):
        NoiseDesign(release="additive", neighborhood=nb, privacy="rdp", rdp=[(2, 1.0)], rho=0.5, metric="mse")
    with pytest.raises(ValueError, match="solver"):
        NoiseDesign(release="additive", neighborhood=nb, privacy="zcdp", rho=0.5, metric="mse").solve(solver="highs")


def test_baselines_are_calibrated_to_the_same_renyi_budget(zcdp_count):
    base = zcdp_count.baselines
    # the discrete Gaussian meets 0.5-zCDP at sigma^2 = 1 (nearly tight): its calibrated MSE is that variance
    x = np.arange(-60, 61)
    w = np.exp(-(x**2) / 2.0)
    assert base["discrete_gaussian"] == pytest.approx(float(w @ x**2 / w.sum()), rel=1e-5)
    assert zcdp_count.distortion <= base["discrete_gaussian"] <= base["discrete_laplace"]
