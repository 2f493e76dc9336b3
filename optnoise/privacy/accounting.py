"""Composition accounting of designs with privacy loss distributions (dp-accounting).

Every design kind is accounted from the mechanism it *releases*, as a list of
ordered pairs of output distributions ``(P_k, Q_k)``, one per ordered pair of
neighbouring inputs it protects (:class:`ReleasePairs`):

* modulo noise ``q + eta (mod n+1)``, ``eta ~ f``: neighbouring datasets differ by
  a shift ``mu`` of the answer, so the pairs are ``(f, f(.+mu))`` for every shift of
  the neighbourhood (:func:`design_pld`);
* clamped noise and general mechanisms ``P[x, y]``: the pairs are the rows
  ``(P[x], P[x'])`` of every ordered neighbour pair ``(x, x')`` of the design
  (:func:`mechanism_pairs`).

Directed and symmetric neighbourhoods. Differential privacy asks the bound for
both orders of a neighbouring pair; optnoise's convention is that a design
promises exactly the ordered pairs its neighbourhood lists. A *symmetric*
neighbourhood lists both orders (``mu`` and ``-mu``; ``(x, x')`` and ``(x', x)``),
so its designs are (eps, delta)-DP in the usual sense. A *directed* one (e.g. the
paper's one-directional ``mu = +1``, neighbours that only add records) promises
``H_{e^eps}(M(X) || M(X')) <= delta`` for its listed order only, and nothing for the
reverse. Accounting follows the same convention everywhere: ``pld()``,
``pld(shift=mu)`` (that shift's listed order, and its reverse only when the
neighbourhood lists it), ``compose()``, ``plot()`` and the certificate cover the
listed ordered pairs; so a single shift's curve never exceeds the worst case. The
OpenDP export, whose metrics are symmetric, states the guarantee for both orders
(:mod:`optnoise.deploy.opendp`).

Worst case over shifts. The k-fold (adaptive) composition may use a different
neighbouring pair in every round, so a single pair's PLD is not enough when the
pairs differ. :func:`design_pld` therefore builds a *dominating pair*: the
privacy profile

    ``delta*(eps) = max_mu H_{e^eps}(f || f(.+mu))``   for every real eps

(``H_gamma(P||Q) = sum_o [P(o) - gamma Q(o)]_+``; for ``eps < 0`` through
``H_gamma(P||Q) = 1 - gamma + gamma H_{1/gamma}(Q||P)``) is a maximum of
functions convex in ``gamma = e^eps``, hence convex itself, and therefore the
hockey-stick curve of a pair ``(P*, Q*)`` that dominates every ``(f, f_mu)`` at
every eps (Zhu, Dong and Wang, "Optimal accounting of differential privacy via
characteristic function", AISTATS 2022, Sec. 3: a dominating pair of each
round composes into a dominating pair of the composition). dp-accounting's
pessimistic *connect-the-dots* discretisation (Doroshenko et al., 2022) turns
that curve, evaluated exactly from the PMF on the grid ``eps = i * h``, into a
PLD whose hockey stick equals ``delta*`` at the grid points and lies above it
in between. When all shifts have the same curve (e.g. a symmetric PMF under
``{+1, -1}``) the dominating pair is that common pair and nothing is lost.

Infinite privacy loss. Mass of ``f`` at outputs where the shifted PMF is 0
has loss ``+inf``: it is the PLD's ``infinity_mass`` (``delta*(eps)`` for
every eps >= the largest finite loss), and after k rounds no eps is finite
below ``1 - (1 - m)^k``. Designs with such mass trigger
:class:`InfiniteLossWarning`; the composition handles the atom exactly
(dp-accounting composes ``1 - (1 - m)^k``), and ``epsilon(delta)`` returns
``inf`` where no finite epsilon exists. The curve is built from finite values
only, so no ``log(0)`` ever reaches dp-accounting.

Accuracy. The connect-the-dots PLD is pessimistic; losses are effectively
rounded to the grid ``h`` (default :data:`DISCRETIZATION`), so composed
epsilons are upper bounds accurate to about ``k h``. Composition truncates
tails below ``1e-15`` (dp-accounting's default), counted as infinite loss.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from optnoise.engine.validation import check_delta, check_int, check_int_array, check_positive, shown
from optnoise.privacy.curves import hockey_stick, resolve_shifts, shifted_pmfs

__all__ = [
    "DISCRETIZATION",
    "MAX_GRID",
    "MAX_PROFILE_POINTS",
    "MAX_COMPOSITIONS",
    "MAX_COMPOSED_GRID",
    "MAX_DISCRETIZATION",
    "MIN_DISCRETIZATION",
    "Composition",
    "InfiniteLossWarning",
    "ReleasePairs",
    "check_discretization",
    "compose",
    "compose_pairs",
    "design_pld",
    "dominating_pld",
    "infinite_loss_mass",
    "mechanism_pairs",
    "noise_pairs",
    "pair_pld",
    "privacy_profile",
    "result_pld",
]

#: Default loss discretisation of the PLDs (dp-accounting's own default).
DISCRETIZATION = 1e-4
#: Accepted loss grids ``h`` of the accounting: a PLD on a grid coarser than one unit of loss says
#: nothing (and dp-accounting overflows from h ~ 710 on); at 1e-9 only losses within +-0.002 fit MAX_GRID.
MIN_DISCRETIZATION, MAX_DISCRETIZATION = 1e-9, 1.0
#: Largest number of grid points of one PLD (``(max loss - min loss) / h``).
MAX_GRID = 4_000_000
#: Largest number of hockey-stick evaluations (ordered pairs x loss grid points) of one dominating
#: PLD. The profile is a running maximum over the pairs (memory: a few arrays of the grid), but every
#: pair is evaluated on the whole grid: 2 x 10^8 evaluations take about ten seconds, so a design with
#: thousands of shifts at a fine discretisation is refused before any work instead of running for hours.
MAX_PROFILE_POINTS = 200_000_000
#: Largest number of releases ``k`` that :func:`compose` and :func:`compose_pairs` accept.
#: dp-accounting's self-composition holds the composed PLD's support, which widens like
#: ``sqrt(k)`` (and holds the whole range for larger losses), so ``k = 10**12`` asked for
#: petabytes and ``k = 2**63`` overflowed; a million releases covers any deployment horizon
#: this accounting is meant for (for more, bound the epsilon of a batch and compose the
#: batches' guarantees).
MAX_COMPOSITIONS = 10**6
#: Largest loss grid of a composed PLD (:func:`compose` estimates it with dp-accounting's own tail
#: bounds before composing). The FFT of the self-composition holds a few complex arrays of that length,
#: ~75 bytes per point at its peak: 16 million points is about 1.2 GB.
MAX_COMPOSED_GRID = 16_000_000
#: Tail mass that dp-accounting's self-composition truncates (its default).
TAIL_TRUNCATION = 1e-15


@dataclass(frozen=True)
class ReleasePairs:
    """The ordered pairs of output distributions a design protects: ``P[k]`` against ``Q[k]``.

    Attributes
    ----------
    P, Q : ndarray, shape (K, C)
        Row ``k`` of ``P`` is the output distribution of the first input of pair ``k``,
        row ``k`` of ``Q`` that of its neighbour; both over the same ``C`` outputs.
    labels : ndarray, shape (K,) or (K, d)
        The shift of each pair: ``mu`` for modulo noise (reduced mod ``modulus``), the
        answer difference ``x - x'`` for matrices.
    modulus : int or None
        ``n+1`` for modulo noise (labels are read modulo it), ``None`` for matrices.
    """

    P: np.ndarray
    Q: np.ndarray
    labels: np.ndarray
    modulus: int | None = None

    def of_shift(self, shift: Any) -> ReleasePairs:
        """The pairs of one shift: its listed order, and the reverse order when that is listed too.

        ``ValueError`` (naming the protected shifts) when the design protects no pair of that shift.
        """
        lab = np.asarray(self.labels).reshape(len(self.labels), -1)
        want = check_int_array("shift", shift).reshape(-1)
        if want.size != lab.shape[1]:
            raise ValueError(f"shift must be one shift with {lab.shape[1]} integer coordinate(s); got {shown(shift)}")

        def norm(v: np.ndarray) -> np.ndarray:
            return np.mod(v, self.modulus) if self.modulus else v

        keep = np.all(norm(lab) == norm(want)[None, :], axis=1)
        if not np.any(keep):
            listed = sorted({tuple(r) if len(r) > 1 else int(r[0]) for r in lab.tolist()})
            raise ValueError(f"shift must be one of the shifts this design protects {listed}; got {shown(shift)}")
        keep |= np.all(norm(lab) == norm(-want)[None, :], axis=1)
        return ReleasePairs(self.P[keep], self.Q[keep], self.labels[keep], self.modulus)


def noise_pairs(pmf: Any, shifts: Any) -> ReleasePairs:
    """The pairs ``(f, f(.+mu))`` of modulo noise over every shift (:func:`~optnoise.privacy.curves.shifted_pmfs`)."""
    arr = np.asarray(pmf, dtype=float)
    f, g = shifted_pmfs(arr, shifts)
    mus = resolve_shifts(arr, shifts)
    return ReleasePairs(np.broadcast_to(f, g.shape), g, mus[:, 0] if mus.shape[1] == 1 else mus, arr.shape[0])


def mechanism_pairs(matrix: Any, pairs: Any) -> ReleasePairs:
    """The pairs ``(P[x], P[x'])`` of a mechanism matrix over its ordered neighbour ``pairs``.

    ``labels`` are the answer differences ``x - x'`` (the shifts of a clamped design).
    """
    M = np.asarray(matrix, dtype=float)
    pr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return ReleasePairs(M[pr[:, 0]], M[pr[:, 1]], pr[:, 0] - pr[:, 1], None)


class InfiniteLossWarning(UserWarning):
    """A design puts mass where a shifted PMF is 0: an infinite privacy loss."""


def infinite_loss_mass(pmf: Any, shifts: Any = None) -> float:
    """Largest mass, over the pairs, of outputs with ``P(o) > 0 = Q(o)`` (loss ``+inf``).

    ``infinite_loss_mass(pmf, shifts)`` for modulo noise, or ``infinite_loss_mass(pairs)``
    for any :class:`ReleasePairs`.
    """
    rp = pmf if isinstance(pmf, ReleasePairs) else noise_pairs(pmf, shifts)
    return _inf_mass(rp.P, rp.Q)


def _inf_mass(P: np.ndarray, Q: np.ndarray) -> float:
    return float(np.max(np.where((Q == 0) & (P > 0), P, 0.0).sum(axis=1)))


def _pair_profile(p: np.ndarray, q: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """``H_{e^eps}(P||Q)`` for eps of any sign."""
    out = np.empty(eps.size)
    pos = eps >= 0
    if np.any(pos):
        out[pos] = np.atleast_1d(hockey_stick(p, q, eps[pos]))
    if np.any(~pos):
        gam = np.exp(eps[~pos])
        # H_gamma(P||Q) = 1 - gamma + gamma H_{1/gamma}(Q||P), gamma < 1 (sum_o P = sum_o Q = 1)
        out[~pos] = 1.0 - gam + gam * np.atleast_1d(hockey_stick(q, p, -eps[~pos]))
    return np.clip(out, 0.0, 1.0)


def _profile_max(P: np.ndarray, Q: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """``max_k H_{e^eps}(P_k || Q_k)`` as a running maximum: memory of one grid, not one per pair."""
    out = np.zeros(eps.size)
    for p, q in zip(P, Q, strict=True):
        np.maximum(out, _pair_profile(p, q, eps), out=out)
    return out


def privacy_profile(pmf: Any, shifts: Any = None, eps: Any = None) -> Any:
    """Worst-case hockey stick ``max_k H_{e^eps}(P_k || Q_k)`` at eps of any sign.

    ``privacy_profile(pmf, shifts, eps)`` for modulo noise (the pairs ``(f, f(.+mu))``;
    for ``eps >= 0`` this is :func:`optnoise.privacy.curves.delta_dp`), or
    ``privacy_profile(pairs, eps=eps)`` for any :class:`ReleasePairs`. Negative eps are the
    part of the curve a dominating pair also needs (module docstring).
    """
    rp = pmf if isinstance(pmf, ReleasePairs) else noise_pairs(pmf, shifts)
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    if not np.all(np.isfinite(e)):
        raise ValueError(f"eps must be finite; got {shown(eps)}")
    _check_profile_work(len(rp.P), e.size, "eps", "eps values")
    out = _profile_max(rp.P, rp.Q, e)
    return float(out[0]) if np.ndim(eps) == 0 else out


def _loss_range(P: np.ndarray, Q: np.ndarray) -> tuple[float, float] | None:
    both = (P > 0) & (Q > 0)
    if not np.any(both):
        return None
    with np.errstate(divide="ignore"):
        loss = np.log(np.where(P > 0, P, 1.0)) - np.log(np.where(Q > 0, Q, 1.0))
    vals = loss[both]
    # both directions of every pair: the losses of (Q, P) are the negated ones
    return float(min(vals.min(), -vals.max())), float(max(vals.max(), -vals.min()))


def _max_loss(P: np.ndarray, Q: np.ndarray) -> float:
    """The largest finite privacy loss ``log P(o) - log Q(o)`` over the pairs, as the PLD reads them (at least 0)."""
    both = (P > 0) & (Q > 0)
    if not np.any(both):
        return 0.0
    with np.errstate(divide="ignore"):
        loss = np.log(np.where(both, P, 1.0)) - np.log(np.where(both, Q, 1.0))
    return max(float(loss[both].max()), 0.0)


def _warn_infinite(mass: float, stacklevel: int = 3) -> None:
    if mass > 0:
        warnings.warn(
            f"the design puts mass {mass:.3g} where a shifted PMF is 0 (infinite privacy loss): "
            f"its k-fold composition has no finite epsilon below delta = 1 - (1 - {mass:.3g})^k",
            InfiniteLossWarning,
            stacklevel=stacklevel,
        )


def design_pld(pmf: Any, shifts: Any, *, discretization: float = DISCRETIZATION, warn: bool = True) -> Any:
    """dp-accounting PLD of a dominating pair of every ``(f, f(.+mu))`` (module docstring).

    Parameters
    ----------
    pmf : array_like, shape ``(n+1,)*d``
        The noise PMF.
    shifts : Neighborhood or array_like
        The neighbourhood's shifts (as for :func:`optnoise.privacy.curves.delta_dp`).
    discretization : float
        Loss grid ``h``.
    warn : bool
        Emit :class:`InfiniteLossWarning` when the design has infinite-loss mass.

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        Pessimistic; its ``infinity_mass`` is :func:`infinite_loss_mass`.
    """
    return dominating_pld(noise_pairs(pmf, shifts), discretization=discretization, warn=warn)


def dominating_pld(pairs: ReleasePairs, *, discretization: float = DISCRETIZATION, warn: bool = True) -> Any:
    """dp-accounting PLD of a dominating pair of every ``(P_k, Q_k)`` of ``pairs`` (module docstring).

    The privacy profile ``max_k H_{e^eps}(P_k || Q_k)``, evaluated exactly on the grid
    ``eps = i h`` for eps of both signs, becomes a pessimistic connect-the-dots PLD
    (Doroshenko et al. 2022) whose hockey stick equals the profile at the grid points
    and lies above it in between.
    """
    from dp_accounting.pld import pld_pmf, privacy_loss_distribution

    h = check_discretization(discretization)
    P, Q = pairs.P, pairs.Q
    m_inf = _inf_mass(P, Q)
    if warn:
        _warn_infinite(m_inf)
    rng = _loss_range(P, Q)
    if rng is None:
        lo_i = hi_i = 0
    else:
        lo_i, hi_i = math.floor(rng[0] / h), math.ceil(rng[1] / h)
    if hi_i - lo_i + 1 > MAX_GRID:
        raise ValueError(
            f"discretization {h:g} gives {hi_i - lo_i + 1} loss grid points (finite losses span "
            f"[{lo_i * h:.3g}, {hi_i * h:.3g}]); choose a larger discretization (at most {MAX_GRID} points)"
        )
    points = hi_i - lo_i + 1
    _check_profile_work(
        len(P), points, "discretization", f"loss grid points at discretization {h:g}", h=h, span=(hi_i - lo_i) * h
    )
    eps = np.arange(lo_i, hi_i + 1) * h
    deltas = _profile_max(P, Q, eps)
    # at and beyond the largest finite loss only the infinite-loss atom remains (float noise aside)
    deltas = np.clip(deltas, m_inf, 1.0)
    deltas[-1] = m_inf
    pmf_remove = pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(h, lo_i, hi_i, deltas)
    return privacy_loss_distribution.PrivacyLossDistribution(pmf_remove)


def _check_profile_work(
    pairs: int, points: int, name: str, what: str, *, h: float | None = None, span: float = 0.0
) -> None:
    """Refuse a profile of ``pairs`` x ``points`` evaluations over :data:`MAX_PROFILE_POINTS` before any work."""
    if pairs * points <= MAX_PROFILE_POINTS:
        return
    fit = MAX_PROFILE_POINTS // max(pairs, 1)
    hint = f"at most {fit} points fit"
    if h is not None and fit > 1:
        hint = f"a discretization of at least {span / (fit - 1):.3g} fits"
    raise ValueError(
        f"{name}: the privacy profile of {pairs} ordered pairs over {points} {what} needs {pairs * points:.3g} "
        f"hockey-stick evaluations, more than the limit {MAX_PROFILE_POINTS:.0e}; {hint} (or protect fewer pairs)"
    )


def pair_pld(
    pmf: Any, shift: Any, *, shifts: Any = None, discretization: float = DISCRETIZATION, warn: bool = True
) -> Any:
    """dp-accounting PLD of one shift ``mu``: the pairs of that shift the neighbourhood protects.

    With ``shifts`` (the design's neighbourhood), the pairs are ``(f, f(.+mu))`` and, when
    the neighbourhood also lists ``-mu`` (symmetric), the reverse order: the module
    docstring's convention, so the curve never exceeds :func:`design_pld`'s. Without
    ``shifts`` both orders are taken (the pair of a symmetric neighbourhood). It accounts
    only for compositions that use this shift in every round; for the worst case use
    :func:`design_pld`.
    """
    if shifts is None:
        try:
            one = np.asarray(shift, dtype=np.int64).reshape(1, -1)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"shift must be a single shift (an int, or a vector); got {shown(shift)}") from None
        shifts = np.concatenate([one, -one]) if one.shape[1] > 1 else np.array([one[0, 0], -one[0, 0]])
    return dominating_pld(noise_pairs(pmf, shifts).of_shift(shift), discretization=discretization, warn=warn)


def result_pld(
    pmf: Any,
    shifts: Any,
    discretization: float = DISCRETIZATION,
    shift: Any = None,
    *,
    pairs: ReleasePairs | None = None,
) -> Any:
    """The PLD a result reports: the worst case over its pairs, or those of one ``shift``.

    Modulo noise passes ``pmf`` and ``shifts``; a matrix release passes its ``pairs``
    (:func:`mechanism_pairs`), whose ``labels`` are the answer differences.
    """
    if pairs is None:
        if shift is None:
            return design_pld(pmf, shifts, discretization=discretization)
        return pair_pld(pmf, shift, shifts=shifts, discretization=discretization)
    if shift is not None:
        pairs = pairs.of_shift(shift)
    return dominating_pld(pairs, discretization=discretization)


@dataclass(frozen=True)
class Composition:
    """The k-fold composition of a design's PLD.

    Attributes
    ----------
    k : int
        Number of releases.
    pld : PrivacyLossDistribution
        The composed (pessimistic) PLD.
    infinite_mass : float
        Per-release mass of infinite privacy loss ``m``; the composition has
        ``delta(eps) >= 1 - (1 - m)^k`` at every eps.
    pure_eps : float
        The exact eps at delta = 0: ``k`` times the largest privacy loss of one release (pure DP
        composes additively, and k copies of the worst pair attain the sum); ``inf`` with
        infinite-loss mass. :meth:`epsilon` and :meth:`delta` use it where it is tighter than
        the PLD, whose tail truncation (``TAIL_TRUNCATION``) puts a tiny mass at infinite loss.
    """

    k: int
    pld: Any
    infinite_mass: float = 0.0
    pure_eps: float = math.inf

    def delta(self, eps: Any) -> Any:
        """``delta(eps)`` of the k-fold composition (float, or an array for an array of eps)."""
        e = np.asarray(eps, dtype=float)
        if not np.all(np.isfinite(e)) or np.any(e < 0):
            raise ValueError(f"eps must be finite and >= 0; got {shown(eps)}")
        if e.ndim == 0:  # dp-accounting's scalar path: one vectorised sum (its list path loops in Python)
            if float(e) >= self.pure_eps:  # every loss is at most eps: exactly 0
                return 0.0
            return float(np.clip(float(self.pld.get_delta_for_epsilon(float(e))), 0.0, 1.0))
        out = np.atleast_1d(np.asarray(self.pld.get_delta_for_epsilon(list(np.atleast_1d(e))), dtype=float))
        out = np.where(np.atleast_1d(e) >= self.pure_eps, 0.0, np.clip(out, 0.0, 1.0))
        return out.reshape(e.shape)

    def epsilon(self, delta: float) -> float:
        """Smallest eps with ``delta(eps) <= delta``; ``inf`` when none is finite.

        Never above :attr:`pure_eps`, the exact eps at delta = 0 (both are upper bounds on the true
        eps at ``delta``; at delta = 0 the PLD's tail truncation alone would give ``inf``).
        """
        d = check_delta(delta)
        return min(float(self.pld.get_epsilon_for_delta(d)), self.pure_eps)


def check_discretization(value: Any, name: str = "discretization") -> float:
    """A loss grid ``h`` of the accounting: a number in ``[MIN_DISCRETIZATION, MAX_DISCRETIZATION]``."""
    h = check_positive(name, value)
    if not MIN_DISCRETIZATION <= h <= MAX_DISCRETIZATION:
        raise ValueError(
            f"{name} must be in [{MIN_DISCRETIZATION:g}, {MAX_DISCRETIZATION:g}] (the PLD's loss grid, "
            f"default {DISCRETIZATION:g}); got {shown(value)}"
        )
    return h


def check_compositions(k: Any, name: str = "k") -> int:
    """A number of compositions: an integer in ``1..MAX_COMPOSITIONS`` (floats, bools refused; numpy ints accepted)."""
    return check_int(name, k, minimum=1, maximum=MAX_COMPOSITIONS)


def compose(pmf: Any, shifts: Any, k: int, *, discretization: float = DISCRETIZATION, warn: bool = True) -> Composition:
    """k-fold (adaptive) composition of the design with noise ``pmf`` over ``shifts`` (worst case).

    ``k`` is an integer (a Python or numpy int; floats and bools are refused) in
    ``[1, MAX_COMPOSITIONS]`` (:data:`MAX_COMPOSITIONS`, 10**6).
    """
    return compose_pairs(noise_pairs(pmf, shifts), k, discretization=discretization, warn=warn)


def compose_pairs(
    pairs: ReleasePairs, k: int, *, discretization: float = DISCRETIZATION, warn: bool = True
) -> Composition:
    """k-fold (adaptive) composition of any release given by its protected :class:`ReleasePairs`.

    ``k`` as in :func:`compose`; a composition whose loss grid would exceed :data:`MAX_COMPOSED_GRID`
    points is refused before it is allocated.
    """
    k = check_compositions(k)
    pld = dominating_pld(pairs, discretization=discretization, warn=warn)
    inf_mass = _inf_mass(pairs.P, pairs.Q)
    pure = k * _max_loss(pairs.P, pairs.Q) if inf_mass == 0 else math.inf
    if k > 1 and inf_mass >= 1.0:
        # a pair told apart with certainty (e.g. a point mass): one release already has delta(eps) = 1 at
        # every eps, and so has any composition (delta only grows with k); dp-accounting cannot compose a
        # PLD with no finite loss, so the one-release PLD stands for it
        return Composition(k=k, pld=pld, infinite_mass=inf_mass)
    if k > 1 and _trivial_grid(pld, k) > MAX_COMPOSED_GRID:
        # dp-accounting's Chernoff bounds (40 log-sum-exps over the grid, as long as the FFT) only where
        # the grid with no truncation at all could exceed the limit: every search step composes a PMF
        points = _composed_grid(pld, k)
        if points > MAX_COMPOSED_GRID:
            raise ValueError(
                f"k = {k} releases of this design need a composed loss grid of {points} points, more than the "
                f"limit {MAX_COMPOSED_GRID} (~1.2 GB): pass a coarser discretization (the grid shrinks like "
                f"1/discretization; it is {discretization:g}) or compose fewer releases"
            )
    return Composition(
        k=k,
        pld=pld if k == 1 else pld.self_compose(k, tail_mass_truncation=TAIL_TRUNCATION),
        infinite_mass=inf_mass,
        pure_eps=pure,
    )


def _trivial_grid(pld: Any, k: int) -> int:
    """Length of the loss grid of ``pld.self_compose(k)`` with no tail truncation: ``k (m - 1) + 1`` for a
    one-release grid of ``m`` points, an upper bound on :func:`_composed_grid` that costs nothing."""
    sizes = [
        len(p._probs) if hasattr(p, "_probs") else len(p.to_dense_pmf()._probs) for p in (pld._pmf_remove, pld._pmf_add)
    ]
    return k * (max(sizes) - 1) + 1


def _composed_grid(pld: Any, k: int) -> int:
    """Length of the loss grid of ``pld.self_compose(k)``, from dp-accounting's own truncation bounds.

    The same Chernoff bounds that dp-accounting's ``self_convolve`` uses to size its FFT, evaluated
    on the (small) one-release PMFs, so an oversized composition is refused before it is allocated.
    """
    from dp_accounting.pld import common

    points = 0
    for pmf in {id(p): p for p in (pld._pmf_remove, pld._pmf_add)}.values():
        dense = pmf if hasattr(pmf, "_probs") else pmf.to_dense_pmf()
        lo, hi = common.compute_self_convolve_bounds(dense._probs, k, TAIL_TRUNCATION)
        points = max(points, int(hi) - int(lo) + 1)
    return points
