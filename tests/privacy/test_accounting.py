"""PLD accounting of designs: against dp-accounting from the two PMFs, KOV, and infinite privacy loss."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from optnoise import Neighborhood, NoiseDesign
from optnoise.mechanisms.composition import kov_delta, kov_epsilon
from optnoise.privacy.accounting import (
    Composition,
    InfiniteLossWarning,
    compose,
    design_pld,
    infinite_loss_mass,
    pair_pld,
    privacy_profile,
)
from optnoise.privacy.curves import delta_dp, hockey_stick
from optnoise.privacy.noise_families import discrete_gaussian_noise, geometric_noise


def _rr(eps0: float) -> np.ndarray:
    return np.array([math.exp(eps0), 1.0]) / (1.0 + math.exp(eps0))


@pytest.mark.parametrize("k", [1, 4, 25])
def test_randomized_response_matches_kov(k):
    """Binary randomized response (the pure eps0-DP optimum on {0, 1}) composes as KOV's Theorem 1 says."""
    eps0 = 0.7
    comp = compose(_rr(eps0), Neighborhood.bd(1), k)
    eps = np.array([0.0, 0.5, 1.0, 2.5, 5.0])
    np.testing.assert_allclose(comp.delta(eps), kov_delta(eps0, k, eps), atol=2e-6 * k)
    for d in (1e-3, 1e-6):
        assert comp.epsilon(d) == pytest.approx(kov_epsilon(eps0, k, d), abs=1e-4 * k + 1e-9)
        assert comp.epsilon(d) >= kov_epsilon(eps0, k, d) - 1e-12  # pessimistic


def test_randomized_response_design_is_rr_and_composes_like_kov():
    res = NoiseDesign(n=1, eps=0.9, neighborhood=Neighborhood.bd(1), metric="er", privacy="dp").solve()
    np.testing.assert_allclose(res.pmf, _rr(0.9), atol=1e-9)
    assert res.compose(10).epsilon(1e-5) == pytest.approx(kov_epsilon(0.9, 10, 1e-5), abs=1e-3)


def test_compose_matches_independent_dp_accounting_from_the_two_pmfs():
    """A symmetric design over {+1, -1}: every pair has the same curve, so our dominating pair is that pair."""
    res = NoiseDesign(n=30, eps=1.0, delta=1e-3, neighborhood=Neighborhood.bd(1), metric="circular-mse", privacy="dp")
    res = res.solve()
    f = res.pmf
    g = np.roll(f, -1)
    with np.errstate(divide="ignore"):
        lf, lg = np.log(f), np.log(g)
    upper = {i: float(lf[i]) for i in range(f.size)}
    lower = {i: float(lg[i]) for i in range(f.size)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InfiniteLossWarning)
        ours = res.compose(5)
    ref = pld_lib.from_two_probability_mass_functions(lower, upper, symmetric=False).self_compose(5)
    for eps in (1.0, 3.0, 6.0):
        # both are pessimistic discretisations with grid 1e-4: they agree to the discretisation's accuracy
        assert ours.delta(eps) == pytest.approx(ref.get_delta_for_epsilon(eps), rel=2e-3, abs=1e-6)
    for d in (1e-2, 5e-2):
        assert ours.epsilon(d) == pytest.approx(ref.get_epsilon_for_delta(d), abs=5 * 1e-4 + 1e-6)


def test_single_release_reproduces_the_exact_profile():
    """k = 1: the connect-the-dots PLD equals the exact hockey stick at grid points."""
    res = NoiseDesign(n=20, eps=0.8, delta=1e-3, neighborhood=Neighborhood.bd(2), metric="circular-mse", privacy="dp")
    res = res.solve()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InfiniteLossWarning)
        one = res.compose(1)
    grid = np.array([0.0, 0.4, 0.8, 1.2])
    np.testing.assert_allclose(one.delta(grid), delta_dp(res.pmf, res.design.shifts, grid), atol=1e-12)


