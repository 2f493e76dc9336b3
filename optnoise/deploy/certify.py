"""Deployable designs: exactly certified privacy, exact sampling, save/load.

A PMF returned by an LP/MILP solver meets the privacy constraints of
Kadam et al. (2024), (13c)-(13h) / (14c), only up to the solver's feasibility
tolerance (~1e-9), and sampling it with floating point adds error of its own.
This module turns a :class:`~optnoise.design.DesignResult` into a
:class:`CertifiedDesign`:

1. **Exact PMF.** Integer weights ``w(eta)`` over the common denominator
   ``D = 2**bits`` (default ``bits = 62``): the sampled distribution is
   ``w / D`` *exactly*.
2. **Exact check.** The privacy notion the design asked for ("pdp",
   "pdp-kadam" or "dp"; pure eps-DP when delta = 0) is checked with integer
   arithmetic against rational bounds ``L <= e^eps <= U`` (:func:`exp_bounds`),
   each in the direction that can only *over*-state the leakage:

   ``"dp"`` (hockey stick, Definition 1, eq. (8))
       ``sum_eta [w(eta) - L w(eta+mu)]_+ / D``. A smaller multiplier can only
       enlarge every term, so using ``L <= e^eps`` upper-bounds the true delta.
   ``"pdp"`` (Definition 2 taken literally)
       An output leaks for shift mu unless ``w(eta) <= L w(eta+mu)`` holds
       exactly; since ``L <= e^eps`` this implies the true non-leak condition,
       so the leak set used is a superset of the true one and its mass an upper
       bound. ``w(eta+mu) = 0 < w(eta)`` always leaks.
   ``"pdp-kadam"`` (the MILP (13), shared indicators)
       The certificate *exhibits* a feasible point of (13c)-(13h) at the true
       e^eps: ``u(eta) = 1`` exactly where ``eta`` leaks for some shift in the
       conservative sense above, ``y = u f``. Rows (13f) then hold because a
       non-leaking eta has ``w <= L g <= e^eps g``; (13g) is required as
       ``w(eta) >= U w(eta+mu)`` for every shift, which implies
       ``w >= e^eps g`` since ``U >= e^eps``; (13c) is ``sum u w / D <= delta``.
       When (13g) fails the certified delta is ``inf``.

   Why each direction is safe is restated in :func:`exact_delta`.
3. **Repair.** Rounding to ``1/D`` (and the solver's own ~1e-9 slack) can break
   constraints that are tight at the optimum. The repair, each candidate
   re-checked exactly, is

   a. *mix in uniform noise*: ``w = B + c`` with ``B`` the exact
      largest-remainder rounding of the PMF to total ``D - c(n+1)^d``, i.e. the
      mixture ``(1-lam) f + lam * uniform`` with ``lam = c (n+1)^d / D``. The
      uniform PMF has delta 0 for every eps under all notions, and
      ``h(eta) - e^eps h(eta+mu)`` decreases by ``lam (e^eps - 1)/N`` for every
      pair, so a pair that is non-leaking stays so and tight pairs become
      strictly non-leaking; the DP hockey stick is convex in ``lam`` and 0 at
      ``lam = 1``, so it decreases monotonically. The smallest ``c`` that
      certifies is found by doubling then bisection.
   b. *re-solve with a margin* when (a) costs more distortion than ``max_loss``
      (the PDP leak budget or a tight (13g) row that mixing cannot fix): for
      "dp" the design is re-solved (an LP) at ``delta - tau``; for "pdp" and
      "pdp-kadam" the LP with the solver's leak pattern fixed is solved with
      an absolute margin ``tau`` on each leak budget and, for pdp-kadam, on
      every (13g) row. Then (a) again. Margins ``tau`` escalate through
      :data:`MARGINS`; those that do not fit below a small delta are replaced
      by fractions of it (:data:`MARGIN_FRACTIONS`), so tiny deltas (1e-12)
      get margins too.
   c. *fall back to pure eps-DP* when delta > 0 and nothing above certifies:
      the delta = 0 design has delta 0 under every notion, so it meets any
      target; it is solved, certified by (a)-(b), and accepted if its
      distortion is within ``max_loss`` of the solver's (at a tiny delta it
      usually is).

   The certified (eps, delta), the mixing weight, the margin and the
   distortion loss ``certified - solver`` are reported in
   :attr:`CertifiedDesign.repair`. If no candidate certifies the requested
   (eps, delta) within ``max_loss``, :class:`CertificationError` (a
   ``ValueError``) is raised: the target is never quietly weakened.
4. **Exact sampling.** :meth:`CertifiedDesign.sample` draws an integer
   uniformly below ``D`` and looks it up in the cumulative integer table
   (``searchsorted`` semantics, accelerated by a guide table on the top
   bits): ``P(eta) = w(eta) / D`` exactly. The default randomness is the
   operating system's CSPRNG (``os.urandom``, as used by :mod:`secrets`),
   drawn in bulk. A seeded ``numpy.random.Generator`` may be passed for
   reproducible experiments; **seeded mode is not for deployment** (its state
   is guessable and it is not a cryptographic generator).
5. **Save/load.** JSON with the exact weights (decimal strings), the problem
   specification, the certificate, solver metadata and the optnoise version,
   plus a SHA-256 digest of the canonical JSON of all of them
   (:func:`file_digest`). :func:`load_design` refuses a file whose digest does
   not match, any format version but :data:`FORMAT_VERSION`, and any
   certificate field that differs from a fresh exact re-check of the problem
   the file names (recomputed on every load); every refusal names the field.
   The digest detects corruption and careless or partial edits; it is **not a
   signature**: anyone who can rewrite the file can recompute it, so a file
   from an untrusted source must be authenticated by other means (a signature,
   a trusted store). What no edit can do is make the weights leak more than
   the certificate states for the problem stated in the file: that is
   re-proved exactly on load.

Command line::

    optnoise solve --n 8 --eps 1.5 --delta 0.1238 --neighborhood bd:3 --directed \
        --privacy pdp-kadam --format json --out res.json
    optnoise certify --result res.json --out design.json      # or the solve flags instead of --result
    optnoise release --design design.json --value 3 --count 5  # OS CSPRNG
    optnoise release --design design.json --value 3 --seed 1   # reproducible, NOT for deployment

``certify --result`` rebuilds the design from the solve JSON, whose
``shifts`` are the resolved set (already symmetrised), so the stored
neighbourhood is that set marked ``directed``: the same constraints. Exit
codes: 0 certified, 1 the requested (eps, delta) cannot be certified within
``--max-loss``, 2 bad input (one line), 3 the solve is not optimal. Vector
answers are written ``a/b``; several answers are comma-separated.

Example
-------
>>> from optnoise import NoiseDesign, Neighborhood
>>> res = NoiseDesign(n=8, eps=1.5, delta=0.1238, privacy="pdp",
...                   neighborhood=Neighborhood.bd(3, directed=True)).solve()
>>> cd = res.certify()
>>> cd.certified_delta <= 0.1238
True
>>> 0 <= cd.release(5, rng=np.random.default_rng(1)) <= 8  # seeded: experiments only
True
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from optnoise import accounting, interop, plotting
from optnoise._io import atomic_write_text, read_json
from optnoise._validation import check_choice, check_delta, check_eps, check_int, check_output_path, check_positive
from optnoise.model import ModelBuilder
from optnoise.privacy import NOTIONS
from optnoise.solvers import FEASIBILITY_TOL, SOLVERS, solve_model
from optnoise.tolerance import DELTA_ATOL, DELTA_RTOL, delta_allowance

__all__ = [
    "CertifiedDesign",
    "CertifiedMechanism",
    "PairLayout",
    "pmf_layout",
    "matrix_layout",
    "exact_pair_delta",
    "CertificationError",
    "certify_result",
    "exact_delta",
    "exp_bounds",
    "load_design",
    "round_to_total",
    "file_digest",
    "FORMAT",
    "FORMAT_VERSION",
    "DEFAULT_BITS",
    "MAX_LOSS",
    "MARGINS",
]

#: Tag and version of the JSON design format written by :meth:`CertifiedDesign.save`.
FORMAT = "optnoise-certified-design"
#: Version 2: the digest covers the whole file (version 1 hashed the weights only and is refused).
FORMAT_VERSION = 2
#: The fields of a design file, besides its digest ``sha256``.
FILE_FIELDS = (
    "format",
    "format_version",
    "optnoise_version",
    "problem",
    "denominator_bits",
    "shape",
    "weights",
    "certificate",
    "repair",
    "solver",
)
#: Default denominator ``2**62``: rounding error ~2e-19, and every table fits in int64.
DEFAULT_BITS = 62
#: Default bound on the repair's distortion increase, relative to ``max(1, |solver distortion|)``.
MAX_LOSS = 1e-6
#: Margins tried, in order, when a re-solve is needed (repair step b).
MARGINS = (1e-9, 1e-8, 1e-7, 1e-6)
#: Margins as fractions of a delta too small for some of :data:`MARGINS` (repair step b).
MARGIN_FRACTIONS = (1e-6, 1e-4, 1e-2, 1e-1)
#: Relative slack when reading the solver's leak pattern (repair step b).
PATTERN_RTOL = 1e-9
#: Solver masses below this are solver noise and are set to 0 before rounding.
ZERO_TOL = 1e-15
#: Bits of the rational bounds on e^eps (relative width ~2**-EXP_BITS).
EXP_BITS = 128
#: Above this eps the check uses e^CAP (see :func:`_check_bounds`); e^64 > 2**92 > every weight.
_EPS_CAP = 64
#: How each problem kind is rebuilt from a saved spec (see :func:`register_spec_kind`).
_SPEC_KINDS: dict[str, Callable[[dict[str, Any]], Any]] = {}


class CertificationError(ValueError):
    """The requested (eps, delta) cannot be certified exactly (or the result is not certifiable)."""


# --------------------------------------------------------------------------------------------
# rigorous bounds on e^x
# --------------------------------------------------------------------------------------------


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
        raise ValueError(f"x must be <= {2**16} for exp_bounds; got {x!r}")
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


def _check_bounds(eps: float) -> tuple[Fraction, Fraction]:
    """Bounds on e^eps used by the exact check.

    For ``eps > 64`` the bounds of ``e^64`` are used instead. Both exceed
    ``2**92`` while every weight is at most ``2**62``, so with integer weights
    ``w <= L g`` holds iff ``g >= 1 or w = 0`` and ``w >= U g`` holds iff
    ``g = 0``, which is exactly what the true e^eps gives: the outcome of every
    check is unchanged, and huge eps need no huge integers.
    """
    return exp_bounds(min(float(eps), float(_EPS_CAP)))


# --------------------------------------------------------------------------------------------
# exact arithmetic on integer weights
# --------------------------------------------------------------------------------------------


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
    lo, hi = bounds
    a, b = lo.numerator, lo.denominator
    p = w[first]  # (K, C): P(o)
    g = w[second]  # (K, C): Q(o)
    wb = p * b
    ag = g * a
    if notion == "dp":
        excess = wb - ag
        excess = np.where(excess > 0, excess, 0)
        worst = max(int(row.sum()) for row in excess)
        return Fraction(worst, b * D)
    leak = wb > ag  # not (w <= L g)
    if notion == "pdp":
        worst = max(int(np.where(row, prow, 0).sum()) for row, prow in zip(leak, p, strict=True))
        return Fraction(worst, D)
    c, e = hi.numerator, hi.denominator
    u = leak.any(axis=0)
    weak = (p * e >= g * c).all(axis=0)  # (13g) with U >= e^eps, every shift
    if np.any(u & ~weak):
        return math.inf
    return Fraction(int(np.where(u, p[0], 0).sum()), D)


def _frac_str(x: Fraction | float) -> str:
    if isinstance(x, float):
        return "inf" if math.isinf(x) else repr(x)
    return f"{x.numerator}/{x.denominator}"


# --------------------------------------------------------------------------------------------
# what is checked: the layout of a design's probabilities
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class PairLayout:
    """How the exact check, the repair and the sampler see a design's probabilities.

    The certified object is a flat vector of ``rows * cols`` integer weights:
    ``rows`` distributions of ``cols`` outputs each, every row summing to the
    common denominator ``2**bits``. A noise PMF is one row
    (:func:`pmf_layout`); a mechanism matrix ``P[x, y]`` has one row per
    input (:func:`matrix_layout`). Built by the design's ``pair_layout()``.

    Attributes
    ----------
    kind : {"pmf", "matrix"}
        Sampled as additive modulo noise (:class:`CertifiedDesign`) or row by
        row (:class:`CertifiedMechanism`).
    weights_shape : tuple of int
        Shape of the weights array (the PMF's, or ``(rows, cols)``).
    rows, cols : int
        Number of distributions and of outputs of each.
    first, second : ndarray of int, shape (K, cols)
        Pair ``k`` compares the flat entries ``first[k]`` with ``second[k]``
        (:func:`exact_pair_delta`).
    loss : ndarray, shape (r, rows * cols)
        Loss rows: the design's loss of a flat probability vector ``p`` is
        ``max(loss @ p)`` (one row for a distortion or Bayes loss, one per
        input for a minimax loss).
    notion : str
        The privacy notion checked.
    embed : callable
        Maps the design's float solution (its ``pmf`` or ``matrix``) to the
        flat vector checked here.
    resolve : callable
        ``resolve(delta, solver)``: the design re-solved at a smaller delta
        (repair step b for ``"dp"``), as a float solution, or ``None``.
    outputs : ndarray, optional
        The released value of every column (``"matrix"`` layouts).
    """

    kind: str
    weights_shape: tuple[int, ...]
    rows: int
    cols: int
    first: np.ndarray
    second: np.ndarray
    loss: np.ndarray
    notion: str
    embed: Callable[[np.ndarray], np.ndarray]
    resolve: Callable[[float, str], np.ndarray | None]
    outputs: np.ndarray | None = None

    @property
    def size(self) -> int:
        """Number of weights ``rows * cols``."""
        return self.rows * self.cols

    def loss_of(self, p: np.ndarray) -> float:
        """The design's loss of the flat probabilities ``p``."""
        return float(np.max(self.loss @ np.asarray(p, dtype=float)))

    def check(self, weights: Any, denominator: int, bounds: tuple[Fraction, Fraction]) -> Fraction | float:
        """The exact certified delta of integer weights (:func:`exact_pair_delta`)."""
        return exact_pair_delta(weights, self.first, self.second, denominator, self.notion, bounds)


def pmf_layout(
    index: np.ndarray,
    cost: np.ndarray,
    notion: str,
    resolve: Callable[[float, str], np.ndarray | None],
) -> PairLayout:
    """The layout of a noise PMF: one row, one pair per shift (``index`` as :meth:`NoiseDesign.shift_index`)."""
    index = np.asarray(index, dtype=np.int64)
    K, N = index.shape
    cost = np.asarray(cost, dtype=float)
    return PairLayout(
        kind="pmf",
        weights_shape=cost.shape,
        rows=1,
        cols=N,
        first=np.broadcast_to(np.arange(N), (K, N)),
        second=index,
        loss=cost.reshape(1, N),
        notion=notion,
        embed=lambda sol: np.asarray(sol, dtype=float).ravel(),
        resolve=resolve,
    )


def matrix_layout(
    pairs: np.ndarray,
    outputs: np.ndarray,
    loss: np.ndarray,
    notion: str,
    resolve: Callable[[float, str], np.ndarray | None],
    *,
    embed: Callable[[np.ndarray], np.ndarray] | None = None,
) -> PairLayout:
    """The layout of a mechanism matrix ``P[x, y]``: one row per input, one pair per ordered neighbour pair.

    ``loss`` holds the loss rows over the flattened matrix (see :class:`PairLayout`).
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    outputs = np.asarray(outputs)
    C = outputs.size
    loss = np.atleast_2d(np.asarray(loss, dtype=float))
    R = loss.shape[1] // C
    if notion not in ("dp", "pdp"):
        raise ValueError(f"notion must be one of 'dp', 'pdp' for a mechanism matrix; got {notion!r}")
    y = np.arange(C)
    return PairLayout(
        kind="matrix",
        weights_shape=(R, C),
        rows=R,
        cols=C,
        first=pairs[:, :1] * C + y[None, :],
        second=pairs[:, 1:] * C + y[None, :],
        loss=loss,
        notion=notion,
        embed=embed or (lambda sol: np.asarray(sol, dtype=float).ravel()),
        resolve=resolve,
        outputs=outputs,
    )


# --------------------------------------------------------------------------------------------
# exact sampling
# --------------------------------------------------------------------------------------------


class _SamplingTable:
    """Exact lookup of one integer distribution: draws below ``2**bits`` to indices.

    ``lookup(u)`` is the ``i`` with ``cum[i-1] <= u < cum[i]``, i.e.
    ``searchsorted(cum, u, side="right")``: start at the guide entry of the
    draw's top bits (a lower bound) and advance while ``u >= cum[i]``.
    """

    def __init__(self, weights: np.ndarray, bits: int, guide_bits: int = 16) -> None:
        self.bits = bits
        self.cum = np.cumsum(np.asarray(weights, dtype=np.int64).ravel(), dtype=np.int64)
        self.guide_bits = min(guide_bits, bits)
        starts = np.arange(1 << self.guide_bits, dtype=np.int64) << (bits - self.guide_bits)
        # guide[t]: the interval containing the first integer of bucket t; a draw in
        # bucket t has index >= guide[t] (the table is non-decreasing).
        self.guide = np.searchsorted(self.cum, starts, side="right")

    def lookup(self, u: np.ndarray) -> np.ndarray:
        idx = self.guide[u >> (self.bits - self.guide_bits)]
        active = np.flatnonzero(u >= self.cum[idx])
        while active.size:
            idx[active] += 1
            active = active[u[active] >= self.cum[idx[active]]]
        return idx


def _draw_uniform(count: int, bits: int, rng: Any) -> np.ndarray:
    """``count`` integers uniform on ``[0, 2**bits)`` as int64."""
    if rng is None:
        # CSPRNG: os.urandom (getrandom(2)); the top `bits` of each 64-bit word are uniform.
        words = np.frombuffer(os.urandom(8 * count), dtype=np.uint64)
        return (words >> np.uint64(64 - bits)).astype(np.int64)
    return rng.integers(0, 1 << bits, size=count, dtype=np.int64)


def _check_rng(rng: Any) -> Any:
    if rng is None or isinstance(rng, np.random.Generator):
        return rng
    raise ValueError(
        "rng must be None (cryptographically secure, for deployment) or a seeded "
        f"numpy.random.Generator (reproducible experiments only); got {type(rng).__name__}"
    )


def _check_answers(q: Any, n: int, name: str = "q") -> np.ndarray:
    """Integer answers in ``[0, n]`` (a scalar or any array) as int64."""
    arr = np.asarray(q)
    if arr.dtype == object or arr.dtype.kind not in "iuf" or arr.size == 0:
        raise ValueError(f"{name} must be integers in [0, n] = [0, {n}] (a scalar or an array); got {q!r}")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must be integers in [0, n] = [0, {n}]; got non-integer or non-finite values")
    if arr.min() < 0 or arr.max() > n:
        raise ValueError(f"{name} must be integers in [0, n] = [0, {n}]; got values outside that range")
    return arr.astype(np.int64, copy=False)


# --------------------------------------------------------------------------------------------
# the certified design
# --------------------------------------------------------------------------------------------


@dataclass(eq=False)
class _Certified:
    """What every certified object shares: exact weights, the certificate, persistence."""

    design: Any
    weights: np.ndarray
    bits: int
    eps: float
    delta: float
    certified_delta: Fraction
    repair: dict[str, Any] = field(default_factory=dict)
    solver: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.layout: PairLayout = self.design.pair_layout()
        w = np.asarray(self.weights, dtype=np.int64).reshape(self.layout.weights_shape)
        self.weights = w
        sums = w.reshape(self.layout.rows, self.layout.cols).sum(axis=1, dtype=np.int64)
        if np.any(sums != self.denominator):
            raise ValueError(
                f"weights must sum to 2**bits = {self.denominator} (in every row); they sum to {int(sums[0])}"
            )

    @property
    def notion(self) -> str:
        """The certified privacy notion (the design's)."""
        return self.design.privacy

    @property
    def n(self) -> int:
        return self.design.n

    @property
    def denominator(self) -> int:
        """``2**bits``."""
        return 1 << self.bits

    def _exact(self) -> np.ndarray:
        """The weights as exact fractions of ``2**bits`` (object array, the weights' shape)."""
        D = self.denominator
        out = np.empty(self.weights.size, dtype=object)
        out[:] = [Fraction(int(v), D) for v in self.weights.ravel()]
        return out.reshape(self.weights.shape)

    def _float(self) -> np.ndarray:
        """The weights as float probabilities (sampling uses the integers)."""
        return self.weights.astype(float) / float(self.denominator)

    def check(self) -> Fraction | float:
        """Re-run the exact check (:func:`exact_pair_delta`) on the weights."""
        return self.layout.check(self.weights.ravel(), self.denominator, _check_bounds(self.eps))

    def verify(self) -> bool:
        """True when the exact check reproduces ``certified_delta`` and it is within the target."""
        got = self.check()
        return got == self.certified_delta and got <= Fraction(self.delta)

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (exact: weights and rationals as decimal strings), with its digest ``sha256``."""
        from optnoise import __version__

        doc = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "optnoise_version": __version__,
            "problem": self.design.spec(),
            "denominator_bits": self.bits,
            "shape": list(self.weights.shape),
            "weights": [str(int(v)) for v in self.weights.ravel()],
            "certificate": _certificate(self.design, self.eps, self.delta, self.certified_delta),
            "repair": self.repair,
            "solver": self.solver,
        }
        doc = json.loads(json.dumps(doc))  # plain JSON values, exactly as a reader will see them
        doc["sha256"] = file_digest(doc)
        return doc

    def save(self, path: str | os.PathLike) -> Path:
        """Write the design as JSON (see :func:`load_design`), atomically."""
        path = check_output_path("path", path)
        return atomic_write_text(path, json.dumps(self.to_dict(), indent=1))

    @classmethod
    def from_dict(cls, data: Any) -> Any:
        """Rebuild from :meth:`to_dict` output, re-proving the certificate exactly.

        Returns a :class:`CertifiedDesign` or a :class:`CertifiedMechanism`,
        whichever the problem's layout is. Raises ``ValueError`` naming the
        field: wrong format tag or version, a digest that does not match the
        canonical file, a malformed field, or a certificate that differs from
        a fresh exact re-check of the problem the file names.
        """

        def bad(name: str, why: str) -> ValueError:
            return ValueError(f"design file field {name!r}: {why}")

        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"design file is not an optnoise certified design (missing format tag {FORMAT!r})")
        version = data.get("format_version")
        if isinstance(version, bool) or not isinstance(version, int):
            raise bad("format_version", f"must be the integer {FORMAT_VERSION}; got {version!r}")
        if version > FORMAT_VERSION:
            raise bad(
                "format_version",
                f"{version} is newer than this optnoise supports ({FORMAT_VERSION}); upgrade optnoise to load it",
            )
        if version != FORMAT_VERSION:
            why = " (version 1 hashed only the weights; re-certify the design)" if version == 1 else ""
            raise bad("format_version", f"unknown version {version}; this optnoise reads {FORMAT_VERSION}{why}")
        unknown = sorted(set(data) - set(FILE_FIELDS) - {"sha256"})
        if unknown:
            raise bad(unknown[0], "is not a field of the design format")
        missing = [k for k in FILE_FIELDS + ("sha256",) if k not in data]
        if missing:
            raise bad(missing[0], "is missing")
        if not isinstance(data["sha256"], str) or data["sha256"] != file_digest(data):
            raise bad(
                "sha256",
                "does not match the digest of the file's canonical content: the file is corrupted or was edited "
                "(the digest detects changes; it is not a signature)",
            )
        if not isinstance(data["optnoise_version"], str):
            raise bad("optnoise_version", f"must be a string; got {data['optnoise_version']!r}")
        try:
            design = _design_from_spec(data["problem"])
        except ValueError as exc:
            raise bad("problem", str(exc)) from None
        layout = design.pair_layout()
        bits = data["denominator_bits"]
        if isinstance(bits, bool) or not isinstance(bits, int) or not 16 <= bits <= 62:
            raise bad("denominator_bits", f"must be an integer in [16, 62]; got {bits!r}")
        if data["shape"] != list(layout.weights_shape):
            raise bad("shape", f"must be the problem's shape {list(layout.weights_shape)}; got {data['shape']!r}")
        wtxt = data["weights"]
        if (
            not isinstance(wtxt, list)
            or len(wtxt) != layout.size
            or not all(isinstance(t, str) and t.isascii() and t.isdigit() and len(t) <= 20 for t in wtxt)
        ):
            raise bad("weights", f"must be {layout.size} non-negative integer strings")
        w = [int(t) for t in wtxt]
        sums = [sum(w[r * layout.cols : (r + 1) * layout.cols]) for r in range(layout.rows)]
        wrong = [s for s in sums if s != 1 << bits]
        if wrong:
            rows = " in every row" if layout.rows > 1 else ""
            raise bad("weights", f"must sum to 2**{bits}{rows}; they sum to {wrong[0]}")
        for name in ("repair", "solver"):
            if not isinstance(data[name], dict):
                raise bad(name, f"must be a mapping; got {type(data[name]).__name__}")
        cert = data["certificate"]
        if not isinstance(cert, dict):
            raise bad("certificate", f"must be a mapping; got {type(cert).__name__}")
        try:
            eps = check_eps(cert.get("eps"), name="design file field 'certificate.eps'")
            delta = check_delta(cert.get("delta"), name="design file field 'certificate.delta'")
        except ValueError as exc:
            raise ValueError(str(exc)) from None
        if eps != design.eps:
            raise bad("certificate.eps", f"must be the problem's eps {design.eps!r}; got {eps!r}")
        if design.objective != "delta" and delta != design.delta:
            raise bad("certificate.delta", f"must be the problem's delta {design.delta!r}; got {delta!r}")
        # the certificate is recomputed from the weights and the problem, and must be what the file says
        got = layout.check(w, 1 << bits, _check_bounds(eps))
        if not isinstance(got, Fraction) or not got <= Fraction(delta):
            shown = "inf" if not isinstance(got, Fraction) else f"{float(got):.6g}"
            raise bad(
                "weights",
                f"do not meet their certificate: the exact check of the stated problem gives delta {shown} > "
                f"the certified target {delta:g}",
            )
        fresh = _certificate(design, eps, delta, got)
        for key, value in fresh.items():
            if cert.get(key) != value:
                raise bad(
                    f"certificate.{key}",
                    f"does not match a fresh exact re-check of the problem ({value!r} expected, "
                    f"{cert.get(key)!r} in the file): the weights do not match their certificate",
                )
        extra = sorted(set(cert) - set(fresh))
        if extra:
            raise bad(f"certificate.{extra[0]}", "is not a field of the certificate")
        kind = CertifiedDesign if layout.kind == "pmf" else CertifiedMechanism
        return kind(
            design=design,
            weights=np.array(w, dtype=np.int64),
            bits=bits,
            eps=eps,
            delta=delta,
            certified_delta=got,
            repair=dict(data["repair"]),
            solver=dict(data["solver"]),
        )

    @classmethod
    def load(cls, path: str | os.PathLike) -> Any:
        """Read a design file written by :meth:`save`; see :func:`load_design`."""
        return load_design(path)

    def _summary_lines(self, neighbours: Any, measure: str) -> list[str]:
        r = self.repair
        return [
            f"neighbours  {neighbours}",
            f"certified   eps={self.eps:g}  delta={float(self.certified_delta):.10g}  (target {self.delta:g}, exact "
            f"{_frac_str(self.certified_delta) if self.certified_delta.denominator < 10**30 else 'rational'})",
            f"weights     integers over 2^{self.bits}" + ("" if self.layout.rows == 1 else " (every row)"),
            f"repair      {r.get('method')}  mix_weight={r.get('mix_weight', 0):.3g}  margin={r.get('margin')}  "
            f"{measure} {r.get('distortion_solver', float('nan')):.10g} -> "
            f"{r.get('distortion_certified', float('nan')):.10g}  (loss {r.get('loss', 0):.3g})",
        ]

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n={self.n}, shape={self.weights.shape}, notion={self.notion!r}, eps={self.eps:g}, "
            f"certified_delta={float(self.certified_delta):.6g}, bits={self.bits}, "
            f"repair={self.repair.get('method')!r})"
        )


@dataclass(eq=False, repr=False)
class CertifiedDesign(_Certified):
    """A noise design with exact integer weights, an exact privacy certificate and an exact sampler.

    Build one with :meth:`DesignResult.certify` / :func:`certify_result`, or
    :func:`load_design`.

    Attributes
    ----------
    design : NoiseDesign
        The problem (n, shape, shifts, direction, metric, notion).
    weights : ndarray of int64, shape ``(n+1,)*d``
        The exact PMF is ``weights / 2**bits``.
    bits : int
        ``log2`` of the common denominator.
    eps, delta : float
        The certified target: the check is at ``eps``, and
        ``certified_delta <= delta``.
    certified_delta : Fraction
        Exact upper bound on the design's delta under its notion at ``eps``.
    repair : dict
        How the solver's PMF became ``weights``: method, mixing weight, margin,
        distortions and the loss (see the module docstring).
    solver : dict
        Solver name, status, gap, time and model size of the source result.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        self._table = _SamplingTable(self.weights, self.bits)
        # coordinates of every flat noise index, for vector designs
        self._coords = np.indices(self.shape).reshape(len(self.shape), -1).T.astype(np.int64)

    # ------------------------------------------------------------------ properties
    @property
    def shape(self) -> tuple[int, ...]:
        return self.design.shape

    @property
    def pmf(self) -> np.ndarray:
        """The exact PMF as an object array of :class:`fractions.Fraction`."""
        return self._exact()

    @property
    def pmf_float(self) -> np.ndarray:
        """The PMF as floats (for plots and float accounting; sampling uses the integers)."""
        return self._float()

    @property
    def distortion(self) -> Fraction:
        """Exact ``sum_eta rho_eta w(eta) / D`` under the design's metric (costs are exact floats)."""
        cost = self.design.cost.ravel()
        num = sum(
            (Fraction(float(c)) * int(v) for c, v in zip(cost, self.weights.ravel(), strict=True) if v), Fraction(0)
        )
        return num / self.denominator

    # ------------------------------------------------------------------ sampling
    def _lookup(self, u: np.ndarray) -> np.ndarray:
        """Flat noise index of each draw (:class:`_SamplingTable`)."""
        return self._table.lookup(u)

    def sample(self, size: int | tuple[int, ...] | None = None, *, rng: np.random.Generator | None = None) -> Any:
        """Draw noise values exactly from ``weights / 2**bits``.

        Parameters
        ----------
        size : int or tuple, optional
            Number/shape of draws; ``None`` draws one.
        rng : numpy.random.Generator, optional
            ``None`` (default): the OS CSPRNG, for deployment. A seeded
            Generator makes runs reproducible; it is **not** for deployment.

        Returns
        -------
        int, or ndarray of int64 with shape ``size`` (scalar designs) or
        ``size + (d,)`` (vector designs).
        """
        rng = _check_rng(rng)
        raw: Any = size  # validated entry by entry below, whatever the caller passed
        dims = () if raw is None else ((raw,) if np.ndim(raw) == 0 else tuple(raw))
        shape = tuple(check_int("size", s, minimum=0) for s in dims)
        count = int(np.prod(shape)) if shape else 1
        flat = self._lookup(_draw_uniform(count, self.bits, rng)) if count else np.zeros(0, dtype=np.int64)
        if self.design.dim == 1:
            out = flat.astype(np.int64, copy=False).reshape(shape)
        else:
            out = self._coords[flat].reshape(shape + (self.design.dim,))
        if size is None and self.design.dim == 1:
            return int(out)
        return out

    def release(self, q: Any, rng: np.random.Generator | None = None) -> Any:
        """Release ``q + eta (mod n+1)`` with ``eta`` drawn exactly from the certified PMF.

        Parameters
        ----------
        q : int or array_like
            True answers in ``{0..n}``: a scalar or any array for scalar
            designs; a vector of length d, or an array of shape ``(..., d)``, for
            vector designs. Each answer gets an independent noise draw.
        rng : numpy.random.Generator, optional
            ``None`` (default) uses the OS CSPRNG; a seeded Generator is for
            reproducible experiments only, never for deployment.

        Returns
        -------
        int or ndarray of int64, the shape of ``q``.
        """
        rng = _check_rng(rng)
        d, n = self.design.dim, self.n
        arr = _check_answers(q, n)
        if d > 1 and (arr.ndim == 0 or arr.shape[-1] != d):
            raise ValueError(f"q must have a last axis of length d = {d} for this vector design; got shape {arr.shape}")
        batch = arr.shape if d == 1 else arr.shape[:-1]
        noise = self.sample(batch if batch else 1, rng=rng)
        out = np.asarray(noise).ravel() + arr.ravel()  # both in [0, n]: at most one wrap
        np.subtract(out, n + 1, out=out, where=out > n)
        return int(out[0]) if arr.ndim == 0 else out.reshape(arr.shape)

    # ------------------------------------------------------------------ accounting and interop
    def pld(self, *, discretization: float = accounting.DISCRETIZATION, shift: Any = None) -> Any:
        """dp-accounting PLD of the exact PMF (as floats); see :meth:`optnoise.design.DesignResult.pld`."""
        return accounting.result_pld(self.pmf_float, self.design.shifts, discretization, shift)

    def compose(self, k: int, *, discretization: float = accounting.DISCRETIZATION) -> accounting.Composition:
        """k-fold composition (``.epsilon(delta)``, ``.delta(eps)``) of the exact PMF; see :mod:`optnoise.accounting`.

        The weights ``w / 2**bits`` are converted to floats (relative error
        ~1e-16, far below the PLD discretisation).
        """
        return accounting.compose(self.pmf_float, self.design.shifts, k, discretization=discretization)

    def plot(self, *, baseline: Any = None, eps: Any = None, ax: Any = None) -> Any:
        """PMF and privacy profile of the exact PMF; see :func:`optnoise.plotting.plot_design`."""
        label = f"certified ({self.notion}, eps={self.eps:g})"
        return plotting.plot_design(
            self.pmf_float, self.design.shifts, baseline=baseline, eps=eps, axes=ax, label=label
        )

    def to_opendp(self, *, rng: np.random.Generator | None = None) -> Any:
        """An OpenDP measurement sampling with this exact sampler and carrying the certificate as its privacy map.

        See :func:`optnoise.interop.to_opendp` (needs ``pip install optnoise[opendp]``).
        """
        return interop.to_opendp(self, rng=rng)

    def summary(self) -> str:
        """A few human-readable lines."""
        d = self.design
        neighbours = d.neighborhood.describe(self.n) if d.dim == 1 else d.shifts.tolist()
        head = f"problem     n={self.n}  shape={self.shape}  notion={self.notion}  metric={d.metric}"
        return "\n".join([head, *self._summary_lines(neighbours, "distortion")])


@dataclass(eq=False, repr=False)
class CertifiedMechanism(_Certified):
    """A mechanism matrix with exact integer weights, an exact certificate and an exact sampler.

    Row ``x`` of ``weights`` (shape ``(n+1, m+1)``) sums to ``2**bits``; the
    released output for input ``x`` is ``outputs[y]`` with probability
    exactly ``weights[x, y] / 2**bits``. The certificate covers every ordered
    neighbour pair of the design (:func:`exact_pair_delta`). Build one with
    :meth:`MechanismResult.certify <optnoise.mechanism_design.MechanismResult.certify>`
    or :func:`load_design`.

    Attributes
    ----------
    design : MechanismDesign or NoiseDesign
        The problem (a clamped noise design is certified as its induced matrix).
    weights : ndarray of int64, shape ``(n+1, m+1)``
    bits, eps, delta, certified_delta, repair, solver
        As for :class:`CertifiedDesign`.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        self._tables: dict[int, _SamplingTable] = {}

    @property
    def outputs(self) -> np.ndarray:
        """The released value of every column."""
        out = self.layout.outputs
        return np.arange(self.layout.cols) if out is None else out

    @property
    def matrix(self) -> np.ndarray:
        """The exact matrix as an object array of :class:`fractions.Fraction`."""
        return self._exact()

    @property
    def matrix_float(self) -> np.ndarray:
        """The matrix as floats (sampling uses the integers)."""
        return self._float()

    @property
    def loss(self) -> float:
        """The design's loss of the certified matrix (float)."""
        return self.layout.loss_of(self.matrix_float.ravel())

    def _table(self, x: int) -> _SamplingTable:
        # one table per input, built on first use; small guides keep large matrices cheap
        if x not in self._tables:
            self._tables[x] = _SamplingTable(self.weights[x], self.bits, guide_bits=10)
        return self._tables[x]

    def _lookup(self, x: int, u: np.ndarray) -> np.ndarray:
        """Output column of each draw ``u`` for input ``x``."""
        return self._table(x).lookup(u)

    def release(self, x: Any, rng: np.random.Generator | None = None) -> Any:
        """Release the mechanism's output for input(s) ``x``, drawn exactly from the certified rows.

        Parameters
        ----------
        x : int or array_like
            Inputs in ``{0..n}``; each gets an independent draw.
        rng : numpy.random.Generator, optional
            ``None`` (default) uses the OS CSPRNG; a seeded Generator is for
            reproducible experiments only, never for deployment.

        Returns
        -------
        The output value(s) (``outputs[y]``; Python ints for integer outputs),
        the shape of ``x``.
        """
        rng = _check_rng(rng)
        arr = _check_answers(x, self.n, "x")
        flat = arr.ravel()
        u = _draw_uniform(flat.size, self.bits, rng)
        cols = np.empty(flat.size, dtype=np.int64)
        for v in np.unique(flat):
            sel = np.flatnonzero(flat == v)
            cols[sel] = self._lookup(int(v), u[sel])
        vals = self.outputs[cols]
        if arr.ndim == 0:
            v0 = vals[0]
            return int(v0) if float(v0) == int(v0) else float(v0)
        return vals.reshape(arr.shape)

    def summary(self) -> str:
        """A few human-readable lines."""
        d = self.design
        head = (
            f"problem     n={self.n}  outputs={self.layout.cols}  notion={self.notion}  "
            f"loss={getattr(d, 'loss', getattr(d, 'metric', ''))}"
        )
        if hasattr(d, "describe_neighbors"):
            neighbours = d.describe_neighbors()
        else:  # a clamped noise design: its answer pairs
            neighbours = f"{d.neighborhood.describe()}: {len(self.layout.first)} ordered pairs of answers 0..{self.n}"
        return "\n".join([head, *self._summary_lines(neighbours, "loss")])


def file_digest(doc: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of every field of a design file but ``sha256`` itself.

    Canonical: keys sorted, no whitespace, ASCII escapes; floats as Python's
    shortest round-trip repr, so a file's digest does not depend on how it
    was indented or re-serialised.
    """
    body = {k: v for k, v in doc.items() if k != "sha256"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _certificate(design: Any, eps: float, delta: float, certified: Fraction | float) -> dict[str, Any]:
    """The certificate block of a design file (a function of the problem, eps, delta and the exact delta)."""
    lo, hi = _check_bounds(eps)
    return {
        "notion": design.privacy,
        "eps": eps,
        "delta": delta,
        "certified_delta": _frac_str(certified),
        "certified_delta_float": float(certified),
        "exp_eps_lower": _frac_str(lo),
        "exp_eps_upper": _frac_str(hi),
    }


def register_spec_kind(kind: str, from_spec: Callable[[dict[str, Any]], Any]) -> None:
    """Teach :func:`load_design` to rebuild problems of ``kind`` from their ``spec()``.

    The certification layer knows problems only through the interface they
    share (``spec()``, ``pair_layout()``, ``eps``, ``privacy``, ``replace()``);
    each problem class registers how to rebuild itself from a saved spec, so
    this module never imports the classes it certifies.
    """
    _SPEC_KINDS[kind] = from_spec


def _design_from_spec(spec: Any) -> Any:
    """The problem a design file names, rebuilt (and fully re-validated) from its spec."""
    if not isinstance(spec, dict):
        raise ValueError("design file 'problem' must be a mapping (NoiseDesign.spec())")
    kind = spec.get("kind", "noise")
    if kind not in _SPEC_KINDS:
        raise ValueError(f"design file 'problem.kind' must be one of {', '.join(sorted(_SPEC_KINDS))}; got {kind!r}")
    return _SPEC_KINDS[kind](spec)


def load_design(path: str | os.PathLike) -> Any:
    """Load a certified design, re-proving its certificate exactly.

    Returns a :class:`CertifiedDesign` (noise PMF) or a
    :class:`CertifiedMechanism` (mechanism matrix, or clamped noise).

    Raises
    ------
    ValueError
        The path is not a path, the file is missing, not JSON (or nested too
        deeply), not a design, of another format version, its digest does not
        match, or a field is malformed or differs from a fresh exact re-check
        of the problem it names (the message names the field).
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise ValueError(f"path must be the path of a design file; got {path!r}")
    return _Certified.from_dict(read_json(path, "design file"))


# --------------------------------------------------------------------------------------------
# certification with repair
# --------------------------------------------------------------------------------------------


@dataclass
class _Attempt:
    weights: np.ndarray | None
    delta: Fraction | float
    mix_units: int
    source: str
    margin: float | None
    note: str = ""


class _Certifier:
    """State shared by the repair steps of one :func:`certify_result` call."""

    def __init__(self, layout: PairLayout, target: Fraction, bits: int) -> None:
        self.layout = layout
        self.target = target
        self.bits = bits
        self.D = 1 << bits
        self.C = layout.cols
        self.bounds: tuple[Fraction, Fraction] = (Fraction(0), Fraction(0))

    def weights_for(self, p: np.ndarray, c: int) -> np.ndarray:
        """``B + c`` where ``B`` rounds each row of ``p`` to total ``D - c C``.

        That is the mixture of every row with ``lam = cC/D`` of the uniform
        distribution on its outputs.
        """
        rows = p.reshape(self.layout.rows, self.C)
        return np.concatenate([round_to_total(row, self.D - c * self.C) for row in rows]) + c

    def delta_of(self, w: np.ndarray) -> Fraction | float:
        return self.layout.check(w, self.D, self.bounds)

    def loss_of(self, w: np.ndarray, base: float) -> float:
        return self.layout.loss_of(np.asarray(w, dtype=float) / self.D) - base

    def mix(self, p: np.ndarray, base: float, budget: float, source: str, margin: float | None) -> _Attempt:
        """Smallest uniform mixing (in units c) that certifies, searched by doubling then bisection.

        Stops once the mixing alone would cost more than ``budget`` loss.
        """
        w = self.weights_for(p, 0)
        dl = self.delta_of(w)
        if dl <= self.target:
            return _Attempt(w, dl, 0, source, margin)
        cmax = self.D // self.C
        # each unit of c moves mass C/D of every row to the uniform row: loss ~ c C (uniform loss - base) / D
        uniform = np.full(self.layout.size, 1.0 / self.C)
        slope = self.C * (self.layout.loss_of(uniform) - base) / self.D
        c_budget = cmax if (budget == math.inf or slope <= 0) else int(min(cmax, 2 * budget / slope + 1))
        lo, c = 0, 1
        while True:
            c = min(c, cmax)
            w = self.weights_for(p, c)
            dl = self.delta_of(w)
            if dl <= self.target:
                break
            lo = c
            if c >= cmax or c >= c_budget:
                return _Attempt(
                    None,
                    dl,
                    c,
                    source,
                    margin,
                    note=f"mixing up to weight {c * self.C / self.D:.3g} did not certify within the loss budget",
                )
            c *= 2
        hi, best = c, (w, dl)
        while hi - lo > max(1, hi // 32):  # bisection to within ~3% of the smallest certifying c
            mid = (lo + hi) // 2
            wm = self.weights_for(p, mid)
            dm = self.delta_of(wm)
            if dm <= self.target:
                hi, best = mid, (wm, dm)
            else:
                lo = mid
        return _Attempt(best[0], best[1], hi, source, margin)


def _prepare(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float).ravel(), 0.0, None)
    p[p < ZERO_TOL] = 0.0
    return p


def _margin_solution(
    layout: PairLayout, eps: float, p: np.ndarray, target: float, tau: float, lam: float, solver: str
) -> np.ndarray | None:
    """Re-solve with a margin ``tau`` (repair step b); flat probabilities, or ``None`` without an optimum.

    dp: the design's own LP at ``delta = target - tau`` (``layout.resolve``).
    pure, pdp and pdp-kadam: first ``lam`` of uniform is mixed into every row
    of the solver's solution, so that no mass sits below the solver's
    absolute tolerance (a solver may leave masses of ~1e-10 that leak only
    within its tolerance). The leak pattern of that solution is read with a
    relative test (``P(o) > e^eps Q(o) (1 + PATTERN_RTOL)``, so a positive
    mass before a zero leaks) and fixed, which leaves an LP with *relative*
    margins on the ratio rows and an absolute margin on the leak budgets:

    * pdp: ``P(o) <= (1-tau) e^eps Q(o)`` for every non-leaking entry of
      every pair, and ``sum_{o leaking} P(o) <= target - tau`` per pair;
    * pdp-kadam (noise PMFs): with ``U`` the values leaking for some shift,
      ``f(eta) <= (1-tau) e^eps f(eta+mu)`` for eta not in U and (13g)
      ``f(eta) >= (1+tau) e^eps f(eta+mu)`` for eta in U, every mu, and
      ``sum_U f <= target - tau``.

    The objective is the design's loss (an epigraph variable when it is the
    maximum of several loss rows). Columns are scaled by the reference
    masses (``p = s x``) and each ratio row by its largest coefficient, so
    the LP's absolute feasibility tolerance acts relatively on ``p`` and the
    relative margins survive at every scale. Every feasible point is feasible
    for the design's notion at ``target - tau`` (pdp-kadam with ``u = 1_U``);
    the exact check decides in any case.
    """
    pure = target == 0.0
    notion = layout.notion
    if notion == "dp" and not pure:
        sol = layout.resolve(target - tau, solver)
        return None if sol is None else layout.embed(sol)
    R, C, N = layout.rows, layout.cols, layout.size
    first, second = layout.first, layout.second
    K = first.shape[0]
    E = float(np.exp(eps))
    rows_p = p.reshape(R, C)
    rows_p = (1.0 - lam) * rows_p / rows_p.sum(axis=1, keepdims=True) + lam / C
    p = rows_p.ravel()
    U = p[first] > E * (1.0 + PATTERN_RTOL) * p[second]  # (K, C) leak pattern
    if pure:
        U = np.zeros((K, C), dtype=bool)
    if notion == "pdp-kadam":
        U = np.broadcast_to(U.any(axis=0), (K, C))
    scale = np.where(p > 0, p, 1.0)
    mb = ModelBuilder()
    x = mb.add_vars(N, lb=0.0, ub=1.0 / scale, name="x")
    mb.add_rows(np.repeat(np.arange(R), C), x, scale, lower=1.0, upper=1.0)
    loss = layout.loss * scale[None, :]
    if loss.shape[0] == 1:
        mb.set_objective(x, loss[0])
    else:  # min z with every loss row <= z
        z = mb.add_vars(1, lb=-np.inf, ub=np.inf, name="z")
        r, c = np.nonzero(loss)
        mb.add_rows(
            np.concatenate([r, np.arange(loss.shape[0])]),
            np.concatenate([x[c], np.full(loss.shape[0], z[0])]),
            np.concatenate([loss[r, c], -np.ones(loss.shape[0])]),
            upper=0.0,
        )
        mb.set_objective(z, [1.0])
    # ratio rows sign * (p(a) - factor p(b)) <= 0: non-leaking entries always; (13g) for pdp-kadam's U
    rows = np.ones((K, C), dtype=bool) if notion == "pdp-kadam" else ~U
    ks, cs = np.nonzero(rows)
    a, b = first[ks, cs], second[ks, cs]
    g13 = U[ks, cs] if notion == "pdp-kadam" else np.zeros(a.size, dtype=bool)
    sign = np.where(g13, -1.0, 1.0)
    ca, cb = scale[a], np.where(g13, (1.0 + tau) * E, (1.0 - tau) * E) * scale[b]
    top = np.maximum(ca, cb)
    r = np.arange(a.size)
    mb.add_rows(
        np.repeat(r, 2),
        np.stack([x[a], x[b]], 1).ravel(),
        np.stack([sign * ca / top, -sign * cb / top], 1).ravel(),
        upper=0.0,
    )
    budget_sets = U[:1] if notion == "pdp-kadam" else U
    for m in range(budget_sets.shape[0]):
        if budget_sets[m].any():
            cols = first[m][budget_sets[m]]
            # written relative to the target when the solver's absolute tolerance would be a large part of it
            rel = 1.0 / max(target, DELTA_ATOL) if target > 0 and FEASIBILITY_TOL > DELTA_RTOL * target else 1.0
            mb.add_row(x[cols], scale[cols] * rel, upper=(target - tau) * rel)
    out = solve_model(mb.build(), solver=solver)
    if out.status != "optimal" or out.x is None:
        return None
    return np.clip(out.x[x] * scale, 0.0, None)


def _solution_of(result: Any) -> np.ndarray | None:
    """The float solution a result holds: a mechanism's ``matrix`` or a noise design's ``pmf``."""
    matrix = getattr(result, "matrix", None)
    return matrix if matrix is not None else getattr(result, "pmf", None)


def _margin_plan(margins: tuple[float, ...], target: float) -> list[float]:
    """The absolute margins to try below ``target``.

    Margins at least half the target cannot leave a useful budget; when some
    of ``margins`` are dropped for that reason, fractions of the target
    (:data:`MARGIN_FRACTIONS`) take their place, so a delta of 1e-12 is
    re-solved with margins of 1e-18 .. 1e-13 instead of none.
    """
    if target == 0:
        return list(margins)
    kept = [t for t in margins if t < target / 2]
    if len(kept) == len(margins):
        return kept
    extra = [target * r for r in MARGIN_FRACTIONS if target * r not in kept]
    return sorted(set(kept + extra))


def certify_result(
    result: Any,
    *,
    delta: float | None = None,
    bits: int = DEFAULT_BITS,
    max_loss: float = MAX_LOSS,
    margins: tuple[float, ...] = MARGINS,
    allow_suboptimal: bool = False,
    allow_unverified: bool = False,
    solver: str = "highs",
) -> Any:
    """Certify a solved design exactly and build its exact sampler.

    Parameters
    ----------
    result : DesignResult or MechanismResult
        A solved design (``status == "optimal"``).
    delta : float, optional
        The delta to certify at the design's eps. Default: the design's delta;
        for a minimise-delta design (15a), which asks for no particular delta,
        the solver's minimum with the slack of the tolerance rule
        (:func:`optnoise.tolerance.delta_allowance`; the exact certified delta,
        reported, is usually far closer to the minimum). For a design
        certified at another delta than its own, the returned design states
        the problem at that delta.
    bits : int
        The weights are integers over ``2**bits`` (16..62).
    max_loss : float
        Largest accepted increase of the design's loss (distortion) from
        repair, relative to ``max(1, |solver loss|)``; ``inf`` accepts any.
    margins : tuple of float
        Absolute margins tried by the re-solve step, in order (those that do
        not fit below a small delta are replaced by fractions of it).
    allow_suboptimal : bool
        Certify the incumbent of a ``"time_limit"`` result (it is feasible but
        not proven optimal).
    allow_unverified : bool
        Repair an ``"unverified"`` result (its solution meets the constraints
        only within the solver's tolerance); the loss is measured against its
        own. Other statuses are always refused.
    solver : str
        Backend for the re-solve step.

    Returns
    -------
    CertifiedDesign (noise PMFs) or CertifiedMechanism (mechanism matrices,
    and clamped noise designs, which are certified as their induced matrix).

    Raises
    ------
    CertificationError
        Non-optimal status, no solution, or the target cannot be certified
        within ``max_loss`` (the message says which).
    """
    if not (hasattr(result, "design") and hasattr(result, "status") and hasattr(result.design, "pair_layout")):
        raise ValueError(
            "result must be a DesignResult or MechanismResult (from NoiseDesign.solve() or "
            f"MechanismDesign.solve()); got {type(result).__name__}"
        )
    design = result.design
    if design.privacy not in NOTIONS:
        raise CertificationError(
            f"certification covers privacy in {', '.join(NOTIONS)}; a {design.privacy!r} design has no single "
            "(eps, delta) to certify (account for it with result.compose(k) or result.pld())"
        )
    sol = _solution_of(result)
    ok_status = (
        result.status == "optimal"
        or (allow_suboptimal and result.status == "time_limit")
        or (allow_unverified and result.status == "unverified")
    )
    if not ok_status or sol is None:
        what = "matrix" if hasattr(result, "matrix") else "PMF"
        why = f"has no {what}" if sol is None else "is not proven optimal"
        hint = "" if result.status != "time_limit" else "; pass allow_suboptimal=True to certify the incumbent"
        raise CertificationError(f"cannot certify a result with status {result.status!r}: it {why}{hint}")
    bits = check_int("bits", bits, minimum=16, maximum=62)
    if isinstance(max_loss, (int, float)) and not isinstance(max_loss, bool) and max_loss == math.inf:
        max_loss = math.inf
    else:
        max_loss = check_positive("max_loss", max_loss, allow_zero=True)
    check_choice("solver", solver, SOLVERS)
    if delta is None:
        if design.objective != "delta":
            target_f = float(design.delta or 0.0)  # set whenever delta is not what is minimised
        else:
            target_f = min(1.0, delta_allowance(float(result.delta_objective or 0.0)))
    else:
        target_f = check_delta(delta)
    if isinstance(margins, (str, bytes)) or not isinstance(margins, (tuple, list)) or not margins:
        raise ValueError(f"margins must be a non-empty sequence of positive numbers; got {margins!r}")
    margins = tuple(check_positive("margins", t) for t in margins)
    layout = design.pair_layout()
    p_result = _prepare(layout.embed(sol))
    # the loss the repair is measured against: the result's own, on its clipped and renormalised solution
    base = layout.loss_of(p_result / np.repeat(p_result.reshape(layout.rows, -1).sum(axis=1), layout.cols))
    if design.objective != "delta" and target_f != design.delta:
        # the certified design names the problem at the delta it is certified for, so that a saved
        # file's certificate always equals a fresh check of the problem it states
        design = design.replace(delta=target_f)
        layout = design.pair_layout()
    target = Fraction(target_f)
    cert = _Certifier(layout, target, bits)
    cert.bounds = _check_bounds(design.eps)
    budget = max_loss * max(1.0, abs(base))
    attempts: list[_Attempt] = []

    def accept(att: _Attempt) -> bool:
        attempts.append(att)
        return att.weights is not None and cert.loss_of(att.weights, base) <= budget

    def repaired(p0: np.ndarray, target: float, source: str) -> _Attempt | None:
        """Steps (a) then (b) on ``p0`` at ``target``: the first candidate within the loss budget."""
        att = cert.mix(p0, base, budget, source, None)
        if accept(att):
            return att
        # escalate: margin tau, first without, then with a pre-mix lam = tau (not for dp)
        lp_path = layout.notion != "dp" or target == 0
        plan = [(tau, lam) for tau in _margin_plan(margins, target) for lam in ((0.0, tau) if lp_path else (0.0,))]
        for tau, lam in plan:
            p = _margin_solution(layout, design.eps, p0, target, tau, lam, solver)
            if p is None:
                attempts.append(_Attempt(None, math.inf, 0, f"{source}+margin", tau, note="re-solve not optimal"))
                continue
            att = cert.mix(_prepare(p), base, budget, "margin-resolve" if source == "solver" else source, tau)
            if accept(att):
                return att
        return None

    chosen = repaired(p_result, target_f, "solver")
    if chosen is None and target_f > 0 and design.objective != "delta":
        # (c) the pure eps-DP design has delta 0 under every notion: it meets any target
        pure = design.replace(delta=0.0).solve(solver=solver)
        pure_sol = _solution_of(pure)
        if pure.status in ("optimal", "unverified") and pure_sol is not None:
            chosen = repaired(_prepare(layout.embed(pure_sol)), 0.0, "pure-fallback")
        else:
            attempts.append(_Attempt(None, math.inf, 0, "pure-fallback", None, note=f"status {pure.status}"))
    if chosen is None:
        losses = [cert.loss_of(a.weights, base) for a in attempts if a.weights is not None]
        best = f"smallest certifying loss {min(losses):.3g}" if losses else "no candidate certified"
        raise CertificationError(
            f"cannot certify the requested (eps={design.eps:g}, delta={target_f:g}) under {design.privacy!r} "
            f"with distortion loss <= max_loss={max_loss:g} (relative to max(1, distortion)); "
            f"tried rounding, uniform mixing and {len(attempts) - 1} margin re-solve(s): {best}. "
            "Pass a larger max_loss, or a larger delta explicitly, to accept a weaker design."
        )
    w = chosen.weights
    if w is None or not isinstance(chosen.delta, Fraction):  # accept() takes only finite, weighted attempts
        raise CertificationError("internal error: the accepted candidate has no exact certificate")
    dist_cert = layout.loss_of(np.asarray(w, dtype=float) / cert.D)
    if chosen.mix_units == 0 and chosen.source == "solver":
        method = "none"
    elif chosen.source == "solver":
        method = "mix-uniform"
    else:
        method = f"{chosen.source}+mix-uniform" if chosen.mix_units else chosen.source
        if chosen.source == "pure-fallback" and chosen.margin is not None:
            method = method.replace("pure-fallback", "pure-fallback+margin-resolve")
    repair = {
        "method": method,
        "mix_units": int(chosen.mix_units),
        "mix_weight": chosen.mix_units * cert.C / cert.D,
        "margin": chosen.margin,
        "distortion_solver": base,
        "distortion_certified": dist_cert,
        "loss": dist_cert - base,
        "max_loss": None if max_loss == math.inf else max_loss,
        "attempts": len(attempts),
    }
    solver_meta = {
        "name": result.solver,
        "status": result.status,
        "gap": result.gap,
        "solve_time_s": result.solve_time,
        "model_size": result.model_size,
    }
    kind = CertifiedDesign if layout.kind == "pmf" else CertifiedMechanism
    return kind(
        design=design,
        weights=np.array([int(v) for v in w], dtype=np.int64),
        bits=bits,
        eps=design.eps,
        delta=target_f,
        certified_delta=chosen.delta,
        repair=repair,
        solver=solver_meta,
    )
