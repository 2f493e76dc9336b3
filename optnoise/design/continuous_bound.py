"""A proven lower bound on the least distortion of *any* noise density for a real query.

The setting (:mod:`optnoise.design.continuous`): the release is ``q + X`` with ``X`` of density
``p`` on the reals, neighbouring queries differ by a real shift ``|s| <= Delta``, and cells of
width ``w = Delta / m`` are ``[(k - 1/2) w, (k + 1/2) w)``. Every constraint below holds for
every (eps, delta)-DP density; the LP over them is therefore a relaxation, and the weak-duality
bound of any of its relaxations (:meth:`~optnoise.engine.model.LinearModel.dual_bound`, which
needs no accuracy from the solver) is a lower bound on the continuous optimum.

Variables (cell ``k = -K..K``):

``q_k``
    the cell's mass ``P(X in cell k)``;
``m_k``
    its first moment from the left edge, ``int_cell p(x) (x - (k - 1/2) w) / w dx``, in ``[0, q_k]``;
``r_k = m_k + q_{k+1} - m_{k+1}``
    the *offset-averaged* mass ``(1/w) int_0^w P(X in cell k + t) dt`` (cell ``k`` moved right
    by ``t``): a point ``u`` of the way into cell ``k`` lies in the moved cell for ``t <= u``,
    a point ``u`` into cell ``k + 1`` for ``t > u``, which averages to the two linear terms;
``far+, far-``
    the masses beyond ``+-(K + 1/2) w``, each charged the least cost out there.

Constraints, each the hockey stick ``sum_o [P(o) - e^eps Q(o)]_+ <= delta`` of two output
laws that a DP density must keep within budget, post-processed onto cells (which cannot
increase it):

1. ``q`` against ``q`` shifted by ``j = 1..m`` cells (the shift ``jw`` maps cells onto cells);
2. ``r`` against ``r`` shifted by ``j``: for every ``t`` the moved cells' masses satisfy (1)
   (post-processing onto the moved grid), and the hockey stick is jointly convex, so the
   average over ``t`` does too;
3. ``q_k`` against ``r_{k-j-1}`` (and ``r_{k+j}`` for the negative shift), ``j = 0..m-1``, both
   orders: the law of ``X + s`` averaged over ``s`` in ``[jw, (j+1)w)`` is a mixture of
   shifted laws, so ``H(P, avg_s P_s) <= avg_s H(P, P_s) <= delta`` (joint convexity), and its
   cell masses are exactly those ``r``.

Edges. The outputs of a shift whose second law is past the truncation are *merged* into one
output (post-processing again): for the shift ``j`` of (1) the outputs below cell ``-K + j``, with
``P(A) = far- + q_{-K} + ... + q_{-K+j-1}`` against ``Q(A) = far-``; for (2) and (3) the same with
the law ``Y = X - U`` (``U`` uniform on ``[0, w)``, whose cell masses are ``r``) below cell ``-K``,
of mass ``far- + q_{-K} - m_{-K}``, and for the order ``r`` against ``q`` of (3) the outputs above
cell ``K``, where ``Y`` from cell ``K`` on has mass ``m_K + far+``. Each merged output is one
entry of its shift (an auxiliary column per law); the other terms involving a far cell are
*dropped*: they are nonnegative, so dropping them relaxes. When the far cells and the outermost
cells ``+-K`` hold no mass, the solution extended by zeros meets every row of any wider truncation
(the merged terms are then exactly the terms they replace), so no wider ``K`` raises the bound;
without the merged entries the solution piles mass into the last ``m`` cells instead ((1, 0.1), l1,
m = 16: 0.6831 at K = 54, against 0.68948 with them at K = 40 as at K = 70).

The cost: ``t_k >= a q_k + b mu_k`` for every cut of
:meth:`~optnoise.design.continuous_cost.RealCost.cuts` (``mu_k = (k - 1/2) w q_k + w m_k``),
which by Jensen's inequality holds for every density on the cell. Nothing here restricts
the shape of the density (no monotonicity, no staircase).

Symmetry. For a symmetric cost the LP is invariant under the reflection ``x -> -x``
(``q_k -> q_{-k}``, ``m_k -> q_{-k} - m_{-k}``, ``r_k -> r_{-k-1}``, a shift ``j`` to ``-j``;
the truncation at ``+-K`` is symmetric), and it is convex: the average of a feasible point and
its reflection is feasible at the same cost. So the LP may be solved over symmetric points,
whose rows for negative shifts repeat those for positive ones: they are left out.

Lazy rows. The LP is built once with the excess column ``s_e`` of every entry in its budget
row, but only the rows ``s_e >= P(o) - e^eps Q(o)`` of the entries that can bind at a seed (the
upper bound's density, uniform in each cell: a term near zero in a shift whose hockey stick is
near its budget, :data:`SEED_GROUP`), the merged edge entries and a warm start (the entries
active at the previous resolution, mapped onto this grid: :func:`warm_entries`); without its row
``s_e`` may stay 0, so the entry is dropped. After each solve the rows the solution needs are
added to the same HiGHS instance, which resumes by the dual simplex from the previous optimal
basis (:func:`optnoise.engine.lazy.solve_with_cuts`; the basis stays dual feasible when rows are
added) instead of re-building and re-solving. A dropped entry is needed only in a shift whose
hockey stick, with every dropped positive term counted, exceeds its budget (:func:`_violated`):
most shifts keep slack at the optimum ((1, 0.1), l1, m = 32: 25 of 128 are tight), and setting
``s_e`` to the term completes the solution elsewhere. Every round is a relaxation, so every
round's bound is valid; once no shift needs a row the round's optimum is the full LP's.
Separation is a few vectorised numpy passes over all candidate entries per round.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from optnoise.design.additive_lp import SEED_GROUP, SEED_RTOL
from optnoise.design.continuous_cost import RealCost
from optnoise.design.rows import add_pair_rows, hockey_sums
from optnoise.design.settle import proof_dual
from optnoise.engine.lazy import solve_with_cuts, split_rows, with_cuts
from optnoise.engine.model import LinearModel, ModelBuilder
from optnoise.engine.progress import time_left

__all__ = ["LowerBound", "cell_lp", "lower_bound", "warm_entries"]

#: The families of privacy entries in the LP (module docstring: "qq" (1), "rr" (2), "qr" (3)). Each tightens
#: the bound: (1, 0.1), l1, m = 16: 0.68948 with all three, 0.68457 without (3), 0.67050 without (2);
#: keeping only the largest 4 of 16 shifts gives 0.68788 (any subset is valid; all are kept).
FAMILIES = ("qq", "rr", "qr")
#: An entry is active at a solution (and handed to the next resolution) when its term is above ``-ACTIVE_TOL``.
ACTIVE_TOL = 1e-9
#: The basis' proof (:func:`~optnoise.design.settle.proof_dual`) is tried only when HiGHS' multipliers prove less
#: than the LP's optimum minus this (relative, at least absolute): at (1, 0.1), l1 they prove it to 1e-13.
PROOF_GAP = 1e-9
#: Separation tolerance: a dropped row violated by more than this is added (absolute, as the rows are of masses).
CUT_TOL = 1e-12


@dataclass
class LowerBound:
    """A proven lower bound and how it was obtained."""

    bound: float | None
    cells: int
    rows: int
    rounds: int
    complete: bool  # no shift needs a dropped entry at the last solution: the full LP's optimum
    far_mass: float
    edge_mass: float  # the solution's mass within m cells of +-K, where rows were dropped
    solve_time: float
    message: str = ""
    #: The solution's mass in the outermost cells ``+-K``: with ``far_mass``, zero proves that no wider
    #: truncation raises the bound (module docstring, edges).
    outer_mass: float = 0.0
    #: The entries active at the last solution, as ``(family, sign, shift, cell)`` rows (:func:`warm_entries`).
    active: np.ndarray | None = None


@dataclass
class _Entries:
    first: np.ndarray
    second: np.ndarray
    group: np.ndarray
    #: Per entry: ``(family, sign, shift, cell)`` with family 0..3 for qq, rr, qr, rq (module docstring), the
    #: shift ``j`` as in (1)-(3) and the cell of the entry's first term (``k`` for q_k, ``k`` for r_k).
    where: np.ndarray


def _entries(n: int, m: int, Q: np.ndarray, R: np.ndarray, symmetric: bool) -> _Entries:
    """Every entry of the families 1-3 (module docstring) among the cells kept."""
    firsts, seconds, groups, wheres = [], [], [], []
    g = 0
    signs = (1,) if symmetric else (1, -1)
    K = (n - 1) // 2

    def add(a: np.ndarray, b: np.ndarray, ia: np.ndarray, ib: np.ndarray, fam: int, s: int, j: int) -> None:
        nonlocal g
        ok = (ib >= 0) & (ib < b.size) & (ia >= 0) & (ia < a.size)
        firsts.append(a[ia[ok]])
        seconds.append(b[ib[ok]])
        groups.append(np.full(int(ok.sum()), g, dtype=np.int64))
        w = np.empty((int(ok.sum()), 4), dtype=np.int64)
        w[:, 0], w[:, 1], w[:, 2], w[:, 3] = fam, s, j, ia[ok] - K
        wheres.append(w)
        g += 1

    iq, ir = np.arange(Q.size), np.arange(R.size)
    for s in signs:
        for j in range(1, m + 1):
            if "qq" in FAMILIES:
                add(Q, Q, iq, iq - s * j, 0, s, j)  # (1): q_k against q_{k-j}
            if "rr" in FAMILIES:
                add(R, R, ir, ir - s * j, 1, s, j)  # (2)
        for j in range(m):
            off = -j - 1 if s == 1 else j
            if "qr" in FAMILIES:
                add(Q, R, iq, iq + off, 2, s, j)  # (3): q_k against r_{k-j-1} (r_{k+j})
                add(R, Q, iq + off, iq, 3, s, j)  # (3), the other order: r_{k-j-1} (r_{k+j}) against q_k
    return _Entries(np.concatenate(firsts), np.concatenate(seconds), np.concatenate(groups), np.concatenate(wheres))


def _with_edges(
    mb: ModelBuilder,
    ent: _Entries,
    m: int,
    K: int,
    q: np.ndarray,
    mm: np.ndarray,
    r: np.ndarray,
    far: np.ndarray,
    symmetric: bool,
) -> _Entries:
    """``ent`` and one entry per shift for the outputs past the truncation, merged (module docstring, edges)."""
    n = 2 * K + 1

    def expr() -> dict[str, np.ndarray]:
        return {"q": np.zeros(n), "m": np.zeros(n), "r": np.zeros(n - 1), "far": np.zeros(2)}

    def mirror(e: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        # x -> -x: q_k -> q_{-k}, m_k -> q_{-k} - m_{-k}, r_k -> r_{-k-1}, far- <-> far+
        return {"q": e["q"][::-1] + e["m"][::-1], "m": -e["m"][::-1], "r": e["r"][::-1], "far": e["far"][::-1]}

    cols = {"q": q, "m": mm, "r": r, "far": far}

    def column(e: dict[str, np.ndarray]) -> int:
        """A new column equal to the expression ``e`` (an equality row)."""
        z = int(mb.add_vars(1, lb=0.0, ub=1.0, name="edge")[0])
        idx = np.concatenate([[z], *(cols[k][np.nonzero(v)[0]] for k, v in e.items())])
        val = np.concatenate([[1.0], *(-v[np.nonzero(v)[0]] for v in e.values())])
        mb.add_row(idx, val, lower=0.0, upper=0.0)
        return z

    # the laws' masses past the truncation: X below cell -K (far-), Y = X - U below cell -K, Y from cell K on
    y_left = expr()
    y_left["far"][0], y_left["q"][0], y_left["m"][0] = 1.0, 1.0, -1.0
    rows: list[tuple[int, int, int, dict[str, np.ndarray], dict[str, np.ndarray]]] = []
    for j in range(1, m + 1):
        a = expr()  # qq: outputs -K .. -K+j-1 and below, against X + jw there (= far-)
        a["q"][:j], a["far"][0] = 1.0, 1.0
        b = expr()
        b["far"][0] = 1.0
        rows.append((0, 1, j, a, b))
        a = expr()  # rr: Y's outputs -K .. -K+j-1 and below, against Y + jw there
        a["r"][:j] = 1.0
        a = {k: a[k] + y_left[k] for k in a}
        rows.append((1, 1, j, a, y_left))
    for j in range(m):
        a = expr()  # qr: X's outputs -K .. -K+j and below, against Y + (j+1)w there
        a["q"][: j + 1], a["far"][0] = 1.0, 1.0
        rows.append((2, 1, j, a, y_left))
        a = expr()  # rq: Y + (j+1)w's outputs K+1 and above (Y from cell K-j on), against X there (far+)
        if j:
            a["r"][-j:] = 1.0
        a["m"][-1], a["far"][1] = 1.0, 1.0
        b = expr()
        b["far"][1] = 1.0
        rows.append((3, 1, j, a, b))
    if not symmetric:
        rows += [(f, -1, j, mirror(a), mirror(b)) for f, _, j, a, b in rows]
    keys = np.array([[f, s, j] for f, s, j, _, _ in rows], dtype=np.int64)
    known = {tuple(w): g for w, g in zip(ent.where[:, :3].tolist(), ent.group.tolist(), strict=True)}
    group = np.array([known[tuple(k)] for k in keys.tolist()], dtype=np.int64)
    seconds: dict[bytes, int] = {}
    first, second = [], []
    for _, _, _, a, b in rows:
        first.append(column(a))
        key = b"".join(v.tobytes() for v in b.values())
        if key not in seconds:
            seconds[key] = column(b)
        second.append(seconds[key])
    where = np.concatenate([keys, np.full((len(rows), 1), K + 1, dtype=np.int64)], axis=1)
    return _Entries(
        np.concatenate([ent.first, first]),
        np.concatenate([ent.second, second]),
        np.concatenate([ent.group, group]),
        np.concatenate([ent.where, where]),
    )


def _keys(where: np.ndarray, m: int, n: int) -> np.ndarray:
    """One integer per ``(family, sign, shift, cell)`` (cells offset to be nonnegative)."""
    w = np.asarray(where, dtype=np.int64)
    return ((w[:, 0] * 2 + (w[:, 1] > 0)) * (m + 2) + w[:, 2]) * (2 * n + 3) + (w[:, 3] + n + 1)


def warm_entries(active: np.ndarray, ratio: int = 2) -> np.ndarray:
    """The entries of a grid ``ratio`` times finer that sit where ``active`` ones did (a warm start).

    Centred cells do not nest when ``m`` doubles (cell ``k`` of width ``w`` covers half of cell
    ``2k - 1``, cell ``2k`` and half of ``2k + 1`` at ``w / 2``), and a shift of ``j`` cells is one
    of ``2j - 1 .. 2j + 1`` half-cells: every combination is handed on (those outside the new
    LP are ignored). Only the starting set of rows changes, never the LP: the bound is the same.
    """
    a = np.asarray(active, dtype=np.int64).reshape(-1, 4)
    if a.size == 0:
        return a
    d = np.arange(-(ratio - 1), ratio)
    cells = (ratio * a[:, 3])[:, None, None] + d[None, None, :]
    shifts = (ratio * a[:, 2])[:, None, None] + d[None, :, None]
    cells, shifts = np.broadcast_arrays(cells, shifts)
    out = np.empty(cells.shape + (4,), dtype=np.int64)
    out[..., 0] = a[:, 0][:, None, None]
    out[..., 1] = a[:, 1][:, None, None]
    out[..., 2], out[..., 3] = shifts, cells
    return np.unique(out.reshape(-1, 4), axis=0)


def _base(
    cost: RealCost, m: int, w: float, K: int, symmetric: bool
) -> tuple[ModelBuilder, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The LP before its privacy rows: mass, moments, r, cost cuts; returns the builder and columns."""
    n = 2 * K + 1
    ks = np.arange(-K, K + 1)
    mb = ModelBuilder()
    q = mb.add_vars(n, lb=0.0, ub=1.0, name="q")
    mm = mb.add_vars(n, lb=0.0, ub=1.0, name="m")
    # t_k <= max of c on the cells (every cost here is nondecreasing in |x|): never binding at an optimum,
    # and a finite bound keeps the weak-duality bound finite for any multipliers
    L = (K + 0.5) * w
    t = mb.add_vars(n, lb=0.0, ub=max(1.0, float(np.max(cost.fn(np.array([-L, L]))))), name="t")
    far = mb.add_vars(2, lb=0.0, ub=1.0, name="far")
    r = mb.add_vars(n - 1, lb=0.0, ub=1.0, name="r")
    mb.add_row(np.concatenate([q, far]), 1.0, lower=1.0, upper=1.0)
    idx = np.arange(n)
    mb.add_rows(np.repeat(idx, 2), np.stack([mm, q], 1).ravel(), np.tile([1.0, -1.0], n), upper=0.0)  # m <= q
    i = np.arange(n - 1)
    mb.add_rows(
        np.repeat(i, 4),
        np.stack([r, mm[:-1], q[1:], mm[1:]], 1).ravel(),
        np.tile([1.0, -1.0, -1.0, 1.0], n - 1),
        lower=0.0,
        upper=0.0,
    )
    rows, cols, vals = [], [], []
    row = 0
    for j, k in enumerate(ks):
        lo = (k - 0.5) * w
        for a, b in cost.cuts(int(k), w):
            # t >= a q + b mu with mu = lo q + w m
            rows += [row] * 3
            cols += [t[j], q[j], mm[j]]
            vals += [1.0, -(a + b * lo), -b * w]
            row += 1
    if rows:
        mb.add_rows(np.array(rows), np.array(cols), np.array(vals), lower=0.0)
    if symmetric:  # q_k = q_{-k}, m_k + m_{-k} = q_k (module docstring)
        half = np.arange(K)
        mb.add_rows(
            np.repeat(half, 2),
            np.stack([q[half], q[n - 1 - half]], 1).ravel(),
            np.tile([1.0, -1.0], K),
            lower=0.0,
            upper=0.0,
        )
        mb.add_rows(
            np.repeat(half, 3),
            np.stack([mm[half], mm[n - 1 - half], q[half]], 1).ravel(),
            np.tile([1.0, 1.0, -1.0], K),
            lower=0.0,
            upper=0.0,
        )
        mb.add_row(np.array([mm[K], q[K]]), np.array([2.0, -1.0]), lower=0.0, upper=0.0)
        mb.add_row(far, np.array([1.0, -1.0]), lower=0.0, upper=0.0)
    far_cost = cost.far((K + 0.5) * w)
    assert far_cost is not None
    mb.set_objective(np.concatenate([t, far]), np.concatenate([np.ones(n), [far_cost, far_cost]]))
    return mb, q, mm, r, far


