"""CBC, Gurobi and CPLEX through PuLP."""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from optnoise.engine.backend import Backend
from optnoise.engine.model import LinearModel
from optnoise.engine.output import SolverOutput

__all__ = ["PULP_SOLVERS", "pulp_available", "solve_pulp", "BACKENDS"]

#: PuLP's solver classes behind each of optnoise's PuLP backends, in order of preference.
PULP_SOLVERS = {
    "cbc": ("PULP_CBC_CMD", "COIN_CMD"),
    "gurobi": ("GUROBI", "GUROBI_CMD"),
    "cplex": ("CPLEX_PY", "CPLEX_CMD"),
}


def pulp_available() -> list[str]:
    """The PuLP backends (of :data:`PULP_SOLVERS`) that this machine can run."""
    import pulp

    have = set(pulp.listSolvers(onlyAvailable=True))
    return [name for name, classes in PULP_SOLVERS.items() if have & set(classes)]


def _pulp_solver(name: str, time_limit: float | None, mip_gap: float, verbose: bool) -> Any:
    import pulp

    kw: dict[str, Any] = {"msg": bool(verbose)}
    if time_limit is not None:
        kw["timeLimit"] = float(time_limit)
    kw["gapRel"] = float(mip_gap)
    candidates = PULP_SOLVERS[name]
    available = set(pulp.listSolvers(onlyAvailable=True))
    for cls in candidates:
        if cls in available:
            return getattr(pulp, cls)(**kw)
    raise ValueError(
        f"solver {name!r} is not available on this machine (PuLP sees: {', '.join(sorted(available)) or 'none'}); "
        f"PuLP solvers available here: {', '.join(pulp_available()) or 'none'}"
    )


def solve_pulp(model: LinearModel, name: str, time_limit: float | None, mip_gap: float, verbose: bool) -> SolverOutput:
    # PuLP 3.x warns that its bundled CBC and direct LpVariable construction go away in 4.0;
    # both still work, and the bundled CBC keeps the install small.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return _solve_pulp_inner(model, name, time_limit, mip_gap, verbose)


def _solve_pulp_inner(
    model: LinearModel, name: str, time_limit: float | None, mip_gap: float, verbose: bool
) -> SolverOutput:
    import pulp

    solver = _pulp_solver(name, time_limit, mip_gap, verbose)
    prob = pulp.LpProblem("optnoise", pulp.LpMinimize)
    xs = []
    for j in range(model.shape[1]):
        lo = model.col_lower[j] if np.isfinite(model.col_lower[j]) else None
        up = model.col_upper[j] if np.isfinite(model.col_upper[j]) else None
        cat = pulp.LpInteger if model.integrality[j] else pulp.LpContinuous
        xs.append(pulp.LpVariable(f"x{j}", lowBound=lo, upBound=up, cat=cat))
    prob += pulp.lpSum(float(cj) * xs[j] for j, cj in enumerate(model.c) if cj != 0) + model.offset
    A = model.A.tocsr()
    for i in range(A.shape[0]):
        sl = slice(A.indptr[i], A.indptr[i + 1])
        expr = pulp.LpAffineExpression([(xs[j], float(v)) for j, v in zip(A.indices[sl], A.data[sl], strict=True)])
        lo, up = model.row_lower[i], model.row_upper[i]
        if np.isfinite(lo) and np.isfinite(up) and lo == up:
            prob += expr == float(lo)
            continue
        if np.isfinite(lo):
            prob += expr >= float(lo)
        if np.isfinite(up):
            prob += expr <= float(up)
    t0 = time.perf_counter()
    prob.solve(solver)
    dt = time.perf_counter() - t0
    raw = pulp.LpStatus.get(prob.status, str(prob.status))
    sol = getattr(prob, "sol_status", None)
    x = np.array([v.varValue if v.varValue is not None else np.nan for v in xs], dtype=float)
    has_x = bool(np.all(np.isfinite(x))) and sol in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
    if prob.status == pulp.LpStatusOptimal and sol == pulp.LpSolutionOptimal:
        status = "optimal"
    elif prob.status == pulp.LpStatusInfeasible or sol == pulp.LpSolutionInfeasible:
        status = "infeasible"
    elif prob.status == pulp.LpStatusUnbounded:
        status = "unbounded"
    elif sol == pulp.LpSolutionIntegerFeasible or prob.status == pulp.LpStatusNotSolved:
        status = "time_limit"
    else:
        status = "error"
    obj = float(model.c @ x + model.offset) if has_x else None
    return SolverOutput(
        status,
        x if has_x else None,
        obj,
        obj if status == "optimal" else None,
        0.0 if status == "optimal" else None,
        dt,
        name,
        message=raw,
    )


def _backend(name: str) -> Backend:
    return Backend(
        name,
        lambda model, req: solve_pulp(model, name, req.time_limit, req.mip_gap, req.verbose),
        exact_points=False,  # read back from a solution file with ~8 digits: refined by HiGHS
        available=lambda: name in pulp_available(),
    )


#: One backend per PuLP solver of :data:`PULP_SOLVERS` (CBC ships with PuLP; Gurobi and CPLEX when licensed).
BACKENDS = tuple(_backend(name) for name in PULP_SOLVERS)
