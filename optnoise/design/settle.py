"""The one solve sequence of every LP/MILP design: solve, re-solve robustly, repair, settle the status.

Noise designs (:func:`optnoise.design.pipeline.solve_noise`) and mechanism designs
(:meth:`optnoise.MechanismDesign.solve`, around its lazy-row loop) run the same steps, written
once in :func:`settle`:

1. one solve with the chosen backend (:func:`backend_solve`: a backend whose points are read
   back with ~8 digits has them refined by HiGHS; an LP on a backend that takes HiGHS options
   starts with the algorithm its model asks for, :func:`first_options`);
2. on a *spurious* outcome (``"unverified"``, ``"error"``, or ``"infeasible"`` where a feasible
   point is known), robust HiGHS re-solves in the order of :func:`retry_plan`: the other LP
   algorithm (interior point with crossover meets the rows of tiny pure-DP tails beside zeros to
   ~1e-16, where dual simplex leaves them within its tolerance), then :data:`ROBUST_RETRIES`;
   on a large model (:data:`IPM_ROWS` rows or more) an unverified solution is repaired *before*
   the re-solves, which there cost minutes where the repair costs seconds;
3. an ``"unverified"`` solution is replaced by its repair when that costs at most
   :data:`REPAIR_RTOL` (:func:`repair_solution`, then :func:`repaired_result`), its status
   settled like any result's;
4. an ``"infeasible"`` where a feasible point is known (uniform noise, uniform rows) becomes
   ``"error"``: a numerical failure, not infeasibility.

Statuses are settled by the results themselves (:mod:`optnoise.privacy.verification`), and a
proof of optimality within :data:`~optnoise.engine.tolerance.OPTIMAL_GAP` by
:func:`optnoise.engine.tolerance.settle_gap`; nothing here re-states either rule.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from optnoise.design.clamp import clamp_repair
from optnoise.design.repair import DEFAULT_BITS, RepairFailed, exact_repair, prepare, pure_envelope, solution_of
from optnoise.engine.backends import backend, backend_of_output
from optnoise.engine.highs import LP_ALGORITHMS, basis_dual, refine_with_highs
from optnoise.engine.model import LinearModel
from optnoise.engine.output import SolverOutput, relative_gap
from optnoise.engine.solve import solve_model
from optnoise.engine.tolerance import OPTIMAL_GAP, proven_optimal
from optnoise.privacy.verification import UNVERIFIED, within_delta

__all__ = [
    "IPM_ROWS",
    "PURE_REPAIR_DELTA",
    "REPAIR_RTOL",
    "ROBUST_RETRIES",
    "Repair",
    "backend_solve",
    "first_options",
    "normalised_rows",
    "proof_dual",
    "proved",
    "repair_solution",
    "repaired_result",
    "repairing",
    "retry_plan",
    "settle",
]

#: Largest relative loss increase a repaired result may have and still be called optimal.
REPAIR_RTOL = 1e-6
#: HiGHS settings of the robust re-solves after a spurious status, after the other LP algorithm.
ROBUST_RETRIES: tuple[dict[str, Any], ...] = (
    {"presolve": "off"},
    {"presolve": "off", "primal_feasibility_tolerance": 1e-10, "simplex_scale_strategy": 4},
)
#: LPs with at least this many rows start with HiGHS' interior point method, and an unverified
#: solution of a model this large is repaired before any re-solve. Measured on mechanism LPs
#: (``benchmarks/RESULTS.md``): dual simplex is fastest up to ~20,000 rows; beyond, and for small
#: eps, interior point is several times faster, and dual simplex sometimes stops with "excessive
#: primal values" where interior point solves.
IPM_ROWS = 20_000
#: Largest delta at which an unverified noise PMF is repaired to pure DP (the proof of optimality
#: against the delta problem's own dual bound decides whether the repair is accepted).
PURE_REPAIR_DELTA = 1e-9
#: Set while an unverified result is being repaired, so that the repair's re-solves are not repaired again.
_REPAIRING: contextvars.ContextVar[bool] = contextvars.ContextVar("optnoise_repairing", default=False)


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
    """One solve with the chosen backend; a point of a backend without exact points is refined by HiGHS.

    ``info["backend_objective"]`` is the backend's own objective, before any refinement.
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
    produced = backend_of_output(out.solver)
    if out.x is not None and (produced is None or not produced.exact_points):
        # PDP indicators are re-verified with a ~1e-6 eps slack, finer than PuLP's ~8-digit solution files.
        out = refine_with_highs(model, out)
    return replace(out, info={**out.info, "backend_objective": out.info.get("backend_objective", out.objective)})


