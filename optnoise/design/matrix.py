"""The general mechanism LP: its neighbour pairs, outputs, losses and privacy rows over P[x, y]."""

from __future__ import annotations

from typing import Any

import numpy as np

from optnoise.design.rows import add_pair_rows
from optnoise.engine.model import ModelBuilder
from optnoise.engine.validation import (
    MAX_COST,
    MAX_OUTPUT,
    MAX_SIZE,
    check_choice,
    check_int,
    check_int_array,
    real_array,
    shown,
)
from optnoise.privacy.neighborhood import Neighborhood, neighbour_pairs

__all__ = [
    "LOSSES",
    "LOSS_OF_METRIC",
    "canonical_loss",
    "resolve_pairs",
    "loss_matrix",
    "matrix_errors",
    "add_matrix_rows",
    "output_values",
    "pair_count_bound",
    "pair_rows_size",
    "size_dict",
]

#: The noise designs' metric names (:data:`optnoise.design.metrics.METRICS`) accepted as mechanism losses, and
#: the loss each names: one vocabulary for both kinds of design. A design stores the loss name (its spec and
#: files keep ``"abs"``/``"sq"``, so older files load unchanged).
LOSS_OF_METRIC = {"mae": "abs", "mse": "sq"}
#: Named losses ``L[x, y]`` of releasing output value ``y`` for input ``x`` (``"mae"``/``"mse"`` alias
#: ``"abs"``/``"sq"``); a matrix is accepted too.
LOSSES = ("abs", "sq", "er", *LOSS_OF_METRIC)


def canonical_loss(loss: str) -> str:
    """The stored name of a named loss: ``"abs"`` for ``"mae"``, ``"sq"`` for ``"mse"``, else itself."""
    return LOSS_OF_METRIC.get(loss, loss)


def resolve_pairs(neighbors: Any, n: int, *, directed: bool = False) -> np.ndarray:
    """Ordered neighbour pairs ``(x, x')`` of inputs ``0..n``, shape ``(K, 2)``, sorted and unique.

    Parameters
    ----------
    neighbors : str, Neighborhood or sequence of pairs
        ``"adjacent"`` (``|x - x'| = 1``), ``"adjacent:K"`` (``1 <= |x - x'| <= K``),
        a shift spec ``"sd:MU"``, ``"bd:MUBAR"``, ``"shifts:1,3"`` (pairs ``x - x' = mu``
        without wrap-around, :func:`optnoise.privacy.neighborhood.neighbour_pairs`), a
        :class:`~optnoise.privacy.neighborhood.Neighborhood` (for example one derived
        from data with :meth:`~optnoise.privacy.neighborhood.Neighborhood.from_data`),
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
            f"a Neighborhood or a list of pairs (x, x'); got {shown(neighbors)}"
        )
    try:
        arr = np.asarray(neighbors)
    except (TypeError, ValueError):
        arr = np.zeros(0)
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] == 0:
        raise ValueError(
            f"neighbors must be a name, a Neighborhood or a non-empty list of pairs (x, x'); got {shown(neighbors)}"
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


def pair_count_bound(neighbors: Any, n: int, directed: bool) -> int | None:
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
        raise ValueError(f"neighbors must be 'adjacent:K' with an integer K; got {shown(whole)}") from None


def output_values(outputs: Any, n: int) -> np.ndarray:
    """The output values: ``0..m`` for an integer m, or the given distinct values.

    Integers (Python or numpy, also beyond int64) are compared exactly against
    ``[-MAX_OUTPUT, MAX_OUTPUT]`` (:data:`~optnoise.engine.validation.MAX_OUTPUT`), never rounded to a
    float first; real values must be finite and within the same bound, so that every loss and error
    of the design is a finite double.
    """
    if outputs is None:
        return np.arange(n + 1)
    if isinstance(outputs, (int, np.integer)) and not isinstance(outputs, (bool, np.bool_)):
        return np.arange(check_int("outputs", outputs, minimum=1, maximum=MAX_SIZE) + 1)
    bad = f"outputs must be an integer m (outputs 0..m) or an array of values; got {shown(outputs)}"
    try:
        raw = np.asarray(outputs)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(bad) from None
    exact = raw.dtype.kind in "iu" or (
        raw.dtype.kind == "O"
        and raw.size > 0
        and all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in raw.ravel())
    )
    if exact:  # integer output values: compared exactly, refused when out of range
        arr = check_int_array("outputs", raw, minimum=-MAX_OUTPUT, maximum=MAX_OUTPUT)
    else:
        try:
            arr = real_array("outputs", outputs)
        except ValueError:
            raise ValueError(bad) from None
    if arr.ndim != 1 or arr.size < 2 or not np.all(np.isfinite(arr)):
        raise ValueError("outputs must be an integer m >= 1 or a 1-D array of at least 2 finite values")
    if not exact and np.max(np.abs(arr)) > MAX_OUTPUT:
        raise ValueError(
            f"outputs must have magnitude <= {MAX_OUTPUT:.0e} (so that the losses |v - x| and (v - x)^2 are "
            f"finite doubles); got {shown(float(np.max(np.abs(arr))))}"
        )
    if np.unique(arr).size != arr.size:
        raise ValueError("outputs must be distinct values")
    return arr.astype(np.int64) if np.all(arr == np.round(arr)) else arr


def loss_matrix(loss: Any, n: int, outputs: np.ndarray) -> np.ndarray:
    """``L[x, y]``: ``"abs"`` ``|v_y - x|``, ``"sq"`` ``(v_y - x)^2``, ``"er"`` ``1[v_y != x]``, or a given matrix."""
    v = np.asarray(outputs, dtype=float)[None, :]
    x = np.arange(n + 1, dtype=float)[:, None]
    if isinstance(loss, str):
        loss = canonical_loss(check_choice("loss", loss, LOSSES))
        if loss == "er":
            return (v != x).astype(float)
        # outputs are within MAX_OUTPUT (see output_values), so |v - x| and its square are finite doubles
        dist = np.abs(v - x)
        top = float(dist.max())
        if (top**2 if loss == "sq" else top) > MAX_COST:
            raise ValueError(
                f"loss {loss!r} of these outputs reaches {top**2 if loss == 'sq' else top:.3g}; loss entries must "
                f"have magnitude <= {MAX_COST:g} (solvers treat ~1e20 as infinite): use outputs closer to 0..n"
            )
        return dist**2 if loss == "sq" else dist
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
    keys extend those of :func:`optnoise.design.metrics.modulo_errors`.
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


def add_matrix_rows(
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


def pair_rows_size(K: int, C: int, notion: str, formulation: str, t: bool) -> tuple[int, int, int, int]:
    """Rows, columns, nonzeros and integers that :func:`~optnoise.design.rows.add_pair_rows` adds.

    For ``K`` pairs of ``C`` entries each, every entry present (the full model).
    """
    M, budget_nnz = K * C, K * C + (K if t else 0)
    pdp = (
        (3 * M + K, 2 * M, 8 * M + budget_nnz, M)
        if formulation == "hull"
        else (5 * M + K, 2 * M, 14 * M + budget_nnz, M)
    )
    return {"pure": (M, 0, 2 * M, 0), "dp": (M + K, M, 3 * M + budget_nnz, 0), "pdp": pdp}[notion]


def size_dict(rows: int, cols: int, nnz: int, ints: int) -> dict[str, int]:
    """A model size as :attr:`optnoise.engine.model.LinearModel.size` reports it."""
    return {"rows": rows, "cols": cols, "integers": ints, "nonzeros": nnz}
