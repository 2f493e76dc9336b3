"""The additive release's LP at a support ``L``: the model, its relaxations with the rows that can bind, lazy rows.

:mod:`optnoise.design.additive` (module docstring there: the staircase tails, the aggregated entries, the
symmetry) builds and solves these. :func:`build` writes every privacy entry; :func:`relaxed_bound` proves a
bound at a wider support from the entries that can bind at a smaller support's optimum; :func:`lazy_solve`
starts from the entries that can bind at a seed and adds the rows its solutions need, in one HiGHS instance.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from optnoise.design.additive_eval import AdditiveResult, entries, notion_of, pair_rows, tail_weights
from optnoise.design.additive_renyi import orders_of
from optnoise.design.rows import add_pair_rows, hockey_sums
from optnoise.design.settle import backend_solve, proof_dual
from optnoise.engine.lazy import solve_with_cuts, split_rows, with_cuts
from optnoise.engine.model import LinearModel, ModelBuilder
from optnoise.engine.output import relative_gap
from optnoise.engine.progress import time_left
from optnoise.engine.tolerance import MIP_REL_GAP, OPTIMAL_GAP

__all__ = [
    "RELAX_ATOL",
    "RELAX_RTOL",
    "SEED_GROUP",
    "SEED_RTOL",
    "budget_pairs",
    "build",
    "lazy_solve",
    "model_size",
    "relaxed_bound",
]


def _symmetric(design: Any, L: int) -> bool:
    """Solve for a symmetric PMF only (LP notions, symmetric shifts and costs; module docstring)."""
    s = design.shifts
    return not notion_of(design).indicators and np.array_equal(np.sort(-s), s) and design.cost_of.symmetric(L)


def budget_pairs(design: Any) -> list[tuple[float, Any]]:
    """``[(eps, delta)]``; delta ``None`` when it is minimised (``objective="delta"``)."""
    return list(design.profile) if design.profile is not None else [(float(design.eps), design.delta)]


def model_size(design: Any, L: int) -> dict[str, int]:
    """Rows, columns, integers and nonzeros of the model at support ``L`` (an upper estimate, before building)."""
    K, P = design.shifts.size, design.period
    E = K * (2 * L + 4 * P + 1)  # entries, at most
    pairs = len(orders_of(design)[0]) if notion_of(design).renyi else len(budget_pairs(design))
    per = (3, 2, 1, 8) if notion_of(design).indicators else (1, 1, 0, 3)  # a leak indicator per entry: a MILP
    rows, cols = 1 + 8 * P + pairs * (per[0] * E + K), 2 * L + 1 + 8 * P + pairs * per[1] * E
    return {
        "rows": rows,
        "cols": cols,
        "integers": pairs * per[2] * E,
        "nonzeros": 2 * L + 1 + 24 * P + pairs * (per[3] + 1) * E,
    }


@dataclass
class _Columns:
    """Model columns of one support ``L``: ``F(x)`` and ``G(x) = F(x) / (1 - a)`` on ``-L-2P..L+2P``."""

    L: int
    F: np.ndarray
    G: np.ndarray
    f: np.ndarray  # the finite variables (x = -L..L, or 0..L when symmetric)
    symmetric: bool
    objective: tuple[np.ndarray, np.ndarray] = (np.zeros(0, np.int64), np.zeros(0))  # the distortion's columns


def build(design: Any, L: int) -> tuple[LinearModel, _Columns]:
    """The LP/MILP at support ``L`` (module docstring) and where its columns are."""
    mb, cols, (k, first_c, second_c) = _base(design, L)
    t = None
    if design.objective == "delta":  # delta a column, the distortion a row (optnoise.design.additive_delta)
        t = int(mb.add_vars(1, lb=0.0, ub=1.0, name="delta")[0])
        mb.add_row(*cols.objective, upper=design.max_distortion)
        mb.set_objective([t], [1.0])
    for eps, delta in budget_pairs(design):
        rows = "pure" if delta == 0.0 else pair_rows(design)
        budget = None if delta == 0.0 or t is not None else delta
        add_pair_rows(mb, first_c, second_c, k, eps=eps, notion=rows, delta=budget, t=t)
    return mb.build(), cols


def _base(design: Any, L: int) -> tuple[ModelBuilder, _Columns, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The model at support ``L`` before its privacy rows, and every privacy entry's shift and columns."""
    P, a = design.period, math.exp(-design.tail_eps)
    sym = _symmetric(design, L)
    mb = ModelBuilder()
    X = 2 * L + 4 * P + 1
    xs = np.arange(-L - 2 * P, L + 2 * P + 1)
    F = np.full(X, -1, dtype=np.int64)
    G = np.full(X, -1, dtype=np.int64)
    fin = np.abs(xs) <= L
    if sym:
        f = mb.add_vars(L + 1, lb=0.0, ub=1.0, name="f")
        F[fin] = f[np.abs(xs[fin])]
    else:
        f = mb.add_vars(2 * L + 1, lb=0.0, ub=1.0, name="f")
        F[fin] = f
    right = np.arange(L + 1, L + 2 * P + 1)
    sides = [right] if sym else [right, -right]
    for side in sides:
        Ft = mb.add_vars(2 * P, lb=0.0, ub=1.0, name="tail")
        Gt = mb.add_vars(2 * P, lb=0.0, ub=1.0 / (1.0 - a), name="tail_sum")
        F[side + L + 2 * P], G[side + L + 2 * P] = Ft, Gt
        back = side - P * np.sign(side)
        j = np.arange(2 * P)
        # F(x) = a F(x -+ P) and (1 - a) G(x) = F(x): the staircase and its geometric sum
        mb.add_rows(
            np.repeat(j, 2),
            np.stack([Ft, F[back + L + 2 * P]], 1).ravel(),
            np.tile([1.0, -a], 2 * P),
            lower=0.0,
            upper=0.0,
        )
        mb.add_rows(
            np.repeat(j, 2), np.stack([Gt, Ft], 1).ravel(), np.tile([1.0 - a, -1.0], 2 * P), lower=0.0, upper=0.0
        )
    if sym:
        F[: 2 * P] = F[::-1][: 2 * P]
        G[: 2 * P] = G[::-1][: 2 * P]
    cols = _Columns(L, F, G, f, sym)
    # the mass and the cost: finite part plus the first tail period's geometric sums
    c = design.cost_of
    first = np.concatenate([right[:P], -right[:P]])
    w = tail_weights(c, first, P, a)
    mass_cols = np.concatenate([F[fin], G[first + L + 2 * P]])
    mb.add_row(mass_cols, 1.0, lower=1.0, upper=1.0)
    cols.objective = (np.concatenate([F[fin], F[first + L + 2 * P]]), np.concatenate([c.fn(xs[fin]), w]))
    mb.set_objective(*cols.objective)
    k, p, q, win = entries(L, P, design.shifts)
    if sym:  # mu and -mu give the same rows for a symmetric PMF
        keep = design.shifts[k] > 0
        k, p, q, win = k[keep], p[keep], q[keep], win[keep]
    pick = lambda x, w_: np.where(w_, G[x + L + 2 * P], F[x + L + 2 * P])  # noqa: E731
    return mb, cols, (k, pick(p, win), pick(q, win))


