"""Releases of an integer noise on Z as module releases: ``release="additive"`` (``q + eta`` on all
integers, :mod:`optnoise.design.additive`) and ``release="grid"`` (a real query rounded to a grid,
:mod:`optnoise.design.grid`, whose noise is an additive one in units of the grid's width).

Their hooks take the finite half-width ``L`` of the noise besides the design: the given ``support``,
or the first one its search grows from (:func:`optnoise.design.additive.initial_support`).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from optnoise.design import additive, grid
from optnoise.design.releases.base import ModuleRelease
from optnoise.engine.model import LinearModel

__all__ = ["AdditiveRelease", "GridRelease"]


class AdditiveRelease(ModuleRelease):
    """The additive module, with ``L`` resolved for its ``model_size`` and ``build``."""

    def __init__(
        self,
        name: str = additive.ADDITIVE,
        module: ModuleType = additive,
        summary: str = "q + eta on all integers, no n (counts and sums)",
    ) -> None:
        super().__init__(name, module, summary=summary)

    def model_size(self, design: Any, formulation: str = "hull") -> dict[str, int]:
        return dict(self.module.model_size(design, design.support or additive.initial_support(design)))

    def build(self, design: Any, formulation: str = "hull") -> LinearModel:
        # at the given support, or the first one grown from
        return self.module.build(design, design.support or additive.initial_support(design))[0]


class GridRelease(AdditiveRelease):
    """The grid module: an additive design on the shifts 1..m, reported on the reals."""

    def __init__(self) -> None:
        super().__init__(
            grid.GRID, grid, "w (round(q/w) + eta): a real query of --sensitivity on a grid of --resolution"
        )
