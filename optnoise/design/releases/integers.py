"""``release="additive"``: ``q + eta`` on all integers (:mod:`optnoise.design.additive`) as a module release.

Its hooks take the finite half-width ``L`` of the noise besides the design: the given ``support``,
or the first one its search grows from (:func:`optnoise.design.additive.initial_support`).
"""

from __future__ import annotations

from typing import Any

from optnoise.design import additive
from optnoise.design.releases.base import ModuleRelease
from optnoise.engine.model import LinearModel

__all__ = ["AdditiveRelease"]


class AdditiveRelease(ModuleRelease):
    """The additive module, with ``L`` resolved for its ``model_size`` and ``build``."""

    def __init__(self) -> None:
        super().__init__(additive.ADDITIVE, additive, summary="q + eta on all integers, no n (counts and sums)")

    def model_size(self, design: Any, formulation: str = "hull") -> dict[str, int]:
        return additive.model_size(design, design.support or additive.initial_support(design))

    def build(self, design: Any, formulation: str = "hull") -> LinearModel:
        # at the given support, or the first one grown from
        return additive.build(design, design.support or additive.initial_support(design))[0]
