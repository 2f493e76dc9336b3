"""Candidate noises for composition-targeted design, and their certified calibrations.

The families (:func:`family_pmf`) are the usual answers to "which noise for k releases":
the discrete Gaussian, the discrete Laplace and their convolution (a Laplace share ``w`` of
the variance), laid on the design's noise support. Each is centred at 0 with its log-masses
computed in closed form (the convolution by a direct sum of positive terms), so no
entry underflows to 0 and no output has an infinite privacy loss:

* modulo release: on the ring ``Z_{n+1}`` (per coordinate for vector queries, a product),
  as a function of the circular distance to 0 (the noise truncated at the antipode, which
  on a wide ring is the noise on Z up to a negligible tail);
* clamped release: on ``eta = -n..n``, truncated and renormalised.

The calibrations are 1-D bisections whose every trial is judged by a caller-given check
(for privacy, optnoise's accounting of the k-fold composition): a returned PMF has been
checked itself, never interpolated.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from optnoise.design.composed_bounds import SingleReleaseLP, single_release_lp
from optnoise.design.composed_search import temper
from optnoise.privacy import accounting

__all__ = [
    "FAMILIES",
    "Support",
    "bisect_largest",
    "bisect_smallest",
    "calibrate_family",
    "certified_mix",
    "clamp_anchor",
    "family_pmf",
    "family_within",
    "gaussian_guess",
    "golden_share",
    "lp_candidate",
]

#: Candidate families: discrete Gaussian, discrete Laplace, and their convolution.
FAMILIES = ("gaussian", "laplace", "convolution")
#: Log-masses are kept above the largest one minus this (masses >= e^-40 ~ 4e-18 of the mode): no output
#: has zero mass (no infinite loss) and every privacy loss is at most 40, so the accounting's loss grid stays
#: within its limit (80 / h points).
LOG_FLOOR = -40.0


class Support:
    """Where a design's noise lives: the signed offsets of every entry, per coordinate.

    ``offsets`` has shape ``(N, dim)`` (flat C-order of the design's PMF): the circular
    representative in ``(-(n+1)/2, (n+1)/2]`` for modulo noise, ``eta`` itself for clamped noise.
    """

    def __init__(self, n: int, shape: tuple[int, ...], cyclic: bool) -> None:
        # cyclic: modulo noise (the release's ``cyclic``); otherwise clamped noise on -n..n
        self.n, self.shape, self.cyclic = n, shape, cyclic
        if cyclic:
            N = n + 1
            grids = np.indices(shape).reshape(len(shape), -1).T
            self.offsets = np.where(grids > N // 2, grids - N, grids)
            self.radius = N // 2
        else:
            self.offsets = np.arange(-n, n + 1).reshape(-1, 1)
            self.radius = n
        self.size = self.offsets.shape[0]


def _scalar_log(kind: str, var: float, w: float, radius: int) -> np.ndarray:
    """Unnormalised log-masses on ``-radius..radius`` of one family member of variance ~ ``var``."""
    x = np.arange(-radius, radius + 1).astype(float)
    if kind == "gaussian":
        return -(x * x) / (2.0 * var)
    if kind == "laplace":
        return -_laplace_rate(var) * np.abs(x)
    if w <= 0.0:
        return _scalar_log("gaussian", var, 0.0, radius)
    if w >= 1.0:
        return _scalar_log("laplace", var, 0.0, radius)
    # Laplace(w var) * Gaussian((1-w) var): a direct sum of positive terms, in log space per output
    lap = _scalar_log("laplace", w * var, 0.0, radius)
    gau = _scalar_log("gaussian", (1.0 - w) * var, 0.0, radius)
    lap, gau = lap - lap.max(), gau - gau.max()
    keep = gau > -690.0  # the Gaussian's effective window: its other terms are below 1e-300
    j = np.flatnonzero(keep)
    out = np.full(x.size, -np.inf)
    for start in range(0, j.size, 64):  # (outputs x window) blocks: memory stays small
        jj = j[start : start + 64]
        src = np.arange(x.size)[:, None] - (jj[None, :] - radius)  # index of the Laplace term
        valid = (src >= 0) & (src < x.size)
        terms = np.where(valid, lap[np.clip(src, 0, x.size - 1)] + gau[jj][None, :], -np.inf)
        m = np.max(terms, axis=1)
        with np.errstate(divide="ignore"):
            part = m + np.log(np.sum(np.exp(terms - np.where(np.isfinite(m), m, 0.0)[:, None]), axis=1))
        out = np.logaddexp(out, part)
    return out


def _laplace_rate(var: float) -> float:
    """``t`` of ``exp(-t |x|)`` whose variance ``2 e^-t / (1 - e^-t)^2`` is ``var``."""
    e = ((var + 1.0) - math.sqrt(2.0 * var + 1.0)) / var
    return -math.log(e)


def family_pmf(kind: str, var: float, support: Support, w: float = 0.5) -> np.ndarray:
    """A flat PMF of family ``kind`` with scale ``var`` (per coordinate) on ``support``."""
    r = support.radius
    logs = _scalar_log(kind, float(var), float(w), r)
    z = np.zeros(support.size)
    for c in range(support.offsets.shape[1]):
        z += logs[support.offsets[:, c] + r]
    z -= z.max()
    f = np.exp(np.maximum(z, LOG_FLOOR))
    return f / f.sum()


def gaussian_guess(k: int, eps: float, delta: float, sensitivity: float) -> float:
    """Variance of the continuous Gaussian whose k-fold composition is exactly (eps, delta)-DP."""
    from scipy.stats import norm

    def d(s: float) -> float:
        mu = math.sqrt(k) * sensitivity / s
        return float(norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2))

    lo, hi = 1e-3, 1e6
    for _ in range(100):
        m = math.sqrt(lo * hi)
        lo, hi = (lo, m) if d(m) <= delta else (m, hi)
    return hi * hi


def bisect_smallest(
    ok: Callable[[float], bool],
    start: float,
    *,
    rtol: float = 1e-6,
    grow: float = 1.5,
    maximum: float = math.inf,
) -> float | None:
    """The smallest ``x > 0`` (to ``rtol``) with ``ok(x)``, for ``ok`` false below and true above a threshold.

    Returns a point where ``ok`` was seen true, or ``None`` when none was found up to ``maximum``.
    """
    start = min(start, maximum)
    lo, hi = start, start
    tries = 0
    if ok(hi):
        while tries < 60 and ok(lo / grow):
            lo /= grow
            tries += 1
        hi, lo = lo, lo / grow
    else:
        while tries < 60 and hi * grow <= maximum and not ok(hi * grow):
            hi *= grow
            tries += 1
        if tries >= 60 or hi * grow > maximum:
            return None
        lo, hi = hi, hi * grow
    while hi - lo > rtol * hi:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def bisect_largest(
    ok: Callable[[float], bool], start: float, *, rtol: float = 1e-7, grow: float = 1.05, floor: float = 1e-4
) -> float | None:
    """The largest ``x`` (to ``rtol``) with ``ok(x)``, for ``ok`` true below and false above a threshold.

    Returns a point where ``ok`` was seen true, or ``None`` when none was found above ``floor``.
    """
    lo = start
    while not ok(lo):
        lo /= grow
        if lo < floor:
            return None
    hi = lo * grow
    tries = 0
    while ok(hi):
        lo, hi = hi, hi * grow
        tries += 1
        if tries > 200:
            return lo
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def calibrate_temper(pmf: np.ndarray, ok: Callable[[np.ndarray], bool], *, rtol: float = 1e-7) -> np.ndarray | None:
    """The sharpest ``pmf^a`` (largest a) that passes ``ok``, or ``None``."""
    a = bisect_largest(lambda a: ok(temper(pmf, a)), 1.0, rtol=rtol)
    return None if a is None else temper(pmf, a)


def calibrate_family(
    kind: str,
    support: Support,
    k: int,
    eps: float,
    delta: float,
    *,
    w: float = 0.5,
    shifts: Any = (1, -1),
    discretization: float = accounting.DISCRETIZATION,
    rtol: float = 1e-7,
    start: float | None = None,
) -> tuple[np.ndarray, float] | None:
    """The member of a family with the least scale whose k-fold composition is (eps, delta)-DP.

    Every trial scale is judged by optnoise's accounting of the k-fold adaptive composition over
    ``shifts`` (:func:`optnoise.privacy.accounting.compose`, the accounting ``res.compose(k)``
    reports), so the returned PMF has itself been checked. This is how the composition baselines
    (discrete Gaussian, discrete Laplace, their convolution) are calibrated for a fair comparison.

    Returns
    -------
    (pmf, scale), or ``None`` when no scale up to ``1e12`` meets the target.
    """
    reach = float(np.max(np.abs(np.asarray(shifts, dtype=float))))

    def ok(V: float) -> bool:
        pmf = family_pmf(kind, V, support, w)
        with warnings.catch_warnings():  # tails below dp-accounting's truncation are part of the check
            warnings.simplefilter("ignore")
            comp = accounting.compose(pmf, shifts, k, discretization=discretization, warn=False)
        return comp.delta(eps) <= delta

    guess = start or gaussian_guess(k, eps, delta, reach)
    V = bisect_smallest(ok, guess, rtol=rtol, grow=1.1, maximum=1e12)
    return None if V is None else (family_pmf(kind, V, support, w), V)


def family_within(kind: str, support: Support, cost: np.ndarray, cap: float, *, w: float = 0.5) -> np.ndarray:
    """The member of a family with the largest scale whose expected ``cost`` is at most ``cap``.

    Bisection on the scale between ``cap / 100`` and ``4 cap`` (the scale is about the variance),
    to float resolution; ``cost`` is per entry of the support (e.g. the circular squared distance).
    """
    lo, hi = cap / 100.0, 4.0 * cap
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if float(cost.ravel() @ family_pmf(kind, mid, support, w)) <= cap else (lo, mid)
    return family_pmf(kind, lo, support, w)


def golden_share(
    value: Callable[[float], float], *, grid: Sequence[float] = (0.0, 0.25, 0.5, 0.75, 1.0), steps: int = 8
) -> tuple[float, float]:
    """``min`` over the Laplace share ``w`` in [0, 1] of ``value(w)``, and its argmin.

    The evenly spaced ``grid`` first, then ``steps`` golden-section steps in the bracket of one
    grid spacing either side of its best point; ``value`` is evaluated once per share (rounded to
    1e-4). Unimodality is not assumed: the best share seen is returned.
    """
    seen: dict[float, float] = {}

    def at(w: float) -> float:
        w = round(min(max(w, 0.0), 1.0), 4)
        if w not in seen:
            seen[w] = value(w)
        return seen[w]

    i = int(np.argmin([at(w) for w in grid]))
    step = grid[1] - grid[0] if len(grid) > 1 else 0.5
    a, b = max(0.0, grid[i] - step), min(1.0, grid[i] + step)
    g = (math.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    for _ in range(steps):
        if at(c) < at(d):
            b, d = d, c
            c = b - g * (b - a)
        else:
            a, c = c, d
            d = a + g * (b - a)
    best = min(seen, key=seen.__getitem__)
    return seen[best], best


def certified_mix(pmf: np.ndarray, anchor: np.ndarray, ok: Any) -> np.ndarray | None:
    """The least mixture ``(1 - lam) pmf + lam anchor`` that passes ``ok`` (``anchor`` itself must)."""
    if not ok(anchor):
        return None
    lo, hi = 0.0, 1.0
    if ok(pmf):
        return pmf
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if ok((1 - mid) * pmf + mid * anchor) else (mid, hi)
    return (1 - hi) * pmf + hi * anchor


def clamp_anchor(prob: Any, eps: float, lp_solver: str | SingleReleaseLP) -> np.ndarray:
    """A strictly private clamped release: the pure (eps/k)-DP LP optimum if it certifies, else the point at -n."""
    d = prob.design
    steps = math.floor(eps / (prob.k * prob.h))
    if steps >= 1:
        e0 = steps * prob.h * (1 - 1e-9)  # every loss <= e0 stays <= the grid point below eps/k
        single = d.replace(privacy="dp", compositions=None, discretization=None, eps=e0, delta=0.0)
        res = single_release_lp(lp_solver)(single, options=prob.options)
        if res.pmf is not None and prob.private(np.asarray(res.pmf).ravel(), eps):
            return np.asarray(res.pmf, dtype=float).ravel()
    return prob.safe()


def lp_candidate(prob: Any, eps: float, lp_solver: str | SingleReleaseLP) -> np.ndarray | None:
    """The single-release LP optimum at (eps0, delta / 2k), with the largest eps0 whose composition certifies."""
    d = prob.design
    single = {}

    def make(e0: float) -> np.ndarray | None:
        if e0 not in single:
            one = d.replace(
                privacy="dp", compositions=None, discretization=None, eps=e0, delta=prob.delta / (2 * prob.k)
            )
            res = single_release_lp(lp_solver)(one, options=prob.options)
            single[e0] = None if res.pmf is None else np.asarray(res.pmf, dtype=float).ravel()
        return single[e0]

    lo, hi = 0.0, eps
    best = None
    for _ in range(6):
        mid = 0.5 * (lo + hi)
        f = make(mid)
        if f is not None and prob.private(f, eps):
            lo, best = mid, f
        else:
            hi = mid
    return best
