"""Canonical optima: one well-defined member of a set of tied LP/MILP optima.

Many noise-design problems have a whole face of optimal PMFs: only ``f(0)``
is unique in the linear regions of Theorems 2-3 and in Theorem 3(c)'s last
segment (Kadam et al. 2024), and the tails of a PMF with ``delta > 0`` can
often be rearranged. A solver returns whichever vertex its pivoting reaches.
:func:`lexicographic_minimax` replaces that vertex by a canonical one: among
the solutions whose primary objective is optimal (within a tolerance), the
one whose masses, sorted from the largest down, are lexicographically
smallest: the largest mass is as small as possible, then the second largest,
and so on ("the most even optimum").

Why this criterion and not a linear secondary distortion (such as the
circular MSE): the paper's own choice where it makes one, Theorem 3(c)'s
``f(0) = delta``, ``f(eta) = (1-delta)/n`` (40)-(41), lies in the relative
interior of the optimal face (every privacy inequality between two non-zero
noise values is slack there), and the optimum of a linear objective over a
face is attained at a vertex of it, so no linear secondary can return it
(minimising the circular MSE at ``n=8, mu_bar=3, eps=1.5, delta=0.6``
returns ``f(8) = 0.247`` and ``f(6) = 0.003``). Lexicographic minimax
returns (40)-(41) there, since the masses ``f(eta), eta != 0`` sum to
``1 - delta`` and the largest of them is smallest when they are equal, and
elsewhere it spreads any mass the optimum leaves free evenly over the values
that can take it, which gives flat steps (a staircase). It is also invariant
under relabellings that preserve the problem (a reflection-symmetric problem
gets a symmetric canonical PMF).

Uniqueness. Over a convex feasible set (every LP) the lexicographic minimax
point is unique (the argument for the uniqueness of the nucleolus,
Schmeidler 1969), so the canonical PMF depends neither on the solver nor on
its tie-breaking. For a MILP the sorted vector is unique; the point is too
unless two integer patterns reach the same sorted vector.

Formulation. Stage k minimises ``T_k(f)``, the sum of the k largest entries
of ``f``, which is a linear program (Ogryczak and Tamir 2003)::

    T_k(f) = min_t  k t + sum_i max(0, f_i - t)

with one free ``t_k`` and excess variables ``p_{k,i} >= f_i - t_k``. Every
stage keeps the primary objective at its first-stage value and the earlier
``T_j`` at their optima, each to the backend's feasibility tolerance
(:data:`CANONICAL_TOL`). Stages stop early once the remaining
masses of the current solution are equal (for a block with a fixed sum, no
later stage can then improve on it) or zero.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from optnoise.engine.model import LinearModel, ModelBuilder
from optnoise.engine.output import SolverOutput
from optnoise.engine.tolerance import FEASIBILITY_TOL

__all__ = ["CANONICAL_TOL", "CanonicalOutcome", "lexicographic_minimax"]

#: How closely the canonical stages hold the objectives fixed before them (relative to
#: ``max(1, |value|)``): each is imposed as ``<= the value the previous solution attains``, with
#: no slack added, so it holds to the backend's feasibility tolerance, 1e-9 for HiGHS. No slack
#: on purpose: the stages use whatever they are given (with 1e-9 the error rate 0.4 of Table 1
#: at delta = 0.6 comes back as 0.400000001; with 1e-12 a zero mass of Fig. 14a comes back as
#: 6e-12), while without it the primary objective comes back to ~1e-15 and zeros stay zero.
#: Each stage starts from the previous solution (a MIP start), which keeps it feasible.
CANONICAL_TOL = FEASIBILITY_TOL


@dataclass
class CanonicalOutcome:
    """What :func:`lexicographic_minimax` returns.

    Attributes
    ----------
    x : ndarray or None
        The canonical solution (the original model's columns only); ``None``
        when a stage failed.
    stages : int
        Stages solved (successfully or not).
    solve_time : float
        Seconds spent in the stages' solvers.
    message : str
        ``""`` on success; otherwise which stage failed and how.
    """

    x: np.ndarray | None
    stages: int
    solve_time: float
    message: str = ""


def _slack(value: float, tol: float) -> float:
    return tol * max(1.0, abs(value))


def lexicographic_minimax(
    model: LinearModel,
    x: np.ndarray,
    block: str,
    solve: Callable[[LinearModel, np.ndarray], SolverOutput],
    *,
    total: float | None = None,
    slack: float = 0.0,
) -> CanonicalOutcome:
    """Refine an optimum ``x`` of ``model`` to the lexicographic minimax optimum of one variable block.

    Parameters
    ----------
    model : LinearModel
        The first-stage model; ``x`` is an optimal solution of it.
    x : ndarray
        The first-stage solution (its objective ``model.c @ x + offset`` is kept).
    block : str
        The variable block whose sorted entries are minimised (e.g. ``"f"``, the PMF).
    solve : callable
        ``solve(stage_model, start)`` solves one stage with the caller's backend,
        options and time budget; ``start`` is the previous stage's solution,
        completed for the new variables, a feasible point (a MIP start: without
        one, HiGHS' presolve has declared feasible stages infeasible).
    total : float, optional
        The fixed sum of the block in every feasible point (1 for a PMF); enables the
        early stop when the remaining entries are equal.
    slack : float
        Added to every fixed objective, times ``max(1, |value|)``; 0 (see :data:`CANONICAL_TOL`).
    """
    cols = model.block(block)
    N = cols.size
    primary = float(model.c @ x + model.offset)
    mb = ModelBuilder.from_model(model)
    nz = np.nonzero(model.c)[0]
    if nz.size:
        mb.add_row(nz, model.c[nz], upper=primary - model.offset + _slack(primary, slack))
    spent, stages = 0.0, 0
    current = np.asarray(x, dtype=float)
    for k in range(1, N):
        fk = np.sort(current[cols])[::-1]
        rest = fk[k - 1 :]
        if rest[0] <= CANONICAL_TOL or (total is not None and rest[0] - rest[-1] <= CANONICAL_TOL):
            break  # the k-th and all later masses are zero, or all equal: no later stage can change them
        t = mb.add_vars(1, lb=-np.inf, ub=np.inf)
        p = mb.add_vars(N, lb=0.0, ub=np.inf)
        # f_i - t_k - p_{k,i} <= 0
        mb.add_rows(
            np.repeat(np.arange(N), 3),
            np.stack([cols, np.repeat(t, N), p], 1).ravel(),
            np.tile([1.0, -1.0, -1.0], N),
            upper=0.0,
        )
        tk_cols = np.concatenate([t, p])
        tk_vals = np.concatenate([[float(k)], np.ones(N)])
        mb.set_objective(tk_cols, tk_vals)
        mb_obj = np.zeros(mb.num_vars)
        mb_obj[tk_cols] = tk_vals
        stages += 1
        # The previous solution with t_k = its k-th largest mass and the excesses above it: feasible, optimal so far.
        start = np.concatenate([current, [fk[k - 1]], np.maximum(current[cols] - fk[k - 1], 0.0)])
        out = solve(mb.build(), start)
        spent += out.solve_time
        if out.status != "optimal" or out.x is None:
            return CanonicalOutcome(None, stages, spent, f"canonical stage {k} ended {out.status!r} ({out.message})")
        value = float(mb_obj @ out.x)
        mb.add_row(tk_cols, tk_vals, upper=value + _slack(value, slack))
        current = out.x
    return CanonicalOutcome(current[: model.shape[1]].copy(), stages, spent)
