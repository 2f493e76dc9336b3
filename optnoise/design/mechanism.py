"""Optimal mechanisms without wrap-around: the LP over the whole conditional matrix ``P[x, y]``.

A mechanism for a query with answers ``x in {0..n}`` is a row-stochastic
matrix ``P[x, y] = Pr(output y | input x)``. The best possible mechanism for
a loss ``L[x, y]`` under (eps, delta)-DP over a set of ordered neighbour
pairs ``(x, x')`` is the linear program

    minimise    sum_x prior(x) sum_y L[x, y] P[x, y]                   ("bayes")
                (or max_x sum_y L[x, y] P[x, y], via an epigraph row,    "minimax")
    subject to  sum_y P[x, y] = 1,  P >= 0,
                sum_y [P[x, y] - e^eps P[x', y]]_+ <= delta   for every ordered pair,

the hockey stick written with one slack per (pair, output)
(:mod:`optnoise.privacy_rows`); ``privacy="pdp"`` counts instead the mass of
every output with ``P[x, y] > e^eps P[x', y]`` (Definition 2 of Kadam et
al. 2024, one indicator per (pair, output): a MILP); ``objective="delta"``
minimises delta subject to a cap on the Bayes loss. :class:`MechanismDesign`
states the problem and :meth:`MechanismDesign.solve` solves it through
:mod:`optnoise.solvers`; the result's matrix is re-verified with
:func:`optnoise.privacy.mechanism_delta`, certified exactly with
:func:`optnoise.certify.certify_result` and sampled exactly with
:meth:`optnoise.certify.CertifiedMechanism.release`.

Known optima, used as tests: for pure eps-DP count queries (adjacent
neighbours), the Bayesian optimum for any prior and any loss monotone in
``|y - x|`` is the truncated geometric mechanism followed by the user's
optimal deterministic remap (Ghosh, Roughgarden and Sundararajan 2009); the
minimax optimum is the geometric mechanism followed by an optimal randomized
remap (Gupte and Sundararajan 2010).

Lazy rows. The full LP has ``(#pairs) (m+1)`` privacy rows; for n = 500 and
adjacent neighbours that is half a million, which HiGHS' simplex does not
finish (or presolves into numerical trouble) within minutes. The optimum of
an (eps, delta) design puts almost no mass far from the cheap outputs, so
:meth:`MechanismDesign.solve` starts from the rows of the
``2 w0 + 1`` cheapest outputs of both inputs of every pair, with
``w0 = ceil(ln(1/delta) / eps) + 2`` (``1e-12`` in place of delta for pure
DP), solves, adds every missing row the solution violates (and its
neighbours), and repeats. Each restricted model is a relaxation of the full
one (rows and their slacks dropped), and the loop stops only when the
solution satisfies every row of the full model, so the result is the full
model's optimum. In a restricted model, an entry that appears in no row is
useful only as the cheapest such entry of its row, so the others are left
out. Small designs (the initial rows already cover half of all) solve the
full model at once, and so does the error rate: its flat loss spreads the
optimum over far outputs, so the lazy rounds cost more than the full model
by dual simplex (measured in ``benchmarks/RESULTS.md``).

Clamped additive noise (``NoiseDesign(..., release="clamp")``) is the same
LP with ``P`` tied to a noise PMF on ``{-n..n}``: :func:`clamp_model`.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy.ndimage import binary_dilation

from optnoise._validation import (
    MAX_COST,
    MAX_EPS,
    MAX_EPS_REASON,
    MAX_SIZE,
    check_choice,
    check_delta,
    check_eps,
    check_finite,
    check_int,
    check_model_size,
    check_pmf,
    real_array,
)
from optnoise.cache import entry_path, load_entry, problem_key, store_entry
from optnoise.certify import PairLayout, certify_result, matrix_layout, register_spec_kind
from optnoise.mechanisms import neighbour_pairs
from optnoise.model import LinearModel, ModelBuilder
from optnoise.neighborhood import Neighborhood
from optnoise.privacy import mechanism_delta
from optnoise.privacy_rows import add_pair_rows
from optnoise.solvers import (
    MIP_REL_GAP,
    check_solve_args,
    polish_with_highs,
    solve_model,
    write_mps,
)
from optnoise.tolerance import (
    RESULT_STATUSES,
    UNVERIFIED,
    CheckedResult,
    delta_allowance,
    pdp_rtol,
)

__all__ = [
    "MechanismDesign",
    "MechanismResult",
    "LOSSES",
    "MECHANISM_OBJECTIVES",
    "MECHANISM_NOTIONS",
    "resolve_pairs",
    "loss_matrix",
    "matrix_errors",
    "clamp_matrix",
    "clamp_model",
    "clamp_model_size",
    "clamp_repair",
]

#: Named losses ``L[x, y]`` of releasing output value ``y`` for input ``x``; a matrix is accepted too.
LOSSES = ("abs", "sq", "er")
#: What :class:`MechanismDesign` minimises.
MECHANISM_OBJECTIVES = ("bayes", "minimax", "delta")
#: Privacy notions of mechanism designs (pure eps-DP is ``delta = 0`` under either).
MECHANISM_NOTIONS = ("dp", "pdp")
#: Largest relative loss increase an exactly repaired unverified matrix may have and still be called optimal.
POLISH_RTOL = 1e-6
#: A missing row is added when the solution violates it by more than this (absolute).
LAZY_TOL = 1e-12
#: Mass level below which a pure-DP design's tail is treated as zero when choosing the first rows.
PURE_DEPTH = 1e-12
#: Rounds of lazy rows before the full model is solved instead.
MAX_ROUNDS = 50
#: LPs with at least this many rows are solved with HiGHS' interior point method (see :func:`_solve_lp`).
IPM_ROWS = 20_000


# --------------------------------------------------------------------------------------------
# problem data
# --------------------------------------------------------------------------------------------


def resolve_pairs(neighbors: Any, n: int, *, directed: bool = False) -> np.ndarray:
    """Ordered neighbour pairs ``(x, x')`` of inputs ``0..n``, shape ``(K, 2)``, sorted and unique.

    Parameters
    ----------
    neighbors : str, Neighborhood or sequence of pairs
        ``"adjacent"`` (``|x - x'| = 1``), ``"adjacent:K"`` (``1 <= |x - x'| <= K``),
        a shift spec ``"sd:MU"``, ``"bd:MUBAR"``, ``"shifts:1,3"`` (pairs ``x - x' = mu``
        without wrap-around, :func:`optnoise.mechanisms.neighbour_pairs`), a
        :class:`~optnoise.neighborhood.Neighborhood` (for example one derived
        from data with :meth:`~optnoise.neighborhood.Neighborhood.from_data`),
        or a list of pairs ``[(x, x'), ...]``.
    n : int
    directed : bool
        For pair lists and shift specs: use them as given instead of adding
        the reversed pairs. ``"adjacent"`` is always symmetric.
    """
    n = check_int("n", n, minimum=1)
    if isinstance(neighbors, Neighborhood):
        if neighbors.dim != 1:
            raise ValueError("neighbors must have scalar shifts: a mechanism's inputs are 0..n")
        return neighbour_pairs(n, neighbors)
    if isinstance(neighbors, str):
        spec = neighbors.strip().lower()
        kind, _, body = spec.partition(":")
        if kind == "adjacent":
            if directed:
                raise ValueError("directed applies to pair lists and shift specs; 'adjacent' is symmetric")
            K = 1 if not body else check_int("neighbors 'adjacent:K' K", _int_text(body, neighbors), minimum=1)
            if K > n:
                raise ValueError(f"neighbors 'adjacent:K' needs K <= n = {n}; got {K}")
            return neighbour_pairs(n, Neighborhood.bd(K))
        if kind in ("sd", "bd", "shifts"):
            return resolve_pairs(Neighborhood.parse(spec, directed=directed), n)
        raise ValueError(
            "neighbors must be 'adjacent', 'adjacent:K', 'sd:MU', 'bd:MUBAR', 'shifts:A,B', "
            f"a Neighborhood or a list of pairs (x, x'); got {neighbors!r}"
        )
    try:
        arr = np.asarray(neighbors)
    except (TypeError, ValueError):
        arr = np.zeros(0)
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] == 0:
        raise ValueError(
            f"neighbors must be a name, a Neighborhood or a non-empty list of pairs (x, x'); got {neighbors!r}"
        )
    if arr.dtype.kind not in "iuf" or not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
        raise ValueError("neighbors pairs must hold integers")
    pairs = arr.astype(np.int64)
    if pairs.min() < 0 or pairs.max() > n:
        raise ValueError(f"neighbors pairs must hold inputs in 0..n = 0..{n}")
    if np.any(pairs[:, 0] == pairs[:, 1]):
        raise ValueError("neighbors pairs must join two different inputs")
    if not directed:
        pairs = np.concatenate([pairs, pairs[:, ::-1]])
    return np.unique(pairs, axis=0)


def _pair_count_bound(neighbors: Any, n: int, directed: bool) -> int | None:
    """An upper bound on the number of ordered pairs a name or Neighborhood resolves to (``None`` for lists)."""
    if isinstance(neighbors, Neighborhood):
        return 2 * len(neighbors.raw) * (n + 1)
    if isinstance(neighbors, str):
        kind, _, body = neighbors.strip().lower().partition(":")
        if kind == "adjacent":
            return 2 * (n + 1) * (1 if not body else min(n, max(1, _int_text(body, neighbors))))
        if kind in ("sd", "bd", "shifts"):
            return 2 * len(Neighborhood.parse(neighbors.strip().lower(), directed=directed).raw) * (n + 1)
    return None


def _int_text(text: str, whole: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"neighbors must be 'adjacent:K' with an integer K; got {whole!r}") from None


def _outputs(outputs: Any, n: int) -> np.ndarray:
    if outputs is None:
        return np.arange(n + 1)
    if isinstance(outputs, (int, np.integer)) and not isinstance(outputs, bool):
        return np.arange(check_int("outputs", outputs, minimum=1, maximum=MAX_SIZE) + 1)
    try:
        arr = real_array("outputs", outputs)
    except ValueError:
        msg = f"outputs must be an integer m (outputs 0..m) or an array of values; got {outputs!r}"
        raise ValueError(msg) from None
    if arr.ndim != 1 or arr.size < 2 or not np.all(np.isfinite(arr)):
        raise ValueError("outputs must be an integer m >= 1 or a 1-D array of at least 2 finite values")
    if np.unique(arr).size != arr.size:
        raise ValueError("outputs must be distinct values")
    return arr.astype(np.int64) if np.all(arr == np.round(arr)) and np.all(np.abs(arr) < 2**53) else arr


def loss_matrix(loss: Any, n: int, outputs: np.ndarray) -> np.ndarray:
    """``L[x, y]``: ``"abs"`` ``|v_y - x|``, ``"sq"`` ``(v_y - x)^2``, ``"er"`` ``1[v_y != x]``, or a given matrix."""
    v = np.asarray(outputs, dtype=float)[None, :]
    x = np.arange(n + 1, dtype=float)[:, None]
    if isinstance(loss, str):
        check_choice("loss", loss, LOSSES)
        if loss == "abs":
            return np.abs(v - x)
        if loss == "sq":
            return (v - x) ** 2
        return (v != x).astype(float)
    try:
        L = real_array("loss", loss)
    except ValueError:
        raise ValueError(f"loss must be one of {', '.join(LOSSES)} or a matrix L[x, y]") from None
    if L.shape != (n + 1, v.size):
        raise ValueError(f"loss matrix must have shape (n+1, m+1) = {(n + 1, v.size)}; got {L.shape}")
    if not np.all(np.isfinite(L)):
        raise ValueError("loss matrix must be finite")
    if np.max(np.abs(L)) > MAX_COST:
        raise ValueError(
            f"loss matrix entries must have magnitude <= {MAX_COST:g} (solvers treat ~1e20 as infinite); "
            "rescale it: one positive factor on every entry leaves the optimal mechanism unchanged"
        )
    return L


def matrix_errors(P: np.ndarray, outputs: np.ndarray | None = None) -> dict[str, float]:
    """Errors of the released value ``v_y`` for each true input x, for a mechanism matrix.

    Squared and absolute error ``|v_y - x|`` averaged over a uniform x and at
    the worst x, and the error rate ``Pr(v_y != x)`` (mean and worst). The
    keys extend those of :func:`optnoise.design.modulo_errors`.
    """
    P = np.asarray(P, dtype=float)
    v = np.arange(P.shape[1]) if outputs is None else np.asarray(outputs, dtype=float)
    d = np.abs(v[None, :] - np.arange(P.shape[0])[:, None])
    mse, mae, er = (P * d**2).sum(axis=1), (P * d).sum(axis=1), (P * (d != 0)).sum(axis=1)
    return {
        "mse_mean": float(mse.mean()),
        "mse_worst": float(mse.max()),
        "mae_mean": float(mae.mean()),
        "mae_worst": float(mae.max()),
        "er": float(er.mean()),
        "er_worst": float(er.max()),
    }


# --------------------------------------------------------------------------------------------
# the LP over a matrix of model columns (shared with clamped noise)
# --------------------------------------------------------------------------------------------


def _matrix_rows(
    mb: ModelBuilder,
    cols: np.ndarray,
    L: np.ndarray,
    weights: np.ndarray | None,
    pairs: np.ndarray,
    active: np.ndarray | None,
    *,
    eps: float,
    privacy: str,
    delta: float | None,
    objective: str,
    max_loss: float | None,
    formulation: str,
) -> None:
    """Objective and privacy rows for a matrix ``P[x, y]`` held in the model columns ``cols[x, y]``.

    ``cols`` may repeat columns (clamped noise); ``-1`` marks an entry left
    out (lazy rows: it carries no mass). ``weights`` is the prior of the
    Bayes loss (``None`` for minimax). ``active[k, y]`` selects the
    (pair, output) entries that get privacy rows (``None``: all).
    """
    R, C = cols.shape
    present = cols >= 0
    xs, ys = np.nonzero(present)
    t: int | None = None
    if objective == "minimax":
        z = mb.add_vars(1, lb=-np.inf, ub=np.inf, name="z")
        mb.add_rows(
            np.concatenate([xs, np.arange(R)]),
            np.concatenate([cols[xs, ys], np.full(R, z[0])]),
            np.concatenate([L[xs, ys], -np.ones(R)]),
            upper=0.0,
        )
        mb.set_objective(z, [1.0])
    else:
        w = np.ones(R) / R if weights is None else weights
        coef = w[xs] * L[xs, ys]
        if objective == "delta":
            t = int(mb.add_vars(1, lb=0.0, ub=1.0, name="t")[0])
            mb.add_row(cols[xs, ys], coef, upper=float(max_loss if max_loss is not None else 0.0))
            mb.set_objective([t], [1.0])
        else:
            mb.set_objective(cols[xs, ys], coef)
    K = pairs.shape[0]
    sel = np.ones((K, C), dtype=bool) if active is None else active
    ks, yy = np.nonzero(sel)
    first, second = cols[pairs[ks, 0], yy], cols[pairs[ks, 1], yy]
    keep = first >= 0  # an absent P[x, y] is 0: its rows hold
    ks, yy, first, second = ks[keep], yy[keep], first[keep], second[keep]
    if np.any(second < 0):
        raise RuntimeError("internal error: an active entry compares with an absent one")
    pure = objective != "delta" and delta == 0.0
    add_pair_rows(
        mb,
        first,
        second,
        ks,
        eps=eps,
        notion="pure" if pure else privacy,
        delta=None if (pure or t is not None) else delta,
        t=t,
        formulation=formulation,
    )


def _pair_rows_size(K: int, C: int, notion: str, formulation: str, t: bool) -> tuple[int, int, int, int]:
    """Rows, columns, nonzeros and integers that :func:`~optnoise.privacy_rows.add_pair_rows` adds.

    For ``K`` pairs of ``C`` entries each, every entry present (the full model).
    """
    M, budget_nnz = K * C, K * C + (K if t else 0)
    if notion == "pure":
        return M, 0, 2 * M, 0
    if notion == "dp":
        return M + K, M, 3 * M + budget_nnz, 0
    if formulation == "hull":
        return 3 * M + K, 2 * M, 8 * M + budget_nnz, M
    return 5 * M + K, 2 * M, 14 * M + budget_nnz, M


def _size(rows: int, cols: int, nnz: int, ints: int) -> dict[str, int]:
    return {"rows": rows, "cols": cols, "integers": ints, "nonzeros": nnz}


def clamp_model_size(
    n: int, pairs: int, *, privacy: str, pure: bool, delta_objective: bool, formulation: str = "hull"
) -> dict[str, int]:
    """Rows, columns, integers and nonzeros of :func:`clamp_model`, computed without building it (exact)."""
    rows, cols, nnz = 2 * n + 3, 4 * n + 3, 8 * n + 5  # f, both tails, their recursions and sum f = 1
    if delta_objective:  # t and the distortion cap over every distinct column of the matrix
        rows, cols, nnz = rows + 1, cols + 1, nnz + (4 * n + 1 if n >= 2 else 4)
    pr, pc, pn, pi = _pair_rows_size(pairs, n + 1, "pure" if pure else privacy, formulation, delta_objective)
    return _size(rows + pr, cols + pc, nnz + pn, pi)


def clamp_matrix(pmf: Any, n: int) -> np.ndarray:
    """``P[q, y]`` of the release ``clip(q + eta, 0, n)`` with noise ``pmf`` on ``eta = -n..n``."""
    f = np.asarray(pmf, dtype=float).ravel()
    n = check_int("n", n, minimum=1)
    if f.size != 2 * n + 1:
        raise ValueError(f"pmf must have 2n+1 = {2 * n + 1} entries (eta = -n..n); got {f.size}")
    q = np.arange(n + 1)[:, None]
    y = np.clip(q + np.arange(-n, n + 1)[None, :], 0, n)
    out = np.zeros((n + 1, n + 1))
    np.add.at(out, (np.broadcast_to(q, y.shape), y), np.broadcast_to(f, y.shape))
    return out


def clamp_repair(
    pmf: Any,
    n: int,
    eps: float,
    private: Callable[[np.ndarray], bool],
    affordable: Callable[[np.ndarray], bool],
) -> np.ndarray | None:
    """The least mixture ``(1 - lam) f + lam g`` that is ``private`` and ``affordable``, or ``None``.

    A solver meets the ratio rows of a clamped design only to its tolerance
    (for pure DP, a ~1e-10 mass beside a zero breaks the exact rule). Mixing
    with a noise ``g`` whose clamped matrix meets every ratio row strictly
    scales each pair's hockey stick by ``1 - lam`` and adds a strictly
    negative term to every ratio row, so a large enough ``lam`` repairs a
    solution that is right up to tolerance. Two such ``g`` are tried: the
    two-sided geometric noise at ``eps / 2`` folded onto ``{-n..n}`` (its
    clamped matrix is the truncated geometric mechanism, ratios at most
    ``e^(eps/2)``), and, when ``e^eps > 2``, the uniform noise on ``{-n..n}``
    (interior ratios 1, boundary ratios at most 2), which repairs far tails
    cheaply. For each, ``lam`` doubles from ``1e-12`` until ``private`` holds;
    the first private mixture that ``affordable`` (the caller's loss budget)
    accepts is returned.
    """
    f = np.asarray(pmf, dtype=float).ravel()
    a = math.exp(-eps / 2)
    k = np.abs(np.arange(-n, n + 1))
    geometric = (1 - a) / (1 + a) * a**k
    geometric[[0, -1]] = a**n / (1 + a)  # the folded tails: sum_{j >= n} of the two-sided geometric
    candidates = [geometric]
    if math.exp(eps) > 2.0:
        candidates.append(np.full(2 * n + 1, 1.0 / (2 * n + 1)))
    for g in candidates:
        lam = 1e-12
        while lam <= 1.0:
            mix = (1.0 - lam) * f + lam * g
            if private(mix):
                if affordable(mix):
                    return mix
                break
            lam *= 2
    return None


def _clamp_columns(mb: ModelBuilder, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Noise columns ``f`` (eta = -n..n) and the model column of every ``P[q, y]`` of the clamped release.

    ``P[q, 0] = sum_{eta <= -q} f`` and ``P[q, n] = sum_{eta >= n - q} f`` are
    tail variables defined by one recursion row each, so every entry of the
    induced matrix is a single column and every privacy row stays short.
    """
    f = mb.add_vars(2 * n + 1, lb=0.0, ub=1.0, name="f")
    mb.add_row(f, 1.0, lower=1.0, upper=1.0)
    low = mb.add_vars(n + 1, lb=0.0, ub=1.0, name="lower_tail")  # low[j] = sum_{eta <= j - n} f
    up = mb.add_vars(n + 1, lb=0.0, ub=1.0, name="upper_tail")  # up[j] = sum_{eta >= j} f
    j = np.arange(n + 1)
    # low[0] - f(eta=-n) = 0; low[j] - low[j-1] - f(eta=j-n) = 0
    rows_low = np.concatenate([j, j, j[1:]])
    cols_low = np.concatenate([low, f[: n + 1], low[:-1]])
    vals_low = np.concatenate([np.ones(n + 1), -np.ones(n + 1), -np.ones(n)])
    mb.add_rows(rows_low, cols_low, vals_low, lower=0.0, upper=0.0)
    # up[n] - f(eta=n) = 0; up[j] - up[j+1] - f(eta=j) = 0
    rows_up = np.concatenate([j, j, j[:-1]])
    cols_up = np.concatenate([up, f[n:], up[1:]])
    vals_up = np.concatenate([np.ones(n + 1), -np.ones(n + 1), -np.ones(n)])
    mb.add_rows(rows_up, cols_up, vals_up, lower=0.0, upper=0.0)
    q = np.arange(n + 1)[:, None]
    y = np.arange(n + 1)[None, :]
    cols = f[np.clip(y - q + n, 0, 2 * n)]
    cols = np.where(y == 0, low[n - q], cols)
    cols = np.where(y == n, up[n - q], cols)
    return f, cols


def clamp_model(
    *,
    n: int,
    eps: float,
    pairs: np.ndarray,
    cost: np.ndarray,
    privacy: str,
    delta: float | None,
    objective: str,
    max_distortion: float | None,
    formulation: str = "hull",
) -> LinearModel:
    """The LP/MILP of clamped additive noise: noise ``f`` on ``{-n..n}``, release ``clip(q + eta, 0, n)``.

    The induced matrix ``P[q, y]`` is linear in ``f`` (:func:`_clamp_columns`),
    so the general mechanism LP applies with ``P`` tied to ``f``: distortion
    ``mean_q sum_y P[q, y] cost[y - q + n]`` (the released error averaged
    over a uniform answer), privacy rows for every ordered answer pair.
    ``objective`` is ``"distortion"`` or ``"delta"`` (cap ``max_distortion``).
    """
    mb = ModelBuilder()
    _, cols = _clamp_columns(mb, n)
    e = np.arange(n + 1)[None, :] - np.arange(n + 1)[:, None]  # released error y - q
    L = np.asarray(cost, dtype=float)[e + n]
    _matrix_rows(
        mb,
        cols,
        L,
        None,
        pairs,
        None,
        eps=eps,
        privacy=privacy,
        delta=delta,
        objective="delta" if objective == "delta" else "bayes",
        max_loss=max_distortion,
        formulation=formulation,
    )
    return mb.build()


# --------------------------------------------------------------------------------------------
# the design
# --------------------------------------------------------------------------------------------


class MechanismDesign:
    """The optimal mechanism ``P[x, y]`` for inputs ``0..n`` over all (non-additive) mechanisms.

    Parameters
    ----------
    n : int
        Inputs (true answers) lie in ``{0..n}``.
    eps : float
        Privacy level, > 0.
    delta : float
        Privacy slack in [0, 1]; 0 (default) is pure eps-DP. Leave at 0 with
        ``objective="delta"`` (delta is what is minimised).
    neighbors : str, Neighborhood or list of pairs
        Which inputs are neighbours (:func:`resolve_pairs`): ``"adjacent"``
        (default), ``"adjacent:K"``, ``"sd:MU"``, ``"bd:MUBAR"``,
        ``"shifts:A,B"``, a :class:`~optnoise.neighborhood.Neighborhood`, or a
        list of pairs (symmetric unless ``directed=True``).
    outputs : int or array_like, optional
        An integer m (outputs ``0..m``; default ``m = n``) or the output values.
    loss : {"abs", "sq", "er"} or array_like
        ``|v_y - x|``, ``(v_y - x)^2``, ``1[v_y != x]``, or a matrix ``L[x, y]``
        of shape ``(n+1, m+1)``.
    objective : {"bayes", "minimax", "delta"}
        Expected loss under ``prior``; worst-input loss; or the smallest delta
        with Bayes loss at most ``max_loss``.
    prior : array_like, optional
        Distribution of the input (``"bayes"``, ``"delta"``); uniform by default.
    privacy : {"dp", "pdp"}
        (eps, delta)-DP per ordered pair (hockey stick, an LP) or
        (eps, delta)-PDP per ordered pair (Definition 2, a MILP).
    max_loss : float, optional
        The Bayes-loss cap of ``objective="delta"``.
    directed : bool
        Pair lists and shift specs are used as given (no reversed pairs).
    """

    def __init__(
        self,
        *,
        n: int,
        eps: float,
        delta: float = 0.0,
        neighbors: Any = "adjacent",
        outputs: Any = None,
        loss: Any = "abs",
        objective: str = "bayes",
        prior: Any = None,
        privacy: str = "dp",
        max_loss: float | None = None,
        directed: bool = False,
    ) -> None:
        self.n = check_int("n", n, minimum=1, maximum=MAX_SIZE)
        self.eps = check_eps(eps, maximum=MAX_EPS, why=MAX_EPS_REASON)
        self.delta = check_delta(delta)
        self.privacy = check_choice("privacy", privacy, MECHANISM_NOTIONS)
        self.objective = check_choice("objective", objective, MECHANISM_OBJECTIVES)
        if not isinstance(directed, (bool, np.bool_)):
            raise ValueError(f"directed must be True or False; got {directed!r}")
        self.directed = bool(directed)
        self.outputs = _outputs(outputs, self.n)
        if (self.n + 1) * self.outputs.size > MAX_SIZE:
            raise ValueError(
                f"n and outputs are too large: the matrix has (n+1)(m+1) = {(self.n + 1) * self.outputs.size} "
                f"entries, more than the limit {MAX_SIZE}"
            )
        self.neighbors = neighbors
        # the model's size follows from the number of pairs: an oversized one is refused before they are listed
        bound = _pair_count_bound(neighbors, self.n, self.directed)
        if bound is not None:
            check_model_size(self._full_size(bound), what=f"the {self.privacy!r} model of this design")
        self.pairs = resolve_pairs(neighbors, self.n, directed=self.directed)
        self.loss = loss if isinstance(loss, str) else "custom"
        self.loss_matrix = loss_matrix(loss, self.n, self.outputs)
        if prior is None:
            self.prior = None
        else:
            if self.objective == "minimax":
                raise ValueError("prior applies to objective 'bayes' or 'delta', not 'minimax'")
            p = check_pmf("prior", prior, atol=1e-9)
            if p.shape != (self.n + 1,):
                raise ValueError(f"prior must have n+1 = {self.n + 1} entries; got shape {p.shape}")
            self.prior = p
        if self.objective == "delta":
            if self.delta != 0.0:
                raise ValueError("delta must be left at 0 with objective='delta' (it is what is minimised)")
            if max_loss is None:
                raise ValueError("max_loss is required with objective='delta'")
            self.max_loss: float | None = check_finite("max_loss", max_loss)
        else:
            if max_loss is not None:
                raise ValueError("max_loss applies only with objective='delta'")
            self.max_loss = None
        check_model_size(self.model_size(), what=f"the {self.privacy!r} model of this design")

    # ------------------------------------------------------------------ helpers
    @property
    def m(self) -> int:
        """Outputs are indexed ``0..m``."""
        return int(self.outputs.size - 1)

    @property
    def matrix_shape(self) -> tuple[int, int]:
        """Shape ``(n+1, m+1)`` of the matrix."""
        return (self.n + 1, self.outputs.size)

    @property
    def dim(self) -> int:
        """Inputs are scalars (for the CLI's release command)."""
        return 1

    @property
    def is_pure(self) -> bool:
        """Pure eps-DP: delta = 0 and delta is not what is minimised."""
        return self.objective != "delta" and self.delta == 0.0

    @property
    def weights(self) -> np.ndarray | None:
        """The input weights of the Bayes loss (the prior, uniform by default); ``None`` for minimax."""
        if self.objective == "minimax":
            return None
        return np.full(self.n + 1, 1.0 / (self.n + 1)) if self.prior is None else self.prior

    def loss_of(self, P: np.ndarray) -> float:
        """The design's loss of a matrix: Bayes expectation, or the worst input for ``"minimax"``."""
        per_x = (np.asarray(P, dtype=float) * self.loss_matrix).sum(axis=1)
        w = self.weights
        return float(per_x.max()) if w is None else float(per_x @ w)

    def _full_size(self, pairs: int, formulation: str = "hull") -> dict[str, int]:
        R, C = self.n + 1, self.outputs.size
        rows, cols, nnz = R, R * C, R * C  # P and its row sums
        if self.objective == "minimax":  # z and one epigraph row per input
            rows, cols, nnz = rows + R, cols + 1, nnz + R * C + R
        elif self.objective == "delta":  # t and the Bayes-loss cap
            rows, cols, nnz = rows + 1, cols + 1, nnz + R * C
        pr, pc, pn, pi = _pair_rows_size(
            pairs, C, "pure" if self.is_pure else self.privacy, formulation, self.objective == "delta"
        )
        return _size(rows + pr, cols + pc, nnz + pn, pi)

    def model_size(self, formulation: str = "hull") -> dict[str, int]:
        """Rows, columns, integers and nonzeros of the full model (:meth:`build_model`), without building it.

        Exact (a test compares it with the built model). The constructor checks
        it against the limits of :mod:`optnoise._validation`; the lazy solve's
        models are smaller.
        """
        check_choice("formulation", formulation, ("hull", "bigm"))
        return self._full_size(len(self.pairs), formulation)

    def describe_neighbors(self) -> str:
        """One line: the neighbour relation and its number of ordered pairs."""
        if isinstance(self.neighbors, str):
            label = self.neighbors
        elif isinstance(self.neighbors, Neighborhood):
            label = self.neighbors.describe()
        else:
            label = "pairs" + (", directed" if self.directed else ", symmetric")
        return f"{label}: {self.pairs.shape[0]} ordered pairs of inputs 0..{self.n}"

    def spec(self) -> dict[str, Any]:
        """The problem as plain data (JSON-ready)."""
        if isinstance(self.neighbors, str):
            nb: Any = self.neighbors
        elif isinstance(self.neighbors, Neighborhood):
            nb = {"neighborhood": self.neighbors.to_dict()}
        else:
            nb = self.pairs.tolist()
        default_out = self.outputs.dtype.kind == "i" and np.array_equal(self.outputs, np.arange(self.outputs.size))
        return {
            "kind": "mechanism",
            "n": self.n,
            "eps": self.eps,
            "delta": self.delta,
            "neighbors": nb,
            "directed": self.directed if not isinstance(nb, list) else True,
            "pairs": self.pairs.tolist(),
            "outputs": self.m if default_out else self.outputs.tolist(),
            "loss": self.loss,
            "loss_matrix": self.loss_matrix.tolist() if self.loss == "custom" else None,
            "objective": self.objective,
            "prior": None if self.prior is None else self.prior.tolist(),
            "privacy": self.privacy,
            "max_loss": self.max_loss,
        }

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> MechanismDesign:
        """Rebuild a design from :meth:`spec` output (fully re-validated; the stored pairs must match)."""
        if not isinstance(spec, dict):
            raise ValueError("spec must be a mapping (MechanismDesign.spec() output)")
        try:
            nb = spec["neighbors"]
            if isinstance(nb, dict):
                nb = Neighborhood.from_dict(nb["neighborhood"])
            loss = spec["loss"]
            if loss == "custom":
                if spec.get("loss_matrix") is None:
                    raise ValueError("spec has loss 'custom' but no 'loss_matrix'")
                loss = spec["loss_matrix"]
            design = cls(
                n=spec["n"],
                eps=spec["eps"],
                delta=spec.get("delta", 0.0),
                neighbors=nb,
                outputs=spec.get("outputs"),
                loss=loss,
                objective=spec.get("objective", "bayes"),
                prior=spec.get("prior"),
                privacy=spec.get("privacy", "dp"),
                max_loss=spec.get("max_loss"),
                directed=bool(spec.get("directed", False)),
            )
        except KeyError as exc:
            raise ValueError(f"spec lacks the field {exc.args[0]!r}") from None
        pairs = spec.get("pairs")
        if pairs is not None and sorted(map(tuple, pairs)) != sorted(map(tuple, design.pairs.tolist())):
            raise ValueError("spec 'pairs' do not match its neighbors")
        return design

    def replace(self, **changes: Any) -> MechanismDesign:
        """A copy with some :meth:`spec` fields changed (e.g. ``delta=``), re-validated."""
        return MechanismDesign.from_spec({**self.spec(), "pairs": None, **changes})

    def key(self, **solve_options: Any) -> str:
        """Stable hash of the problem and solve options (cache key)."""
        return problem_key(self.spec(), solve_options)

    def __repr__(self) -> str:
        d = f"delta={self.delta}" if self.objective != "delta" else f"max_loss={self.max_loss}"
        return (
            f"MechanismDesign(n={self.n}, eps={self.eps}, {d}, neighbors={self.describe_neighbors()!r}, "
            f"outputs={self.outputs.size}, loss={self.loss!r}, objective={self.objective!r}, privacy={self.privacy!r})"
        )

    # ------------------------------------------------------------------ model
    def initial_rows(self) -> np.ndarray | None:
        """The (pair, output) entries the lazy solve starts from, or ``None`` for the full model.

        Entry ``(k, y)`` of pair ``(x, x')`` is included when ``y`` is among the
        ``2 w0 + 1`` cheapest outputs of ``x`` or of ``x'`` (module docstring).
        """
        if self.loss == "er":
            # a flat loss spreads the optimum over far outputs: the lazy rounds (3 at n = 100 and 500)
            # cost more than the full model by dual simplex (0.85 s and 21 s against 4.2 s and 60 s,
            # benchmarks/RESULTS.md)
            return None
        depth = self.delta if self.objective != "delta" and self.delta > 0 else PURE_DEPTH
        w0 = int(math.ceil(math.log(1.0 / depth) / self.eps)) + 2
        if 2 * w0 + 1 >= self.outputs.size:
            return None
        near = self._rank() <= 2 * w0
        active = near[self.pairs[:, 0]] | near[self.pairs[:, 1]]
        return None if active.mean() > 0.5 else active

    def _rank(self) -> np.ndarray:
        """``rank[x, y]``: position of output y among x's outputs by loss, ties broken by ``|v_y - x|``.

        The tie-break keeps the lazy rows of a flat loss (the error rate) in a band around the diagonal.
        """
        dist = np.abs(np.asarray(self.outputs, dtype=float)[None, :] - np.arange(self.n + 1)[:, None])
        order = np.lexsort((dist, self.loss_matrix), axis=1)
        return np.argsort(order, axis=1, kind="stable")

    def _model(self, active: np.ndarray | None, formulation: str) -> tuple[LinearModel, np.ndarray]:
        """The model restricted to ``active`` entries, and the flat matrix index of each ``P`` column."""
        R, C = self.matrix_shape
        if active is None:
            used = np.ones((R, C), dtype=bool)
        else:
            used = np.zeros((R, C), dtype=bool)
            ks, ys = np.nonzero(active)
            used[self.pairs[ks, 0], ys] = True
            used[self.pairs[ks, 1], ys] = True
            # an entry in no privacy row is useful only as the cheapest such entry of its row
            free = np.where(used, R * C, self._rank())
            best = np.argmin(free, axis=1)
            has = free[np.arange(R), best] < R * C
            used[np.arange(R)[has], best[has]] = True
        entries = np.flatnonzero(used.ravel())
        mb = ModelBuilder()
        P = mb.add_vars(entries.size, lb=0.0, ub=1.0, name="P")
        flat = np.full(R * C, -1, dtype=np.int64)
        flat[entries] = P
        cols = flat.reshape(R, C)
        xs = entries // C
        mb.add_rows(xs, P, 1.0, lower=1.0, upper=1.0)  # rows of P sum to 1
        _matrix_rows(
            mb,
            cols,
            self.loss_matrix,
            self.weights,
            self.pairs,
            active,
            eps=self.eps,
            privacy=self.privacy,
            delta=self.delta,
            objective=self.objective,
            max_loss=self.max_loss,
            formulation=formulation,
        )
        # the error rate's full model solves fastest by dual simplex, also when large (see initial_rows)
        return mb.build(lp_algorithm="simplex" if active is None and self.loss == "er" else None), entries

    def build_model(self, *, formulation: str = "hull", active: np.ndarray | None = None) -> LinearModel:
        """The LP/MILP as a solver-neutral sparse model.

        Variable blocks: ``P`` (the matrix entries kept, C order; all of them
        for the full model), ``z`` (minimax epigraph) or ``t`` (minimised
        delta), then ``s`` (DP excess) or ``y``/``u`` (PDP leak mass and
        indicators), one per (pair, output) entry of ``active`` (default: all,
        the full model).
        """
        check_choice("formulation", formulation, ("hull", "bigm"))
        if active is not None:
            active = np.asarray(active, dtype=bool)
            if active.shape != (self.pairs.shape[0], self.outputs.size):
                raise ValueError(f"active must have shape (pairs, m+1) = {(self.pairs.shape[0], self.outputs.size)}")
        return self._model(active, formulation)[0]

    def to_mps(self, path: str | os.PathLike) -> Path:
        """Write the full model as an MPS file, for any external solver."""
        return write_mps(self.build_model(), path)

    def pair_layout(self) -> PairLayout:
        """How :mod:`optnoise.certify` checks, repairs and samples this design's matrix."""
        R, C = self.matrix_shape
        L = self.loss_matrix
        w = self.weights
        if w is None:  # minimax: one loss row per input
            rows = np.zeros((R, R * C))
            rows[np.repeat(np.arange(R), C), np.arange(R * C)] = L.ravel()
        else:
            rows = (w[:, None] * L).reshape(1, R * C)

        def resolve(delta: float, solver: str) -> np.ndarray | None:
            objective = "bayes" if self.objective == "delta" else self.objective
            res = self.replace(objective=objective, delta=delta, max_loss=None).solve(solver=solver)
            return None if res.status != "optimal" else res.matrix

        return matrix_layout(self.pairs, self.outputs, rows, self.privacy, resolve)

    # ------------------------------------------------------------------ solve
    def solve(
        self,
        solver: str = "auto",
        time_limit: float | None = None,
        *,
        mip_gap: float = MIP_REL_GAP,
        verbose: bool = False,
        cache: str | os.PathLike | None = None,
        formulation: str = "hull",
        options: dict[str, Any] | None = None,
        concurrent: bool = True,
    ) -> MechanismResult:
        """Solve the design (lazy rows, see the module docstring) and re-verify the matrix.

        Parameters are those of :meth:`optnoise.NoiseDesign.solve`:
        ``solver``, ``time_limit`` (seconds over all rounds), ``mip_gap``,
        ``verbose``, ``cache`` (folder of results keyed by :meth:`key`; see
        :mod:`optnoise.cache`), ``formulation`` (``"hull"`` or ``"bigm"`` for
        ``"pdp"``), raw HiGHS ``options`` and ``concurrent``. With
        ``solver="auto"`` (default) the LPs run on HiGHS (the algorithm chosen
        by size, see :func:`_solve_lp`) and the ``"pdp"`` MILPs race HiGHS
        against SCIP (:func:`optnoise.solvers.solve_model`); ``"highs"`` is
        deterministic.

        Notes
        -----
        Statuses mean what they say, as for :meth:`optnoise.NoiseDesign.solve`:
        a matrix that fails re-verification (:mod:`optnoise.tolerance`) is
        ``"unverified"``, never ``"optimal"``; for the loss objectives it is
        first replaced by its exact repair when that costs at most
        :data:`POLISH_RTOL` (relative). Uniform rows are always feasible with a
        loss objective, so a solver's ``"infeasible"`` there is retried
        (:func:`_solve_lp`) and, if it persists, reported as ``"error"``.
        """
        options, time_limit, mip_gap, opts = check_solve_args(
            solver, formulation=formulation, options=options, time_limit=time_limit, mip_gap=mip_gap
        )
        path = entry_path(cache, self.key(**opts))
        hit = load_entry(path, self.spec(), lambda data: MechanismResult.from_dict(data, design=self))
        if hit is not None:
            return hit
        res = self._solve_lazy(solver, time_limit, mip_gap, verbose, formulation, options, concurrent)
        lp = not (self.privacy == "pdp" and not self.is_pure)
        large = (res.model_size or {}).get("rows", 0) >= IPM_ROWS
        repair_failed: MechanismResult | None = None  # a result whose exact repair was tried and failed
        if res.status == UNVERIFIED and self.objective != "delta" and large:
            # on a large LP the exact repair first: it costs seconds where an interior-point re-solve costs
            # minutes (n = 500, error rate: 7.7 s against 81 s); small LPs try the re-solve first, whose
            # optimum is exact rather than within POLISH_RTOL
            res = self._polish(res, solver) or res
            repair_failed = res if res.status == UNVERIFIED else None
        if res.status == UNVERIFIED and solver in ("highs", "auto") and lp and "solver" not in (options or {}):
            # tiny pure-DP tails beside zeros are met within dual simplex's tolerance only; interior point
            # with crossover meets those rows to ~1e-16
            again = self._solve_lazy(
                "highs", time_limit, mip_gap, verbose, formulation, {**(options or {}), "solver": "ipm"}, concurrent
            )
            again.solve_time += res.solve_time
            if again.status == "optimal":
                again.message = f"{again.message}; re-solved with interior point after: {res.message}"
                res = again
        if res.status == UNVERIFIED and self.objective != "delta" and res is not repair_failed:
            res = self._polish(res, solver) or res
        if res.status == "infeasible" and self.objective != "delta":
            res.status = "error"
            res.message = (
                "the solver reported 'infeasible', but uniform rows are feasible: a numerical failure, not "
                f"infeasibility; solver said: {res.message}"
            )
        store_entry(path, self.spec(), res)
        return res

    def _solve_lazy(
        self,
        solver: str,
        time_limit: float | None,
        mip_gap: float,
        verbose: bool,
        formulation: str,
        options: dict[str, Any] | None,
        concurrent: bool = True,
    ) -> MechanismResult:
        R, C = self.matrix_shape
        E = float(np.exp(self.eps))
        a, b = self.pairs[:, 0], self.pairs[:, 1]
        # a missing row violated by less than this cannot move the re-verified delta past its allowance
        d = self.delta if self.objective != "delta" else 0.0
        tol = min(LAZY_TOL, (delta_allowance(d) - d) / C)
        active = self.initial_rows()
        start = time.perf_counter()
        total, rounds = 0.0, 0
        while True:
            rounds += 1
            if rounds > MAX_ROUNDS:
                active = None  # give up on lazy rows: the full model
            model, entries = self._model(active, formulation)
            left = None if time_limit is None else max(1e-3, time_limit - (time.perf_counter() - start))
            out = _solve_lp(model, solver, left, mip_gap, verbose, options, self.objective != "delta", concurrent)
            if out.solver not in ("highs", "scip") and out.x is not None:  # SCIP polishes its own
                # PDP indicators are re-verified with a ~1e-6 eps slack, finer than PuLP's ~8-digit solution files.
                out = polish_with_highs(model, out)
            backend_objective = out.info.get("backend_objective", out.objective)  # before any polish
            total += out.solve_time
            P: np.ndarray | None = None
            if out.x is not None:
                flat = np.zeros(R * C)
                flat[entries] = out.x[model.block("P")]
                P = flat.reshape(R, C)
            if P is None or out.status != "optimal" or active is None:
                break
            viol = (P[a] - E * P[b] > tol) & ~active
            if not viol.any():
                break
            # every row of the cells (x, y) around a violation, in a window over inputs and outputs
            # that doubles every round, so that a growing support is caught in a few rounds
            hot = np.zeros((R, C), dtype=bool)
            ks, ys = np.nonzero(viol)
            hot[a[ks], ys] = hot[b[ks], ys] = True
            w = min(max(R, C), 2 ** (rounds + 1) - 1)
            hot = binary_dilation(hot, structure=np.ones((2 * w + 1, 2 * w + 1), dtype=bool))
            active = active | hot[a] | hot[b]
        message = out.message
        if P is not None and active is not None and out.status != "optimal":
            if np.any((P[a] - E * P[b] > tol) & ~active):
                P, message = None, f"{message}; the incumbent of the restricted model violates missing rows"
        matrix = None
        if P is not None:
            # Solver round-off can leave -1e-12 entries; the matrix is reported clipped and renormalised.
            P = np.clip(P, 0.0, None)
            if np.all(np.isfinite(P)) and np.all(P.sum(axis=1) > 0):
                matrix = P / P.sum(axis=1, keepdims=True)
        delta_objective = None
        if self.objective == "delta" and out.x is not None:
            delta_objective = float(out.x[model.block("t")][0])
        return MechanismResult(
            design=self,
            status="error" if out.status == "optimal" and matrix is None else out.status,
            matrix=matrix,
            solver=solver,
            solve_time=total,
            model_size=model.size,
            gap=out.gap,
            message=message,
            delta_objective=delta_objective,
            backend_objective=backend_objective,
            rounds=rounds,
        )

    def _polish(self, res: MechanismResult, solver: str) -> MechanismResult | None:
        """A verified matrix as close as the tolerance rule allows to an unverified one, or ``None``.

        As :meth:`optnoise.NoiseDesign.solve` does for PMFs: the exact
        certification (:func:`optnoise.certify.certify_result`) repairs a
        solution that is right up to the solver's tolerance, here with a loss
        budget of :data:`POLISH_RTOL`; its exact matrix passes the float rule a
        fortiori. ``None`` when the repair costs more.
        """
        if res.matrix is None or res.loss is None:
            return None
        try:
            cd = certify_result(res, max_loss=POLISH_RTOL, allow_unverified=True, solver="highs")
        except ValueError:  # CertificationError: no repair within the budget
            return None
        change = (cd.loss - res.loss) / max(1.0, abs(res.loss))
        out = replace(
            res,
            status="optimal",
            matrix=cd.matrix_float,
            gap=max(float(res.gap or 0.0), change, 0.0),
            message=(
                f"the solver's matrix failed re-verification ({res.message}); replaced by its exact repair "
                f"({cd.repair['method']}, relative loss change {change:.3g})"
            ),
        )
        return out if out.status == "optimal" else None


def _solve_lp(
    model: LinearModel,
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    verbose: bool,
    options: dict[str, Any] | None,
    always_feasible: bool,
    concurrent: bool = True,
) -> Any:
    """:func:`~optnoise.solvers.solve_model`, choosing HiGHS' LP algorithm when the caller did not.

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
        return solve_model(
            model,
            solver=solver,
            time_limit=time_limit,
            mip_gap=mip_gap,
            verbose=verbose,
            options=opts,
            concurrent=concurrent,
        )

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


@dataclass
class MechanismResult(CheckedResult):
    """The outcome of :meth:`MechanismDesign.solve`.

    Attributes
    ----------
    matrix : ndarray or None
        ``P[x, y]``, shape ``(n+1, m+1)``, rows summing to 1; ``None`` without a solution.
    status : str
        One of :data:`optnoise.tolerance.RESULT_STATUSES`: ``"optimal"``,
        ``"infeasible"``, ``"time_limit"``, ``"unbounded"``, ``"error"`` or
        ``"unverified"`` (the solver claimed a matrix that fails
        re-verification; ``message`` says why). ``"optimal"`` always implies
        :meth:`verify`.
    loss : float or None
        The design's loss of ``matrix`` (Bayes expectation, worst input for
        minimax; the Bayes loss for ``objective="delta"``).
    achieved : dict
        ``{"dp", "pdp"}``: delta of the matrix at the design's eps over its
        ordered pairs, recomputed with :func:`optnoise.privacy.mechanism_delta`
        (PDP indicators with the relative eps slack of
        :func:`optnoise.tolerance.pdp_rtol`).
    actual : dict
        Errors of the released value (:func:`matrix_errors`).
    solve_time : float
        Seconds in the solver, over all rounds.
    model_size : dict
        Rows, columns, integers and nonzeros of the last model solved.
    rounds : int
        Models solved (lazy rows; 1 when the first model was already exact).
    gap, message, delta_objective, backend_objective
        As for :class:`optnoise.DesignResult`.
    """

    _SOLUTION = "matrix"

    design: MechanismDesign
    status: str
    matrix: np.ndarray | None
    solver: str
    solve_time: float
    model_size: dict[str, int]
    gap: float | None = None
    message: str = ""
    delta_objective: float | None = None
    backend_objective: float | None = None
    rounds: int = 1
    achieved: dict[str, float] = field(default_factory=dict)
    actual: dict[str, float] = field(default_factory=dict)
    loss: float | None = None

    def __post_init__(self) -> None:
        check_choice("status", self.status, RESULT_STATUSES)
        if self.matrix is None:
            return
        d = self.design
        P = np.asarray(self.matrix, dtype=float)
        if P.shape != d.matrix_shape:
            raise ValueError(f"matrix must have shape (n+1, m+1) = {d.matrix_shape}; got {P.shape}")
        for x in range(P.shape[0]):
            check_pmf(f"matrix row {x}", P[x], atol=1e-6)
        self.matrix = P
        self.loss = d.loss_of(P)
        self.achieved = {
            "dp": float(mechanism_delta(P, d.pairs, d.eps, notion="dp")),
            "pdp": float(mechanism_delta(P, d.pairs, d.eps, notion="pdp", rtol=pdp_rtol(d.eps))),
        }
        self.actual = matrix_errors(P, d.outputs)
        # one place decides whether a claimed solution may keep its status (optnoise.tolerance)
        self._settle(
            self.loss,
            float(d.max_loss or 0.0) if d.objective == "delta" else None,
            measure="Bayes loss",
            cap_name="max_loss",
        )

    def certify(self, **kwargs: Any) -> Any:
        """Exact certificate and exact sampler (a :class:`~optnoise.certify.CertifiedMechanism`).

        See :func:`optnoise.certify.certify_result` for the options.
        """
        return certify_result(self, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the keys of ``optnoise mechanism --format json``)."""
        d = self.design
        spec = d.spec()
        return {
            "n": d.n,
            "eps": d.eps,
            "delta": d.delta if d.objective != "delta" else self.delta_objective,
            "neighbors": spec["neighbors"],
            "directed": spec["directed"],
            "pairs": spec["pairs"],
            "outputs": d.outputs.tolist(),
            "loss_function": d.loss,
            "objective": d.objective,
            "prior": spec["prior"],
            "privacy": d.privacy,
            "max_loss": d.max_loss,
            "status": self.status,
            "verified": self.verify(),
            "matrix": None if self.matrix is None else self.matrix.tolist(),
            "loss": self.loss,
            "achieved": self.achieved,
            "actual": self.actual,
            "solver": self.solver,
            "solve_time_s": self.solve_time,
            "gap": self.gap,
            "backend_objective": self.backend_objective,
            "model_size": self.model_size,
            "rounds": self.rounds,
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, data: Any, *, design: MechanismDesign) -> MechanismResult:
        """Rebuild a result of ``design`` from :meth:`to_dict` output (re-verifies the matrix).

        Raises ``ValueError`` naming the field that is missing or malformed; a
        matrix that fails re-verification comes back ``"unverified"``.
        """
        common = cls._common_fields(data, "MechanismResult")
        if "matrix" not in data:
            raise ValueError("result lacks the field 'matrix'")
        rounds = data.get("rounds", 1)
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
            raise ValueError(f"result field 'rounds' must be a positive integer; got {rounds!r}")
        raw = data["matrix"]
        matrix = None if raw is None else real_array("result field 'matrix'", raw)
        delta = common.pop("delta")
        return cls(
            design=design,
            matrix=matrix,
            delta_objective=delta if design.objective == "delta" else None,
            rounds=rounds,
            **common,
        )

    def __repr__(self) -> str:
        loss = "None" if self.loss is None else f"{self.loss:.6g}"
        return (
            f"MechanismResult(status={self.status!r}, loss={loss}, "
            f"achieved={ {k: round(v, 6) for k, v in self.achieved.items()} }, solver={self.solver!r})"
        )


register_spec_kind("mechanism", MechanismDesign.from_spec)
