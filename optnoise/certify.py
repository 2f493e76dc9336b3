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
      every (13g) row. Then (a) again. Margins ``tau`` escalate from 1e-10.

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
   specification, the certificate, solver metadata and the optnoise version.
   :func:`load_design` re-runs the exact check and refuses a file whose
   weights do not match their certificate, and a newer format version.

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
from typing import TYPE_CHECKING, Any

import numpy as np

from . import accounting, interop, plotting
from ._validation import check_choice, check_delta, check_eps, check_int, check_positive
from .model import ModelBuilder
from .privacy import NOTIONS
from .solvers import SOLVERS, solve_model
from .tolerance import DELTA_TOL

if TYPE_CHECKING:
    from .design import DesignResult, NoiseDesign

__all__ = [
    "CertifiedDesign",
    "CertificationError",
    "certify_result",
    "exact_delta",
    "exp_bounds",
    "load_design",
    "round_to_total",
    "FORMAT",
    "FORMAT_VERSION",
    "DEFAULT_BITS",
    "MAX_LOSS",
    "MARGINS",
]

#: Tag and version of the JSON design format written by :meth:`CertifiedDesign.save`.
FORMAT = "optnoise-certified-design"
FORMAT_VERSION = 1
#: Default denominator ``2**62``: rounding error ~2e-19, and every table fits in int64.
DEFAULT_BITS = 62
#: Default bound on the repair's distortion increase, relative to ``max(1, |solver distortion|)``.
MAX_LOSS = 1e-6
#: Margins tried, in order, when a re-solve is needed (repair step b).
MARGINS = (1e-9, 1e-8, 1e-7, 1e-6)
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
    lo, hi = bounds
    a, b = lo.numerator, lo.denominator
    g = w[index]  # (K, N): w(eta + mu)
    wb = w * b
    ag = g * a
    if notion == "dp":
        excess = wb[None, :] - ag
        excess = np.where(excess > 0, excess, 0)
        worst = max(int(row.sum()) for row in excess)
        return Fraction(worst, b * D)
    leak = wb[None, :] > ag  # not (w <= L g)
    if notion == "pdp":
        worst = max(int(np.where(row, w, 0).sum()) for row in leak)
        return Fraction(worst, D)
    c, e = hi.numerator, hi.denominator
    u = leak.any(axis=0)
    weak = (w[None, :] * e >= g * c).all(axis=0)  # (13g) with U >= e^eps, every shift
    if np.any(u & ~weak):
        return math.inf
    return Fraction(int(np.where(u, w, 0).sum()), D)


def _frac_str(x: Fraction | float) -> str:
    if isinstance(x, float):
        return "inf" if math.isinf(x) else repr(x)
    return f"{x.numerator}/{x.denominator}"


def _parse_frac(text: Any, name: str) -> Fraction | float:
    if text == "inf":
        return math.inf
    if not isinstance(text, str):
        raise ValueError(f"design file field {name!r} must be a rational 'p/q'; got {text!r}")
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"design file field {name!r} must be a rational 'p/q'; got {text!r}") from None


# --------------------------------------------------------------------------------------------
# the certified design
# --------------------------------------------------------------------------------------------


