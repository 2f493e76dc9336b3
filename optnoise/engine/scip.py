"""The SCIP backend (pyscipopt; its wheels bundle SCIP), model built in memory."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from optnoise.engine.backend import Backend
from optnoise.engine.highs import refine_with_highs
from optnoise.engine.model import LinearModel
from optnoise.engine.output import SolverOutput, relative_gap
from optnoise.engine.tolerance import MIP_REL_GAP

__all__ = ["SCIP_MILP_CUTS", "scip_instance", "solve_scip", "BACKEND"]


#: SCIP's status strings mapped onto :data:`STATUSES` ("gaplimit" is the relative gap reached: optimal).
_SCIP_STATUS = {
    "optimal": "optimal",
    "gaplimit": "optimal",
    "infeasible": "infeasible",
    "inforunbd": "infeasible",
    "unbounded": "unbounded",
    "timelimit": "time_limit",
    "userinterrupt": "time_limit",
    "nodelimit": "time_limit",
    "totalnodelimit": "time_limit",
    "stallnodelimit": "time_limit",
    "sollimit": "time_limit",
    "bestsollimit": "time_limit",
    "memlimit": "error",
}


#: Whether SCIP separates cutting planes in MILPs. Off: every MILP optnoise builds is a ``pdp``
#: indicator model, whose bound SCIP's presolve and propagation raise while the separators' rounds
#: slowed the search (one-off runs, 2026-11-24, CPU-time limits, ``benchmarks/RESULTS.md``): pdp,
#: n = 64, ``|M| = 10``, error rate 24.8 s instead of 42.4 s to the proof; n = 100: MSE at eps 0.5,
#: delta 0.1 proved in 34 s instead of gap 6.6e-3 at 60 s, the error rates at eps 1 reach gaps of 5e-6
#: instead of 3e-4 to 5e-4, and no instance of the ``|M| = 10`` grid got slower.
SCIP_MILP_CUTS = False


def scip_instance(
    model: LinearModel,
    *,
    time_limit: float | None = None,
    mip_gap: float = MIP_REL_GAP,
    verbose: bool = False,
    cuts: bool | None = None,
) -> tuple[Any, list[Any]]:
    """A ``pyscipopt.Model`` holding ``model`` (built in memory) and its variables in column order.

    ``cuts`` switches SCIP's cutting-plane separators on or off; ``None`` (default) turns them
    off for MILPs (:data:`SCIP_MILP_CUTS`).

    SCIP keeps its own feasibility tolerances (primal 1e-6, dual 1e-7). At 1e-6 a solution
    can sit on the wrong side of a PDP indicator's boundary ``f(eta) = e^eps f(eta+mu)``, so
    every SCIP solution is refined by HiGHS at 1e-9 (:func:`refine_with_highs`: the integers
    fixed, the LP re-solved) and then re-verified; the gap is recomputed from the refined
    objective and SCIP's dual bound, which stays a valid bound (a looser tolerance only relaxes
    the problem). Tightening SCIP itself to 1e-9 stopped its proofs: pdp, n = 64, ``|M| = 10``,
    error rate: proved in 26-38 s at SCIP's defaults, gap 7e-6 after 60 s at 1e-9
    (``benchmarks/RESULTS.md``).
    """
    import pyscipopt
    from pyscipopt.scip import Expr, ExprCons, Term

    s = pyscipopt.Model()
    s.hideOutput(not verbose)
    s.setParam("limits/gap", float(mip_gap))
    s.setParam("limits/absgap", 1e-12)
    if time_limit is not None:
        s.setParam("limits/time", float(time_limit))
    if not (SCIP_MILP_CUTS if cuts is None else cuts) and model.is_mip:
        s.setSeparating(pyscipopt.SCIP_PARAMSETTING.OFF)
    lo = [None if not np.isfinite(v) else float(v) for v in model.col_lower]
    up = [None if not np.isfinite(v) else float(v) for v in model.col_upper]
    xs = [
        s.addVar(name=f"x{j}", vtype="I" if integ else "C", lb=lo[j], ub=up[j], obj=float(model.c[j]))
        for j, integ in enumerate(model.integrality.tolist())
    ]
    if model.offset:
        s.addObjoffset(float(model.offset))
    A = model.A.tocsr()
    rlo = [None if not np.isfinite(v) else float(v) for v in model.row_lower]
    rup = [None if not np.isfinite(v) else float(v) for v in model.row_upper]
    indptr, indices, data = A.indptr, A.indices.tolist(), A.data.tolist()
    for i in range(A.shape[0]):
        if rlo[i] is None and rup[i] is None:
            continue
        a, b = indptr[i], indptr[i + 1]
        expr = Expr({Term(xs[j]): v for j, v in zip(indices[a:b], data[a:b], strict=True)})
        s.addCons(ExprCons(expr, lhs=rlo[i], rhs=rup[i]), name=f"r{i}")
    return s, xs


def solve_scip(
    model: LinearModel,
    time_limit: float | None,
    mip_gap: float,
    verbose: bool,
    *,
    start: np.ndarray | None = None,
) -> SolverOutput:
    """SCIP on ``model``; ``start`` is a known solution handed over as SCIP's first incumbent."""
    t0 = time.perf_counter()
    s, xs = scip_instance(model, mip_gap=mip_gap, verbose=verbose)
    if time_limit is not None:
        # Building the model counts against the limit.
        s.setParam("limits/time", max(float(time_limit) - (time.perf_counter() - t0), 1e-3))
    if start is not None:
        sol = s.createSol()
        for v, val in zip(xs, start.tolist(), strict=True):
            s.setSolVal(sol, v, val)
        s.addSol(sol)  # SCIP checks it and drops it if it is not feasible at its tolerances
    s.optimize()
    dt = time.perf_counter() - t0
    raw = s.getStatus()
    status = _SCIP_STATUS.get(raw, "error")
    x = obj = bound = None
    if s.getNSols() > 0 and status in ("optimal", "time_limit"):
        sol = s.getBestSol()
        x = np.array([s.getSolVal(sol, v) for v in xs], dtype=float)
        obj = float(s.getSolObjVal(sol))
    if status in ("optimal", "time_limit"):
        dual = float(s.getDualbound())
        bound = dual if np.isfinite(dual) and abs(dual) < 1e20 else None
    if status == "optimal" and not model.is_mip:
        bound = obj
    gap = 0.0 if status == "optimal" and not model.is_mip else relative_gap(obj, bound)
    out = SolverOutput(status, x, obj, bound, gap, dt, "scip", message=raw)
    # SCIP works at its own 1e-6 feasibility (see scip_instance): its points are refined at 1e-9
    return replace(refine_with_highs(model, out), solve_time=time.perf_counter() - t0)


#: The SCIP backend (pyscipopt): in memory, MIP starts; its points refined by HiGHS in :func:`solve_scip`.
BACKEND = Backend(
    "scip",
    lambda model, req: solve_scip(model, req.time_limit, req.mip_gap, req.verbose, start=req.start),
    warm_start=True,
)
