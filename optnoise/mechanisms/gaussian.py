"""Gaussian mechanisms of the composition paper: calibration, zCDP, ordered counts, truncated Gaussians."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize, special, stats

from optnoise.engine.validation import check_delta, check_eps, check_finite, check_int, check_positive, shown
from optnoise.mechanisms.composition import as_returned, eps_values, kov_epsilon, log1mexp, zcdp_epsilon

__all__ = [
    "analytic_gaussian_delta",
    "analytic_gaussian_epsilon",
    "analytic_gaussian_sigma",
    "composed_gaussian_epsilon",
    "laplace_histogram_epsilon",
    "histogram_zcdp_rho",
    "gaussian_zcdp_epsilon",
    "gaussian_zcdp_sigma",
    "ordered_least_squares",
    "ordered_gaussian_counts",
    "truncated_gaussian_pdf",
    "truncated_gaussian_sample",
    "truncation_bound",
    "truncated_gaussian_top",
]


def _log_analytic_gaussian_delta(eps: np.ndarray, sigma: float, sens: float) -> np.ndarray:
    a = sens / (2 * sigma) - eps * sigma / sens
    b = -sens / (2 * sigma) - eps * sigma / sens
    la = special.log_ndtr(a)
    lb = special.log_ndtr(b)
    return la + log1mexp(np.minimum(eps + lb - la, 0.0))


def analytic_gaussian_delta(eps: Any, sigma: float, *, sensitivity: float = 1.0) -> Any:
    """delta(eps) of the Gaussian mechanism N(0, sigma^2) with L2 sensitivity D (Lemma 6.1, Balle-Wang).

    ``delta = Phi(D/(2 sigma) - eps sigma/D) - e^eps Phi(-D/(2 sigma) - eps sigma/D)``,
    computed in log space (exact, not a bound).
    """
    sigma = check_positive("sigma", sigma)
    sens = check_positive("sensitivity", sensitivity)
    e, scalar = eps_values(eps, "eps")
    return as_returned(np.exp(_log_analytic_gaussian_delta(e, sigma, sens)), scalar)


def analytic_gaussian_epsilon(sigma: float, delta: float, *, sensitivity: float = 1.0) -> float:
    """Smallest eps with the Gaussian mechanism (sigma, L2 sensitivity) (eps, delta)-DP (Lemma 6.1)."""
    sigma = check_positive("sigma", sigma)
    sens = check_positive("sensitivity", sensitivity)
    delta = check_delta(delta)
    if delta == 0:
        return math.inf
    log_d = math.log(delta)

    def f(x: float) -> float:
        return float(_log_analytic_gaussian_delta(np.array([x]), sigma, sens)[0]) - log_d

    if f(0.0) <= 0:
        return 0.0
    hi = 1.0
    while f(hi) > 0:
        hi *= 2.0
    return float(optimize.brentq(f, 0.0, hi, xtol=1e-14, rtol=1e-15, maxiter=500))


def analytic_gaussian_sigma(eps: float, delta: float, *, sensitivity: float = 1.0) -> float:
    """Smallest noise standard deviation making the Gaussian mechanism (eps, delta)-DP (Lemma 6.1).

    Bisection (Brent) on ``log sigma``; delta(eps) decreases in sigma.
    """
    eps = check_eps(eps, "eps", allow_zero=True)
    delta = check_delta(delta)
    sens = check_positive("sensitivity", sensitivity)
    if delta == 0:
        return math.inf
    if delta >= 1:
        return 0.0
    log_d = math.log(delta)

    def f(log_s: float) -> float:
        return float(_log_analytic_gaussian_delta(np.array([eps]), math.exp(log_s), sens)[0]) - log_d

    lo, hi = math.log(sens) - 1.0, math.log(sens) + 1.0
    while f(lo) < 0:
        lo -= 2.0
    while f(hi) > 0:
        hi += 2.0
    return math.exp(optimize.brentq(f, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=500))


def composed_gaussian_epsilon(sigma: float, k: int, delta: float, *, sensitivity: float = 1.0) -> float:
    """Overall eps of k Gaussian mechanisms analysed by Lemma 6.1 and optimal DP composition.

    Each mechanism is (eps0, delta0(eps0))-DP for every eps0 >= 0 (analytic
    Gaussian); composing k of them with :func:`kov_epsilon` at ``delta0`` and
    minimising over eps0 gives the smallest overall eps at ``delta``, as done
    for Fig. 5 of the paper (its citation [18], Murtagh-Vadhan, in the
    homogeneous case is KOV).
    """
    sigma = check_positive("sigma", sigma)
    k = check_int("k", k, minimum=1)
    delta = check_delta(delta)
    sens = check_positive("sensitivity", sensitivity)

    def total(eps0: float) -> float:
        d0 = float(analytic_gaussian_delta(eps0, sigma, sensitivity=sens))
        return float(kov_epsilon(eps0, k, delta, delta0=d0))

    # eps0 just large enough that k * delta0 < delta is needed; scan a log grid
    hi = analytic_gaussian_epsilon(sigma, delta / k, sensitivity=sens) * 4.0 + 1e-9
    grid = np.concatenate([[0.0], np.geomspace(hi * 1e-4, hi, 120)])
    vals = np.array([total(x) for x in grid])
    b = int(np.argmin(vals))
    if not math.isfinite(vals[b]):
        return math.inf
    lo_b, hi_b = grid[max(b - 1, 0)], grid[min(b + 1, grid.size - 1)]
    res = optimize.minimize_scalar(total, bounds=(lo_b, hi_b), method="bounded", options={"xatol": 1e-12})
    return float(min(vals[b], res.fun))


def laplace_histogram_epsilon(
    scale: float, delta: float, *, l0_sensitivity: int = 1, linf_sensitivity: float = 1.0
) -> float:
    """Overall eps of Laplace(scale) noise on every count of a histogram (Lemma 6.2).

    A neighbouring histogram differs in at most ``l0_sensitivity`` counts, each
    by at most ``linf_sensitivity``; only those positions carry privacy loss,
    and each is a ``linf/scale``-DP Laplace mechanism, so the optimal
    composition (:func:`kov_epsilon`) of ``l0_sensitivity`` of them applies.
    The noise variance is ``2 scale^2``.
    """
    scale = check_positive("scale", scale)
    l0 = check_int("l0_sensitivity", l0_sensitivity, minimum=1)
    linf = check_positive("linf_sensitivity", linf_sensitivity)
    delta = check_delta(delta)
    return float(kov_epsilon(linf / scale, l0, delta))


def histogram_zcdp_rho(sigma: float, *, l0_sensitivity: int = 1, linf_sensitivity: float = 1.0) -> float:
    """zCDP rho of N(0, sigma^2) noise on every count: ``l0 linf^2 / (2 sigma^2)`` (Lemmas 6.3, 6.4).

    Each changed count is ``linf^2/(2 sigma^2)``-zCDP and zCDP composes additively.
    """
    sigma = check_positive("sigma", sigma)
    l0 = check_int("l0_sensitivity", l0_sensitivity, minimum=1)
    linf = check_positive("linf_sensitivity", linf_sensitivity)
    return l0 * linf**2 / (2.0 * sigma**2)


def gaussian_zcdp_epsilon(
    sigma: float, delta: float, *, l0_sensitivity: int = 1, linf_sensitivity: float = 1.0
) -> float:
    """Overall eps of N(0, sigma^2) noise on every count of a histogram via zCDP (Lemma 6.3).

    ``rho = l0 linf^2/(2 sigma^2)`` and ``eps = rho + 2 sqrt(rho ln(1/delta))``,
    the conversion optimised over its free Renyi order (:func:`zcdp_epsilon`).
    """
    rho = histogram_zcdp_rho(sigma, l0_sensitivity=l0_sensitivity, linf_sensitivity=linf_sensitivity)
    return zcdp_epsilon(rho, delta)


def gaussian_zcdp_sigma(eps: float, delta: float, *, l0_sensitivity: int = 1, linf_sensitivity: float = 1.0) -> float:
    """Noise standard deviation at which Lemma 6.3 gives exactly (eps, delta)-DP.

    Solves ``rho + 2 sqrt(rho L) = eps`` (L = ln(1/delta)):
    ``sqrt(rho) = sqrt(L + eps) - sqrt(L)``, then ``sigma = linf sqrt(l0 / (2 rho))``.
    """
    eps = check_eps(eps, "eps")
    delta = check_delta(delta)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1) to calibrate sigma; got {shown(delta)}")
    l0 = check_int("l0_sensitivity", l0_sensitivity, minimum=1)
    linf = check_positive("linf_sensitivity", linf_sensitivity)
    big_l = math.log(1.0 / delta)
    # sqrt(L + eps) - sqrt(L) without cancellation
    root_rho = eps / (math.sqrt(big_l + eps) + math.sqrt(big_l))
    rho = root_rho**2
    return linf * math.sqrt(l0 / (2.0 * rho))


def ordered_least_squares(y: Any, *, nonnegative: bool = True) -> np.ndarray:
    """Least-squares fit ``c`` to ``y`` under the ordering ``c_i >= c_{i+1}`` for all i (Eq. (9), Algorithm 1).

    This is the maximum-likelihood estimate of the true counts given Gaussian
    noise and a known ranking. Written as non-negative least squares over the
    successive differences ``z_i = c_i - c_{i+1}`` (and ``z_n = c_n``), which
    :func:`scipy.optimize.nnls` solves when ``nonnegative`` (counts >= 0);
    otherwise ``z_n`` is left free and :func:`scipy.optimize.lsq_linear` is used.
    """
    y = np.asarray(y, dtype=float).ravel()
    if y.size == 0:
        raise ValueError("y must be a non-empty array of noisy counts")
    for v in y:
        check_finite("y", v)
    n = y.size
    upper = np.triu(np.ones((n, n)))  # c = upper @ z
    if nonnegative:
        z, _ = optimize.nnls(upper, y)
    else:
        lb = np.zeros(n)
        lb[-1] = -np.inf
        z = optimize.lsq_linear(upper, y, bounds=(lb, np.full(n, np.inf)), method="bvls", tol=1e-12).x
    return upper @ z


def ordered_gaussian_counts(
    counts: Any, sigma: float, *, rng: Any = None, nonnegative: bool = True, size: int | None = None
) -> np.ndarray:
    """Algorithm 1: Gaussian noise on counts listed in rank order, then :func:`ordered_least_squares`.

    ``counts`` are the true counts of the discovered elements in the order the
    discovery phase ranked them. With ``l0`` counts that a user can change by
    at most ``linf`` each, the release is ``histogram_zcdp_rho(sigma, ...)``-zCDP;
    the projection is post-processing.

    ``size``: number of independent releases; the noise of all of them is
    drawn in one call and the result has shape ``(size, len(counts))``
    (default: one release, shape ``(len(counts),)``).
    """
    c = np.asarray(counts, dtype=float).ravel()
    for v in c:
        check_finite("counts", v)
    sigma = check_positive("sigma", sigma)
    gen = np.random.default_rng(rng)
    if size is None:
        return ordered_least_squares(c + gen.normal(0.0, sigma, size=c.size), nonnegative=nonnegative)
    size = check_int("size", size, minimum=1)
    noisy = c + gen.normal(0.0, sigma, size=(size, c.size))
    return np.array([ordered_least_squares(row, nonnegative=nonnegative) for row in noisy])


def truncated_gaussian_pdf(x: Any, sigma: float, bound: float) -> Any:
    """Density of the symmetric truncated Gaussian ``TN(sigma, C)`` on [-C, C].

    ``exp(-x^2/(2 sigma^2)) / (sigma sqrt(2 pi) (2 Phi(C/sigma) - 1))`` for
    ``|x| <= C`` and 0 otherwise.
    """
    sigma = check_positive("sigma", sigma)
    bound = check_positive("bound", bound)
    x = np.asarray(x, dtype=float)
    z = bound / sigma
    dens = stats.norm.pdf(x, scale=sigma) / special.erf(z / math.sqrt(2.0))
    out = np.where(np.abs(x) <= bound, dens, 0.0)
    return float(out) if out.ndim == 0 else out


def truncated_gaussian_sample(sigma: float, bound: float, size: Any = None, *, rng: Any = None) -> Any:
    """Draws from ``TN(sigma, C)`` (scipy's truncnorm on [-C, C])."""
    sigma = check_positive("sigma", sigma)
    bound = check_positive("bound", bound)
    z = bound / sigma
    return stats.truncnorm.rvs(-z, z, scale=sigma, size=size, random_state=np.random.default_rng(rng))


def _log_ndtr_diff(a: float, b: float) -> float:
    """log(Phi(b) - Phi(a)) for a < b, accurate in both tails."""
    if a >= 0:  # mirror into the lower tail
        a, b = -b, -a
    if b <= 0:
        lb = float(special.log_ndtr(b))
        return lb + float(log1mexp(np.array(float(special.log_ndtr(a)) - lb)))
    return math.log(special.ndtr(b) - special.ndtr(a))


def _tn_overlap_failure(bound: float, sigma: float, linf: float) -> float:
    """log P(Z < -C + linf) for Z ~ TN(sigma, C): the outputs a neighbour shifted by linf cannot produce."""
    num = _log_ndtr_diff(-bound / sigma, (linf - bound) / sigma)
    den = math.log(special.erf(bound / (sigma * math.sqrt(2.0))))
    return num - den


def truncation_bound(sigma: float, delta: float, *, l0_sensitivity: int = 1, linf_sensitivity: float = 1.0) -> float:
    """Truncation value C of Algorithm 2, from Eq. (10).

    For one count shifted by ``linf``, the outputs that only one of the two
    truncated Gaussians can produce have probability
    ``P(Z < -C + linf) = (Phi((linf - C)/sigma) - Phi(-C/sigma)) / (2 Phi(C/sigma) - 1)``
    (the failure event of Lemma 6.4's proof). C is set so that this equals
    ``delta / l0``, so the union bound over the at most ``l0`` changed counts
    gives ``delta`` in total.
    """
    sigma = check_positive("sigma", sigma)
    delta = check_delta(delta)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1); got {shown(delta)}")
    l0 = check_int("l0_sensitivity", l0_sensitivity, minimum=1)
    linf = check_positive("linf_sensitivity", linf_sensitivity)
    target = math.log(delta / l0)

    def f(c: float) -> float:
        return _tn_overlap_failure(c, sigma, linf) - target

    lo = linf / 2.0 * (1 + 1e-12)  # failure probability is 1 here
    hi = linf + sigma
    while f(hi) > 0:
        hi = 2 * hi
    return float(optimize.brentq(f, lo, hi, xtol=1e-13, rtol=1e-15, maxiter=500))


