"""Composed designs on the reals at a fine resolution, warm-started from coarser ones.

A composed continuous design at ``m`` cells per unit of sensitivity
(:mod:`optnoise.design.continuous_composed`) searches from calibrated families; at ``m = 8, 16`` the search
stalls where the landscape is flat, short of what a coarser design already reached. Here the design is solved
at ``m / 2^s, ..., m / 2, m``, each level's search also starting from the level below refined to its cells
(:func:`~optnoise.design.composed_polish.refine_cells`: the coarser density's cell masses at the finer grid, a
smoothed density there). Every start is only a start: each level's result is the cells' composed design,
certified by its own accounting, so the returned mechanism is what
:meth:`~optnoise.design.noise.NoiseDesign.solve` would certify at ``m``, and never worse than the cold start's
candidates (the families stay candidates). Measured at Gilani et al.'s setting (variance 25, k = 10,
delta = 1e-6): :file:`benchmarks/RESULTS.md`, section ``gilani``.
"""

from __future__ import annotations

from typing import Any

from optnoise.design.composed_polish import refine_cells
from optnoise.design.continuous_composed import COMPOSED_RESOLUTION
from optnoise.design.continuous_result import ContinuousResult, is_composed

__all__ = ["WARM_STEPS", "resolution_chain", "solve_refined"]

#: Coarser levels solved before the design's own resolution (each halves ``m``; fewer when ``m`` is odd).
WARM_STEPS = 2


def resolution_chain(m: int, steps: int = WARM_STEPS) -> list[int]:
    """``m / 2^s, ..., m / 2, m`` with ``s <= steps`` halvings that keep ``m`` an integer."""
    if int(m) < 1 or int(steps) < 0:
        raise ValueError(f"m must be a positive integer and steps >= 0 (got m={m!r}, steps={steps!r})")
    chain = [int(m)]
    while len(chain) <= int(steps) and chain[-1] % 2 == 0:
        chain.append(chain[-1] // 2)
    return chain[::-1]


def solve_refined(design: Any, *, steps: int = WARM_STEPS, **solve_options: Any) -> ContinuousResult:
    """Solve a composed continuous design (``release="continuous"``, ``privacy="composed"``) warm-started
    from the coarser resolutions of :func:`resolution_chain` (module docstring).

    Each level is the design at that resolution (its :meth:`~optnoise.design.noise.NoiseDesign.spec`) solved
    with ``solve_options`` (e.g. ``time_limit``, per level), its search also starting from the level below
    refined. Returns the design's :class:`~optnoise.design.continuous_result.ContinuousResult` at its own
    resolution (``resolution=`` or :data:`~optnoise.design.continuous_composed.COMPOSED_RESOLUTION`), with the
    chain in its message; ``design`` itself is not changed.
    """
    if getattr(design, "release", None) != "continuous" or not is_composed(design):
        raise ValueError("solve_refined needs a NoiseDesign with release='continuous' and privacy='composed'")
    chain = resolution_chain(design.m_fixed or COMPOSED_RESOLUTION, steps)
    warm = None
    res: Any = None
    for m in chain:
        # built from its spec, not design.replace(): from_spec does not rebuild continuous designs (no neighbourhood)
        level = type(design)(**{**design.spec(), "resolution": design.sensitivity / m})
        level.warm_start = warm  # read by the cells' composed search (continuous._solve_composed)
        res = level.solve(**solve_options)
        warm = None if res.pmf is None else refine_cells(res.pmf)
    if len(chain) > 1:
        res.message = f"{res.message}; warm-started from m = {', '.join(map(str, chain[:-1]))}"
    return res
