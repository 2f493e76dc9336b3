"""Thin backends that solve a :class:`~optnoise.model.LinearModel`.

``solve_model(model, solver=...)`` is the single entry point:

``"highs"``
    HiGHS through highspy, model passed in memory (the default).
``"cbc"``
    COIN-OR CBC through PuLP (ships with PuLP).
``"gurobi"`` / ``"cplex"``
    Through PuLP, when the user has them installed and licensed.
``"cvxpy"``
    cvxpy, for the LP variants and convex extensions (Clarabel for LPs and
    conic models, SCS on request, HiGHS through cvxpy for MILPs).

Whatever the backend, the outcome is a :class:`SolverOutput` whose ``status``
is one of :data:`STATUSES`; infeasibility and time limits are statuses, never
exceptions.

Tolerances. HiGHS is run with primal/MIP feasibility tolerances of ``1e-9``
and a relative MIP gap of ``1e-9``: a returned point meets every row to about
``1e-9`` absolute, and a MILP "optimal" is optimal to that gap. Callers that
need an exact guarantee must re-verify (see :mod:`optnoise.privacy`) or certify
(:mod:`optnoise.certify`).
"""

from __future__ import annotations

import os
import sys
import threading
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ._validation import check_choice, check_positive
from .model import LinearModel, PowerCones

__all__ = [
    "SOLVERS",
    "CONIC_SOLVERS",
    "STATUSES",
    "SolverOutput",
    "solve_model",
    "available_solvers",
    "highs_instance",
    "polish_with_highs",
    "check_highs_options",
    "new_highs",
    "absorb_highs_banner",
]

#: Guards the one-time banner absorption of :func:`absorb_highs_banner` across threads.
_BANNER_LOCK = threading.Lock()
_banner_absorbed = False

#: Solver names accepted by :func:`solve_model`.
SOLVERS = ("highs", "cbc", "gurobi", "cplex", "cvxpy")
#: cvxpy solvers of continuous (LP or conic) models with ``solver="cvxpy"``.
CONIC_SOLVERS = ("clarabel", "scs")
#: Possible values of :attr:`SolverOutput.status`.
STATUSES = ("optimal", "infeasible", "unbounded", "time_limit", "error")

FEASIBILITY_TOL = 1e-9
MIP_REL_GAP = 1e-9


@dataclass
class SolverOutput:
    """What a backend returns.

    Attributes
    ----------
    status : str
        ``"optimal"``, ``"infeasible"``, ``"unbounded"``, ``"time_limit"`` or ``"error"``.
    x : ndarray or None
        The solution (the incumbent at a time limit), ``None`` when there is none.
    objective : float or None
        Objective value of ``x`` (including the model offset).
    bound : float or None
        Best proven lower bound (MILP); equals ``objective`` at optimality.
    gap : float or None
        Relative gap ``(objective - bound) / max(|objective|, 1e-10)``; 0 for LPs.
    solve_time : float
        Wall-clock seconds spent in the backend.
    solver : str
        Backend name.
    message : str
        Backend-specific detail (e.g. the raw status).
    """

    status: str
    x: np.ndarray | None
    objective: float | None
    bound: float | None
    gap: float | None
    solve_time: float
    solver: str
    message: str = ""
    info: dict[str, Any] = field(default_factory=dict)


def _gap(obj: float | None, bound: float | None) -> float | None:
    if obj is None or bound is None or not np.isfinite(bound):
        return None
    return max(0.0, (obj - bound) / max(abs(obj), 1e-10))


# --------------------------------------------------------------------------
# HiGHS
# --------------------------------------------------------------------------


def write_mps(model: LinearModel, path: str | os.PathLike[str]) -> Path:
    """Write ``model`` in (free) MPS format through HiGHS' writer, for any external solver."""
    path = Path(path)
    if path.suffix.lower() != ".mps":
        raise ValueError(f"path must end in .mps; got {str(path)!r}")
    if model.is_conic:
        raise ValueError("a conic model (power/exponential cones) cannot be written as MPS")
    h = highs_instance(model)
    status = h.writeModel(str(path))
    if str(status).endswith("kError"):
        raise OSError(f"could not write MPS file {path}")
    return path


