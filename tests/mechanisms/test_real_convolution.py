"""The Laplace + Gaussian convolution on the reals: density, accounting, best share (independent routes)."""

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld
from scipy import integrate

from optnoise.mechanisms.gaussian import analytic_gaussian_epsilon
from optnoise.mechanisms.real_baselines import composed_real_baselines
from optnoise.mechanisms.real_convolution import (
    LAPLACE_GAUSSIAN_DISCRETIZATION as H,
)
from optnoise.mechanisms.real_convolution import (
    best_laplace_gaussian,
    convolution_cdf,
    convolution_logpdf,
    convolution_pld,
    convolution_scales,
)


def _density(b, sigma):
    return lambda x: math.exp(float(convolution_logpdf(x, b, sigma)))


@pytest.mark.parametrize(("b", "sigma"), [(1.3, 2.1), (0.2, 3.0), (4.0, 0.5)])
def test_density_and_cdf_by_quadrature(b, sigma):
    """The closed forms against numerical integration of the density (and the density against the convolution
    integral of the Laplace and Gaussian densities)."""
    f = _density(b, sigma)
    assert integrate.quad(f, -np.inf, np.inf)[0] == pytest.approx(1.0, abs=1e-9)
    for x in (-3.0, 0.4, 2.5):
        conv = integrate.quad(
            lambda y, x=x: math.exp(-abs(y) / b) / (2 * b) * math.exp(-0.5 * ((x - y) / sigma) ** 2),
            -60.0 * b - 12.0 * sigma,
            60.0 * b + 12.0 * sigma,
            points=[0.0, x],
            limit=200,
        )[0] / (sigma * math.sqrt(2 * math.pi))
        assert f(x) == pytest.approx(conv, rel=1e-7)
    for x in (-40.0, -6.0, -0.3, 0.0, 0.7, 5.0, 40.0):
        below = integrate.quad(f, -np.inf, x, epsabs=0.0, epsrel=1e-11)[0]
        above = integrate.quad(f, x, np.inf, epsabs=0.0, epsrel=1e-11)[0]
        assert float(convolution_cdf(x, b, sigma)) == pytest.approx(below, rel=1e-8, abs=1e-300)
        assert float(convolution_cdf(x, b, sigma, upper=True)) == pytest.approx(above, rel=1e-8, abs=1e-300)


@pytest.mark.parametrize(("share", "eps"), [(0.3, 0.5), (0.7, 1.0), (0.5, 0.1)])
def test_one_release_delta_above_the_exact_hockey_stick(share, eps):
    """One release: the pessimistic PLD's delta is at least the hockey stick integrated from the density,
    and within the grid's rounding of it (shift 1 and the worst shift by symmetry and log-concavity)."""
    b, sigma = convolution_scales(2.0, share)
    f = _density(b, sigma)
    exact = integrate.quad(
        lambda x: max(f(x) - math.exp(eps) * f(x - 1.0), 0.0), -np.inf, np.inf, epsabs=1e-13, limit=200
    )[0]
    got = convolution_pld(b, sigma).get_delta_for_epsilon(eps)
    assert exact - 1e-12 <= got <= exact + 2 * H


@pytest.mark.parametrize("k", [1, 10])
def test_pure_gaussian_share_is_the_exact_composed_gaussian(k):
    """Share 0 is the Gaussian: k releases are one at sensitivity sqrt(k), exact in closed form (Balle-Wang)."""
    b, sigma = convolution_scales(25.0, 0.0)
    one = convolution_pld(b, sigma)
    got = (one.self_compose(k) if k > 1 else one).get_epsilon_for_delta(1e-6)
    exact = analytic_gaussian_epsilon(5.0, 1e-6, sensitivity=math.sqrt(k))
    assert exact <= got <= exact + 2 * k * H


@pytest.mark.parametrize("k", [1, 10])
def test_pure_laplace_share_is_dp_accountings_laplace(k):
    """Share 1 is the Laplace: between dp-accounting's optimistic and pessimistic estimates of it, within k h."""
    b, sigma = convolution_scales(25.0, 1.0)
    assert (b, sigma) == (pytest.approx(math.sqrt(12.5)), 0.0)
    one = convolution_pld(b, sigma)
    ours = (one.self_compose(k) if k > 1 else one).get_epsilon_for_delta(1e-6)

    def theirs(pessimistic):
        one = pld.from_laplace_mechanism(b, value_discretization_interval=H, pessimistic_estimate=pessimistic)
        return (one.self_compose(k) if k > 1 else one).get_epsilon_for_delta(1e-6)

    low, high = theirs(False), theirs(True)
    assert low <= ours <= high + 2 * k * H


def test_best_share_beats_both_parts_at_gilani_setting():
    """Variance 25, k = 10, delta = 1e-6: the best convolution's composed eps is below the Laplace's and the
    Gaussian's, at an interior share, and equals the accounting of its own member re-built from the share."""
    base = composed_real_baselines(compositions=10, delta=1e-6, metric="mse", max_distortion=25.0)
    conv, share = best_laplace_gaussian(compositions=10, delta=1e-6, metric="mse", max_distortion=25.0)
    assert conv == base["laplace_gaussian"]
    assert 0.2 < share < 0.9
    assert conv < base["laplace"] - 0.05 and conv < base["gaussian"] - 0.1
    b, sigma = convolution_scales(25.0, share)
    assert 2 * b * b + sigma * sigma == pytest.approx(25.0)
    assert convolution_pld(b, sigma).self_compose(10).get_epsilon_for_delta(1e-6) == pytest.approx(conv, rel=1e-12)


@pytest.mark.parametrize("metric", ["mse", "mae"])
def test_distortion_and_epsilon_objectives_agree(metric):
    """The least distortion at eps, then the least eps at (slightly above) that distortion: at most eps; the
    member found is private (its delta re-accounted) and a smaller variance at its share is not."""
    k, eps, delta = 3, 1.0, 1e-5
    cost, share = best_laplace_gaussian(compositions=k, delta=delta, metric=metric, eps=eps)
    back, _ = best_laplace_gaussian(compositions=k, delta=delta, metric=metric, max_distortion=cost * (1 + 1e-5))
    assert back <= eps + 1e-9
    assert back >= eps - 0.02  # the eps objective searches the share anew: not far below
    if metric == "mse":  # the cost is the variance
        b, sigma = convolution_scales(cost, share)
        assert convolution_pld(b, sigma).self_compose(k).get_delta_for_epsilon(eps) <= delta
        b, sigma = convolution_scales(cost * (1 - 1e-4), share)
        assert convolution_pld(b, sigma).self_compose(k).get_delta_for_epsilon(eps) > delta


def test_baselines_of_both_objectives_are_reported_and_ordered():
    """composed_real_baselines reports the convolution for both objectives, never worse than the better part by
    more than the accounting grid (share 0 and 1 are candidates)."""
    d = composed_real_baselines(compositions=2, delta=1e-6, metric="mse", eps=1.0)
    assert d["laplace_gaussian"] <= min(d["laplace"], d["gaussian"]) * (1 + 1e-3)
    e = composed_real_baselines(compositions=2, delta=1e-6, metric="mae", max_distortion=3.0)
    assert e["laplace_gaussian"] <= min(e["laplace"], e["gaussian"]) + 2 * 2 * H
    assert set(d) == set(e) == {"gaussian", "laplace", "laplace_gaussian"}


def test_no_scale_is_refused():
    with pytest.raises(ValueError, match="b > 0 or a Gaussian sigma > 0"):
        convolution_pld(0.0, 0.0)