@dataclass(eq=False)
class CertifiedDesign:
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

    design: NoiseDesign
    weights: np.ndarray
    bits: int
    eps: float
    delta: float
    certified_delta: Fraction
    repair: dict[str, Any] = field(default_factory=dict)
    solver: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        w = np.asarray(self.weights, dtype=np.int64).reshape(self.design.shape)
        self.weights = w
        cum = np.cumsum(w.ravel(), dtype=np.int64)
        if cum[-1] != self.denominator:
            raise ValueError(f"weights must sum to 2**bits = {self.denominator}; they sum to {int(cum[-1])}")
        self._cum = cum
        self._guide_bits = min(16, self.bits)
        starts = np.arange(1 << self._guide_bits, dtype=np.int64) << (self.bits - self._guide_bits)
        # guide[t]: the interval containing the first integer of bucket t; a draw in
        # bucket t has index >= guide[t] (the table is non-decreasing).
        self._guide = np.searchsorted(cum, starts, side="right")
        # coordinates of every flat noise index, for vector designs
        self._coords = np.indices(self.shape).reshape(len(self.shape), -1).T.astype(np.int64)

    # ------------------------------------------------------------------ properties
    @property
    def notion(self) -> str:
        """The certified privacy notion (the design's)."""
        return self.design.privacy

    @property
    def n(self) -> int:
        return self.design.n

    @property
    def shape(self) -> tuple[int, ...]:
        return self.design.shape

    @property
    def denominator(self) -> int:
        """``2**bits``."""
        return 1 << self.bits

    @property
    def pmf(self) -> np.ndarray:
        """The exact PMF as an object array of :class:`fractions.Fraction`."""
        D = self.denominator
        out = np.empty(self.weights.size, dtype=object)
        out[:] = [Fraction(int(v), D) for v in self.weights.ravel()]
        return out.reshape(self.shape)

    @property
    def pmf_float(self) -> np.ndarray:
        """The PMF as floats (for plots and float accounting; sampling uses the integers)."""
        return self.weights.astype(float) / float(self.denominator)

    @property
    def distortion(self) -> Fraction:
        """Exact ``sum_eta rho_eta w(eta) / D`` under the design's metric (costs are exact floats)."""
        cost = self.design.cost.ravel()
        num = sum(
            (Fraction(float(c)) * int(v) for c, v in zip(cost, self.weights.ravel(), strict=True) if v), Fraction(0)
        )
        return num / self.denominator

    def check(self) -> Fraction | float:
        """Re-run the exact check (:func:`exact_delta`) on the weights."""
        return exact_delta(self.weights.ravel(), self.design.shift_index(), self.notion, _check_bounds(self.eps))

    def verify(self) -> bool:
        """True when the exact check reproduces ``certified_delta`` and it is within the target."""
        got = self.check()
        return got == self.certified_delta and got <= Fraction(self.delta)

    # ------------------------------------------------------------------ sampling
    def _draw_uniform(self, count: int, rng: Any) -> np.ndarray:
        """``count`` integers uniform on ``[0, 2**bits)`` as int64."""
        if rng is None:
            # CSPRNG: os.urandom (getrandom(2)); the top `bits` of each 64-bit word are uniform.
            words = np.frombuffer(os.urandom(8 * count), dtype=np.uint64)
            return (words >> np.uint64(64 - self.bits)).astype(np.int64)
        return rng.integers(0, self.denominator, size=count, dtype=np.int64)

    def _lookup(self, u: np.ndarray) -> np.ndarray:
        """Flat noise index of each draw: the ``i`` with ``cum[i-1] <= u < cum[i]``.

        Equals ``searchsorted(cum, u, side="right")``: start at the guide entry
        of the draw's top bits (a lower bound) and advance while ``u >= cum[i]``.
        """
        idx = self._guide[u >> (self.bits - self._guide_bits)]
        active = np.flatnonzero(u >= self._cum[idx])
        while active.size:
            idx[active] += 1
            active = active[u[active] >= self._cum[idx[active]]]
        return idx

    @staticmethod
    def _check_rng(rng: Any) -> Any:
        if rng is None or isinstance(rng, np.random.Generator):
            return rng
        raise ValueError(
            "rng must be None (cryptographically secure, for deployment) or a seeded "
            f"numpy.random.Generator (reproducible experiments only); got {type(rng).__name__}"
        )

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
        rng = self._check_rng(rng)
        raw: Any = size  # validated entry by entry below, whatever the caller passed
        dims = () if raw is None else ((raw,) if np.ndim(raw) == 0 else tuple(raw))
        shape = tuple(check_int("size", s, minimum=0) for s in dims)
        count = int(np.prod(shape)) if shape else 1
        flat = self._lookup(self._draw_uniform(count, rng)) if count else np.zeros(0, dtype=np.int64)
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
        rng = self._check_rng(rng)
        d, n = self.design.dim, self.n
        arr = np.asarray(q)
        if arr.dtype == object or arr.dtype.kind not in "iuf" or arr.size == 0:
            raise ValueError(f"q must be integers in [0, n] = [0, {n}] (a scalar or an array); got {q!r}")
        if arr.dtype.kind == "f":
            if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
                raise ValueError(f"q must be integers in [0, n] = [0, {n}]; got non-integer or non-finite values")
        if arr.min() < 0 or arr.max() > n:
            raise ValueError(f"q must be integers in [0, n] = [0, {n}]; got values outside that range")
        arr = arr.astype(np.int64, copy=False)
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

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (exact: weights and rationals as decimal strings)."""
        from . import __version__

        lo, hi = _check_bounds(self.eps)
        wtxt = [str(int(v)) for v in self.weights.ravel()]
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "optnoise_version": __version__,
            "problem": self.design.spec(),
            "denominator_bits": self.bits,
            "shape": list(self.shape),
            "weights": wtxt,
            "weights_sha256": _digest(wtxt),
            "certificate": {
                "notion": self.notion,
                "eps": self.eps,
                "delta": self.delta,
                "certified_delta": _frac_str(self.certified_delta),
                "certified_delta_float": float(self.certified_delta),
                "exp_eps_lower": _frac_str(lo),
                "exp_eps_upper": _frac_str(hi),
            },
            "repair": self.repair,
            "solver": self.solver,
        }

    def save(self, path: str | os.PathLike) -> Path:
        """Write the design as JSON (see :func:`load_design`)."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1))
        os.replace(tmp, path)
        return path

    @classmethod
    def from_dict(cls, data: Any) -> CertifiedDesign:
        """Rebuild from :meth:`to_dict` output, re-checking the certificate exactly."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"design file is not an optnoise certified design (missing format tag {FORMAT!r})")
        version = data.get("format_version")
        if isinstance(version, bool) or not isinstance(version, int):
            raise ValueError(f"design file format_version must be an integer; got {version!r}")
        if version > FORMAT_VERSION:
            raise ValueError(
                f"design file format_version {version} is newer than this optnoise supports "
                f"({FORMAT_VERSION}); upgrade optnoise to load it"
            )
        try:
            design = _design_from_spec(data["problem"])
            bits = check_int("denominator_bits", data["denominator_bits"], minimum=1, maximum=62)
            cert = data["certificate"]
            wtxt = data["weights"]
            repair, solver = dict(data.get("repair") or {}), dict(data.get("solver") or {})
            eps = check_eps(cert["eps"], name="design file certificate eps")
            delta = check_delta(cert["delta"], name="design file certificate delta")
            claimed = _parse_frac(cert["certified_delta"], "certified_delta")
            stored_digest = data["weights_sha256"]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"design file is missing or has a malformed field: {exc}") from None
        if eps != design.eps or cert.get("notion") != design.privacy:
            raise ValueError("design file certificate (eps, notion) does not match its problem specification")
        if (
            not isinstance(wtxt, list)
            or len(wtxt) != design.size
            or not all(isinstance(t, str) and t.isascii() and t.isdigit() for t in wtxt)
        ):
            raise ValueError(f"design file weights must be {design.size} non-negative integer strings")
        if _digest(wtxt) != stored_digest:
            raise ValueError("design file weights do not match their sha256 digest: the file is corrupted or edited")
        w = [int(t) for t in wtxt]
        if sum(w) != 1 << bits or max(w) > (1 << bits):
            raise ValueError(f"design file weights must sum to 2**{bits}; they sum to {sum(w)}")
        got = exact_delta(w, design.shift_index(), design.privacy, _check_bounds(eps))
        if not isinstance(got, Fraction) or got != claimed or not got <= Fraction(delta):
            raise ValueError(
                f"design file weights do not match their certificate: the exact check gives delta "
                f"{float(got):.6g}, the file claims {float(claimed):.6g} (target {delta:g})"
            )
        return cls(
            design=design,
            weights=np.array(w, dtype=np.int64),
            bits=bits,
            eps=eps,
            delta=delta,
            certified_delta=got,
            repair=repair,
            solver=solver,
        )

    @classmethod
    def load(cls, path: str | os.PathLike) -> CertifiedDesign:
        """Read a design file written by :meth:`save`; see :func:`load_design`."""
        return load_design(path)

    def summary(self) -> str:
        """A few human-readable lines."""
        r = self.repair
        d = self.design
        neighbours = d.neighborhood.describe(self.n) if d.dim == 1 else d.shifts.tolist()
        lines = [
            f"problem     n={self.n}  shape={self.shape}  notion={self.notion}  metric={d.metric}",
            f"neighbours  {neighbours}",
            f"certified   eps={self.eps:g}  delta={float(self.certified_delta):.10g}  (target {self.delta:g}, exact "
            f"{_frac_str(self.certified_delta) if self.certified_delta.denominator < 10**30 else 'rational'})",
            f"weights     integers over 2^{self.bits}",
            f"repair      {r.get('method')}  mix_weight={r.get('mix_weight', 0):.3g}  margin={r.get('margin')}  "
            f"distortion {r.get('distortion_solver', float('nan')):.10g} -> "
            f"{r.get('distortion_certified', float('nan')):.10g}  (loss {r.get('loss', 0):.3g})",
        ]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"CertifiedDesign(n={self.n}, shape={self.shape}, notion={self.notion!r}, eps={self.eps:g}, "
            f"certified_delta={float(self.certified_delta):.6g}, bits={self.bits}, "
            f"repair={self.repair.get('method')!r})"
        )


def _digest(wtxt: list[str]) -> str:
    return hashlib.sha256(",".join(wtxt).encode()).hexdigest()


def register_spec_kind(kind: str, from_spec: Callable[[dict[str, Any]], Any]) -> None:
    """Teach :func:`load_design` to rebuild problems of ``kind`` from their ``spec()``.

    The certification layer knows problems only through the interface they
    share (``spec()``, ``shift_index()``, ``cost``, ``replace()``); each
    problem class registers how to rebuild itself from a saved spec, so this
    module never imports the classes it certifies.
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


