"""Tests for optnoise.mechanisms.composition (Cesar & Rogers, ALT 2021).

Expected values come from brute-force enumeration of explicit product pmfs
(optnoise.privacy.curves.hockey_stick), independent closed forms written out here,
numerical integration, dp-accounting, or numbers stated in the paper/issue.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize, special, stats

from optnoise.mechanisms import composition as C
from optnoise.mechanisms import gaussian as G
from optnoise.privacy.curves import hockey_stick

# ---------------------------------------------------------------------------
# brute-force helpers (explicit pmfs)
# ---------------------------------------------------------------------------


def rr(eps):
    """Randomized response: (P, Q) over outputs (1, 0)."""
    p = np.array([math.exp(eps), 1.0]) / (1.0 + math.exp(eps))
    return p, p[::-1].copy()


def rr_t(eps, t):
    """Generalized randomized response straight from Definition 2.4 (linear space)."""
    q1 = (math.exp((1 - t) * eps) - 1) / (math.exp(eps) - 1)
    p1 = math.exp(t * eps) * q1
    return np.array([p1, 1 - p1]), np.array([q1, 1 - q1])


def product(pairs):
    P, Q = np.ones(1), np.ones(1)
    for p, q in pairs:
        P, Q = np.outer(P, p).ravel(), np.outer(Q, q).ravel()
    return P, Q


def brute_mixed(eps, T, k, eps_g, t):
    """H_{eps_g}(RR^k x RR_t^{T-k}) by explicit enumeration of 2^T outputs."""
    P, Q = product([rr(eps)] * k + [rr_t(eps, t)] * (T - k))
    return hockey_stick(P, Q, eps_g)


# ---------------------------------------------------------------------------
# KOV
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("k", range(1, 13))
def test_kov_equals_brute_force_rr_product(k):
    eps0 = 0.37
    P, Q = product([rr(eps0)] * k)
    # off-grid levels as well as the breakpoints eps0 (k - 2i)
    grid = np.unique(np.concatenate([np.linspace(0, k * eps0 * 1.05, 41), eps0 * (k - 2 * np.arange(k // 2 + 1))]))
    grid = grid[grid >= 0]
    np.testing.assert_allclose(C.kov_delta(eps0, k, grid), hockey_stick(P, Q, grid), rtol=1e-11, atol=1e-15)


@pytest.mark.parametrize("k", [1, 2, 4, 6])
def test_kov_with_delta0_equals_brute_force(k):
    # worst-case (eps0, delta0) mechanism: a delta0 atom of infinite loss on each side
    eps0, d0 = 0.5, 0.01
    a = (1 - d0) / (1 + math.exp(eps0))
    p = np.array([d0, a * math.exp(eps0), a, 0.0])
    P, Q = product([(p, p[::-1].copy())] * k)
    grid = np.linspace(0, k * eps0 + 0.2, 23)
    np.testing.assert_allclose(C.kov_delta(eps0, k, grid, delta0=d0), hockey_stick(P, Q, grid), rtol=1e-11, atol=1e-15)


def test_kov_issue_number():
    # issue 6 / Fig. 6 setting: 10 Laplace counts at eps0 = 0.1, delta = 1e-5
    assert C.kov_epsilon(0.1, 10, 1e-5) == pytest.approx(0.99369, abs=5e-6)
    # hand derivation: for eps in [0.8, 1.0] only the all-(+eps0) outcome has loss > eps, so
    # delta = (e^1 - e^eps)/(1 + e^0.1)^10 and eps = ln(e - 1e-5 (1 + e^0.1)^10)
    hand = math.log(math.e - 1e-5 * (1 + math.exp(0.1)) ** 10)
    assert C.kov_epsilon(0.1, 10, 1e-5) == pytest.approx(hand, rel=1e-13)


def test_kov_epsilon_inverts_delta():
    for eps0, k in [(0.3, 8), (0.05, 200), (1.0, 3), (0.01, 10_000)]:
        for d in [1e-12, 1e-6, 1e-3, 0.05, 0.2]:
            e = C.kov_epsilon(eps0, k, d)
            assert 0 <= e <= k * eps0
            if e > 0:
                assert C.kov_delta(eps0, k, e) == pytest.approx(d, rel=1e-9)
                assert C.kov_delta(eps0, k, e * (1 - 1e-9)) > d * (1 - 1e-6)
    assert C.kov_epsilon(0.2, 7, 0.0) == pytest.approx(1.4)
    assert C.kov_epsilon(0.2, 7, 0.99) == 0.0
    # with delta0 > 0 a delta below 1 - (1 - delta0)^k is unreachable
    assert C.kov_epsilon(0.2, 10, 1e-3, delta0=1e-3) == math.inf
    e = C.kov_epsilon(0.2, 10, 0.05, delta0=1e-3)
    assert C.kov_delta(0.2, 10, e, delta0=1e-3) == pytest.approx(0.05, rel=1e-9)
    np.testing.assert_allclose(
        C.kov_epsilon(0.3, 8, [1e-6, 1e-3]), [C.kov_epsilon(0.3, 8, 1e-6), C.kov_epsilon(0.3, 8, 1e-3)]
    )


def test_kov_large_k_matches_scipy_binomial():
    # independent route: scipy's binomial pmf in linear space, k = 10^4
    eps0, k = 0.01, 10_000
    ell = np.arange(k + 1)
    pmf = stats.binom.pmf(ell, k, 1 / (1 + math.exp(eps0)))  # ell outcomes at -eps0 under P
    loss = eps0 * (k - 2 * ell)
    for e in [0.0, 0.5, 1.0, 2.0, 4.0]:
        expect = float(np.sum(pmf * np.clip(-np.expm1(e - loss), 0, None)))
        assert C.kov_delta(eps0, k, e) == pytest.approx(expect, rel=1e-9, abs=1e-300)
    out = C.kov_delta(eps0, k, np.linspace(0, 100, 50))
    assert np.all(np.isfinite(out)) and np.all(np.diff(out) <= 0)
    assert math.isfinite(C.kov_epsilon(eps0, k, 1e-10))
    # huge per-mechanism eps: no overflow
    assert C.kov_delta(800.0, 3, 1000.0) == pytest.approx(
        -math.expm1(1000.0 - 2400.0) * (1 / (1 + math.exp(-800.0))) ** 3
    )


def test_kov_matches_dp_accounting_pld():
    from dp_accounting.pld import privacy_loss_distribution as pld
    from dp_accounting.pld.common import DifferentialPrivacyParameters

    eps0, k, d0 = 0.2, 20, 1e-4
    dist = pld.from_privacy_parameters(DifferentialPrivacyParameters(eps0, d0), value_discretization_interval=1e-5)
    dist = dist.self_compose(k)
    for e in [0.0, 0.5, 1.0, 2.0]:
        assert C.kov_delta(eps0, k, e, delta0=d0) == pytest.approx(dist.get_delta_for_epsilon(e), rel=1e-6)


# ---------------------------------------------------------------------------
# Theorem 3 and its special cases
# ---------------------------------------------------------------------------


def test_rr_t_probabilities_definition():
    eps = 0.8
    for t in [0.0, 0.25, 0.5, 1.0]:
        p1, q1 = C.rr_t_probabilities(eps, t)
        P, Q = rr_t(eps, t)
        assert (p1, q1) == pytest.approx((P[0], Q[0]), rel=1e-12, abs=1e-15)
    p1, q1 = C.rr_t_probabilities(eps, 0.3)
    assert math.log(p1 / q1) == pytest.approx(0.3 * eps)  # loss of output 1 is t eps
    assert math.log((1 - p1) / (1 - q1)) == pytest.approx(-0.7 * eps)  # output 0: -(1-t) eps
    # eps-DP randomized response is RR_{1/2} at 2 eps-BR (Lemma 2.1: eps-DP implies 2 eps-BR)
    assert C.rr_t_probabilities(2 * eps, 0.5) == pytest.approx((rr(eps)[0][0], rr(eps)[1][0]))


@pytest.mark.parametrize("T", [1, 3, 6, 10])
def test_theorem3_k_equals_T_is_kov(T):
    grid = np.linspace(0, T * 0.4, 17)
    np.testing.assert_allclose(C.br_dp_delta(0.4, T, T, grid), C.kov_delta(0.4, T, grid), rtol=1e-12, atol=1e-16)


def ddr_theorem(eps, T, eps_g):
    """Dong-Durfee-Rogers non-adaptive BR composition, written out in linear space.

    max over l of the partial sum over j <= l of C(T,j)[P1^{T-j} P0^j - e^{eps_g} Q1^{T-j} Q0^j]
    at t_l = (eps_g/eps + l + 1)/(T + 1), rounded into [0, 1].
    """
    best = 0.0
    for ell in range(T + 1):
        t = min(max((eps_g / eps + ell + 1) / (T + 1), 0.0), 1.0)
        (p1, p0), (q1, q0) = rr_t(eps, t)
        s = sum(
            special.comb(T, j) * (p1 ** (T - j) * p0**j - math.exp(eps_g) * q1 ** (T - j) * q0**j)
            for j in range(ell + 1)
        )
        best = max(best, s)
    return best


@pytest.mark.parametrize("T", [1, 2, 5, 9])
def test_theorem3_k_zero_is_dong_durfee_rogers(T):
    eps = 0.6
    for eg in [0.0, 0.2, 0.9, 1.7, T * eps * 0.9]:
        assert C.br_dp_delta(eps, T, 0, eg) == pytest.approx(ddr_theorem(eps, T, eg), rel=1e-10, abs=1e-15)


def test_theorem3_equals_brute_force_sup_over_t():
    eps = 0.5
    t_dense = np.linspace(0, 1, 1001)
    for T, k in [(4, 0), (5, 2), (6, 3), (3, 2)]:
        for eg in [0.0, 0.35, 1.6]:
            brute = max(brute_mixed(eps, T, k, eg, t) for t in t_dense)
            got = C.br_dp_delta(eps, T, k, eg)
            # the candidate set is exact; the dense grid can only be slightly lower
            assert got >= brute - 1e-14
            assert got == pytest.approx(brute, rel=1e-5, abs=1e-14)
            # and every candidate value is attained by an actual RR_t product
            ts = C.br_dp_t_candidates(eps, T, k, eg)
            assert got == pytest.approx(max(brute_mixed(eps, T, k, eg, t) for t in ts), rel=1e-10, abs=1e-15)


@settings(max_examples=40, deadline=None)
@given(
    T=st.integers(1, 14),
    frac=st.floats(0, 1),
    eps=st.floats(0.01, 2.0),
    level=st.floats(0, 1),
)
def test_candidate_set_at_least_dense_grid(T, frac, eps, level):
    k = int(round(frac * T))
    eg = level * T * eps
    cand = C.br_dp_delta(eps, T, k, eg)
    grid = C.br_dp_delta(eps, T, k, eg, t_grid=np.linspace(0, 1, 1001))
    assert cand >= grid - 1e-15 * max(1.0, grid)


@settings(max_examples=40, deadline=None)
@given(T=st.integers(1, 16), eps=st.floats(0.01, 3.0), level=st.floats(0, 1.2))
def test_br_never_exceeds_dp(T, eps, level):
    eg = level * T * eps
    deltas = [C.br_dp_delta(eps, T, k, eg) for k in range(T + 1)]
    # more DP mechanisms (fewer BR) can only cost more; k = 0 (all BR) <= k = T (KOV)
    assert all(a <= b * (1 + 1e-13) + 1e-16 for a, b in zip(deltas, deltas[1:], strict=False))
    assert deltas[0] <= C.kov_delta(eps, T, eg) * (1 + 1e-13) + 1e-16


def test_br_epsilon_inverse_and_eps_dp_implies_2eps_br():
    e = C.br_dp_epsilon(0.3, 12, 5, 1e-4)
    assert C.br_dp_delta(0.3, 12, 5, e) == pytest.approx(1e-4, rel=1e-8)
    assert C.br_dp_epsilon(0.3, 12, 12, 1e-4) == pytest.approx(C.kov_epsilon(0.3, 12, 1e-4), rel=1e-9)
    assert C.br_dp_epsilon(0.3, 5, 0, 0.0) == pytest.approx(1.5)
    # Lemma 2.1: eps-DP implies 2 eps-BR, so the 2 eps-BR optimum upper-bounds the eps-DP one
    for eg in [0.0, 0.5, 1.5]:
        assert C.br_dp_delta(0.6, 6, 0, eg) >= C.kov_delta(0.3, 6, eg) - 1e-15


def test_theorem3_stable_for_hundreds_of_mechanisms():
    eps, T, k, eg = 0.02, 300, 100, 1.0
    mid = C.br_dp_delta(eps, T, k, eg)
    assert math.isfinite(mid)
    assert C.br_dp_delta(eps, T, 0, eg) < mid < C.kov_delta(eps, T, eg)


def test_nearly_four_times_more_br_mechanisms():
    # Sec. 1 (Dong et al.): about four times more exponential mechanisms than general
    # eps-DP ones at the same overall (eps_g, delta); the ratio tends to 4 as eps -> 0.
    eps, eg, d = 0.05, 1.0, 1e-6
    n_dp = max(k for k in range(1, 200) if C.kov_delta(eps, k, eg) <= d)
    n_br = max(T for T in range(3 * n_dp, 4 * n_dp + 2) if C.br_dp_delta(eps, T, 0, eg) <= d)
    assert 3.0 < n_br / n_dp <= 4.0


# ---------------------------------------------------------------------------
# Sec. 5: adaptive orderings
# ---------------------------------------------------------------------------


def _round_pmf(kind, eps, t):
    return rr(eps) if kind == "DP" else rr_t(eps, t)


def _round_vec(kind, eps, t):
    """(P, Q) of one round for an array of t, shape (n, 2), outputs (1, 0)."""
    t = np.asarray(t, dtype=float)
    if kind == "DP":
        p1 = np.full(t.shape, math.exp(eps) / (1 + math.exp(eps)))
        q1 = 1 - p1
    else:
        q1 = np.expm1((1 - t) * eps) / math.expm1(eps)
        p1 = np.exp(t * eps) * q1
    return np.stack([p1, 1 - p1], -1), np.stack([q1, 1 - q1], -1)


def _pmfs_T2(eps, order, theta):
    """Explicit 4-output pmfs of two adaptive rounds, theta[:, 0] = t1, theta[:, 1 + y1] = t2 after y1."""
    theta = np.clip(np.atleast_2d(theta), 0, 1)
    p1, q1 = _round_vec(order[0], eps, theta[:, 0])
    P, Q = [], []
    for y1 in (0, 1):
        p2, q2 = _round_vec(order[1], eps, theta[:, 1 + y1])
        P.append(p1[:, y1, None] * p2)
        Q.append(q1[:, y1, None] * q2)
    return np.concatenate(P, 1), np.concatenate(Q, 1)


def brute_adaptive_T2(eps, order, eg):
    """sup over (t1, t2 after y1 = 1, t2 after y1 = 0) of the hockey stick of explicit 4-output pmfs."""
    g = np.linspace(0, 1, 41)
    grid = np.array(list(itertools.product(g, g, g)))
    P, Q = _pmfs_T2(eps, order, grid)
    vals = np.clip(P - math.exp(eg) * Q, 0, None).sum(1)  # the definition, for the whole grid
    starts = grid[np.argsort(-vals)[:5]]

    def h(theta):
        P1, Q1 = _pmfs_T2(eps, order, theta)
        return hockey_stick(P1[0], Q1[0], eg)

    best = max(h(s) for s in starts)
    for s in starts:
        res = optimize.minimize(
            lambda th: -h(th), s, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-15, "maxiter": 4000}
        )
        best = max(best, -res.fun)
    return best


@pytest.mark.parametrize("order", [("BR", "BR"), ("DP", "BR"), ("BR", "DP"), ("DP", "DP")])
def test_adaptive_recursion_equals_brute_force_T2(order):
    eps = 0.7
    for eg in [0.0, 0.3, 0.9]:
        assert C.adaptive_delta(eps, order, eg) == pytest.approx(brute_adaptive_T2(eps, order, eg), rel=1e-7, abs=1e-12)


def test_adaptive_special_cases():
    eps, grid = 0.5, np.array([0.0, 0.2, 0.5, 0.8, 1.2])
    np.testing.assert_allclose(
        C.adaptive_delta(eps, ["DP"] * 3, grid), C.kov_delta(eps, 3, grid), rtol=1e-12, atol=1e-16
    )
    # Proposition 2 / Corollary 5.1: one adaptive BR round anywhere = Theorem 3 with k = T - 1
    thm3 = C.br_dp_delta(eps, 3, 2, grid)
    for order in [("BR", "DP", "DP"), ("DP", "BR", "DP"), ("DP", "DP", "BR")]:
        np.testing.assert_allclose(C.adaptive_delta(eps, order, grid), thm3, rtol=1e-9, atol=1e-13)
    # a single BR round equals the one-mechanism Theorem 3 value
    assert C.adaptive_delta(eps, ["BR"], 0.1) == pytest.approx(C.br_dp_delta(eps, 1, 0, 0.1), rel=1e-10)
    # cost of adaptivity (Dong et al.): adaptive BR composition is strictly worse somewhere
    assert C.adaptive_delta(eps, ("BR", "BR"), 0.0) > C.br_dp_delta(eps, 2, 0, 0.0) + 1e-6
    e = C.adaptive_epsilon(eps, ("BR", "DP"), 1e-3)
    assert C.adaptive_delta(eps, ("BR", "DP"), e) == pytest.approx(1e-3, rel=1e-7)


def brute_br_br_dp(eps, eg):
    """(BR, BR, DP) with t1 and t2(y1) optimised jointly over explicit 8-output pmfs."""

    def h(theta):
        t1, t2a, t2b = np.clip(theta, 0, 1)
        p1, q1 = rr_t(eps, t1)
        pd, qd = rr(eps)
        P, Q = [], []
        for y1, t2 in ((0, t2a), (1, t2b)):
            p2, q2 = rr_t(eps, t2)
            P += list(np.outer(p1[y1] * p2, pd).ravel())
            Q += list(np.outer(q1[y1] * q2, qd).ravel())
        return hockey_stick(np.array(P), np.array(Q), eg)

    g = np.linspace(0, 1, 11)
    starts = sorted(itertools.product(g, g, g), key=lambda th: -h(th))[:4]
    return max(
        -optimize.minimize(lambda th: -h(th), s, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-15}).fun
        for s in starts
    )


@pytest.mark.parametrize("eps", [0.3, 1.0])
def test_lemma_5_3_and_5_4_two_br_rounds(eps):
    orders = [("DP", "BR", "BR"), ("BR", "DP", "BR"), ("BR", "BR", "DP")]
    high = eps * np.array([1.0, 1.3, 2.0])  # Lemma 5.3: eps_g >= eps, all three orders agree
    vals = [C.adaptive_delta(eps, o, high) for o in orders]
    np.testing.assert_allclose(vals[0], vals[1], rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(vals[0], vals[2], rtol=1e-9, atol=1e-14)
    low = eps * np.array([0.0, 0.3, 0.7, 0.95])  # Lemma 5.4: below eps, DP first is strictly worse
    a, b, c = (C.adaptive_delta(eps, o, low) for o in orders)
    assert np.all(a > b * (1 + 1e-5))
    np.testing.assert_allclose(b, c, rtol=1e-9)
    # Proposition 1: BR rounds at the end is the worst order
    assert np.all(a >= np.maximum(b, c) - 1e-15)
    # the recursion value for (BR, BR, DP) agrees with a joint brute-force optimisation
    for eg in [0.3 * eps, 1.3 * eps]:
        assert C.adaptive_delta(eps, orders[2], eg) == pytest.approx(brute_br_br_dp(eps, eg), rel=1e-7)


# ---------------------------------------------------------------------------
# Set-wise adaptive bounds (Lemmas 3.2-3.4, Eq. (3))
# ---------------------------------------------------------------------------


def test_expected_losses_lemma_3_2():
    for eps in [0.01, 0.3, 1.0, 3.0]:
        p, q = rr(eps)
        kl = float(np.sum(p * np.log(p / q)))
        assert C.dp_expected_loss(eps) == pytest.approx(kl, rel=1e-12)
        assert C.dp_expected_loss(eps) == pytest.approx(eps * (math.exp(eps) - 1) / (math.exp(eps) + 1), rel=1e-12)

        def kl_t(t, eps=eps):
            P, Q = rr_t(eps, t)
            return float(np.sum(special.rel_entr(P, Q)))

        best = -optimize.minimize_scalar(
            lambda t: -kl_t(t), bounds=(0, 1), method="bounded", options={"xatol": 1e-12}
        ).fun
        assert C.br_expected_loss(eps) == pytest.approx(best, rel=1e-8)
    # the small-eps series joins the closed form
    assert C.br_expected_loss(0.999e-3) == pytest.approx(C.br_expected_loss(1.001e-3), rel=5e-3)
    assert C.br_expected_loss(1e-9) == pytest.approx(1e-18 / 8)


def test_hoeffding_constants_eps2_over_2_and_eps2_over_8():
    # log E exp(lam (L - E L)) <= lam^2 c with c = eps^2/2 (DP) and eps^2/8 (BR, any t)
    lam = np.linspace(-30, 30, 121)
    for eps in [0.1, 1.0, 2.5]:
        p, _ = rr(eps)
        loss = np.array([eps, -eps])
        mgf = special.logsumexp(lam[:, None] * (loss - p @ loss)[None, :], b=p[None, :], axis=1)
        assert np.all(mgf <= lam**2 * eps**2 / 2 + 1e-12)
        for t in [0.0, 0.2, 0.5, 0.9]:
            P, _ = rr_t(eps, t)
            loss = np.array([t * eps, -(1 - t) * eps])
            mgf = special.logsumexp(lam[:, None] * (loss - P @ loss)[None, :], b=P[None, :], axis=1)
            assert np.all(mgf <= lam**2 * eps**2 / 8 + 1e-12)


def test_setwise_anchor_cases_eq3():
    k, eps, d = 40, 0.1, 1e-6
    # all DP: advanced composition (Dwork-Rothblum-Vadhan) with the Kairouz et al. mean
    adv = k * eps * (math.exp(eps) - 1) / (math.exp(eps) + 1) + eps * math.sqrt(2 * k * math.log(1 / d))
    assert C.setwise_epsilon(d, dp=[eps] * k) == pytest.approx(adv, rel=1e-12)
    # all BR: Dong et al. Corollary 3.1
    mean = eps / math.expm1(eps) - 1 + math.log(math.expm1(eps) / eps)
    ddr = k * mean + eps * math.sqrt(k / 2 * math.log(1 / d))
    assert C.setwise_epsilon(d, br=[eps] * k) == pytest.approx(ddr, rel=1e-12)
    # a Gaussian as (rho, sqrt(2 rho))-CDP reproduces the zCDP conversion
    rho = 0.3
    assert C.setwise_epsilon(d, cdp=[(rho, math.sqrt(2 * rho))]) == pytest.approx(C.zcdp_epsilon(rho, d))
    # mixed sets: sums of means and of variance proxies; the order of the sets is irrelevant
    mixed = C.setwise_epsilon(d, dp=[0.1, 0.2], br=[0.3], cdp=[(0.01, 0.1)])
    expect = (
        C.dp_expected_loss(0.1)
        + C.dp_expected_loss(0.2)
        + C.br_expected_loss(0.3)
        + 0.01
        + math.sqrt(2 * math.log(1 / d) * (0.01 + 0.04 + 0.09 / 4 + 0.01))
    )
    assert mixed == pytest.approx(expect, rel=1e-12)
    assert C.setwise_epsilon(d, dp=[0.2, 0.1], br=[0.3], cdp=[(0.01, 0.1)]) == pytest.approx(mixed)
    # BR composes better than DP in this bound too
    assert C.setwise_epsilon(d, br=[eps] * k) < C.setwise_epsilon(d, dp=[eps] * k)


def test_zcdp_conversion_is_optimum_over_renyi_order():
    for rho, d in [(0.02, 1e-5), (0.5, 1e-6), (3.0, 1e-3)]:
        L = math.log(1 / d)
        res = optimize.minimize_scalar(
            lambda a, rho=rho, L=L: a * rho + L / (a - 1),
            bounds=(1 + 1e-9, 1e6),
            method="bounded",
            options={"xatol": 1e-12},
        )
        assert C.zcdp_epsilon(rho, d) == pytest.approx(res.fun, rel=1e-8)
    eps, dt = C.setwise_zcdp_epsilon(1e-6, [0.1, 0.2], deltas=[1e-7, 2e-7])
    assert eps == pytest.approx(C.zcdp_epsilon(0.3, 1e-6))
    assert dt == pytest.approx(1.3e-6)


# ---------------------------------------------------------------------------
# Sec. 6: Gaussian and Laplace mechanisms
# ---------------------------------------------------------------------------


def test_analytic_gaussian_sigma_issue_number_and_dp_accounting():
    import dp_accounting

    assert G.analytic_gaussian_sigma(1.0, 1e-5) == pytest.approx(3.7306, abs=5e-5)
    assert G.analytic_gaussian_sigma(1.0, 1e-5) == pytest.approx(dp_accounting.get_sigma_gaussian(1.0, 1e-5), rel=1e-9)
    s = G.analytic_gaussian_sigma(0.5, 1e-6, sensitivity=3.0)
    assert s == pytest.approx(3.0 * dp_accounting.get_sigma_gaussian(0.5, 1e-6), rel=1e-9)
    assert G.analytic_gaussian_epsilon(14.0, 1e-6) == pytest.approx(
        dp_accounting.get_epsilon_gaussian(14.0, 1e-6), rel=1e-8
    )
    assert G.analytic_gaussian_delta(0.5, s, sensitivity=3.0) == pytest.approx(1e-6, rel=1e-8)


def test_analytic_gaussian_delta_is_hockey_stick_integral():
    sigma, D = 1.3, 1.0
    for eps in [0.0, 0.4, 2.0]:

        def f(x, eps=eps):
            return max(stats.norm.pdf(x, 0, sigma) - math.exp(eps) * stats.norm.pdf(x, D, sigma), 0.0)

        cut = D / 2 - eps * sigma**2 / D  # P > e^eps Q left of this point
        val = integrate.quad(f, -np.inf, cut, epsabs=1e-14, epsrel=1e-12)[0]
        assert G.analytic_gaussian_delta(eps, sigma, sensitivity=D) == pytest.approx(val, rel=1e-8)
    # log-space: tiny deltas stay positive and finite
    tiny = G.analytic_gaussian_delta(200.0, 1.0)
    assert 0 <= tiny < 1e-300 or (0 < tiny and math.isfinite(tiny))


def test_gaussian_privacy_loss_is_cdp_with_mu_and_tau():
    # Sec. 2: N(0, sigma^2) with sensitivity D is (D^2/(2 sigma^2), D/sigma)-CDP: its privacy loss
    # L(x) = log(p(x)/q(x)) under P = N(0, sigma^2), Q = N(D, sigma^2) has mean D^2/(2 sigma^2), sd D/sigma
    sigma, D = 2.5, 1.5
    loss = lambda x: (D**2 - 2 * D * x) / (2 * sigma**2)  # noqa: E731
    mean = integrate.quad(lambda x: stats.norm.pdf(x, 0, sigma) * loss(x), -np.inf, np.inf)[0]
    var = integrate.quad(lambda x: stats.norm.pdf(x, 0, sigma) * (loss(x) - mean) ** 2, -np.inf, np.inf)[0]
    assert mean == pytest.approx(D**2 / (2 * sigma**2), rel=1e-10)
    assert math.sqrt(var) == pytest.approx(D / sigma, rel=1e-10)
    assert G.histogram_zcdp_rho(sigma, linf_sensitivity=D) == pytest.approx(mean)


def test_laplace_lemma_6_2():
    b = 10.0
    assert stats.laplace(scale=b).var() == pytest.approx(2 * b**2)  # "the variance of Lap(b) is 2b^2"
    assert G.laplace_histogram_epsilon(b, 1e-6, l0_sensitivity=20, linf_sensitivity=2.0) == pytest.approx(
        C.kov_epsilon(0.2, 20, 1e-6)
    )
    # the exact Laplace composition (dp-accounting PLD) can only be smaller than the generic DP bound
    from dp_accounting.pld import privacy_loss_distribution as pld

    exact = pld.from_laplace_mechanism(b, sensitivity=1.0, value_discretization_interval=1e-4).self_compose(50)
    ours = G.laplace_histogram_epsilon(b, 1e-6, l0_sensitivity=50)
    assert exact.get_epsilon_for_delta(1e-6) <= ours
    assert exact.get_epsilon_for_delta(1e-6) > 0.9 * ours


def test_gaussian_zcdp_lemma_6_3():
    import dp_accounting

    s, d, l0 = 14.0, 1e-6, 50
    rho = G.histogram_zcdp_rho(s, l0_sensitivity=l0)
    assert rho == pytest.approx(l0 / (2 * s**2))
    eps = G.gaussian_zcdp_epsilon(s, d, l0_sensitivity=l0)
    assert eps == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / d)))
    # looser than the exact (analytic) Gaussian with L2 sensitivity sqrt(l0), and than dp-accounting's RDP
    assert eps >= G.analytic_gaussian_epsilon(s, d, sensitivity=math.sqrt(l0))
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(s / math.sqrt(l0)))
    assert acc.get_epsilon(d) <= eps
    # calibration inverts it
    sig = G.gaussian_zcdp_sigma(0.99369, 1e-5, l0_sensitivity=10)
    assert G.gaussian_zcdp_epsilon(sig, 1e-5, l0_sensitivity=10) == pytest.approx(0.99369, rel=1e-12)


def test_composed_gaussian_epsilon():
    s, d = 14.0, 1e-6
    assert G.composed_gaussian_epsilon(s, 1, d) == pytest.approx(G.analytic_gaussian_epsilon(s, d), rel=1e-6)
    # composing k Gaussians exactly is one Gaussian with sensitivity sqrt(k): the DP route is looser
    for k in [2, 10]:
        got = G.composed_gaussian_epsilon(s, k, d)
        assert got >= G.analytic_gaussian_epsilon(s, d, sensitivity=math.sqrt(k))
        # and it is a valid KOV split: some eps0 attains it
        assert got <= C.kov_epsilon(0.3, k, d, delta0=G.analytic_gaussian_delta(0.3, s)) + 1e-9


# ---------------------------------------------------------------------------
# Algorithm 1 (Eq. (9)) and Algorithm 2 (Eq. (10), Lemma 6.4)
# ---------------------------------------------------------------------------


def test_ordered_least_squares_against_isotonic_and_cvxpy():
    import cvxpy as cp

    rng = np.random.default_rng(0)
    for _ in range(5):
        y = np.sort(rng.uniform(0, 50, 12))[::-1] + rng.normal(0, 8, 12)
        got = G.ordered_least_squares(y)
        iso = np.clip(optimize.isotonic_regression(y, increasing=False).x, 0, None)
        np.testing.assert_allclose(got, iso, atol=1e-8)
        c = cp.Variable(y.size)
        # Clarabel, not cvxpy's default OSQP: OSQP segfaults in a process where CBC (PuLP) has run.
        cp.Problem(cp.Minimize(cp.sum_squares(y - c)), [c[:-1] >= c[1:]]).solve(solver=cp.CLARABEL)
        np.testing.assert_allclose(G.ordered_least_squares(y, nonnegative=False), c.value, atol=1e-5)
    y = np.array([3.0, 5.0, 1.0, -2.0])
    np.testing.assert_allclose(G.ordered_least_squares(y), [4.0, 4.0, 1.0, 0.0], atol=1e-10)  # PAVA by hand
    np.testing.assert_allclose(G.ordered_least_squares(y, nonnegative=False), [4.0, 4.0, 1.0, -2.0], atol=1e-10)
    out = G.ordered_gaussian_counts([649, 545, 383, 338, 331], 15.0, rng=1)
    assert out.shape == (5,) and np.all(np.diff(out) <= 1e-9) and np.all(out >= 0)


def test_ordered_gaussian_counts_many_releases_at_once():
    c = np.array([60.0, 50.0, 12.0, 11.0, 10.0, 1.0])
    out = G.ordered_gaussian_counts(c, 6.0, rng=7, size=400)
    assert out.shape == (400, c.size)
    # the same noise, drawn the same way, projected one release at a time by PAVA (scipy)
    noisy = c + np.random.default_rng(7).normal(0.0, 6.0, size=(400, c.size))
    ref = np.array([np.clip(optimize.isotonic_regression(y, increasing=False).x, 0, None) for y in noisy])
    np.testing.assert_allclose(out, ref, atol=1e-8)
    assert np.all(np.diff(out, axis=1) <= 1e-9) and np.all(out >= 0)
    with pytest.raises(ValueError, match="size"):
        G.ordered_gaussian_counts(c, 6.0, size=0)


def test_truncated_gaussian_pdf_and_sampler():
    s, c = 2.0, 3.0
    assert integrate.quad(lambda x: G.truncated_gaussian_pdf(x, s, c), -c, c)[0] == pytest.approx(1.0, rel=1e-10)
    assert G.truncated_gaussian_pdf(3.5, s, c) == 0.0
    z = G.truncated_gaussian_sample(s, c, size=20000, rng=3)
    assert np.all(np.abs(z) <= c)
    assert np.std(z) == pytest.approx(stats.truncnorm(-c / s, c / s, scale=s).std(), rel=0.03)


def test_truncation_bound_solves_eq_10():
    s, d, l0, linf = 5.0, 1e-6, 4, 2.0
    c = G.truncation_bound(s, d, l0_sensitivity=l0, linf_sensitivity=linf)
    # probability that the count lands where the neighbour (shifted by linf) has no mass
    fail = integrate.quad(lambda x: G.truncated_gaussian_pdf(x, s, c), -c, -c + linf, epsabs=1e-20, epsrel=1e-12)[0]
    assert fail == pytest.approx(d / l0, rel=1e-7)


def test_lemma_6_4_single_count_guarantees():
    s, linf = 3.0, 1.0
    c = G.truncation_bound(s, 1e-4, linf_sensitivity=linf)
    lo, hi = -c + linf, c  # overlap of the supports of TN and TN + linf
    mass = integrate.quad(lambda x: G.truncated_gaussian_pdf(x, s, c), lo, hi)[0]
    p = lambda x: G.truncated_gaussian_pdf(x, s, c) / mass  # noqa: E731
    q = lambda x: G.truncated_gaussian_pdf(x - linf, s, c) / mass  # noqa: E731
    # conditioned on the overlap, Renyi divergence is at most that of the untruncated Gaussians
    for alpha in [1.5, 2.0, 5.0, 20.0]:
        val = integrate.quad(lambda x, alpha=alpha: p(x) ** alpha * q(x) ** (1 - alpha), lo, hi, epsrel=1e-12)[0]
        assert math.log(val) / (alpha - 1) <= alpha * linf**2 / (2 * s**2) + 1e-12
    # end to end: delta-approximate rho-zCDP => (eps, delta + delta')-DP for the actual pair
    rho = G.histogram_zcdp_rho(s, linf_sensitivity=linf)
    for d2 in [1e-2, 1e-4]:
        eps, total = C.setwise_zcdp_epsilon(d2, [rho], deltas=[1e-4])
        hs = integrate.quad(
            lambda x, eps=eps: max(
                G.truncated_gaussian_pdf(x, s, c) - math.exp(eps) * G.truncated_gaussian_pdf(x - linf, s, c), 0.0
            ),
            -c,
            c,
            points=[-c + linf],
            limit=200,
            epsabs=1e-14,
        )[0]
        assert hs <= total


def test_algorithm_2():
    counts = np.zeros(200)
    counts[:20] = np.arange(20, 0, -1) * 10.0
    counts[20:30] = 1.0  # at most linf: can never be released
    idx, vals = G.truncated_gaussian_top(counts, 4.0, 1e-6, l0_sensitivity=3, linf_sensitivity=1.0, rng=0)
    c = G.truncation_bound(4.0, 1e-6, l0_sensitivity=3)
    assert np.all(vals > 1.0 + c) and np.all(np.diff(vals) <= 0)
    assert set(idx) <= set(range(20)) and 0 in idx
    for _ in range(20):
        idx, _ = G.truncated_gaussian_top(counts, 4.0, 1e-6, l0_sensitivity=3)
        assert not set(idx) & set(range(20, 200))
    with pytest.raises(ValueError, match="max_elements"):
        G.truncated_gaussian_top(counts, 4.0, 1e-6, max_elements=10)


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: C.kov_delta(-0.1, 3, 1.0), "eps0"),
        (lambda: C.kov_delta(0.1, 2.5, 1.0), "k"),
        (lambda: C.kov_delta(0.1, 3, [0.1, np.nan]), "eps"),
        (lambda: C.kov_epsilon(0.1, 3, 1.5), "delta"),
        (lambda: C.kov_delta(0.1, 3, 1.0, delta0=-1), "delta0"),
        (lambda: C.br_dp_delta(0.1, 3, 4, 0.5), "k"),
        (lambda: C.br_dp_delta(0.1, 3, 1, 0.5, t_grid=[0.5, 1.2]), "t_grid"),
        (lambda: C.adaptive_delta(0.1, ("DP", "XX"), 0.5), "order"),
        (lambda: C.adaptive_delta(0.1, "DPBR", 0.5), "order"),
        (lambda: C.setwise_epsilon(0.0, dp=[0.1]), "delta"),
        (lambda: G.analytic_gaussian_sigma(1.0, 1e-5, sensitivity=0), "sensitivity"),
        (lambda: G.truncation_bound(1.0, 0.0), "delta"),
        (lambda: G.ordered_least_squares([]), "y"),
        (lambda: C.setwise_zcdp_epsilon(1e-6, [0.1], deltas=[1e-6, 1e-6]), "deltas"),
    ],
)
def test_bad_input_names_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_kov_signature_matches_the_issue_contract():
    # kov_delta(eps0, k, eps, delta0=0.0): delta0 may be passed positionally.
    from optnoise.mechanisms.composition import kov_delta, kov_epsilon

    assert kov_delta(0.1, 10, 0.5, 0.0) == kov_delta(0.1, 10, 0.5, delta0=0.0)
    assert kov_epsilon(0.1, 10, 1e-5, 0.0) == kov_epsilon(0.1, 10, 1e-5)
