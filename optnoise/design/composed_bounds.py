"""What a composed design is to the accounting, and the proven lower bounds of composed designs.

:func:`composition` is the guarantee every composed design is judged by (``compose_pairs`` on the
release's pairs at the design's discretisation); :func:`lower_bound` and :func:`eps_bound` are the
larger of the LP relaxations of :mod:`optnoise.design.composed` (its docstring states why they are
valid) and the trade-off bound of :mod:`optnoise.design.composed_tradeoff` (modulo releases);
:func:`bound_and_method` and :func:`eps_bound_and_method` also name the method that gave it
(``"tradeoff"`` or ``"lp"``).
"""

from __future__ import annotations

import math
import time
import warnings
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from optnoise.privacy import accounting

if TYPE_CHECKING:
    from optnoise.design.noise import NoiseDesign

__all__ = [
    "bound_and_method",
    "compose_release",
    "composition",
    "eps_bound",
    "eps_bound_and_method",
    "lp_lower_bound",
    "lower_bound",
    "release_pairs",
    "single_delta",
    "SingleReleaseLP",
    "single_release_lp",
]


def release_pairs(design: NoiseDesign, pmf: np.ndarray) -> accounting.ReleasePairs:
    """The release's protected pairs (as :meth:`DesignResult.release_pairs`)."""
    return design.rel.release_pairs(design, pmf)


def single_delta(design: NoiseDesign, pmf: np.ndarray, eps: float) -> float:
    """The exact single-release hockey stick at eps (the worst protected pair)."""
    return design.rel.single_delta(design, pmf, eps)


def composition(design: NoiseDesign, pmf: np.ndarray) -> accounting.Composition:
    """``compose(k)`` of the release at the design's discretisation (no warnings)."""
    return compose_release(release_pairs(design, pmf), design.compositions, design.discretization)


