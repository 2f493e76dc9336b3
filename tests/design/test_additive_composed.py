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
    """At k = 4 the best certified count noise is the calibrated discrete Laplace (measured: the search finds
    nothing cheaper); its privacy loss for a shift of 1 is +-c (c = -log alpha) with probabilities
    1/(1+alpha), alpha/(1+alpha), so the k-fold delta(eps) is a binomial sum: exact, and below what optnoise's
    pessimistic accounting reports."""
    res = count4
    assert res.status in ("optimal", "feasible") and res.verify()
    assert "structured path" in res.message and "; search: " in res.message  # the modulo search ran on Z
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
    assert set(base) == {"discrete_laplace", "discrete_gaussian", "convolution"}
    assert count4.distortion <= min(base.values()) * (1 + 1e-9)
    # the values the solve kept are those the baseline calibration finds on its own (padded windows, their
    # ends charged as infinite loss, against the design's lumped tails)
    again = additive_baselines(count4.design)
    assert again == pytest.approx({k: base[k] for k in again}, rel=1e-9)
    # the calibrated discrete Laplace alpha = e^(-1/t) has variance 2 alpha / (1 - alpha)^2: k = 4 at (1, 1e-6)
    # needs a per-release scale near k / eps (basic composition) or below
    assert base["discrete_laplace"] <= 2 * np.exp(-0.25) / (1 - np.exp(-0.25)) ** 2 * (1 + 1e-9)
    # the bound is proven and below
    assert count4.bound is not None and count4.bound <= count4.distortion


def test_tradeoff_bound_of_the_release_wrapped_onto_a_ring(count4):
    """The bound is the modulo trade-off bound of the release wrapped mod N (a post-processing): valid for every
    noise on Z, and far above one release's LP (the old bound, about 1/25 of the distortion here)."""
    assert "lower bound by tradeoff" in count4.message
    assert 0.85 * count4.distortion <= count4.bound <= count4.distortion  # measured 29.00 against 31.83
    # an independent check of its validity: the (eps/k, delta/k) discrete Laplace is k-fold (eps, delta)-DP by
    # basic composition, so no bound may exceed its closed-form MSE 2 a / (1 - a)^2, a = e^(-eps/k)
    a = math.exp(-1.0 / 4)
    assert count4.bound <= 2 * a / (1 - a) ** 2


def test_composed_delta_by_dp_accounting_from_the_pmf(count4):
    """Independent of the search and of optnoise's accounting: dp-accounting's pessimistic PLD of the returned
    PMF (a window holding all but < 1e-30 of the mass, the rest charged as an infinite loss), both orders.

    Its losses are rounded *up* to a grid h, which costs about ``P(all k losses +c) k h`` of delta (4e-5 at
    h = 1e-4 for this calibrated-tight Laplace, whose losses are +-c): so a fine grid, h = 1e-10 (the PMF has
    two finite losses, so dp-accounting's sparse PLD stays small); the excess is then below 1e-5 relative."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    W = 400
    x = np.arange(-W, W + 1)
    f = count4.pmf_at(x)
    assert abs(1.0 - float(f.sum())) < 1e-12
    # the PMF is a discrete Laplace (the binomial test checks its ratios to 1e-9): its masses rebuilt from its
    # ratio, so that every loss is exactly +-c (float noise in the losses would make the sparse PLD explode)
    alpha = float(f[W + 1] / f[W])
    f = (1 - alpha) / (1 + alpha) * alpha ** np.abs(x)
    # the PMF is within 1e-8 in total variation of that Laplace (measured 2.8e-9: the family member's far tail);
    # what dp-accounting verifies below is that Laplace, the returned PMF up to this TV
    assert float(np.abs(f - count4.pmf_at(x)).sum()) < 1e-8
    outside = 2 * alpha ** (W + 1) / (1 + alpha)
    assert outside < 1e-30
    for mu in (1, -1):
        p = {int(o): math.log(v) for o, v in zip(x, f, strict=True) if v > 0}
        q = {int(o - mu): math.log(v) for o, v in zip(x, f, strict=True) if v > 0}
        one = pld.from_two_probability_mass_functions(
            p, q, pessimistic_estimate=True, symmetric=False, value_discretization_interval=1e-10
        )
        delta = one.self_compose(4).get_delta_for_epsilon(1.0) + 4 * outside
        assert delta <= 1e-6 * (1 + 1e-5)


def test_search_pairs_are_the_lumped_pairs_on_z():
    """The search's pair map (the surrogate's input) is the exact lumped pairs of the noise on all of Z."""
    from optnoise.design.additive_composed import AdditiveProblem
    from optnoise.design.additive_eval import extended, lumped_pairs

    d = NoiseDesign(
        release="additive",
        neighborhood=Neighborhood.shifts([1, 3, -2], directed=True),
        privacy="composed",
        compositions=2,
        eps=1.0,
        delta=1e-6,
        metric="mae",
    )
    L = 12
    prob = AdditiveProblem(d, None, None, L, None)
    u = np.random.default_rng(0).random(2 * L + 1)
    u /= u.sum()
    F, _ = extended(d, prob.to_pmf(u), L)
    want = lumped_pairs(d, F, L)
    P, Q = prob.pairs.forward(u, np.arange(prob.pairs.count))
    for j, (p, q) in enumerate(want):
        # the same multiset of (P, Q) entries (the map pads with zeros in both)
        got = sorted(zip(P[j][P[j] + Q[j] > 0], Q[j][P[j] + Q[j] > 0], strict=True))
        assert np.allclose(got, sorted(zip(p[p + q > 0], q[p + q > 0], strict=True)), rtol=1e-12, atol=0)
    # and the search's total mass is 1 with the tails: u holds each tail series
    assert prob.distortion(u) == pytest.approx(float(prob.cost @ u), rel=1e-12)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(compositions=4, delta=1e-6, objective="epsilon", max_distortion=0.0), "max_distortion"),
        (dict(compositions=4, delta=1e-6, objective="epsilon"), "max_distortion is required"),
        (dict(compositions=4, eps=1.0, delta=1e-6, objective="epsilon", max_distortion=9.0), "eps must be left unset"),
        (dict(compositions=4, eps=1.0, delta=0.0), "delta must be > 0"),
        (dict(eps=1.0, delta=1e-6), "compositions is required"),
    ],
)
def test_bad_input(kw, match):
    with pytest.raises(ValueError, match=match):
        NoiseDesign(release="additive", neighborhood=Neighborhood.bd(1), privacy="composed", **kw)
