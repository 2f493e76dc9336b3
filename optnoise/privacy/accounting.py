"""Composition accounting of noise designs with privacy loss distributions (dp-accounting).

A design releases ``q + eta (mod n+1)`` with ``eta ~ f``; neighbouring
datasets differ by a shift ``mu`` of the answer, so one release is the pair of
output distributions ``(P, Q) = (f, f(.+mu))`` for every shift of the
design's neighbourhood (a symmetric neighbourhood lists ``mu`` and ``-mu``,
which covers both orders of every neighbouring pair).

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

from optnoise.engine.validation import check_delta, check_int, check_positive
from optnoise.privacy.curves import hockey_stick, shifted_pmfs

__all__ = [
    "DISCRETIZATION",
    "MAX_GRID",
    "Composition",
    "InfiniteLossWarning",
    "compose",
    "design_pld",
    "infinite_loss_mass",
    "pair_pld",
    "privacy_profile",
    "result_pld",
]

#: Default loss discretisation of the PLDs (dp-accounting's own default).
DISCRETIZATION = 1e-4
#: Largest number of grid points of one PLD (``(max loss - min loss) / h``).
MAX_GRID = 4_000_000


class InfiniteLossWarning(UserWarning):
    """A design puts mass where a shifted PMF is 0: an infinite privacy loss."""


def infinite_loss_mass(pmf: Any, shifts: Any) -> float:
    """Largest mass, over shifts, of outputs with ``f(eta) > 0 = f(eta + mu)`` (loss ``+inf``)."""
    f, g = shifted_pmfs(pmf, shifts)
    return float(np.max(np.where((g == 0) & (f[None, :] > 0), f[None, :], 0.0).sum(axis=1)))


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


def privacy_profile(pmf: Any, shifts: Any, eps: Any) -> Any:
    """Worst-case hockey stick ``max_mu H_{e^eps}(f || f(.+mu))`` at eps of any sign.

    For ``eps >= 0`` this is :func:`optnoise.privacy.curves.delta_dp`; negative eps are
    the part of the curve a dominating pair also needs (module docstring).
    """
    f, g = shifted_pmfs(pmf, shifts)
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    if not np.all(np.isfinite(e)):
        raise ValueError(f"eps must be finite; got {eps!r}")
    out = np.max(np.stack([_pair_profile(f, gm, e) for gm in g]), axis=0)
    return float(out[0]) if np.ndim(eps) == 0 else out


def _loss_range(f: np.ndarray, g: np.ndarray) -> tuple[float, float] | None:
    both = (f[None, :] > 0) & (g > 0)
    if not np.any(both):
        return None
    with np.errstate(divide="ignore"):
        loss = np.log(f)[None, :] - np.log(np.where(g > 0, g, 1.0))
    vals = loss[both]
    # both directions of every pair: the losses of (Q, P) are the negated ones
    return float(min(vals.min(), -vals.max())), float(max(vals.max(), -vals.min()))


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
    from dp_accounting.pld import pld_pmf, privacy_loss_distribution

    h = check_positive("discretization", discretization)
    f, g = shifted_pmfs(pmf, shifts)
    m_inf = float(np.max(np.where((g == 0) & (f[None, :] > 0), f[None, :], 0.0).sum(axis=1)))
    if warn:
        _warn_infinite(m_inf)
    rng = _loss_range(f, g)
    if rng is None:
        lo_i = hi_i = 0
    else:
        lo_i, hi_i = math.floor(rng[0] / h), math.ceil(rng[1] / h)
    if hi_i - lo_i + 1 > MAX_GRID:
        raise ValueError(
            f"discretization {h:g} gives {hi_i - lo_i + 1} loss grid points (finite losses span "
            f"[{lo_i * h:.3g}, {hi_i * h:.3g}]); choose a larger discretization (at most {MAX_GRID} points)"
        )
    eps = np.arange(lo_i, hi_i + 1) * h
    deltas = np.max(np.stack([_pair_profile(f, gm, eps) for gm in g]), axis=0)
    # at and beyond the largest finite loss only the infinite-loss atom remains (float noise aside)
    deltas = np.clip(deltas, m_inf, 1.0)
    deltas[-1] = m_inf
    pmf_remove = pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(h, lo_i, hi_i, deltas)
    return privacy_loss_distribution.PrivacyLossDistribution(pmf_remove)


def pair_pld(pmf: Any, shift: Any, *, discretization: float = DISCRETIZATION, warn: bool = True) -> Any:
    """dp-accounting PLD of the one pair ``(f, f(.+mu))``, both directions (remove and add).

    Built with dp-accounting's ``from_two_probability_mass_functions`` from the
    two PMFs (pessimistic rounding of each loss up to the grid ``h``). It
    accounts only for compositions that use this shift in every round; for the
    worst case over a neighbourhood use :func:`design_pld`.
    """
    from dp_accounting.pld import privacy_loss_distribution

    h = check_positive("discretization", discretization)
    try:
        one = np.asarray(shift).reshape(1, -1)
    except (TypeError, ValueError):
        raise ValueError(
            f"shift must be a single shift (an int, or a vector for vector designs); got {shift!r}"
        ) from None
    f, g = shifted_pmfs(pmf, one)
    g0 = g[0]
    if warn:
        _warn_infinite(float(max(f[(g0 == 0) & (f > 0)].sum(), g0[(f == 0) & (g0 > 0)].sum())))
    with np.errstate(divide="ignore"):
        lp, lq = np.log(f), np.log(g0)
    # outcomes with mass 0 under both never occur and are left out; one-sided zeros are
    # infinite losses that dp-accounting moves into infinity_mass itself
    keep = (f > 0) | (g0 > 0)
    upper = {int(i): float(lp[i]) for i in np.flatnonzero(keep)}
    lower = {int(i): float(lq[i]) for i in np.flatnonzero(keep)}
    return privacy_loss_distribution.from_two_probability_mass_functions(
        lower, upper, value_discretization_interval=h, symmetric=False
    )


def result_pld(pmf: Any, shifts: Any, discretization: float = DISCRETIZATION, shift: Any = None) -> Any:
    """:func:`design_pld` (``shift=None``, the worst case over ``shifts``) or :func:`pair_pld` of one shift."""
    if shift is None:
        return design_pld(pmf, shifts, discretization=discretization)
    return pair_pld(pmf, shift, discretization=discretization)


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
    """

    k: int
    pld: Any
    infinite_mass: float = 0.0

    def delta(self, eps: Any) -> Any:
        """``delta(eps)`` of the k-fold composition (float, or an array for an array of eps)."""
        e = np.asarray(eps, dtype=float)
        if not np.all(np.isfinite(e)) or np.any(e < 0):
            raise ValueError(f"eps must be finite and >= 0; got {eps!r}")
        out = np.atleast_1d(np.asarray(self.pld.get_delta_for_epsilon(list(np.atleast_1d(e))), dtype=float))
        out = np.clip(out, 0.0, 1.0)
        return float(out[0]) if e.ndim == 0 else out.reshape(e.shape)

    def epsilon(self, delta: float) -> float:
        """Smallest eps with ``delta(eps) <= delta``; ``inf`` when none is finite."""
        d = check_delta(delta)
        return float(self.pld.get_epsilon_for_delta(d))


def compose(pmf: Any, shifts: Any, k: int, *, discretization: float = DISCRETIZATION, warn: bool = True) -> Composition:
    """k-fold (adaptive) composition of the design with noise ``pmf`` over ``shifts`` (worst case)."""
    k = check_int("k", k, minimum=1)
    pld = design_pld(pmf, shifts, discretization=discretization, warn=warn)
    return Composition(k=k, pld=pld if k == 1 else pld.self_compose(k), infinite_mass=infinite_loss_mass(pmf, shifts))
