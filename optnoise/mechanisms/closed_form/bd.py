"""Bounded-difference (BD) neighbourhoods: the closed-form optima of Theorem 3, its regions and level curves."""

from __future__ import annotations

import math
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from optnoise.engine.validation import check_eps, check_int
from optnoise.mechanisms.closed_form.common import (
    check_rho,
    delta_array,
    eps_array,
    f0_gap,
    increasing_root,
    scalar_or_array,
    staircase_f0,
    xi,
)

__all__ = [
    "BDRegions",
    "bd_step_lengths",
    "bd_phi0",
    "bd_alpha_beta",
    "bd_boundaries",
    "bd_pmf",
    "bd_error_rate",
    "bd_level_curve",
    "bd_level_eps",
]


# --------------------------------------------------------------------------
# bounded difference (BD) neighbourhood: Lemma 4, Theorem 3, Corollary 2
# --------------------------------------------------------------------------
def _bd_br(n: int, mu_bar: int) -> tuple[int, int]:
    """``(b, r)`` of (26), ``n = b mu_bar + r``."""
    n = check_int("n", n, minimum=1)
    mu_bar = check_int("mu_bar", mu_bar, minimum=1, maximum=n)
    return divmod(n, mu_bar)


def _bd_range(n: int, mu_bar: int, *, verified: bool = True) -> tuple[int, int]:
    """``(b, r)``, refusing ``(n, mu_bar)`` where Theorem 3 is not stated (or not true)."""
    b, r = _bd_br(n, mu_bar)
    if b + r >= mu_bar:
        raise ValueError(
            f"Theorem 3 needs b + r < mu_bar, where n = b*mu_bar + r; got n={n}, mu_bar={mu_bar} "
            f"(b={b}, r={r}). Allowed: n//mu_bar + n%mu_bar < mu_bar. Without it only delta=0 "
            "(Lemma 4) has a closed form; solve the MILP (privacy='pdp-kadam') instead"
        )
    if verified and b > 3:
        raise ValueError(
            f"Theorem 3 fails for b = n//mu_bar >= 4 (its flat region (h, j) = (3, 1) leaks more "
            f"than (37c) states); got n={n}, mu_bar={mu_bar} (b={b}). Allowed: n//mu_bar <= 3 "
            "with b + r < mu_bar; solve the MILP (privacy='pdp-kadam') otherwise"
        )
    return b, r


def _bd_hj(b: int, h: int, j: int) -> tuple[int, int]:
    h = check_int("h", h, minimum=0, maximum=max(b - 1, 0))
    j = check_int("j", j, minimum=0 if h == 0 else 1, maximum=h)
    return h, j


def _bd_hj_list(b: int) -> list[tuple[int, int]]:
    """Flat regions in increasing delta: (0, 0), then (h, j), h in [b-1]_+, j in [h]_+."""
    return [(0, 0)] + [(h, j) for h in range(1, b) for j in range(1, h + 1)]


