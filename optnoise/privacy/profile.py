"""Privacy-profile constraints: the hockey stick at several (eps, delta) pairs at once.

A mechanism's *privacy profile* is its curve ``delta(eps)``; for the modulo
release with noise ``f`` and shift set M it is

    ``delta_f(eps) = max_mu sum_eta [f(eta) - e^eps f(eta + mu)]_+``

(:func:`optnoise.privacy.curves.delta_dp`). ``NoiseDesign(..., privacy="profile",
profile=[(eps_1, delta_1), ...])`` asks for the least-distortion noise with
``delta_f(eps_j) <= delta_j`` for every listed pair: one copy of the DP
hockey-stick rows of the ``"dp"`` LP per pair, sharing the PMF, so still an
LP.

"At least as private as mechanism X on a grid." :func:`profile_of` computes a
baseline's profile exactly (float64, from its PMF) on a grid of eps;
:func:`discrete_gaussian_profile` does it for the discrete Gaussian
``N_Z(0, sigma^2)`` on the integers. A design built from that profile
dominates X at every grid point. Between grid points both curves are convex
in ``e^eps`` and the design's curve lies below the chord of its grid values,
which lies above X's curve only by the chord gap: a denser grid closes it.
Because the modulo release of X's wrapped noise is a post-processing of X on
the integers, the wrapped X is always feasible for X's integer profile, so the
optimum never costs more than the wrapped X.

Tolerance. Solvers meet rows to ~1e-9 absolute; each pair's budget row is
written relative to its delta_j (``s = delta_j u``, ``sum u <= 1``) so that it
holds relatively, and the re-verified profile is accepted when
``delta_f(eps_j) <= delta_j (1 + PROFILE_RTOL) + PROFILE_ATOL`` for every j
(:func:`profile_satisfied`); otherwise the result is ``"unverified"``.
Pairs with ``delta_j`` far below the LP's resolution (say 1e-20, far out on a
Gaussian's profile) are enforced only to ``PROFILE_ATOL`` and can stall HiGHS'
simplex (measured); the baseline helpers therefore leave out points with
``delta < min_delta`` (default :data:`MIN_DELTA`). Points just above it can
still stall both HiGHS' simplex and its interior point for good (measured: one
point at delta = 3.5e-9 of a discrete Gaussian with sigma = 16.7, n = 246; the
same LP without it solves in 0.2 s), so pass ``time_limit`` to
:meth:`~optnoise.NoiseDesign.solve` when such points are listed, or raise
``min_delta`` (``experiments/beyond/composition.py`` uses 1e-8).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from optnoise.engine.model import ModelBuilder
from optnoise.engine.validation import (
    MAX_EPS,
    MAX_EPS_REASON,
    check_delta,
    check_eps,
    check_finite_array,
    check_int,
    check_positive,
)
from optnoise.privacy.curves import delta_dp
from optnoise.privacy.neighborhood import Neighborhood
from optnoise.privacy.noise_families import IntegerNoise, Mechanism, discrete_gaussian_noise

__all__ = [
    "PROFILE_ATOL",
    "PROFILE_RTOL",
    "add_profile_rows",
    "check_profile",
    "discrete_gaussian_profile",
    "profile_excess",
    "profile_of",
    "profile_satisfied",
]

#: Relative slack of a re-verified profile point (solver feasibility tolerance).
PROFILE_RTOL = 1e-6
#: Absolute slack of a re-verified profile point: masses near the LP's 1e-9 feasibility tolerance are
#: resolved only to about 1e-11 (budget rows are scaled by 1/delta_j), so tiny delta_j are checked to this.
PROFILE_ATOL = 1e-10
#: Budget rows are scaled by max(delta_j, SCALE_FLOOR) (see :func:`add_profile_rows`).
SCALE_FLOOR = 1e-9
#: Default smallest delta a baseline profile helper keeps (see the module docstring).
MIN_DELTA = 1e-9
#: Largest number of pairs in one profile.
MAX_PAIRS = 10_000


def check_profile(profile: Any, name: str = "profile") -> tuple[tuple[float, float], ...]:
    """A non-empty list of ``(eps, delta)`` pairs, eps in [0, MAX_EPS] and distinct, delta in [0, 1]; sorted by eps.

    Each eps is bounded like the eps of any LP design (:data:`~optnoise.engine.validation.MAX_EPS`):
    ``e^eps`` is a coefficient of the profile's rows.
    """
    if profile is None:
        raise ValueError(f"{name} is required with privacy='profile': a list of (eps, delta) pairs")
    arr = check_finite_array(name, profile, ndim=2) if np.ndim(profile) == 2 else None
    if arr is None or arr.shape[1] != 2:
        raise ValueError(f"{name} must be a list of (eps, delta) pairs; got {profile!r:.200}")
    if arr.shape[0] > MAX_PAIRS:
        raise ValueError(f"{name} must have at most {MAX_PAIRS} pairs; got {arr.shape[0]}")
    for e in arr[:, 0]:
        check_eps(float(e), f"{name} eps", allow_zero=True, maximum=MAX_EPS, why=MAX_EPS_REASON)
    for d in arr[:, 1]:
        check_delta(d, f"{name} delta")
    order = np.argsort(arr[:, 0], kind="stable")
    arr = arr[order]
    if np.any(np.diff(arr[:, 0]) == 0):
        raise ValueError(f"{name} must list each eps once; got a repeated eps")
    return tuple((float(e), float(d)) for e, d in arr)


def add_profile_rows(
    mb: ModelBuilder, f: np.ndarray, idx: np.ndarray, profile: tuple[tuple[float, float], ...]
) -> None:
    """The hockey stick at every ``(eps_j, delta_j)``, every shift: ``"dp"``'s rows once per pair.

    For each pair: ``f(eta) - e^eps_j f(eta+mu) - s_j(mu, eta) <= 0`` and
    ``sum_eta s_j(mu, eta) <= delta_j``; with ``delta_j = 0`` the pure rows
    ``f(eta) <= e^eps_j f(eta+mu)``.
    """
    K, N = idx.shape
    r = np.arange(K * N)
    for j, (eps, delta) in enumerate(profile):
        E = math.exp(eps)
        if delta == 0.0:
            mb.add_rows(
                np.repeat(r, 2),
                np.stack([np.tile(f, K), f[idx.ravel()]], 1).ravel(),
                np.tile([1.0, -E], K * N),
                upper=0.0,
            )
            continue
        # s = c u with c = max(delta_j, SCALE_FLOOR): the budget row sum u <= delta_j / c then holds to
        # the solver's tolerance relative to delta_j down to SCALE_FLOOR (smaller scales wreck the LP)
        c = max(delta, SCALE_FLOOR)
        u = mb.add_vars(K * N, lb=0.0, ub=1.0 / c, name=f"s{j}").reshape(K, N)
        cols = np.stack([np.tile(f, K), f[idx.ravel()], u.ravel()], 1).ravel()
        mb.add_rows(np.repeat(r, 3), cols, np.tile([1.0, -E, -c], K * N), upper=0.0)
        mb.add_rows(np.repeat(np.arange(K), N), u.ravel(), 1.0, upper=delta / c)


def profile_excess(pmf: Any, shifts: Any, profile: tuple[tuple[float, float], ...]) -> tuple[np.ndarray, float]:
    """Re-verified ``delta_f(eps_j)`` of every pair, and ``max_j (delta_f(eps_j) - delta_j) / delta_j`` (0 if none).

    A zero ``delta_j`` with a positive ``delta_f(eps_j)`` counts as ``inf``.
    """
    eps = np.array([e for e, _ in profile])
    target = np.array([d for _, d in profile])
    got = np.atleast_1d(delta_dp(pmf, shifts, eps))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(target > 0, (got - target) / target, np.where(got > 0, np.inf, 0.0))
    return got, float(max(0.0, rel.max()))


def profile_satisfied(achieved: Any, profile: tuple[tuple[float, float], ...]) -> bool:
    """``achieved_j <= delta_j (1 + PROFILE_RTOL) + PROFILE_ATOL`` for every pair."""
    target = np.array([d for _, d in profile])
    return bool(np.all(np.asarray(achieved) <= target * (1.0 + PROFILE_RTOL) + PROFILE_ATOL))


def profile_of(
    baseline: Any, eps: Any, *, shifts: Any = None, sensitivity: int = 1, min_delta: float = MIN_DELTA
) -> list[tuple[float, float]]:
    """The exact privacy profile ``[(eps_j, delta(eps_j))]`` of a baseline on a grid of eps.

    Parameters
    ----------
    baseline : IntegerNoise, Mechanism or array_like
        An integer noise (``q + eta`` on all integers, neighbours differing by
        ``1..sensitivity`` either way; :meth:`IntegerNoise.delta`), a
        :class:`~optnoise.privacy.noise_families.Mechanism` (its ``delta`` under
        ``Neighborhood.bd(sensitivity)``), or a noise PMF on ``{0..n}^d`` with
        ``shifts`` (:func:`optnoise.privacy.curves.delta_dp`).
    eps : array_like
        The grid, eps >= 0.
    shifts : Neighborhood or array_like, optional
        Required for a PMF baseline.
    sensitivity : int
        For integer noises and mechanisms.
    min_delta : float
        Grid points where the baseline's delta is below this are left out (an LP
        resolves masses only to about 1e-10); 0 keeps every point.
    """
    grid = check_finite_array("eps", np.atleast_1d(np.asarray(eps, dtype=float)))
    if np.any(grid < 0):
        raise ValueError("eps grid values must be >= 0")
    sens = check_int("sensitivity", sensitivity, minimum=1)
    if isinstance(baseline, IntegerNoise):
        vals = baseline.delta(grid, sensitivity=sens)
    elif isinstance(baseline, Mechanism):
        vals = baseline.delta(grid, neighborhood=Neighborhood.bd(sens))
    else:
        if shifts is None:
            raise ValueError("shifts is required when the baseline is a PMF (e.g. Neighborhood.bd(1))")
        vals = delta_dp(baseline, shifts, grid)
    floor = check_positive("min_delta", min_delta, allow_zero=True)
    pairs = [(float(e), float(min(1.0, max(0.0, d)))) for e, d in zip(grid, np.atleast_1d(vals), strict=True)]
    return [(e, d) for e, d in pairs if d >= floor]


def discrete_gaussian_profile(
    sigma: float, eps: Any, *, sensitivity: int = 1, min_delta: float = MIN_DELTA
) -> list[tuple[float, float]]:
    """Exact profile of the discrete Gaussian ``N_Z(0, sigma^2)`` on the integers at every eps of a grid.

    Example: ``NoiseDesign(n=60, neighborhood=Neighborhood.bd(1), metric="circular-mse",
    privacy="profile", profile=discrete_gaussian_profile(3.0, np.linspace(0, 2, 41)))`` is the
    least-MSE noise at least as private as ``N_Z(0, 9)`` at every eps of the grid.
    """
    s = check_positive("sigma", sigma)
    return profile_of(discrete_gaussian_noise(s * s), eps, sensitivity=sensitivity, min_delta=min_delta)
