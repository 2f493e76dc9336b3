"""Privacy accounting against independent routes: event enumeration, dp-accounting, definitions."""

import itertools

import numpy as np
import pytest

from optnoise import Neighborhood
from optnoise.privacy.curves import (
    adjacent_pairs,
    delta_dp,
    delta_pdp,
    delta_pdp_kadam,
    eps_for_delta,
    hockey_stick,
    mechanism_delta,
    pdp_leak,
)


def random_pmf(rng, size, zeros=0):
    p = rng.exponential(size=size)
    if zeros:
        p[rng.choice(size, zeros, replace=False)] = 0.0
    return p / p.sum()


def test_hockey_stick_equals_worst_event(rng):
    # Definition 1: delta = max over events S of P(S) - e^eps Q(S).
    for _ in range(20):
        p, q = random_pmf(rng, 6, zeros=1), random_pmf(rng, 6, zeros=1)
        for eps in (0.0, 0.3, 1.0, 2.5):
            best = max(
                p[list(S)].sum() - np.exp(eps) * q[list(S)].sum()
                for r in range(7)
                for S in itertools.combinations(range(6), r)
            )
            assert hockey_stick(p, q, eps) == pytest.approx(max(best, 0.0), abs=1e-12)


def test_hockey_stick_hand_values():
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    assert hockey_stick(p, q, 0.0) == pytest.approx(0.3)
    # only the first output contributes at eps = ln 2: 0.5 - 2 * 0.2
    assert hockey_stick(p, q, np.log(2)) == pytest.approx(0.1)
    assert hockey_stick(p, q, np.log(2.5)) == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_allclose(hockey_stick(p, q, [0.0, np.log(2)]), [0.3, 0.1])


def test_pdp_leak_counts_zero_denominator_as_leak():
    p, q = np.array([0.6, 0.4]), np.array([1.0, 0.0])
    # output 1 has Q = 0 < P: infinite privacy loss at any eps
    assert pdp_leak(p, q, 50.0) == pytest.approx(0.4)


def shifted(f, mu):
    return np.roll(f, -mu)  # g(eta) = f(eta + mu)


def test_delta_functions_match_their_definitions(rng):
    for _ in range(10):
        n = int(rng.integers(2, 9))
        f = random_pmf(rng, n + 1)
        shifts = sorted(set(int(s) for s in rng.integers(1, n + 1, size=3)))
        eps = float(rng.uniform(0.05, 2.0))
        want_dp = max(np.maximum(f - np.exp(eps) * shifted(f, m), 0).sum() for m in shifts)
        want_pdp = max(f[f > np.exp(eps) * shifted(f, m)].sum() for m in shifts)
        assert delta_dp(f, shifts, eps) == pytest.approx(want_dp, abs=1e-14)
        assert delta_pdp(f, shifts, eps) == pytest.approx(want_pdp, abs=1e-14)
        # PDP implies DP (Theorem 1), and the shared indicator is more restrictive still
        assert delta_dp(f, shifts, eps) <= delta_pdp(f, shifts, eps) + 1e-15
        assert delta_pdp(f, shifts, eps) <= delta_pdp_kadam(f, shifts, eps) + 1e-15


def test_delta_pdp_kadam_hand_case():
    # f = [0.5, 0.3, 0.2], shifts {1, 2}, eps = ln 2:
    # eta=0: 0.5 vs 2*0.3=0.6 and 2*0.2=0.4 -> leaks for mu=2 but not "weakly" for mu=1 -> (13g) fails
    f = np.array([0.5, 0.3, 0.2])
    assert delta_pdp_kadam(f, [1, 2], np.log(2)) == np.inf
    # eps = ln 1.5: eta=0: 0.5 > 0.45 and 0.5 > 0.3 -> u(0)=1, consistent;
    # eta=1: 0.3 vs 1.5*0.2=0.3 (no) and 1.5*0.5 (no); eta=2: 0.2 vs 0.75, 0.45 (no)
    assert delta_pdp_kadam(f, [1, 2], np.log(1.5)) == pytest.approx(0.5)
    assert delta_pdp(f, [1, 2], np.log(1.5)) == pytest.approx(0.5)


def test_vector_shifts_roll_each_coordinate(rng):
    f = random_pmf(rng, 9).reshape(3, 3)
    eps = 0.4
    want = np.maximum(f - np.exp(eps) * np.roll(f, (-1, -2), axis=(0, 1)), 0).sum()
    assert delta_dp(f, [(1, 2)], eps) == pytest.approx(want)


def test_neighborhood_symmetrises(rng):
    f = random_pmf(rng, 7)
    nb = Neighborhood.bd(2)
    assert delta_dp(f, nb, 0.5) == pytest.approx(delta_dp(f, [1, 2, 5, 6], 0.5))
    assert delta_dp(f, Neighborhood.bd(2, directed=True), 0.5) == pytest.approx(delta_dp(f, [1, 2], 0.5))