def _violated(
    x: np.ndarray, ent: _Entries, budget: list[tuple[float, float]], excess_cols: list[np.ndarray | None]
) -> list[np.ndarray]:
    """Per budget pair, the entries whose rows to add at ``x``: above their excess ``s_e``, in an over-budget group.

    Completing ``x`` by ``s_e = max(s_e, term_e)`` on every entry (the rows present already hold
    ``s_e >= term_e``) gives a point of the full LP at the same objective (``s`` costs nothing)
    unless a group's completed sum exceeds its budget. So only the entries of such groups are
    added; the others may stay out although their term is positive (their shift has slack).
    Pure DP (no ``s``, budget 0): every entry with a positive term.
    """
    out = []
    for (eps, delta), cols in zip(budget, excess_cols, strict=True):
        term = x[ent.first] - math.exp(eps) * x[ent.second]
        s = np.zeros_like(term) if cols is None else x[cols]
        above = term - s > CUT_TOL
        if cols is None:
            out.append(above)
            continue
        over = np.bincount(ent.group, weights=np.maximum(term - s, 0.0), minlength=int(ent.group.max()) + 1)
        slack = delta - np.bincount(ent.group, weights=s, minlength=over.size)
        out.append(above & (over > np.maximum(slack, 0.0) + CUT_TOL)[ent.group])
    return out


