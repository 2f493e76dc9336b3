"""Differentially private partition selection (Desfontaines, Voss, Gipson, Mandayam, PoPETs 2022).

A partition with ``n`` unique users is released with probability ``pi(n)``
(Definition 3). Everything here is about that primitive:

* :func:`pi_opt` -- the optimal primitive in closed form (Theorem 1) with the
  special cases of Theorem 2; vectorised over ``n``, exact for huge ``n``.
* :func:`pi_opt_recursive` -- the recurrence of Lemma 1, an independent route
  (also for relations where a user changes a count by up to ``c``).
* :func:`partition_lp` -- the same optimum from the solver layer: maximise
  ``sum_n pi(n)`` subject to inequalities (1)-(4) for every neighbouring pair.
* The k-truncated symmetric geometric distribution and the truncated geometric
  mechanism (Definitions 6-8, Theorems 4-6): :func:`tsgd_pmf`,
  :func:`tsgd_sample`, :func:`tsgd_threshold_release`, :func:`pi_tsgd`.
* Baselines: Laplace thresholding (Definition 9) and Gaussian thresholding with
  the analytic Gaussian (Balle-Wang) and an optimised split of delta (Fig. 4).
* ``kappa > 1`` partitions per user by splitting the budget (Sec. 5, Fig. 4).
* Bounded (replace-one) DP: an exact check of the two-partition product
  mechanism and primitives that beat the factor-2 reduction of Sec. 5.
* :func:`select_partitions` -- the primitive applied to raw columns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, special, stats

from optnoise.engine.validation import check_choice, check_delta, check_eps, check_int, check_probability, shown

__all__ = [
    "crossover_points",
    "pi_opt",
    "pi_opt_continuous",
    "pi_opt_continuous_inverse",
    "pi_opt_recursive",
    "tsgd_k",
    "tsgd_pmf",
    "tsgd_sample",
    "truncated_geometric_mechanism",
    "tsgd_threshold_release",
    "pi_tsgd",
    "laplace_threshold",
    "pi_laplace",
    "GaussianThreshold",
    "gaussian_threshold",
    "pi_gaussian",
    "selection_percentile",
    "select_partitions",
]

METHODS = ("opt", "laplace", "gaussian")


# --------------------------------------------------------------------------
# Optimal primitive: closed form (Theorem 1, Theorem 2) and recursion (Lemma 1)
# --------------------------------------------------------------------------


def _log_n1_argument(eps: float, delta: float) -> float:
    """``ln((e^eps + 2 delta - 1) / ((e^eps + 1) delta))`` without overflow (eq. (6))."""
    # Divide numerator and denominator by e^eps so that large eps stays finite.
    return math.log1p((2.0 * delta - 1.0) * math.exp(-eps)) - math.log1p(math.exp(-eps)) - math.log(delta)


def _geom_sum(n: Any, eps: float) -> Any:
    """``(e^{n eps} - 1)/(e^eps - 1)`` for real ``n >= 0`` in logs (finite whenever the result is)."""
    nf = np.asarray(n, dtype=float)
    pos = np.where(nf > 0, nf, 1.0)  # any real n > 0; the placeholder 1 keeps log(0) out at n = 0
    with np.errstate(over="ignore"):
        val = np.exp((pos - 1.0) * eps + np.log(-np.expm1(-pos * eps)) - math.log(-math.expm1(-eps)))
    return np.where(nf > 0, val, 0.0)


def crossover_points(eps: float, delta: float) -> tuple[int, int]:
    """Crossover points ``(n1, n2)`` of Theorem 1 (Lemmas 4 and 5).

    ``pi_opt`` grows as ``delta (e^{n eps} - 1)/(e^eps - 1)`` up to ``n1``,
    approaches 1 geometrically up to ``n2`` and equals 1 after ``n2``.
    Requires ``eps > 0`` and ``0 < delta < 1``.
    """
    eps = check_eps(eps)
    delta = check_delta(delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1) for the crossover points of Theorem 1; got {shown(delta)}")
    n1 = 1 + math.floor(_log_n1_argument(eps, delta) / eps)
    pi_n1 = delta * float(_geom_sum(n1, eps))
    # ln(1 + (e^eps - 1)(1 - pi(n1))/delta), in logs (Lemma 5).
    rest = max(1.0 - pi_n1, 0.0)
    if rest == 0.0:
        return n1, n1
    log_term = eps + math.log1p(-math.exp(-eps)) + math.log(rest) - math.log(delta)
    n2 = n1 + math.floor(np.logaddexp(0.0, log_term) / eps)
    return n1, n2


def pi_opt(n: Any, eps: float, delta: float) -> Any:
    """Optimal (eps, delta)-DP partition selection primitive ``pi_opt(n)``.

    Theorem 1 for ``eps > 0``, ``0 < delta < 1``; Theorem 2 for the special
    cases: ``delta = 0`` gives ``pi = 0`` and ``eps = 0`` gives
    ``pi(n) = min(1, n delta)``. ``delta = 1`` gives ``pi(n) = 1`` for ``n >= 1``
    (Lemma 1 with ``delta = 1``).

    Parameters
    ----------
    n : int or array_like of int
        Numbers of unique users (``n >= 0``).
    eps : float
        ``eps >= 0``.
    delta : float
        ``0 <= delta <= 1``.

    Returns
    -------
    float or ndarray
        Release probabilities, the shape of ``n``. Stable for any ``n`` (no
        overflow: ``e^{n eps}`` is only formed for ``n <= n1``).
    """
    eps = check_eps(eps, allow_zero=True)
    delta = check_delta(delta)
    arr = np.asarray(n)
    if arr.size and (not np.issubdtype(arr.dtype, np.integer)):
        if not np.all(np.isfinite(arr)) or np.any(arr != np.floor(arr)):
            raise ValueError("n must contain non-negative integers")
    if arr.size and np.any(arr < 0):
        raise ValueError("n must contain non-negative integers")
    nf = arr.astype(float)
    scalar = arr.ndim == 0
    if delta == 0.0:
        out = np.zeros_like(nf)
    elif eps == 0.0:
        out = np.minimum(1.0, nf * delta)
    elif delta == 1.0:
        out = (nf >= 1).astype(float)
    else:
        n2 = crossover_points(eps, delta)[1]
        out = np.where(nf <= n2, _theorem1_real(nf, eps, delta), 1.0)
    return float(out) if scalar else out


def _d_over(eps: float, delta: float) -> float:
    """``delta / (e^eps - 1)`` as ``delta e^-eps / (1 - e^-eps)``, finite for any eps > 0."""
    return delta * math.exp(-eps) / -math.expm1(-eps)


def _theorem1_real(nf: np.ndarray, eps: float, delta: float) -> np.ndarray:
    """Theorem 1's two formulas at real ``n >= 0`` (``eps > 0``, ``0 < delta < 1``), capped at 1.

    ``delta (e^{n eps} - 1)/(e^eps - 1)`` up to ``n1``, then
    ``(1 - e^{-m eps})(1 + delta/(e^eps - 1)) + e^{-m eps} pi(n1)`` with
    ``m = n - n1``. The second formula reaches 1 at ``m* = ln(1 + (e^eps - 1)(1 - pi(n1))/delta)/eps``
    and ``n2 = n1 + floor(m*)``, so the cap is Theorem 1's "1 otherwise" at every integer.
    """
    n1 = crossover_points(eps, delta)[0]
    pi_n1 = delta * float(_geom_sum(n1, eps))
    low = delta * _geom_sum(np.minimum(nf, n1), eps)
    m = np.maximum(nf - n1, 0.0)
    mid = -np.expm1(-m * eps) * (1.0 + _d_over(eps, delta)) + np.exp(-m * eps) * pi_n1
    return np.where(nf <= n1, low, np.minimum(mid, 1.0))


def pi_opt_continuous(n: Any, eps: float, delta: float) -> Any:
    """Theorem 1's closed form of ``pi_opt`` extended to real ``n >= 0``.

    The two formulas of Theorem 1 evaluated at real ``n`` (``m = n - n1``
    real) and capped at 1: continuous and increasing, equal to :func:`pi_opt`
    at every integer. This is the percentile convention of the paper's
    Figs. 2-4 (:func:`selection_percentile`), the same one as the real-valued
    percentiles of the Laplace and Gaussian baselines.

    Parameters
    ----------
    n : float or array_like
        Real numbers of users, ``>= 0``.
    eps : float
        ``eps > 0``.
    delta : float
        ``0 < delta < 1``.
    """
    eps = check_eps(eps)
    delta = check_delta(delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1) for Theorem 1's closed form; got {shown(delta)}")
    arr = np.asarray(n, dtype=float)
    if arr.size and (not np.all(np.isfinite(arr)) or np.any(arr < 0)):
        raise ValueError("n must contain finite real numbers >= 0")
    out = _theorem1_real(arr, eps, delta)
    return float(out) if arr.ndim == 0 else out


def pi_opt_continuous_inverse(q: float, eps: float, delta: float) -> float:
    """The real ``n`` with ``pi_opt_continuous(n, eps, delta) = q``, for ``0 < q < 1`` (closed form).

    Below ``pi(n1)``: ``n = ln(1 + q (e^eps - 1)/delta)/eps``; above:
    ``n = n1 + ln((1 + d - pi(n1))/(1 + d - q))/eps`` with ``d = delta/(e^eps - 1)``.
    """
    q = check_probability("q", q)
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be in (0, 1); got {shown(q)}")
    eps = check_eps(eps)
    delta = check_delta(delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1) for Theorem 1's closed form; got {shown(delta)}")
    n1 = crossover_points(eps, delta)[0]
    pi_n1 = delta * float(_geom_sum(n1, eps))
    if q <= pi_n1:
        # ln(1 + q (e^eps - 1)/delta), with ln(e^eps - 1) = eps + ln(1 - e^-eps)
        return float(np.logaddexp(0.0, math.log(q) + eps + math.log(-math.expm1(-eps)) - math.log(delta))) / eps
    d = _d_over(eps, delta)
    return n1 + math.log((1.0 + d - pi_n1) / (1.0 + d - q)) / eps


def pi_opt_recursive(n_max: int, eps: float, delta: float, *, max_change: int = 1) -> np.ndarray:
    """``pi_opt(0..n_max)`` by the recurrence of Lemma 1 (eq. (5)).

    ``pi(n+1) = min(e^eps pi(n) + delta, 1 - e^-eps (1 - pi(n) - delta), 1)``.

    With ``max_change = c > 1`` (each user changes a count by at most ``c``,
    so counts ``n`` and ``n + j``, ``j <= c``, are neighbours) the minimum
    runs over ``pi(n+1-j)`` for ``j = 1..c``. The sequence stays monotone, so
    inequalities (2) and (3) hold, and the greedy choice is pointwise maximal
    by induction, exactly as in the proof of Lemma 1.
    """
    n_max = check_int("n_max", n_max, minimum=0)
    eps = check_eps(eps, allow_zero=True)
    delta = check_delta(delta)
    c = check_int("max_change", max_change, minimum=1)
    a = math.exp(eps) if eps < 700 else math.inf
    ia = math.exp(-eps)
    pi = np.zeros(n_max + 1)
    if c == 1:
        # plain floats: the loop is sequential, numpy per step would dominate
        x, out = 0.0, [0.0]
        for _ in range(n_max):
            up1 = a * x + delta if x > 0 else delta
            x = min(up1, 1.0 - ia * (1.0 - x - delta), 1.0)
            out.append(x)
        return np.asarray(out)
    for n in range(1, n_max + 1):
        prev = pi[max(0, n - c) : n]  # pi(n-j) for the j <= c that exist
        # pi(n - j) for j beyond n is pi of a negative count: not a neighbour.
        ups = np.where(prev > 0, a * np.where(prev > 0, prev, 1.0), 0.0) + delta
        downs = 1.0 - ia * (1.0 - prev - delta)
        pi[n] = min(ups.min(), downs.min(), 1.0)
    return pi


# --------------------------------------------------------------------------
# Truncated geometric mechanism (Definitions 6-8, Theorems 4-6)
# --------------------------------------------------------------------------


def tsgd_k(eps: float, delta: float) -> int:
    """``k = ceil( ln((e^eps + 2 delta - 1)/((e^eps + 1) delta)) / eps )`` (Definition 7).

    The smallest k with ``P[X = k] <= delta`` for the k-TSGD of parameter
    ``p = 1 - e^-eps``.
    """
    eps = check_eps(eps)
    delta = check_delta(delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1); got {shown(delta)}")
    return max(1, math.ceil(_log_n1_argument(eps, delta) / eps))


def tsgd_pmf(k: int, p: float) -> np.ndarray:
    """pmf of the k-TSGD (eq. (7)) on ``-k..k``: ``c (1-p)^|x|``.

    ``c = p / (1 + (1 - p) - 2 (1 - p)^{k+1})`` (Definition 6).
    """
    k = check_int("k", k, minimum=1)
    p = check_probability("p", p)
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1); got {shown(p)}")
    x = np.arange(-k, k + 1)
    logq = math.log1p(-p)
    c = p / (2.0 - p - 2.0 * math.exp((k + 1) * logq))
    return c * np.exp(np.abs(x) * logq)


def tsgd_sample(k: int, p: float, size: Any = None, *, rng: Any = None) -> Any:
    """Draw from the k-TSGD of parameter ``p``.

    Exact by construction (Sec. 3): a symmetric two-sided geometric (the
    difference of two i.i.d. geometric variables on ``{0, 1, ...}`` with
    success probability ``p``) conditioned on ``[-k, k]``, by rejection.
    """
    k = check_int("k", k, minimum=1)
    p = check_probability("p", p)
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1); got {shown(p)}")
    rng = np.random.default_rng(rng)
    shape = () if size is None else tuple(np.atleast_1d(size))
    total = int(np.prod(shape)) if shape else 1
    out = np.empty(total, dtype=np.int64)
    filled = 0
    while filled < total:
        m = max(16, int(1.2 * (total - filled)) + 16)
        x = rng.geometric(p, m) - rng.geometric(p, m)
        x = x[np.abs(x) <= k]
        take = min(x.size, total - filled)
        out[filled : filled + take] = x[:take]
        filled += take
    return int(out[0]) if not shape else out.reshape(shape)


def truncated_geometric_mechanism(mu: Any, eps: float, delta: float, *, rng: Any = None) -> Any:
    """``mu + X`` with X from the k-TSGD, ``p = 1 - e^-eps`` and k of Definition 7 (Theorem 4)."""
    eps = check_eps(eps)
    k = tsgd_k(eps, delta)
    mu = np.asarray(mu)
    if mu.size and not np.issubdtype(mu.dtype, np.integer):
        raise ValueError("mu must be integer-valued (an integer query with sensitivity 1)")
    noise = tsgd_sample(k, -math.expm1(-eps), size=mu.shape if mu.ndim else None, rng=rng)
    return mu + noise


def tsgd_threshold_release(counts: Any, eps: float, delta: float, *, rng: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """k-TSGD thresholded release (Definition 8, Theorem 6).

    Parameters
    ----------
    counts : array_like of int
        Unique-user counts ``c_q(D) > 0`` of the partitions present in the data.

    Returns
    -------
    (indices, noisy_counts)
        Positions in ``counts`` of the released partitions and their noisy
        counts ``c_q + X_q > k``; releasing the counts too is (eps, delta)-DP.
    """
    counts = np.asarray(counts)
    if counts.ndim != 1 or (counts.size and (not np.issubdtype(counts.dtype, np.integer) or counts.min() < 1)):
        raise ValueError("counts must be a 1-D array of positive integers (partitions present in the data)")
    k = tsgd_k(eps, delta)
    noisy = truncated_geometric_mechanism(counts, eps, delta, rng=rng)
    keep = np.nonzero(noisy > k)[0]
    return keep, noisy[keep]


def pi_tsgd(n: Any, eps: float, delta: float) -> Any:
    """Release probability of the thresholded release: ``P[n + X >= k + 1]`` (Theorem 5)."""
    eps = check_eps(eps)
    k = tsgd_k(eps, delta)
    pmf = tsgd_pmf(k, -math.expm1(-eps))
    # tail[j] = P[X >= j - k] for j = 0..2k+1
    tail = np.concatenate([np.cumsum(pmf[::-1])[::-1], [0.0]])
    arr = np.asarray(n)
    need = k + 1 - arr  # X must be >= need
    j = np.clip(need + k, 0, 2 * k + 1)
    out = tail[j]
    return float(out) if arr.ndim == 0 else out


# --------------------------------------------------------------------------
# Baselines: Laplace (Definition 9) and Gaussian thresholding (Fig. 4)
# --------------------------------------------------------------------------


def laplace_threshold(eps: float, delta: float) -> float:
    """Threshold of Laplace partition selection, ``1 - ln(2 delta) / eps`` (Definition 9)."""
    eps = check_eps(eps)
    delta = check_delta(delta)
    if not 0.0 < delta < 0.5:
        raise ValueError(f"delta must be in (0, 0.5) for Laplace thresholding; got {shown(delta)}")
    return 1.0 - math.log(2.0 * delta) / eps


def _laplace_cdf(x: np.ndarray, b: float) -> np.ndarray:
    return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0.0) / b), 1.0 - 0.5 * np.exp(-np.maximum(x, 0.0) / b))


def pi_laplace(n: Any, eps: float, delta: float) -> Any:
    """``P[n + Lap(1/eps) >= 1 - ln(2 delta)/eps]`` (Definition 9; real ``n`` allowed)."""
    t = laplace_threshold(eps, delta)
    arr = np.asarray(n, dtype=float)
    out = _laplace_cdf(arr - t, 1.0 / eps)  # P[L >= t - n] = F(n - t) by symmetry
    return float(out) if arr.ndim == 0 else out


@dataclass(frozen=True)
class GaussianThreshold:
    """Gaussian thresholding parameters (Fig. 4 of the partition paper).

    ``sigma`` comes from the analytic Gaussian (Balle-Wang) at
    ``(eps, delta_noise)`` with L2 sensitivity ``sqrt(kappa)``; a partition is
    kept when ``n + N(0, sigma^2) >= threshold``.
    """

    sigma: float
    threshold: float
    delta_noise: float
    delta_threshold: float
    kappa: int


def _gaussian_tau(eps: float, delta_noise: float, delta_thr: float, kappa: int) -> tuple[float, float]:
    from optnoise.mechanisms.gaussian import analytic_gaussian_sigma

    sigma = float(analytic_gaussian_sigma(eps, delta_noise, sensitivity=math.sqrt(kappa)))
    # A user whose kappa partitions hold only them makes each appear with
    # probability q = P[1 + Z >= tau]; 1 - (1 - q)^kappa <= delta_thr.
    q = -math.expm1(math.log1p(-delta_thr) / kappa)
    return sigma, 1.0 + sigma * float(stats.norm.isf(q))


def gaussian_threshold(eps: float, delta: float, *, kappa: int = 1, split: float | None = None) -> GaussianThreshold:
    """Gaussian thresholding with delta split to minimise the threshold (Fig. 4, [BW18]).

    Parameters
    ----------
    eps, delta : float
        Total budget; ``delta = delta_noise + delta_threshold``.
    kappa : int
        Partitions per user: every partition count moves by at most 1 and at
        most ``kappa`` of them move, so the L2 sensitivity is ``sqrt(kappa)``
        (non-weighted Gaussian thresholding).
    split : float, optional
        Fraction of delta given to the noise; by default the fraction that
        minimises the threshold (a bounded scalar search on the logit scale).
    """
    eps = check_eps(eps)
    delta = check_delta(delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1); got {shown(delta)}")
    kappa = check_int("kappa", kappa, minimum=1)
    if split is not None:
        split = check_probability("split", split)
        if not 0.0 < split < 1.0:
            raise ValueError(f"split must be in (0, 1); got {shown(split)}")
        s = split
    else:

        def tau(z: float) -> float:
            s_ = special.expit(z)
            return _gaussian_tau(eps, delta * s_, delta * (1.0 - s_), kappa)[1]

        grid = np.linspace(-12.0, 12.0, 49)
        vals = [tau(z) for z in grid]
        i = int(np.argmin(vals))
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
        res = optimize.minimize_scalar(tau, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6})
        s = float(special.expit(res.x if res.fun <= vals[i] else grid[i]))
    sigma, t = _gaussian_tau(eps, delta * s, delta * (1.0 - s), kappa)
    return GaussianThreshold(sigma, t, delta * s, delta * (1.0 - s), kappa)


def pi_gaussian(n: Any, eps: float, delta: float, *, kappa: int = 1) -> Any:
    """``P[n + N(0, sigma^2) >= threshold]`` for :func:`gaussian_threshold`."""
    g = gaussian_threshold(eps, delta, kappa=kappa)
    arr = np.asarray(n, dtype=float)
    out = stats.norm.cdf((arr - g.threshold) / g.sigma)
    return float(out) if arr.ndim == 0 else out


def selection_percentile(q: float, eps: float, delta: float, *, method: str = "opt", kappa: int = 1) -> float:
    """The real ``n`` with ``P[rho(n) = keep] = q`` (Figs. 2-4).

    One convention for every method: each release probability is read as a
    function of real ``n`` and solved for ``q``. For ``"opt"`` that function
    is Theorem 1's closed form at real ``n`` (:func:`pi_opt_continuous`,
    equal to ``pi_opt`` at every integer); for the continuous-noise baselines
    it is their own formula (for Laplace at q = 1/2, "simply the threshold").
    Since ``pi_opt >= pi_Lap`` at every integer (Theorem 1) and both are
    read the same way, the optimal percentile is the smaller one.

    ``kappa > 1`` divides the budget by kappa for ``"opt"`` and ``"laplace"``
    (Sec. 5); ``"gaussian"`` uses sensitivity ``sqrt(kappa)`` and the optimised
    delta split.
    """
    q = check_probability("q", q)
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be in (0, 1); got {shown(q)}")
    check_choice("method", method, METHODS)
    kappa = check_int("kappa", kappa, minimum=1)
    eps = check_eps(eps)
    delta = check_delta(delta)
    if method == "opt":
        return pi_opt_continuous_inverse(q, eps / kappa, delta / kappa)
    if method == "laplace":
        e, d = eps / kappa, delta / kappa
        b = 1.0 / e
        # P[n + L >= T] = F(n - T) = q
        x = b * math.log(2.0 * q) if q < 0.5 else -b * math.log(2.0 * (1.0 - q))
        return laplace_threshold(e, d) + x
    g = gaussian_threshold(eps, delta, kappa=kappa)
    return g.threshold + g.sigma * float(stats.norm.ppf(q))


# --------------------------------------------------------------------------
# Applying the primitive to raw columns
# --------------------------------------------------------------------------


def select_partitions(
    user_ids: Any,
    partition_keys: Any,
    eps: float,
    delta: float,
    *,
    max_partitions_per_user: int = 1,
    rng: Any = None,
) -> np.ndarray:
    """(eps, delta)-DP set of partition keys from raw ``(user, partition)`` rows.

    Counts the unique users of every partition and keeps each partition
    independently with probability ``pi_opt(n)`` (Definition 3, Theorem 3).
    Each user's contributions are first bounded to ``max_partitions_per_user``
    partitions chosen uniformly at random (a per-user step, so DP is kept);
    with ``kappa = max_partitions_per_user > 1`` the budget is split,
    ``pi_opt(., eps/kappa, delta/kappa)`` (Sec. 5).

    Parameters
    ----------
    user_ids, partition_keys : array_like
        Two columns of equal length (any sortable dtype).
    eps, delta : float
    max_partitions_per_user : int
    rng : numpy Generator or seed

    Returns
    -------
    ndarray
        The released partition keys (sorted).
    """
    eps = check_eps(eps, allow_zero=True)
    delta = check_delta(delta)
    kappa = check_int("max_partitions_per_user", max_partitions_per_user, minimum=1)
    users = np.asarray(user_ids)
    keys = np.asarray(partition_keys)
    if users.ndim != 1 or keys.ndim != 1 or users.shape != keys.shape:
        raise ValueError("user_ids and partition_keys must be 1-D columns of the same length")
    rng = np.random.default_rng(rng)
    if users.size == 0:
        return keys[:0]
    ukeys, ucode = np.unique(users, return_inverse=True)
    pkeys, pcode = np.unique(keys, return_inverse=True)
    pair = np.unique(ucode.astype(np.int64) * pkeys.size + pcode)  # distinct (user, partition)
    pu, pp = pair // pkeys.size, pair % pkeys.size
    if pu.size and np.bincount(pu).max() > kappa:
        # keep at most kappa partitions per user, uniformly at random
        order = np.lexsort((rng.random(pu.size), pu))
        pu, pp = pu[order], pp[order]
        start = np.concatenate([[0], np.nonzero(np.diff(pu))[0] + 1])
        rank = np.arange(pu.size) - np.repeat(start, np.diff(np.concatenate([start, [pu.size]])))
        pp = pp[rank < kappa]
    counts = np.bincount(pp, minlength=pkeys.size)
    present = np.nonzero(counts)[0]
    prob = pi_opt(counts[present], eps / kappa, delta / kappa)
    keep = present[rng.random(present.size) < prob]
    return pkeys[keep]