def load_design(path: str | os.PathLike) -> CertifiedDesign:
    """Load a certified design, re-checking its certificate exactly.

    Raises
    ------
    ValueError
        The file is missing, not JSON, not a design, from a newer format
        version, corrupted (weights digest), or its weights do not reproduce
        the stored certificate under the exact check.
    """
    p = Path(path)
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"design file could not be read from {str(path)!r}: {exc.__class__.__name__}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"design file {str(path)!r} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    return CertifiedDesign.from_dict(data)


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

    def __init__(self, design: NoiseDesign, target: Fraction, bits: int) -> None:
        self.design = design
        self.target = target
        self.bits = bits
        self.D = 1 << bits
        self.N = design.size
        assert design.eps is not None  # certify_result refuses designs without one eps
        self.index = design.shift_index()
        self.bounds = _check_bounds(design.eps)
        self.cost = design.cost.ravel()

    def weights_for(self, p: np.ndarray, c: int) -> np.ndarray:
        """``B + c`` where ``B`` rounds ``p`` to total ``D - c N`` (mixture with ``lam = cN/D`` uniform)."""
        w = round_to_total(p, self.D - c * self.N)
        return w + c

    def delta_of(self, w: np.ndarray) -> Fraction | float:
        return exact_delta(w, self.index, self.design.privacy, self.bounds)

    def loss_of(self, w: np.ndarray, base: float) -> float:
        return float(np.dot(self.cost, np.asarray(w, dtype=float)) / self.D) - base

    def mix(self, p: np.ndarray, base: float, budget: float, source: str, margin: float | None) -> _Attempt:
        """Smallest uniform mixing (in units c) that certifies, searched by doubling then bisection.

        Stops once the mixing alone would cost more than ``budget`` distortion.
        """
        w = self.weights_for(p, 0)
        dl = self.delta_of(w)
        if dl <= self.target:
            return _Attempt(w, dl, 0, source, margin)
        cmax = self.D // self.N
        # each unit of c moves mass N/D to the uniform PMF: loss ~ c N (mean cost - distortion) / D
        slope = self.N * (float(self.cost.mean()) - base) / self.D
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
                    note=f"mixing up to weight {c * self.N / self.D:.3g} did not certify within the loss budget",
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


