"""The permute-and-flip lattice LP: the optimal selection mechanism on a score lattice (McKenna-Sheldon)."""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from itertools import combinations_with_replacement
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy import special

from optnoise.engine.cache import cache_key, cached
from optnoise.engine.lazy import solve_with_cuts
from optnoise.engine.model import LinearModel, ModelBuilder
from optnoise.engine.solve import SOLVERS, solve_model
from optnoise.engine.validation import check_choice, check_eps, check_int, check_positive
from optnoise.mechanisms.selection import gauss_legendre01

__all__ = ["LatticeLP", "LatticeSolution", "build_lattice_lp", "lattice_mechanism", "solve_lattice_lp"]


@dataclass(frozen=True)
class LatticeLP:
    """The LP of [PF] Appendix D with one variable per symmetry class.

    Score vectors are normalised to maximum 0 (shift invariance) and take
    values on the lattice ``{0, -2 Delta, ..., -2 k Delta}``, i.e. *levels*
    ``0..k`` with score ``-2 Delta * level``. A symmetry class is a multiset of
    levels (sorted ``q``), stored as the count of candidates at each level;
    symmetry forces candidates of equal score to share one probability, so the
    variables are ``x[class, level]`` for each level present: the probability
    of *each* candidate at that level.

    Attributes
    ----------
    m, k, eps, sensitivity : problem parameters (bound ``B = 2 k Delta``).
    counts : ndarray, shape (n_classes, k + 1)
        Candidates per level; ``counts[:, 0] >= 1``.
    var_index : ndarray, shape (n_classes, k + 1)
        Column of ``x[class, level]``, -1 where the level is absent.
    var_class, var_level : ndarray
        Inverse map column -> (class, level).
    weight : ndarray, shape (n_classes,)
        How many lattice vectors the class stands for in the objective.
    model : LinearModel
        Minimise the weighted average expected error subject to sum-to-one,
        the worst-neighbour privacy rows (and monotonicity rows if requested).
    monotone_pairs : (ndarray, ndarray)
        Every local monotonicity move as column pairs ``(a, b)``: ``x[a] <= x[b]``
        (whether or not the model includes them).
    row_blocks : dict
        Global row indices of ``"sum_to_one"``, ``"privacy"`` (and ``"monotone"``).
    build_time : float
        Seconds spent building.
    """

    m: int
    k: int
    eps: float
    sensitivity: float
    weighting: str
    monotone: bool
    counts: np.ndarray
    var_index: np.ndarray
    var_class: np.ndarray
    var_level: np.ndarray
    weight: np.ndarray
    model: LinearModel
    monotone_pairs: tuple[np.ndarray, np.ndarray] = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    row_blocks: dict[str, np.ndarray] = field(default_factory=dict)
    build_time: float = 0.0

    @property
    def n_classes(self) -> int:
        return int(self.counts.shape[0])

    @property
    def n_vars(self) -> int:
        return int(self.var_class.size)

    def class_scores(self, i: int) -> np.ndarray:
        """A representative score vector (descending) of class ``i``."""
        levels = np.repeat(np.arange(self.k + 1), self.counts[i])
        return -2.0 * self.sensitivity * levels.astype(float)


@dataclass
class LatticeSolution:
    """Optimal regular mechanism on the bounded lattice and the optimality ratios ([PF] Fig. 2).

    ``objective``, ``pf_objective``, ``em_objective`` are the weighted average
    expected errors over the lattice; the optimality ratio of a mechanism is
    its objective over the optimum. ``solve_time`` sums every solve; ``rounds``
    counts them (more than one when monotonicity rows are added lazily).
    """

    status: str
    x: np.ndarray | None
    objective: float | None
    pf_objective: float
    em_objective: float
    solve_time: float
    lp: LatticeLP
    rounds: int = 1

    @property
    def pf_ratio(self) -> float:
        return float(self.pf_objective / self.objective) if self.objective else float("nan")

    @property
    def em_ratio(self) -> float:
        return float(self.em_objective / self.objective) if self.objective else float("nan")


def _lattice_classes(m: int, k: int) -> np.ndarray:
    """All level-count vectors of m candidates on levels 0..k with at least one at level 0."""
    n = math.comb(m - 1 + k, k)
    counts = np.zeros((n, k + 1), dtype=np.int64)
    counts[:, 0] = 1
    if m > 1:
        combos = np.fromiter(
            (lv for combo in combinations_with_replacement(range(k + 1), m - 1) for lv in combo),
            dtype=np.int64,
            count=n * (m - 1),
        ).reshape(n, m - 1)
        rows = np.repeat(np.arange(n), m - 1)
        np.add.at(counts, (rows, combos.ravel()), 1)
    return counts


