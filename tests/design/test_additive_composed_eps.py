"""objective="epsilon" for privacy="composed" on Z (optnoise.design.additive_composed), by independent routes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign

K, DELTA, CAP = 3, 1e-6, 25.0


@pytest.fixture(scope="module")
def least_eps():
    d = NoiseDesign(
        release="additive",
        neighborhood=Neighborhood.bd(1),
        privacy="composed",
        compositions=K,
        delta=DELTA,
        objective="epsilon",
        max_distortion=CAP,
        metric="mse",
    )
    return d.solve()


def _dp_accounting_eps(f: dict[int, float], k: int, delta: float, h: float = 1e-4) -> float:
    """dp-accounting's pessimistic eps of the k-fold release ``q + eta`` (shift 1, both orders) from masses ``f``."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    worst = 0.0
    for mu in (1, -1):
        p = {x: math.log(v) for x, v in f.items() if v > 0}
        q = {x - mu: math.log(v) for x, v in f.items() if v > 0}
        one = pld.from_two_probability_mass_functions(
            p, q, pessimistic_estimate=True, symmetric=False, value_discretization_interval=h
        )
        worst = max(worst, float(one.self_compose(k).get_epsilon_for_delta(delta)))
    return worst


def test_least_eps_is_certified_and_within_the_cap(least_eps):
    res = least_eps
    assert res.status in ("optimal", "feasible") and res.verify()
    assert "least eps" in res.message
    assert res.distortion <= CAP * (1 + 1e-9)
    eps = res.achieved["composed_eps"]
    assert res.achieved["composed"] <= DELTA * (1 + 1e-9)
    # the bound is a proven lower bound on the eps (the ring's trade-off bound), below the eps found
    assert res.bound is not None and 0.0 < res.bound <= eps
    assert res.gap == pytest.approx((eps - res.bound) / max(1.0, eps), rel=1e-9)
    # the variance written out from the masses on a wide window (tails included) is the distortion
    x = np.arange(-600, 601)
    f = res.pmf_at(x)
    assert float(f.sum()) == pytest.approx(1.0, abs=1e-12)
    assert float(f @ x**2) == pytest.approx(res.distortion, rel=1e-9)


def test_eps_by_dp_accounting_on_the_pmf(least_eps):
    """dp-accounting on the PMF written out in full (not optnoise's lumped pairs): the eps it finds at
    delta (the mass beyond the window, < 1e-40, charged as an infinite loss) is at most the eps reported."""
    res = least_eps
    W = 600
    x = np.arange(-W, W + 1)
    f = res.pmf_at(x)
    outside = 1.0 - float(f.sum())
    assert outside < 1e-40 or abs(outside) < 1e-14
    eps = _dp_accounting_eps({int(a): float(v) for a, v in zip(x, f, strict=True)}, K, DELTA * (1 - 1e-6))
    assert eps <= res.achieved["composed_eps"] * (1 + 1e-3)
    assert eps >= res.bound  # the proven bound holds for this noise too


def test_never_worse_than_discrete_laplace_or_gaussian_at_the_same_variance(least_eps):
    """The discrete Laplace of variance exactly 25 and the discrete Gaussian of parameter sigma^2 = 25 (its
    variance is below sigma^2), both accounted by dp-accounting from their masses: neither has a lower eps."""
    from optnoise.privacy.noise_families import discrete_gaussian_noise

    # discrete Laplace alpha^|x|: variance 2 alpha / (1 - alpha)^2 = 25
    alpha = (2 * CAP + 2 - math.sqrt((2 * CAP + 2) ** 2 - 4 * CAP * CAP)) / (2 * CAP)
    assert 2 * alpha / (1 - alpha) ** 2 == pytest.approx(CAP, rel=1e-12)
    x = np.arange(-400, 401)
    lap = (1 - alpha) / (1 + alpha) * alpha ** np.abs(x)
    g = discrete_gaussian_noise(CAP)
    assert float(g.pmf @ np.asarray(g.values) ** 2) <= CAP
    # the PMFs rebuilt from exact ratios keep every loss exact (as the design's own certificate test does)
    eps_lap = _dp_accounting_eps({int(a): float(v) for a, v in zip(x, lap, strict=True)}, K, DELTA)
    eps_gauss = _dp_accounting_eps({int(a): float(v) for a, v in zip(g.values, g.pmf, strict=True)}, K, DELTA)
    ours = least_eps.achieved["composed_eps"]
    assert ours <= eps_lap * (1 + 1e-4)
    assert ours <= eps_gauss
    assert least_eps.baselines["discrete_laplace"] >= ours * (1 - 1e-9)


def test_agrees_with_the_modulo_ring(least_eps):
    """The modulo release on a ring of 61 values with circular MSE (a different search, on a different
    release: wrapping can only help it) finds an eps within 1% of the one on Z."""
    ring = NoiseDesign(
        n=60,
        neighborhood=Neighborhood.bd(1),
        privacy="composed",
        compositions=K,
        delta=DELTA,
        objective="epsilon",
        max_distortion=CAP,
        metric="circular-mse",
    ).solve()
    ours = least_eps.achieved["composed_eps"]
    assert ring.eps_objective is not None
    assert ring.eps_objective * (1 - 1e-2) <= ours <= ring.eps_objective * (1 + 1e-2)
    assert ring.bound is None or ring.bound <= ours


@pytest.mark.parametrize("release", ["additive", "grid"])
def test_time_limit_before_any_candidate_is_a_status_not_an_error(release):
    """A time limit too short for the first candidate's accounting ends ``time_limit`` with no noise (it raised a
    RuntimeError, exit 70 in the CLI); the status is what the timed-out LPs report."""
    where = dict(neighborhood=Neighborhood.bd(1)) if release == "additive" else dict(sensitivity=1.0, resolution=1.0)
    d = NoiseDesign(
        release=release,
        privacy="composed",
        compositions=K,
        delta=DELTA,
        objective="epsilon",
        max_distortion=CAP,
        metric="mse",
        **where,
    )
    res = d.solve(time_limit=1e-3)
    assert res.status == "time_limit"
    assert res.pmf is None and res.distortion is None
    assert "no candidate" in res.message
