"""Tests for optnoise.mechanisms: the baselines of Kadam et al. (2024), Figs. 5-8.

Every matrix is checked against an independent route: closed forms for the
geometric noise, brute-force clamping, Monte Carlo Gumbel-max sampling,
brute-force hockey sticks over all output events, and the accounting of
optnoise.mechanisms.count.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optnoise import Neighborhood
from optnoise.design.metrics import cost_vector, modulo_errors
from optnoise.mechanisms.baselines import (
    FAMILIES,
    build,
    calibrate,
    count_mechanism,
    data_independent,
    discrete_gaussian,
    exponential,
    geometric,
    match_parameter,
)
from optnoise.mechanisms.count import count_noise_pmf, optimal_alpha
from optnoise.privacy.curves import mechanism_delta
from optnoise.privacy.neighborhood import neighbour_pairs
from optnoise.privacy.noise_families import (
    discrete_gaussian_delta,
    discrete_gaussian_noise,
    discrete_gaussian_pmf,
    geometric_noise,
)


def wrapped_geometric(n: int, alpha: float) -> np.ndarray:
    """Closed form of the two-sided geometric noise modulo n+1 (sum of two geometric series)."""
    m = n + 1
    eta = np.arange(m)
    return (1 - alpha) / (1 + alpha) * (alpha**eta + alpha ** (m - eta)) / (1 - alpha**m)


def geometric_cdf(k: np.ndarray, alpha: float) -> np.ndarray:
    """F(k) = P(eta <= k) of the two-sided geometric noise, by hand."""
    k = np.asarray(k, dtype=float)
    return np.where(k < 0, alpha ** (-k) / (1 + alpha), 1 - alpha ** (k + 1) / (1 + alpha))


def brute_dp(P: np.ndarray, pairs, eps: float) -> float:
    """sup over every output event S of P(S|q) - e^eps P(S|q') (Definition 1)."""
    best = 0.0
    for a, b in pairs:
        for bits in itertools.product([False, True], repeat=P.shape[1]):
            s = np.array(bits)
            best = max(best, P[a, s].sum() - math.exp(eps) * P[b, s].sum())
    return best


# ---------------------------------------------------------------- matrices


@pytest.mark.parametrize("n, alpha", [(1, 0.3), (7, 0.5), (8, 0.7), (20, 0.95)])
def test_geometric_modulo_matches_closed_form(n, alpha):
    mech = geometric(n, alpha)
    np.testing.assert_allclose(mech.noise, wrapped_geometric(n, alpha), rtol=1e-12)
    np.testing.assert_allclose(mech.matrix.sum(axis=1), 1.0, atol=1e-13)
    for q in range(n + 1):
        np.testing.assert_allclose(mech.matrix[q], np.roll(mech.noise, q))


@pytest.mark.parametrize("n, alpha", [(1, 0.3), (8, 0.7), (12, 0.9)])
def test_geometric_clamped_is_eq56_with_the_last_column_corrected(n, alpha):
    P = geometric(n, alpha, variant="clamped").matrix
    q = np.arange(n + 1)
    np.testing.assert_allclose(P[:, 0], geometric_cdf(-q, alpha), rtol=1e-12)
    k = np.arange(1, n)
    g = (1 - alpha) / (1 + alpha) * alpha ** np.abs(k[None, :] - q[:, None])
    np.testing.assert_allclose(P[:, 1:n], g, rtol=1e-12)
    np.testing.assert_allclose(P[:, n], 1 - geometric_cdf(n - q - 1, alpha), rtol=1e-12)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-13)
    # the printed (56), 1 - F(n - q), drops the mass g(n - q): its rows do not sum to 1
    printed = P.copy()
    printed[:, n] = 1 - geometric_cdf(n - q, alpha)
    assert np.all(printed.sum(axis=1) < 1 - 1e-3)


def test_clamped_gaussian_brute_force():
    n, s2 = 5, 2.3
    v = np.arange(-60, 61)
    g = discrete_gaussian_pmf(v, s2)
    P = discrete_gaussian(n, s2, variant="clamped").matrix
    for q in range(n + 1):
        for k in range(n + 1):
            want = sum(gv for vv, gv in zip(v, g, strict=True) if min(max(0, q + vv), n) == k)
            assert P[q, k] == pytest.approx(want, rel=1e-12, abs=1e-300)


def test_discrete_gaussian_is_exactly_normalised_over_z():
    noise = discrete_gaussian_noise(3.38)
    assert noise.pmf.sum() == pytest.approx(1.0, abs=1e-15)
    # exact variance by a direct sum on a huge window: strictly below sigma^2 only by e^-(2 pi^2 sigma^2)
    v = np.arange(-400, 401).astype(float)
    w = np.exp(-v * v / (2 * 3.38))
    assert noise.variance == pytest.approx(float(np.sum(v * v * w) / w.sum()), rel=1e-13)
    np.testing.assert_allclose(discrete_gaussian(6, 3.38).noise.sum(), 1.0, atol=1e-14)