class _ClassIndex:
    """Map level-count vectors to class numbers (mixed-radix code + binary search)."""

    def __init__(self, counts: np.ndarray, m: int):
        k1 = counts.shape[1]
        if (m + 1) ** k1 >= 2**62:
            raise ValueError(f"lattice too large to index: (m + 1)^(k + 1) = {m + 1}^{k1} must be < 2^62")
        self.radix = (m + 1) ** np.arange(k1, dtype=np.int64)
        codes = counts @ self.radix
        self.order = np.argsort(codes)
        self.sorted_codes = codes[self.order]

    def __call__(self, counts: np.ndarray) -> np.ndarray:
        codes = counts @ self.radix
        pos = np.searchsorted(self.sorted_codes, codes)
        pos = np.minimum(pos, self.sorted_codes.size - 1)
        if not np.array_equal(self.sorted_codes[pos], codes):
            raise RuntimeError("internal error: neighbour class outside the lattice")
        return self.order[pos]


def build_lattice_lp(
    m: int,
    k: int,
    eps: float,
    *,
    sensitivity: float = 1.0,
    weighting: str = "lattice",
    monotone: bool = True,
    monotone_rows: Any = None,
) -> LatticeLP:
    """Build the optimal-regular-mechanism LP of [PF] Theorem 3 / Appendix D.

    Parameters
    ----------
    m : int
        Number of candidates, >= 1.
    k : int
        Lattice depth: scores in ``{0, -2 Delta, ..., -2 k Delta}`` (bound
        ``B = 2 k Delta``, ``k + 1`` score levels), >= 1.
    eps : float
        Privacy parameter, > 0.
    sensitivity : float, optional
        ``Delta``; only scales the objective.
    weighting : {"lattice", "box"}
        ``"lattice"``: every score vector with maximum 0 counts once (the sum
        of [PF] Theorem 3 as restated in the project notes). ``"box"``: every
        vector of ``{0, ..., -2 k Delta}^m`` counts once after shifting its
        maximum to 0, as in the authors' public notebook (a class with top
        level ``L`` then stands for ``k - L + 1`` shifts).
    monotone : bool, optional
        Impose monotonicity (Definition 3, Eq. 3) through its local moves:
        raising a candidate's own score, or lowering another's, never lowers
        its probability (default). The LP printed in [PF] Appendix D and the
        authors' notebook omit these rows; without them the optimum can be
        non-monotone, and then the worst-neighbour rows no longer imply
        eps-DP (Prop. 2 assumes regularity).
    monotone_rows : array of int, optional
        Keep only these monotonicity rows (indices into ``monotone_pairs``);
        used by :func:`solve_lattice_lp` to add them lazily.

    Notes
    -----
    Privacy uses only the worst neighbour of [PF] Prop. 2,
    ``M_r(q + 2 Delta e_r) <= e^eps M_r(q)``, kept wherever the neighbour
    (renormalised to maximum 0) lies in the bounded lattice: a candidate at
    level ``l >= 1`` moves to ``l - 1``; a candidate at level 0 stays and all
    others move down one level, which needs the bottom level ``k`` empty.
    """
    t0 = time.perf_counter()
    m = check_int("m", m, minimum=1)
    k = check_int("k", k, minimum=1)
    eps = check_eps(eps)
    delta = check_positive("sensitivity", sensitivity)
    weighting = check_choice("weighting", weighting, ("lattice", "box"))
    counts = _lattice_classes(m, k)
    index = _ClassIndex(counts, m)
    present = counts > 0
    var_index = np.full(counts.shape, -1, dtype=np.int64)
    var_index[present] = np.arange(int(present.sum()))
    var_class, var_level = np.nonzero(present)  # row-major: matches var_index numbering
    n_var = var_class.size

    mb = ModelBuilder()
    cols = mb.add_vars(n_var, lb=0.0, ub=1.0, name="x")

    # objective: weighted average of sum_r (q* - q_r) M_r(q)
    log_mult = special.gammaln(m + 1) - special.gammaln(counts + 1).sum(axis=1)
    weight = np.exp(log_mult)
    if weighting == "box":
        top = np.max(np.where(present, np.arange(k + 1), 0), axis=1)
        weight = weight * (k - top + 1)
    weight_total = weight.sum()
    obj = weight[var_class] * counts[var_class, var_level] * (2.0 * delta * var_level) / weight_total
    mb.set_objective(cols, obj)

    blocks: dict[str, np.ndarray] = {}
    # sum-to-one (with symmetry built in): sum_l n_l x[C, l] = 1
    blocks["sum_to_one"] = mb.add_rows(var_class, cols, counts[var_class, var_level], lower=1.0, upper=1.0)

    def neighbour_raise(cls: np.ndarray, lvl: np.ndarray):
        """Class and level of candidate at (cls, lvl) after its score rises by 2 Delta."""
        c = counts[cls].copy()
        up = lvl >= 1
        ok = up | (c[:, k] == 0)
        new_lvl = np.where(up, lvl - 1, 0)
        # level >= 1: move the candidate up one level
        iu = np.nonzero(up)[0]
        c[iu, lvl[iu]] -= 1
        c[iu, lvl[iu] - 1] += 1
        # level 0: everyone else moves down one level (renormalise to max 0)
        iz = np.nonzero(~up & ok)[0]
        if iz.size:
            cz = counts[cls[iz]]
            shifted = np.zeros_like(cz)
            shifted[:, 0] = 1
            shifted[:, 1] = cz[:, 0] - 1
            shifted[:, 2:] += cz[:, 1:k]
            c[iz] = shifted
        return ok, c, new_lvl

    ok, c_nb, lvl_nb = neighbour_raise(var_class, var_level)
    src = np.nonzero(ok)[0]
    dst = var_index[index(c_nb[src]), lvl_nb[src]]
    r = np.arange(src.size)
    blocks["privacy"] = mb.add_rows(
        np.concatenate([r, r]),
        np.concatenate([dst, src]),
        np.concatenate([np.ones(src.size), np.full(src.size, -math.exp(eps))]),
        upper=0.0,
    )
    mono_a, mono_b = _monotone_pairs(counts, var_index, var_class, var_level, index, src, dst, k)
    if monotone:
        sel = np.arange(mono_a.size) if monotone_rows is None else np.asarray(monotone_rows, dtype=np.int64)
        a, b = mono_a[sel], mono_b[sel]
        r = np.arange(a.size)
        if a.size:
            blocks["monotone"] = mb.add_rows(
                np.concatenate([r, r]),
                np.concatenate([a, b]),
                np.concatenate([np.ones(a.size), -np.ones(a.size)]),
                upper=0.0,
            )
    # Interior point with crossover: 14x faster than simplex at m=5, k=12 (benchmarks/RESULTS.md).
    model = mb.build(lp_algorithm="ipm")
    return LatticeLP(
        m=m,
        k=k,
        eps=eps,
        sensitivity=delta,
        weighting=weighting,
        monotone=bool(monotone),
        counts=counts,
        var_index=var_index,
        var_class=var_class,
        var_level=var_level,
        weight=weight,
        model=model,
        monotone_pairs=(mono_a, mono_b),
        row_blocks=blocks,
        build_time=time.perf_counter() - t0,
    )


