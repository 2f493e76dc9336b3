"""Thin backends that solve a :class:`~optnoise.model.LinearModel`.

``solve_model(model, solver=...)`` is the single entry point:

``"auto"``
    The default: HiGHS, raced against SCIP (one process and one core each) on MILPs, and the
    measured best HiGHS algorithm on LPs (see :func:`solve_model`).
``"highs"``
    HiGHS through highspy, model passed in memory; deterministic.
``"scip"``
    SCIP through pyscipopt (its wheels bundle SCIP), model passed in memory.
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

Tolerances. HiGHS and SCIP are run with primal/MIP feasibility tolerances of ``1e-9``
and a relative MIP gap of ``1e-9``: a returned point meets every row to about
``1e-9`` absolute, and a MILP "optimal" is optimal to that gap. Callers that
need an exact guarantee must re-verify (see :mod:`optnoise.privacy`) or certify
(:mod:`optnoise.certify`).
"""

from __future__ import annotations

import math
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

from optnoise._validation import check_choice, check_mapping, check_positive
from optnoise.model import LinearModel, ModelBuilder, PowerCones

__all__ = [
    "SOLVERS",
    "CONIC_SOLVERS",
    "STATUSES",
    "AUTO_SOLO_SECONDS",
    "SolverOutput",
    "solve_model",
    "available_solvers",
    "highs_instance",
    "scip_instance",
    "SCIP_MILP_CUTS",
    "one_highs_thread",
    "polish_with_highs",
    "solve_with_cuts",
    "check_highs_options",
    "check_solve_args",
    "new_highs",
    "absorb_highs_banner",
    "HIGHS_OPTION_LIMITS",
    "HIGHS_OPTIONS_REFUSED",
]

#: Guards the one-time banner absorption of :func:`absorb_highs_banner` across threads.
_BANNER_LOCK = threading.Lock()
_banner_absorbed = False

#: Solver names accepted by :func:`solve_model`.
SOLVERS = ("auto", "highs", "scip", "cbc", "gurobi", "cplex", "cvxpy")
#: cvxpy solvers of continuous (LP or conic) models with ``solver="cvxpy"``.
CONIC_SOLVERS = ("clarabel", "scs")
#: Possible values of :attr:`SolverOutput.status`.
STATUSES = ("optimal", "infeasible", "unbounded", "time_limit", "error")

FEASIBILITY_TOL = 1e-9
MIP_REL_GAP = 1e-9

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
        The backend that produced ``x``: with ``solver="auto"``, the one that won the race
        (``info["race"]`` holds every backend's final status).
    message : str
        Backend-specific detail (e.g. the raw status).
    info : dict
        Extra detail (``"race"`` for ``solver="auto"``).
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


def check_solve_args(
    solver: str,
    *,
    formulation: str,
    options: Any,
    time_limit: Any,
    mip_gap: Any,
) -> tuple[dict[str, Any] | None, float | None, float, dict[str, Any]]:
    """Validate the solver arguments of a design's ``solve()``, before anything is built.

    Shared by :meth:`optnoise.NoiseDesign.solve` and
    :meth:`optnoise.MechanismDesign.solve`. Returns the checked ``options``,
    ``time_limit`` and ``mip_gap``, and the options that determine the result
    (part of the cache key).
    """
    check_choice("solver", solver, SOLVERS)
    check_choice("formulation", formulation, ("hull", "bigm"))
    if options is not None:
        options = check_mapping("options", options)
    check_highs_options(options, solver)
    if time_limit is not None:
        time_limit = check_positive("time_limit", time_limit)
    mip_gap = check_positive("mip_gap", mip_gap, allow_zero=True)
    key: dict[str, Any] = {"solver": solver, "time_limit": time_limit, "mip_gap": mip_gap}
    if options:
        key["options"] = dict(options)
    if formulation != "hull":
        key["formulation"] = formulation
    return options, time_limit, mip_gap, key


def check_highs_options(options: Mapping[str, Any] | None, solver: str = "highs") -> None:
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
    if solver not in ("highs", "auto"):
        raise ValueError(f"options are HiGHS options; use them with solver 'highs' or 'auto', not {solver!r}")
    h = new_highs()
    for name, value in options.items():
        _set_highs_option(h, name, value)


def _set_highs_option(h: Any, name: str, value: Any) -> None:
    import highspy

    if not isinstance(name, str):
        raise ValueError(f"options: option names must be strings; got {name!r}")
    if name in HIGHS_OPTIONS_REFUSED:
        raise ValueError(f"options: HiGHS option {name!r} is not accepted: {HIGHS_OPTIONS_REFUSED[name]}")
    status, current = h.getOptionValue(str(name))
    if status != highspy.HighsStatus.kOk:
        raise ValueError(f"options: {name!r} is not a HiGHS option (see HiGHS' option list)")
    kind = type(current)
    if kind is bool and not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"options: HiGHS option {name!r} must be True or False; got {value!r}")
    try:
        if isinstance(value, (str, bytes, bool, np.bool_)) and kind is not str and kind is not bool:
            raise ValueError  # "1e-3" or True is not a number here; the CLI parses NAME=VALUE itself
        if kind is int and float(value) != int(float(value)):
            raise ValueError
        value = kind(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"options: HiGHS option {name!r} must be of type {kind.__name__}; got {value!r}") from None
    if kind is float and not math.isfinite(value):
        raise ValueError(f"options: HiGHS option {name!r} must be finite; got {value!r}")
    limit = HIGHS_OPTION_LIMITS.get(name)
    if limit is not None and value > limit:
        raise ValueError(
            f"options: {name}={value!r} loosens a tolerance beyond {limit:g}, more than re-verification can "
            f"absorb; values <= {limit:g} are accepted"
        )
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
    h = highs_instance(model, time_limit=time_limit, mip_gap=mip_gap, verbose=verbose, options=options)
    _set_start(h, model, start)
    t0 = time.perf_counter()
    h.run()
    return _highs_output(h, model, time.perf_counter() - t0)