def bd_step_lengths(n: int, mu_bar: int, h: int = 0, j: int = 0, *, linear: bool = False) -> tuple[int, ...]:
    """Step lengths ``l_i`` of the BD staircase: Lemma 4, (31) and (38).

    Group i holds ``l_i`` consecutive noise values, starting with ``l_0 = 1``
    (``eta = 0``); in a flat region all of them have mass ``phi_0 e^{-i eps}``.

    * ``h = j = 0`` (flat region 0, Lemma 4): ``(1, mu_bar, ..., mu_bar, r)``
      with ``b`` steps of ``mu_bar``; any ``n, mu_bar``.
    * flat region ``(h, j)``, ``h in [b-1]_+``, ``j in [h]_+`` (31):
      ``mu_bar`` for ``i <= b-h``; ``mu_bar - 1`` for ``b-h < i <= b`` except
      ``i = b-h+j+1`` (length ``mu_bar`` when ``j != h``); ``l_{b+1} = r+h-u_hj``
      with ``u_hj = 1`` for ``j != h`` and 0 for ``j = h`` (32).
    * ``linear=True``: the paper's linear region ending in flat region
      ``(h, j)`` (38): group ``i = b-h+j+1`` is a singleton, the ``mu_bar - 1``
      groups run over ``i in [b-h+1 : b+1]`` minus the singleton (the printed
      ``[b-h+1 : b]`` leaves ``l_{b+1}`` undefined when ``j < h``) and
      ``l_{b+2} = r+h-1``. These are the lengths of the printed PMF (39);
      :func:`bd_pmf` returns a different optimum in linear regions (see there).

    A length may be 0 (``r = 0``); it is kept so that index i always carries
    ``phi_0 e^{-i eps}``. For ``h >= 1`` Theorem 3's range ``b + r < mu_bar`` is
    required; for ``b >= 4`` these are the printed lengths, which the MILP does
    not confirm for ``j <= h - 2`` (see :func:`bd_boundaries`).

    Parameters
    ----------
    n, mu_bar : int
        ``n = b mu_bar + r`` (26).
    h, j : int
        Region index of Theorem 3 (``h = j = 0``: Lemma 4).
    linear : bool, keyword-only
        Lengths (38) of the linear region instead of the flat region (31).

    Returns
    -------
    tuple of int
        ``(l_0, l_1, ...)``, summing to ``n+1``.
    """
    if h == 0 and j == 0 and not linear:
        b, r = _bd_br(n, mu_bar)
        return (1,) + (int(mu_bar),) * b + (r,)  # Lemma 4, (28)
    b, r = _bd_range(n, mu_bar, verified=False)
    h, j = _bd_hj(b, h, j)
    if h == 0:
        raise ValueError("h must be >= 1 for a linear region; the region before flat 0 is empty")
    split = b - h + j + 1
    if not linear:
        u = 1 if j != h else 0  # (32)
        mid = [mu_bar if (i == split and j != h) else mu_bar - 1 for i in range(b - h + 1, b + 1)]
        return (1,) + (mu_bar,) * (b - h) + tuple(mid) + (r + h - u,)
    mid = [1 if i == split else mu_bar - 1 for i in range(b - h + 1, b + 2)]
    return (1,) + (mu_bar,) * (b - h) + tuple(mid) + (r + h - 1,)


def bd_phi0(n: int, mu_bar: int, h: int, j: int, eps: Any) -> Any:
    """``f*(0) = phi_0^k`` in the flat region ``(h, j)``: (29) and (34).

    ``phi_0^k = 1 / sum_i l_i e^{-i eps}`` with the lengths (31)
    (:func:`bd_step_lengths`); ``h = j = 0`` is Lemma 4's (29),
    ``(1 + mu_bar sum_{i=1}^b e^{-i eps} + r e^{-(b+1) eps})^{-1}``. The second
    form of (34), ``(mu_bar alpha + beta)^{-1}``, is :func:`bd_alpha_beta`.

    Returns
    -------
    float or numpy.ndarray of ``eps.shape``
    """
    return scalar_or_array(staircase_f0(bd_step_lengths(n, mu_bar, h, j), eps_array(eps)))


def bd_alpha_beta(n: int, mu_bar: int, h: int, j: int, eps: Any) -> tuple[Any, Any]:
    """``alpha_hj``, ``beta_hj`` of (35)-(36), corrected, with ``phi_0^k = 1/(mu_bar alpha + beta)`` (34).

    ``alpha = e^-eps xi_b`` and
    ``beta = 1 + e^{-(b-h+1) eps} (u_hj e^{-j eps} - xi_h) + (r+h-u_hj) e^{-(b+1) eps}``,
    ``xi_a = sum_{i<a} e^{-i eps}``. The printed (35)-(36) put the
    ``u_hj``-dependence as ``-(1-u_hj) e^{-(b-h+j+1) eps}`` into ``alpha`` and
    an unconditional ``+e^{-(b-h+j+1) eps}`` into ``beta``; (62) only gives that
    when the index ``b-h+j+1`` lies in ``[b-h+1 : b]``, i.e. ``j < h``. For
    ``j = h`` the printed denominator is short by ``(mu_bar - 1) e^{-(b+1) eps}``
    and disagrees with the MILP (e.g. ``n=9, mu_bar=4, eps=1``: printed 0.35364,
    MILP and first form of (34) 0.33590).
    """
    b, r = _bd_range(n, mu_bar, verified=False)
    h, j = _bd_hj(b, h, j)
    if h == 0:
        raise ValueError("h must be >= 1; for h = j = 0 use Lemma 4 (bd_phi0)")
    e = eps_array(eps)
    u = 1 if j != h else 0
    alpha = np.exp(-e) * xi(b, e)
    beta = 1.0 + np.exp(-(b - h + 1) * e) * (u * np.exp(-j * e) - xi(h, e)) + (r + h - u) * np.exp(-(b + 1) * e)
    return scalar_or_array(alpha), scalar_or_array(beta)


