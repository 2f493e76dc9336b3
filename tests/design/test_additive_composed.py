"""privacy="composed" for the additive release (optnoise.design.additive_composed), by independent routes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.design.additive_eval import additive_baselines


@pytest.fixture(scope="module")
def count4():
    d = NoiseDesign(
        release="additive",
        neighborhood=Neighborhood.bd(1),
        privacy="composed",
        compositions=4,
        eps=1.0,
        delta=1e-6,
        metric="mse",
    )
    return d.solve()


def test_composed_guarantee_by_exact_binomial_sums(count4):
    """At k = 4 the best certified count noise is the calibrated discrete Laplace (measured); its privacy loss
    for a shift of 1 is +-c (c = -log alpha) with probabilities 1/(1+alpha), alpha/(1+alpha), so the k-fold
    delta(eps) is a binomial sum: exact, and below what optnoise's pessimistic accounting reports."""
    res = count4
    assert res.status in ("optimal", "feasible") and res.verify()
    assert res.achieved["composed"] <= 1e-6
    f = res.pmf_at(np.arange(-30, 31))
    ratios = f[1:] / f[:-1]
    alpha = float(ratios[-1])
    assert np.allclose(ratios[30:], alpha, rtol=1e-9) and np.allclose(ratios[:30], 1 / alpha, rtol=1e-9)
    c, k, eps = -math.log(alpha), 4, 1.0
    exact = 0.0
    for j in range(k + 1):  # j releases with loss +c
        s = (2 * j - k) * c
        prob = math.comb(k, j) * (1 / (1 + alpha)) ** j * (alpha / (1 + alpha)) ** (k - j)
        exact += prob * max(0.0, 1.0 - math.exp(eps - s))
    assert exact <= res.achieved["composed"] * (1 + 1e-9)
    assert exact >= res.achieved["composed"] * 0.5  # the accounting's grid costs less than a factor 2 here


def test_never_worse_than_the_baselines_calibrated_to_the_same_composition(count4):
    base = count4.baselines
    assert set(base) == {"discrete_laplace", "discrete_gaussian"}
    assert count4.distortion <= min(base.values()) * (1 + 1e-9)
    # the values the solve kept are those the baseline calibration finds on its own (padded windows, their
    # ends charged as infinite loss, against the design's lumped tails)
    again = additive_baselines(count4.design)
    assert again == pytest.approx(base, rel=1e-9)
    # the calibrated discrete Laplace alpha = e^(-1/t) has variance 2 alpha / (1 - alpha)^2: k = 4 at (1, 1e-6)
    # needs a per-release scale near k / eps (basic composition) or below
    assert base["discrete_laplace"] <= 2 * np.exp(-0.25) / (1 - np.exp(-0.25)) ** 2 * (1 + 1e-9)
    # the bound of one release's (eps, delta) LP is proven and below
    assert count4.bound is not None and count4.bound <= count4.distortion


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(compositions=4, eps=None, delta=1e-6, objective="epsilon", max_distortion=30.0), "objective"),
        (dict(compositions=4, eps=1.0, delta=0.0), "delta must be > 0"),
        (dict(eps=1.0, delta=1e-6), "compositions is required"),
    ],
)
def test_bad_input(kw, match):
    with pytest.raises(ValueError, match=match):
        NoiseDesign(release="additive", neighborhood=Neighborhood.bd(1), privacy="composed", **kw)
