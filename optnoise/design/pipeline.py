"""The result pipeline: from a design's model to a settled result.

Every LP/MILP design is solved the same way, top-down:

1. the solve arguments are checked (:func:`optnoise.engine.solve.check_solve_args`);
2. a cached result is served when its stored problem is this one and it passes
   re-verification (:mod:`optnoise.engine.cache`);
3. the design builds its model, and a backend solves it
   (:func:`optnoise.design.settle.backend_solve`);
4. the result is *settled* by the one sequence of :func:`optnoise.design.settle.settle`:
   robust HiGHS re-solves after a spurious status, the repair of an ``"unverified"``
   solution that costs at most :data:`~optnoise.design.settle.REPAIR_RTOL`, and
   ``"infeasible"`` turned into ``"error"`` where a feasible point is known;
5. on request, the canonical optimum replaces the solver's choice among tied
   optima (:mod:`optnoise.design.canonical`);
6. the result is stored in the cache.

:func:`solve_noise` runs it for :class:`~optnoise.design.noise.NoiseDesign`;
:class:`~optnoise.design.mechanism.MechanismDesign` runs steps 1-4 and 6 around
its lazy-row loop with the same functions (:func:`cached_result`, :func:`~optnoise.design.settle.settle`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from optnoise.design.canonical import CANONICAL_TOL, lexicographic_minimax
from optnoise.design.composed import solve_composed
from optnoise.design.result import DesignResult
from optnoise.design.settle import (
    REPAIR_RTOL,
    ROBUST_RETRIES,
    backend_solve,
    first_options,
    normalised_rows,
    proved,
    repair_solution,
    repaired_result,
    settle,
)
from optnoise.engine.backends import BACKENDS, backend
from optnoise.engine.cache import entry_path, load_entry, store_entry
from optnoise.engine.model import LinearModel
from optnoise.engine.output import SolverOutput
from optnoise.engine.solve import check_solve_args
from optnoise.engine.tolerance import MIP_REL_GAP
from optnoise.engine.validation import shown

if TYPE_CHECKING:
    from optnoise.design.noise import NoiseDesign

__all__ = [
    "POLISH_RTOL",
    "ROBUST_RETRIES",
    "backend_solve",
    "cached",
    "cached_result",
    "proof_of",
    "repair_solution",
    "settle_noise",
    "solve_noise",
]

#: Deprecated name of :data:`optnoise.design.settle.REPAIR_RTOL` ("polish" was the repair).
POLISH_RTOL = REPAIR_RTOL


def cached_result(
    design: Any,
    cache: str | os.PathLike | None,
    opts: dict[str, Any],
    rebuild: Callable[[Any], Any],
    compute: Callable[[], Any],
) -> Any:
    """``compute()``, unless the cache holds a valid, proven result of ``design`` under ``opts`` (steps 2 and 6).

    An entry carries what makes its status true (:func:`proof_of`). On load no stored number is
    trusted: the result is rebuilt from its PMF (re-verified), its stored bound and gap dropped, and
    the bound re-derived by :func:`optnoise.design.proofs.recheck` (an LP's stored row multipliers
    through weak duality on the rebuilt model; a composed design's bound by its LPs). An entry whose
    status that does not prove (a MILP's, whose branch-and-bound bound cannot be re-checked without
    solving again), or whose proof contradicts its PMF, is solved again and overwritten.
    """
    from optnoise.design.proofs import recheck

    path = entry_path(cache, design.key(**opts))

    def rebuild_proved(entry: dict[str, Any]) -> Any:
        data = dict(entry["result"])
        data["bound"], data["gap"] = None, None
        res = rebuild(data)
        return recheck(res, entry.get("proof"), resolve=False, formulation=opts.get("formulation", "hull"))

    hit = load_entry(path, design.spec(), rebuild_proved)
    if hit is not None:
        return hit
    res = compute()
    store_entry(path, design.spec(), res, proof_of(res))
    return res


def proof_of(res: Any) -> dict[str, Any] | None:
    """What a cache entry keeps to prove ``res``'s status: LP multipliers, or the bound (re-derived on load)."""
    if getattr(res, "dual", None) is not None:
        lp_proof: dict[str, Any] = {"kind": "lp-dual", "dual": np.asarray(res.dual, dtype=float).tolist()}
        if getattr(res, "active", None) is not None:  # a lazy-row LP: the rows its multipliers belong to
            lp_proof["active"] = np.flatnonzero(np.asarray(res.active, dtype=bool)).tolist()
        return lp_proof
    if getattr(res, "bound", None) is not None:
        proof = {"kind": "bound", "bound": float(res.bound), "backend": getattr(res, "backend", res.solver)}
        if getattr(res, "bound_method", ""):
            proof["method"] = res.bound_method  # a composed design's: "tradeoff" or "lp"
        return proof
    return None


#: The former name of :func:`cached_result` (:func:`optnoise.engine.cache.cached` is the plain JSON cache).
cached = cached_result


# --------------------------------------------------------------------------------------------
# noise designs
# --------------------------------------------------------------------------------------------


def solve_noise(
    design: NoiseDesign,
    solver: str,
    time_limit: float | None,
    *,
    mip_gap: float,
    verbose: bool,
    cache: str | os.PathLike | None,
    formulation: str,
    options: dict[str, Any] | None,
    conic_solver: str,
    canonical: bool,
    concurrent: bool,
) -> DesignResult:
    """The pipeline of :meth:`optnoise.NoiseDesign.solve` (module docstring)."""
    options, time_limit, mip_gap, opts = check_solve_args(
        solver, formulation=formulation, options=options, time_limit=time_limit, mip_gap=mip_gap
    )
    if design.budget is not None and design.budget.is_conic:
        if canonical:
            raise ValueError(f"canonical applies to the LP/MILP notions, not privacy={shown(design.privacy)}")
        _no_mip_gap(mip_gap, f"privacy={shown(design.privacy)} has no MILP")
        if options:
            raise ValueError(
                f"options (--highs-option) do not apply to privacy={shown(design.privacy)}: its solvers are the "
                "log-barrier method (solver='auto') and cvxpy (solver='cvxpy', conic_solver=...)"
            )
        return _solve_renyi(design, solver, time_limit=time_limit, verbose=verbose, conic_solver=conic_solver)
    if design.notion.composed:
        if canonical:
            raise ValueError("canonical applies to the LP/MILP notions, not privacy='composed'")
        if not backend(solver).highs_options:
            takes = " or ".join(repr(b.name) for b in BACKENDS.values() if b.highs_options)
            raise ValueError(f"solver must be {takes} for privacy='composed' (its LPs); got {shown(solver)}")
        _no_mip_gap(mip_gap, "privacy='composed' solves LPs only (HiGHS options apply to them)")
        return cached_result(
            design,
            cache,
            opts,
            lambda data: DesignResult.from_dict(data, design=design, recheck=False),
            lambda: _solve_composed(design, solver, time_limit, verbose, options),
        )
    if canonical:
        opts["canonical"] = True

    def compute() -> DesignResult:
        model = design.build_model(formulation=formulation)
        deadline = None if time_limit is None else time.perf_counter() + float(time_limit)

        def stage(m: LinearModel, start: np.ndarray) -> SolverOutput:
            """One canonical stage, within what is left of ``time_limit``."""
            remaining = None if deadline is None else deadline - time.perf_counter()
            if remaining is not None and remaining <= 0:
                return SolverOutput("time_limit", None, None, None, None, 0.0, solver, message="time limit spent")
            return backend_solve(m, solver, remaining, mip_gap, verbose, options, start=start, concurrent=concurrent)

        res, out = settle_noise(design, model, solver, time_limit, mip_gap, verbose, options, concurrent)
        if canonical:
            if out is None:  # the PMF is a repair of the solver's, not a vertex the stages can start from
                res.canonical = False
                res.message = f"{res.message}; canonical stages skipped (the solver's PMF needed a repair)"
            else:
                res = _canonical(design, model, out, res, stage)
        return res

    return cached_result(
        design, cache, opts, lambda data: DesignResult.from_dict(data, design=design, recheck=False), compute
    )


def settle_noise(
    design: NoiseDesign,
    model: LinearModel,
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    verbose: bool,
    options: dict[str, Any] | None,
    concurrent: bool,
    *,
    repair: bool = True,
) -> tuple[DesignResult, SolverOutput | None]:
    """The settled result of ``model`` (:func:`optnoise.design.settle.settle`), and the solver output it
    comes from (``None`` when repaired). ``repair=False`` leaves an unverified PMF as it is."""

    def attempt(opts: dict[str, Any] | None) -> tuple[DesignResult, SolverOutput]:
        first = first_options(model, solver, opts)
        out = proved(model, backend_solve(model, solver, time_limit, mip_gap, verbose, first, concurrent=concurrent))
        return _result(design, model, out, solver, out.info["backend_objective"]), out

    return settle(
        attempt,
        is_mip=model.is_mip,
        lp_algorithm=model.lp_algorithm,
        solver=solver,
        options=options,
        repair=(lambda res: repaired_result(design, res)) if repair and design.objective == "distortion" else None,
        feasible="the uniform PMF is feasible" if design.uniform_is_feasible() else None,
    )


def _result(
    design: NoiseDesign,
    model: LinearModel,
    out: SolverOutput,
    solver: str,
    backend_objective: float | None,
    canonical: bool | None = None,
) -> DesignResult:
    """The :class:`DesignResult` of one solver output (PMF clipped, renormalised and re-verified)."""
    rows = None if out.x is None else normalised_rows(out.x[model.block("f")])
    pmf = None if rows is None else rows.reshape(design.shape)
    return DesignResult(
        design=design,
        status="error" if out.status == "optimal" and pmf is None else out.status,
        pmf=pmf,
        solver=solver,
        backend=out.solver,
        solve_time=out.solve_time,
        model_size=model.size,
        gap=out.gap,
        message=out.message,
        delta_objective=(
            float(out.x[model.block("t")][0]) if (design.objective == "delta" and out.x is not None) else None
        ),
        backend_objective=backend_objective,
        canonical=canonical,
        bound=out.bound,
        dual=out.dual,
    )


def _canonical(
    design: NoiseDesign, model: LinearModel, out: SolverOutput, first: DesignResult, run: Any
) -> DesignResult:
    """The canonical optimum (see :meth:`NoiseDesign.solve`), or ``first`` marked non-canonical with the reason."""

    def keep(reason: str) -> DesignResult:
        first.canonical = False
        first.message = f"{first.message}; {reason}; the first-stage optimum is returned".lstrip("; ")
        return first

    if out.status != "optimal" or out.x is None or not first.verify():
        return keep(f"canonical stages skipped (first stage {out.status!r})")
    lex = lexicographic_minimax(model, out.x, "f", run, total=1.0)
    first.solve_time += lex.solve_time
    if lex.x is None:
        return keep(lex.message)
    stages = replace(out, x=lex.x, solve_time=first.solve_time, message=out.message)
    res = _result(design, model, stages, first.solver, first.backend_objective, canonical=True)
    res.message = f"{out.message}; canonical optimum after {lex.stages} lexicographic stage(s)".lstrip("; ")
    # Re-check from the PMF alone: the backend holds the objective row to CANONICAL_TOL (its
    # feasibility tolerance) and the PMF is renormalised after clipping (the same again,
    # relative), hence twice CANONICAL_TOL.
    z = float(model.c @ out.x + model.offset)
    value = res.distortion if design.objective == "distortion" else res.delta_objective
    slack = 2 * CANONICAL_TOL * max(1.0, abs(z))
    if not (value is not None and value <= z + slack and res.verify()):
        return keep("the canonical PMF failed its re-verification")
    return res


def _no_mip_gap(mip_gap: float, why: str) -> None:
    """Refuse a ``mip_gap`` other than the default where no MILP is solved (it would be ignored)."""
    if mip_gap != MIP_REL_GAP:
        raise ValueError(f"mip_gap (--mip-gap) applies to MILPs only: {why}; got {shown(mip_gap)}")


def _solve_composed(
    design: NoiseDesign, solver: str, time_limit: float | None, verbose: bool, options: dict[str, Any] | None
) -> DesignResult:
    """A ``privacy="composed"`` design (:mod:`optnoise.design.composed`), as a re-verified result."""
    lp_backend = "highs" if solver == "auto" else solver  # the LPs are solved alone (no race): deterministic

    def single_release(one: NoiseDesign, *, time_limit: float | None = None, options: Any = None) -> DesignResult:
        """The search's single-release LPs, through this pipeline (not ``NoiseDesign.solve``)."""
        return solve_noise(
            one,
            lp_backend,
            time_limit,
            mip_gap=MIP_REL_GAP,
            verbose=False,
            cache=None,
            formulation="hull",
            options=options,
            conic_solver="clarabel",
            canonical=False,
            concurrent=True,
        )

    out = solve_composed(
        design, solver=solver, time_limit=time_limit, verbose=verbose, options=options, lp=single_release
    )
    return DesignResult(
        design=design,
        status=out.status,
        pmf=out.pmf,
        solver=solver,
        backend="composed",
        solve_time=out.solve_time,
        model_size=design.model_size(),
        bound=out.bound,
        message=out.message,
        eps_objective=out.eps_objective,
        bound_method=out.bound_method,
    )


def _solve_renyi(
    design: NoiseDesign, solver: str, *, time_limit: float | None, verbose: bool, conic_solver: str
) -> DesignResult:
    """Solve an ``rdp``/``zcdp`` design (:mod:`optnoise.privacy.renyi_solve`).

    ``solver="auto"`` runs the log-barrier method, which proves its gap with a certified lower
    bound; ``"cvxpy"`` the conic model through cvxpy with ``conic_solver``, whose point is bounded
    by tangent cuts. The result carries that ``bound``, and :class:`DesignResult` settles the
    status like any other: ``"optimal"`` only with a proven gap within ``OPTIMAL_GAP`` and a PMF
    that passes re-verification.
    """
    if solver not in ("auto", "cvxpy") or design.budget is None:
        raise ValueError(f"solver must be 'auto' or 'cvxpy' for privacy={shown(design.privacy)}; got {shown(solver)}")
    sol = design.budget.solve_renyi(
        design.cost,
        design.shift_index(),
        design.shape,
        method="barrier" if solver == "auto" else "cvxpy",
        time_limit=time_limit,
        verbose=verbose,
        conic_solver=conic_solver,
    )
    return DesignResult(
        design=design,
        status=sol.status,
        pmf=sol.pmf,
        solver=solver,
        backend=sol.backend,
        solve_time=sol.solve_time,
        model_size=sol.model_size,
        gap=sol.gap,
        bound=sol.bound,
        message=sol.message,
        backend_objective=sol.objective,
    )