def lower_bound(
    cost: RealCost,
    budget: list[tuple[float, float]],
    m: int,
    w: float,
    K: int,
    seed: np.ndarray | None,
    solver: str = "auto",
    time_limit: float | None = None,
    options: Any = None,
    symmetric: bool | None = None,
    warm: np.ndarray | None = None,
    edges: bool = True,
) -> LowerBound:
    """The proven lower bound of the module docstring at ``m`` cells per sensitivity and ``K`` cells a side.

    ``seed``: cell masses ``q_{-K..K}`` of a good density (the upper bound's), or ``None`` (all rows).
    ``symmetric``: solve over symmetric points (default: when the cost is symmetric; module docstring).
    ``warm``: entries ``(family, sign, shift, cell)`` to start with besides the seed's (a coarser
    resolution's :attr:`LowerBound.active` through :func:`warm_entries`); it changes the rows the
    LP starts with, never the LP.
    ``options``: raw HiGHS options for the LP's first solve (:func:`~optnoise.engine.lazy.solve_with_cuts`).
    ``edges``: add the merged edge entries (module docstring); ``False`` only drops them (a looser LP at
    the same ``K``, for comparison).
    """

    t0 = time.perf_counter()
    if cost.far((K + 0.5) * w) is None:
        return LowerBound(
            None, 2 * K + 1, 0, 0, False, 0.0, 0.0, 0.0, "no lower bound for a user cost not monotone in |e|"
        )
    symmetric = cost.symmetric if symmetric is None else symmetric and cost.symmetric
    n = 2 * K + 1
    mb, q, mm, r, far = _base(cost, m, w, K, symmetric)
    ent = _entries(n, m, q, r, symmetric)
    if edges:
        ent = _with_edges(mb, ent, m, K, q, mm, r, far, symmetric)
    E = ent.first.size
    start = np.zeros(E, dtype=bool) if seed is not None else np.ones(E, dtype=bool)
    if seed is not None:
        x_seed = np.zeros(mb.num_vars)
        x_seed[q] = seed
        x_seed[mm] = seed / 2.0
        x_seed[r] = (seed[:-1] + seed[1:]) / 2.0
        for eps, delta in budget:
            term = x_seed[ent.first] - math.exp(eps) * x_seed[ent.second]
            near = hockey_sums(term, ent.group) >= SEED_GROUP * delta
            start |= (term >= -SEED_RTOL * x_seed[ent.first]) & near[ent.group]
    start |= ent.where[:, 3] == K + 1  # the merged edge entries (few, one per shift): always in
    if warm is not None and len(warm):
        start |= np.isin(_keys(ent.where, m, n), _keys(np.asarray(warm).reshape(-1, 4), m, n))
    # every entry's row, for each (eps, delta) of the budget: add_pair_rows writes the E entry rows first
    entry_rows, excess_cols = [], []
    for eps, delta in budget:
        first_row, first_col = mb.num_rows, mb.num_vars
        add_pair_rows(
            mb,
            ent.first,
            ent.second,
            ent.group,
            eps=eps,
            notion="pure" if delta == 0.0 else "dp",
            delta=delta if delta > 0.0 else None,
        )
        entry_rows.append(np.arange(first_row, first_row + E))
        # the excess columns s_e, written first (none for pure DP)
        excess_cols.append(np.arange(first_col, first_col + E) if delta > 0.0 else None)
    full: LinearModel = mb.build()
    model, cuts, cut_upper = split_rows(full, np.concatenate([rows[~start] for rows in entry_rows]))
    dropped = np.nonzero(~start)[0]  # the entries whose rows are cut rows: in ``cuts`` once per budget pair

    def separate(x: np.ndarray) -> np.ndarray:
        need = _violated(x, ent, budget, excess_cols)
        return np.concatenate([np.nonzero(v[dropped])[0] + b * dropped.size for b, v in enumerate(need)])

    # HiGHS keeps one instance across rounds (dual simplex warm starts); other backends re-solve.
    out, added, rounds = solve_with_cuts(
        model,
        cuts,
        cut_upper,
        solver=solver,
        time_limit=time_left(time_limit, t0),
        tol=CUT_TOL,
        concurrent=False,
        separate=separate,
        options=options,
    )
    final = with_cuts(model, cuts, cut_upper, added)
    # a round cut short keeps the bound the rounds before it proved (solve_with_cuts)
    best: float | None = None if out.status == "optimal" else out.bound
    message = ""
    if out.x is None:
        message = f"the LP ended {out.status!r}: {out.message}"
        if best is not None:
            message += f" in round {rounds}; the bound is round {out.info.get('bound_round')}'s (valid, maybe loose)"
        return LowerBound(best, n, final.shape[0], rounds, False, 0.0, 0.0, time.perf_counter() - t0, message)
    b = None if out.dual is None else final.dual_bound(out.dual)
    if b is not None and (best is None or b > best):
        best = b
    obj = out.objective if out.objective is not None else math.inf
    if out.status == "optimal" and (best is None or obj - best > PROOF_GAP * max(1.0, abs(obj))):
        # HiGHS' multipliers are accurate to an absolute tolerance; the optimal basis, found again in
        # variables scaled by the solution, may prove more (costly: 5.7 s of 30 at m = 32, so only when needed)
        proof = proof_dual(final, out.x, time_left(time_limit, t0))
        if proof is not None and (best is None or proof[0] > best):
            best = proof[0]
    x = out.x
    complete = out.status == "optimal" and not separate(x).size
    if out.status != "optimal":
        message = f"the LP ended {out.status!r} during row generation (the bound is valid, maybe loose)"
    edge = np.abs(np.arange(-K, K + 1)) > K - m
    active = np.zeros(E, dtype=bool)
    for eps, delta in budget:
        term = x[ent.first] - math.exp(eps) * x[ent.second]
        near = hockey_sums(term, ent.group) >= SEED_GROUP * delta
        active |= (term > -ACTIVE_TOL) & (x[ent.first] > ACTIVE_TOL) & near[ent.group]
    return LowerBound(
        best,
        n,
        final.shape[0],
        rounds,
        complete,
        float(x[far].sum()),
        float(x[q][edge].sum()),
        time.perf_counter() - t0,
        message,
        active=ent.where[active],
        outer_mass=float(x[q][0] + x[q][-1]),
    )


#: The LP of the module docstring before its privacy rows (cells, moments, ``r``, cost cuts), for other notions'
#: bounds over all densities (:mod:`optnoise.design.continuous_renyi_bound`).
cell_lp = _base
