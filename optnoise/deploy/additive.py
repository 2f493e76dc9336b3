"""Certified additive designs: ``q + eta`` on Z with an exact certificate, tails included, and an exact sampler.

An additive result (:mod:`optnoise.design.additive`) is a finite PMF on ``-L..L`` plus staircase
tails (the last ``P`` masses repeated with a factor ``e^-eps`` per period). Its certified form
(:class:`CertifiedAdditive`) is the mixture

    ``h = (1 - lam) f + lam g``

* ``f``: integer weights over ``2**bits``: ``w(x)`` for ``|x| <= L`` and one *class total*
  ``t`` per tail residue (``P`` on each side); class ``x0`` (the first tail period) puts
  ``t (1 - A) A^m / 2**bits`` on ``x0 +- m P``, ``m >= 0``;
* ``g``: the discrete Laplace ``(1 - B) / (1 + B) B^|x|`` with the rational ``B = b / 2**32``;
* ``A = B^P`` (exact rational), the tail factor of both, chosen **at least** ``e^-eps``
  (:func:`tail_factor`): the in-tail ratio ``h(x) / h(x + P) = 1 / A`` then never exceeds
  ``e^eps``; a slower decay can only add tail mass, never a leak beyond the check below;
* ``lam = l / 2**40`` (exact).

**The exact check** (:func:`exact_additive_delta`). For every shift ``mu`` (``|mu| <= P``),
``H = sum_o [h(o) - L h(o + mu)]_+`` with the rational lower bound ``L <= e^eps``
(:func:`optnoise.privacy.exact.check_bounds`; a smaller multiplier only enlarges every term, so
``H`` is an upper bound on the true delta); for ``"pdp"`` the leak mass of the outputs where
``h(o) <= L h(o + mu)`` fails (a superset of the true leak set). Outputs ``|o| <= L + P`` are
summed one by one; beyond, ``o`` and ``o + mu`` both lie in one tail, where both components
scale by ``A`` per period: every term is ``A^m`` times a term of the window ``L+P+1..L+2P``
(mirrored on the left), so those windows are summed with weight ``1 / (1 - A)``: an exact
geometric sum, nothing truncated. All of it is integer arithmetic
(:func:`optnoise.privacy.exact.exact_pair_delta` on the masses over one common denominator).
Pure DP is certified when that exact delta is 0.

**Repair.** Rounding (and the solver's tolerance) may break tight constraints. The weights are
rounded exactly (:func:`optnoise.privacy.exact.round_to_total`), and if the check fails a small
weight ``lam`` of ``g`` is mixed in: ``g`` is pure eps-DP (its ratios are at most
``B^-P = 1 / A``), and the hockey stick is jointly convex, so ``H(h) <= (1 - lam) H(f)``. Pure
designs need slack: ``B`` is then taken slightly above ``e^(-eps / P)`` (relative slack ``s``).
Every candidate is re-checked exactly; the first that certifies within ``max_loss`` is kept.

**Budgets.** A ``"profile"`` design is checked exactly at every ``(eps_i, delta_i)`` (its tails decay by
the smallest eps; one mixing weight repairs every pair, the hockey stick being jointly convex at each
eps); its file's certificate lists one block per pair, each re-proved on load. A ``"composed"`` design
is certified as its single release (``"dp"`` at eps and its own delta, its calibrated tail kept), and
the k-fold delta of the exact weights is recomputed (:mod:`optnoise.deploy.composed`, the file's
``composed`` block) by :meth:`CertifiedAdditive.verify`, on every load and for
``to_opendp(compositions=k)``. ``"rdp"`` and ``"zcdp"`` are refused by name (the modulo release does
not certify them either).

**Exact sampling** (:meth:`CertifiedAdditive.sample`): no floating point. ``g`` or ``f`` by an
exact Bernoulli(``lam``) (a 40-bit draw below ``l``); for ``f`` an index of the integer table
(finite value or tail class, :class:`~optnoise.deploy.sampler.SamplingTable`), and for a class the
number of periods ``m`` by Bernoulli(``A``) trials until the first failure, each trial ``P``
Bernoulli(``B``) draws (32-bit uniforms below ``b``); ``g`` is ``Y1 - Y2`` with ``Y1, Y2``
geometric of parameter ``B`` (their difference is the discrete Laplace). OS CSPRNG by default;
a seeded ``numpy.random.Generator`` for reproducible experiments only.
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from optnoise.deploy.composed import BLOCK, check_composed_block, composed_block, composed_delta
from optnoise.deploy.files import certificate_block, check_certificate, design_document, read_certificate
from optnoise.deploy.sampler import SamplingTable, check_rng, draw_uniform
from optnoise.design.additive_eval import (
    Tail,
    lumped_pairs,
    notion_of,
    pair_rows,
    stacked_pairs,
    tail_weights,
)
from optnoise.design.noise import NoiseDesign
from optnoise.engine.io import atomic_write_text
from optnoise.engine.validation import check_int, check_output_path, shown
from optnoise.privacy import accounting
from optnoise.privacy.exact import check_bounds, exact_pair_delta, frac_str, round_to_total

__all__ = [
    "ADDITIVE_FIELD",
    "CertifiedAdditive",
    "certify_additive",
    "exact_additive_delta",
    "tail_factor",
    "additive_from_dict",
]

#: The extra field of an additive design file (besides :data:`optnoise.deploy.files.FILE_FIELDS`).
ADDITIVE_FIELD = "additive"
#: ``B = b / 2**LAPLACE_BITS``: one 32-bit uniform per Bernoulli(B) trial.
LAPLACE_BITS = 32
#: ``lam = l / 2**MIX_BITS``.
MIX_BITS = 40
#: Relative slacks ``s`` of the tail decay tried for pure DP (``B >= e^(-eps (1 - s) / P)``).
PURE_SLACKS = (1e-9, 1e-6, 1e-4, 1e-2)
#: Largest ``L + 3P`` whose mixture is checked exactly (``B^|x|`` makes the integers ~32 (L + 3P) bits long).
MAX_MIX_HALF_WIDTH = 3000
#: Mixing weights tried (after the one computed from the hockey stick), smallest first.
MIX_WEIGHTS = (2.0**-36, 2.0**-30, 2.0**-24, 2.0**-18, 2.0**-14, 2.0**-10, 2.0**-7)


class _Error(ValueError):
    """Raised when no candidate certifies (re-raised as CertificationError by the caller)."""


def tail_factor(eps: float, period: int, slack: float = 0.0) -> int:
    """``b`` with ``B = b / 2**32 >= e^(-eps (1 - slack) / period)`` (rounded up, then one more unit).

    The float ``exp`` is only a starting point: what certifies is the exact check of the
    resulting distribution, which holds with ``A = B^P`` whatever ``b`` is.
    """
    Q = 1 << LAPLACE_BITS
    b = math.ceil(Q * math.exp(-eps * (1.0 - slack) / period)) + 1
    if not 0 < b < Q:
        raise _Error(f"eps = {eps:g} is too small (or too large) for an exact tail factor over 2**{LAPLACE_BITS}")
    return b


def _grid_masses(weights: list[int], bits: int, L: int, P: int, b: int, lam: int) -> tuple[list[int], int, int, int]:
    """``h(x)`` on ``-(L+3P)..L+3P`` as integers over one common denominator.

    Returns ``(num, den, a_num, a_den)``: ``h(x) = num[x + L + 3P] / den`` and ``A = a_num / a_den``.
    """
    Q = 1 << LAPLACE_BITS
    R = 1 << MIX_BITS
    M = L + 3 * P
    if lam and M > MAX_MIX_HALF_WIDTH:
        raise ValueError(f"a mixture's exact check needs L + 3P <= {MAX_MIX_HALF_WIDTH}; got {M}")
    # B^|x| needs Q^M in the common denominator; without g the tails need only Q^(3P) (m <= 2)
    E = M if lam else 3 * P
    a_num, a_den = b**P, Q**P
    keep_f, keep_g = R - lam, lam
    den = R * (1 << bits) * (Q + b) * Q**E
    out = []
    for x in range(-M, M + 1):
        d = abs(x)
        if d <= L:
            fr = weights[x + L] * (Q + b) * Q**E
        else:
            r, m = (d - L - 1) % P, (d - L - 1) // P
            t = weights[2 * L + 1 + r] if x > 0 else weights[2 * L + 1 + P + (P - 1 - r)]
            fr = t * (a_den - a_num) * a_num**m * Q ** (E - P * (m + 1)) * (Q + b)
        g = (Q - b) * b**d * Q ** (M - d) << bits if lam else 0
        out.append(keep_f * fr + keep_g * g)
    return out, den, a_num, a_den


def exact_additive_delta(
    weights: Any, bits: int, L: int, P: int, b: int, lam: int, shifts: Any, eps: float, notion: str
) -> Fraction | float:
    """The exact certified delta of the mixture (module docstring) at ``eps`` over every shift, tails included."""
    if notion not in ("dp", "pdp"):
        raise ValueError(f"notion must be 'dp' or 'pdp' for the additive certificate; got {shown(notion)}")
    w = [int(v) for v in weights]
    num, den, a_num, a_den = _grid_masses(w, bits, L, P, b, lam)
    N, M = len(num), L + 3 * P
    # explicit outputs weighted by (1 - A), the periodic windows by 1 (times a_den: integers)
    big = np.array([v * (a_den - a_num) for v in num] + [v * a_den for v in num], dtype=object)
    explicit = np.arange(-(L + P), L + P + 1)
    window = np.concatenate([np.arange(L + P + 1, L + 2 * P + 1), np.arange(-(L + 2 * P), -(L + P))])
    first, second = [], []
    for mu in np.asarray(shifts, dtype=np.int64).ravel().tolist():
        if abs(mu) > P or mu == 0:
            raise ValueError(f"shifts must be nonzero with |shift| <= period {P}; got {mu}")
        first.append(np.concatenate([explicit + M, window + M + N]))
        second.append(np.concatenate([explicit + mu + M, window + mu + M + N]))
    return exact_pair_delta(big, np.array(first), np.array(second), den * (a_den - a_num), notion, check_bounds(eps))


def _exact_masses(weights: Any, bits: int, L: int, P: int, b: int, lam: int) -> tuple[np.ndarray, Tail]:
    """Float ``h`` on ``-L..L`` and its tails (first periods, factor ``A`` as a float), from the exact integers."""
    num, den, a_num, a_den = _grid_masses([int(v) for v in weights], bits, L, P, b, lam)
    M = L + 3 * P
    h = np.array([v / den for v in num])
    fin = h[M - L : M + L + 1]
    tail = Tail(P, a_num / a_den, L, h[M + L + 1 : M + L + P + 1].copy(), h[M - L - P : M - L].copy())
    return fin, tail


def _expectation(cost: Any, fin: np.ndarray, tail: Tail) -> float:
    L, P = tail.support, tail.period
    w_r = tail_weights(cost, np.arange(L + 1, L + P + 1), P, tail.factor)
    w_l = tail_weights(cost, np.arange(-L - P, -L), P, tail.factor)
    return float(cost.fn(np.arange(-L, L + 1)) @ fin + w_r @ tail.right + w_l @ tail.left)


@dataclass(eq=False)
class CertifiedAdditive:
    """An additive noise (``q + eta`` on Z) with exact weights, an exact certificate and an exact sampler.

    Build one with ``result.certify()`` for an additive result, or
    :func:`optnoise.deploy.certified.load_design`. See the module docstring for the distribution.

    Attributes
    ----------
    design : NoiseDesign
        The additive problem (shifts, metric, notion).
    weights : ndarray of int64
        ``w(-L..L)``, the right tail classes ``L+1..L+P``, the left ones ``-L-P..-L-1``; sum ``2**bits``.
    bits, support, laplace, mix : int
        ``2**bits`` the denominator, ``L``, ``b`` (``B = b / 2**32``), ``l`` (``lam = l / 2**40``).
    eps, delta : float
        The certified target; ``certified_delta <= delta`` at ``eps``.
    certified_delta : Fraction
        Exact upper bound on the delta over every shift (tails included).
    profile : list of tuple, or None
        A profile design's every pair ``(eps, delta, certified)`` with its exact certified delta (``eps``, ``delta`` and
        ``certified_delta`` are its first pair, the smallest eps).
    composed : dict or None
        A composed design's k-fold guarantee (:mod:`optnoise.deploy.composed`): the design states the
        single release (``"dp"`` at eps and its own delta), this block the composition of k releases,
        recomputed from the exact weights by :meth:`verify` and on every load.
    """

    design: Any
    weights: np.ndarray
    bits: int
    support: int
    laplace: int
    mix: int
    eps: float
    delta: float
    certified_delta: Fraction
    repair: dict[str, Any] = field(default_factory=dict)
    solver: dict[str, Any] = field(default_factory=dict)
    composed: dict[str, Any] | None = None
    profile: list[tuple[float, float, Fraction]] | None = None

    def __post_init__(self) -> None:
        self.weights = np.asarray(self.weights, dtype=np.int64).ravel()
        L, P = self.support, self.period
        if self.weights.size != 2 * L + 1 + 2 * P:
            raise ValueError(f"weights must have 2L+1+2P = {2 * L + 1 + 2 * P} entries; got {self.weights.size}")
        if int(self.weights.sum(dtype=np.int64)) != self.denominator:
            raise ValueError(f"weights must sum to 2**bits = {self.denominator}")
        self._table = SamplingTable(self.weights, self.bits)

    # ------------------------------------------------------------------ the distribution
    @property
    def notion(self) -> str:
        return self.design.privacy

    @property
    def period(self) -> int:
        return int(self.design.period)

    @property
    def denominator(self) -> int:
        return 1 << self.bits

    @property
    def tail_factor(self) -> Fraction:
        """``A = B^P``, the exact factor per tail period (at least ``e^-eps``)."""
        return Fraction(self.laplace, 1 << LAPLACE_BITS) ** self.period

    @property
    def mix_weight(self) -> Fraction:
        return Fraction(self.mix, 1 << MIX_BITS)

    def _args(self) -> tuple[list[int], int, int, int, int, int]:
        return (self.weights.tolist(), self.bits, self.support, self.period, self.laplace, self.mix)

    def masses(self) -> tuple[np.ndarray, Tail]:
        """The float PMF on ``-L..L`` and its tails (for plots and float accounting; sampling is exact)."""
        return _exact_masses(*self._args())

    def pmf_at(self, x: Any) -> np.ndarray:
        """``h(x)`` as floats at any integers."""
        fin, tail = self.masses()
        x = np.asarray(x, dtype=np.int64)
        out = np.zeros(x.shape)
        inside = np.abs(x) <= self.support
        out[inside] = fin[x[inside] + self.support]
        if np.any(~inside):
            out[~inside] = tail.pmf_at(x[~inside])
        return out

    @property
    def distortion(self) -> float:
        """The design's metric of the certified noise, tails included (exact geometric sums, in floats)."""
        return _expectation(self.design.cost_of, *self.masses())

    def check(self, shifts: Any = None) -> Fraction | float:
        """Re-run the exact check over ``shifts`` (default: the design's)."""
        shifts = self.design.shifts if shifts is None else shifts
        return exact_additive_delta(*self._args(), shifts, self.eps, pair_rows(self.design))

    def symmetric_delta(self) -> Fraction | float:
        """The exact delta for both orders of every neighbour pair (the design's shifts and their negatives).

        For a directed neighbourhood the reverse order is checked as (eps, delta)-DP.
        """
        s = np.asarray(self.design.shifts)
        back = exact_additive_delta(*self._args(), -s, self.eps, "dp")
        return max(self.certified_delta, back)

    def verify(self) -> bool:
        """The exact check reproduces the certificate; a composed design's k-fold delta is recomputed too."""
        got = self.check()
        if not (got == self.certified_delta and got <= Fraction(self.delta)):
            return False
        for e, d, g in self.profile or []:
            if not exact_additive_delta(*self._args(), self.design.shifts, e, "dp") == g <= Fraction(d):
                return False
        c = self.composed
        return c is None or composed_delta(self, c["compositions"], c["discretization"], c["eps"]) <= c["delta"]

    def release_pairs(self) -> accounting.ReleasePairs:
        """Per shift, ``eta`` against ``eta + mu`` (floats), each tail lumped into one atom: every loss is exact."""
        num, den, a_num, a_den = _grid_masses(*self._args())
        L, P = self.support, self.period
        M = L + 3 * P
        F = np.array([v / den for v in num[M - L - 2 * P : M + L + 2 * P + 1]])
        return stacked_pairs(self.design, lumped_pairs(self.design, F, L, factor=a_num / a_den))

    # ------------------------------------------------------------------ sampling
    def _geometric(self, count: int, trials: int, rng: Any) -> np.ndarray:
        """Successes before the first failure of Bernoulli(``B^trials``) trials (each ``trials`` B-draws)."""
        m = np.zeros(count, dtype=np.int64)
        active = np.arange(count)
        while active.size:
            u = draw_uniform(active.size * trials, LAPLACE_BITS, rng).reshape(active.size, trials)
            ok = np.all(u < self.laplace, axis=1)
            active = active[ok]
            m[active] += 1
        return m

    def sample(self, size: int | None = None, *, rng: np.random.Generator | None = None) -> Any:
        """Draw noise values exactly from the certified distribution (module docstring).

        ``rng=None`` (default) uses the OS CSPRNG, for deployment; a seeded Generator is for
        reproducible experiments only.
        """
        rng = check_rng(rng)
        count = 1 if size is None else check_int("size", size, minimum=0)
        L, P = self.support, self.period
        out = np.zeros(count, dtype=np.int64)
        use_g = draw_uniform(count, MIX_BITS, rng) < self.mix if self.mix else np.zeros(count, dtype=bool)
        gi = np.flatnonzero(use_g)
        if gi.size:
            out[gi] = self._geometric(gi.size, 1, rng) - self._geometric(gi.size, 1, rng)
        fi = np.flatnonzero(~use_g)
        idx = self._table.lookup(draw_uniform(fi.size, self.bits, rng))
        x = idx - L  # finite part
        right = (idx > 2 * L) & (idx <= 2 * L + P)
        left = idx > 2 * L + P
        tail = np.flatnonzero(right | left)
        if tail.size:
            m = self._geometric(tail.size, P, rng)
            x0 = np.where(right[tail], idx[tail] - 2 * L - 1 + L + 1, idx[tail] - (2 * L + 1 + P) - L - P)
            x[tail] = x0 + np.where(right[tail], m * P, -m * P)
        out[fi] = x
        return int(out[0]) if size is None else out

    def release(self, q: Any, rng: np.random.Generator | None = None) -> Any:
        """Release ``q + eta`` (any integers; no clamp, no range) with ``eta`` drawn exactly."""
        arr = np.asarray(q)
        if arr.dtype == object or arr.dtype.kind not in "iu" or arr.size == 0:
            raise ValueError(f"q must be integers (a scalar or an integer array); got {shown(q)}")
        noise = self.sample(arr.size, rng=rng)
        out = arr.astype(np.int64).ravel() + noise
        return int(out[0]) if arr.ndim == 0 else out.reshape(arr.shape)

    def to_opendp(
        self, *, rng: np.random.Generator | None = None, T: str = "i64", compositions: int | None = None
    ) -> Any:
        """An OpenDP measurement on integers (see :func:`optnoise.deploy.opendp.additive_to_opendp`).

        ``compositions=k`` (a composed design): one measurement releasing k answers with the composed guarantee.
        """
        from optnoise.deploy.opendp import additive_to_opendp

        return additive_to_opendp(self, rng=rng, T=T, compositions=compositions)

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        composed = {} if self.composed is None else {BLOCK: self.composed}
        return design_document(
            {
                **composed,
                "problem": self.design.spec(),
                "denominator_bits": self.bits,
                "shape": [int(self.weights.size)],
                "weights": [str(int(v)) for v in self.weights],
                "certificate": _certificate(self),
                "repair": self.repair,
                "solver": self.solver,
                ADDITIVE_FIELD: {
                    "support": self.support,
                    "period": self.period,
                    "laplace": str(self.laplace),
                    "laplace_bits": LAPLACE_BITS,
                    "mix": str(self.mix),
                    "mix_bits": MIX_BITS,
                    "tail_factor": frac_str(self.tail_factor),
                },
            }
        )

    def save(self, path: str | os.PathLike) -> Path:
        """Write the design file (:mod:`optnoise.deploy.files`, with the ``additive`` field), atomically."""
        path = check_output_path("path", path)
        return atomic_write_text(path, json.dumps(self.to_dict(), indent=1))

    def summary(self) -> str:
        L, P = self.support, self.period
        return "\n".join(
            [
                f"problem     additive (q + eta on Z)  neighbours {self.design.neighborhood.describe()}  "
                f"notion={self.notion}  metric={self.design.metric}",
                f"certified   eps={self.eps:g}  delta={float(self.certified_delta):.10g}  (target {self.delta:g}; "
                "exact, tails by geometric sums)",
                f"noise       finite -{L}..{L} over 2^{self.bits}, tails of period {P} with factor "
                f"A = B^{P} >= e^-eps (B = {self.laplace}/2^{LAPLACE_BITS}), mixed with weight "
                f"{float(self.mix_weight):.3g} of the discrete Laplace B",
                f"distortion {self.repair.get('distortion_solver', float('nan')):.10g} -> {self.distortion:.10g}",
            ]
            + _composed_line(self.composed)
            + [f"profile     eps={e:g}: delta={float(g):.6g} <= {d:g}" for e, d, g in self.profile or []]
        )

    def __repr__(self) -> str:
        return (
            f"CertifiedAdditive(L={self.support}, period={self.period}, notion={self.notion!r}, eps={self.eps:g}, "
            f"certified_delta={float(self.certified_delta):.6g}, bits={self.bits})"
        )


