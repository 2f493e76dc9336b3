"""Privacy-profile designs: every listed pair holds (recomputed from the PMF) and they never cost more than
the baseline they dominate."""

from __future__ import annotations

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.privacy.curves import delta_dp
from optnoise.privacy.noise_families import discrete_gaussian_noise, geometric_noise
from optnoise.privacy.profile import PROFILE_ATOL, PROFILE_RTOL, check_profile, discrete_gaussian_profile, profile_of

NB = Neighborhood.bd(1)


def _solve(profile, n=30, metric="circular-mse", nb=NB):
    return NoiseDesign(n=n, neighborhood=nb, metric=metric, privacy="profile", profile=profile).solve()


def test_profile_pairs_hold_and_match_dp_designs():
    pairs = [(0.5, 0.05), (1.0, 1e-3), (2.0, 1e-6)]
    res = _solve(pairs)
    assert res.status == "optimal"
    got = delta_dp(res.pmf, res.design.shifts, np.array([e for e, _ in pairs]))
    for (_, d), g in zip(pairs, got, strict=True):
        assert g <= d * (1 + PROFILE_RTOL) + PROFILE_ATOL
    # one pair alone is the "dp" design; more pairs can only cost more
    for e, d in pairs:
        single = NoiseDesign(n=30, eps=e, delta=d, neighborhood=NB, metric="circular-mse", privacy="dp").solve()
        assert res.distortion >= single.distortion * (1 - 1e-9)
    one = _solve([(1.0, 1e-3)])
    dp = NoiseDesign(n=30, eps=1.0, delta=1e-3, neighborhood=NB, metric="circular-mse", privacy="dp").solve()
    assert one.distortion == pytest.approx(dp.distortion, rel=1e-9)


@pytest.mark.parametrize("sigma", [1.5, 3.0])
def test_dominating_the_discrete_gaussian_never_costs_more(sigma):
    n = 40
    grid = np.linspace(0.0, 2.5, 11)
    prof = discrete_gaussian_profile(sigma, grid)
    res = _solve(prof, n=n)
    assert res.status == "optimal", res.message
    wrapped = discrete_gaussian_noise(sigma**2).wrapped(n)
    # the wrapped Gaussian is a post-processing of the Gaussian on Z, hence feasible
    kept = np.array([e for e, _ in prof])  # points with delta >= 1e-9 (the helper's min_delta)
    assert kept.size >= 8
    assert np.all(delta_dp(wrapped, NB, kept) <= np.array([d for _, d in prof]) + 1e-15)
    dg_cost = float(np.sum(res.design.cost * wrapped))
    assert res.distortion <= dg_cost * (1 + 1e-8)
    assert res.achieved["profile"] <= PROFILE_RTOL + PROFILE_ATOL / min(d for _, d in prof)


def test_sparse_profile_beats_the_baseline():
    """Dominating the discrete Gaussian at two eps only leaves room: strictly cheaper than the Gaussian."""
    prof = discrete_gaussian_profile(2.0, [0.5, 1.5])
    res = _solve(prof, n=40)
    base = float(np.sum(res.design.cost * discrete_gaussian_noise(4.0).wrapped(40)))
    assert res.status == "optimal"
    assert res.distortion < 0.8 * base


def test_geometric_is_optimal_for_its_pure_profile():
    """Pure eps-DP (delta = 0 at eps): the geometric mechanism's own profile admits almost nothing cheaper
    (only the wrap-around on {0..n}: 5e-5 relative at n = 40)."""
    noise = geometric_noise(np.exp(-0.7))
    res = _solve(profile_of(noise, [0.35, 0.7], min_delta=0.0), n=40)
    base = float(np.sum(res.design.cost * noise.wrapped(40)))
    assert 0.9995 * base <= res.distortion <= base


def test_profile_of_pmf_and_mechanism_agree():
    f = geometric_noise(0.5).wrapped(20)
    a = profile_of(f, [0.2, 0.6], shifts=NB, min_delta=0.0)
    b = profile_of(geometric_noise(0.5).mechanism(20), [0.2, 0.6], min_delta=0.0)
    np.testing.assert_allclose([d for _, d in a], [d for _, d in b], atol=1e-15)
    # on Z the geometric is pure ln 2-DP
    assert profile_of(geometric_noise(0.5), [np.log(2)], min_delta=0.0)[0][1] == pytest.approx(0.0, abs=1e-15)
    assert profile_of(geometric_noise(0.5), [np.log(2)]) == []  # below the default min_delta


def test_spec_round_trip_and_repr():
    d = NoiseDesign(n=10, neighborhood=NB, metric="mse", privacy="profile", profile=[(1.0, 0.1), (0.5, 0.2)])
    assert d.budget.profile == ((0.5, 0.2), (1.0, 0.1))  # sorted by eps
    again = NoiseDesign.from_spec(d.spec())
    assert again.spec() == d.spec() and again.key() == d.key()
    assert "profile=" in repr(d) and d.eps is None and d.delta is None


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"profile": None}, "profile is required"),
        ({"profile": [(1.0, 0.1, 3)]}, "pairs"),
        ({"profile": [(1.0, 0.1), (1.0, 0.2)]}, "each eps once"),
        ({"profile": [(-1.0, 0.1)]}, ">= 0"),
        # eps in a profile is bounded like any LP eps: (1e300, 0) was an OverflowError in math.exp
        ({"profile": [(1e300, 0.0)]}, r"profile eps must be <= 34.5"),
        ({"profile": [(0.5, 0.1), (35.0, 0.0)]}, r"profile eps must be <= 34.5"),
        ({"profile": [(1.0, 1.5)]}, "delta"),
        ({"profile": [(1.0, 0.1)], "eps": 1.0}, "eps/delta"),
        ({"profile": [(1.0, 0.1)], "rho": 1.0}, "does not apply"),
    ],
)
def test_bad_profiles(kwargs, match):
    with pytest.raises(ValueError, match=match):
        NoiseDesign(n=10, neighborhood=NB, privacy="profile", **kwargs)


def test_budget_fields_need_their_notion():
    with pytest.raises(ValueError, match="profile applies only"):
        NoiseDesign(n=10, eps=1.0, neighborhood=NB, privacy="dp", profile=[(1.0, 0.1)])
    with pytest.raises(ValueError, match="pairs"):
        check_profile([1, 2, 3])


def test_profile_designs_are_not_certified():
    res = _solve([(1.0, 1e-2)], n=10)
    with pytest.raises(ValueError, match="certification covers"):
        res.certify()


def test_profile_eps_is_bounded_like_design_eps():
    from optnoise.engine.validation import MAX_EPS

    assert check_profile([(MAX_EPS, 0.0), (0.0, 0.5)]) == ((0.0, 0.5), (MAX_EPS, 0.0))
    with pytest.raises(ValueError, match="profile eps must be <= 34.5"):
        check_profile([(1e300, 0.0)])