def _monotone_pairs(counts, var_index, var_class, var_level, index, src, dst, k):
    """Local monotonicity moves as pairs ``(a, b)`` meaning ``x[a] <= x[b]``.

    Raising a candidate's own score one step (the privacy neighbour, ``src``
    -> ``dst``) or lowering one other candidate one step never lowers the
    candidate's probability (Definition 3, Eq. 3); chains of these moves reach
    every monotone comparison inside the lattice.
    """
    rows_i, rows_j = [src], [dst]
    for l2 in range(k):  # lower one other candidate from level l2 to l2 + 1
        others = counts[var_class, l2] - (var_level == l2)
        sel = np.nonzero(others > 0)[0]
        if not sel.size:
            continue
        c = counts[var_class[sel]].copy()
        c[:, l2] -= 1
        c[:, l2 + 1] += 1
        lvl = var_level[sel].copy()
        empty_top = c[:, 0] == 0  # the lowered candidate was the unique maximum: renormalise
        c[empty_top, :-1] = c[empty_top, 1:]
        c[empty_top, -1] = 0
        lvl[empty_top] -= 1
        rows_i.append(sel)
        rows_j.append(var_index[index(c), lvl])
    return np.concatenate(rows_i), np.concatenate(rows_j)


def lattice_mechanism(lp: LatticeLP, mechanism: str) -> np.ndarray:
    """The LP variables ``x[class, level]`` of EM or PF at ``lp.eps`` (vectorised over classes).

    On the lattice a candidate at level ``l`` has coin/weight ``a_l = e^(-eps l)``.
    EM: ``a_l / sum_j n_j a_j``. PF: ``a_l int_0^1 prod_j (1 - t a_j)^(n_j) / (1 - t a_l) dt``
    by exact Gauss-Legendre quadrature (the integral form of :func:`pf_pmf`).
    """
    mechanism = check_choice("mechanism", mechanism, ("em", "pf"))
    a_log = -lp.eps * np.arange(lp.k + 1, dtype=float)
    cnt = lp.counts.astype(float)
    lvl = lp.var_level
    if mechanism == "em":
        log_z = special.logsumexp(a_log[None, :], b=cnt, axis=1)
        return np.exp(a_log[lvl] - log_z[lp.var_class])
    t, w = gauss_legendre01(lp.m // 2 + 1)
    log1m = np.log1p(-t[:, None] * np.exp(a_log)[None, :])  # (nodes, levels)
    log_g = cnt @ log1m.T  # (classes, nodes)
    terms = np.log(w)[None, :] + log_g[lp.var_class] - log1m[:, lvl].T
    return np.exp(a_log[lvl] + special.logsumexp(terms, axis=1))


def solve_lattice_lp(
    m: int,
    k: int,
    eps: float,
    *,
    sensitivity: float = 1.0,
    weighting: str = "lattice",
    monotone: bool = True,
    lazy: bool = True,
    solver: str = "auto",
    time_limit: float | None = None,
    tol: float = 1e-9,
    cache: str | os.PathLike | None = None,
    concurrent: bool = True,
) -> LatticeSolution:
    """Solve the bounded-lattice LP and compare PF and EM with the optimum ([PF] Fig. 2).

    See :func:`build_lattice_lp` for the parameters; ``solver`` and
    ``time_limit`` go to :func:`optnoise.engine.solve.solve_model`. The default
    ``"auto"`` solves this LP by interior point with crossover, measured 14x
    faster than the simplex at m = 5, k = 12 (``benchmarks/RESULTS.md``).

    With ``monotone`` and ``lazy`` (defaults) the monotonicity rows are added
    as cuts (:func:`optnoise.engine.lazy.solve_with_cuts`): solve without them, add
    every row the solution violates by more than ``tol``, re-solve from the
    previous basis, until none is violated. The result is optimal for the full
    LP (it solves a relaxation and is feasible for the full one). With
    ``"auto"`` an LP that takes over a second is also solved with all rows at
    once in a second process, and the first to finish wins (``concurrent=False``
    keeps it in this process).

    ``cache`` is a folder of results keyed by every argument (:mod:`optnoise.engine.cache`);
    a hit skips the solve (and reports the cached ``solve_time``). Only optimal
    results are stored.
    """
    m = check_int("m", m, minimum=1)
    k = check_int("k", k, minimum=1)
    eps = check_eps(eps)
    tol = check_positive("tol", tol)
    check_choice("solver", solver, SOLVERS)
    key_args = {
        "m": m,
        "k": k,
        "eps": eps,
        "sensitivity": sensitivity,
        "weighting": weighting,
        "monotone": bool(monotone),
        "lazy": bool(lazy),
        "solver": solver,
        "time_limit": time_limit,
        "tol": tol,
    }

    def compute() -> dict[str, Any]:
        if monotone and lazy:
            lp = build_lattice_lp(
                m, k, eps, sensitivity=sensitivity, weighting=weighting, monotone=True, monotone_rows=[]
            )
            a, b = lp.monotone_pairs
            r = np.arange(a.size)
            cuts = sp.csr_matrix(
                (np.concatenate([np.ones(a.size), -np.ones(a.size)]), (np.concatenate([r, r]), np.concatenate([a, b]))),
                shape=(a.size, lp.n_vars),
            )
            out, rows, rounds = solve_with_cuts(
                lp.model,
                cuts,
                np.zeros(a.size),
                solver=solver,
                time_limit=time_limit,
                tol=tol,
                concurrent=concurrent,
            )
            mono_rows: list[int] | None = rows.tolist()
        else:
            lp = build_lattice_lp(m, k, eps, sensitivity=sensitivity, weighting=weighting, monotone=monotone)
            out = solve_model(lp.model, solver=solver, time_limit=time_limit, concurrent=concurrent)
            rounds, mono_rows = 1, None
        return {
            "status": out.status,
            "x": None if out.x is None else out.x.tolist(),
            "objective": out.objective if out.status == "optimal" else None,
            "solve_time": out.solve_time,
            "rounds": rounds,
            "monotone_rows": mono_rows,
        }

    data = cached(cache, cache_key("lattice_lp", key_args), compute, accept=lambda d: d["status"] == "optimal")
    lp = build_lattice_lp(
        m,
        k,
        eps,
        sensitivity=sensitivity,
        weighting=weighting,
        monotone=monotone,
        monotone_rows=data["monotone_rows"],
    )
    c = lp.model.c
    return LatticeSolution(
        status=data["status"],
        x=None if data["x"] is None else np.asarray(data["x"], dtype=float),
        objective=data["objective"],
        pf_objective=float(c @ lattice_mechanism(lp, "pf")),
        em_objective=float(c @ lattice_mechanism(lp, "em")),
        solve_time=float(data["solve_time"]),
        lp=lp,
        rounds=int(data["rounds"]),
    )
