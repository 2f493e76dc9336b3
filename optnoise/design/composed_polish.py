"""A local polish of a composed design's search point: smooth corrections of its log-masses.

The surrogate search of :mod:`optnoise.design.composed_search` moves every log-mass (or every half-line
loss of a symmetric PMF) at once: hundreds of coordinates, which L-BFGS-B leaves short of a minimum within its
evaluation budget. Gilani et al. (ICML 2025) optimise a noise density for k-fold composition by gradient
descent on the composed privacy loss distribution; the polish does that in a few dimensions. It adds to the
search point's log-masses ``theta0`` a correction that is piecewise linear in the distance ``r`` to 0
(symmetric PMFs, :meth:`~optnoise.design.composed_solve.ComposedProblem.fold`) or in the signed offset
(otherwise), with ``K`` knots, and minimises the same surrogate over its ``K`` coefficients
(:func:`~optnoise.design.composed_search.reduced_search`, whose temper keeps the constraint). The knots are
refined (``K = 4, 8, 16, ...``): a coarse correction moves the whole shape, a fine one its details.

Nothing here certifies anything, and the polish never returns a worse point than its start: every point it
keeps is tempered to the cap (``"epsilon"``) or to the target (``"distortion"``) and judged by the problem's own
accounting (:meth:`~optnoise.design.composed_solve.ComposedProblem.eps_of`,
:meth:`~optnoise.design.composed_solve.ComposedProblem.private`); only a strictly better certified point
replaces the start, whose value is returned otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from optnoise.design.composed_families import bisect_smallest, calibrate_temper
from optnoise.design.composed_search import reduced_search, temper

__all__ = [
    "POLISH",
    "POLISH_EVALUATIONS",
    "POLISH_KNOTS",
    "TAIL_MASS",
    "Polished",
    "hat_basis",
    "polish",
    "reach",
    "refine_cells",
    "temper_to_cap",
]

#: Whether the ``"epsilon"`` search of :mod:`optnoise.design.composed_solve` polishes its best point (symmetric
#: problems): at Gilani et al.'s setting it moves the certified eps by ~1e-5 relative for ~10 s at k = 10.
POLISH = True
#: Knot counts of the successive corrections (each one run from the best certified point of the last).
POLISH_KNOTS = (4, 8, 16, 32)
#: The knots span the values where all but this mass of the start lies (module docstring).
TAIL_MASS = 1e-12
#: Most surrogate evaluations of one correction.
POLISH_EVALUATIONS = 150


@dataclass
class Polished:
    """The polish's best certified point (the start when nothing better was certified)."""

    pmf: np.ndarray
    value: float
    improved: bool
    message: str


def hat_basis(x: np.ndarray, knots: int, top: float | None = None) -> np.ndarray:
    """Piecewise-linear hat functions of ``x >= 0`` on ``knots`` evenly spaced knots in ``[0, top]``.

    Row ``i`` holds the weights of ``x[i]`` on the knots (at most two nonzero, summing to 1): any
    piecewise-linear function with those knots is ``basis @ coefficients``; beyond ``top`` (default
    ``max(x)``) it continues its last piece linearly.
    """
    x = np.asarray(x, dtype=float)
    top = float(x.max()) if top is None and x.size else float(top or 0.0)
    K = max(2, int(knots))
    t = x / top * (K - 1) if top > 0 else np.zeros_like(x)
    i0 = np.clip(np.floor(t).astype(np.int64), 0, K - 2)
    th = t - i0
    B = np.zeros((x.size, K))
    B[np.arange(x.size), i0] = 1.0 - th
    B[np.arange(x.size), i0 + 1] += th
    return B


def reach(x: np.ndarray, f: np.ndarray, mass: float = TAIL_MASS) -> float:
    """The least ``R`` with at most ``mass`` of ``f`` at ``x > R`` (the knots' span: beyond it the correction
    is linear, where only the tail's slope matters)."""
    order = np.argsort(x)
    beyond = np.cumsum(f[order][::-1])[::-1]  # mass at x >= x[order[i]]
    over = np.flatnonzero(beyond > mass)
    return float(x[order[over[-1]]]) if over.size else float(np.max(x))


def refine_cells(pmf: np.ndarray) -> np.ndarray:
    """The cell masses at twice the resolution of a piecewise-constant density with cell masses ``pmf``.

    Cells are centred (:mod:`optnoise.design.continuous_composed`): cell ``k`` of width ``w`` is
    ``[(k - 1/2) w, (k + 1/2) w)``, so of the cells of width ``w / 2``, cell ``2k`` lies inside it (half
    its mass) and cell ``2k + 1`` straddles cells ``k`` and ``k + 1`` (a quarter of each). ``pmf`` holds
    cells ``-L..L``; the result holds ``-2L-1..2L+1``. The result is a post-processing of the density (its
    cell index at the finer grid), so it is private for the finer grid's shifts whenever the density is
    for every real shift; as a piecewise-constant density of its own it is the coarse one smoothed (a
    warm start of the finer design, re-certified there).
    """
    f = np.asarray(pmf, dtype=float).ravel()
    z = np.concatenate([[0.0], f, [0.0]])  # cells -L-1..L+1
    out = np.empty(2 * z.size - 1)
    out[0::2] = 0.5 * z
    out[1::2] = 0.25 * (z[:-1] + z[1:])
    return out[1:-1]  # cells -2L-1..2L+1 (the outer two carry nothing)


