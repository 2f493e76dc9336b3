"""zCDP designs that meet ``sup_{alpha > 1} D_alpha / alpha <= rho``, not only the order grid.

rho-zCDP (Bun and Steinke 2016) asks ``D_alpha(f || f(. + mu)) <= rho alpha`` for *every* order
``alpha > 1`` and every shift of the neighbourhood (both signs when it is undirected: the shift set
lists them). A design solved on a finite order grid meets it at the grid points only; between them, and
below the first order, the divergence may be far larger (on the grid ``{10}`` alone, n = 20, rho =
0.125, the KL divergence of the grid optimum is 0.69, 5.5 rho). :func:`solve_zcdp` makes the returned
PMF meet the whole constraint:

1. **Certification.** :func:`optnoise.privacy.renyi.achieved_rho` bounds the supremum over every order
   rigorously (up to float64 rounding): ``K(alpha) = (alpha - 1) D_alpha`` is convex with ``K(1) = 0``,
   so on each interval of a fine grid its chord bounds it; on ``(1, a_1]`` ``D_alpha <= D_{a_1}``
   (``D`` is nondecreasing in alpha); beyond the last order ``D_alpha <= D_inf``. A PMF is *certified*
   when that bound is at most rho.
2. **Refinement.** The grid problem is solved; when its PMF is not certified, every order where the
   bound peaks above rho (:func:`optnoise.privacy.renyi.violating_orders`; the KL divergence, order 1,
   when it is exceeded on ``(1, a_1]``) is added to the grid with two close neighbours (``alpha - 1``
   times ``1 -+`` :data:`NEIGHBOUR`, so that the chords between them are tight) and orders filling the
   gap around it (:func:`_near`), and the problem is solved again, at most :data:`MAX_REFINEMENTS` times.
3. **Mixture.** The rho-zCDP PMFs form a convex set (``exp((alpha - 1) D_alpha)`` is jointly convex in
   the pair) that contains the uniform PMF (shift-invariant, so every divergence is 0). A PMF that is
   still not certified is mixed with the uniform PMF with the largest weight that certifies
   (:func:`mix_with_uniform`): the result always meets rho.
4. **Bound.** Every grid problem with the ``D_inf`` row left out of its bound (``bound_inf=False``) is a
   relaxation of rho-zCDP (it asks for fewer orders), so each certified lower bound of the refinements
   bounds the rho-zCDP optimum; the largest is kept.

The status is ``"optimal"`` only when the certified PMF is within ``OPTIMAL_GAP`` of that bound: a gap
proven for the true constraint set. Otherwise ``"feasible"`` (or ``"time_limit"``) with ``bound`` and
``gap``. Renyi DP (``privacy="rdp"``) is a finite list of ``(alpha, eps_alpha)``: its guarantee is those
orders only, and it is designed and re-verified at exactly them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from optnoise.engine.output import relative_gap
from optnoise.engine.tolerance import OPTIMAL_GAP
from optnoise.privacy.renyi import achieved_rho, violating_orders
from optnoise.privacy.renyi_solve import RenyiSolution

__all__ = ["MAX_REFINEMENTS", "mix_with_uniform", "solve_zcdp"]

#: Most refinements of the grid by :func:`solve_zcdp` (one re-solve each).
MAX_REFINEMENTS = 4
#: Relative offset (in ``alpha - 1``) of the neighbours added beside a violating order.
NEIGHBOUR = 2e-3
#: Bisection steps of :func:`mix_with_uniform` (relative precision of the uniform share).
MIX_STEPS = 30


def mix_with_uniform(pmf: Any, shifts: Any, rho: float) -> np.ndarray:
    """``theta pmf + (1 - theta) uniform`` with the largest ``theta`` whose certified rho is at most ``rho``.

    The share ``s = 1 - theta`` is bracketed from the relative excess of ``pmf`` upwards (doubling), then
    bisected; ``s = 1`` (the uniform PMF, every divergence 0) always passes.
    """
    f = np.asarray(pmf, dtype=float)
    uniform = np.full(f.shape, 1.0 / f.size)

    def ok(share: float) -> bool:
        return achieved_rho((1.0 - share) * f + share * uniform, shifts)[0] <= rho

    excess = achieved_rho(f, shifts)[0] / rho - 1.0
    if not excess > 0:
        return f
    lo, hi = 0.0, min(1.0, 0.5 * excess)  # lo fails, hi is tried next
    while hi < 1.0 and not ok(hi):
        lo, hi = hi, min(1.0, 2.0 * hi)
    for _ in range(MIX_STEPS):
        mid = 0.5 * (lo + hi)
        if hi - lo <= 1e-3 * hi:
            break
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return (1.0 - hi) * f + hi * uniform


def _near(grid: tuple[float, ...], v: float) -> list[float]:
    """Orders to add for a violation at ``v``: ``v`` and two close neighbours, and the gap around it filled.

    Below the grid's first order the excess shrinks only as its order approaches 1 (the KL limit), so
    ``alpha - 1`` is halved six times down from ``v`` and the KL divergence (order 1) is added;
    between two orders, three more split the gap geometrically in ``alpha - 1``.
    """
    if v <= 1.0:
        return [1.0]
    t = v - 1.0
    out = [v, 1.0 + t * (1.0 - NEIGHBOUR), 1.0 + t * (1.0 + NEIGHBOUR)]
    below = [a - 1.0 for a in grid if 1.0 < a < v]
    above = [a - 1.0 for a in grid if a > v]
    if not below:
        out += [1.0] + [1.0 + t * 0.5**k for k in range(1, 7)]
    elif above:
        lo, hi = max(below), min(above)
        out += [1.0 + lo * (hi / lo) ** (k / 4.0) for k in range(1, 4)]
    return out


def solve_zcdp(
    solve_grid: Callable[[tuple[float, ...], float | None], RenyiSolution],
    cost: np.ndarray,
    shifts: np.ndarray,
    rho: float,
    alphas: tuple[float, ...],
    *,
    time_limit: float | None = None,
) -> RenyiSolution:
    """A rho-zCDP design certified over every order (module docstring).

    ``solve_grid(orders, time_limit)`` solves the design on an order grid with a bound that holds
    without the ``D_inf`` row; ``cost`` is the distortion of every noise value.
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    grid = tuple(sorted(set(alphas)))
    cost = np.asarray(cost, dtype=float)
    best: np.ndarray | None = None
    value, bound = math.inf, -math.inf
    notes: list[str] = []
    sol: RenyiSolution | None = None
    for step in range(MAX_REFINEMENTS + 1):
        remaining = None if deadline is None else max(deadline - time.perf_counter(), 1.0)
        sol = solve_grid(grid, remaining)
        if sol.bound is not None and math.isfinite(sol.bound):
            bound = max(bound, sol.bound)
        if sol.pmf is None:
            break
        rho_hat, where = achieved_rho(sol.pmf, shifts)
        pmf = sol.pmf if rho_hat <= rho else mix_with_uniform(sol.pmf, shifts, rho)
        v = float(np.sum(cost * pmf))
        if v < value:
            best, value = pmf, v
        gap = relative_gap(value, bound)
        if rho_hat <= rho or (gap is not None and gap <= OPTIMAL_GAP):
            break
        added = sorted({a for v in violating_orders(sol.pmf, shifts, rho) for a in _near(grid, v)} - set(grid))
        if not added or step == MAX_REFINEMENTS or (deadline is not None and time.perf_counter() >= deadline):
            break
        notes.append(
            f"{len(added)} order(s) added near {', '.join(f'{a:.6g}' for a in added[:: 3 if len(added) > 3 else 1])}"
        )
        notes[-1] += f" (the grid optimum reached D_alpha/alpha = {rho_hat:.6g} at {where:.6g})"
        grid = tuple(sorted({*grid, *added}))
    assert sol is not None
    elapsed = time.perf_counter() - t0
    if best is None:
        return replace(sol, solve_time=elapsed)
    fin = bound if math.isfinite(bound) else None
    gap = relative_gap(value, fin)
    if gap is not None and gap <= OPTIMAL_GAP:
        status = "optimal"
    elif sol.status == "time_limit" or (deadline is not None and time.perf_counter() >= deadline):
        status = "time_limit"
    else:
        status = "feasible"
    mixed = best is not sol.pmf
    msg = sol.message
    if notes:
        msg += "; grid refined for the supremum over all orders: " + ", ".join(notes)
    if mixed:
        msg += "; mixed with the uniform PMF to meet rho at every order (the grid optimum did not)"
    msg += f"; rho certified over every order alpha > 1, proven gap {'n/a' if gap is None else f'{gap:.3g}'}"
    return replace(sol, status=status, pmf=best, objective=value, bound=fin, gap=gap, solve_time=elapsed, message=msg)