def _certificate(cd: CertifiedAdditive) -> dict[str, Any]:
    """The certificate block: one pair's, or a profile's ``pairs`` (each a pair's block)."""
    if cd.profile is None:
        return certificate_block(cd.design, cd.eps, cd.delta, cd.certified_delta)
    return {"notion": cd.notion, "pairs": [certificate_block(cd.design, e, d, g) for e, d, g in cd.profile]}


def _read_profile(
    data: dict[str, Any], design: Any, exact: Callable[[float], Fraction | float], bad: Any
) -> list[tuple[float, float, Fraction]]:
    """A profile design file's certificate, every pair re-proved exactly (``exact(eps)``) and compared."""
    for name in ("repair", "solver"):
        if not isinstance(data[name], dict):
            raise bad(name, f"must be a mapping; got {type(data[name]).__name__}")
    cert = data["certificate"]
    blocks = cert.get("pairs") if isinstance(cert, dict) else None
    if not isinstance(blocks, list) or len(blocks) != len(design.profile):
        raise bad("certificate.pairs", f"must list the certificate of each of the {len(design.profile)} pairs")
    if cert != {"notion": design.privacy, "pairs": blocks}:  # each pair's block is re-proved below
        raise bad("certificate", f"must be {{'notion': {design.privacy!r}, 'pairs': [...]}}")
    out = []
    for i, ((e, d), block) in enumerate(zip(design.profile, blocks, strict=True)):

        def bad_i(name: str, why: str, i: int = i) -> Exception:
            return bad(name.replace("certificate.", f"certificate.pairs[{i}].", 1), why)

        if not isinstance(block, dict):
            raise bad_i("certificate.", f"must be a mapping; got {type(block).__name__}")
        out.append((float(e), float(d), check_certificate(block, design, float(e), float(d), exact(e), bad_i)))
    return out


