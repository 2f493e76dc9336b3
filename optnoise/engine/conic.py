"""The cvxpy backend: LPs, conic models (Clarabel, SCS) and MILPs through cvxpy."""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from optnoise.engine.backend import Backend
from optnoise.engine.highs import absorb_highs_banner
from optnoise.engine.model import LinearModel, PowerCones
from optnoise.engine.output import SolverOutput

__all__ = ["solve_cvxpy", "BACKEND"]


def _cone_constraints(model: LinearModel, x: Any) -> list[Any]:
    """cvxpy constraints of the model's cones over the (all continuous) variable vector ``x``."""
    import cvxpy as cp

    cons: list[Any] = []
    for cone in model.cones:
        if isinstance(cone, PowerCones):
            cons.append(cp.PowCone3D(x[cone.x], x[cone.y], cp.multiply(cone.scale, x[cone.z]), cone.alpha))
        else:
            cons.append(cp.rel_entr(x[cone.x], x[cone.y]) <= x[cone.t])
    return cons


def solve_cvxpy(
    model: LinearModel, time_limit: float | None, verbose: bool, conic_solver: str = "clarabel"
) -> SolverOutput:
    import cvxpy as cp

    integ = model.integrality
    A = model.A.tocsc()
    parts, blocks = [], []
    for mask, is_int in ((~integ, False), (integ, True)):
        idx = np.nonzero(mask)[0]
        if idx.size:
            v = cp.Variable(idx.size, integer=is_int)
            parts.append((idx, v))
            blocks.append(A[:, idx] @ v)
    ax = sum(blocks[1:], blocks[0])
    cons = []
    if model.is_conic:
        if model.is_mip:
            raise ValueError("a conic model must be continuous (no integer variables)")
        cons += _cone_constraints(model, parts[0][1])
    lo_rows = np.isfinite(model.row_lower)
    up_rows = np.isfinite(model.row_upper)
    if np.any(lo_rows):
        cons.append(ax[np.nonzero(lo_rows)[0]] >= model.row_lower[lo_rows])
    if np.any(up_rows):
        cons.append(ax[np.nonzero(up_rows)[0]] <= model.row_upper[up_rows])
    obj = 0
    for idx, v in parts:
        lo, up = model.col_lower[idx], model.col_upper[idx]
        if np.any(np.isfinite(lo)):
            k = np.nonzero(np.isfinite(lo))[0]
            cons.append(v[k] >= lo[k])
        if np.any(np.isfinite(up)):
            k = np.nonzero(np.isfinite(up))[0]
            cons.append(v[k] <= up[k])
        obj = obj + model.c[idx] @ v
    prob = cp.Problem(cp.Minimize(obj + model.offset), cons)
    kwargs: dict[str, Any] = {"verbose": verbose}
    if model.is_mip:
        kwargs["solver"] = cp.HIGHS if "HIGHS" in cp.installed_solvers() else cp.SCIPY
        if kwargs["solver"] == cp.HIGHS:
            absorb_highs_banner()
        if time_limit is not None and kwargs["solver"] == cp.HIGHS:
            kwargs["time_limit"] = float(time_limit)
    elif conic_solver == "scs":
        kwargs["solver"] = cp.SCS
        if time_limit is not None:
            kwargs["time_limit_secs"] = float(time_limit)
        kwargs.update(eps_abs=1e-9, eps_rel=1e-9, max_iters=200_000)
    else:
        kwargs["solver"] = cp.CLARABEL
        if time_limit is not None:
            kwargs["time_limit"] = float(time_limit)
        kwargs.update(tol_feas=1e-10, tol_gap_abs=1e-10, tol_gap_rel=1e-10)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            # "Solution may be inaccurate": the status says so ("optimal_inaccurate" in the message), and
            # callers re-verify every returned point
            warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
            prob.solve(**kwargs)
    except cp.error.SolverError as exc:
        return SolverOutput("error", None, None, None, None, time.perf_counter() - t0, "cvxpy", message=str(exc))
    dt = time.perf_counter() - t0
    st = prob.status
    if st == cp.OPTIMAL:
        status = "optimal"
    elif st == cp.OPTIMAL_INACCURATE:
        # the solver stopped without meeting its own accuracy: a point, never a proven optimum
        status = "feasible"
    elif st in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        status = "infeasible"
    elif st in (cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
        status = "unbounded"
    elif st == getattr(cp, "USER_LIMIT", "user_limit"):
        status = "time_limit"
    else:
        status = "error"
    x = None
    if all(v.value is not None for _, v in parts) and status in ("optimal", "feasible", "time_limit"):
        x = np.zeros(model.shape[1])
        for idx, v in parts:
            x[idx] = np.asarray(v.value, dtype=float).ravel()
    objv = float(model.c @ x + model.offset) if x is not None else None
    return SolverOutput(
        status,
        x,
        objv,
        objv if status == "optimal" else None,
        0.0 if status == "optimal" else None,
        dt,
        "cvxpy",
        message=str(st),
    )


#: The cvxpy backend: LPs and conic models (Clarabel or SCS), MILPs through cvxpy's HiGHS.
BACKEND = Backend(
    "cvxpy",
    lambda model, req: solve_cvxpy(model, req.time_limit, req.verbose, req.conic_solver),
    cones=True,
    exact_points=False,  # interior-point accuracy (~1e-8): an LP/MILP point is refined by HiGHS
)