def test_vectorised_over_eps(rng):
    f = random_pmf(rng, 8)
    grid = np.linspace(0, 3, 13)
    for fn in (delta_dp, delta_pdp, delta_pdp_kadam):
        vec = fn(f, [1, 3], grid)
        assert vec.shape == grid.shape
        np.testing.assert_allclose(vec, [fn(f, [1, 3], e) for e in grid])
        assert np.all(np.diff(np.where(np.isfinite(vec), vec, 2.0)) <= 1e-15)  # non-increasing


@pytest.mark.parametrize("notion", ["dp", "pdp", "pdp-kadam"])
def test_eps_for_delta_is_the_smallest_eps(rng, notion):
    fn = {"dp": delta_dp, "pdp": delta_pdp, "pdp-kadam": delta_pdp_kadam}[notion]
    for _ in range(8):
        f = random_pmf(rng, 7)
        for target in (0.0, 0.05, 0.2):
            e = eps_for_delta(f, [1, 2], target, notion=notion)
            assert np.isfinite(e)
            assert fn(f, [1, 2], e) <= target + 1e-12
            if e > 1e-9:
                assert fn(f, [1, 2], e * (1 - 1e-6) - 1e-12) > target


def test_eps_for_delta_infinite_when_a_zero_mass_leaks():
    f = np.array([0.7, 0.3, 0.0])
    assert eps_for_delta(f, [1], 0.1, notion="dp") == np.inf
    assert eps_for_delta(f, [1], 0.3, notion="dp") < np.inf


def test_delta_dp_matches_dp_accounting_pld(rng):
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    for _ in range(5):
        f = random_pmf(rng, 9)
        mu = int(rng.integers(1, 9))
        g = shifted(f, mu)
        lower = {i: float(np.log(v)) for i, v in enumerate(g)}
        upper = {i: float(np.log(v)) for i, v in enumerate(f)}
        # symmetric=False keeps both orders; the default (True) would report one direction only.
        dist = pld.from_two_probability_mass_functions(
            lower, upper, pessimistic_estimate=True, value_discretization_interval=1e-5, symmetric=False
        )
        for eps in (0.1, 0.5, 1.0):
            ours = delta_dp(f, Neighborhood.shifts([mu]), eps)  # symmetric: mu and -mu
            theirs = dist.get_delta_for_epsilon(eps)
            assert theirs == pytest.approx(ours, abs=2e-4)
            assert theirs >= ours - 1e-9  # pessimistic estimate is an upper bound
            one_way = pld.from_two_probability_mass_functions(lower, upper, value_discretization_interval=1e-5)
            assert one_way.get_delta_for_epsilon(eps) == pytest.approx(hockey_stick(f, g, eps), abs=2e-4)


def test_mechanism_matrix_matches_modulo_noise(rng):
    n = 6
    f = random_pmf(rng, n + 1)
    P = np.stack([np.roll(f, q) for q in range(n + 1)])  # P[q, o] = f(o - q)
    # neighbours |q - q'| = 1 without wrap-around need only shifts +-1 mod n+1
    pairs = adjacent_pairs(n + 1)
    for eps in (0.2, 0.9):
        assert mechanism_delta(P, pairs, eps) <= delta_dp(f, [1, n], eps) + 1e-15
        wrap = np.concatenate([pairs, [[0, n], [n, 0]]])
        assert mechanism_delta(P, wrap, eps) == pytest.approx(delta_dp(f, [1, n], eps))
        assert mechanism_delta(P, wrap, eps, notion="pdp") == pytest.approx(delta_pdp(f, [1, n], eps))


def test_adjacent_pairs():
    assert adjacent_pairs(3, symmetric=False).tolist() == [[0, 1], [1, 2]]
    assert len(adjacent_pairs(4, sensitivity=2)) == 2 * (3 + 2)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: delta_dp([0.5, 0.6], [1], 1.0), "sum to 1"),
        (lambda: delta_dp([0.5, 0.5], [0], 1.0), "0"),
        (lambda: delta_dp([0.5, 0.5], [1], -1.0), "eps"),
        (lambda: delta_dp([0.5, 0.5], [1], np.nan), "eps"),
        (lambda: delta_pdp([1.5, -0.5], [1], 1.0), "non-negative"),
        (lambda: eps_for_delta([0.5, 0.5], [1], 2.0), "delta"),
        (lambda: eps_for_delta([0.5, 0.5], [1], 0.1, notion="rdp"), "notion"),
        (lambda: mechanism_delta(np.eye(2), [[0, 2]], 1.0), "pairs"),
        (lambda: mechanism_delta(np.ones((2, 2)), [[0, 1]], 1.0), "sum to 1"),
        (lambda: hockey_stick([0.5, 0.5], [1.0], 1.0), "same number"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