class BDRegions(NamedTuple):
    """Flat regions of Theorem 3 in increasing ``delta``, one entry per region k.

    Region k is flat, ``f*(0) = phi0[k]``, for ``delta_low[k] <= delta <=
    delta_bar[k]``; before it (k >= 1) lies the linear region
    ``delta_bar[k-1] < delta < delta_low[k]`` with the same ``(h, j)``, where
    ``f*(0) = delta e^{(b-h) eps} / xi_j`` (39). After the last one,
    ``delta_bar[-1] < delta <= 1``, ``f*(0) = delta`` (40).
    """

    h: np.ndarray
    j: np.ndarray
    delta_low: np.ndarray
    delta_bar: np.ndarray
    phi0: np.ndarray


def bd_boundaries(n: int, mu_bar: int, eps: float, *, as_printed: bool = False) -> BDRegions:
    """Region boundaries (37) of Theorem 3 (Figs. 4, 12b) for one ``eps``.

    ``k = h(h-1)/2 + j`` indexes the flat regions ``(h, j)``, ``h in [b-1]_+``,
    ``j in [h]_+``, after region 0 (Lemma 4)::

        delta_bar_{h,j} = phi_0^k e^{-(b-h) eps} xi_{j+1},   j in [h-1]                      (37a)
        delta_bar_{h,h} = phi_0^k e^{-(b-h-1) eps},  delta_bar_{0,0} = phi_0 e^{-(b-1) eps}    (37b)
        delta_low_{h,j} = phi_0^k e^{-(b-h) eps} xi_j                                         (37c)

    Checked against the MILP (13), the theorem holds for ``b <= 3`` (with its
    ``b + r < mu_bar``) with one amendment:

    * The line ``f(0) = delta`` of segment b (40) is feasible as soon as
      ``delta`` exceeds the current flat level. If a flat region would run past
      its own level (``delta_bar_k > phi0[k]``, which happens for ``b = 3`` and
      ``eps < ln((1+sqrt 5)/2)`` in region ``(2, 1)``), the optimum there is
      ``f*(0) = max(phi0[k], delta)``: the region is cut at
      ``delta_bar[k] = phi0[k]`` and segment b starts; later regions vanish.
      (Example: ``n=15, mu_bar=5, eps=0.4``: printed flat (2,1) up to
      ``delta = 0.1425`` at ``f(0) = 0.12728``; the MILP gives ``f(0) = delta``
      from ``delta = 0.12728``.) For ``b <= 2`` and for ``b = 3`` at larger
      ``eps`` the cut coincides with the printed ``delta_bar_{b-1,b-1} = phi_0``.

    For ``b >= 4`` the flat region ``(h, j)`` with ``j <= h - 2`` has an
    extra forced leak (the last mass of group ``b-h+j+1`` is followed within
    ``mu_bar`` by two lower steps), so (37c) understates its ``delta`` and the
    MILP inserts other regions (e.g. ``n=24, mu_bar=6, eps=2``: printed
    ``delta_low_{3,1} = 0.070479`` at ``f(0) = 0.520771``, but that PMF needs
    ``delta = 0.071770``; the MILP optimum at ``delta = 0.0705`` is 0.520692).
    Such ``(n, mu_bar)`` raise ``ValueError`` unless ``as_printed``.

    Parameters
    ----------
    n, mu_bar : int
    eps : float
    as_printed : bool, keyword-only
        Evaluate (34) and (37) exactly as printed for any ``(n, mu_bar)``: no
        range check, no cut (e.g. Fig. 10 uses ``n=8, mu_bar=3``, where
        ``b + r = 4 >= mu_bar``).

    Returns
    -------
    BDRegions
        Arrays ``h, j, delta_low, delta_bar, phi0``.
    """
    if as_printed:
        b, _ = _bd_br(n, mu_bar)
    else:
        b, _ = _bd_range(n, mu_bar)
    e = check_eps(eps)
    rows = []
    for h, j in _bd_hj_list(b):
        phi = float(staircase_f0(_bd_lengths_unchecked(n, mu_bar, h, j), e))
        low = 0.0 if h == 0 else phi * math.exp(-(b - h) * e) * float(xi(j, e))  # (37c)
        if j == h:  # (37b), including h = j = 0
            bar = phi * math.exp(-(b - h - 1) * e)
        else:  # (37a)
            bar = phi * math.exp(-(b - h) * e) * float(xi(j + 1, e))
        if not as_printed and bar >= phi:  # the line f(0) = delta takes over
            rows.append((h, j, low, phi, phi))
            break
        rows.append((h, j, low, bar, phi))
    hs, js, lows, bars, phis = (np.array(c) for c in zip(*rows, strict=True))
    return BDRegions(hs.astype(int), js.astype(int), lows, bars, phis)