def test_dominating_pair_covers_every_shift_for_asymmetric_designs():
    """Different curves per shift: the PLD's delta dominates each pair's exact hockey stick at every eps."""
    rng = np.random.default_rng(3)
    f = rng.random(9) + 0.05
    f /= f.sum()
    shifts = Neighborhood.bd(2)
    pld = design_pld(f, shifts)
    grid = np.linspace(0.0, 3.0, 31)
    worst = delta_dp(f, shifts, grid)
    got = np.asarray(pld.get_delta_for_epsilon(list(grid)))
    assert np.all(got >= worst - 1e-12)
    np.testing.assert_allclose(got, worst, atol=5e-4)  # and is tight up to the grid
    # the profile at negative eps uses H_gamma(P||Q) = 1 - gamma + gamma H_{1/gamma}(Q||P)
    g = np.roll(f, -1)
    gam = math.exp(-0.3)
    direct = float(np.sum(np.maximum(f - gam * g, 0.0)))
    assert privacy_profile(f, [1], -0.3) == pytest.approx(direct, abs=1e-14)
    assert privacy_profile(f, [1], 0.3) == pytest.approx(hockey_stick(f, g, 0.3), abs=1e-15)


def test_issue_design_with_infinite_loss():
    """Issue #15's measured case: n = 40, BD(1), eps = 1, delta = 1e-4 puts ~3.2e-5 where f(eta+1) = 0."""
    res = NoiseDesign(n=40, eps=1.0, delta=1e-4, neighborhood=Neighborhood.bd(1), metric="circular-mse", privacy="dp")
    res = res.solve()
    m = infinite_loss_mass(res.pmf, res.design.shifts)
    assert m == pytest.approx(3.2e-5, rel=0.05)
    with pytest.warns(InfiniteLossWarning, match="infinite privacy loss"):
        comp = res.compose(10)
    floor = 1 - (1 - m) ** 10  # about 3.2e-4, as the issue says
    assert comp.infinite_mass == m
    assert comp.epsilon(0.9 * floor) == math.inf
    assert math.isfinite(comp.epsilon(1.1 * floor))
    assert comp.delta(50.0) >= floor * (1 - 1e-9)
    with pytest.warns(InfiniteLossWarning):
        single = res.pld()
    assert single.get_delta_for_epsilon(30.0) == pytest.approx(m, rel=1e-9)


def test_finite_designs_do_not_warn_and_pair_pld():
    f = geometric_noise(math.exp(-0.5)).wrapped(30)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InfiniteLossWarning)
        comp = compose(f, Neighborhood.bd(1), 3)
        p = pair_pld(f, 1)
    assert isinstance(comp, Composition)
    # a geometric noise is pure 0.5-DP; three releases are 1.5-DP, and no better at delta = 0
    assert comp.epsilon(1e-12) == pytest.approx(1.5, abs=3 * 1e-4 + 1e-9)
    assert p.get_epsilon_for_delta(0.0) == pytest.approx(0.5, abs=2e-4)


def test_certified_design_composes_like_its_pmf():
    res = NoiseDesign(n=12, eps=1.0, delta=1e-3, neighborhood=Neighborhood.bd(1), metric="circular-mse", privacy="dp")
    cd = res.solve().certify()
    ours = cd.compose(4)
    ref = compose(cd.pmf_float, cd.design.shifts, 4)
    assert ours.epsilon(1e-2) == ref.epsilon(1e-2)
    assert cd.pld().get_delta_for_epsilon(1.0) == pytest.approx(float(cd.certified_delta), abs=1e-12)


def test_discrete_gaussian_pmf_composes_like_dp_accounting_closed_form():
    """The wrapped discrete Gaussian (negligible wrap) against dp-accounting's own discrete Gaussian PLD."""
    sigma = 2.0
    f = discrete_gaussian_noise(sigma**2).wrapped(60)  # tabulated to 1e-30: the far tail is 0
    with pytest.warns(InfiniteLossWarning):
        ours = compose(f, Neighborhood.bd(1), 8)
    ref = pld_lib.from_discrete_gaussian_mechanism(sigma, sensitivity=1).self_compose(8)
    assert ours.epsilon(1e-6) == pytest.approx(ref.get_epsilon_for_delta(1e-6), abs=8e-3)


def test_bad_input():
    with pytest.raises(ValueError, match="k must"):
        compose(_rr(1.0), Neighborhood.bd(1), 0)
    with pytest.raises(ValueError, match="discretization"):
        design_pld(_rr(1.0), Neighborhood.bd(1), discretization=0.0)
    comp = compose(_rr(1.0), Neighborhood.bd(1), 2)
    with pytest.raises(ValueError, match="eps"):
        comp.delta(-1.0)
    with pytest.raises(ValueError, match="delta"):
        comp.epsilon(2.0)