def _prepare(pmf: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(pmf, dtype=float).ravel(), 0.0, None)
    p[p < ZERO_TOL] = 0.0
    return p


def _margin_pmf(
    design: NoiseDesign, p: np.ndarray, target: float, tau: float, lam: float, solver: str
) -> np.ndarray | None:
    """Re-solve with a margin ``tau`` (repair step b); ``None`` if the LP has no optimum.

    dp: the design's own LP at ``delta = target - tau``. pdp / pdp-kadam: first
    ``lam`` of uniform is mixed into the solver's PMF, so that no mass sits
    below the solver's absolute tolerance (a solver may leave masses of ~1e-10
    that leak only within its tolerance). The leak pattern of that PMF is read
    with a relative test (``p(eta) > e^eps p(eta+mu) (1 + PATTERN_RTOL)``, so a
    positive mass before a zero leaks) and fixed, which leaves an LP over ``f``
    with *relative* margins on the ratio rows and an absolute margin on the
    leak budgets:

    * pdp: ``f(eta) <= (1-tau) e^eps f(eta+mu)`` for every non-leaking
      (mu, eta), and ``sum_{eta leaking for mu} f(eta) <= target - tau``;
    * pdp-kadam: with ``U`` the values leaking for some shift,
      ``f(eta) <= (1-tau) e^eps f(eta+mu)`` for eta not in U and (13g)
      ``f(eta) >= (1+tau) e^eps f(eta+mu)`` for eta in U, every mu, and
      ``sum_U f <= target - tau``.

    Columns are scaled by the reference masses (``f = s x``) and each ratio row
    by its largest coefficient, so the LP's absolute feasibility tolerance acts
    relatively on ``f`` and the relative margins survive at every scale. Every
    feasible point is feasible for the design's notion at ``target - tau``
    (pdp-kadam with ``u = 1_U``); the exact check decides in any case.
    """
    pure = target == 0.0
    if design.privacy == "dp" and not pure:
        res = design.replace(objective="distortion", delta=target - tau, max_distortion=None).solve(solver=solver)
        return None if res.status != "optimal" or res.pmf is None else res.pmf.ravel()
    N = design.size
    idx = design.shift_index()
    K = idx.shape[0]
    assert design.eps is not None  # certify_result refuses designs without one eps
    E = float(np.exp(design.eps))
    p = (1.0 - lam) * p / p.sum() + lam / N
    U = p[None, :] > E * (1.0 + PATTERN_RTOL) * p[idx]  # (K, N) leak pattern
    if pure:
        U = np.zeros((K, N), dtype=bool)
    if design.privacy == "pdp-kadam":
        U = np.broadcast_to(U.any(axis=0), (K, N))
    scale = np.where(p > 0, p, 1.0)
    mb = ModelBuilder()
    x = mb.add_vars(N, lb=0.0, ub=1.0 / scale, name="x")
    mb.add_row(x, scale, lower=1.0, upper=1.0)
    mb.set_objective(x, design.cost.ravel() * scale)
    # ratio rows sign * (f(a) - factor f(b)) <= 0: non-leaking pairs always; (13g) for pdp-kadam's U
    rows = np.ones((K, N), dtype=bool) if design.privacy == "pdp-kadam" else ~U
    ks, a = np.nonzero(rows)
    b = idx[ks, a]
    g13 = U[ks, a] if design.privacy == "pdp-kadam" else np.zeros(a.size, dtype=bool)
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
    budget_sets = U[:1] if design.privacy == "pdp-kadam" else U
    for m in range(budget_sets.shape[0]):
        if budget_sets[m].any():
            mb.add_row(x[budget_sets[m]], scale[budget_sets[m]], upper=target - tau)
    out = solve_model(mb.build(), solver=solver)
    if out.status != "optimal" or out.x is None:
        return None
    return np.clip(out.x[x] * scale, 0.0, None)