def _set_start(h: Any, model: LinearModel, start: np.ndarray | None) -> None:
    """Hand ``start`` to HiGHS as the first incumbent of a MILP (a MIP start)."""
    import highspy

    if start is not None and model.is_mip:
        sol = highspy.HighsSolution()
        sol.col_value = np.asarray(start, dtype=float).tolist()
        sol.value_valid = True
        h.setSolution(sol)


def _highs_output(h: Any, model: LinearModel, seconds: float) -> SolverOutput:
    """The :class:`SolverOutput` of a finished HiGHS run."""
    import highspy

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
    return SolverOutput(status, x, obj, bound, gap, seconds, "highs", message=h.modelStatusToString(ms))


# --------------------------------------------------------------------------
# SCIP
# --------------------------------------------------------------------------

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
    every SCIP solution is polished by HiGHS at 1e-9 (:func:`polish_with_highs`: the integers
    fixed, the LP re-solved) and then re-verified; the gap is recomputed from the polished
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


def _solve_scip(
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
    gap = 0.0 if status == "optimal" and not model.is_mip else _gap(obj, bound)
    out = SolverOutput(status, x, obj, bound, gap, dt, "scip", message=raw)
    # SCIP works at its own 1e-6 feasibility (see scip_instance): its points are polished at 1e-9
    return replace(polish_with_highs(model, out), solve_time=time.perf_counter() - t0)


# --------------------------------------------------------------------------
# auto: a portfolio
# --------------------------------------------------------------------------

#: Seconds HiGHS works alone (in the caller's process, all its threads) before ``solver="auto"``
#: races HiGHS and SCIP in two processes. Most designs are solved within it, so they pay neither
#: the processes' start-up (about 1 s) nor the second core.
AUTO_SOLO_SECONDS = 1.0
#: Seconds past the time limit that a race waits for its processes' answers before stopping them.
_RACE_GRACE_SECONDS = 2.0
#: Marks a race's second process as finished without a proof (stopped, nothing more to poll).
_NO_CHILD: Any = object()
#: HiGHS LP algorithm per :attr:`LinearModel.lp_algorithm` hint (measured; see benchmarks/RESULTS.md).
_LP_ALGORITHMS = {"simplex": "simplex", "ipm": "ipm"}


def _child_main() -> None:
    """Body of the second process of a race (``python -c``): read the job from stdin, write the output to stdout.

    A fresh interpreter rather than ``multiprocessing``: a spawned ``multiprocessing`` child re-imports
    the caller's ``__main__``, which fails for code typed at a prompt or a script without a
    ``__main__`` guard, and a forked one inherits HiGHS' thread pool, which does not survive ``fork``.
    The solver's log goes to stderr so that stdout carries only the pickled result.
    """
    import pickle

    result = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    backend, model, deadline, mip_gap, verbose, start, options, one_thread = pickle.load(sys.stdin.buffer)
    if one_thread:
        one_highs_thread()  # one core per racer (HiGHS, and SCIP's HiGHS polish)
    try:
        limit = None if deadline is None else max(deadline - time.time(), 1e-3)
        if backend == "scip":
            out = _solve_scip(model, limit, mip_gap, verbose, start=start)
        else:
            out = _solve_highs(model, limit, mip_gap, verbose, options, start)
    except Exception as exc:  # reported to the parent as a status, never raised there
        out = SolverOutput("error", None, None, None, None, 0.0, backend, message=f"{type(exc).__name__}: {exc}")
    pickle.dump(out, result)
    result.close()


class _ChildSolve:
    """``backend`` ("scip" or "highs") solving ``model`` in a child interpreter until ``deadline`` (``time.time()``).

    ``one_thread`` fixes the child's HiGHS at one thread (:func:`one_highs_thread`), as a MILP race
    does. The lattice LP's race leaves HiGHS' default: its interior point measured faster with it
    (m = 6, k = 12, eps = 0.1: 52-58 s against 59-61 s with one thread).
    """

    def __init__(
        self,
        backend: str,
        model: LinearModel | None = None,
        deadline: float | None = None,
        mip_gap: float = MIP_REL_GAP,
        verbose: bool = False,
        *,
        start: np.ndarray | None = None,
        options: Mapping[str, Any] | None = None,
        one_thread: bool = False,
    ) -> None:
        import subprocess

        self.backend = backend
        self._verbose = bool(verbose)
        self._writer: threading.Thread | None = None
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from optnoise.solvers import _child_main; _child_main()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None if verbose else subprocess.DEVNULL,
        )
        if model is not None:
            self.submit(model, deadline, mip_gap, start=start, options=options, one_thread=one_thread)

    def submit(
        self,
        model: LinearModel,
        deadline: float | None,
        mip_gap: float,
        *,
        start: np.ndarray | None = None,
        options: Mapping[str, Any] | None = None,
        one_thread: bool = False,
    ) -> None:
        """Hand the job to the child; without ``model`` at construction, the child imports meanwhile."""
        import pickle

        job = (self.backend, model, deadline, mip_gap, self._verbose, start, dict(options or {}), bool(one_thread))
        # Written from a thread: the pipe holds 64 KiB and the child reads only once it has imported.
        self._writer = threading.Thread(target=self._send, args=(pickle.dumps(job),), daemon=True)
        self._writer.start()

    def _send(self, job: bytes) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(job)
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass  # the child was stopped

    def poll(self, timeout: float) -> SolverOutput | None:
        """The child's output once it has finished, else ``None`` after waiting up to ``timeout``."""
        import pickle
        import select

        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        data = self.proc.stdout.read()
        self.proc.wait()
        try:
            out = pickle.loads(data)
        except Exception:
            out = None
        if isinstance(out, SolverOutput):
            return out
        return SolverOutput(
            "error", None, None, None, None, 0.0, self.backend, message=f"child process ended ({self.proc.returncode})"
        )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self._writer is not None:
            self._writer.join(timeout=1.0)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def _proof(out: SolverOutput | None) -> bool:
    return out is not None and out.status in ("optimal", "infeasible", "unbounded")


