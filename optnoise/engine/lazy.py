"""LPs with lazy rows: rows added only once a solution violates them."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from optnoise.engine import highs, race
from optnoise.engine.highs import LP_ALGORITHMS, highs_output
from optnoise.engine.model import LinearModel
from optnoise.engine.output import SolverOutput, relative_gap
from optnoise.engine.solve import SOLVERS, solve_model
from optnoise.engine.tolerance import MIP_REL_GAP
from optnoise.engine.validation import check_choice, check_positive

__all__ = ["solve_with_cuts", "split_rows", "with_cuts"]


def split_rows(full: LinearModel, lazy: np.ndarray) -> tuple[LinearModel, Any, np.ndarray]:
    """``full`` without its rows ``lazy``, and those rows as cut rows ``(cuts, cut_upper)`` for :func:`solve_with_cuts`.

    The rows must be one-sided (``<=``): cut rows are ``cuts @ x <= cut_upper``.
    """
    lazy = np.asarray(lazy, dtype=np.int64)
    if not np.all(np.isneginf(full.row_lower[lazy])):
        raise AssertionError("lazy rows must be one-sided (<=)")
    on = np.setdiff1d(np.arange(full.shape[0]), lazy)
    model = replace(full, A=full.A[on], row_lower=full.row_lower[on], row_upper=full.row_upper[on])
    return model, full.A[lazy], full.row_upper[lazy]


def with_cuts(model: LinearModel, cuts: Any, cut_upper: np.ndarray, rows: np.ndarray) -> LinearModel:
    """``model`` plus the cut rows ``rows``, after its own rows (as :func:`solve_with_cuts` solves it)."""
    import scipy.sparse as sp

    return replace(
        model,
        A=sp.vstack([model.A, cuts[rows]], format="csr"),
        row_lower=np.concatenate([model.row_lower, np.full(len(rows), -np.inf)]),
        row_upper=np.concatenate([model.row_upper, cut_upper[rows]]),
    )


def solve_with_cuts(
    model: LinearModel,
    cuts: Any,
    cut_upper: np.ndarray,
    *,
    solver: str = "auto",
    time_limit: float | None = None,
    tol: float = 1e-9,
    concurrent: bool = True,
    separate: Callable[[np.ndarray], np.ndarray] | None = None,
    options: Mapping[str, Any] | None = None,
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
    :data:`~optnoise.engine.race.AUTO_SOLO_SECONDS`, a second process solves the LP with every row at once (interior
    point with crossover), and whichever finishes first wins. Lazy rows win when few rows bind
    (permute-and-flip at eps >= 0.5), all rows at once when the rounds need many dual simplex
    iterations (eps = 0.1); see ``benchmarks/RESULTS.md``. ``concurrent=False`` keeps it in
    this process.

    ``separate(x)``, when given, replaces the rule "every row violated by more than ``tol``": it
    returns the indices of the cut rows to add at the solution ``x`` (those already added are
    ignored), and the rounds end when it returns none. Every round still solves a relaxation of
    the full LP, so its weak-duality bound is valid whatever ``separate`` returns; the final
    solution is the full LP's optimum only if ``separate`` returns nothing only when ``x`` can be
    completed into a feasible point of the full LP at the same objective (the caller's claim).

    ``options`` are raw HiGHS options (:func:`~optnoise.engine.highs.highs_instance`) for the
    first round, or for every solve with another backend; a ``"solver"`` among them replaces
    the model's LP algorithm in the first round. Later HiGHS rounds use the dual simplex (the
    warm start needs a basis), except after an interior point without crossover
    (``{"solver": "ipm", "run_crossover": "off"}``), which leaves no basis: every round then
    runs it (its multipliers still prove each round's bound).

    A round that ends without an optimum (a time limit) leaves the bound proved so far: every
    round's multipliers prove a lower bound on the full LP by weak duality (its rows are a subset
    of the full LP's), so ``out.bound`` is then the largest of the bounds proved by the last
    optimal round and by the interrupted round's multipliers (HiGHS' dual simplex keeps them dual
    feasible), or ``None``; ``out.info["bound_round"]`` says which round proved it.

    Returns
    -------
    (SolverOutput, ndarray, int)
        The final solve (``solve_time``: seconds over all rounds), the indices of the cut rows in
        the final model, in the order they follow the model's rows there (so that ``out.dual``
        lines up with ``model`` plus ``cuts[added]``; all of them when the all-rows solve won),
        and the number of rounds.
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
        return with_cuts(model, cuts, cut_upper, rows)

    t_start = time.perf_counter()
    deadline = None if time_limit is None else time.time() + time_limit
    added = np.zeros(0, dtype=np.int64)
    rounds, spent = 0, 0.0
    h = None
    racing = solver == "auto" and concurrent and cuts.shape[0] > 0
    other: race.ChildSolve | None = None
    if solver in ("highs", "auto"):
        h = highs.highs_instance(model, time_limit=time_limit, options=options)
        h.HandleUserInterrupt = True
        if solver == "auto" and "solver" not in (options or {}):
            h.setOptionValue("solver", LP_ALGORITHMS[model.lp_algorithm or "simplex"])

    def run_highs() -> SolverOutput | None:
        """One HiGHS round; ``None`` when the all-rows process proved the optimum first."""
        nonlocal other
        assert h is not None
        t0 = time.perf_counter()
        h.startSolve()
        while not h.wait(0.05)[0]:
            if racing and other is None and time.perf_counter() - t_start >= race.AUTO_SOLO_SECONDS:
                all_rows = np.arange(cuts.shape[0])
                other = race.ChildSolve(
                    "highs", with_rows(all_rows), deadline, MIP_REL_GAP, False, options={"solver": "ipm"}
                )
            if other is not None and other is not race.NO_CHILD:
                done = other.poll(0.0)
                if done is not None and done.status == "optimal":
                    h.cancelSolve()
                    h.wait()
                    won.append(done)
                    return None
                if done is not None:
                    other.stop()
                    other = race.NO_CHILD
        return highs_output(h, model, time.perf_counter() - t0)

    won: list[SolverOutput] = []
    given = dict(options or {})
    no_basis = given.get("solver") == "ipm" and given.get("run_crossover") == "off"
    proved: list[tuple[int, np.ndarray, np.ndarray]] = []  # (round, multipliers, the cut rows it had)
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
                out = solve_model(with_rows(added), solver=solver, time_limit=remaining, options=options)
            spent += out.solve_time
            rounds += 1
            if out.dual is not None:
                proved.append((rounds, out.dual, added))
            if out.status != "optimal" or out.x is None:
                break
            if separate is None:
                viol = np.nonzero(cuts @ out.x - cut_upper > tol)[0]
            else:
                viol = np.asarray(separate(out.x), dtype=np.int64)
            new = np.setdiff1d(viol, added)
            if not new.size:
                break
            added = np.concatenate([added, new])  # in the order of the model's rows: out.dual lines up
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
                if not no_basis:
                    # A basis optimal before the new rows stays dual feasible: the dual simplex resumes from it.
                    h.setOptionValue("solver", "simplex")
                    h.setOptionValue("simplex_strategy", 1)
    finally:
        if other is not None and other is not race.NO_CHILD:
            other.stop()
    if racing and other is not None:
        spent = time.perf_counter() - t_start  # wall clock: two processes worked
    if out.status != "optimal":
        out = _with_proved_bound(out, proved[-2:], with_rows)
    return replace(out, solve_time=spent), added, rounds


def _with_proved_bound(
    out: SolverOutput,
    proved: list[tuple[int, np.ndarray, np.ndarray]],
    with_rows: Callable[[np.ndarray], LinearModel],
) -> SolverOutput:
    """``out`` with the largest weak-duality bound of the rounds in ``proved`` (:func:`solve_with_cuts`)."""
    best: tuple[float, int] | None = None
    for r, dual, rows in proved:
        b = with_rows(rows).dual_bound(dual)
        if b is not None and (best is None or b > best[0]):
            best = (b, r)
    if best is None:
        return out
    return replace(
        out,
        bound=best[0],
        gap=relative_gap(out.objective, best[0]),
        info={**out.info, "bound_round": best[1]},
    )