#: Entries kept in the relaxation of :func:`relaxed_bound`: hockey-stick terms of the extended optimum above
#: ``-(RELAX_RTOL * p + RELAX_ATOL)``. Any choice keeps the bound valid; these keep it tight (measured at D = 16, 32).
RELAX_RTOL, RELAX_ATOL = 1e-9, 1e-12


#: Starting rows of :func:`lazy_solve` from a caller's seed (``lazy_seed``: a nearby mechanism, not an optimum at
#: ``L``), and of the continuous lower-bound LP (:mod:`optnoise.design.continuous_bound`): entries whose term is
#: above ``-SEED_RTOL * p`` in shifts whose hockey stick there is at least ``SEED_GROUP * delta`` (a shift with
#: slack needs none of its rows: :func:`_needed`). Any choice only changes the rows a solve starts with, never its
#: optimum. Measured on the lower bound at (1, 0.1), l1, m = 32, fixed K = 139: 18018 entries and 11.6 s CPU
#: without the group rule, 7967 and 3.8 s with it (0.9: 9225, 3.9 s; 0.99: 7259, 3.7 s), the same bound.
SEED_RTOL, SEED_GROUP = 0.05, 0.95


def _point(design: Any, n: int, cols: _Columns, x0: Any) -> np.ndarray:
    """The model's columns (``n`` of them) at the PMF ``x0`` (a function of the integers), tails included."""
    P = design.period
    f = x0(np.arange(-cols.L - 2 * P, cols.L + 2 * P + 1))
    x = np.zeros(n)
    x[cols.F] = f
    has_g = cols.G >= 0
    x[cols.G[has_g]] = f[has_g] / (1.0 - math.exp(-design.tail_eps))
    return x


