"""Partition-selection primitives as LPs: the optimum under (eps, delta)-DP, pointwise, bounded DP."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from optnoise.engine.model import LinearModel, ModelBuilder
from optnoise.engine.output import SolverOutput
from optnoise.engine.solve import solve_model
from optnoise.engine.validation import check_delta, check_eps, check_int, shown
from optnoise.mechanisms.partition import crossover_points, pi_opt

__all__ = [
    "PartitionLP",
    "partition_lp",
    "partition_lp_pointwise",
    "primitive_delta",
    "group_privacy_primitive",
    "bounded_dp_delta",
    "bounded_dp_lp",
    "bounded_dp_primitive",
]


@dataclass
class PartitionLP:
    """Result of :func:`partition_lp`.

    Attributes
    ----------
    pi : ndarray
        ``pi(0..n_max)`` at the optimum (``None`` unless status is optimal).
    status : str
        Solver status.
    model : LinearModel
        The LP (maximise ``sum pi``, written as minimise ``-sum pi``).
    output : SolverOutput
    max_change : int
    """

    pi: np.ndarray | None
    status: str
    model: LinearModel
    output: SolverOutput
    max_change: int = 1
    extra: dict[str, Any] = field(default_factory=dict)


def _pair_rows(
    a_idx: np.ndarray,
    b_idx: np.ndarray,
    up: tuple[float, float],
    down: tuple[float, float],
    mid: tuple[float, float] | None,
) -> tuple:
    """COO triplets of inequalities (1)-(4) for pairs ``(pi[a], pi[b])``, ``b`` the larger count.

    ``up = (eps, delta)`` is used in (1) ``pi(b) <= e^eps pi(a) + delta``,
    ``down`` in (4) ``1 - pi(a) <= e^eps (1 - pi(b)) + delta``, and ``mid`` in
    (2) and (3); ``mid=None`` replaces (2) and (3) by monotonicity
    ``pi(a) <= pi(b)``, which implies them. For a binary output the hockey
    stick is the larger of its two singleton events, so with one
    ``(eps, delta)`` everywhere the four rows are exactly (eps, delta)-DP of the pair.
    """
    k = a_idx.size
    r = np.arange(k)
    ones = np.ones(k)
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    upper: list[np.ndarray] = []

    def add(c1: np.ndarray, v1: float, c2: np.ndarray, v2: float, rhs: float) -> None:
        base = sum(u.size for u in upper)
        rows.extend([r + base, r + base])
        cols.extend([c1, c2])
        vals.extend([v1 * ones, v2 * ones])
        upper.append(np.full(k, rhs))

    e1, d1 = math.exp(up[0]), up[1]
    e4, d4 = math.exp(down[0]), down[1]
    add(b_idx, 1.0, a_idx, -e1, d1)  # (1)
    add(b_idx, e4, a_idx, -1.0, d4 - 1.0 + e4)  # (4)
    if mid is None:
        add(a_idx, 1.0, b_idx, -1.0, 0.0)
    else:
        e2, d2 = math.exp(mid[0]), mid[1]
        add(a_idx, 1.0, b_idx, -e2, d2)  # (2)
        add(a_idx, e2, b_idx, -1.0, d2 - 1.0 + e2)  # (3)
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), np.concatenate(upper)


def _partition_model(
    n_max: int,
    max_change: int,
    up: tuple[float, float],
    down: tuple[float, float],
    mid: tuple[float, float] | None,
) -> tuple[ModelBuilder, np.ndarray]:
    mb = ModelBuilder()
    ub = np.ones(n_max + 1)
    ub[0] = 0.0  # pi(0) = 0 (Definition 3)
    x = mb.add_vars(n_max + 1, lb=0.0, ub=ub, name="pi")
    for j in range(1, min(max_change, n_max) + 1):
        rows, cols, vals, upper = _pair_rows(x[: n_max + 1 - j], x[j:], up, down, mid)
        mb.add_rows(rows, cols, vals, upper=upper)
    mb.set_objective(x, -np.ones(x.size))
    return mb, x


def _solve_partition(mb: ModelBuilder, x: np.ndarray, c: int, solver: str, time_limit: float | None) -> PartitionLP:
    model = mb.build()
    out = solve_model(model, solver=solver, time_limit=time_limit)
    pi = None
    if out.status == "optimal" and out.x is not None:
        pi = np.clip(out.x[x], 0.0, 1.0)
    return PartitionLP(pi, out.status, model, out, c)


def partition_lp(
    n_max: int,
    eps: float,
    delta: float,
    *,
    max_change: int = 1,
    solver: str = "highs",
    time_limit: float | None = None,
) -> PartitionLP:
    """The optimal primitive on ``0..n_max`` as a linear program (Sec. 2.1).

    Maximise ``sum_n pi(n)`` over ``pi(0..n_max)`` in ``[0, 1]`` with
    ``pi(0) = 0``, subject to inequalities (1)-(4) for every pair of
    neighbouring counts ``(n, n + j)``, ``1 <= j <= max_change``. With
    ``max_change = 1`` this is the add/remove relation of the paper; larger
    values model a user who can change a count by up to ``c`` (no closed form;
    compare :func:`pi_opt_recursive` and :func:`group_privacy_primitive`).

    The feasible set is a lattice (closed under pointwise max, since every
    constraint bounds one coordinate by an increasing function of another), so
    the maximiser of the sum is the pointwise maximum; see
    :func:`partition_lp_pointwise` for the per-coordinate check.
    """
    n_max = check_int("n_max", n_max, minimum=1)
    eps = check_eps(eps, allow_zero=True)
    delta = check_delta(delta)
    c = check_int("max_change", max_change, minimum=1)
    mb, x = _partition_model(n_max, c, (eps, delta), (eps, delta), (eps, delta))
    return _solve_partition(mb, x, c, solver, time_limit)


def partition_lp_pointwise(result: PartitionLP, indices: Any = None, *, solver: str = "highs") -> np.ndarray:
    """Maximise each ``pi(n)`` separately over the LP of ``result``.

    Returns the per-coordinate maxima for ``indices`` (default all ``n``); the
    sum-maximiser is pointwise maximal exactly when these equal ``result.pi``.
    """
    model = result.model
    cols = model.block("pi")
    idx = np.arange(cols.size) if indices is None else np.asarray(indices, dtype=np.int64)
    best = np.empty(idx.size)
    for i, n in enumerate(idx):
        c = np.zeros(model.shape[1])
        c[cols[n]] = -1.0
        out = solve_model(replace(model, c=c), solver=solver)
        if out.status != "optimal" or out.objective is None:
            raise RuntimeError(f"pointwise LP for n={n} ended with status {out.status!r}")
        best[i] = -out.objective
    return best


def primitive_delta(pi: Any, eps: float, *, max_change: int = 1) -> float:
    """Smallest delta for which ``pi`` is (eps, delta)-DP for every neighbouring pair.

    Evaluated from the definition, the hockey stick ``sum_o [P(o) - e^eps Q(o)]_+``
    of the two Bernoulli outputs of counts ``n`` and ``n + j`` (``j <= max_change``),
    both orders -- not from inequalities (1)-(4), so it checks an LP solution
    independently. ``pi[0]`` must be 0.
    """
    p = np.asarray(pi, dtype=float)
    eps = check_eps(eps, allow_zero=True)
    c = check_int("max_change", max_change, minimum=1)
    if p.ndim != 1 or p.size < 2 or p[0] != 0.0:
        raise ValueError("pi must be a 1-D array pi(0..N) with pi(0) = 0")
    e = math.exp(eps)
    worst = 0.0
    for j in range(1, min(c, p.size - 1) + 1):
        for x, y in ((p[:-j], p[j:]), (p[j:], p[:-j])):
            h = np.maximum(x - e * y, 0.0) + np.maximum((1.0 - x) - e * (1.0 - y), 0.0)
            worst = max(worst, float(h.max()))
    return worst


def group_privacy_primitive(n: Any, eps: float, delta: float, *, max_change: int) -> Any:
    """Baseline for counts that change by up to ``c``: ``pi_opt`` at a group-privacy budget.

    An (eps', delta')-DP primitive for changes of 1 is, by group privacy,
    ``(c eps', delta' sum_{j<c} e^{j eps'})``-DP for changes of up to ``c``; so
    ``eps' = eps / c`` and ``delta' = delta / sum_{j<c} e^{j eps / c}``.
    """
    c = check_int("max_change", max_change, minimum=1)
    eps = check_eps(eps, allow_zero=True)
    delta = check_delta(delta)
    e1 = eps / c
    return pi_opt(n, e1, delta / float(np.sum(np.exp(e1 * np.arange(c)))))


def _extend(pi: np.ndarray, size: int) -> np.ndarray:
    if pi.size >= size:
        return pi[:size]
    return np.concatenate([pi, np.full(size - pi.size, pi[-1])])


def _pair_grid_terms(pa: np.ndarray, qa: np.ndarray, pb: np.ndarray, qb: np.ndarray, e: float) -> np.ndarray:
    """Hockey stick of ``Bern(pa) x Bern(pb)`` against ``Bern(qa) x Bern(qb)`` (broadcast)."""
    tot = np.zeros(np.broadcast_shapes(pa.shape, qa.shape, pb.shape, qb.shape))
    for xa, ya in ((pa, qa), (1.0 - pa, 1.0 - qa)):
        for xb, yb in ((pb, qb), (1.0 - pb, 1.0 - qb)):
            tot = tot + np.maximum(xa * xb - e * ya * yb, 0.0)
    return tot


def bounded_dp_delta(pi: Any, eps: float) -> float:
    """Exact delta of the product mechanism under bounded (replace-one) DP.

    A user who changes partition moves one count from ``a`` to ``a - 1`` and
    another from ``b`` to ``b + 1``; the two release decisions are independent
    Bernoullis, the other partitions do not change. Returns
    ``max_{a >= 1, b >= 0} H_eps(Bern(pi(a)) x Bern(pi(b)) || Bern(pi(a-1)) x Bern(pi(b+1)))``;
    the reverse order is the same family with the partitions swapped. ``pi`` is
    taken constant after its last entry, which must be 1.
    """
    p = np.asarray(pi, dtype=float)
    eps = check_eps(eps, allow_zero=True)
    if p.ndim != 1 or p.size < 2 or p[0] != 0.0 or p[-1] != 1.0:
        raise ValueError("pi must be a 1-D array pi(0..N) with pi(0) = 0 and pi(N) = 1")
    ext = _extend(p, p.size + 1)
    a = np.arange(1, p.size + 1)[:, None]
    b = np.arange(0, p.size)[None, :]
    h = _pair_grid_terms(ext[a], ext[a - 1], ext[b], ext[b + 1], math.exp(eps))
    return float(h.max())


def bounded_dp_lp(
    n_max: int,
    eps: float,
    delta: float,
    *,
    eps_up: float | None = None,
    delta_up: float | None = None,
    solver: str = "highs",
) -> PartitionLP:
    """A primitive for bounded (replace-one) DP from the solver layer.

    When a user moves from partition A (count ``a -> a-1``) to B
    (``b -> b+1``), the privacy loss of the product output is the loss of A
    plus the loss of B. For a monotone ``pi`` the positive part of A's loss is
    on "keep", bounded by inequality (1), and of B's on "drop", bounded by (4).
    Giving (1) the budget ``(eps_up, delta_up)`` and (4) the rest
    ``(eps - eps_up, delta - delta_up)`` (and requiring monotonicity instead of
    (2), (3)) is therefore a linear sufficient condition; the factor-2
    reduction of Sec. 5 is the symmetric split ``eps_up = eps/2``,
    ``delta_up = delta/2`` (the default). An asymmetric split lets ``pi`` rise
    faster and approach 1 more slowly. The result is re-checked exactly with
    :func:`bounded_dp_delta` (``extra["achieved_delta"]``).
    """
    n_max = check_int("n_max", n_max, minimum=1)
    eps = check_eps(eps)
    delta = check_delta(delta)
    eps_up = eps / 2.0 if eps_up is None else check_eps(eps_up)
    delta_up = delta / 2.0 if delta_up is None else check_delta(delta_up, "delta_up")
    if not 0.0 < eps_up < eps:
        raise ValueError(f"eps_up must be in (0, eps={shown(eps)}); got {shown(eps_up)}")
    if not 0.0 <= delta_up <= delta:
        raise ValueError(f"delta_up must be in [0, delta={shown(delta)}]; got {shown(delta_up)}")
    mb, x = _partition_model(n_max, 1, (eps_up, delta_up), (eps - eps_up, delta - delta_up), None)
    res = _solve_partition(mb, x, 1, solver, None)
    if res.pi is not None:
        res.extra = {"eps_up": eps_up, "delta_up": delta_up}
        if res.pi[-1] >= 1.0 - 1e-12:
            res.pi[-1] = 1.0
            res.extra["achieved_delta"] = bounded_dp_delta(res.pi, eps)
    return res


def bounded_dp_primitive(
    eps: float,
    delta: float,
    *,
    n_max: int | None = None,
    splits: Any = None,
    solver: str = "highs",
) -> PartitionLP:
    """Best split for :func:`bounded_dp_lp`: the most expected releases, exactly verified.

    Scans ``eps_up`` over ``splits`` (fractions of eps; ``delta_up = delta/2``)
    and keeps the primitive with the largest ``sum_n pi(n)`` among those whose
    exact bounded-DP delta (:func:`bounded_dp_delta`) is at most ``delta``.
    The symmetric split (the factor-2 reduction) is always among the candidates.
    """
    eps = check_eps(eps)
    delta = check_delta(delta)
    if n_max is None:
        # a split with eps_up >= eps/10 saturates before pi_opt at (eps/10, delta/2)
        n_max = crossover_points(eps / 10.0, delta / 2.0)[1] + 2
    fracs = np.linspace(0.1, 0.9, 17) if splits is None else np.asarray(splits, dtype=float)
    fracs = np.unique(np.concatenate([fracs, [0.5]]))
    best: PartitionLP | None = None
    for f in fracs:
        res = bounded_dp_lp(n_max, eps, delta, eps_up=f * eps, solver=solver)
        ok = res.pi is not None and res.extra.get("achieved_delta", np.inf) <= delta * (1 + 1e-9)
        if ok and res.pi is not None and (best is None or best.pi is None or res.pi.sum() > best.pi.sum()):
            best = res
    if best is None:
        raise RuntimeError("no split passed the exact bounded-DP check")
    return best