@pytest.mark.parametrize("variant", ["modulo", "range"])
def test_exponential_mechanism_matches_gumbel_max_sampling(variant, rng):
    """Footnote 6: argmax of score + Gumbel(m, beta) noise; the location m must not matter."""
    n, beta, S = 6, 0.9, 200_000
    mech = exponential(n, beta, variant=variant)
    r = np.arange(n + 1)
    for q, loc in ((0, 1.5), (2, -3.0), (6, 0.0)):
        d = np.abs(r - q)
        score = -(np.minimum(d, n + 1 - d) if variant == "modulo" else d)
        G = rng.gumbel(loc, beta, size=(S, n + 1))
        freq = np.bincount(np.argmax(score + G, axis=1), minlength=n + 1) / S
        p = mech.matrix[q]
        assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / S) + 1e-12)
    # exact form: softmax of score / beta
    d = np.abs(r - 2)
    w = np.exp(-(np.minimum(d, n + 1 - d) if variant == "modulo" else d) / beta)
    np.testing.assert_allclose(mech.matrix[2], w / w.sum(), rtol=1e-13)


def test_exponential_modulo_is_additive_and_range_is_not():
    m = exponential(7, 1.3)
    assert m.is_modulo
    for q in range(8):
        np.testing.assert_allclose(m.matrix[q], np.roll(m.noise, q))
    r = exponential(7, 1.3, variant="range")
    assert not r.is_modulo and not np.allclose(r.matrix[1], np.roll(r.matrix[0], 1))


def test_exponential_extreme_beta_is_finite():
    assert np.all(np.isfinite(exponential(50, 1e-6).matrix))
    np.testing.assert_allclose(exponential(50, 1e-6).matrix, np.eye(51), atol=1e-300)


def test_count_mechanism_uses_the_optimal_alphas_and_has_error_rate_rho():
    n, rho, eps = 7, 0.3, 0.8
    mech = count_mechanism(n, rho, eps=eps)
    z = count_noise_pmf(optimal_alpha(3, rho, eps).alpha, rho)  # on -3..3
    want = np.zeros(n + 1)
    np.add.at(want, np.arange(-3, 4) % (n + 1), z)
    np.testing.assert_allclose(mech.noise, want, atol=1e-15)
    assert mech.error_rate() == pytest.approx(rho)
    assert mech.error_rate(reduce="worst") == pytest.approx(rho)
    clamped = count_mechanism(n, rho, eps=eps, variant="clamped")
    np.testing.assert_allclose(clamped.matrix.sum(axis=1), 1.0)
    assert clamped.matrix[0, 0] > 1 - rho  # the negative noise is clamped onto 0


def test_data_independent_mechanism():
    m = data_independent(7, 0.3)
    np.testing.assert_allclose(m.noise, [0.7] + [0.3 / 7] * 7)
    assert m.error_rate() == pytest.approx(0.3)
    # outputs other than q are uniform: randomised response on n+1 values
    assert np.allclose(m.matrix - np.diag(np.diag(m.matrix)), (1 - np.eye(8)) * 0.3 / 7)


# ---------------------------------------------------------------- errors


@given(st.sampled_from(["geometric", "gaussian", "exponential"]), st.integers(1, 12), st.floats(0.05, 0.95))
@settings(max_examples=40)
def test_errors_agree_with_the_design_module(family, n, t):
    value = {"geometric": t, "gaussian": 10 * t, "exponential": 5 * t}[family]
    mech = build(family, n, value)
    f = mech.noise
    errs = modulo_errors(f)
    assert mech.mse(distance="linear") == pytest.approx(errs["mse_mean"], rel=1e-12, abs=1e-14)
    assert mech.mse(distance="linear", reduce="worst") == pytest.approx(errs["mse_worst"], rel=1e-12, abs=1e-14)
    assert mech.mse(distance="circular") == pytest.approx(float(cost_vector("circular-mse", n) @ f), rel=1e-12)
    assert mech.mse(distance="noise") == pytest.approx(float(cost_vector("mse", n) @ f), rel=1e-12)
    assert mech.error_rate() == pytest.approx(1 - f[0])
    # modulo mechanism: the circular error does not depend on the true answer
    np.testing.assert_allclose(mech.mse(distance="circular", reduce="none"), mech.mse(distance="circular"))


