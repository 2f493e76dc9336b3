"""The result pipeline: from a design's model to a settled result.

Every LP/MILP design is solved the same way, top-down:

1. the solve arguments are checked (:func:`optnoise.engine.solve.check_solve_args`);
2. a cached result is served when its stored problem is this one and it passes
   re-verification (:mod:`optnoise.engine.cache`);
3. the design builds its model, and a backend solves it (:func:`backend_solve`:
   :func:`optnoise.engine.solve.solve_model`, then HiGHS' polish of a PuLP point);
4. the result is *settled*: HiGHS re-solves robustly after a spurious status
   (:data:`ROBUST_RETRIES`), an ``"unverified"`` solution is replaced by its
   repair when that costs at most :data:`POLISH_RTOL` (:func:`repair_solution`:
   the exact repair of :mod:`optnoise.design.repair`, or for clamped noise the
   mixture of :func:`optnoise.design.clamp.clamp_repair`), and an
   ``"infeasible"`` where a feasible point is known becomes ``"error"``;
5. on request, the canonical optimum replaces the solver's choice among tied
   optima (:mod:`optnoise.design.canonical`);
6. the result is stored in the cache.

:func:`solve_noise` runs it for :class:`~optnoise.design.noise.NoiseDesign`;
:class:`~optnoise.design.mechanism.MechanismDesign` runs steps 1-4 and 6 around
its lazy-row loop with the same functions.
"""

from __future__ import annotations

import contextvars
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from optnoise.design.canonical import CANONICAL_TOL, lexicographic_minimax
from optnoise.design.clamp import clamp_repair
from optnoise.design.composed import solve_composed
from optnoise.design.repair import DEFAULT_BITS, RepairFailed, exact_repair, prepare, pure_envelope
from optnoise.design.result import DesignResult
from optnoise.engine.cache import entry_path, load_entry, store_entry
from optnoise.engine.highs import basis_dual, polish_with_highs
from optnoise.engine.model import LinearModel
from optnoise.engine.output import SolverOutput, relative_gap
from optnoise.engine.solve import check_solve_args, solve_model
from optnoise.engine.tolerance import MIP_REL_GAP, OPTIMAL_GAP, UNVERIFIED, within_delta
from optnoise.engine.validation import shown

if TYPE_CHECKING:
    from optnoise.design.noise import NoiseDesign

__all__ = ["POLISH_RTOL", "ROBUST_RETRIES", "backend_solve", "cached", "repair_solution", "solve_noise"]

#: Largest relative loss increase a repaired result may have and still be called optimal.
POLISH_RTOL = 1e-6
#: HiGHS settings of the robust re-solves after a spurious status (see :func:`solve_noise`).
ROBUST_RETRIES: tuple[dict[str, Any], ...] = (
    {"presolve": "off"},
    {"presolve": "off", "primal_feasibility_tolerance": 1e-10, "simplex_scale_strategy": 4},
)
#: Largest delta at which an unverified noise PMF is repaired to pure DP (the proof of optimality
#: against the delta problem's own dual bound decides whether the repair is accepted).
PURE_REPAIR_DELTA = 1e-9
#: Set while an unverified result is being repaired, so that the repair's re-solves are not repaired again.
_POLISHING: contextvars.ContextVar[bool] = contextvars.ContextVar("optnoise_polishing", default=False)


#: LPs with at least this many rows are solved with HiGHS' interior point method (see :func:`solve_lp`).
IPM_ROWS = 20_000


def backend_solve(
    model: LinearModel,
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    verbose: bool,
    options: dict[str, Any] | None,
    *,
    start: np.ndarray | None = None,
    concurrent: bool = True,
) -> SolverOutput:
    """One solve with the chosen backend; a PuLP point is polished by HiGHS.

    ``info["backend_objective"]`` is the backend's own objective, before any polish.
    """
    out = solve_model(
        model,
        solver=solver,
        time_limit=time_limit,
        mip_gap=mip_gap,
        verbose=verbose,
        options=options,
        start=start,
        concurrent=concurrent,
    )
    if out.solver not in ("highs", "scip") and out.x is not None:  # SCIP polishes its own
        # PDP indicators are re-verified with a ~1e-6 eps slack, finer than PuLP's ~8-digit solution files.
        out = polish_with_highs(model, out)
    return replace(out, info={**out.info, "backend_objective": out.info.get("backend_objective", out.objective)})


