"""Composition of pure-DP, bounded-range and concentrated-DP mechanisms.

Implements M. Cesar and R. Rogers, "Bounding, concentrating, and truncating:
unifying privacy loss composition for data analytics", ALT 2021 (referred to
below as *the paper*), together with the results it builds on:

* **Optimal DP composition** (Kairouz-Oh-Viswanath, the paper's Theorem 1):
  :func:`kov_delta`, :func:`kov_epsilon`.
* **Optimal non-adaptive composition of k eps-DP and T-k eps-BR mechanisms**
  (Theorem 3; k = 0 is Dong-Durfee-Rogers, the paper's Theorem 2):
  :func:`br_dp_delta`, :func:`br_dp_epsilon`, :func:`br_dp_t_candidates`.
* **Adaptive orderings of BR and DP rounds** (Sec. 5, Lemma 5.1 recursion,
  Lemmas 5.3-5.4): :func:`adaptive_delta`, :func:`adaptive_epsilon`.
* **Set-wise adaptive bounds** (Lemma 3.2, Lemma 3.3 / Eq. (3), Lemma 3.4):
  :func:`dp_expected_loss`, :func:`br_expected_loss`, :func:`setwise_epsilon`,
  :func:`zcdp_epsilon`, :func:`setwise_zcdp_epsilon`.
* **Noise for histograms** (Sec. 6): the analytic Gaussian (Lemma 6.1)
  :func:`analytic_gaussian_delta`, :func:`analytic_gaussian_epsilon`,
  :func:`analytic_gaussian_sigma`, :func:`composed_gaussian_epsilon`;
  Laplace with l0/l_inf sensitivities (Lemma 6.2)
  :func:`laplace_histogram_epsilon`; the Gaussian through zCDP (Lemma 6.3)
  :func:`histogram_zcdp_rho`, :func:`gaussian_zcdp_epsilon`,
  :func:`gaussian_zcdp_sigma`; order-constrained least squares (Algorithm 1,
  Eq. (9)) :func:`ordered_least_squares`, :func:`ordered_gaussian_counts`;
  the symmetric truncated Gaussian and Algorithm 2 (Eq. (10), Lemma 6.4)
  :func:`truncated_gaussian_pdf`, :func:`truncated_gaussian_sample`,
  :func:`truncation_bound`, :func:`truncated_gaussian_top`.

Worst cases. An eps-DP mechanism is dominated by binary randomized response
with privacy losses ``+eps`` and ``-eps``; an eps-BR mechanism by the
generalized randomized response ``RR_t`` (Definition 2.4) with losses ``t eps``
and ``-(1-t) eps``::

    Q_t(1) = (e^{(1-t) eps} - 1) / (e^eps - 1),   P_t(1) = e^{t eps} Q_t(1).

A delta is always the hockey stick ``H_a(P||Q) = E_P[(1 - e^{a - L})_+]`` of the
product of worst cases, ``L`` being the summed privacy loss. Everything that
enumerates output counts works with binomial log-probabilities, so it is
stable for thousands of mechanisms.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import optimize, special

from optnoise.engine.validation import (
    check_choice,
    check_delta,
    check_eps,
    check_finite,
    check_int,
    check_positive,
    check_probability,
)

__all__ = [
    "kov_delta",
    "kov_epsilon",
    "rr_t_probabilities",
    "br_dp_t_candidates",
    "br_dp_delta",
    "br_dp_epsilon",
    "adaptive_delta",
    "adaptive_epsilon",
    "dp_expected_loss",
    "br_expected_loss",
    "setwise_epsilon",
    "zcdp_epsilon",
    "setwise_zcdp_epsilon",
    "eps_values",
    "as_returned",
    "log1mexp",
]

#: Round types accepted by :func:`adaptive_delta`.
ROUND_TYPES = ("DP", "BR")


# ---------------------------------------------------------------------------
# small numerical helpers
# ---------------------------------------------------------------------------


def eps_values(value: Any, name: str) -> tuple[np.ndarray, bool]:
    """A scalar or 1-D array of eps-like values >= 0, each checked by check_eps."""
    if np.ndim(value) == 0:
        return np.array([check_eps(value, name, allow_zero=True)]), True
    flat = list(np.ravel(np.asarray(value, dtype=object)))
    if not flat:
        raise ValueError(f"{name} must be a number or a non-empty array of numbers >= 0")
    return np.array([check_eps(v, name, allow_zero=True) for v in flat], dtype=float), False


def as_returned(values: np.ndarray, scalar: bool) -> Any:
    """A float when the argument was a scalar (``scalar``, from :func:`eps_values`), else the array."""
    return float(values[0]) if scalar else values


def _logexpm1(x: np.ndarray | float) -> np.ndarray:
    """log(e^x - 1) for x >= 0 without overflow (-inf at 0)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return x + np.log(-np.expm1(-x))


