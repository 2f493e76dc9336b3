"""Thin backends that solve a :class:`~optnoise.engine.model.LinearModel`.

``solve_model(model, solver=...)`` is the single entry point; the backends are those of the
registry :mod:`optnoise.engine.backends` (each declared in its own module with what it can do):

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
(:mod:`optnoise.deploy.certify`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from optnoise.engine.backend import SolveRequest
from optnoise.engine.backends import BACKENDS, backend
from optnoise.engine.highs import check_highs_options
from optnoise.engine.model import LinearModel
from optnoise.engine.output import SolverOutput
from optnoise.engine.tolerance import MIP_REL_GAP, settle_gap
from optnoise.engine.validation import check_choice, check_mapping, check_positive, shown

__all__ = ["SOLVERS", "CONIC_SOLVERS", "solve_model", "available_solvers", "check_solve_args"]


#: Solver names accepted by :func:`solve_model`: the registry's (:mod:`optnoise.engine.backends`).
SOLVERS = tuple(BACKENDS)
#: cvxpy solvers of continuous (LP or conic) models with ``solver="cvxpy"``.
CONIC_SOLVERS = ("clarabel", "scs")


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
    chosen = backend(solver)
    check_choice("formulation", formulation, ("hull", "bigm"))
    if options is not None:
        options = check_mapping("options", options)
    if options and not chosen.highs_options:
        takes = " or ".join(repr(b.name) for b in BACKENDS.values() if b.highs_options)
        raise ValueError(f"options are HiGHS options; use them with solver {takes}, not {shown(solver)}")
    check_highs_options(options)
    if time_limit is not None:
        time_limit = check_positive("time_limit", time_limit)
    mip_gap = check_positive("mip_gap", mip_gap, allow_zero=True)
    if mip_gap >= 1.0:
        # a relative gap of 1 or more proves nothing (the bound may be 0 or negative)
        raise ValueError(f"mip_gap must be a relative gap in [0, 1); got {shown(mip_gap)}")
    key: dict[str, Any] = {"solver": solver, "time_limit": time_limit, "mip_gap": mip_gap}
    if options:
        key["options"] = dict(options)
    if formulation != "hull":
        key["formulation"] = formulation
    return options, time_limit, mip_gap, key


def available_solvers() -> list[str]:
    """Solver names usable on this machine."""
    return [name for name, b in BACKENDS.items() if b.available()]


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
    chosen = backend(solver)
    check_choice("conic_solver", conic_solver, CONIC_SOLVERS)
    if model.is_conic and not chosen.cones:
        able = " or ".join(repr(b.name) for b in BACKENDS.values() if b.cones)
        raise ValueError(f"solver must be {able} for a conic model (power/exponential cones); got {shown(solver)}")
    options, time_limit, mip_gap, _ = check_solve_args(
        solver, formulation="hull", options=options, time_limit=time_limit, mip_gap=mip_gap
    )
    request = SolveRequest(time_limit, mip_gap, verbose, options, bool(concurrent), start, conic_solver)
    out = chosen.solve(model, request)
    return settle_proof(out) if model.is_mip else out


def settle_proof(out: SolverOutput) -> SolverOutput:
    """A MILP is ``"optimal"`` only with a gap proven within :data:`~optnoise.engine.tolerance.OPTIMAL_GAP`.

    A backend stopped at a looser relative gap (``mip_gap`` above the default) has a point
    without a proof: ``"feasible"``, with its ``bound`` and ``gap``. An LP keeps its backend's
    status; its ``bound`` is the weak-duality bound of its row multipliers, which the design
    layer judges by the same rule (:func:`optnoise.engine.tolerance.settle_gap`).
    """
    status, why = settle_gap(out.status, out.gap)
    if status != out.status:
        return replace(out, status=status, message=f"{out.message}; {why}".lstrip("; "))
    return out
