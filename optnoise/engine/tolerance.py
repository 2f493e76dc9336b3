"""Solver tolerances and the gap a status "optimal" needs: the engine's side of every status.

Backends are run with a primal/MIP feasibility tolerance of :data:`FEASIBILITY_TOL` and a
relative MIP gap of :data:`MIP_REL_GAP`; a solution counts as optimal only with a proven gap
within :data:`OPTIMAL_GAP` (:func:`settle_gap`, the one place of that rule). What a returned
point must meet to keep its status, the floating-point re-verification rule, is a privacy
question and lives in :mod:`optnoise.privacy.verification`; the engine knows nothing of privacy.

Tolerances passed by users are bounded (:func:`check_tol`).
"""

from __future__ import annotations

import math
from typing import Any

from optnoise.engine.shown import shown

__all__ = ["OPTIMAL_GAP", "FEASIBILITY_TOL", "MIP_REL_GAP", "check_tol", "proven_optimal", "settle_gap"]

#: Largest relative gap between a result's objective and a proven lower bound for the status "optimal":
#: a solver's proof gap (1e-9 by default) plus the repair of a solution that was right up to tolerance.
OPTIMAL_GAP = 1e-6

#: Primal/MIP feasibility tolerance every backend is run with (HiGHS, SCIP after its HiGHS refinement).
FEASIBILITY_TOL = 1e-9
#: Default relative MIP gap: a MILP solved to it is proven within it.
MIP_REL_GAP = 1e-9


def check_tol(name: str, value: Any, *, maximum: float | None = None) -> float:
    """A tolerance: a finite real number in ``[0, maximum]`` (NaN, infinities, bools and strings are refused).

    User-facing tolerances pass ``maximum`` (:data:`optnoise.privacy.verification.MAX_TOL`): a large
    one would let a leak pass.
    """
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise ValueError(f"{name} must be a finite number >= 0; got {shown(value)}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number >= 0; got {shown(value)}") from None
    if not math.isfinite(out) or out < 0:
        raise ValueError(f"{name} must be a finite number >= 0; got {shown(value)}")
    if maximum is not None and out > maximum:
        raise ValueError(
            f"{name} must be at most {maximum:g} (a larger tolerance could hide a leak); got {shown(value)}"
        )
    return out


def proven_optimal(gap: float | None) -> bool:
    """The rule of the status ``"optimal"``: a relative gap to a valid lower bound within :data:`OPTIMAL_GAP`."""
    return gap is not None and gap <= OPTIMAL_GAP


def settle_gap(status: str, gap: float | None) -> tuple[str, str]:
    """``"optimal"`` only with a proven gap within :data:`OPTIMAL_GAP` (:func:`proven_optimal`): otherwise
    ``"feasible"``, and why. A backend's optimum without a gap (an LP whose bound the design layer judges) is kept."""
    if status == "optimal" and gap is not None and not proven_optimal(gap):
        return "feasible", f"the proven gap {gap:.3g} exceeds {OPTIMAL_GAP:g}: feasible, not a proven optimum"
    return status, ""
