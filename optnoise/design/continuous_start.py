"""Where a continuous design starts: its first resolution, its truncation, a finer resolution's seed.

Sizes only: every choice here changes how long a solve takes, never what it proves (the support grows
and the truncation widens while they matter; :mod:`optnoise.design.continuous`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "FIRST_RESOLUTION",
    "MAX_CELLS",
    "budget_pairs",
    "finer_seed",
    "first_resolution",
    "truncation",
]

#: The automatic refinement starts at this ``m`` (fewer at small eps: :func:`first_resolution`) and doubles up
#: to :data:`optnoise.design.continuous.MAX_AUTO_RESOLUTION`.
FIRST_RESOLUTION = 4
#: Largest number of cells on a side of the lower-bound LP (the upper bound's support plus margins).
MAX_CELLS = 20_000


def budget_pairs(design: Any) -> list[tuple[float, float]]:
    """``[(eps, delta)]`` of a dp design, or its profile's pairs."""
    return list(design.profile) if design.profile is not None else [(float(design.eps), float(design.delta))]


def first_resolution(design: Any) -> int:
    """The first ``m`` of the automatic refinement: :data:`FIRST_RESOLUTION`, fewer cells at small eps.

    The noise spreads over about ``Delta / eps``: at small eps a coarse grid already resolves it
    (the bracket's width is a small fraction of the distortion), while the support in cells, and so
    the LPs, grow like ``m / eps``.
    """
    eps = min(e for e, _ in budget_pairs(design))
    return FIRST_RESOLUTION if eps >= 1.0 else (2 if eps >= 0.2 else 1)


def truncation(design: Any, m: int, up: Any) -> int:
    """The first number of cells a side of the lower-bound LP: where the mechanism's tail stops mattering, plus m.

    The bound is valid at any ``K``. Beyond ``K`` the mechanism's cells should cost at most 1% of
    the requested gap and (delta > 0) hold at most 1% of gap x delta of mass, so that the LP's
    optimum need not live there; the last ``m`` cells, whose rows reaching past ``K`` are dropped,
    are a margin (:func:`optnoise.design.continuous._lower_at` widens it while the LP's solution uses it).
    """
    k = np.arange(0, MAX_CELLS + 1)
    w = design.sensitivity / m
    right, left = up.pmf_at(k), up.pmf_at(-k)
    cost = right * design.cost_of.average(k, w) + left * design.cost_of.average(-k, w)

    def first_below(values: np.ndarray, level: float) -> int:
        beyond = np.cumsum(values[::-1])[::-1]  # beyond[K] = sum over |k| >= K
        small = np.nonzero(beyond <= level)[0]
        return int(small[0]) if small.size else MAX_CELLS

    K = first_below(cost, 1e-2 * design.target_gap * max(up.distortion, 1.0))  # the gap's scale
    deltas = [d for _, d in budget_pairs(design) if d > 0.0]
    if deltas:
        K = max(K, first_below(right + left, 1e-2 * design.target_gap * min(deltas)))
    return int(min(MAX_CELLS, K + m))


def finer_seed(up: Any) -> Callable[[np.ndarray], np.ndarray]:
    """The cell masses at ``2 m`` of the mechanism ``up`` at ``m`` (tails included), as a function of the cells.

    Centred cells: cell ``2k`` of width ``w / 2`` lies inside cell ``k`` (half its mass), cell ``2k + 1``
    straddles cells ``k`` and ``k + 1`` (a quarter of each), as
    :func:`~optnoise.design.composed_polish.refine_cells` maps finite arrays. The upper bound at ``2 m``
    starts its lazy rows from this (``lazy_seed``, read by :func:`optnoise.design.additive.solve`) instead of
    solving the pure-DP design first: it only chooses the starting rows; every violated row is added and the
    result re-verified, so the optimum is the same. Measured at (1, 0.1), l1 (``benchmarks/RESULTS.md``).
    """

    def seed(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.int64)
        return 0.25 * (up.pmf_at(np.floor_divide(x, 2)) + up.pmf_at(-np.floor_divide(-x, 2)))

    return seed