def first_options(model: LinearModel, solver: str, options: dict[str, Any] | None) -> dict[str, Any] | None:
    """The HiGHS options of the first solve: the LP algorithm the model asks for, unless the caller chose one.

    A model states its algorithm (:attr:`LinearModel.lp_algorithm`); the ``"auto"`` backend reads
    it itself, ``"highs"`` is told here. Other backends take no HiGHS options.
    """
    if model.is_mip or model.lp_algorithm is None or "solver" in (options or {}):
        return options
    if not backend(solver).highs_options:
        return options
    return {**(options or {}), "solver": LP_ALGORITHMS[model.lp_algorithm]}


def retry_plan(is_mip: bool, lp_algorithm: str | None, options: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The robust re-solves after a spurious outcome, in order (module docstring, step 2).

    The other LP algorithm than the first solve's (when the caller did not fix one), then
    :data:`ROBUST_RETRIES`; each on top of the caller's ``options``.
    """
    base = dict(options or {})
    plan: list[dict[str, Any]] = []
    if not is_mip and "solver" not in base:
        plan.append({**base, "solver": "simplex" if lp_algorithm == "ipm" else "ipm"})
    return plan + [{**base, **extra} for extra in ROBUST_RETRIES]


def normalised_rows(values: np.ndarray, rows: int = 1) -> np.ndarray | None:
    """Solver values as probabilities: clipped at 0 and renormalised per row, ``(rows, -1)``.

    Solver round-off can leave -1e-12 entries; ``None`` when a value is not finite or a row has no mass.
    """
    clipped = np.clip(np.asarray(values, dtype=float).reshape(rows, -1), 0.0, None)
    sums = clipped.sum(axis=1, keepdims=True)
    if not (np.all(np.isfinite(clipped)) and np.all(sums > 0)):
        return None
    return clipped / sums


def proof_dual(
    model: LinearModel, x: np.ndarray | None, time_limit: float | None = None
) -> tuple[float, np.ndarray] | None:
    """A tight LP bound ``(bound, multipliers)`` from the optimal basis near ``x`` (:func:`~.highs.basis_dual`).

    ``None`` also when its re-solve does not finish within ``time_limit`` seconds.
    """
    if model.is_mip or x is None:
        return None
    scale = np.maximum(np.abs(np.asarray(x, dtype=float)), 1e-300)
    y = basis_dual(model, scale, time_limit=time_limit)
    bound = None if y is None else model.dual_bound(y)
    return None if bound is None or y is None else (bound, y)


def proved(model: LinearModel, out: SolverOutput) -> SolverOutput:
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


@dataclass
class Repair:
    """A verified replacement of an unverified solution (:func:`repair_solution`).

    ``loss`` is its objective; ``bound`` a proven lower bound when the repair proves one
    (the pure-DP envelope does), else ``None`` (the solver's bound still holds). ``exact``:
    found by the exact repair (:func:`optnoise.design.repair.exact_repair`).
    """

    solution: np.ndarray
    method: str
    loss: float
    bound: float | None = None
    dual: np.ndarray | None = None
    exact: bool = False


def repair_solution(design: Any, solution: np.ndarray, base: float) -> Repair | None:
    """A verified solution within :data:`REPAIR_RTOL` of an unverified one, or ``None``.

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
      ``REPAIR_RTOL`` relative to ``base``; its exact solution passes the float rule a fortiori;
    * clamped noise is repaired as a noise PMF, by mixing with strictly private clamped
      noise (:func:`optnoise.design.clamp.clamp_repair`).
    """
    token = _REPAIRING.set(True)  # the repair's own re-solves are not repaired again
    try:
        if not getattr(getattr(design, "rel", None), "cyclic", True):  # a clamp release (mechanisms have none)
            target = float(design.delta or 0.0)
            pmf = clamp_repair(
                solution,
                design.n,
                design.eps,
                lambda p: within_delta(design.clamp_evaluation(p)[1][design.privacy], target),
                lambda p: design.clamp_evaluation(p)[0] - base <= REPAIR_RTOL * max(1.0, abs(base)),
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
                gap = None if proof is None else relative_gap(cost, proof[0])
                if proof is not None and proven_optimal(gap):
                    shaped = lifted.reshape(layout.weights_shape)
                    return Repair(shaped, "pure-DP envelope", cost, bound=proof[0], dual=proof[1])
        try:
            fixed = exact_repair(design, p, base=base, target=target, max_loss=REPAIR_RTOL, solver="highs")
        except RepairFailed:
            return None
        weights = np.asarray(fixed.weights, dtype=float).reshape(layout.weights_shape) / float(1 << DEFAULT_BITS)
        return Repair(weights, fixed.method, fixed.loss, exact=True)
    finally:
        _REPAIRING.reset(token)


def repairing() -> bool:
    """True inside :func:`repair_solution` (its re-solves keep their own status)."""
    return _REPAIRING.get()


def _value(res: Any) -> float | None:
    """The loss a result's solution has: a noise result's distortion, a mechanism result's loss."""
    value = getattr(res, "distortion", None)
    return value if value is not None else getattr(res, "loss", None)


def repaired_result(design: Any, res: Any) -> Any:
    """``res`` with its unverified solution replaced by its repair (:func:`repair_solution`), or ``None``.

    The repaired result is re-verified and settled like any result: ``"optimal"`` when its gap to
    the proven bound (the repair's own, or the solver's) is within ``OPTIMAL_GAP``.
    """
    solution, base = solution_of(res), _value(res)
    if solution is None or base is None:
        return None
    base = float(base)
    fixed = repair_solution(design, solution, base)
    if fixed is None:
        return None
    change = (fixed.loss - base) / max(1.0, abs(base))
    kind = "matrix" if getattr(res, "matrix", None) is not None else "PMF"
    measure = "loss" if kind == "matrix" else "distortion"
    out = replace(
        res,
        status="optimal",
        **{"matrix" if kind == "matrix" else "pmf": fixed.solution},
        gap=max(float(res.gap or 0.0), change, 0.0),
        bound=fixed.bound if fixed.bound is not None else res.bound,
        dual=fixed.dual if fixed.bound is not None else res.dual,
        message=(
            f"the solver's {kind} failed re-verification ({res.message}); replaced by its "
            f"{'exact ' if fixed.exact else ''}repair ({fixed.method}, relative {measure} change {change:.3g})"
        ),
    )
    return out if out.status in ("optimal", "feasible") else None


def _spurious(res: Any, feasible: str | None) -> bool:
    return res.status in (UNVERIFIED, "error") or (res.status == "infeasible" and feasible is not None)


def settle(
    attempt: Callable[[dict[str, Any] | None], tuple[Any, SolverOutput | None]],
    *,
    is_mip: bool,
    lp_algorithm: str | None,
    solver: str,
    options: dict[str, Any] | None,
    repair: Callable[[Any], Any] | None,
    feasible: str | None,
) -> tuple[Any, SolverOutput | None]:
    """The settled result of a design's solve, and the solver output it comes from (``None`` when repaired).

    Parameters
    ----------
    attempt : callable
        ``attempt(options)`` solves the design with these HiGHS options (each model with
        :func:`first_options`) and returns its result (a :class:`~optnoise.DesignResult` or
        :class:`~optnoise.MechanismResult`) and the solver output behind it.
    is_mip, lp_algorithm
        Whether the design's models have integers, and the LP algorithm they start with
        (``None``: HiGHS' default, dual simplex): :func:`retry_plan`.
    solver, options
        The backend, and the caller's HiGHS options the re-solves build on.
    repair : callable or None
        ``repair(result)``: the repaired result or ``None`` (:func:`repaired_result`); ``None``
        where no repair applies (a minimised delta or eps).
    feasible : str or None
        Why ``"infeasible"`` cannot be right (``"the uniform PMF is feasible"``), when a feasible
        point is known; ``None`` otherwise.
    """
    res, used = attempt(options)
    repair = None if repairing() else repair
    tried = None  # a result whose repair was tried and failed
    if repair is not None and res.status == UNVERIFIED and (res.model_size or {}).get("rows", 0) >= IPM_ROWS:
        fixed = repair(res)
        if fixed is not None:
            return fixed, None
        tried = res
    if _spurious(res, feasible) and backend(solver).highs_options:
        first, spent = res, res.solve_time
        for extra in retry_plan(is_mip, lp_algorithm, options):
            again, out = attempt(extra)
            spent += again.solve_time
            note = f"re-solved with HiGHS options {extra} after status {first.status!r}" + (
                f" ({first.message})" if first.message else ""
            )
            if not _spurious(again, feasible):
                again.message = f"{again.message}; {note}"
                res, used = again, out
                break
            if solution_of(res) is None and solution_of(again) is not None:
                # no verified solution yet, but one to repair is better than a spurious "infeasible"
                again.message = f"{again.message}; {note}"
                res, used = again, out
        res.solve_time = spent
    if repair is not None and res.status == UNVERIFIED and res is not tried:
        fixed = repair(res)
        if fixed is not None:
            res, used = fixed, None
    if res.status == "infeasible" and feasible is not None:
        res.status = "error"
        res.message = (
            f"the solver reported 'infeasible', but {feasible}: a numerical failure, not infeasibility "
            f"(robust re-solves failed too); solver said: {res.message}"
        )
    return res, used