def _restricted(
    design: Any, L: int, x0: Any, group: float | None = None
) -> tuple[LinearModel, _Columns, list[np.ndarray], Any]:
    """The model at ``L`` with the privacy entries that can bind at the PMF ``x0`` (a function of the integers).

    ``group``: keep only the entries of shifts whose hockey stick at ``x0`` is at least ``group * delta``
    (a shift with slack at an optimum has a zero multiplier, and so have its entries' rows).
    Returns the model, its columns, the kept entries of every budget, and a function giving every
    budget's hockey-stick terms at a point of the model's columns.
    """
    mb, cols, (k, first_c, second_c) = _base(design, L)
    x = _point(design, mb.num_vars, cols, x0)

    def terms(v: np.ndarray) -> list[np.ndarray]:
        return [v[first_c] - math.exp(eps) * v[second_c] for eps, _ in budget_pairs(design)]

    kept = []
    for (eps, delta), t in zip(budget_pairs(design), terms(x), strict=True):
        keep = t >= -(RELAX_RTOL * x[first_c] + RELAX_ATOL)
        if group is not None and delta > 0.0:
            keep &= (hockey_sums(t, k) >= group * delta)[k]
        kept.append(keep)
        add_pair_rows(
            mb,
            first_c[keep],
            second_c[keep],
            k[keep],
            eps=eps,
            notion="pure" if delta == 0.0 else "dp",
            delta=None if delta == 0.0 else delta,
        )
    return mb.build(), cols, kept, terms


def relaxed_bound(
    design: Any, res: AdditiveResult, L: int, solver: str, time_limit: float | None, options: Any, concurrent: bool
) -> tuple[float | None, dict[str, int]]:
    """A proven lower bound on the optimum at support ``L`` from a relaxation with the rows that can bind.

    The model at ``L`` keeps only the privacy entries whose term is nonnegative or nearly so at
    ``res``'s PMF (a smaller support's optimum, extended by its staircase tails, which lies in
    the family at ``L``), in the shifts whose hockey stick there is at least :data:`SEED_GROUP` of
    their delta; every other row is dropped. Dropping rows relaxes the LP, so the
    weak-duality bound of the smaller LP is a lower bound on the optimum at ``L`` whatever rows
    are kept. When ``res``'s PMF is optimal at ``L`` too (the boundary inactive), every optimal
    multiplier vanishes on the rows it leaves slack (complementary slackness): the dropped entries'
    rows and a slack shift's budget row, hence its entries' rows (their excess columns cost nothing), so
    the bound is tight then; otherwise it is merely lower and the caller solves the full model.
    Returns ``(bound or None, model size)``.
    """
    model, _, _, _ = _restricted(design, L, res.pmf_at, SEED_GROUP)
    out = backend_solve(model, solver, time_limit, MIP_REL_GAP, False, options, concurrent=concurrent)
    bound = out.bound if out.status == "optimal" else None
    gap = None if bound is None else relative_gap(out.objective, bound)
    if bound is not None and out.x is not None and (gap is None or gap > OPTIMAL_GAP / 10):
        proof = proof_dual(model, out.x)
        if proof is not None and proof[0] > bound:
            bound = proof[0]
    return bound, model.size