def _race(
    model: LinearModel,
    time_limit: float | None,
    mip_gap: float,
    verbose: bool,
    options: Mapping[str, Any] | None,
    concurrent: bool,
    start: np.ndarray | None = None,
) -> SolverOutput:
    """HiGHS alone for :data:`AUTO_SOLO_SECONDS`, then HiGHS and SCIP side by side, one core each.

    The solo phase runs in this process with HiGHS' default threads; halfway through it, two child
    processes start and import optnoise meanwhile. If HiGHS has not finished by the end of the
    phase, it is stopped and both solvers go on in the two processes (see
    :func:`_child_main`): HiGHS on one thread (:func:`one_highs_thread`) and SCIP, which is
    single-threaded. HiGHS runs up to one MIP worker per core, so left in this process beside SCIP
    it took part of SCIP's core, and a process fixes HiGHS' thread count at its first solve: only a
    fresh one can have one thread. HiGHS resumes from its solo incumbent; SCIP starts from the
    caller's ``start`` only, so that its search does not depend on how far HiGHS got in its first
    second (a machine-dependent point: pdp, n = 64, ``|M| = 10``, error rate, SCIP proved in 19 s
    from one such incumbent and not in 58 s from another, 27 s from none).
    The first proof (optimal, infeasible or unbounded) wins and the other process is killed. When
    both stop at the time limit, the best incumbent is returned with the best dual bound (the solo
    phase's included).
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else time.time() + time_limit
    h = highs_instance(model, time_limit=time_limit, mip_gap=mip_gap, verbose=verbose, options=options)
    _set_start(h, model, start)
    h.HandleUserInterrupt = True
    h.startSolve()
    if not concurrent:
        h.wait(-1.0)
        return _highs_output(h, model, time.perf_counter() - t0)
    children: dict[str, _ChildSolve] = {}
    racing = stopped = False
    try:
        done, _ = h.wait(AUTO_SOLO_SECONDS / 2)
        if not done:
            # the processes import optnoise (about a second) while HiGHS works on alone
            children = {name: _ChildSolve(name, verbose=verbose) for name in ("highs", "scip")}
            done, _ = h.wait(AUTO_SOLO_SECONDS / 2)
        if not done:
            h.cancelSolve()
            h.wait()
        stopped = True
        solo = _highs_output(h, model, time.perf_counter() - t0)
        if done or _proof(solo) or (deadline is not None and time.time() >= deadline):
            return solo
        first = solo.x if solo.x is not None else start
        children["highs"].submit(model, deadline, mip_gap, start=first, options=options, one_thread=True)
        children["scip"].submit(model, deadline, mip_gap, start=start, one_thread=True)
        racing = True
    finally:
        if not racing:
            for child in children.values():
                child.stop()
        if not stopped:  # interrupted (Ctrl-C) in the solo phase
            h.cancelSolve()
            h.wait()
    outs: dict[str, SolverOutput | None] = dict.fromkeys(children)
    try:
        while not any(_proof(o) for o in outs.values()) and any(o is None for o in outs.values()):
            if deadline is not None and time.time() > deadline + _RACE_GRACE_SECONDS:
                break  # a process that has not answered by now (a busy machine) is not waited for
            for name, child in children.items():
                if outs[name] is None:
                    outs[name] = child.poll(0.02)
    finally:
        for child in children.values():
            child.stop()
    seconds = time.perf_counter() - t0
    race = {name: (out.status if out is not None else "stopped") for name, out in outs.items()}
    for out in outs.values():
        if _proof(out):
            assert out is not None
            message = f"{out.message} (won the race; {race})"
            return replace(out, solve_time=seconds, message=message, info={**out.info, "race": race})
    candidates = [solo, *(o for o in outs.values() if o is not None)]
    found = [o for o in candidates if o.x is not None and o.objective is not None]
    best = min(found, key=lambda o: o.objective) if found else solo  # type: ignore[arg-type, return-value]
    bounds = [o.bound for o in candidates if o.bound is not None and np.isfinite(o.bound)]
    bound = max(bounds) if bounds else None
    return replace(
        best,
        status="time_limit" if found or "time_limit" in race.values() else best.status,
        bound=bound,
        gap=_gap(best.objective, bound),
        solve_time=seconds,
        message=f"{best.message} (best incumbent; {race})",
        info={**best.info, "race": race},
    )


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
    out = ["auto", "highs", "scip"]
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
    solver: str = "auto",
    time_limit: float | None = None,
    mip_gap: float = MIP_REL_GAP,
    verbose: bool = False,
    options: Mapping[str, Any] | None = None,
    concurrent: bool = True,
    start: np.ndarray | None = None,
    conic_solver: str = "clarabel",
) -> SolverOutput:
    """Solve ``model`` with the named backend.

    Parameters
    ----------
    model : LinearModel
    solver : {"auto", "highs", "scip", "cbc", "gurobi", "cplex", "cvxpy"}
        ``"auto"`` (default) is a portfolio: a MILP runs HiGHS and, once HiGHS has worked alone for
        :data:`AUTO_SOLO_SECONDS`, HiGHS (one thread, from its incumbent) and SCIP in two processes,
        one core each (SCIP without cutting planes, :data:`SCIP_MILP_CUTS`); the first proof wins (see
        :attr:`SolverOutput.solver` for which). An LP runs HiGHS with the algorithm its problem class
        solves fastest (:attr:`LinearModel.lp_algorithm`: interior point with crossover for the
        permute-and-flip lattice LP, dual simplex otherwise). Which optimal vertex a degenerate
        problem returns can depend on which backend wins: use ``"highs"`` where the returned
        optimum must not vary between runs.
    time_limit : float, optional
        Seconds; on expiry the status is ``"time_limit"`` with the incumbent, if any.
    mip_gap : float
        Relative optimality gap at which a MILP counts as solved.
    verbose : bool
        Show the backend's log.
    options : mapping, optional
        Raw HiGHS options for ``solver="highs"`` or the HiGHS side of ``"auto"``
        (e.g. ``{"mip_allow_restart": False}``). They change how the optimum is searched for, never the model.
    concurrent : bool
        ``"auto"`` only: ``False`` keeps the solve in this process (HiGHS alone), for callers that
        already run one solve per core, such as sweep workers.
    start : ndarray, optional
        A feasible point of ``model`` (all columns). HiGHS and SCIP use it as the first
        incumbent of a MILP (a MIP start); LPs and the other backends ignore it.
    conic_solver : {"clarabel", "scs"}
        The cvxpy solver of continuous models with ``solver="cvxpy"`` (conic models need it).
    """
    check_choice("solver", solver, SOLVERS)
    check_choice("conic_solver", conic_solver, CONIC_SOLVERS)
    if model.is_conic and solver == "auto":
        solver = "cvxpy"  # the only backend of cones
    if model.is_conic and solver != "cvxpy":
        raise ValueError(
            f"solver must be 'cvxpy' or 'auto' for a conic model (power/exponential cones); got {solver!r}"
        )
    options, time_limit, mip_gap, _ = check_solve_args(
        solver, formulation="hull", options=options, time_limit=time_limit, mip_gap=mip_gap
    )
    if solver == "auto" and model.is_mip:
        return _race(model, time_limit, mip_gap, verbose, options, bool(concurrent), start)
    if solver == "auto":
        algorithm = {"solver": _LP_ALGORITHMS[model.lp_algorithm or "simplex"]}
        return _solve_highs(model, time_limit, mip_gap, verbose, {**algorithm, **(options or {})})
    if solver == "highs":
        return _solve_highs(model, time_limit, mip_gap, verbose, options, start)
    if solver == "scip":
        return _solve_scip(model, time_limit, mip_gap, verbose, start=start)
    if solver == "cvxpy":
        return _solve_cvxpy(model, time_limit, verbose, conic_solver)
    return _solve_pulp(model, solver, time_limit, mip_gap, verbose)


def solve_with_cuts(
    model: LinearModel,
    cuts: Any,
    cut_upper: np.ndarray,
    *,
    solver: str = "auto",
    time_limit: float | None = None,
    tol: float = 1e-9,
    concurrent: bool = True,
) -> tuple[SolverOutput, np.ndarray, int]:
    """Solve the LP ``model`` plus the rows ``cuts @ x <= cut_upper``, adding a row only once it is violated.

    Solve without the cut rows, add every row the solution violates by more than ``tol``,
    re-solve, until none is violated: the result is optimal for the LP with all rows (it solves a
    relaxation and is feasible for the full LP). With HiGHS (``"highs"``, ``"auto"``) one HiGHS
    instance is kept across rounds: the first round uses the model's LP algorithm
    (``"auto"``: :attr:`LinearModel.lp_algorithm`), later rounds the dual simplex from the
    previous optimal basis, which stays dual feasible when rows are added. Other backends rebuild
    the model each round.

    ``"auto"`` also races the alternative: when the rounds have not finished within
    :data:`AUTO_SOLO_SECONDS`, a second process solves the LP with every row at once (interior
    point with crossover), and whichever finishes first wins. Lazy rows win when few rows bind
    (permute-and-flip at eps >= 0.5), all rows at once when the rounds need many dual simplex
    iterations (eps = 0.1); see ``benchmarks/RESULTS.md``. ``concurrent=False`` keeps it in
    this process.

    Returns
    -------
    (SolverOutput, ndarray, int)
        The final solve (``solve_time``: seconds over all rounds), the indices of the cut rows in
        the final model (all of them when the all-rows solve won), and the number of rounds.
    """
    import scipy.sparse as sp

    check_choice("solver", solver, SOLVERS)
    if model.is_mip:
        raise ValueError("model must be an LP: cut rows are added between LP solves")
    cuts = sp.csr_matrix(cuts)
    cut_upper = np.asarray(cut_upper, dtype=float)
    tol = check_positive("tol", tol)
    if time_limit is not None:
        time_limit = check_positive("time_limit", time_limit)

    def with_rows(rows: np.ndarray) -> LinearModel:
        return replace(
            model,
            A=sp.vstack([model.A, cuts[rows]], format="csr"),
            row_lower=np.concatenate([model.row_lower, np.full(rows.size, -np.inf)]),
            row_upper=np.concatenate([model.row_upper, cut_upper[rows]]),
        )

    t_start = time.perf_counter()
    deadline = None if time_limit is None else time.time() + time_limit
    added = np.zeros(0, dtype=np.int64)
    rounds, spent = 0, 0.0
    h = None
    race = solver == "auto" and concurrent and cuts.shape[0] > 0
    other: _ChildSolve | None = None
    if solver in ("highs", "auto"):
        h = highs_instance(model, time_limit=time_limit)
        h.HandleUserInterrupt = True
        if solver == "auto":
            h.setOptionValue("solver", _LP_ALGORITHMS[model.lp_algorithm or "simplex"])

    def run_highs() -> SolverOutput | None:
        """One HiGHS round; ``None`` when the all-rows process proved the optimum first."""
        nonlocal other
        assert h is not None
        t0 = time.perf_counter()
        h.startSolve()
        while not h.wait(0.05)[0]:
            if race and other is None and time.perf_counter() - t_start >= AUTO_SOLO_SECONDS:
                all_rows = np.arange(cuts.shape[0])
                other = _ChildSolve(
                    "highs", with_rows(all_rows), deadline, MIP_REL_GAP, False, options={"solver": "ipm"}
                )
            if other is not None and other is not _NO_CHILD:
                done = other.poll(0.0)
                if done is not None and done.status == "optimal":
                    h.cancelSolve()
                    h.wait()
                    won.append(done)
                    return None
                if done is not None:
                    other.stop()
                    other = _NO_CHILD
        return _highs_output(h, model, time.perf_counter() - t0)

    won: list[SolverOutput] = []
    try:
        while True:
            remaining = None if deadline is None else max(deadline - time.time(), 1e-3)
            if h is not None:
                if remaining is not None:
                    # HiGHS compares its limit with the run time it has accumulated over every round so far
                    h.setOptionValue("time_limit", h.getRunTime() + remaining)
                got = run_highs()
                if got is None:
                    out = replace(won[0], info={"race": "all rows at once won"})
                    added = np.arange(cuts.shape[0])
                    rounds = 1
                    spent = time.perf_counter() - t_start
                    break
                out = got
            else:
                out = solve_model(with_rows(added), solver=solver, time_limit=remaining)
            spent += out.solve_time
            rounds += 1
            if out.status != "optimal" or out.x is None:
                break
            viol = np.nonzero(cuts @ out.x - cut_upper > tol)[0]
            new = np.setdiff1d(viol, added)
            if not new.size:
                break
            added = np.union1d(added, new)
            if h is not None:
                block = cuts[new]
                h.addRows(
                    int(new.size),
                    np.full(new.size, -np.inf),
                    cut_upper[new],
                    int(block.nnz),
                    block.indptr[:-1].astype(np.int32),
                    block.indices.astype(np.int32),
                    block.data.astype(float),
                )
                # A basis optimal before the new rows stays dual feasible: the dual simplex resumes from it.
                h.setOptionValue("solver", "simplex")
                h.setOptionValue("simplex_strategy", 1)
    finally:
        if other is not None and other is not _NO_CHILD:
            other.stop()
    if race and other is not None:
        spent = time.perf_counter() - t_start  # wall clock: two processes worked
    return replace(out, solve_time=spent), added, rounds


def polish_with_highs(model: LinearModel, out: SolverOutput) -> SolverOutput:
    """Re-solve the continuous part of another backend's solution with HiGHS.

    PuLP reads CBC's solution from a text file with about 8 significant digits,
    so its points meet the rows only to ~1e-8. The integer variables are fixed
    at the backend's (rounded) values and the remaining LP is solved with HiGHS
    at 1e-9 tolerances; for an LP this is a HiGHS re-solve. The gap is
    recomputed from the polished objective and the backend's bound (SCIP works
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
    clean = solve_model(lp, solver="highs")
    if clean.x is None:
        return replace(out, message=f"{out.message}; HiGHS polish failed ({clean.status}), raw backend values kept")
    gap = out.gap if out.bound is None else _gap(clean.objective, out.bound)
    return replace(
        out,
        x=clean.x,
        objective=clean.objective,
        gap=gap,
        message=f"{out.message}; polished by HiGHS",
        info={**out.info, "backend_objective": out.info.get("backend_objective", out.objective)},
    )
