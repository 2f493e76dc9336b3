"""The HiGHS backend (highspy): models in memory, optnoise's options, MIP starts, refining other backends' points."""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from optnoise.engine.backend import Backend
from optnoise.engine.model import LinearModel, ModelBuilder
from optnoise.engine.output import SolverOutput, relative_gap
from optnoise.engine.tolerance import FEASIBILITY_TOL, MIP_REL_GAP
from optnoise.engine.validation import check_mapping, shown

__all__ = [
    "HIGHS_OPTION_LIMITS",
    "HIGHS_OPTIONS_REFUSED",
    "write_mps",
    "highs_instance",
    "absorb_highs_banner",
    "new_highs",
    "one_highs_thread",
    "check_highs_options",
    "solve_highs",
    "set_start",
    "highs_output",
    "polish_with_highs",
    "basis_dual",
    "refine_with_highs",
    "BACKEND",
]


#: Guards the one-time banner absorption of :func:`absorb_highs_banner` across threads.
_BANNER_LOCK = threading.Lock()


_banner_absorbed = False


#: Raw HiGHS options that loosen what re-verification relies on, with the loosest value accepted
#: (optnoise's own setting, or HiGHS' default where optnoise sets none). Tighter values are fine.
HIGHS_OPTION_LIMITS = {
    "primal_feasibility_tolerance": FEASIBILITY_TOL,
    "dual_feasibility_tolerance": FEASIBILITY_TOL,
    "mip_feasibility_tolerance": FEASIBILITY_TOL,
    "primal_residual_tolerance": 1e-7,
    "dual_residual_tolerance": 1e-7,
    "optimality_tolerance": 1e-7,
    "kkt_tolerance": 1e-7,
    "ipm_optimality_tolerance": 1e-8,
    "pdlp_optimality_tolerance": 1e-7,
}


#: Raw HiGHS options refused outright, and what to use instead: they would change the model,
#: end a solve at a non-optimal point that HiGHS still calls optimal, or print on stdout.
HIGHS_OPTIONS_REFUSED = {
    "mip_rel_gap": "pass mip_gap= (CLI --mip-gap) instead",
    "mip_abs_gap": "pass mip_gap= (CLI --mip-gap) instead",
    "time_limit": "pass time_limit= (CLI --time-limit) instead",
    "objective_bound": "it ends the solve before optimality",
    "objective_target": "it ends the solve before optimality",
    "small_matrix_value": "it drops model coefficients",
    "large_matrix_value": "it changes which coefficients HiGHS accepts",
    "infinite_cost": "it turns large costs into infinite ones",
    "infinite_bound": "it turns large bounds into infinite ones",
    "output_flag": "pass verbose=True (CLI: not available) instead; output would corrupt JSON on stdout",
    "log_to_console": "pass verbose=True instead; output would corrupt JSON on stdout",
}


#: HiGHS LP algorithm per :attr:`LinearModel.lp_algorithm` hint (measured; see benchmarks/RESULTS.md).
LP_ALGORITHMS = {"simplex": "simplex", "ipm": "ipm"}


def write_mps(model: LinearModel, path: str | os.PathLike[str]) -> Path:
    """Write ``model`` in (free) MPS format through HiGHS' writer, for any external solver."""
    path = Path(path)
    if path.suffix.lower() != ".mps":
        raise ValueError(f"path must end in .mps; got {shown(str(path))}")
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


def one_highs_thread() -> bool:
    """Fix HiGHS at one thread in this process; call it before the process's first HiGHS solve.

    HiGHS runs up to one MIP worker per core, and a process fixes HiGHS' thread count at its
    first solve (a later ``threads`` option that differs is an error). Processes that already run
    one solve per core, such as sweep workers and the two processes of a ``solver="auto"`` race,
    call this first so that they do not oversubscribe the cores; later solves there run with
    HiGHS' default options on one thread. Returns ``False`` when HiGHS had already been fixed at
    another thread count (nothing changes then).
    """
    import highspy

    mb = ModelBuilder()
    mb.set_objective(mb.add_vars(1, lb=0.0, ub=1.0), [1.0])  # any model: the first solve fixes the threads
    return bool(highs_instance(mb.build(), threads=1).run() == highspy.HighsStatus.kOk)