def temper_to_cap(prob: Any, raw: np.ndarray, cap: float) -> np.ndarray | None:
    """The least sharpened ``raw^a`` (smallest ``a``) whose distortion is within ``cap`` (``None``: none)."""

    def within(a: float) -> bool:
        return prob.distortion(temper(raw, a)) <= cap

    a = bisect_smallest(within, 1.0, rtol=1e-9)
    return None if a is None else temper(raw, a)


def _correction(prob: Any, theta0: np.ndarray, knots: int) -> dict[str, Any]:
    """``reduced_search``'s parametrisation ``theta = theta0 + B x`` (``B``: hats in ``r``, or in the offset)."""
    f = np.exp(theta0)
    f /= f.sum()
    if prob.structured:
        r = prob.fold()[0].astype(float)  # per entry its distance to 0: the correction is symmetric
        B = hat_basis(r, knots, reach(r, f))
    else:  # signed offsets (one coordinate): a hat basis on each side of the mode
        off = np.asarray(prob.support.offsets, dtype=float)
        if off.ndim != 2 or off.shape[1] != 1 or off.shape[0] != theta0.size:
            raise ValueError("polish: an asymmetric problem must have a one-dimensional support")
        pos = off[:, 0] - off[int(np.argmax(theta0)), 0]
        right = hat_basis(np.maximum(pos, 0.0), knots, reach(np.abs(pos), f))
        left = hat_basis(np.maximum(-pos, 0.0), knots, reach(np.abs(pos), f))
        B = np.hstack([right, left[:, 1:]])  # one shared knot at the mode
    pinv = np.linalg.pinv(B)

    def to_theta(x: np.ndarray) -> np.ndarray:
        return theta0 + B @ x

    def from_theta(th: np.ndarray) -> np.ndarray:
        return pinv @ (th - theta0)

    def back(g: np.ndarray) -> np.ndarray:
        return B.T @ g

    return {"to_theta": to_theta, "from_theta": from_theta, "back": back}


def polish(
    prob: Any,
    start: np.ndarray,
    value: float,
    *,
    cap: float | None = None,
    eps: float | None = None,
    knots: tuple[int, ...] = POLISH_KNOTS,
    max_evals: int = POLISH_EVALUATIONS,
    time_left: Callable[[], float] | None = None,
) -> Polished:
    """Polish a certified point of ``prob`` (module docstring); never worse than ``(start, value)``.

    ``"epsilon"`` objective: give ``cap`` (the distortion cap); ``value`` is the start's certified eps, and
    each correction minimises the surrogate delta at the best certified eps so far, is tempered to the cap
    and kept if its certified eps is lower. ``"distortion"`` objective: give ``eps``; ``value`` is the
    start's distortion, each correction minimises the distortion at the surrogate's delta, and is kept if
    its certified calibration costs less. ``time_left()`` (seconds): no new correction starts at 0.
    """
    if (cap is None) == (eps is None):
        raise ValueError("polish needs exactly one of cap (objective 'epsilon') and eps (objective 'distortion')")
    best_f, best_v = np.asarray(start, dtype=float).ravel(), float(value)
    notes: list[str] = []
    fft = prob.search_args()
    if not math.isfinite(best_v):
        return Polished(best_f, best_v, False, "polish: the start has no finite value")
    for K in knots:
        if time_left is not None and time_left() <= 0:
            notes.append(f"K = {K}: out of time")
            break
        theta0 = np.log(np.maximum(best_f, 1e-300))
        theta0 = theta0 - theta0.max()
        common = dict(pairs=prob.pairs, cost=prob.cost, k=prob.k, max_evals=max_evals, time_limit=math.inf)
        common.update(_correction(prob, theta0, K))
        if "max_fft" in fft:
            common["max_fft"] = fft["max_fft"]
        if cap is not None:
            got = reduced_search(best_f, eps=best_v, mode="epsilon", target=cap, **common)
            cand = None if got.pmf is None else temper_to_cap(prob, got.pmf, cap)
            v = math.inf if cand is None else prob.eps_of(cand)
        else:
            assert eps is not None
            got = reduced_search(best_f, eps=eps, mode="distortion", target=prob.delta, **common)
            cand = None if got.pmf is None else calibrate_temper(got.pmf, lambda f: prob.private(f, eps))
            v = math.inf if cand is None else prob.distortion(cand)
        notes.append(f"K = {K}: {v:.6g} ({got.evaluations} evaluations)")
        if cand is not None and v < best_v:
            best_f, best_v = cand, v
    improved = best_v < float(value)
    return Polished(best_f, best_v, improved, "polish: " + "; ".join(notes))