def truncated_gaussian_top(
    counts: Any,
    sigma: float,
    delta: float,
    *,
    l0_sensitivity: int = 1,
    linf_sensitivity: float = 1.0,
    max_elements: int | None = None,
    rng: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 2: truncated-Gaussian counts above a fixed threshold (unknown domain, l0-restricted).

    Adds ``TN(sigma, C)`` noise, with C from :func:`truncation_bound`, to every
    non-zero count and returns the elements whose noisy count exceeds
    ``linf + C``. An element absent from one of two neighbouring histograms
    has count at most ``linf`` in the other, so its noisy count is at most
    ``linf + C`` and it is never returned: the unknown domain costs nothing.

    Lemma 6.4: the procedure is ``delta``-approximately
    ``l0 linf^2/(2 sigma^2)``-zCDP (see :func:`histogram_zcdp_rho`;
    :func:`setwise_zcdp_epsilon` converts it to DP and composes it).

    Parameters
    ----------
    counts : array_like
        The histogram (index = element id). Only non-zero counts are read.
    sigma : float
        Scale of the truncated Gaussian.
    delta : float
        The approximate-zCDP delta, in (0, 1).
    l0_sensitivity, linf_sensitivity : keyword-only
        How many counts one user can change, and by how much each.
    max_elements : int, optional, keyword-only
        The paper's ``d_bar``: how many elements the algorithm can read. The
        analysis needs the full histogram, so it must be at least the number
        of non-zero counts.
    rng : seed or Generator, optional

    Returns
    -------
    (indices, noisy_counts)
        Returned elements in decreasing order of noisy count.
    """
    h = np.asarray(counts, dtype=float).ravel()
    for v in h:
        check_positive("counts", v, allow_zero=True)
    bound = truncation_bound(sigma, delta, l0_sensitivity=l0_sensitivity, linf_sensitivity=linf_sensitivity)
    linf = float(linf_sensitivity)
    support = np.nonzero(h > 0)[0]
    if max_elements is not None:
        d_bar = check_int("max_elements", max_elements, minimum=1)
        if support.size > d_bar:
            raise ValueError(
                f"max_elements must be at least the number of non-zero counts ({support.size}) "
                f"for Lemma 6.4 to hold; got {d_bar}"
            )
    noisy = h[support] + truncated_gaussian_sample(sigma, bound, size=support.size, rng=rng)
    keep = noisy > linf + bound
    idx, vals = support[keep], noisy[keep]
    order = np.argsort(-vals, kind="stable")
    return idx[order], vals[order]