def _bd_lengths_unchecked(n: int, mu_bar: int, h: int, j: int) -> tuple[int, ...]:
    """(31) without Theorem 3's range check (for ``as_printed``)."""
    b, r = divmod(n, mu_bar)
    if h == 0:
        return (1,) + (mu_bar,) * b + (r,)
    u = 1 if j != h else 0
    mid = [mu_bar if (i == b - h + j + 1 and j != h) else mu_bar - 1 for i in range(b - h + 1, b + 1)]
    return (1,) + (mu_bar,) * (b - h) + tuple(mid) + (r + h - u,)


def _bd_pmf_one(n: int, b: int, mu_bar: int, reg: BDRegions, e: float, d: float) -> np.ndarray:
    s = int(np.sum(reg.delta_bar < d))  # section: delta_bar[s-1] < d <= delta_bar[s]
    if s == reg.h.size:  # segment b, (40)-(41); one optimum among many
        return np.r_[d, np.full(n, (1.0 - d) / n)]
    h, j = int(reg.h[s]), int(reg.j[s])
    lengths = np.asarray(bd_step_lengths(n, mu_bar, h, j))
    steps = np.exp(-np.arange(lengths.size) * e)
    if s == 0 or d >= reg.delta_low[s]:  # flat region (30)
        return np.repeat(reg.phi0[s] * steps, lengths)
    # linear region: f(0) from (39); the staircase of the flat region it leads
    # to, scaled to that f(0), with the remaining mass spread over the last
    # group. The printed (39) can leak for j < h (see bd_pmf).
    f0 = math.exp(math.log(d) + (b - h) * e) / float(xi(j, e))
    vals = f0 * steps
    vals[-1] = (1.0 - np.dot(lengths[:-1], vals[:-1])) / lengths[-1]
    return np.repeat(vals, lengths)


def bd_pmf(n: int, mu_bar: int, eps: Any, *, delta: Any = 0.0) -> np.ndarray:
    """Optimal noise PMF for the BD neighbourhood ``M = {1..mu_bar}`` (Lemma 4, Theorem 3).

    Minimises the error rate ``1 - f(0)`` subject to (13) with the directed
    shift set ``{1, ..., mu_bar}``.

    * ``delta = 0``, Lemma 4 (28)-(29), any ``n, mu_bar``: the staircase
      ``f(eta) = phi_0 e^{-i eps}`` for ``(i-1) mu_bar < eta <= min(i mu_bar, n)``.
    * ``delta > 0``, Theorem 3 for ``b + r < mu_bar`` and ``b <= 3``
      (``n = b mu_bar + r``; see :func:`bd_boundaries` for why ``b >= 4`` is
      refused and for the cut at small ``eps``): flat regions (30)-(34) with the
      step lengths (31); linear regions with ``f(0)`` of (39); segment b (40)-(41).

    The PMF is unique inside the flat regions (at their right end
    ``delta_bar`` the next region's PMF is optimal too). In the linear regions
    and in segment b only ``f(0)`` is unique; there the PMF returned is: in segment b the
    paper's (40)-(41); in a linear region ending in flat region ``(h, j)``, the
    staircase (31) of that flat region with ``f(0) = delta e^{(b-h) eps}/xi_j``
    and the remaining mass spread evenly over its last group. The printed
    (38)-(39) PMF is not used: for ``j < h`` its singleton ``b-h+j+1`` lies
    within ``mu_bar`` of group ``b-h+j+3`` and exceeds ``e^eps`` times it, a
    leak (13f) that (13g) forbids (e.g. ``n=15, mu_bar=5, eps=0.4,
    delta=0.0845``).

    Parameters
    ----------
    mu_bar : int
        Largest shift, ``1 <= mu_bar <= n``.
    n, eps, delta
        As in :func:`sd_pmf`.

    Returns
    -------
    numpy.ndarray, shape ``broadcast(eps, delta).shape + (n+1,)``

    Raises
    ------
    ValueError
        For ``delta > 0`` outside Theorem 3's verified range.
    """
    b, _ = _bd_br(n, mu_bar)
    e, d = np.broadcast_arrays(eps_array(eps), delta_array(delta))
    if np.any(d > 0):
        _bd_range(n, mu_bar)
    out = np.empty(e.shape + (n + 1,))
    lemma4 = np.asarray(bd_step_lengths(n, mu_bar))
    regions: dict[float, BDRegions] = {}
    for idx in np.ndindex(e.shape):
        ei, di = float(e[idx]), float(d[idx])
        if di == 0.0:
            out[idx] = np.repeat(staircase_f0(lemma4, ei) * np.exp(-np.arange(lemma4.size) * ei), lemma4)
            continue
        if ei not in regions:
            regions[ei] = bd_boundaries(n, mu_bar, ei)
        out[idx] = _bd_pmf_one(n, b, mu_bar, regions[ei], ei, di)
    return out