def _composed_line(c: dict[str, Any] | None) -> list[str]:
    if c is None:
        return []
    return [
        f"composed    {c['compositions']} releases: eps={c['eps']:g}  delta={c['composed_delta']:.6g} <= target "
        f"{c['delta']:g}  (PLD accounting of the exact weights, h = {c['discretization']:g})"
    ]


def certify_additive(
    result: Any,
    *,
    bits: int,
    max_loss: float,
    solver_meta: dict[str, Any],
    error: type[ValueError],
    tail_eps: float | None = None,
) -> CertifiedAdditive:
    """Round, check exactly and repair an additive result (module docstring); ``error`` when nothing certifies.

    ``tail_eps``: the tails decay by ``e^-tail_eps`` per period (at most eps; default eps); a composed
    design keeps its calibrated tail (:func:`_certify_composed`).
    """
    design = result.design
    if notion_of(design).composed:
        return _certify_composed(result, bits=bits, max_loss=max_loss, solver_meta=solver_meta, error=error)
    if notion_of(design).renyi or design.objective != "distortion":
        # the exact check below is the (eps, delta) hockey stick or leak of one release, at one or more pairs
        raise error(
            f"certification of privacy={design.privacy!r} (objective={design.objective!r}) additive designs is not "
            "yet supported (use 'dp', 'pdp', 'profile' or 'composed' with objective='distortion')"
        )
    L, P = result.L, int(design.period)
    # every (eps_i, delta_i) of a profile is checked exactly; its tails decay by the smallest eps
    if design.profile is not None:
        pairs = [(float(e), float(d)) for e, d in design.profile]
    else:
        pairs = [(float(design.eps), float(design.delta))]
    eps = min(e for e, _ in pairs)
    tail_eps = eps if tail_eps is None else min(eps, float(tail_eps))
    notion = pair_rows(design)
    targets = [Fraction(d) for _, d in pairs]
    base = float(result.distortion)
    tried: list[str] = []
    best = None

    def exact(w: list[int], b: int, lam: int) -> list[Fraction | float]:
        return [exact_additive_delta(w, bits, L, P, b, lam, design.shifts, e, notion) for e, _ in pairs]

    def meets(got: list[Fraction | float]) -> bool:
        return all(isinstance(g, Fraction) and g <= t for g, t in zip(got, targets, strict=True))

    for slack in [0.0] if min(targets) > 0 else [0.0, *PURE_SLACKS]:
        b = tail_factor(tail_eps, P, slack)
        Af = (b / (1 << LAPLACE_BITS)) ** P
        raw = np.concatenate([result.pmf, result.tail.right / (1.0 - Af), result.tail.left / (1.0 - Af)])
        w = [int(v) for v in round_to_total(raw, 1 << bits)]
        got0 = exact(w, b, 0)
        over = [(g, t) for g, t in zip(got0, targets, strict=True) if not (isinstance(g, Fraction) and g <= t)]
        lams = [0]
        if L + 3 * P > MAX_MIX_HALF_WIDTH:  # rounding alone must certify (the mixture's integers grow as L^2)
            tried.append(f"no mixture: L + 3P = {L + 3 * P} > {MAX_MIX_HALF_WIDTH}")
        elif not notion_of(design).indicators and over and all(isinstance(g, Fraction) and t > 0 for g, t in over):
            # H(mix) <= (1 - lam) H(f) at every pair: the smallest dyadic lam meeting them all, and a unit more
            need = max(1 - t / g for g, t in over)
            lams.append(min(math.ceil(need * (1 << MIX_BITS)) + 1, (1 << MIX_BITS) - 1))
        if L + 3 * P <= MAX_MIX_HALF_WIDTH:
            lams += [int(v * (1 << MIX_BITS)) for v in MIX_WEIGHTS]
        for lam in sorted(set(lams)):
            got = got0 if lam == 0 else exact(w, b, lam)
            ok = meets(got)
            shown_got = "ok" if ok else ", ".join(f"{float(g):.3g}" for g in got)
            tried.append(f"s={slack:g} lam={lam / (1 << MIX_BITS):.3g}: {shown_got}")
            if not ok:
                continue
            loss = _expectation(design.cost_of, *_exact_masses(w, bits, L, P, b, lam)) - base
            if loss <= max_loss * max(1.0, abs(base)):
                best = (w, b, lam, got, loss, slack)
            break
        if best is not None:
            break
    if best is None:
        what = f"profile {pairs}" if design.profile is not None else f"(eps={eps:g}, delta={float(targets[0]):g})"
        raise error(
            f"cannot certify the requested {what} under {design.privacy!r} for "
            f"release='additive' with distortion loss <= max_loss={max_loss:g}; tried {'; '.join(tried[-4:])}"
        )
    w, b, lam, got_any, loss, slack = best
    certs = [g for g in got_any if isinstance(g, Fraction)]
    assert len(certs) == len(pairs)  # only finite exact deltas within the targets are kept
    repair = {
        "method": "rounded" if lam == 0 else "mixed with the discrete Laplace",
        "mix_weight": lam / (1 << MIX_BITS),
        "tail_slack": slack,
        "distortion_solver": base,
        "distortion_certified": base + loss,
        "loss": loss,
        "max_loss": None if max_loss == math.inf else max_loss,
        "attempts": len(tried),
    }
    # a profile's first pair (the smallest eps) stands as eps/delta; cd.profile holds every pair
    return CertifiedAdditive(
        design=design,
        weights=np.array(w, dtype=np.int64),
        bits=bits,
        support=L,
        laplace=b,
        mix=lam,
        eps=pairs[0][0],
        delta=pairs[0][1],
        certified_delta=certs[0],
        repair=repair,
        solver=solver_meta,
        profile=None if design.profile is None else [(e, d, g) for (e, d), g in zip(pairs, certs, strict=True)],
    )