def compose_release(pairs: accounting.ReleasePairs, k: int, discretization: float) -> accounting.Composition:
    """``compose_pairs`` of a release's pairs without the infinite-loss warning (the accounting handles the atom)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", accounting.InfiniteLossWarning)
        return accounting.compose_pairs(pairs, k, discretization=discretization, warn=False)


# --------------------------------------------------------------------------------------------
# the single-release LP
# --------------------------------------------------------------------------------------------


class SingleReleaseLP(Protocol):
    """How the composed search solves its single-release (eps, delta) LPs.

    ``lp(design, time_limit=..., options=...)`` returns a result with ``pmf``, ``status``, ``bound``,
    ``distortion``, ``message``, ``solve_time`` and ``verify()``. The pipeline passes its own
    (:func:`optnoise.design.pipeline.solve_noise` with the composed design's backend), so that the
    search never re-enters ``NoiseDesign.solve``.
    """

    def __call__(
        self, design: Any, /, *, time_limit: float | None = None, options: dict[str, Any] | None = None
    ) -> Any:
        """Solve the single-release ``design`` within ``time_limit`` seconds with raw HiGHS ``options``."""


def single_release_lp(lp_solver: str | SingleReleaseLP) -> SingleReleaseLP:
    """The LP interface of ``lp_solver``: itself when it is one, else the design's own solve with that backend name
    (for direct callers of the bounds)."""
    if callable(lp_solver):
        return lp_solver
    name = lp_solver

    def by_name(design: Any, *, time_limit: float | None = None, options: dict[str, Any] | None = None) -> Any:
        return design.solve(solver=name, time_limit=time_limit, options=options)

    return by_name


# --------------------------------------------------------------------------------------------
# lower bounds
# --------------------------------------------------------------------------------------------


def _lp_bound(
    design: NoiseDesign,
    eps: float,
    lp_solver: str | SingleReleaseLP,
    time_limit: float | None = None,
    options: dict[str, Any] | None = None,
    **changes: Any,
) -> float | None:
    """A proven lower bound of the (eps, delta) LP of ``design`` with ``changes`` (``None`` if unproven)."""
    spec = {
        "privacy": "dp",
        "compositions": None,
        "discretization": None,
        "objective": "distortion",
        "max_distortion": None,
        "eps": eps,
        "delta": design.delta,
        **changes,
    }
    res = single_release_lp(lp_solver)(design.replace(**spec), time_limit=time_limit, options=options)
    return None if res.bound is None or not math.isfinite(res.bound) else float(res.bound)


def _sum_shifts(design: NoiseDesign) -> list[tuple[list[Any], bool]]:
    """For the sum-statistic bound: per protected shift mu, the shifts ``k mu`` (and ``-k mu`` if ``-mu`` is listed)."""
    if not design.rel.cyclic or design.metric not in ("mse", "circular-mse"):
        return []
    N, k = design.n + 1, int(design.compositions)
    listed = {tuple(int(v) for v in s) for s in design.shifts.tolist()}
    out: list[tuple[list[Any], bool]] = []
    done: set[tuple[int, ...]] = set()
    for mu in sorted(listed):
        km = tuple((k * v) % N for v in mu)
        if all(v == 0 for v in km) or km in done:
            continue
        neg = tuple((-v) % N for v in mu)
        both = neg in listed
        done.update({km, tuple((-v) % N for v in km)})
        item = km[0] if len(km) == 1 else km
        out.append(([item], both))
        if len(out) >= 4:
            break
    return out


def lp_lower_bound(
    design: NoiseDesign,
    lp_solver: str | SingleReleaseLP = "highs",
    eps: float | None = None,
    deadline: float | None = None,
    options: dict[str, Any] | None = None,
) -> float | None:
    """The LP bounds: the k = 1 LP, and for ``"mse"``/``"circular-mse"`` modulo noise the sum statistic
    ``(LP_k - d/4) / k`` (:mod:`optnoise.design.composed` docstring). ``None`` when no LP proved a bound.
    ``deadline`` (a :func:`time.perf_counter` value) bounds the LPs together (an LP cut short keeps only
    the bound it proved); ``options``: raw HiGHS options of the LPs."""
    from optnoise.privacy.neighborhood import Neighborhood

    def left() -> float | None:
        return None if deadline is None else max(deadline - time.perf_counter(), 0.05)

    eps = float(design.eps or 0.0) if eps is None else float(eps)
    bounds = [_lp_bound(design, eps, lp_solver, left(), options)]
    k = int(design.compositions)
    for shifts, both in _sum_shifts(design):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        nb = Neighborhood.shifts(shifts, directed=not both)
        sums = {"neighborhood": nb.to_dict(), "metric": "circular-mse", "cost": None}
        b = _lp_bound(design, eps, lp_solver, left(), options, **sums)
        if b is not None:
            bounds.append((b - design.dim / 4.0) / k)
    got = [b for b in bounds if b is not None]
    return max(got) if got else None


def bound_and_method(
    design: NoiseDesign,
    lp_solver: str | SingleReleaseLP = "highs",
    eps: float | None = None,
    upper: float | None = None,
    deadline: float | None = None,
    options: dict[str, Any] | None = None,
) -> tuple[float | None, str]:
    """A proven lower bound on the distortion of any design whose k-fold composition the accounting
    certifies at (eps, delta), and the method that proved it: ``"tradeoff"``
    (:mod:`optnoise.design.composed_tradeoff`, searched up to ``upper``, e.g. the distortion of a
    certified design, until ``deadline``, a :func:`time.perf_counter` value) when it beats the LP
    bounds, else ``"lp"`` (:func:`lp_lower_bound`). ``(None, "")`` when nothing is proven."""
    from optnoise.design.composed_tradeoff import tradeoff_bound

    lp = lp_lower_bound(design, lp_solver, eps, deadline, options)
    if int(design.compositions or 1) >= 2:
        tb = tradeoff_bound(design, lo=max(lp or 0.0, 0.0), hi=upper, eps=eps, deadline=deadline)
        if tb is not None and (lp is None or tb > lp):
            return tb, "tradeoff"
    return lp, "lp" if lp is not None else ""


def lower_bound(
    design: NoiseDesign,
    lp_solver: str | SingleReleaseLP = "highs",
    eps: float | None = None,
    upper: float | None = None,
) -> float | None:
    """The bound of :func:`bound_and_method` (``None`` when nothing is proven)."""
    return bound_and_method(design, lp_solver, eps, upper)[0]


def eps_bound_and_method(
    design: NoiseDesign,
    cap: float,
    eps_hi: float,
    lp_solver: str | SingleReleaseLP,
    deadline: float | None = None,
    options: dict[str, Any] | None = None,
) -> tuple[float | None, str]:
    """The largest eps at which no design within the cap is certified, and its method (the bisection
    stops at ``deadline``, a :func:`time.perf_counter` value, where the proofs reached).

    ``"lp"``: bisection over eps of :func:`lp_lower_bound` (> cap proves it); ``"tradeoff"``: the
    trade-off curve at cost ``cap`` composed, its eps found by bisection
    (:func:`optnoise.design.composed_tradeoff.tradeoff_eps_bound`); the larger one is reported.
    """
    from optnoise.design.composed_tradeoff import tradeoff_eps_bound

    if not math.isfinite(eps_hi) or eps_hi <= 0:
        return None, ""
    lo, hi = 0.0, eps_hi
    for _ in range(10):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        mid = 0.5 * (lo + hi)
        b = lp_lower_bound(design, lp_solver, mid, deadline, options)
        if b is not None and b > cap:
            lo = mid
        else:
            hi = mid
    in_time = deadline is None or time.perf_counter() < deadline
    tb = tradeoff_eps_bound(design, cap, eps_hi) if int(design.compositions or 1) >= 2 and in_time else None
    if tb is not None and tb > lo:
        return tb, "tradeoff"
    return lo, "lp"


def eps_bound(design: NoiseDesign, cap: float, eps_hi: float, lp_solver: str) -> float | None:
    """The bound of :func:`eps_bound_and_method`."""
    return eps_bound_and_method(design, cap, eps_hi, lp_solver)[0]