def cached(
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


@dataclass
class Repair:
    """A verified replacement of an unverified solution (:func:`repair_solution`).

    ``loss`` is its objective; ``bound`` a proven lower bound when the repair proves one
    (the pure-DP envelope does), else ``None`` (the solver's bound still holds).
    """

    solution: np.ndarray
    method: str
    loss: float
    bound: float | None = None
    dual: np.ndarray | None = None


def proof_dual(model: LinearModel, x: np.ndarray | None) -> tuple[float, np.ndarray] | None:
    """A tight LP bound ``(bound, multipliers)`` from the optimal basis near ``x`` (:func:`~.highs.basis_dual`)."""
    if model.is_mip or x is None:
        return None
    scale = np.maximum(np.abs(np.asarray(x, dtype=float)), 1e-300)
    y = basis_dual(model, scale)
    bound = None if y is None else model.dual_bound(y)
    return None if bound is None or y is None else (bound, y)


def repair_solution(design: Any, solution: np.ndarray, base: float) -> Repair | None:
    """A verified solution within :data:`POLISH_RTOL` of an unverified one, or ``None``.

    A solver meets rows to an absolute tolerance; at a small delta, or in the
    tail of a long staircase, that can exceed the relative re-verification rule
    although the solution is right up to tolerance. Three repairs, the first that applies:

    * pure DP (delta = 0, or a delta up to :data:`PURE_REPAIR_DELTA`, which no float rounding
      can meet relatively) modulo noise: the envelope of the solver's PMF
      (:func:`optnoise.design.repair.pure_envelope`), which meets every ratio exactly,
      with a bound proved from the optimal basis found in scaled variables
      (:func:`optnoise.engine.highs.basis_dual`); accepted when that proves it optimal,
      whatever the solver's own (infeasibly low) objective was;
    * the exact repair (:func:`optnoise.design.repair.exact_repair`) with a loss budget of
      ``POLISH_RTOL`` relative to ``base``; its exact solution passes the float rule a fortiori;
    * clamped noise is repaired as a noise PMF, by mixing with strictly private clamped
      noise (:func:`optnoise.design.clamp.clamp_repair`).
    """
    token = _POLISHING.set(True)  # the repair's own re-solves are not repaired again
    try:
        if not getattr(getattr(design, "rel", None), "cyclic", True):  # a clamp release (mechanisms have none)
            target = float(design.delta or 0.0)
            pmf = clamp_repair(
                solution,
                design.n,
                design.eps,
                lambda p: within_delta(design.clamp_evaluation(p)[1][design.privacy], target),
                lambda p: design.clamp_evaluation(p)[0] - base <= POLISH_RTOL * max(1.0, abs(base)),
            )
            if pmf is None:
                return None
            return Repair(pmf, "mixed with strictly private clamped noise", design.clamp_evaluation(pmf)[0])
        layout = design.pair_layout()
        p = prepare(layout.embed(solution))
        target = float(design.delta or 0.0)
        if target <= PURE_REPAIR_DELTA and layout.rows == 1:
            # below float resolution a delta > 0 cannot be met relatively by rounding repairs; a pure
            # eps'-DP PMF meets it (and every notion) with delta exactly 0, where eps' = eps (1 - 1e-9)
            # keeps every ratio strictly below e^eps through float rounding
            lifted = pure_envelope(layout, p, design.eps if target == 0.0 else design.eps * (1.0 - 1e-9))
            if lifted is not None:
                model = design.build_model()
                cost = layout.loss_of(lifted)
                proof = proof_dual(model, np.concatenate([lifted, np.ones(model.shape[1] - lifted.size)]))
                if proof is not None and relative_gap(cost, proof[0]) is not None:
                    gap = relative_gap(cost, proof[0])
                    if gap is not None and gap <= OPTIMAL_GAP:
                        shaped = lifted.reshape(layout.weights_shape)
                        return Repair(shaped, "pure-DP envelope", cost, bound=proof[0], dual=proof[1])
        try:
            fixed = exact_repair(design, p, base=base, target=target, max_loss=POLISH_RTOL, solver="highs")
        except RepairFailed:
            return None
        weights = np.asarray(fixed.weights, dtype=float).reshape(layout.weights_shape) / float(1 << DEFAULT_BITS)
        return Repair(weights, fixed.method, fixed.loss)
    finally:
        _POLISHING.reset(token)


def polishing() -> bool:
    """True inside :func:`repair_solution` (its re-solves keep their own status)."""
    return _POLISHING.get()


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
        if solver not in ("auto", "highs"):
            raise ValueError(f"solver must be 'auto' or 'highs' for privacy='composed' (its LPs); got {shown(solver)}")
        _no_mip_gap(mip_gap, "privacy='composed' solves LPs only (HiGHS options apply to them)")
        return cached(
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

        res, out = _settle_noise(design, model, solver, time_limit, mip_gap, verbose, options, concurrent)
        if canonical:
            if out is None:  # the PMF is a repair of the solver's, not a vertex the stages can start from
                res.canonical = False
                res.message = f"{res.message}; canonical stages skipped (the solver's PMF needed a repair)"
            else:
                res = _canonical(design, model, out, res, stage)
        return res

    return cached(design, cache, opts, lambda data: DesignResult.from_dict(data, design=design, recheck=False), compute)


def _proved(model: LinearModel, out: SolverOutput) -> SolverOutput:
    """An LP output whose weak-duality gap exceeds ``OPTIMAL_GAP``, with the tighter bound of its basis.

    HiGHS' own multipliers are accurate to an absolute tolerance; where the optimum spans
    many orders of magnitude that leaves a gap of ~1e-6 even at the optimum. The optimal
    basis, found again in variables scaled by the solution, gives the bound its accuracy
    back (:func:`proof_dual`).
    """
    if model.is_mip or out.status != "optimal" or out.x is None or out.objective is None:
        return out
    if out.gap is not None and out.gap <= OPTIMAL_GAP:
        return out
    proof = proof_dual(model, out.x)
    if proof is None or (out.bound is not None and proof[0] <= out.bound):
        return out
    return replace(out, bound=proof[0], gap=relative_gap(out.objective, proof[0]), dual=proof[1])


def _needs_retry(design: NoiseDesign, res: DesignResult) -> bool:
    return res.status in (UNVERIFIED, "error") or (res.status == "infeasible" and design.uniform_is_feasible())


def _settle_noise(
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
    """The settled result of ``model``, and the solver output it comes from (``None`` when repaired).

    Robust HiGHS re-solves after a spurious status, the repair of an unverified
    PMF (:func:`repair_solution`), and ``"infeasible"`` turned into ``"error"``
    when the uniform PMF is feasible. ``repair=False`` leaves an unverified PMF as it is.
    """

    def attempt(extra: dict[str, Any] | None) -> tuple[DesignResult, SolverOutput]:
        opt = {**(options or {}), **(extra or {})} or None
        out = _proved(model, backend_solve(model, solver, time_limit, mip_gap, verbose, opt, concurrent=concurrent))
        return _result(design, model, out, solver, out.info["backend_objective"]), out

    res, out = attempt(None)
    used: SolverOutput | None = out
    if _needs_retry(design, res) and solver in ("highs", "auto"):
        first, spent = res, res.solve_time
        # a clamped design's pure-DP tails are ~1e-11 masses, which dual simplex leaves within its
        # tolerance of a zero neighbour; interior point with crossover meets those rows to ~1e-16
        clamp_lp = not design.rel.cyclic and not model.is_mip and "solver" not in (options or {})
        for extra in (({"solver": "ipm"},) if clamp_lp else ()) + ROBUST_RETRIES:
            again, out = attempt(extra)
            spent += again.solve_time
            note = f"re-solved with HiGHS options {extra} after status {first.status!r}" + (
                f" ({first.message})" if first.message else ""
            )
            if not _needs_retry(design, again):
                again.message = f"{again.message}; {note}"
                res, used = again, out
                break
            if res.pmf is None and again.pmf is not None:
                # no verified PMF yet, but one to repair is better than a spurious "infeasible"
                again.message = f"{again.message}; {note}"
                res, used = again, out
        res.solve_time = spent
    if repair and res.status == UNVERIFIED and design.objective == "distortion" and not polishing():
        repaired = _repaired_noise(design, res, solver)
        if repaired is not None:
            res, used = repaired, None
    if res.status == "infeasible" and design.uniform_is_feasible():
        res.status = "error"
        res.message = (
            "the solver reported 'infeasible', but the uniform PMF is feasible: a numerical failure, not "
            f"infeasibility (robust re-solves failed too); solver said: {res.message}"
        )
    return res, used


def _repaired_noise(design: NoiseDesign, res: DesignResult, solver: str) -> DesignResult | None:
    """The repair of an unverified noise result (:func:`repair_solution`), or ``None``.

    Its status is settled like any result's: ``"optimal"`` when its gap to the proven bound
    (the repair's own, or the solver's) is within ``OPTIMAL_GAP``.
    """
    if res.pmf is None or res.distortion is None:
        return None
    d0 = float(res.distortion)
    fixed = repair_solution(design, res.pmf, d0)
    if fixed is None:
        return None
    change = (fixed.loss - d0) / max(1.0, abs(d0))
    exact = "exact " if design.rel.cyclic and fixed.bound is None else ""
    out = DesignResult(
        design=design,
        status="optimal",
        pmf=fixed.solution,
        solver=solver,
        solve_time=res.solve_time,
        model_size=res.model_size,
        gap=max(float(res.gap or 0.0), change, 0.0),
        bound=fixed.bound if fixed.bound is not None else res.bound,
        dual=fixed.dual if fixed.bound is not None else res.dual,
        message=(
            f"the solver's PMF failed re-verification ({res.message}); replaced by its {exact}repair "
            f"({fixed.method}, relative distortion change {change:.3g})"
        ),
        backend_objective=res.backend_objective,
    )
    return out if out.status in ("optimal", "feasible") else None


def _result(
    design: NoiseDesign,
    model: LinearModel,
    out: SolverOutput,
    solver: str,
    backend_objective: float | None,
    canonical: bool | None = None,
) -> DesignResult:
    """The :class:`DesignResult` of one solver output (PMF clipped, renormalised and re-verified)."""
    pmf = None
    if out.x is not None:
        raw = out.x[model.block("f")]
        # Solver round-off can leave -1e-12 entries; the PMF is reported clipped and renormalised.
        clipped = np.clip(raw, 0.0, None)
        if np.all(np.isfinite(clipped)) and clipped.sum() > 0:
            pmf = (clipped / clipped.sum()).reshape(design.shape)
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
    out = solve_composed(design, solver=solver, time_limit=time_limit, verbose=verbose, options=options)
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


def solve_lp(
    model: LinearModel,
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    verbose: bool,
    options: dict[str, Any] | None,
    always_feasible: bool,
    concurrent: bool = True,
) -> Any:
    """:func:`~optnoise.engine.solve.solve_model`, choosing HiGHS' LP algorithm when the caller did not.

    Measured on these LPs (``benchmarks/RESULTS.md``): dual simplex is fastest
    up to ~20,000 rows; beyond, and for small eps, interior point is several
    times faster, and dual simplex sometimes stops with "excessive primal
    values" (a solve error) where interior point solves. So large LPs use
    interior point (with crossover, a vertex). A solve error, or an
    ``"infeasible"`` where uniform rows are feasible (``always_feasible``), is
    retried with the other algorithm and then with presolve off. ``"auto"``
    solves LPs as ``"highs"`` does and races MILPs (``concurrent``).
    """
    if solver == "auto" and not model.is_mip:
        solver = "highs"

    def run(opts: dict[str, Any] | None) -> Any:
        return backend_solve(model, solver, time_limit, mip_gap, verbose, opts, concurrent=concurrent)

    def spurious(out: Any) -> bool:
        return out.status == "error" or (always_feasible and out.status == "infeasible")

    if solver != "highs":
        return run(options)
    first = options
    if (
        not model.is_mip
        and not (options and "solver" in options)
        and model.lp_algorithm is None
        and model.shape[0] >= IPM_ROWS
    ):
        first = {**(options or {}), "solver": "ipm"}
    out = run(first)
    if not spurious(out):
        return out
    retries = [{**(options or {}), "presolve": "off"}]
    if not model.is_mip:
        other = "simplex" if (first or {}).get("solver") == "ipm" else "ipm"
        retries.insert(0, {**(options or {}), "solver": other})
    spent, notes = out.solve_time, [f"{out.status} ({out.message})"]
    for extra in retries:
        again = run(extra)
        spent += again.solve_time
        if not spurious(again):
            again.message = f"{again.message}; re-solved with HiGHS options {extra} after {'; '.join(notes)}"
            again.solve_time = spent
            return again
        notes.append(f"{again.status} with {extra}")
    out.solve_time = spent
    return out