def _needed(term: np.ndarray, group: np.ndarray, dropped: np.ndarray, delta: float) -> np.ndarray:
    """The dropped entries whose rows to add at a solution with hockey-stick terms ``term``.

    Completing the solution by ``s_e = max(term_e, 0)`` on the dropped entries gives a point of the
    full model at the same cost unless a shift's hockey stick then exceeds its delta: only the
    entries of shifts within ``1e-9 delta`` of their budget are added (pure DP: every positive term).
    Those may stay positive by a total of ``1e-9 delta``: far inside the re-verification rule.
    """
    near = (hockey_sums(term, group) > delta * (1.0 - 1e-9))[group] if delta > 0.0 else True
    return (term > 1e-9 * delta / max(1, term.size)) & dropped & near


def lazy_solve(
    design: Any,
    L: int,
    seed: Any,
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    verbose: bool,
    options: Any,
    concurrent: bool,
    loose: bool = False,
) -> tuple[LinearModel, _Columns, Any]:
    """Solve at ``L`` with the entries that can bind at ``seed``, adding the rows the solution needs.

    The model is built once with every entry's excess column in its shift's budget row, but only
    the rows ``s_e >= term_e`` of the entries kept at the seed (:func:`_restricted`'s rule; with
    ``loose``, for a seed that is a nearby mechanism rather than an optimum: :data:`SEED_RTOL` and
    :data:`SEED_GROUP`); without its row ``s_e`` may stay 0, so the entry is dropped. The rows a
    solution needs (:func:`_needed`) are added to the same HiGHS instance, which resumes by the
    dual simplex from the last optimal basis (:func:`~optnoise.engine.lazy.solve_with_cuts`).
    Each round is a relaxation, so its bound is valid; once no row is needed the solution
    completes to a point of the full model at the same cost, which is then optimal. On any solver
    trouble the full model is solved instead.
    """

    t0 = time.perf_counter()
    mb, cols, (k, first_c, second_c) = _base(design, L)
    x = _point(design, mb.num_vars, cols, seed)
    E = k.size
    start, entry_rows = [], []
    for eps, delta in budget_pairs(design):
        t = x[first_c] - math.exp(eps) * x[second_c]
        if loose:
            keep = t >= -SEED_RTOL * x[first_c]
            if delta > 0.0:
                keep &= (hockey_sums(t, k) >= SEED_GROUP * delta)[k]
        else:
            keep = t >= -(RELAX_RTOL * x[first_c] + RELAX_ATOL)
        start.append(keep)
        first_row = mb.num_rows  # add_pair_rows writes the E entry rows first
        add_pair_rows(mb, first_c, second_c, k, eps=eps, notion="pure" if delta == 0.0 else "dp", delta=delta or None)
        entry_rows.append(np.arange(first_row, first_row + E))
    full = mb.build()
    model, cuts, cut_upper = split_rows(
        full, np.concatenate([rows[~keep] for rows, keep in zip(entry_rows, start, strict=True)])
    )
    offsets = np.cumsum([0] + [int((~keep).sum()) for keep in start])

    def separate(v: np.ndarray) -> np.ndarray:
        out = []
        for b, ((eps, delta), keep) in enumerate(zip(budget_pairs(design), start, strict=True)):
            need = _needed(v[first_c] - math.exp(eps) * v[second_c], k, ~keep, delta)
            out.append(offsets[b] + np.nonzero(need[~keep])[0])
        return np.concatenate(out)

    out, added, _ = solve_with_cuts(
        model,
        cuts,
        cut_upper,
        solver=solver,
        time_limit=time_limit,
        tol=1e-12,
        concurrent=False,  # an all-rows race would be the full model: the largest solve of all
        separate=separate,
        options=options,
    )
    if out.status == "optimal" and out.x is not None:
        final = with_cuts(model, cuts, cut_upper, added)
        bound = None if out.dual is None else final.dual_bound(out.dual)
        return final, cols, dataclasses.replace(out, bound=bound, gap=relative_gap(out.objective, bound))
    left = time_left(time_limit, t0)
    return full, cols, backend_solve(full, solver, left, mip_gap, verbose, options, concurrent=concurrent)
