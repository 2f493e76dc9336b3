"""Exact arithmetic of privacy checks: rigorous bounds on e^eps, exact rounding, exact deltas."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from optnoise.engine.validation import check_choice, check_int, check_positive, shown
from optnoise.privacy.curves import NOTIONS

__all__ = ["exp_bounds", "check_bounds", "round_to_total", "exact_delta", "exact_pair_delta", "frac_str"]


#: Bits of the rational bounds on e^eps (relative width ~2**-EXP_BITS).
EXP_BITS = 128


#: Above this eps the check uses e^CAP (see :func:`check_bounds`); e^64 > 2**92 > every weight.
_EPS_CAP = 64


def exp_bounds(x: float, *, bits: int = EXP_BITS) -> tuple[Fraction, Fraction]:
    """Rational ``lo <= e^x <= hi`` with ``hi/lo - 1`` about ``2**-bits``.

    ``x`` (a float, hence an exact dyadic rational) is reduced to
    ``r = x / 2**s <= 1/2``. The Taylor sum ``S_K = sum_{j<=K} r^j / j!`` is
    computed exactly; for ``0 <= r <= 1/2`` the Lagrange remainder obeys
    ``0 <= e^r - S_K <= r^(K+1)/(K+1)! * e^r <= 2 r^(K+1)/(K+1)!``, so
    ``[S_K, S_K + 2 r^(K+1)/(K+1)!]`` contains ``e^r``. Both ends are rounded
    outward to fixed point with ``P = bits + s + 16`` fractional bits and the
    interval is squared ``s`` times, rounding the lower end down and the upper
    end up each time, which yields rigorous bounds on ``e^x = (e^r)^(2^s)``.

    Parameters
    ----------
    x : float
        The exponent, ``0 <= x <= 2**16``.
    bits : int
        Target relative precision.
    """
    x = check_positive("x", x, allow_zero=True)
    if x > 2**16:
        raise ValueError(f"x must be <= {2**16} for exp_bounds; got {shown(x)}")
    bits = check_int("bits", bits, minimum=8, maximum=4096)
    xq = Fraction(x)
    s = 0
    while xq > Fraction(1, 2) * (1 << s):
        s += 1
    r = xq / (1 << s)
    P = bits + s + 16
    tol = Fraction(1, 1 << (P + 4))
    total, term, j = Fraction(1), Fraction(1), 0
    while True:
        j += 1
        term = term * r / j
        total += term
        tail = 2 * term * r / (j + 1)  # 2 r^(j+1)/(j+1)! >= remainder after the j-th term
        if tail <= tol:
            break
    lo = (total.numerator << P) // total.denominator
    up = total + tail
    hi = -((-(up.numerator << P)) // up.denominator)
    for _ in range(s):
        lo = (lo * lo) >> P
        hi = -((-(hi * hi)) >> P)
    return Fraction(lo, 1 << P), Fraction(hi, 1 << P)


def check_bounds(eps: float) -> tuple[Fraction, Fraction]:
    """Bounds on e^eps used by the exact check.

    For ``eps > 64`` the bounds of ``e^64`` are used instead. Both exceed
    ``2**92`` while every weight is at most ``2**62``, so with integer weights
    ``w <= L g`` holds iff ``g >= 1 or w = 0`` and ``w >= U g`` holds iff
    ``g = 0``, which is exactly what the true e^eps gives: the outcome of every
    check is unchanged, and huge eps need no huge integers.
    """
    return exp_bounds(min(float(eps), float(_EPS_CAP)))


def _dyadic_ints(p: np.ndarray) -> np.ndarray:
    """Non-negative floats as exact integers over one common power of two (object array)."""
    mant, expo = np.frexp(p)
    m = (mant * 2.0**53).astype(np.int64)  # exact: mant has 53 significant bits
    e = expo.astype(np.int64) - 53
    pos = m > 0
    if not np.any(pos):
        raise ValueError("pmf must have positive total mass")
    emin = int(e[pos].min())
    out = np.zeros(p.shape, dtype=object)
    for i in np.flatnonzero(pos):
        out[i] = int(m[i]) << int(e[i] - emin)
    return out


def round_to_total(p: Any, total: int) -> np.ndarray:
    """Exact largest-remainder rounding of the masses ``p`` to integers summing to ``total``.

    Each ``p_i`` (a float, so an exact dyadic) is scaled by ``total / sum(p)``
    in exact integer arithmetic; floors are kept and the missing units go to
    the largest remainders (ties to the lower index). An entry with ``p_i = 0``
    has remainder 0 and never receives a unit, so zeros stay zeros.

    Returns
    -------
    ndarray of object (Python int), same length as ``p``.
    """
    p = np.asarray(p, dtype=float).ravel()
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError("pmf must contain finite, non-negative masses")
    total = check_int("total", total, minimum=0)
    P = _dyadic_ints(p)
    T = int(P.sum())
    scaled = P * total
    base = scaled // T
    rem = scaled % T
    missing = total - int(base.sum())
    if missing:
        order = sorted(range(len(p)), key=lambda i: (-rem[i], i))
        for i in order[:missing]:
            base[i] += 1
    return base


def exact_delta(weights: Any, index: np.ndarray, notion: str, bounds: tuple[Fraction, Fraction]) -> Fraction | float:
    """Certified delta of the integer PMF ``weights / sum(weights)`` under ``notion``.

    Parameters
    ----------
    weights : sequence of int
        Non-negative integer weights, flattened (C order).
    index : ndarray, shape (K, N)
        ``index[m, eta]`` is the flat index of ``eta + mu_m (mod n+1)``
        (:meth:`NoiseDesign.shift_index`).
    notion : {"pdp", "pdp-kadam", "dp"}
    bounds : (Fraction, Fraction)
        ``L <= e^eps <= U`` (:func:`exp_bounds`).

    Returns
    -------
    Fraction or inf
        An upper bound on the true delta at the true e^eps (exact up to the
        ``2**-128`` width of the bounds):

        * dp: ``max_mu sum_eta [w - L g]_+ / D``; replacing e^eps by the smaller
          ``L`` can only increase every term.
        * pdp: ``max_mu sum_eta w 1[not w <= L g] / D``; the set where
          ``w <= L g`` fails contains the true leak set.
        * pdp-kadam: with ``u = 1`` on the (conservative) leak set of some
          shift, (13f) holds at the true e^eps, (13g) is required as
          ``w >= U g`` for every shift (implies ``w >= e^eps g``), and the value
          is ``sum u w / D``; ``inf`` when (13g) fails for some ``u = 1``.
    """
    check_choice("notion", notion, NOTIONS)
    w = np.asarray(weights, dtype=object).ravel()
    D = int(w.sum())
    if D <= 0:
        raise ValueError("weights must have a positive sum")
    index = np.asarray(index)
    return exact_pair_delta(w, np.broadcast_to(np.arange(w.size), index.shape), index, D, notion, bounds)


def exact_pair_delta(
    weights: Any,
    first: np.ndarray,
    second: np.ndarray,
    denominator: int,
    notion: str,
    bounds: tuple[Fraction, Fraction],
) -> Fraction | float:
    """Certified delta of integer distributions compared in pairs, the core of every exact check.

    Pair ``k`` compares ``P(o) = weights[first[k, o]] / D`` with
    ``Q(o) = weights[second[k, o]] / D`` over its outputs ``o``; the result
    is the worst pair, bounded as in :func:`exact_delta`. A noise PMF has one
    pair per shift (``first[k] = 0..N-1``, ``second[k]`` the shifted indices);
    a mechanism matrix ``W[x, y]`` (rows summing to ``D``) has one pair per
    ordered neighbour pair ``(x, x')``: ``first[k] = x (m+1) + y``,
    ``second[k] = x' (m+1) + y``.

    ``"pdp-kadam"`` shares one indicator per ``first`` index between all
    pairs, which is meaningful for noise PMFs only (every ``first[k]`` is
    ``0..N-1``).
    """
    check_choice("notion", notion, NOTIONS)
    w = np.asarray(weights, dtype=object).ravel()
    D = int(denominator)
    if D <= 0:
        raise ValueError("denominator must be positive")
    return _EXACT_DELTA[notion](w[first], w[second], D, bounds)


def _exact_dp(p: np.ndarray, g: np.ndarray, D: int, bounds: tuple[Fraction, Fraction]) -> Fraction:
    """The hockey stick at ``L = bounds[0]``: the largest ``sum_o [P(o) - L Q(o)]_+`` over the pairs."""
    a, b = bounds[0].numerator, bounds[0].denominator
    excess = p * b - g * a
    excess = np.where(excess > 0, excess, 0)
    return Fraction(max(int(row.sum()) for row in excess), b * D)


def _exact_pdp(p: np.ndarray, g: np.ndarray, D: int, bounds: tuple[Fraction, Fraction]) -> Fraction:
    """Definition 2 at ``L = bounds[0]``: the largest mass of leaking outputs ``P(o) > L Q(o)`` over the pairs."""
    a, b = bounds[0].numerator, bounds[0].denominator
    leak = p * b > g * a  # not (w <= L g)
    return Fraction(max(int(np.where(row, prow, 0).sum()) for row, prow in zip(leak, p, strict=True)), D)


def _exact_pdp_kadam(p: np.ndarray, g: np.ndarray, D: int, bounds: tuple[Fraction, Fraction]) -> Fraction | float:
    """The printed MILP: one indicator per output shared by every pair, (13g) read at ``U = bounds[1]``."""
    (lo, hi) = bounds
    a, b = lo.numerator, lo.denominator
    c, e = hi.numerator, hi.denominator
    u = (p * b > g * a).any(axis=0)
    weak = (p * e >= g * c).all(axis=0)  # (13g) with U >= e^eps, every shift
    if np.any(u & ~weak):
        return math.inf
    return Fraction(int(np.where(u, p[0], 0).sum()), D)


#: The exact delta of each notion (:data:`~optnoise.privacy.curves.NOTIONS`).
_EXACT_DELTA: dict[str, Callable[..., Fraction | float]] = {
    "dp": _exact_dp,
    "pdp": _exact_pdp,
    "pdp-kadam": _exact_pdp_kadam,
}


def frac_str(x: Fraction | float) -> str:
    if isinstance(x, float):
        return "inf" if math.isinf(x) else repr(x)
    return f"{x.numerator}/{x.denominator}"