def check_highs_options(options: Mapping[str, Any] | None, solver: str | None = None) -> None:
    """Raise ``ValueError`` unless ``options`` are valid HiGHS options for ``solver``.

    Besides HiGHS' own checks (name, type, range), options that loosen a
    tolerance beyond :data:`HIGHS_OPTION_LIMITS`, the ones in
    :data:`HIGHS_OPTIONS_REFUSED`, and non-finite numbers are refused: a result
    HiGHS calls optimal must stay one that re-verification can confirm.
    """
    if options is None:
        return
    options = check_mapping("options", options)
    if not options:
        return
    if solver is not None and solver not in ("highs", "auto"):  # callers before the backend registry
        raise ValueError(f"options are HiGHS options; use them with solver 'highs' or 'auto', not {shown(solver)}")
    h = new_highs()
    for name, value in options.items():
        _set_highs_option(h, name, value)


def _set_highs_option(h: Any, name: str, value: Any) -> None:
    import highspy

    if not isinstance(name, str):
        raise ValueError(f"options: option names must be strings; got {shown(name)}")
    if name in HIGHS_OPTIONS_REFUSED:
        raise ValueError(f"options: HiGHS option {shown(name)} is not accepted: {HIGHS_OPTIONS_REFUSED[name]}")
    status, current = h.getOptionValue(str(name))
    if status != highspy.HighsStatus.kOk:
        raise ValueError(f"options: {shown(name)} is not a HiGHS option (see HiGHS' option list)")
    kind = type(current)
    if kind is bool and not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"options: HiGHS option {shown(name)} must be True or False; got {shown(value)}")
    try:
        if isinstance(value, (str, bytes, bool, np.bool_)) and kind is not str and kind is not bool:
            raise ValueError  # "1e-3" or True is not a number here; the CLI parses NAME=VALUE itself
        if kind is int and float(value) != int(float(value)):
            raise ValueError
        value = kind(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(
            f"options: HiGHS option {shown(name)} must be of type {kind.__name__}; got {shown(value)}"
        ) from None
    if kind is float and not math.isfinite(value):
        raise ValueError(f"options: HiGHS option {shown(name)} must be finite; got {shown(value)}")
    limit = HIGHS_OPTION_LIMITS.get(name)
    if limit is not None and value > limit:
        raise ValueError(
            f"options: {name}={shown(value)} loosens a tolerance beyond {limit:g}, more than re-verification can "
            f"absorb; values <= {limit:g} are accepted"
        )
    if h.setOptionValue(str(name), value) != highspy.HighsStatus.kOk:
        raise ValueError(f"options: HiGHS refused {name}={shown(value)} (out of its allowed range)")


def solve_highs(
    model: LinearModel,
    time_limit: float | None,
    mip_gap: float,
    verbose: bool,
    options: Mapping[str, Any] | None = None,
    start: np.ndarray | None = None,
) -> SolverOutput:
    h = highs_instance(model, time_limit=time_limit, mip_gap=mip_gap, verbose=verbose, options=options)
    set_start(h, model, start)
    t0 = time.perf_counter()
    h.run()
    return highs_output(h, model, time.perf_counter() - t0)


def set_start(h: Any, model: LinearModel, start: np.ndarray | None) -> None:
    """Hand ``start`` to HiGHS as the first incumbent of a MILP (a MIP start)."""
    import highspy

    if start is not None and model.is_mip:
        sol = highspy.HighsSolution()
        sol.col_value = np.asarray(start, dtype=float).tolist()
        sol.value_valid = True
        h.setSolution(sol)


def highs_output(h: Any, model: LinearModel, seconds: float) -> SolverOutput:
    """The :class:`SolverOutput` of a finished HiGHS run."""
    import highspy

    ms = h.getModelStatus()
    info = h.getInfo()
    S = highspy.HighsModelStatus
    has_x = info.primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
    x = np.asarray(h.getSolution().col_value, dtype=float) if has_x else None
    obj = float(info.objective_function_value) if has_x else None
    dual = None
    if model.is_mip:
        bound: float | None = float(info.mip_dual_bound)
    else:
        # an LP's bound is proved here from HiGHS' row multipliers by weak duality, not taken on trust
        if info.dual_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible:
            dual = np.asarray(h.getSolution().row_dual, dtype=float)
        bound = None if dual is None else model.dual_bound(dual)
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
    gap = relative_gap(obj, bound)
    return SolverOutput(status, x, obj, bound, gap, seconds, "highs", message=h.modelStatusToString(ms), dual=dual)


def refine_with_highs(model: LinearModel, out: SolverOutput) -> SolverOutput:
    """Re-solve the continuous part of another backend's solution with HiGHS.

    PuLP reads CBC's solution from a text file with about 8 significant digits,
    so its points meet the rows only to ~1e-8. The integer variables are fixed
    at the backend's (rounded) values and the remaining LP is solved with HiGHS
    at 1e-9 tolerances; for an LP this is a HiGHS re-solve. The gap is
    recomputed from the refined objective and the backend's bound (SCIP works
    at a 1e-6 tolerance, so its bound is that of a relaxation: still valid).
    The backend's own objective stays in ``info["backend_objective"]``.
    """
    if out.x is None:
        return out
    lo, up = model.col_lower.copy(), model.col_upper.copy()
    ints = model.integrality
    fixed = np.clip(np.round(out.x[ints]), lo[ints], up[ints])
    lo[ints] = up[ints] = fixed
    lp = replace(model, col_lower=lo, col_upper=up, integrality=np.zeros_like(ints))
    clean = solve_highs(lp, None, MIP_REL_GAP, False)
    if clean.x is None:
        return replace(out, message=f"{out.message}; HiGHS refinement failed ({clean.status}), raw backend values kept")
    gap = out.gap if out.bound is None else relative_gap(clean.objective, out.bound)
    return replace(
        out,
        x=clean.x,
        objective=clean.objective,
        gap=gap,
        message=f"{out.message}; refined by HiGHS",
        info={**out.info, "backend_objective": out.info.get("backend_objective", out.objective)},
    )


#: Deprecated name of :func:`refine_with_highs` (kept for callers of the old name).
polish_with_highs = refine_with_highs


def basis_dual(model: LinearModel, col_scale: np.ndarray, *, time_limit: float | None = None) -> np.ndarray | None:
    """Row multipliers of ``model`` for a tight weak-duality bound, from an optimal basis found in scaled variables.

    HiGHS meets rows and reduced costs to absolute tolerances, so where an optimum spans many
    orders of magnitude (the tail of a pure-DP staircase: masses down to 1e-30) its own
    multipliers leave a weak-duality gap of ~1e-6 relative. Here ``model`` is re-solved for
    ``z = x / col_scale`` with every row divided by its largest coefficient, which makes
    HiGHS' tolerances relative to each column's scale, so it ends at the right basis; the
    multipliers of that basis are then computed in ``model``'s own variables, ``B^T y = c_B``
    (a sparse LU), and :meth:`~optnoise.engine.model.LinearModel.dual_bound` turns them into
    a bound, which is valid whatever their accuracy. ``col_scale`` must be positive (e.g. a
    near-optimal solution lifted off zero). ``None`` when the re-solve gives no basis.
    """
    import highspy
    import scipy.sparse as sp
    from scipy.sparse.linalg import spsolve

    s = np.asarray(col_scale, dtype=float)
    if model.is_mip or s.shape != (model.shape[1],) or not np.all(np.isfinite(s)) or np.any(s <= 0):
        return None
    A = model.A.tocsr() @ sp.diags(s)
    top = np.asarray(abs(A).max(axis=1).todense()).ravel()
    r = np.where(top > 0, 1.0 / np.where(top > 0, top, 1.0), 1.0)
    scaled = LinearModel(
        c=np.asarray(model.c, dtype=float) * s,
        A=sp.csr_matrix(sp.diags(r) @ A),
        row_lower=model.row_lower * r,
        row_upper=model.row_upper * r,
        col_lower=model.col_lower / s,
        col_upper=model.col_upper / s,
        integrality=np.zeros(model.shape[1], dtype=bool),
        offset=model.offset,
    )
    h = highs_instance(scaled, time_limit=time_limit)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    basis = h.getBasis()
    basic = int(highspy.HighsBasisStatus.kBasic)
    cols = np.array([int(v) for v in basis.col_status]) == basic
    rows = np.array([int(v) for v in basis.row_status]) == basic
    m = model.shape[0]
    if cols.sum() + rows.sum() != m:
        return None
    # the basis matrix in model's own variables: basic columns of A, and -I for basic row activities
    B = sp.hstack([model.A.tocsc()[:, cols], -sp.eye(m, format="csc")[:, rows]], format="csc")
    c_b = np.concatenate([np.asarray(model.c, dtype=float)[cols], np.zeros(int(rows.sum()))])
    try:
        y = np.asarray(spsolve(B.T.tocsc(), c_b), dtype=float)
    except (RuntimeError, ValueError):  # a singular basis: no multipliers from it
        return None
    return y if np.all(np.isfinite(y)) else None


#: The HiGHS backend: in memory, deterministic, MIP starts, raw HiGHS options.
BACKEND = Backend(
    "highs",
    lambda model, req: solve_highs(model, req.time_limit, req.mip_gap, req.verbose, req.options, req.start),
    warm_start=True,
    highs_options=True,
)