def bd_error_rate(n: int, mu_bar: int, eps: Any, *, delta: Any = 0.0) -> Any:
    """Optimal error rate ``1 - f*(0)`` for the BD neighbourhood (Lemma 4, Theorem 3, Fig. 4).

    Arguments and range as in :func:`bd_pmf`.
    """
    return scalar_or_array(1.0 - bd_pmf(n, mu_bar, eps, delta=delta)[..., 0])


def bd_level_eps(n: int, mu_bar: int, rho: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thresholds ``eps_{h,j}^rho`` of Corollary 2, (43).

    ``eps_{h,j}`` solves ``rho = 1 - phi_0^k(eps)`` for the flat region
    ``(h, j)``, ``phi_0^k = 1/(mu_bar alpha_hj + beta_hj)`` (34) (the printed
    (43) writes ``alpha_b``, a typo for ``alpha_hj``; the first form of (34) is
    used, see :func:`bd_alpha_beta`). ``(0, 0)`` is the Lemma 4 analogue of
    (22). ``eps = 0`` where the flat level reaches ``1 - rho`` for every
    ``eps``. Range as in :func:`bd_pmf`.

    Returns
    -------
    h, j, eps : numpy.ndarray
        In the order of :func:`bd_boundaries` (before any cut).
    """
    b, _ = _bd_range(n, mu_bar)
    target = 1.0 - check_rho(rho)
    hj = _bd_hj_list(b)
    eps_k = np.zeros(len(hj))
    for k, (h, j) in enumerate(hj):
        lengths = bd_step_lengths(n, mu_bar, h, j)
        if target <= 1.0 / sum(lengths):
            continue
        eps_k[k] = increasing_root(partial(f0_gap, staircase_f0, lengths, target))
    return np.array([h for h, _ in hj]), np.array([j for _, j in hj]), eps_k


def bd_level_curve(n: int, mu_bar: int, rho: float, eps: Any) -> Any:
    """Smallest ``delta`` achieving error rate ``rho`` at ``eps``: Corollary 2, (42).

    ``delta^eps = xi_j e^{-(b-h) eps} (1 - rho)`` where ``(h, j)`` is the linear
    region in which ``f*(0)`` reaches ``1 - rho``, i.e. the one before the
    first flat region whose level ``phi_0^k(eps)`` is at least ``1 - rho``
    (``eps_{h,j} <= eps < eps_{h,j-1}``, :func:`bd_level_eps`); ``delta = 0``
    when Lemma 4 already reaches it and ``delta = 1 - rho`` when only segment b
    (40) does. Uses the regions of :func:`bd_boundaries` (with its cut).
    Range as in :func:`bd_pmf`.

    Returns
    -------
    float or numpy.ndarray of ``eps.shape``
    """
    b, _ = _bd_range(n, mu_bar)
    target = 1.0 - check_rho(rho)
    e = eps_array(eps)
    out = np.empty(e.shape)
    for idx in np.ndindex(e.shape):
        reg = bd_boundaries(n, mu_bar, float(e[idx]))
        hit = np.nonzero(reg.phi0 >= target)[0]
        if hit.size == 0:
            out[idx] = target  # segment b: f(0) = delta
        elif hit[0] == 0:
            out[idx] = 0.0
        else:
            h, j = int(reg.h[hit[0]]), int(reg.j[hit[0]])
            out[idx] = float(xi(j, e[idx])) * math.exp(-(b - h) * e[idx]) * target
    return scalar_or_array(out)


# --------------------------------------------------------------------------
# n -> infinity, (44)-(54)
