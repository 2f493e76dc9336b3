"""Clamped additive noise: release clip(q + eta, 0, n) with noise on {-n..n}."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from optnoise.design.matrix import add_matrix_rows, matrix_errors, pair_rows_size, size_dict
from optnoise.engine.model import LinearModel, ModelBuilder
from optnoise.engine.validation import check_int, check_pmf
from optnoise.privacy.curves import mechanism_delta
from optnoise.privacy.verification import dp_eps, pdp_rtol

__all__ = ["clamp_baseline", "clamp_model_size", "clamp_matrix", "clamp_repair", "clamp_model", "clamp_evaluation"]

#: Metrics of clamped releases: error rate, squared and absolute error of the released answer.
CLAMP_METRICS = ("er", "mse", "mae")


def clamp_model_size(
    n: int, pairs: int, *, privacy: str, pure: bool, delta_objective: bool, formulation: str = "hull"
) -> dict[str, int]:
    """Rows, columns, integers and nonzeros of :func:`clamp_model`, computed without building it (exact)."""
    rows, cols, nnz = 2 * n + 3, 4 * n + 3, 8 * n + 5  # f, both tails, their recursions and sum f = 1
    if delta_objective:  # t and the distortion cap over every distinct column of the matrix
        rows, cols, nnz = rows + 1, cols + 1, nnz + (4 * n + 1 if n >= 2 else 4)
    pr, pc, pn, pi = pair_rows_size(pairs, n + 1, "pure" if pure else privacy, formulation, delta_objective)
    return size_dict(rows + pr, cols + pc, nnz + pn, pi)


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


def clamp_baseline(baseline: Any, n: int) -> dict[str, Any]:
    """The plot baseline of a clamped design, as keywords of :func:`~optnoise.plotting.designs.plot_mechanism`:
    a noise PMF on ``-n..n`` (or an object with ``.pmf``, e.g. another result) becomes its clamped matrix,
    with that noise drawn beside the design's; anything else is passed on as is (the plot checks it)."""
    if baseline is None or hasattr(baseline, "matrix"):
        return {"baseline": baseline}
    b = np.asarray(getattr(baseline, "pmf", baseline), dtype=float)
    if b.shape != (2 * n + 1,):
        return {"baseline": baseline}
    noise = check_pmf("baseline", b, atol=1e-6)
    return {"baseline": clamp_matrix(noise, n), "baseline_noise": noise}


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
    add_matrix_rows(
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


def clamp_evaluation(
    design: Any, pmf: Any, pure: bool | None = None, eps: Any = ...
) -> tuple[float, dict[str, float], dict[str, float]]:
    """Distortion, achieved deltas ``{"dp", "pdp"}`` and released errors of a clamped design's PMF
    (no deltas without an eps: a composed design with ``objective="epsilon"``).

    ``pure`` (default: the design's delta is 0) reads the DP delta at the slackened eps that every
    notion shares at delta = 0 (:func:`optnoise.privacy.verification.dp_eps`); ``eps`` (default the
    design's) is where the deltas are read, ``None`` for none.
    """
    pure = design.is_pure if pure is None else pure
    n, eps = design.n, design.eps if eps is ... else eps
    P = clamp_matrix(pmf, n)
    e = np.arange(n + 1)[None, :] - np.arange(n + 1)[:, None]
    distortion = float((P * design.cost[e + n]).sum() / (n + 1))
    if eps is None:  # a composed design minimising eps: no single-release eps to read deltas at
        return distortion, {}, matrix_errors(P)
    achieved = {
        "dp": float(mechanism_delta(P, design.pairs, dp_eps(eps, pure), notion="dp")),
        "pdp": float(mechanism_delta(P, design.pairs, eps, notion="pdp", rtol=pdp_rtol(eps))),
    }
    return distortion, achieved, matrix_errors(P)