def _certify_composed(
    result: Any, *, bits: int, max_loss: float, solver_meta: dict[str, Any], error: type[ValueError]
) -> CertifiedAdditive:
    """Certify a composed additive result: its single release exactly, then the k-fold guarantee of the weights.

    As for modulo designs (:meth:`DesignResult.certify <optnoise.design.result.DesignResult.certify>`): the
    weights are certified for the single-release ``"dp"`` problem at eps and ``delta1``, the PMF's own
    one-release delta with 1e-3 relative headroom for the rounding (at k = 1: the design's delta), with the
    design's calibrated tail; the composition of k releases of the certified weights is then recomputed
    (:func:`optnoise.deploy.composed.composed_block`) and must meet (eps, delta).
    """
    d = result.design
    k, delta, h = int(d.compositions), float(d.delta), float(d.discretization)
    if d.eps is not None:
        tries = [float(d.eps)]
    else:
        # objective="epsilon": the design has no eps of its own; the certificate states one it proves. The
        # searched eps can sit exactly on a pure design's composed loss, and the pessimistic accounting rounds
        # each certified loss up to a multiple of h (k of them): at most k * h more
        e = float(result.achieved["composed_eps"])
        tries = [e, e * (1 + 2e-4), e + k * h]
    delta1 = delta if k == 1 else min(1.0, max(float(result.achieved["dp"]) * (1 + 1e-3), 1e-15))
    drop = ("compositions", "discretization", "objective", "max_distortion")
    spec = {key: v for key, v in d.spec().items() if key not in drop}
    for eps in tries:  # the single release and the k-fold block at the same eps (the design file ties them)
        one = copy.copy(result)
        one.design = NoiseDesign.from_spec({**spec, "privacy": "dp", "eps": eps, "delta": delta1})
        cd = certify_additive(
            one, bits=bits, max_loss=max_loss, solver_meta=solver_meta, error=error, tail_eps=d.tail_eps
        )
        block = composed_block(cd, k, eps, delta, h)
        if block["composed_delta"] <= delta:
            break
    else:
        raise error(
            f"the certified weights' {k}-fold composition has delta {block['composed_delta']:.6g} > {delta:g} at "
            f"eps = {eps:g} (h = {h:g}): rounding broke the composed guarantee"
        )
    cd.composed = block
    return cd


