"""``privacy="composed"`` for the real-valued releases: one noise whose k-fold composition is (eps, delta)-DP.

Both objectives of :mod:`optnoise.design.composed`: ``"distortion"`` (least distortion at a composed
(eps, delta)) and ``"epsilon"`` (least composed eps at ``delta`` under ``max_distortion``), the
accounting that of the integer designs (optnoise's pessimistic PLD at ``discretization``).

Why the integer design over cells is a valid mechanism (the upper bound). Cells of width
``w = Delta / m`` are ``[(k - 1/2) w, (k + 1/2) w)``. Let ``X`` have a density constant on each cell,
with cell masses ``f``. For a real shift ``s = (j + theta) w`` (``j >= 0`` an integer, ``0 <= theta < 1``),
split every output cell ``k`` of ``s + X`` into its part of length ``(1 - theta) w``, where ``s + X`` has the
density of cell ``k - j`` of ``X``, and its part of length ``theta w``, where it has that of cell
``k - j - 1``. Reveal to the adversary which part the output fell in (a richer release: what it
gives is a post-processing of it): the part is chosen with probabilities ``1 - theta`` and ``theta``
*whatever the input*, and given it the pair of outputs is the integer pair of shift ``j`` or ``j + 1``. So
the release at ``s`` is a revealed-index mixture of the integer pairs of ``j`` and ``j + 1`` and its hockey
stick, at every eps of either sign, is ``(1 - theta) H_j + theta H_(j+1)`` (``H_0 = 0``), at most the largest
over the integer shifts ``1..m`` (negative shifts alike). optnoise's accounting composes one *dominating
pair* of the neighbourhood ``bd(m)``, the pair whose privacy profile is that maximum
(:func:`~optnoise.privacy.accounting.dominating_pld`); a pair whose profile is below it at every eps is
dominated by it, and composing dominating pairs bounds every adaptive composition of the dominated ones
(the k-fold curve for real shifts ``|s| <= Delta``, whatever the mixture indices, is at most that of the
integer shifts ``1..m``). So the additive composed design on ``Neighborhood.bd(m)``
with each cell charged its average cost (:meth:`~optnoise.design.continuous_cost.RealCost.average`,
the exact cost of the piecewise-constant density) is a mechanism meeting the composed target, at the
cost it reports (:mod:`optnoise.design.additive_composed`; its family and search are those of that
module). The grid release is that integer noise on the rounded query: rounding keeps the integer
sensitivity at ``m`` exactly (:mod:`optnoise.design.grid`), so the same design applies unchanged.

Why the bound holds for every density (the lower bound). For any noise density ``p`` meeting the
composed target for every real shift ``|s| <= Delta``, take the shifts ``s = j w``, ``j = +-1..+-m``:
the cell index of ``q + X`` is the cell index of ``X`` plus ``j`` exactly, so releasing cell indices
is a post-processing of each release, and the cell masses ``q_k`` of ``p`` are an integer noise whose
composed release with the shifts ``+-1..+-m`` meets the target. Its cost is at least
``sum_k q_k c_low(k)`` with ``c_low(k) = min_{|x| >= (|k| - 1/2)^+ w} c(x)``
(:meth:`~optnoise.design.continuous_cost.RealCost.far`, every point of cell ``k`` is that far from 0),
which is nondecreasing in ``|k|``. So the composed bounds of the additive release with cost ``c_low``
bound every density: those of the release wrapped onto a ring of ``N`` values
(:func:`wrapped_cells`; wrapping is a post-processing and lowers a cost nondecreasing in ``|k|``, the
argument of :mod:`optnoise.design.additive_composed`), proved by
:func:`~optnoise.design.composed_bounds.bound_and_method` (``"distortion"``) or
:func:`~optnoise.design.composed_bounds.eps_bound_and_method` (``"epsilon"``). For ``"distortion"`` the
single-release lower bound of :mod:`optnoise.design.continuous_bound` at the same (eps, delta) is valid
too (one release is a post-processing of the composition) and the larger is kept. A user cost that is
not nondecreasing in ``|x|`` has no ``c_low``: no bound.

Resolution. ``resolution=w`` fixes ``m``. Otherwise ``m`` runs ``COMPOSED_RESOLUTION = 1, 2, 4, ...`` up to
:data:`~optnoise.design.continuous.MAX_AUTO_RESOLUTION_COMPOSED` (:func:`~optnoise.design.continuous._solve_composed`):
every resolution's bound holds over all densities, so the largest is kept, and the best mechanism over
them. The bracket of a composed design is set by its search and its bound more than by ``w`` (the ring
bound rises slowly with ``m``; the mechanism barely moves and can even be worse at a finer grid, whose
centred cells do not nest the coarser ones), so the refinement stops as soon as a doubling improves the
mechanism by less than :data:`~optnoise.design.continuous.COMPOSED_STALL` (relative), and the message says
so; also at the requested ``gap`` (status ``"optimal"``) and at ``time_limit``. The composed search is
slow at large ``k``: ``resolution=`` or ``time_limit=`` bound the work.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from optnoise.design.additive_composed import RING_CELLS
from optnoise.design.composed import check_composed_args
from optnoise.design.composed_bounds import bound_and_method, eps_bound_and_method
from optnoise.engine.validation import MAX_EPS, MAX_EPS_REASON, check_eps
from optnoise.privacy.neighborhood import Neighborhood

__all__ = ["COMPOSED_RESOLUTION", "cell_lower_costs", "composed_bound", "setup_composed", "wrapped_cells"]

#: Default ``m`` of a composed continuous design (cells per unit of sensitivity): module docstring.
COMPOSED_RESOLUTION = 1


def setup_composed(design: Any, kw: dict[str, Any]) -> None:
    """Validate and store the composed fields of a continuous design (the checks of the integer designs)."""
    out = check_composed_args(
        "composed",
        kw["compositions"],
        kw["discretization"],
        kw["objective"],
        kw["eps"],
        kw["delta"],
        kw["max_distortion"],
    )
    if kw.get("profile") is not None:
        raise ValueError("profile does not apply with privacy='composed' (give eps and delta, or max_distortion)")
    design.compositions, design.discretization = out["compositions"], out["discretization"]
    design.delta, design.objective, design.max_distortion = out["delta"], kw["objective"], out["max_distortion"]
    design.eps = None if design.objective == "epsilon" else check_eps(kw["eps"], maximum=MAX_EPS, why=MAX_EPS_REASON)
    design.profile = None


def composed_fields(design: Any) -> dict[str, Any]:
    """The keywords of the integer design over cells that carry the composed target."""
    return {
        "privacy": "composed",
        "compositions": design.compositions,
        "discretization": design.discretization,
        "objective": design.objective,
        "max_distortion": design.max_distortion,
        "eps": design.eps,
        "delta": design.delta,
        "profile": None,
    }


def cell_lower_costs(cost: Any, w: float, k: np.ndarray) -> np.ndarray | None:
    """``c_low(k)``: the least cost of an error at least ``(|k| - 1/2)^+ w`` away from 0 (``None``: no such bound)."""
    reach = np.maximum(np.abs(np.asarray(k, dtype=np.int64)) - 0.5, 0.0) * w
    out = [cost.far(float(r)) for r in np.unique(reach)]
    if any(v is None for v in out):
        return None
    table = dict(zip(np.unique(reach).tolist(), out, strict=True))
    return np.array([table[r] for r in reach.tolist()], dtype=float)


def wrapped_cells(design: Any, m: int, L: int) -> Any:
    """The modulo composed design on a ring of ``N`` cells with the costs ``c_low`` (``None``: no ``c_low``).

    ``N = min(RING_CELLS, max(2L + 1, 2 k m + 3))``, as :func:`~optnoise.design.additive_composed.wrapped_design`
    lays the integer release (``L`` the upper bound's finite part). Built as ``type(design)(...)``: the design
    module imports this one.
    """
    k = int(design.compositions)
    N = min(RING_CELLS, max(2 * L + 1, 2 * k * m + 3))
    z = np.arange(N)
    low = cell_lower_costs(design.cost_of, design.sensitivity / m, np.where(z > N // 2, z - N, z))
    if low is None:
        return None
    kw = composed_fields(design)
    kw.pop("profile")
    return type(design)(n=N - 1, neighborhood=Neighborhood.bd(m), metric=low, **kw)


def composed_bound(
    design: Any, m: int, L: int, upper: float, deadline: float | None, options: Any
) -> tuple[float | None, str]:
    """The ring's proven bound (module docstring) on the distortion, or on the eps under the cap, and its method."""
    ring = wrapped_cells(design, m, L)
    if ring is None:
        return None, ""
    if design.objective == "epsilon":
        return eps_bound_and_method(ring, float(design.max_distortion), upper, "highs", deadline, options)
    return bound_and_method(ring, "highs", upper=upper, deadline=deadline, options=options)


def best_of(a: tuple[float | None, str], b: tuple[float | None, str]) -> tuple[float | None, str]:
    """The larger of two proven bounds with its method."""
    if a[0] is None or (b[0] is not None and b[0] > a[0]):
        return b
    return a


def finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)