def highs_instance(
    model: LinearModel,
    *,
    time_limit: float | None = None,
    mip_gap: float = MIP_REL_GAP,
    verbose: bool = False,
    threads: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> Any:
    """A ``highspy.Highs`` object holding ``model`` with optnoise's options.

    ``options`` are raw HiGHS options (``{"mip_allow_restart": False, "random_seed": 7}``)
    applied last; an unknown name or a value of the wrong type is a ``ValueError``.
    """
    import highspy

    A = model.A.tocsc()
    lp = highspy.HighsLp()
    lp.num_col_ = int(A.shape[1])
    lp.num_row_ = int(A.shape[0])
    lp.col_cost_ = np.asarray(model.c, dtype=float)
    lp.col_lower_ = np.asarray(model.col_lower, dtype=float)
    lp.col_upper_ = np.asarray(model.col_upper, dtype=float)
    lp.row_lower_ = np.asarray(model.row_lower, dtype=float)
    lp.row_upper_ = np.asarray(model.row_upper, dtype=float)
    lp.offset_ = float(model.offset)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data.astype(float)
    if model.is_mip:
        lp.integrality_ = [
            highspy.HighsVarType.kInteger if b else highspy.HighsVarType.kContinuous for b in model.integrality
        ]
    h = new_highs(verbose=verbose)
    h.setOptionValue("primal_feasibility_tolerance", FEASIBILITY_TOL)
    h.setOptionValue("dual_feasibility_tolerance", FEASIBILITY_TOL)
    h.setOptionValue("mip_feasibility_tolerance", FEASIBILITY_TOL)
    h.setOptionValue("mip_rel_gap", float(mip_gap))
    h.setOptionValue("mip_abs_gap", 1e-12)
    if threads is not None:
        h.setOptionValue("threads", int(threads))
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    for name, value in (options or {}).items():
        _set_highs_option(h, name, value)
    h.passModel(lp)
    return h


def absorb_highs_banner() -> None:
    """Build this process's first ``highspy.Highs`` with stdout on the null device.

    HiGHS prints its banner on the process's C-level stdout once per process, from
    the first constructor and before any option can be set, whichever backend builds
    it (optnoise directly, or cvxpy for MILPs). On stdout it would corrupt
    machine-readable output such as ``optnoise solve --format json``.
    """
    global _banner_absorbed
    # Under the lock, so that no thread saves a descriptor another thread has just redirected.
    with _BANNER_LOCK:
        if _banner_absorbed:
            return
        import highspy

        sys.stdout.flush()
        saved = os.dup(1)
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.close(null)
            highspy.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        _banner_absorbed = True


def new_highs(*, verbose: bool = False) -> Any:
    """A ``highspy.Highs`` instance whose console output is off unless ``verbose``."""
    import highspy

    absorb_highs_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(verbose))
    return h


def check_highs_options(options: Mapping[str, Any] | None, solver: str = "highs") -> None:
    """Raise ``ValueError`` unless ``options`` are valid HiGHS options for ``solver``."""
    if not options:
        return
    if solver != "highs":
        raise ValueError(f"options are HiGHS options; use them with solver 'highs', not {solver!r}")
    h = new_highs()
    for name, value in options.items():
        _set_highs_option(h, name, value)


def _set_highs_option(h: Any, name: str, value: Any) -> None:
    import highspy

    status, current = h.getOptionValue(str(name))
    if status != highspy.HighsStatus.kOk:
        raise ValueError(f"options: {name!r} is not a HiGHS option (see HiGHS' option list)")
    kind = type(current)
    if kind is bool and not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"options: HiGHS option {name!r} must be True or False; got {value!r}")
    try:
        if kind is int and float(value) != int(float(value)):
            raise ValueError
        value = kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"options: HiGHS option {name!r} must be of type {kind.__name__}; got {value!r}") from None
    if h.setOptionValue(str(name), value) != highspy.HighsStatus.kOk:
        raise ValueError(f"options: HiGHS refused {name}={value!r} (out of its allowed range)")


def _solve_highs(
    model: LinearModel,
    time_limit: float | None,
    mip_gap: float,
    verbose: bool,
    options: Mapping[str, Any] | None = None,
    start: np.ndarray | None = None,
) -> SolverOutput:
    import highspy

    h = highs_instance(model, time_limit=time_limit, mip_gap=mip_gap, verbose=verbose, options=options)
    if start is not None and model.is_mip:
        sol = highspy.HighsSolution()
        sol.col_value = np.asarray(start, dtype=float).tolist()
        sol.value_valid = True
        h.setSolution(sol)
    t0 = time.perf_counter()
    h.run()
    dt = time.perf_counter() - t0
    ms = h.getModelStatus()
    info = h.getInfo()
    S = highspy.HighsModelStatus
    has_x = info.primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
    x = np.asarray(h.getSolution().col_value, dtype=float) if has_x else None
    obj = float(info.objective_function_value) if has_x else None
    bound = float(info.mip_dual_bound) if model.is_mip else obj
    if ms == S.kOptimal:
        status = "optimal"
    elif ms in (S.kInfeasible, S.kUnboundedOrInfeasible):
        status = "infeasible"
    elif ms == S.kUnbounded:
        status = "unbounded"
    elif ms in (S.kTimeLimit, S.kIterationLimit, S.kSolutionLimit, S.kInterrupt):
        status = "time_limit"
    else:
        status = "error"
    gap = 0.0 if status == "optimal" and not model.is_mip else _gap(obj, bound)
    return SolverOutput(status, x, obj, bound, gap, dt, "highs", message=h.modelStatusToString(ms))


# --------------------------------------------------------------------------
# PuLP (CBC, Gurobi, CPLEX)
# --------------------------------------------------------------------------


