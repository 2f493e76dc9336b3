"""Single-shift (SD) neighbourhoods: the closed-form optimal PMFs of Theorem 2 and its level curves."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from optnoise.engine.validation import check_int
from optnoise.mechanisms.closed_form.common import (
    check_rho,
    delta_array,
    eps_array,
    f0_gap,
    geometric_f0,
    increasing_root,
    scalar_or_array,
    xi,
)

__all__ = ["sd_cycle", "sd_boundaries", "sd_pmf", "sd_error_rate", "sd_level_eps", "sd_level_curve"]


def sd_cycle(n: int, mu: int) -> np.ndarray:
    """Noise values ``k mu mod (n+1)``, ``k = 0, ..., N_mu - 1`` (Lemma 2, Fig. 1).

    ``N_mu = (n+1) / gcd(n+1, mu)`` (Lemma 3). Position ``k`` holds the k-th
    largest mass ``f_(k)`` of the optimal PMF; noise values off the cycle get 0
    (18b).

    Parameters
    ----------
    n : int
        Largest query answer; answers are ``0..n``.
    mu : int
        The single shift ``mu_hat``, ``1 <= mu <= n``.

    Returns
    -------
    numpy.ndarray of int, shape (N_mu,)
    """
    n = check_int("n", n, minimum=1)
    mu = check_int("mu", mu, minimum=1, maximum=n)
    size = (n + 1) // math.gcd(n + 1, mu)
    return (np.arange(size) * mu) % (n + 1)


def sd_boundaries(n: int, mu: int, eps: Any) -> tuple[Any, Any]:
    """Region boundaries (19) of the SD error-rate curve (Theorem 2, Fig. 2).

    With ``m = N_mu - 1`` (``m = n`` in the coprime case, Remark 3), the k-th
    section, ``k = 0..m``, is the linear region ``delta_bar[k-1] < delta <
    delta_low[k]`` followed by the flat region ``delta_low[k] <= delta <=
    delta_bar[k]``::

        delta_bar[k] = e^{-(m-k-1) eps} (1 - e^-eps) / (1 - e^{-(m-k+1) eps}),  k in [m-1]   (19a)
        delta_bar[m] = 1,  delta_low[0] = 0                                                   (19b)
        delta_low[k] = e^{-(m-k) eps} (1 - e^-eps) / (1 - e^{-(m-k+1) eps}),    k in [m]_+   (19c)

    Remark 3 (non-coprime ``n+1`` and ``mu``) is applied as ``n -> N_mu - 1``
    (see the module notes): the printed "replace n with N_mu" is off by one.

    Parameters
    ----------
    n, mu : int
        Query range ``0..n`` and shift ``1 <= mu <= n``.
    eps : float or array_like
        Privacy parameter(s), > 0.

    Returns
    -------
    delta_low, delta_bar : numpy.ndarray, shape ``eps.shape + (m+1,)``
        Start and end of the flat region of each section ``k = 0..m``.
    """
    m = sd_cycle(n, mu).size - 1
    e = eps_array(eps)[..., None]
    i = m - np.arange(m + 1)  # i = m - k: the flat region keeps i+1 masses
    flat_f0 = geometric_f0(i, e)
    low = np.exp(-i * e) * flat_f0
    bar = np.exp(-np.maximum(i - 1, 0) * e) * flat_f0  # e^{eps} * low, without overflow at k = m
    low[..., 0] = 0.0
    bar[..., m] = 1.0
    return low, bar


def _sd_sorted(m: int, e: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Sorted masses ``f_(h)``, ``h = 0..m``: Lemma 3 and Theorem 2 (20)-(21)."""
    low, bar = sd_boundaries(m, 1, e)  # mu = 1 is coprime: the chain of m+1 masses
    # section k: delta_bar[k-1] < delta <= delta_bar[k]; section 0 contains delta = 0
    k = np.sum(bar[..., :-1] < d[..., None], axis=-1)
    lowk = np.take_along_axis(low, k[..., None], axis=-1)[..., 0]
    flat = d >= lowk
    i = m - k  # index of the smallest mass that is kept in the chain
    h = np.arange(m + 1)
    ee, ii, dd = e[..., None], i[..., None], d[..., None]
    # flat (20): f_(h) = delta_low_k e^{(m-k-h) eps} = f0 e^{-h eps}, h <= m-k
    head_flat = geometric_f0(ii, ee) * np.exp(-h * ee)
    # linear (21): f_(h) = delta e^{(m-k-h) eps}, h <= m-k (log space: delta may be tiny)
    # unselected branches may overflow or divide by zero; np.where discards them
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        head_lin = np.exp(np.log(dd) + (ii - h) * ee)
    # linear tail (21): e^{(m-h) eps} (e^eps - 1)/(e^{k eps} - 1) (1 - delta/delta_low_k)
    #                 = e^{-(k-1-(m-h)) eps} / xi_k * (1 - delta/delta_low_k)
    kk = k[..., None]
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        tail = np.exp(-(kk - 1 - (m - h)) * ee) / xi(np.maximum(kk, 1), ee) * (1.0 - dd / lowk[..., None])
    out = np.where(h <= ii, np.where(flat[..., None], head_flat, head_lin), np.where(flat[..., None], 0.0, tail))
    return out