def _int_text(name: str, v: Any, bits: int, bad: Any) -> int:
    if not isinstance(v, str) or not v.isascii() or not v.isdigit() or len(v) > 30 or not 0 <= int(v) < 1 << bits:
        raise bad(name, f"must be a decimal integer string in [0, 2**{bits}); got {shown(v)}")
    return int(v)


def additive_from_dict(data: dict[str, Any], design: Any, bad: Any) -> CertifiedAdditive:
    """Rebuild an additive design file (header, digest and problem already checked), re-proving its certificate."""
    extra = data[ADDITIVE_FIELD]
    if not isinstance(extra, dict):
        raise bad(ADDITIVE_FIELD, f"must be a mapping; got {type(extra).__name__}")
    P = int(design.period)
    L = extra.get("support")
    if isinstance(L, bool) or not isinstance(L, int) or not 1 <= L <= 100_000:
        raise bad(f"{ADDITIVE_FIELD}.support", f"must be an integer in [1, 100000]; got {shown(L)}")
    if extra.get("period") != P:
        raise bad(
            f"{ADDITIVE_FIELD}.period", f"must be the problem's largest |shift| {P}; got {shown(extra.get('period'))}"
        )
    if extra.get("laplace_bits") != LAPLACE_BITS or extra.get("mix_bits") != MIX_BITS:
        raise bad(f"{ADDITIVE_FIELD}.laplace_bits", f"laplace_bits/mix_bits must be {LAPLACE_BITS}/{MIX_BITS}")
    b = _int_text(f"{ADDITIVE_FIELD}.laplace", extra.get("laplace"), LAPLACE_BITS, bad)
    lam = _int_text(f"{ADDITIVE_FIELD}.mix", extra.get("mix"), MIX_BITS, bad)
    if b == 0:
        raise bad(f"{ADDITIVE_FIELD}.laplace", "must be positive")
    if extra.get("tail_factor") != frac_str(Fraction(b, 1 << LAPLACE_BITS) ** P):
        raise bad(f"{ADDITIVE_FIELD}.tail_factor", "must be (laplace / 2**32) ** period")
    unknown = sorted(set(extra) - {"support", "period", "laplace", "laplace_bits", "mix", "mix_bits", "tail_factor"})
    if unknown:
        raise bad(f"{ADDITIVE_FIELD}.{unknown[0]}", "is not a field of the additive block")
    bits = data["denominator_bits"]
    if isinstance(bits, bool) or not isinstance(bits, int) or not 16 <= bits <= 62:
        raise bad("denominator_bits", f"must be an integer in [16, 62]; got {shown(bits)}")
    size = 2 * L + 1 + 2 * P
    if data["shape"] != [size]:
        raise bad("shape", f"must be [2L+1+2P] = [{size}]; got {shown(data['shape'])}")
    wtxt = data["weights"]
    if not isinstance(wtxt, list) or len(wtxt) != size:
        raise bad("weights", f"must be {size} non-negative integer strings")
    w = [_int_text("weights", t, bits + 1, bad) for t in wtxt]
    if sum(w) != 1 << bits:
        raise bad("weights", f"must sum to 2**{bits}; they sum to {sum(w)}")

    def exact(eps: float) -> Fraction | float:
        return exact_additive_delta(w, bits, L, P, b, lam, design.shifts, eps, pair_rows(design))

    profile = None
    if design.profile is not None:
        profile = _read_profile(data, design, exact, bad)
        eps, delta, got = profile[0]
    else:
        cert, eps, delta = read_certificate(data, design, bad)
        got = check_certificate(cert, design, eps, delta, exact(eps), bad)
    out = CertifiedAdditive(
        design=design,
        weights=np.array(w, dtype=np.int64),
        bits=bits,
        support=L,
        laplace=b,
        mix=lam,
        eps=eps,
        delta=delta,
        certified_delta=got,
        repair=dict(data["repair"]),
        solver=dict(data["solver"]),
        profile=profile,
    )
    if BLOCK in data:  # the k-fold guarantee, recomputed from the weights
        out.composed = check_composed_block(out, data[BLOCK], BLOCK)
    return out