def test_clamped_mse_by_hand():
    n, alpha = 3, 0.4
    P = geometric(n, alpha, variant="clamped").matrix
    want = [sum(P[q, k] * (k - q) ** 2 for k in range(n + 1)) for q in range(n + 1)]
    mech = geometric(n, alpha, variant="clamped")
    np.testing.assert_allclose(mech.mse(reduce="none"), want)
    assert mech.mse(reduce="worst") == pytest.approx(max(want))
    with pytest.raises(ValueError, match="distance='noise'"):
        mech.mse(distance="noise")


# ---------------------------------------------------------------- privacy


def test_geometric_on_the_integers_by_hand():
    """n = inf: PDP delta = P(eta <= 0) = 1/(1+alpha) below ln(1/alpha); DP delta = (1 - alpha e^eps)/(1+alpha)."""
    alpha = 0.7
    noise = geometric_noise(alpha)
    eps = np.array([0.05, 0.2, 0.35, 0.36, 1.0])
    below = eps < math.log(1 / alpha)
    np.testing.assert_allclose(noise.delta(eps, notion="pdp"), np.where(below, 1 / (1 + alpha), 0.0), atol=1e-15)
    dp = np.where(below, (1 - alpha * np.exp(eps)) / (1 + alpha), 0.0)
    np.testing.assert_allclose(noise.delta(eps, notion="dp"), dp, atol=1e-15)


def test_gaussian_on_the_integers_matches_the_count_module():
    eps = np.linspace(0.01, 3, 9)
    for s2 in (0.5, 3.38):
        np.testing.assert_allclose(
            discrete_gaussian_noise(s2).delta(eps), discrete_gaussian_delta(eps, s2), rtol=1e-9, atol=1e-15
        )


@pytest.mark.parametrize("notion", ["dp", "pdp"])
def test_modulo_delta_equals_the_matrix_accounting(notion):
    n = 6
    mech = discrete_gaussian(n, 1.7)
    nb = Neighborhood.bd(2)
    shifts = nb.resolve(n).ravel()
    q = np.arange(n + 1)
    pairs = np.concatenate([np.stack([q, (q - s) % (n + 1)], 1) for s in shifts])  # modular pairs
    eps = np.array([0.1, 0.5, 1.2])
    np.testing.assert_allclose(
        mech.delta(eps, notion=notion, neighborhood=nb),
        mechanism_delta(mech.matrix, pairs, eps, notion=notion),
        atol=1e-15,
    )


def test_clamped_dp_delta_brute_force_and_post_processing():
    n, eps = 4, 0.4
    for mech_inf, mech in (
        (geometric_noise(0.6), geometric(n, 0.6, variant="clamped")),
        (discrete_gaussian_noise(1.5), discrete_gaussian(n, 1.5, variant="clamped")),
    ):
        pairs = neighbour_pairs(n, Neighborhood.bd(1))
        assert mech.delta(eps) == pytest.approx(brute_dp(mech.matrix, pairs, eps), abs=1e-14)
        # clamping is post-processing: it cannot increase the DP delta of the n = inf mechanism
        assert mech.delta(eps) <= mech_inf.delta(eps) + 1e-15


def test_neighbour_pairs():
    assert neighbour_pairs(3, Neighborhood.bd(1, directed=True)).tolist() == [[1, 0], [2, 1], [3, 2]]
    assert len(neighbour_pairs(3, Neighborhood.bd(2))) == 2 * (3 + 2)
    with pytest.raises(ValueError, match="no pair"):
        neighbour_pairs(3, Neighborhood.sd(5))


def test_pdp_kadam_only_for_modulo():
    assert geometric(5, 0.5).delta(0.3, notion="pdp-kadam") >= geometric(5, 0.5).delta(0.3, notion="pdp")
    with pytest.raises(ValueError, match="modulo mechanisms only"):
        geometric(5, 0.5, variant="clamped").delta(0.3, notion="pdp-kadam")


# ---------------------------------------------------------------- fitting parameters


@pytest.mark.parametrize("family", ["geometric", "gaussian", "exponential"])
def test_match_parameter_mse(family):
    p = match_parameter(family, 8, 0.6101)
    assert build(family, 8, p).mse(distance="circular") == pytest.approx(0.6101, rel=1e-10)


def test_match_parameter_geometric_error_rate_against_closed_form():
    alpha = match_parameter("geometric", 7, 0.3, measure="er")
    assert 1 - wrapped_geometric(7, alpha)[0] == pytest.approx(0.3, rel=1e-10)
    assert match_parameter("independent", 7, 0.3, measure="er") == pytest.approx(0.3, rel=1e-10)
    assert match_parameter("count", 7, 0.3, measure="er", eps=1.0) == pytest.approx(0.3, rel=1e-10)


def test_match_parameter_unreachable():
    with pytest.raises(ValueError, match="out of reach"):
        match_parameter("independent", 4, 0.95, measure="er")  # uniform noise has ER 0.8


