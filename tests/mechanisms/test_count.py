"""Tests for optnoise.mechanisms.count (Sadeghi, Asoodeh, Calmon, arXiv 2007.09374).

The paper's math was lost in extraction, so the reconstruction in
optnoise.mechanisms.count is checked against the solver layer (the LP of Prop. 2), brute
force over all output events, and random feasible alphas.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optnoise.mechanisms.count import (
    count_delta,
    count_lp,
    count_noise_pmf,
    crossover_values,
    delta_curve,
    optimal_alpha,
    paper_dp_delta,
    singular_delta,
    type1_bounds,
    type2_bound,
)
from optnoise.mechanisms.gaussian import analytic_gaussian_delta
from optnoise.privacy.noise_families import (
    cks_delta,
    discrete_gaussian_delta,
    discrete_gaussian_pmf,
    discrete_gaussian_sigma2,
    discrete_gaussian_variance,
)

GRID = [(N, rho, eps) for N in (1, 3, 6, 12) for rho in (0.05, 0.3, 0.5, 0.7, 0.85) for eps in (0.2, 1.0, 2.0)]


def brute_force_delta(pmf: np.ndarray, eps: float) -> float:
    """sup over all output sets S of P(S) - e^eps Q(S), c vs c+1, both orders."""
    p = np.concatenate([pmf, [0.0]])
    q = np.concatenate([[0.0], pmf])
    e = math.exp(eps)
    best = 0.0
    for bits in itertools.product([0, 1], repeat=p.size):
        s = np.array(bits, dtype=bool)
        best = max(best, p[s].sum() - e * q[s].sum(), q[s].sum() - e * p[s].sum())
    return best


# ---------------------------------------------------------------- the family (Props. 1, 3)


def test_noise_family_properties_p1_p3():
    alpha = np.array([0.5, 0.3, 0.2])
    pmf = count_noise_pmf(alpha, 0.4)
    z = np.arange(-3, 4)
    assert pmf.sum() == pytest.approx(1.0)
    assert pmf[3] == pytest.approx(0.6)  # P(Z = 0) = 1 - rho      (P2)
    assert np.dot(z, pmf) == pytest.approx(0.0, abs=1e-15)  # zero bias (P3)
    np.testing.assert_allclose(pmf[4:], 0.4 * alpha / 2)  # support {-N..N} (P1)


# ---------------------------------------------------------------- closed form vs LP (Theorem 3)


@pytest.mark.parametrize("N,rho,eps", GRID)
def test_closed_form_equals_prop4_lp(N, rho, eps):
    cf = optimal_alpha(N, rho, eps)
    lp = count_lp(N, rho, eps, reverse=False)
    assert cf.claimed == pytest.approx(lp.claimed, rel=1e-7, abs=1e-9)
    # the constructed alphas achieve the claimed value (re-computed from alpha)
    assert singular_delta(cf.alpha, rho, eps, reverse=False) == pytest.approx(cf.claimed, rel=1e-9, abs=1e-15)
    assert np.all(cf.alpha >= 0) and cf.alpha.sum() == pytest.approx(1.0)


def test_second_backend():
    for solver in ("cbc", "cvxpy"):
        lp = count_lp(6, 0.5, 1.0, solver=solver, reverse=False)
        assert lp.claimed == pytest.approx(optimal_alpha(6, 0.5, 1.0).claimed, rel=1e-6)


@settings(max_examples=60, deadline=None)
@given(N=st.integers(1, 8), rho=st.floats(0.02, 0.95), eps=st.floats(0.05, 3.0), seed=st.integers(0, 10**6))
def test_bounds_are_lower_bounds(N, rho, eps, seed):
    """Lemmas 1-2: every alpha has delta~ >= every Type-I bound and the Type-II bound."""
    alpha = np.random.default_rng(seed).dirichlet(np.ones(N))
    d = singular_delta(alpha, rho, eps, reverse=False)
    assert d >= type1_bounds(N, rho, eps).max() - 1e-12
    assert d >= type2_bound(N, rho, eps) - 1e-12
    assert d >= optimal_alpha(N, rho, eps).claimed - 1e-12


def test_reverse_rows_bind_only_near_rho_one():
    """Prop. 4 keeps only decreasing rows; the full singular-event LP differs only for rho near 1."""
    for N, rho, eps in GRID:
        full = count_lp(N, rho, eps, reverse=True)
        assert full.claimed == pytest.approx(optimal_alpha(N, rho, eps).claimed, rel=1e-6, abs=1e-9)
    cf = optimal_alpha(2, 0.99, 0.1)
    assert count_lp(2, 0.99, 0.1).claimed > 1.5 * cf.claimed
    assert cf.delta_tilde > 1.5 * cf.claimed  # the reverse row p(1) <= e^eps p(0) + delta fails


# ---------------------------------------------------------------- crossover values (Lemmas 3-4, Thm. 2)


def test_crossover_values_monotone():
    """Lemma 4 (in rho): increasing; the gaps shrink geometrically, to rounding level for large N eps."""
    th = crossover_values(20, 2.0)
    assert np.all(np.diff(th) > -1e-15) and np.all(np.diff(th)[:8] > 0)
    assert np.all((th > 0) & (th < 1))


@pytest.mark.parametrize("N,eps", [(5, 0.5), (10, 1.0), (12, 1.5)])
def test_crossover_values_select_the_active_bound(N, eps):
    th = crossover_values(N, eps)
    assert np.all(np.diff(th) > 0)  # monotone (Lemma 4, in rho)
    for k in range(1, N):
        d = type1_bounds(N, th[k - 1], eps)
        assert d[k - 1] == pytest.approx(d[k], rel=1e-9, abs=1e-15)
    assert type1_bounds(N, th[-1], eps)[-1] == pytest.approx(type2_bound(N, th[-1], eps), rel=1e-9)
    edges = np.concatenate([[0.0], th, [1.0]])
    for k in range(1, N + 2):
        lo, hi = edges[k - 1], edges[k]
        rho = 0.5 * (lo + hi) if hi - lo > 1e-9 else lo
        m = optimal_alpha(N, rho, eps)
        if k <= N:
            assert m.method == f"type-I(k={k})" and m.active == k  # support shrinks to {-k..k}
        else:
            assert m.method == "type-II" and m.active == N


def test_fig1_structure_in_the_text():
    """Fig. 1 text: rho between two crossover values, only alpha_1..alpha_3 non-zero."""
    N, rho, eps = 10, 0.5, 1.0
    th = crossover_values(N, eps)
    assert th[1] <= rho <= th[2]
    m = optimal_alpha(N, rho, eps)
    assert m.active == 3 and np.all(m.alpha[3:] == 0)
    # the same-variance discrete Gaussian needs a much larger eps for singular events on {-N..N}
    s2 = discrete_gaussian_sigma2(m.variance)
    g = discrete_gaussian_pmf(np.arange(0, N + 2), s2)
    assert np.log(g[:-1] / g[1:]).max() > 5 * eps
    p = m.pmf[N:]
    assert np.all(p[:-1][p[1:] > 0] <= math.exp(eps) * p[1:][p[1:] > 0] + m.claimed + 1e-15)


def test_knee_at_last_crossover():
    """Sec. IV: delta grows fast once rho drops below a threshold -- the crossover theta_N."""
    for N, eps in [(10, 1.0), (20, 0.5)]:
        th = crossover_values(N, eps)[-1]
        below = paper_dp_delta(optimal_alpha(N, th - 0.01, eps).claimed, N)
        at = paper_dp_delta(optimal_alpha(N, th, eps).claimed, N)
        above = paper_dp_delta(optimal_alpha(N, th + 0.01, eps).claimed, N)
        assert below > 10 * at and above < 1.1 * at


# ---------------------------------------------------------------- exact re-verification


@pytest.mark.parametrize("N,rho,eps", [(1, 0.3, 0.5), (2, 0.5, 1.0), (3, 0.4, 0.7), (3, 0.8, 2.0)])
def test_count_delta_against_all_events(N, rho, eps):
    for m in (optimal_alpha(N, rho, eps), count_lp(N, rho, eps), count_lp(N, rho, eps, objective="hockey")):
        assert m.delta_exact == pytest.approx(brute_force_delta(m.pmf, eps), abs=1e-12)


@pytest.mark.parametrize("N,rho,eps", [(5, 0.5, 1.0), (10, 0.7, 1.0), (8, 0.3, 0.5), (10, 0.5, 1.5)])
def test_hockey_lp_and_remark2(N, rho, eps):
    cf = optimal_alpha(N, rho, eps)
    hk = count_lp(N, rho, eps, objective="hockey")
    assert hk.delta_exact == pytest.approx(hk.claimed, abs=1e-8)  # re-verified
    assert hk.delta_exact <= cf.delta_exact + 1e-8  # optimal for the exact delta
    # Remark 2: exact <= (N+1) delta~; for a Type-I optimum exact = k delta~ + beta_k
    assert cf.delta_exact <= cf.delta_paper + 1e-15
    if cf.method.startswith("type-I("):
        k = cf.active
        assert cf.delta_exact == pytest.approx(k * cf.claimed + rho * cf.alpha[k - 1] / 2, rel=1e-9)
    assert count_delta(cf.alpha, rho, eps) == cf.delta_exact


def test_delta_curve_measures():
    eps = np.array([0.5, 1.0, 2.0])
    s = delta_curve(eps, 10, 0.5, measure="singular")
    np.testing.assert_allclose(delta_curve(eps, 10, 0.5, measure="paper"), np.minimum(1, 11 * s))
    ex = delta_curve(eps, 10, 0.5, measure="exact")
    assert np.all(ex <= np.minimum(1, 11 * s) + 1e-15)
    np.testing.assert_allclose(delta_curve(eps, 10, 0.5, design="lp-singular", measure="singular"), s, rtol=1e-6)


# ---------------------------------------------------------------- discrete Gaussian baseline


def test_discrete_gaussian_pmf_and_variance():
    for s2 in (0.05, 0.7, 3.9, 4.1, 25.0):
        x = np.arange(-400, 401)
        p = discrete_gaussian_pmf(x, s2)
        w = np.exp(-(x * x) / (2 * s2))
        np.testing.assert_allclose(p, w / w.sum(), rtol=1e-13, atol=1e-300)  # both normalisation routes
        v = discrete_gaussian_variance(s2)
        assert v <= s2 * (1 + 1e-14) and (s2 > 1 or v < s2 * (1 - 1e-6))
        assert v == pytest.approx(np.dot(x * x, w / w.sum()), rel=1e-12)
        assert discrete_gaussian_sigma2(v) == pytest.approx(s2, rel=1e-9)


def test_discrete_gaussian_delta_two_routes_and_continuous_limit():
    for s2 in (0.5, 2.0, 10.0):
        eps = np.array([0.1, 0.5, 1.0, 2.0])
        np.testing.assert_allclose(cks_delta(eps, s2), discrete_gaussian_delta(eps, s2), rtol=1e-10, atol=1e-15)
    # for large sigma the discrete Gaussian behaves like the continuous one (CKS Sec. 2)
    assert cks_delta(0.1, 400.0) == pytest.approx(float(analytic_gaussian_delta(0.1, 20.0)), rel=0.02)


def test_fig4_claim_proposed_beats_discrete_gaussian():
    """Sec. IV: better (eps, delta) than the same-variance discrete Gaussian; both poor at small eps."""
    for N, rho in [(10, 0.5), (20, 0.7)]:
        for eps in (1.5, 2.0, 3.0):
            m = optimal_alpha(N, rho, eps)
            assert m.delta_paper < cks_delta(eps, m.variance) / 100
        m = optimal_alpha(N, rho, 0.2)
        assert m.delta_exact > 0.1 and cks_delta(0.2, m.variance) > 0.1


def test_validation_errors():
    with pytest.raises(ValueError, match="rho"):
        optimal_alpha(5, 1.0, 1.0)
    with pytest.raises(ValueError, match="N"):
        count_lp(0, 0.5, 1.0)
    with pytest.raises(ValueError, match="objective"):
        count_lp(3, 0.5, 1.0, objective="mse")
    with pytest.raises(ValueError, match="alpha"):
        count_noise_pmf([0.5, 0.6], 0.3)
    with pytest.raises(ValueError, match="sigma2"):
        discrete_gaussian_pmf([0, 1], -1.0)
    with pytest.raises(ValueError, match="support"):
        discrete_gaussian_pmf([0.5], 1.0)
