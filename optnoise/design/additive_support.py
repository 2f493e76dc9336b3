"""Growing the finite support ``L`` of an additive design until its boundary is inactive.

The additive release's families (:mod:`optnoise.design.additive`: noises on ``{-L..L}`` plus tails of a
factor the design fixes) are nested in ``L``: a noise of the family at ``L`` is one of the family at
any larger ``L`` (its masses past ``L`` already decay by the tail factor). So the optimum can only fall
as ``L`` grows, and once the proven lower bound at a wider support is within :data:`SUPPORT_RTOL` of
the optimum at ``L``, growing further cannot lower it by more: the boundary is inactive, the optimum
does not depend on ``L``, and the result says so (``support_note``). :func:`grow_support` is that loop,
shared by every notion and objective of the release (the (eps, delta) LP and MILP, the Renyi designs,
``objective="delta"``): each passes its solve at a support, the value the objective minimises, and
optionally a cheaper bound at the wider support (an LP relaxation with the rows that can bind).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from optnoise.engine.progress import time_left
from optnoise.engine.tolerance import OPTIMAL_GAP

__all__ = ["DELTA_FLOOR", "MAX_SUPPORT", "SUPPORT_RTOL", "grow_support"]

#: Largest finite half-width ``L`` (given or grown).
MAX_SUPPORT = 100_000
#: Growing ``L`` stops when the proven bound at ``L + L/4`` is within this of the optimum at ``L``: the
#: optimality gap of every status (:data:`optnoise.engine.tolerance.OPTIMAL_GAP`), relative to
#: ``max(1, |optimum|)`` for a distortion and to the value itself for a minimised delta (which is small).
SUPPORT_RTOL = OPTIMAL_GAP
#: ... plus this much absolutely for a minimised delta: a delta of 1e-12 or less is what an LP solver's
#: feasibility tolerance leaves of a zero one (a cap at or above the pure-DP optimum).
DELTA_FLOOR = 1e-12

#: ``(result, wider L) -> (bound or None, its model's size)``: a proven lower bound at the wider support.
Relaxed = Callable[[Any, int], "tuple[float | None, dict[str, int]]"]


def grow_support(
    L: int,
    res: Any,
    solve_at: Callable[[int], Any],
    *,
    period: int,
    value: Callable[[Any], float],
    relative: bool = False,
    relaxed: Relaxed | None = None,
    time_limit: float | None = None,
    t0: float | None = None,
    cap: int = MAX_SUPPORT,
) -> Any:
    """Grow ``L`` from ``res`` (the result at ``L``) by a quarter at a time until the boundary is inactive.

    Parameters
    ----------
    solve_at : callable
        ``L -> result`` at that support (``bound``, ``status``, ``solve_time`` and the value).
    value : callable
        The value the objective minimises, of a result with a PMF (distortion, or the minimised delta).
    relative : bool
        Compare values relative to themselves (a small minimised delta; plus :data:`DELTA_FLOOR`), not to
        ``max(1, |value|)``.
    relaxed : callable, optional
        A cheaper proven bound at the wider support, tried before solving there.
    cap : int
        The largest ``L`` tried (at most :data:`MAX_SUPPORT`; a solve whose cost grows fast with ``L`` passes less).

    Returns
    -------
    Any
        The result at the last ``L`` with ``support_note`` saying why growing stopped: the boundary
        inactive (a proven bound at the wider support within :data:`SUPPORT_RTOL`), ``cap`` reached,
        the time limit, or a solve that ended without a better optimum or a proof.
    """
    t0 = time.perf_counter() if t0 is None else t0
    spent = res.solve_time or 0.0

    def done(note: str) -> Any:
        res.support_note, res.solve_time = note, spent
        return res

    while True:
        wide = L + max(L // 4, period)  # a quarter more: the proof LP stays small
        out_of_time = time_limit is not None and (time_left(time_limit, t0) or 0.0) <= 1e-3
        if res.status not in ("optimal", "feasible") or wide > min(cap, MAX_SUPPORT) or out_of_time:
            return done(
                f"support L = {L}: not grown further (status {res.status!r}"
                + (f", the support cap {min(cap, MAX_SUPPORT)} reached" if wide > min(cap, MAX_SUPPORT) else "")
                + (", time limit reached" if out_of_time else "")
                + "); a larger L may lower the optimum"
            )
        v = value(res)
        slack = SUPPORT_RTOL * abs(v) + DELTA_FLOOR if relative else SUPPORT_RTOL * max(1.0, abs(v))
        inactive = (
            f"support L = {L} chosen automatically: the proven lower bound {{bound:.10g}} at L = {wide}{{how}} "
            f"is within {SUPPORT_RTOL:g} relative of this {'optimum' if res.status == 'optimal' else 'value'} (the "
            "boundary is inactive; the optimum does not depend on L)"
        )
        if relaxed is not None:
            t1 = time.perf_counter()
            bound, size = relaxed(res, wide)
            spent += time.perf_counter() - t1
            if bound is not None and v - bound <= slack:
                how = f" (an LP relaxation with the {size['rows']} rows that can bind)"
                return done(inactive.format(bound=bound, how=how))
        wider = solve_at(wide)
        spent += wider.solve_time or 0.0
        if wider.bound is not None and v - wider.bound <= slack:
            return done(inactive.format(bound=wider.bound, how=""))
        if wider.status in ("optimal", "feasible") and wider.pmf is not None and value(wider) < v - slack:
            res, L = wider, wide
            continue
        return done(
            f"support L = {L}: at L = {wide} the solve ended {wider.status!r} with bound {wider.bound} "
            f"({wider.message}); a larger L may lower the optimum"
        )
