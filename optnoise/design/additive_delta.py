"""``objective="delta"`` for the additive release: the least delta at ``eps`` with the distortion capped.

``NoiseDesign(release="additive", privacy="dp" | "pdp", eps=..., objective="delta", max_distortion=c)``
asks for the noise on Z (the family of :mod:`optnoise.design.additive`: ``{-L..L}`` plus staircase tails
of factor ``e^-eps``) with the least delta among those whose distortion (tails included) is at most
``c``. The model is the additive one with delta a column ``t`` of the privacy rows
(:func:`optnoise.design.rows.add_pair_rows`) and the distortion a row; its optimum is proven by the LP's
weak duality (``"dp"``) or the MILP's bound (``"pdp"``), **for the family at support** ``L``: ``support``
when given, else grown from the first support the pure-DP design tries (:func:`~optnoise.design.additive.
initial_support`) until the proven least delta at a wider support is within
:data:`~optnoise.design.additive_support.SUPPORT_RTOL` of it, relative
(:func:`~optnoise.design.additive_support.grow_support`; ``res.support_note`` says where it stopped and
why). The families are nested in ``L`` (the tail factor is ``e^-eps`` at every ``L``), so the least
delta only falls as ``L`` grows. The result reports the re-verified delta
(``achieved``), and ``bound`` and ``gap`` are on delta; the distortion must meet the cap by the
tolerance rule of :mod:`optnoise.engine.tolerance`.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from optnoise.design.additive_eval import AdditiveResult, normalised, notion_of, settled_result
from optnoise.design.additive_support import grow_support
from optnoise.design.settle import backend_solve, proof_dual
from optnoise.engine.progress import time_left
from optnoise.engine.validation import check_positive, shown

__all__ = ["setup_objective", "solve_delta"]

#: The objectives of the additive release.
OBJECTIVES = ("distortion", "delta")


def setup_objective(design: Any, kw: dict[str, Any]) -> None:
    """Validate ``objective`` and ``max_distortion``; ``delta`` is unset for ``objective="delta"``."""
    objective = kw["objective"]
    if objective not in OBJECTIVES:
        raise ValueError(
            f"objective must be one of {', '.join(OBJECTIVES)} for release='additive'; got {shown(objective)}"
        )
    design.objective, design.max_distortion = objective, None
    if objective == "distortion":
        if kw["max_distortion"] is not None:
            raise ValueError("max_distortion applies only with objective='delta'")
        return
    if not notion_of(design).takes_eps or notion_of(design).composed:  # one (eps, delta) of one release
        raise ValueError(
            f"objective='delta' needs privacy 'dp' or 'pdp' for release='additive'; got {shown(design.privacy)}"
        )
    if kw["delta"] is not None:
        raise ValueError("delta is what objective='delta' minimises: leave it unset and give max_distortion")
    if kw["max_distortion"] is None:
        raise ValueError("max_distortion is required with objective='delta' (the distortion cap, a float > 0)")
    design.max_distortion = check_positive("max_distortion", kw["max_distortion"])


def solve_delta(
    design: Any,
    build: Callable[[Any, int], Any],
    first_support: Callable[[Any], int],
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    verbose: bool,
    options: Any,
    concurrent: bool,
) -> AdditiveResult:
    """Solve at the given support, or from the first one grown until the boundary is inactive (module docstring;
    ``build`` and ``first_support`` are the additive model's)."""
    t0 = time.perf_counter()

    def at(L: int) -> AdditiveResult:
        return _delta_at(design, build, L, solver, time_left(time_limit, t0), mip_gap, verbose, options, concurrent)

    if design.support is not None:
        res = at(design.support)
        res.support_note = f"support L = {design.support} given: optimal among noises on -L..L with staircase tails"
        return res
    pure = copy.copy(design)
    pure.delta = 0.0
    L = first_support(pure)
    return grow_support(
        L,
        at(L),
        at,
        period=design.period,
        value=lambda r: r.achieved[design.privacy],  # the minimised delta, re-verified
        relative=True,
        time_limit=time_limit,
        t0=t0,
    )


def _delta_at(
    design: Any,
    build: Callable[[Any, int], Any],
    L: int,
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    verbose: bool,
    options: Any,
    concurrent: bool,
) -> AdditiveResult:
    """The least delta of the family at support ``L``: solved, re-verified, its status settled."""
    model, cols = build(design, L)
    out = backend_solve(model, solver, time_limit, mip_gap, verbose, options, concurrent=concurrent)
    support = np.arange(-L, L + 1)
    raw = None if out.x is None else out.x[cols.F[2 * design.period : 2 * design.period + 2 * L + 1]]
    if raw is None or not np.all(np.isfinite(raw)) or raw.max() <= 0:
        status = "error" if out.status == "optimal" else out.status
        return AdditiveResult(
            design, status, support, None, None, None, {}, {}, out.bound, out.gap, out.solve_time, out.solver,
            out.message, model_size=model.size,
        )  # fmt: skip
    bound = out.bound
    if not model.is_mip and out.status == "optimal":
        proof = proof_dual(model, out.x)
        if proof is not None and (bound is None or proof[0] > bound):
            bound = proof[0]
    res = settled_result(design, normalised(design, raw, L), L, out.status, bound, out.message)
    res.solve_time, res.backend, res.model_size = out.solve_time, out.solver, model.size
    return res