def _pulp_solver(name: str, time_limit: float | None, mip_gap: float, verbose: bool) -> Any:
    import pulp

    kw: dict[str, Any] = {"msg": bool(verbose)}
    if time_limit is not None:
        kw["timeLimit"] = float(time_limit)
    kw["gapRel"] = float(mip_gap)
    candidates = {
        "cbc": ["PULP_CBC_CMD", "COIN_CMD"],
        "gurobi": ["GUROBI", "GUROBI_CMD"],
        "cplex": ["CPLEX_PY", "CPLEX_CMD"],
    }[name]
    available = set(pulp.listSolvers(onlyAvailable=True))
    for cls in candidates:
        if cls in available:
            return getattr(pulp, cls)(**kw)
    raise ValueError(
        f"solver {name!r} is not available on this machine (PuLP sees: {', '.join(sorted(available)) or 'none'}); "
        f"solver must be one of {', '.join(available_solvers())}"
    )


def _solve_pulp(model: LinearModel, name: str, time_limit: float | None, mip_gap: float, verbose: bool) -> SolverOutput:
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


# --------------------------------------------------------------------------
# cvxpy
# --------------------------------------------------------------------------


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


def _solve_cvxpy(
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
    if st in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        status = "optimal"
    elif st in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        status = "infeasible"
    elif st in (cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
        status = "unbounded"
    elif st == getattr(cp, "USER_LIMIT", "user_limit"):
        status = "time_limit"
    else:
        status = "error"
    x = None
    if all(v.value is not None for _, v in parts) and status in ("optimal", "time_limit"):
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


# --------------------------------------------------------------------------


def available_solvers() -> list[str]:
    """Solver names usable on this machine."""
    import pulp

    have = set(pulp.listSolvers(onlyAvailable=True))
    out = ["highs"]
    if have & {"PULP_CBC_CMD", "COIN_CMD"}:
        out.append("cbc")
    if have & {"GUROBI", "GUROBI_CMD"}:
        out.append("gurobi")
    if have & {"CPLEX_PY", "CPLEX_CMD"}:
        out.append("cplex")
    out.append("cvxpy")
    return out


def solve_model(
    model: LinearModel,
    *,
    solver: str = "highs",
    time_limit: float | None = None,
    mip_gap: float = MIP_REL_GAP,
    verbose: bool = False,
    options: Mapping[str, Any] | None = None,
    start: np.ndarray | None = None,
    conic_solver: str = "clarabel",
) -> SolverOutput:
    """Solve ``model`` with the named backend.

    Parameters
    ----------
    model : LinearModel
    solver : {"highs", "cbc", "gurobi", "cplex", "cvxpy"}
    time_limit : float, optional
        Seconds; on expiry the status is ``"time_limit"`` with the incumbent, if any.
    mip_gap : float
        Relative optimality gap at which a MILP counts as solved.
    verbose : bool
        Show the backend's log.
    options : mapping, optional
        Raw HiGHS options for ``solver="highs"`` (e.g. ``{"mip_allow_restart": False}``).
        They change how the optimum is searched for, never the model.
    start : ndarray, optional
        A feasible point of ``model`` (all columns). HiGHS uses it as the
        incumbent of a MILP (a MIP start); LPs and the other backends ignore it.
    conic_solver : {"clarabel", "scs"}
        The cvxpy solver of continuous models with ``solver="cvxpy"`` (conic models need it).
    """
    check_choice("solver", solver, SOLVERS)
    check_choice("conic_solver", conic_solver, CONIC_SOLVERS)
    if model.is_conic and solver != "cvxpy":
        raise ValueError(f"solver must be 'cvxpy' for a conic model (power/exponential cones); got {solver!r}")
    check_highs_options(options, solver)
    if time_limit is not None:
        time_limit = check_positive("time_limit", time_limit)
    mip_gap = check_positive("mip_gap", mip_gap, allow_zero=True)
    if solver == "highs":
        return _solve_highs(model, time_limit, mip_gap, verbose, options, start)
    if solver == "cvxpy":
        return _solve_cvxpy(model, time_limit, verbose, conic_solver)
    return _solve_pulp(model, solver, time_limit, mip_gap, verbose)


def polish_with_highs(model: LinearModel, out: SolverOutput) -> SolverOutput:
    """Re-solve the continuous part of another backend's solution with HiGHS.

    PuLP reads CBC's solution from a text file with about 8 significant digits,
    so its points meet the rows only to ~1e-8. The integer variables are fixed
    at the backend's (rounded) values and the remaining LP is solved with HiGHS
    at 1e-9 tolerances; for an LP this is a HiGHS re-solve. Callers that
    compare backends should keep the backend's own ``objective`` first.
    """
    if out.x is None:
        return out
    lo, up = model.col_lower.copy(), model.col_upper.copy()
    ints = model.integrality
    fixed = np.clip(np.round(out.x[ints]), lo[ints], up[ints])
    lo[ints] = up[ints] = fixed
    lp = replace(model, col_lower=lo, col_upper=up, integrality=np.zeros_like(ints))
    clean = solve_model(lp, solver="highs")
    if clean.x is None:
        return replace(out, message=f"{out.message}; HiGHS polish failed ({clean.status}), raw backend values kept")
    return replace(out, x=clean.x, objective=clean.objective, message=f"{out.message}; polished by HiGHS")