def certify_result(
    result: DesignResult,
    *,
    delta: float | None = None,
    bits: int = DEFAULT_BITS,
    max_loss: float = MAX_LOSS,
    margins: tuple[float, ...] = MARGINS,
    allow_suboptimal: bool = False,
    solver: str = "highs",
) -> CertifiedDesign:
    """Certify a solved design exactly and build its exact sampler.

    Parameters
    ----------
    result : DesignResult
        A solved design (``status == "optimal"``).
    delta : float, optional
        The delta to certify at the design's eps. Default: the design's delta;
        for a minimise-delta design (15a), which asks for no particular delta,
        the solver's minimum plus :data:`~optnoise.design.DELTA_TOL` (the
        exact certified delta, reported, is usually far closer to the minimum).
    bits : int
        The weights are integers over ``2**bits`` (16..62).
    max_loss : float
        Largest accepted distortion increase from repair, relative to
        ``max(1, |solver distortion|)``; ``inf`` accepts any.
    margins : tuple of float
        Absolute margins tried by the re-solve step, in order.
    allow_suboptimal : bool
        Certify the incumbent of a ``"time_limit"`` result (it is feasible but
        not proven optimal). Other statuses are always refused.
    solver : str
        Backend for the re-solve step.

    Returns
    -------
    CertifiedDesign

    Raises
    ------
    CertificationError
        Non-optimal status, no PMF, or the target cannot be certified within
        ``max_loss`` (the message says which).
    """
    if not (hasattr(result, "design") and hasattr(result, "pmf") and hasattr(result, "status")):
        raise ValueError(f"result must be a DesignResult (from NoiseDesign.solve()); got {type(result).__name__}")
    design = result.design
    if design.privacy not in NOTIONS or design.eps is None:
        raise CertificationError(
            f"certification covers privacy in {', '.join(NOTIONS)}; a {design.privacy!r} design has no single "
            "(eps, delta) to certify (account for it with result.compose(k) or result.pld())"
        )
    ok_status = result.status == "optimal" or (allow_suboptimal and result.status == "time_limit")
    if not ok_status or result.pmf is None or result.distortion is None:
        why = "has no PMF" if result.pmf is None or result.distortion is None else "is not proven optimal"
        hint = "" if result.status != "time_limit" else "; pass allow_suboptimal=True to certify the incumbent"
        raise CertificationError(f"cannot certify a result with status {result.status!r}: it {why}{hint}")
    bits = check_int("bits", bits, minimum=16, maximum=62)
    max_loss = check_positive("max_loss", max_loss, allow_zero=True) if max_loss != math.inf else math.inf
    check_choice("solver", solver, SOLVERS)
    if delta is None:
        if design.objective == "distortion":
            target_f = float(design.delta or 0.0)  # set whenever the objective is the distortion
        else:
            target_f = min(1.0, float(result.delta_objective or 0.0) + DELTA_TOL)
    else:
        target_f = check_delta(delta)
    margins = tuple(check_positive("margins", t) for t in margins)
    target = Fraction(target_f)
    cert = _Certifier(design, target, bits)
    base = float(result.distortion)
    budget = max_loss * max(1.0, abs(base))
    attempts: list[_Attempt] = []

    def accept(att: _Attempt) -> bool:
        attempts.append(att)
        return att.weights is not None and cert.loss_of(att.weights, base) <= budget

    p0 = _prepare(result.pmf)
    chosen = None
    att = cert.mix(p0, base, budget, "solver", None)
    if accept(att):
        chosen = att
    else:
        # escalate: margin tau, first without, then with a pre-mix lam = tau (not for dp)
        lp_path = design.privacy != "dp" or target_f == 0
        plan = [(tau, lam) for tau in margins for lam in ((0.0, tau) if lp_path else (0.0,))]
        for tau, lam in plan:
            if 0 < target_f <= tau:
                break
            p = _margin_pmf(design, p0, target_f, tau, lam, solver)
            if p is None:
                attempts.append(_Attempt(None, math.inf, 0, "margin-resolve", tau, note="re-solve not optimal"))
                continue
            att = cert.mix(_prepare(p), base, budget, "margin-resolve", tau)
            if accept(att):
                chosen = att
                break
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
    dist_cert = float(np.dot(cert.cost, np.asarray(w, dtype=float)) / cert.D)
    if chosen.mix_units == 0 and chosen.source == "solver":
        method = "none"
    elif chosen.source == "solver":
        method = "mix-uniform"
    else:
        method = "margin-resolve+mix-uniform" if chosen.mix_units else "margin-resolve"
    repair = {
        "method": method,
        "mix_units": int(chosen.mix_units),
        "mix_weight": chosen.mix_units * cert.N / cert.D,
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
    return CertifiedDesign(
        design=design,
        weights=np.array([int(v) for v in w], dtype=np.int64),
        bits=bits,
        eps=design.eps,
        delta=target_f,
        certified_delta=chosen.delta,
        repair=repair,
        solver=solver_meta,
    )
