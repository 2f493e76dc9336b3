"""The Laplace + Gaussian convolution on the reals: its k-fold accounting and its best Laplace share.

A real query of sensitivity ``Delta`` released as ``q + X`` with ``X = Y + G``, ``Y ~ Lap(b)`` and
``G ~ N(0, sigma^2)`` independent, of variance ``V = 2 b^2 + sigma^2`` with the Laplace share
``w = 2 b^2 / V`` (``w = 0`` the Gaussian, ``w = 1`` the Laplace). On the integers the composed designs
compare against the same family laid on Z (:func:`optnoise.design.composed_families.family_pmf`); this is
its continuous counterpart, the convolution baseline of :func:`~optnoise.mechanisms.real_baselines.\
composed_real_baselines`.

Density and distribution function (``a = sigma / b``, ``Phi`` the normal CDF)::

    f(x) = e^(a^2/2) / (4b) * [e^(-x/b) 2 Phi(x/sigma - a) + e^(x/b) 2 Phi(-x/sigma - a)]
    F(x) = Phi(x/sigma) - A(x)/2 + B(x)/2
    A(x) = e^(a^2/2 - x/b) Phi(x/sigma - a),   B(x) = e^(a^2/2 + x/b) Phi(-x/sigma - a)

(condition on ``G``: ``F(x) = E[P(Y <= x - G)]``, and ``E[e^(G/b) 1{G <= x}] = e^(a^2/2) Phi(x/sigma - a)``).
For ``x <= 0``, ``A/2 <= Phi(x/sigma)/2`` (``e^(-(x - G)/b) <= 1`` where ``G <= x``), so ``Phi - A/2`` loses at
most one bit and ``F`` is accurate in relative terms down to the far tail; for ``x > 0``,
``F(x) = 1 - F(-x)`` (symmetry), and interval masses are differences of the small side.

Accounting. ``f`` is log-concave (a convolution of log-concave densities), so the shift family has a
monotone likelihood ratio: the privacy loss ``l(x) = log f(x) - log f(x - Delta)`` is non-increasing, the
pair ``(X, X + Delta)`` dominates every shift ``|s| <= Delta`` (the power of the threshold test grows with
the shift), and by symmetry ``(X + Delta, X)`` has the same privacy loss distribution. Its PLD is built
**pessimistically** for dp-accounting (:func:`convolution_pld`): the loss is rounded *up* to the grid
``h Z`` (each bucket boundary ``x(t)`` is bracketed by bisection and its upper end kept, which moves mass
to larger losses only), the mass beyond ``R`` on the left is charged an infinite loss, and the mass beyond
``R`` on the right the smallest bucket. dp-accounting then composes it k times (its own pessimistic
truncation), so the reported eps or delta is never below the true one.

The best share. :func:`best_laplace_gaussian` minimises over ``w`` in [0, 1] by
:func:`~optnoise.design.composed_families.golden_share` (the grid 0, 1/4, .., 1, then golden-section
steps: the best share seen), the integer designs' search for their convolution candidate; at each share
the variance is fixed by the cap (``objective="epsilon"``) or found by
:func:`~optnoise.design.composed_families.bisect_smallest` on the accounted delta (``"distortion"``; the share
is searched on a grid :data:`COARSE_FACTOR` times coarser, as the integer designs' convolution candidate is,
and the best share alone calibrated on the fine grid: every reported value is the fine grid's).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import integrate, special

from optnoise.design.composed_families import bisect_smallest, gaussian_guess, golden_share

__all__ = [
    "LAPLACE_GAUSSIAN_DISCRETIZATION",
    "best_laplace_gaussian",
    "convolution_cdf",
    "convolution_logpdf",
    "convolution_pld",
    "convolution_scales",
]

#: The convolution's accounting grid (the Laplace baseline's): its k-fold eps is at most about h k above the exact.
LAPLACE_GAUSSIAN_DISCRETIZATION = 1e-4
#: The distortion objective searches the share at this many times the accounting grid (module docstring).
COARSE_FACTOR = 10.0
#: Far edge of the loss grid, in standard deviations of either part: the mass beyond is below ~1e-19.
_REACH = 9.5
#: Losses are tabled within +-LOSS_CAP: larger ones are charged an infinite loss, smaller ones -LOSS_CAP (both
#: pessimistic). A release losing more than 40 nats with non-negligible mass is far from any useful target.
LOSS_CAP = 40.0
#: Points of the x grid bracketing the bucket boundaries, and the bisection steps refining each bracket (to
#: ~2R / _GRID 2^-_BISECTIONS ~ 1e-10 R: only tightness depends on it, the upper end is kept whatever its width).
_GRID = 8193
_BISECTIONS = 22


def convolution_scales(var: float, share: float) -> tuple[float, float]:
    """``(b, sigma)`` of the member of variance ``var`` whose Laplace carries ``share`` of it."""
    return math.sqrt(share * var / 2.0), math.sqrt((1.0 - share) * var)


def convolution_logpdf(x: Any, b: float, sigma: float) -> np.ndarray:
    """``log f(x)`` of ``Lap(b) + N(0, sigma^2)`` (module docstring); either scale may be 0."""
    x = np.asarray(x, dtype=float)
    if sigma == 0.0:
        return -np.abs(x) / b - math.log(2.0 * b)
    if b == 0.0:
        return -0.5 * (x / sigma) ** 2 - math.log(sigma * math.sqrt(2.0 * math.pi))
    a = sigma / b
    left = -x / b + special.log_ndtr(x / sigma - a)
    right = x / b + special.log_ndtr(-x / sigma - a)
    return 0.5 * a * a - math.log(2.0 * b) + np.logaddexp(left, right)


def _lower_cdf(x: np.ndarray, b: float, sigma: float) -> np.ndarray:
    """``F(x)`` for ``x <= 0`` (positive terms up to a one-bit difference: module docstring)."""
    if sigma == 0.0:
        return 0.5 * np.exp(x / b)
    if b == 0.0:
        return special.ndtr(x / sigma)
    a = sigma / b
    A = np.exp(0.5 * a * a - x / b + special.log_ndtr(x / sigma - a))
    B = np.exp(0.5 * a * a + x / b + special.log_ndtr(-x / sigma - a))
    return special.ndtr(x / sigma) - 0.5 * A + 0.5 * B


def convolution_cdf(x: Any, b: float, sigma: float, *, upper: bool = False) -> np.ndarray:
    """``F(x) = P(X <= x)`` of ``Lap(b) + N(0, sigma^2)``, or ``P(X > x)`` with ``upper=True``."""
    x = np.asarray(x, dtype=float)
    z = -x if upper else x  # P(X > x) = F(-x)
    small = _lower_cdf(np.minimum(z, 0.0), b, sigma)
    big = 1.0 - _lower_cdf(np.minimum(-z, 0.0), b, sigma)
    return np.where(z <= 0.0, small, big)


def _loss(x: np.ndarray, b: float, sigma: float, sensitivity: float) -> np.ndarray:
    return convolution_logpdf(x, b, sigma) - convolution_logpdf(x - sensitivity, b, sigma)


def convolution_pld(
    b: float, sigma: float, *, sensitivity: float = 1.0, discretization: float = LAPLACE_GAUSSIAN_DISCRETIZATION
) -> Any:
    """dp-accounting's pessimistic PLD of one release ``q + Lap(b) + N(0, sigma^2)`` at ``sensitivity``.

    Module docstring: every loss rounded up to the grid ``discretization Z``, the far left tail charged an
    infinite loss. Either scale may be 0 (not both).
    """
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

    if b <= 0.0 and sigma <= 0.0:
        raise ValueError("the convolution needs a Laplace scale b > 0 or a Gaussian sigma > 0; got both 0")
    h = float(discretization)
    # far enough that each part's mass beyond is negligible; beyond R the bookkeeping stays pessimistic
    R = _REACH * (sigma + 4.0 * b) + sensitivity
    far = float(_loss(np.array(-R), b, sigma, sensitivity))
    top = min(far, LOSS_CAP)
    bottom = max(float(_loss(np.array(R), b, sigma, sensitivity)), -LOSS_CAP)
    i_lo, i_hi = math.ceil(bottom / h - 1e-9), math.ceil(top / h - 1e-9)
    t = np.arange(i_lo, i_hi + 1) * h
    # bracket each boundary between two points of an x grid (l is non-increasing along it), then bisect
    xs = np.linspace(-R, R, _GRID)
    j = np.searchsorted(-_loss(xs, b, sigma, sensitivity), -t, side="left")  # first grid point with l <= t
    lo, hi = xs[np.maximum(j - 1, 0)], xs[np.minimum(j, _GRID - 1)]
    for _ in range(_BISECTIONS):  # keep l(lo) > t >= l(hi)
        mid = 0.5 * (lo + hi)
        above = _loss(mid, b, sigma, sensitivity) > t
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    edge = hi  # the upper end of each bracket: mass moves to the larger loss only
    if far <= LOSS_CAP:  # the top bucket ends at -R (a flat loss, as the Laplace's, would blur its bisection)
        edge[-1] = -R  # left of the top bucket: an infinite loss
    # bucket i (loss rounded up to t_i) holds X in [edge_i, edge_{i-1}); the lowest bucket holds [edge_lo, inf)
    left = convolution_cdf(edge, b, sigma)  # P(X <= edge), accurate where edge <= 0
    right = convolution_cdf(edge, b, sigma, upper=True)  # P(X > edge), accurate where edge > 0
    masses = np.empty(t.size)
    masses[0] = right[0]
    inner = np.where(edge[:-1] > 0.0, right[1:] - right[:-1], left[:-1] - left[1:])
    masses[1:] = np.maximum(inner, 0.0)
    pmf = {int(i): float(p) for i, p in zip(range(i_lo, i_hi + 1), masses, strict=True) if p > 0.0}
    infinity = float(convolution_cdf(edge[-1:], b, sigma)[0])
    return PrivacyLossDistribution.create_from_rounded_probability(pmf, infinity, h, pessimistic_estimate=True)


@lru_cache(maxsize=64)
def _unit_mae(share: float) -> float:
    """``E|X|`` of the member of variance 1 with Laplace ``share`` (``2 int_0^inf P(X > x) dx``)."""
    b, sigma = convolution_scales(1.0, share)
    val, _ = integrate.quad(lambda x: float(convolution_cdf(np.array(x), b, sigma, upper=True)), 0.0, np.inf)
    return 2.0 * val


def _cost(var: float, share: float, metric: str) -> float:
    return var if metric == "mse" else math.sqrt(var) * _unit_mae(share)


def best_laplace_gaussian(
    *,
    compositions: int,
    delta: float,
    metric: str,
    sensitivity: float = 1.0,
    eps: float | None = None,
    max_distortion: float | None = None,
    discretization: float = LAPLACE_GAUSSIAN_DISCRETIZATION,
) -> tuple[float, float]:
    """The best Laplace + Gaussian convolution calibrated to a k-fold guarantee, and its Laplace share.

    With ``eps``: the least ``metric`` whose k-fold composition is (eps, delta)-DP. With ``max_distortion``:
    the least composed eps at ``delta`` of a member whose ``metric`` is the cap. Arguments checked by the
    caller (:func:`~optnoise.mechanisms.real_baselines.composed_real_baselines`).

    Returns
    -------
    (value, share) : the distortion (or eps) and the Laplace share of the variance that achieves it.
        Cached per argument set (the baselines and a figure asking for the share share one search).
    """
    return _best(int(compositions), float(delta), metric, float(sensitivity), eps, max_distortion, discretization)


@lru_cache(maxsize=64)
def _best(
    k: int,
    delta: float,
    metric: str,
    sensitivity: float,
    eps: float | None,
    max_distortion: float | None,
    discretization: float,
) -> tuple[float, float]:
    """:func:`best_laplace_gaussian` on hashable positional arguments (its cache)."""

    def pld(var: float, share: float, h: float = discretization) -> Any:
        b, sigma = convolution_scales(var, share)
        one = convolution_pld(b, sigma, sensitivity=sensitivity, discretization=h)
        return one.self_compose(k) if k > 1 else one

    if max_distortion is not None:
        cap = float(max_distortion)

        def eps_at(share: float) -> float:
            var = cap if metric == "mse" else (cap / _unit_mae(share)) ** 2
            return float(pld(var, share).get_epsilon_for_delta(delta))

        return golden_share(eps_at)
    assert eps is not None
    # the share searched on a coarse accounting grid (a tenth of the trials' cost), then calibrated on the fine one
    coarse = COARSE_FACTOR * discretization
    found: dict[float, float] = {}
    start = gaussian_guess(k, eps, delta, sensitivity)

    def least_var(share: float, h: float, begin: float, rtol: float, grow: float) -> float | None:
        return bisect_smallest(
            lambda v: pld(v, share, h).get_delta_for_epsilon(eps) <= delta, begin, rtol=rtol, grow=grow
        )

    def cost_at(share: float) -> float:
        nonlocal start
        var = least_var(share, coarse, start, 1e-3, 1.5)
        if var is None:
            return math.inf
        found[share] = start = var  # warm start the next share
        return _cost(var, share, metric)

    _, share = golden_share(cost_at)
    # a coarser grid is more pessimistic: the fine variance is at most the coarse one
    var = least_var(share, discretization, found[share], 1e-6, 1.02) if share in found else None
    return (math.inf, share) if var is None else (_cost(var, share, metric), share)