def sd_pmf(n: int, mu: int, eps: Any, *, delta: Any = 0.0) -> np.ndarray:
    """Optimal noise PMF for the SD neighbourhood ``M = {mu}`` (Lemma 3, Theorem 2).

    Minimises the error rate ``1 - f(0)`` subject to (13) (``delta > 0``) or (14)
    (``delta = 0``) with the directed shift set ``{mu}``. On the cycle
    ``eta = k mu mod (n+1)`` (:func:`sd_cycle`) the masses are the sorted
    ``f_(k)``; every other noise value has mass 0 (18b).

    * ``delta = 0``, Lemma 3: ``f(k mu) = e^{-k eps} f(0)`` for
      ``k = 0..N_mu - 1`` and ``f(0) = (1 - e^-eps) / (1 - e^{-N_mu eps})``
      ((17a)-(17b) when ``gcd(n+1, mu) = 1``, where ``N_mu = n+1``;
      (18a)-(18c) otherwise).
    * ``delta > 0``, Theorem 2: (20) in the k-th flat region and (21) in the
      k-th linear region, with the boundaries (19) (:func:`sd_boundaries`).
      In the non-coprime case Remark 3 is applied as ``n -> N_mu - 1``.

    Inside a flat region the PMF is unique. In a linear region only ``f(0)``
    is: the masses ``f_(h)``, ``h > m-k`` (the "tail" of (21)) can be
    rearranged, and the paper's choice (21) is returned; at ``delta =
    delta_bar_k`` the flat PMF (returned) and the start of linear region
    ``k+1`` are both optimal.

    Parameters
    ----------
    n : int
        Query answers ``0..n`` (``n >= 1``).
    mu : int
        Shift ``mu_hat``, ``1 <= mu <= n``.
    eps : float or array_like
        Privacy parameter, > 0.
    delta : float or array_like, keyword-only
        PDP parameter in [0, 1]; broadcast against ``eps``.

    Returns
    -------
    numpy.ndarray, shape ``broadcast(eps, delta).shape + (n+1,)``
        ``f(eta)``, ``eta = 0..n``.
    """
    cyc = sd_cycle(n, mu)
    e, d = np.broadcast_arrays(eps_array(eps), delta_array(delta))
    sorted_ = _sd_sorted(cyc.size - 1, e, d)
    out = np.zeros(e.shape + (n + 1,))
    out[..., cyc] = sorted_
    return out


def sd_error_rate(n: int, mu: int, eps: Any, *, delta: Any = 0.0) -> Any:
    """Optimal error rate ``rho* = 1 - f*(0)`` for the SD neighbourhood (Lemma 3, Theorem 2).

    Piecewise linear and non-increasing in ``delta`` (Fig. 2). Arguments as in
    :func:`sd_pmf`; returns a float or an array of ``broadcast(eps, delta).shape``.
    """
    m = sd_cycle(n, mu).size - 1
    e, d = np.broadcast_arrays(eps_array(eps), delta_array(delta))
    return scalar_or_array(1.0 - _sd_sorted(m, e, d)[..., 0])


def sd_level_eps(n: int, mu: int, rho: float) -> np.ndarray:
    """Thresholds ``eps_k^rho`` of the SD level curve, (22), (23), (25).

    ``eps_k`` solves ``rho = 1 - (1 - e^-eps) / (1 - e^{-(m+1-k) eps})`` with
    ``m = N_mu - 1`` (``m = n`` when coprime): the value of ``eps`` at which the
    k-th flat region of Theorem 2 has error rate exactly ``rho``. ``eps_0`` is
    (22), ``eps_1`` is (23). When ``rho >= 1 - 1/(m+1-k)`` the k-th flat level
    already reaches ``1 - rho`` as ``eps -> 0`` and ``eps_k = 0``.

    Parameters
    ----------
    n, mu : int
    rho : float
        Target error rate in (0, 1).

    Returns
    -------
    numpy.ndarray, shape (m+1,)
        ``eps_k`` for ``k = 0..m``, non-increasing; ``eps_m = 0``.
    """
    m = sd_cycle(n, mu).size - 1
    target = 1.0 - check_rho(rho)
    out = np.zeros(m + 1)
    for k in range(m + 1):
        i = m - k
        if target <= 1.0 / (i + 1):  # level reached for every eps > 0
            continue
        out[k] = increasing_root(partial(f0_gap, geometric_f0, i, target))
    return out


def sd_level_curve(n: int, mu: int, rho: float, eps: Any) -> Any:
    """Smallest ``delta`` achieving error rate ``rho`` at ``eps``: Corollary 1, (24).

    ``delta^eps = e^{-(m-k) eps} (1 - rho)`` for ``eps_k <= eps < eps_{k-1}``
    (:func:`sd_level_eps`), and ``delta = 0`` for ``eps >= eps_0`` (22);
    ``m = N_mu - 1``. Equivalently: the ``delta`` at which the line of the k-th
    linear region of Theorem 2 reaches ``f(0) = 1 - rho``, where k is the
    first section whose flat level ``(1 - e^-eps)/(1 - e^{-(m-k+1) eps})`` is
    at least ``1 - rho``. The curve jumps at every ``eps_k`` (Fig. 2's flat
    regions).

    Parameters
    ----------
    n, mu : int
    rho : float
        Target error rate in (0, 1).
    eps : float or array_like
        Privacy parameter(s), > 0.

    Returns
    -------
    float or numpy.ndarray of ``eps.shape``
    """
    m = sd_cycle(n, mu).size - 1
    target = 1.0 - check_rho(rho)
    e = eps_array(eps)
    i = m - np.arange(m + 1)
    reach = geometric_f0(i, e[..., None]) >= target  # flat level of section k >= target
    k = np.argmax(reach, axis=-1)  # section k = m always reaches (level 1)
    delta = np.where(k == 0, 0.0, target * np.exp(-(m - k) * e))
    return scalar_or_array(delta)
