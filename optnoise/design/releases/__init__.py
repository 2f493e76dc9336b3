"""The releases as objects, one registry: ``modulo``, ``clamp``, ``additive``, ``grid`` and ``continuous``.

See :mod:`optnoise.design.releases.base` for the interface and how to add a release (one module
of hook functions and one :func:`register_release` line below).
"""

from optnoise.design import continuous
from optnoise.design.releases.base import (
    RELEASE_REGISTRY,
    ModuleRelease,
    Release,
    get_release,
    register_release,
    release_field_names,
    release_names,
    unregister_release,
)
from optnoise.design.releases.clamped import ClampRelease
from optnoise.design.releases.integers import AdditiveRelease, GridRelease
from optnoise.design.releases.lattice import LatticeRelease
from optnoise.design.releases.modulo import ModuloRelease

__all__ = [
    "Release",
    "ModuleRelease",
    "LatticeRelease",
    "ModuloRelease",
    "ClampRelease",
    "AdditiveRelease",
    "GridRelease",
    "RELEASE_REGISTRY",
    "register_release",
    "unregister_release",
    "get_release",
    "release_names",
    "release_field_names",
]

register_release(ModuloRelease())
register_release(ClampRelease())
register_release(AdditiveRelease())
register_release(GridRelease())
register_release(ModuleRelease(continuous.CONTINUOUS, continuous, summary="q + X for a real query, over all densities"))