def test_k_is_an_int_within_the_documented_cap():
    # compose(2.0) was accepted, compose(10**12) a MemoryError and compose(2**63) an OverflowError
    from optnoise.privacy.accounting import MAX_COMPOSITIONS

    assert MAX_COMPOSITIONS == 10**6
    assert compose(_rr(1.0), Neighborhood.bd(1), np.int64(3)).k == 3
    for bad in (2.0, True, "2", None):
        with pytest.raises(ValueError, match="k must be an integer"):
            compose(_rr(1.0), Neighborhood.bd(1), bad)
    for bad in (MAX_COMPOSITIONS + 1, 10**12, 2**63):
        with pytest.raises(ValueError, match=f"k must be an integer >= 1 and <= {MAX_COMPOSITIONS}"):
            compose(_rr(1.0), Neighborhood.bd(1), bad)


def test_an_oversized_composition_is_refused_before_it_is_allocated():
    # within the cap on k, a design with a wide loss range still asked dp-accounting for tens of GB
    import time

    from optnoise.privacy.accounting import MAX_COMPOSED_GRID, _composed_grid

    f = np.array([0.9, 0.05, 0.03, 0.015, 0.005])
    pld = design_pld(f, Neighborhood.bd(2))
    assert _composed_grid(pld, 10**6) > MAX_COMPOSED_GRID
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="composed loss grid of [0-9]+ points, more than the limit"):
        compose(f, Neighborhood.bd(2), 10**6)
    assert time.perf_counter() - t0 < 20
    # the estimate is dp-accounting's own: it matches the composed PLD's grid where that is small
    small = pld.self_compose(3)
    assert _composed_grid(pld, 3) == len(small._pmf_remove._probs)


def test_the_chernoff_grid_estimate_runs_only_where_the_untruncated_grid_could_exceed_the_limit(monkeypatch):
    """Every composed search step composes a PMF: dp-accounting's Chernoff bounds (40 log-sum-exps over the
    grid) ran twice per check, once for the size guard. The guard now first bounds the grid with no truncation,
    ``k (m - 1) + 1``, which is never below dp-accounting's estimate."""
    from optnoise.privacy import accounting as acc

    f = np.array([0.9, 0.05, 0.03, 0.015, 0.005])
    pld = design_pld(f, Neighborhood.bd(2))
    for k in (2, 3, 10, 1000):
        assert acc._trivial_grid(pld, k) >= acc._composed_grid(pld, k)
    monkeypatch.setattr(acc, "_composed_grid", lambda *a: pytest.fail("the Chernoff estimate ran"))
    assert compose(f, Neighborhood.bd(2), 10).delta(1.0) > 0  # a small grid: no estimate
    monkeypatch.undo()
    with pytest.raises(ValueError, match="composed loss grid"):  # a large one: still refused
        compose(f, Neighborhood.bd(2), 10**6)


# ----------------------------------------------------------------------- memory and work of the profile


def _wide_pmf(n: int, scale: float) -> np.ndarray:
    x = np.arange(n + 1)
    f = np.exp(-np.minimum(x, n + 1 - x) / scale)
    return f / f.sum()


def test_dominating_pld_does_not_stack_one_profile_per_pair():
    """200 ordered pairs over 66,667 grid points: the old stack held 107 MB (236 MB peak); now one grid."""
    import tracemalloc

    f = _wide_pmf(200, 30.0)
    tracemalloc.start()
    try:
        pld = design_pld(f, Neighborhood.bd(100), discretization=1e-4)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40e6
    # the running maximum is the same curve as the pairwise maximum, evaluated independently
    eps = np.array([0.0, 0.5, 1.0])
    direct = np.max([[hockey_stick(f, np.roll(f, -mu), e) for e in eps] for mu in range(-100, 101) if mu], axis=0)
    got = np.array([pld.get_delta_for_epsilon(float(e)) for e in eps])
    assert np.all(got >= direct - 1e-12) and np.allclose(got, direct, atol=1e-3)


def test_profile_of_many_pairs_at_a_fine_grid_is_refused_before_allocation():
    """2000 shifts at h = 2e-6 (3.3 million points each) asked for ~53 GB; now a ValueError naming what fits."""
    import time

    f = _wide_pmf(2000, 300.0)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"discretization.*2000 ordered pairs.*a discretization of at least 6\.67e-05"):
        compose(f, Neighborhood.bd(1000), 2, discretization=2e-6)
    assert time.perf_counter() - t0 < 20
    with pytest.raises(ValueError, match="eps: the privacy profile of 2000 ordered pairs"):
        privacy_profile(f, Neighborhood.bd(1000), np.linspace(0, 1, 200_000))