def log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 - e^x) for x <= 0 (-inf at 0)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > -math.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def _log_binom(n: int) -> np.ndarray:
    i = np.arange(n + 1, dtype=float)
    return special.gammaln(n + 1.0) - special.gammaln(i + 1.0) - special.gammaln(n - i + 1.0)


def _xlog(count: np.ndarray, logp: np.ndarray | float) -> np.ndarray:
    """count * logp with 0 * (-inf) = 0 (an impossible outcome drawn zero times)."""
    count = np.asarray(count, dtype=float)
    logp = np.broadcast_to(np.asarray(logp, dtype=float), np.broadcast(count, logp).shape)
    with np.errstate(invalid="ignore"):
        return np.where(count == 0, 0.0, count * logp)


def _log_hockey_terms(log_p: np.ndarray, loss: np.ndarray, level: np.ndarray | float) -> np.ndarray:
    """log of P(o) (1 - e^{level - L(o)})_+, -inf where the loss does not exceed the level."""
    gap = np.asarray(level, dtype=float) - loss
    with np.errstate(invalid="ignore"):
        out = log_p + log1mexp(np.minimum(gap, 0.0))
    return np.where(gap < 0, out, -np.inf)


# ---------------------------------------------------------------------------
# KOV: optimal composition of k (eps0, delta0)-DP mechanisms (Theorem 1)
# ---------------------------------------------------------------------------