@pytest.mark.parametrize("family", FAMILIES)
def test_calibrate_is_the_least_noisy_feasible_parameter(family):
    n, eps, delta = 7, 0.9, 0.3
    p = calibrate(family, n, eps, delta, notion="dp")
    mech = build(family, n, p, eps=eps)
    assert mech.delta(eps) <= delta
    less = build(family, n, p * (1 - 1e-6), eps=eps)
    assert less.delta(eps) > delta - 1e-7  # a slightly less noisy one is (just) infeasible or at the boundary


def test_calibrate_geometric_dp_closed_form():
    """Wrapped geometric at large n: alpha = e^-eps is the boundary of pure eps-DP."""
    p = calibrate("geometric", 40, 1.0, 0.0, notion="dp")
    assert p == pytest.approx(math.exp(-1.0), rel=1e-6)


def test_calibrate_margin_keeps_the_pdp_boundary_on_the_safe_side():
    """Fig. 5's Gaussian at eps = 1: the least-noise PDP sigma^2 is 1/(2 eps) = 0.5, where f(0)/f(1) = e
    exactly and Definition 2's strict ">" is decided by rounding. With a margin m the calibrated noise has
    ln f(0)/f(1) <= eps (1 - m) in exact arithmetic (mpmath, 50 digits), and the MSE moves by ~1e-6."""
    mpmath = pytest.importorskip("mpmath")
    nb = Neighborhood.bd(1)
    plain = calibrate("gaussian", 8, 1.0, 0.3, notion="pdp", neighborhood=nb)
    safe = calibrate("gaussian", 8, 1.0, 0.3, notion="pdp", neighborhood=nb, margin=1e-6)
    assert plain == pytest.approx(0.5, abs=1e-12)  # on the boundary: the reason for the margin
    assert safe == pytest.approx(0.5 / (1 - 1e-6), rel=1e-9)
    mpmath.mp.dps = 50
    s2 = mpmath.mpf(safe)
    # wrapped modulo 9; every other term of the wrap is below e^-60 of these
    f0 = sum(mpmath.exp(-(mpmath.mpf(k * 9) ** 2) / (2 * s2)) for k in range(-3, 4))
    f1 = sum(mpmath.exp(-(mpmath.mpf(1 + k * 9) ** 2) / (2 * s2)) for k in range(-3, 4))
    assert mpmath.log(f0 / f1) <= mpmath.mpf(1) * (1 - mpmath.mpf("1e-6")) + mpmath.mpf("1e-15")
    for p in (plain, safe):  # both sides of the boundary have delta 0.218 in floating point
        assert discrete_gaussian(8, p).delta(1.0, notion="pdp") == pytest.approx(0.21793, abs=1e-5)
    assert discrete_gaussian(8, safe * (1 - 1e-5)).delta(1.0, notion="pdp") > 0.7  # below it: 0.782
    assert discrete_gaussian(8, safe).mse(distance="circular") - discrete_gaussian(8, plain).mse(
        distance="circular"
    ) == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match="margin"):
        calibrate("gaussian", 8, 1.0, 0.3, margin=1.5)


def test_calibrate_returns_nan_when_impossible():
    # pure eps-DP with eps = 1e-9 asks for noise within 1e-9 of uniform; alpha stops at 0.9999
    assert math.isnan(calibrate("geometric", 5, 1e-9, 0.0, notion="dp"))


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: geometric(5, 1.0), "alpha"),
        (lambda: geometric(5, 0.0), "alpha"),
        (lambda: geometric(5, 0.5, variant="wrap"), "variant"),
        (lambda: geometric(0, 0.5), "n"),
        (lambda: discrete_gaussian(5, -1.0), "sigma2"),
        (lambda: exponential(5, 0.0), "beta"),
        (lambda: exponential(5, 1.0, variant="clamped"), "variant"),
        (lambda: count_mechanism(7, 1.2, eps=1.0), "rho"),
        (lambda: count_mechanism(7, 0.3, eps=-1.0), "eps"),
        (lambda: build("count", 7, 0.3), "eps is required"),
        (lambda: build("laplace", 7, 0.3), "family"),
        (lambda: build("independent", 7, 0.3, variant="clamped"), "independent"),
        (lambda: data_independent(7, 1.5), "rho"),
        (lambda: geometric(5, 0.5).delta(1.0, notion="rdp"), "notion"),
        (lambda: geometric(5, 0.5).delta(1.0, neighborhood=[1]), "neighborhood"),
        (lambda: geometric(5, 0.5).mse(distance="l1"), "distance"),
        (lambda: geometric(5, 0.5).error_rate(reduce="median"), "reduce"),
        (lambda: geometric_noise(0.999999999), "too wide"),
        (lambda: calibrate("geometric", 5, 1.0, 1.5), "delta"),
        (lambda: match_parameter("geometric", 5, -0.1), "target"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