def _rr_log_terms(eps0: float, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """log P(ell), log Q(ell) and loss of the k-fold randomized response, ell = # of -eps outcomes."""
    ell = np.arange(k + 1, dtype=float)
    lb = _log_binom(k)
    norm = k * np.logaddexp(0.0, eps0)
    log_p = lb + (k - ell) * eps0 - norm
    log_q = lb + ell * eps0 - norm
    return log_p, log_q, eps0 * (k - 2 * ell)


def _kov_pure_delta(eps0: float, k: int, eps: np.ndarray) -> np.ndarray:
    log_p, _, loss = _rr_log_terms(eps0, k)
    terms = _log_hockey_terms(log_p[None, :], loss[None, :], eps[:, None])
    return np.exp(special.logsumexp(terms, axis=1))


def kov_delta(eps0: float, k: int, eps: Any, delta0: float = 0.0) -> Any:
    """Optimal delta(eps) of the k-fold composition of (eps0, delta0)-DP mechanisms.

    Kairouz-Oh-Viswanath (the paper's Theorem 1), valid for adaptive
    composition and exact at every ``eps`` (not only on the grid
    ``eps0 (k - 2i)``)::

        delta(eps) = 1 - (1 - delta0)^k (1 - sum_l C(k,l) [e^{eps0 (k-l)} - e^{eps + eps0 l}]_+ / (1 + e^eps0)^k)

    It is the hockey stick of k independent worst-case mechanisms (randomized
    response, plus a delta0 atom of infinite privacy loss). Terms are summed in
    log space, so k up to 10^4 and beyond is stable.

    Parameters
    ----------
    eps0 : float
        Per-mechanism epsilon, >= 0.
    k : int
        Number of mechanisms, >= 0.
    eps : float or array_like
        Overall epsilon(s), >= 0.
    delta0 : float, keyword-only
        Per-mechanism delta in [0, 1].

    Returns
    -------
    float or ndarray
        delta, with the shape of ``eps``.
    """
    eps0 = check_eps(eps0, "eps0", allow_zero=True)
    k = check_int("k", k, minimum=0)
    delta0 = check_delta(delta0, "delta0")
    e, scalar = eps_values(eps, "eps")
    pure = _kov_pure_delta(eps0, k, e)
    log_keep = k * np.log1p(-delta0) if delta0 < 1 else -np.inf
    out = -np.expm1(log_keep) + np.exp(log_keep) * pure
    return as_returned(np.clip(out, 0.0, 1.0), scalar)


def kov_epsilon(eps0: float, k: int, delta: Any, delta0: float = 0.0) -> Any:
    """Smallest overall epsilon of k (eps0, delta0)-DP mechanisms at overall ``delta``.

    Exact inverse of :func:`kov_delta`: between consecutive breakpoints
    ``eps0 (k - 2l)`` the curve is ``A - e^eps B`` (A, B being the P and Q mass
    of the outcomes whose loss exceeds eps), so the root is
    ``log(A - delta) - log(B)``, found in log space.

    Parameters
    ----------
    eps0, k, delta0
        As in :func:`kov_delta`.
    delta : float or array_like
        Overall delta(s) in [0, 1].

    Returns
    -------
    float or ndarray
        epsilon >= 0; ``inf`` where ``delta < 1 - (1 - delta0)^k`` (unreachable).
    """
    eps0 = check_eps(eps0, "eps0", allow_zero=True)
    k = check_int("k", k, minimum=0)
    delta0 = check_delta(delta0, "delta0")
    d_arr = np.asarray(delta, dtype=float)
    scalar = d_arr.ndim == 0
    deltas = np.array([check_delta(d, "delta") for d in np.atleast_1d(d_arr).ravel()])
    log_p, log_q, loss = _rr_log_terms(eps0, k)
    # outcomes with positive loss, in decreasing loss order l = 0, 1, ..., n-1
    n_pos = int(np.count_nonzero(loss > 0))
    cum_lp = np.logaddexp.accumulate(log_p[:n_pos])
    cum_lq = np.logaddexp.accumulate(log_q[:n_pos])
    bp = np.concatenate([loss[:n_pos], [0.0]])  # breakpoints, with 0 appended
    # d[j] = delta_pure(bp[j]); on [bp[j], bp[j-1]] outcomes 0..j-1 are active
    d = np.zeros(n_pos + 1)
    for j in range(1, n_pos + 1):
        d[j] = math.exp(cum_lp[j - 1]) * -math.expm1(bp[j] + cum_lq[j - 1] - cum_lp[j - 1])
    log_keep = k * math.log1p(-delta0) if delta0 < 1 else -math.inf
    base = -math.expm1(log_keep)  # mass of the delta0 atoms
    out = np.empty(deltas.size)
    for n, dlt in enumerate(deltas):
        if dlt < base:
            out[n] = math.inf
            continue
        target = (dlt - base) / math.exp(log_keep) if log_keep > -math.inf else math.inf
        if target >= d[-1]:
            out[n] = 0.0
            continue
        j = int(np.searchsorted(d, target, side="right"))  # first j with d[j] > target
        la, lb = cum_lp[j - 1], cum_lq[j - 1]
        root = la + math.log1p(-target / math.exp(la)) - lb  # A - e^x B = target
        out[n] = min(max(root, bp[j]), bp[j - 1])
    return as_returned(out, scalar)


# ---------------------------------------------------------------------------
# Theorem 3: non-adaptive composition of k eps-DP and T-k eps-BR mechanisms
# ---------------------------------------------------------------------------


def rr_t_probabilities(eps: float, t: Any) -> tuple[Any, Any]:
    """Output-1 probabilities ``(P_t(1), Q_t(1))`` of the generalized randomized response.

    Definition 2.4: ``Q_t(1) = (e^{(1-t) eps} - 1)/(e^eps - 1)`` and
    ``P_t(1) = e^{t eps} Q_t(1)``, so output 1 has privacy loss ``t eps`` and
    output 0 has ``-(1-t) eps``. ``t = 1/2`` is not randomized response: that
    is ``RR_t`` at eps-BR with ``eps = 2 eps_DP`` only up to reparametrisation;
    every eps-BR mechanism is dominated by ``RR_t`` for some t in [0, 1].
    """
    eps = check_eps(eps, "eps")
    t_arr = np.asarray(t, dtype=float)
    for v in np.atleast_1d(t_arr).ravel():
        check_probability("t", v)
    q1 = np.exp(_logexpm1((1 - t_arr) * eps) - _logexpm1(eps))
    p1 = np.exp(t_arr * eps + _logexpm1((1 - t_arr) * eps) - _logexpm1(eps))
    if t_arr.ndim == 0:
        return float(p1), float(q1)
    return p1, q1


def br_dp_t_candidates(eps: float, T: int, k: int, eps_g: float) -> np.ndarray:
    """The finite set of RR_t parameters over which Theorem 3 takes its maximum.

    With m = T - k BR mechanisms, outcome (i, j) (i of the k DP outputs at
    ``-eps``, j of the m BR outputs at ``-(1-t) eps``) has privacy loss
    ``eps (k - 2i + m t - j)``; the outcomes with loss above ``eps_g`` are
    always those with ``2i + j <= l`` for some l. The partial hockey-stick sum
    over ``2i + j <= l`` is a mixture of Dong-Durfee-Rogers partial sums that
    all peak at the same point (Lemma 4.5; Lemma 5.7 of Dong et al.)::

        t_l = (eps_g / eps - k + l + 1) / (m + 1),  rounded into [0, 1],

    for ``l = 0, ..., 2k + m``. The sup over t in [0, 1] is the max over these.
    """
    eps = check_eps(eps, "eps")
    T = check_int("T", T, minimum=1)
    k = check_int("k", k, minimum=0, maximum=T)
    eps_g = check_finite("eps_g", eps_g)
    m = T - k
    if m == 0:
        return np.array([0.5])
    ell = np.arange(2 * k + m + 1, dtype=float)
    return np.unique(np.clip((eps_g / eps - k + ell + 1.0) / (m + 1.0), 0.0, 1.0))


def _br_dp_hockey(eps: float, k: int, m: int, eps_g: float, t_values: np.ndarray) -> np.ndarray:
    """Hockey stick at level eps_g of RR^k x RR_t^m, one value per t (log-space enumeration)."""
    log_p_dp, _, loss_dp = _rr_log_terms(eps, k)
    j = np.arange(m + 1, dtype=float)
    lb = _log_binom(m)
    out = np.empty(t_values.size)
    chunk = max(1, int(4e6 // ((k + 1) * (m + 1))))
    for s in range(0, t_values.size, chunk):
        t = t_values[s : s + chunk, None]
        log_p1 = t * eps + _logexpm1((1 - t) * eps) - _logexpm1(eps)  # P_t(1)
        log_p0 = _logexpm1(t * eps) - _logexpm1(eps)  # P_t(0)
        log_p_br = lb + _xlog(m - j, log_p1) + _xlog(j, log_p0)  # (n_t, m+1)
        loss_br = eps * (m * t - j)
        log_p = log_p_dp[None, :, None] + log_p_br[:, None, :]
        loss = loss_dp[None, :, None] + loss_br[:, None, :]
        terms = _log_hockey_terms(log_p, loss, eps_g)
        out[s : s + chunk] = np.exp(special.logsumexp(terms.reshape(terms.shape[0], -1), axis=1))
    return out


def br_dp_delta(eps: float, T: int, k: int, eps_g: Any, *, t_grid: Any = None) -> Any:
    """Optimal delta(eps_g) of k eps-DP and T-k eps-BR mechanisms chosen non-adaptively.

    Theorem 3 of the paper: the worst case is randomized response for the DP
    mechanisms and ``RR_t`` with one common t for the BR mechanisms (Lemma 4.4),
    so ``delta = sup_t H_{eps_g}(RR^k x RR_t^{T-k})``. The hockey stick is
    enumerated over the output counts (i, j) in log space. ``k = T`` is KOV
    (Theorem 1) and ``k = 0`` is Dong-Durfee-Rogers (Theorem 2). The ordering
    of the mechanisms does not matter (Lemmas 4.2-4.3).

    Parameters
    ----------
    eps : float
        Common per-mechanism epsilon, > 0.
    T : int
        Total number of mechanisms, >= 1.
    k : int
        How many of them are eps-DP (the other T - k are eps-BR), 0 <= k <= T.
    eps_g : float or array_like
        Overall epsilon(s), >= 0.
    t_grid : array_like, optional, keyword-only
        Values of t to maximise over. Default: the finite candidate set of
        Theorem 3 (:func:`br_dp_t_candidates`), which gives the exact sup.
        Pass a dense grid to check it.

    Returns
    -------
    float or ndarray
        delta, with the shape of ``eps_g``.
    """
    eps = check_eps(eps, "eps")
    T = check_int("T", T, minimum=1)
    k = check_int("k", k, minimum=0, maximum=T)
    e, scalar = eps_values(eps_g, "eps_g")
    if t_grid is not None:
        grid = np.atleast_1d(np.asarray(t_grid, dtype=float)).ravel()
        if grid.size == 0:
            raise ValueError("t_grid must be a non-empty array of values in [0, 1]")
        for v in grid:
            check_probability("t_grid", v)
    out = np.empty(e.size)
    for n, level in enumerate(e):
        ts = br_dp_t_candidates(eps, T, k, level) if t_grid is None else grid
        out[n] = _br_dp_hockey(eps, k, T - k, level, ts).max()
    return as_returned(np.clip(out, 0.0, 1.0), scalar)


def _invert_decreasing(func, target: float, hi: float) -> float:
    """Smallest x in [0, hi] with func(x) <= target, for a continuous non-increasing func."""
    if func(0.0) <= target:
        return 0.0
    if func(hi) > target:
        return math.inf
    return float(optimize.brentq(lambda x: func(x) - target, 0.0, hi, xtol=1e-13, rtol=1e-15, maxiter=500))


def br_dp_epsilon(eps: float, T: int, k: int, delta: float, *, t_grid: Any = None) -> float:
    """Smallest overall epsilon of k eps-DP and T-k eps-BR non-adaptive mechanisms at ``delta``.

    Inverts :func:`br_dp_delta` (continuous and non-increasing in eps_g) by
    Brent's method on [0, T eps]; at ``delta = 0`` the answer is ``T eps``.
    """
    eps = check_eps(eps, "eps")
    T = check_int("T", T, minimum=1)
    k = check_int("k", k, minimum=0, maximum=T)
    delta = check_delta(delta)
    return _invert_decreasing(lambda x: br_dp_delta(eps, T, k, x, t_grid=t_grid), delta, T * eps)


# ---------------------------------------------------------------------------
# Sec. 5: adaptive orderings of BR and DP rounds (Lemma 5.1 recursion)
# ---------------------------------------------------------------------------


def _golden_max(fun, lo: np.ndarray, hi: np.ndarray, iters: int) -> np.ndarray:
    """Vectorised golden-section search for the max of ``fun`` on [lo, hi] (elementwise)."""
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo.astype(float), hi.astype(float)
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = fun(c), fun(d)
    for _ in range(iters):
        left = fc >= fd  # the max lies in [a, d]
        b = np.where(left, d, b)
        a = np.where(left, a, c)
        new_c = np.where(left, b - g * (b - a), d)
        new_d = np.where(left, c, a + g * (b - a))
        fp = fun(np.where(left, new_c, new_d))  # one new point per element
        fc, fd = np.where(left, fp, fd), np.where(left, fc, fp)
        c, d = new_c, new_d
    return np.maximum(fc, fd)


class _Recursion:
    """delta_r(a) = sup_t sum_y P_t(y) delta_{r-1}(a - L_t(y)), delta_0(a) = [1 - e^a]_+ (Lemma 5.1)."""

    def __init__(self, eps: float, order: Sequence[str], n_grid: int, n_refine: int):
        self.eps = eps
        self.order = list(order)
        self.n_grid = n_grid
        self.n_refine = n_refine
        self.p_dp = 1.0 / (1.0 + math.exp(-eps))  # RR: P(+eps)
        self.grid = np.linspace(0.0, 1.0, n_grid)
        # number of rounds after i when they are all DP (then round i's sup is exact), else None
        self.dp_tail = [
            (len(self.order) - i - 1) if all(r == "DP" for r in self.order[i + 1 :]) else None
            for i in range(len(self.order))
        ]

    def value(self, i: int, a: np.ndarray) -> np.ndarray:
        if i == len(self.order):
            return -np.expm1(np.minimum(a, 0.0))
        eps = self.eps
        if self.order[i] == "DP":
            return self.p_dp * self.value(i + 1, a - eps) + (1 - self.p_dp) * self.value(i + 1, a + eps)

        def expect(t: np.ndarray, a_b: np.ndarray) -> np.ndarray:
            p0 = np.exp(_logexpm1(t * eps) - _logexpm1(eps))  # P_t(0), loss -(1-t) eps
            return (1 - p0) * self.value(i + 1, a_b - t * eps) + p0 * self.value(i + 1, a_b + (1 - t) * eps)

        tail = self.dp_tail[i]
        if tail is not None:
            # the last BR round: Theorem 3 with one BR and `tail` DP mechanisms at level a,
            # whose sup over t is attained on the candidate set (valid for any real level)
            ell = np.arange(2 * tail + 2, dtype=float)
            t = np.clip((a[..., None] / eps - tail + ell + 1.0) / 2.0, 0.0, 1.0)
            return expect(t, a[..., None]).max(axis=-1)
        t = np.broadcast_to(self.grid, a.shape + (self.n_grid,))
        vals = expect(t, a[..., None])
        best = np.argmax(vals, axis=-1)
        lo = self.grid[np.maximum(best - 1, 0)]
        hi = self.grid[np.minimum(best + 1, self.n_grid - 1)]
        refined = _golden_max(lambda tt: expect(tt, a), lo, hi, self.n_refine)
        return np.maximum(vals.max(axis=-1), refined)


def _check_order(order: Any) -> list[str]:
    if isinstance(order, str):
        raise ValueError("order must be a sequence of round types such as ('DP', 'BR', 'BR'), not a string")
    seq = [check_choice("order", str(r).upper() if isinstance(r, str) else r, ROUND_TYPES) for r in order]
    if not seq:
        raise ValueError("order must contain at least one round ('DP' or 'BR')")
    return seq


def adaptive_delta(eps: float, order: Sequence[str], eps_g: Any, *, n_grid: int = 201, n_refine: int = 60) -> Any:
    """Optimal delta(eps_g) for a fixed order of adaptively selected eps-DP and eps-BR rounds.

    Evaluates the recursion of Lemma 5.1 (Dong et al.)::

        delta_r(a) = sup_t sum_y P_t(y) delta_{r-1}(a - L_t(y)),   delta_0(a) = [1 - e^a]_+,

    from the first round (outermost, chosen before any output) to the last.
    A BR round is ``RR_t`` whose t may depend on everything seen so far (that
    is, on the remaining level a); a DP round is randomized response and has
    no t. For the last BR round (only DP rounds after it) the sup over t is
    exact: it is Theorem 3 with one BR mechanism at level a, attained on the
    finite candidate set of :func:`br_dp_t_candidates`. Every earlier BR round
    takes its sup on a grid of ``n_grid`` points, refined by golden-section
    search around the best grid point. The cost grows like
    ``n_grid ** (number of BR rounds - 1)``: meant for small T (up to about 5).

    Parameters
    ----------
    eps : float
        Common per-round epsilon, > 0.
    order : sequence of {"DP", "BR"}
        Round types, first round first. E.g. ``("BR", "DP", "BR")``.
    eps_g : float or array_like
        Overall epsilon(s) >= 0.
    n_grid, n_refine : int, keyword-only
        Grid size for t and number of golden-section steps.

    Returns
    -------
    float or ndarray
        delta, with the shape of ``eps_g``.

    Notes
    -----
    Proposition 1: BR rounds all at the end is the worst order. Proposition 2
    and Corollary 5.1: with a single BR round the order does not matter and
    Theorem 3 (:func:`br_dp_delta` with k = T-1) applies. Lemmas 5.3-5.4: with
    T = 3 and two BR rounds the orders differ for small eps_g.
    """
    eps = check_eps(eps, "eps")
    seq = _check_order(order)
    n_grid = check_int("n_grid", n_grid, minimum=3)
    n_refine = check_int("n_refine", n_refine, minimum=0)
    e, scalar = eps_values(eps_g, "eps_g")
    rec = _Recursion(eps, seq, n_grid, n_refine)
    out = rec.value(0, e.copy())
    return as_returned(np.clip(out, 0.0, 1.0), scalar)


def adaptive_epsilon(eps: float, order: Sequence[str], delta: float, *, n_grid: int = 201, n_refine: int = 60) -> float:
    """Smallest overall epsilon at ``delta`` for a fixed order of adaptive DP/BR rounds.

    Inverts :func:`adaptive_delta` by Brent's method on [0, T eps].
    """
    eps = check_eps(eps, "eps")
    seq = _check_order(order)
    delta = check_delta(delta)
    return _invert_decreasing(
        lambda x: adaptive_delta(eps, seq, x, n_grid=n_grid, n_refine=n_refine), delta, len(seq) * eps
    )


# ---------------------------------------------------------------------------
# Set-wise adaptive composition (Lemmas 3.2-3.4, Eq. (3))
# ---------------------------------------------------------------------------


def dp_expected_loss(eps: float) -> float:
    """Largest expected privacy loss of an eps-DP mechanism, ``eps (e^eps - 1)/(e^eps + 1)`` (Lemma 3.2).

    It is the KL divergence of randomized response, ``eps tanh(eps/2)``.
    """
    eps = check_eps(eps, "eps", allow_zero=True)
    return eps * math.tanh(eps / 2.0)


def br_expected_loss(eps: float) -> float:
    """Largest expected privacy loss of an eps-BR mechanism (Lemma 3.2, Dong et al.).

    ``eps/(e^eps - 1) - 1 + ln((e^eps - 1)/eps)``, the sup over t of the KL
    divergence of ``RR_t``; about ``eps^2/8`` for small eps (a series is used
    below 1e-3, where the closed form cancels).
    """
    eps = check_eps(eps, "eps", allow_zero=True)
    if eps < 1e-3:
        return eps * eps / 8.0 - eps**4 / 576.0
    return eps / math.expm1(eps) - 1.0 + float(_logexpm1(eps)) - math.log(eps)


def _param_list(name: str, values: Any, width: int) -> np.ndarray:
    arr = np.asarray(values if values is not None else [], dtype=float)
    if width == 1:
        arr = arr.reshape(-1)
        for v in arr:
            check_eps(v, name, allow_zero=True)
        return arr
    arr = arr.reshape(-1, width) if arr.size else np.zeros((0, width))
    for row in arr:
        for v in row:
            check_positive(name, v, allow_zero=True)
    return arr


def setwise_epsilon(delta: float, *, dp: Any = (), br: Any = (), cdp: Any = ()) -> float:
    """Overall epsilon under set-wise adaptive composition of DP, BR and CDP mechanisms.

    Lemma 3.3 with the parameters of Lemma 3.2, i.e. Eq. (3): the analyst may
    pick the class and the parameter of each round adaptively, from
    preregistered sets, without replacement. With per-round mean ``mu`` and
    variance proxy ``v`` of the privacy loss (``E exp(lam (L - mu)) <= exp(lam^2 v / 2)``),

    * eps-DP: ``mu = eps (e^eps - 1)/(e^eps + 1)``, ``v = eps^2`` (loss range 2 eps, Hoeffding),
    * eps-BR: ``mu = eps/(e^eps - 1) - 1 + ln((e^eps - 1)/eps)``, ``v = eps^2/4`` (range eps),
    * (mu, tau)-CDP (Dwork-Rothblum): ``mu``, ``v = tau^2``,

    and ``eps_g = sum mu + sqrt(2 ln(1/delta) sum v)``.
    Equivalently ``sum mu + 2 sqrt(ln(1/delta) sum c)`` with the Hoeffding
    constants ``c = v/2`` (``eps^2/2``, ``eps^2/8``, ``tau^2/2``). All-DP gives
    the advanced composition bound with the Kairouz et al. mean; all-BR gives
    Corollary 3.1 of Dong et al.

    Parameters
    ----------
    delta : float
        Overall delta in (0, 1].
    dp, br : sequence of float, keyword-only
        The eps of each DP / BR mechanism.
    cdp : sequence of (mu, tau) pairs, keyword-only
        Parameters of each (mu, tau)-CDP mechanism.
    """
    delta = check_delta(delta)
    if delta == 0:
        raise ValueError("delta must be in (0, 1] for the set-wise bound; got 0")
    dp_e = _param_list("dp", dp, 1)
    br_e = _param_list("br", br, 1)
    cdp_p = _param_list("cdp", cdp, 2)
    mean = sum(dp_expected_loss(x) for x in dp_e) + sum(br_expected_loss(x) for x in br_e) + float(cdp_p[:, 0].sum())
    var = float(np.sum(dp_e**2) + np.sum(br_e**2) / 4.0 + np.sum(cdp_p[:, 1] ** 2))
    return mean + math.sqrt(2.0 * var * math.log(1.0 / delta))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """epsilon of a rho-zCDP mechanism at ``delta`` (Bun-Steinke; Lemma 2.3 of the paper).

    ``eps = rho + 2 sqrt(rho ln(1/delta))``. This is the optimum over the
    Renyi order alpha > 1 of ``alpha rho + ln(1/delta)/(alpha - 1)``, the free
    parameter of the zCDP-to-DP conversion.
    """
    rho = check_positive("rho", rho, allow_zero=True)
    delta = check_delta(delta)
    if delta == 0:
        return math.inf if rho > 0 else 0.0
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def setwise_zcdp_epsilon(delta: float, rho: Any, *, deltas: Any = None) -> tuple[float, float]:
    """Set-wise adaptive composition of approximate zCDP mechanisms (Lemma 3.4).

    If round i is ``delta_i``-approximately ``rho_i``-zCDP (Definition 2.7) and
    the analyst picks the rounds' parameters adaptively from the preregistered
    set, the interaction is ``(sum rho + 2 sqrt(sum rho ln(1/delta)), delta + sum delta_i)``-DP
    (a union bound over the failure events, as in Lemma 8.8 of Bun-Steinke).

    Returns
    -------
    (eps_g, delta_total)
    """
    delta = check_delta(delta)
    rhos = _param_list("rho", rho, 1)
    ds = np.zeros_like(rhos) if deltas is None else np.asarray(deltas, dtype=float).reshape(-1)
    if ds.shape != rhos.shape:
        raise ValueError(f"deltas must have one entry per rho; got {ds.size} and {rhos.size}")
    for d in ds:
        check_delta(d, "deltas")
    return zcdp_epsilon(float(rhos.sum()), delta), float(min(1.0, delta + ds.sum()))


# ---------------------------------------------------------------------------
# Symmetric truncated Gaussian and Algorithm 2 (Eq. (10), Lemma 6.4)
