"""What every backend returns: :class:`SolverOutput` and its statuses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["STATUSES", "SolverOutput", "relative_gap"]


#: Possible values of :attr:`SolverOutput.status`.
STATUSES = ("optimal", "feasible", "infeasible", "unbounded", "time_limit", "error")


@dataclass
class SolverOutput:
    """What a backend returns.

    Attributes
    ----------
    status : str
        ``"optimal"``, ``"infeasible"``, ``"unbounded"``, ``"time_limit"`` or ``"error"``.
    x : ndarray or None
        The solution (the incumbent at a time limit), ``None`` when there is none.
    objective : float or None
        Objective value of ``x`` (including the model offset).
    bound : float or None
        Best proven lower bound (MILP); equals ``objective`` at optimality.
    gap : float or None
        Relative gap ``(objective - bound) / max(|objective|, 1e-10)``; 0 for LPs.
    solve_time : float
        Wall-clock seconds spent in the backend.
    solver : str
        The backend that produced ``x``: with ``solver="auto"``, the one that won the race
        (``info["race"]`` holds every backend's final status).
    message : str
        Backend-specific detail (e.g. the raw status).
    info : dict
        Extra detail (``"race"`` for ``solver="auto"``).
    dual : ndarray or None
        Row multipliers of an LP solved by HiGHS (its ``row_dual``): any of them gives a
        proven lower bound through :meth:`~optnoise.engine.model.LinearModel.dual_bound`.
    """

    status: str
    x: np.ndarray | None
    objective: float | None
    bound: float | None
    gap: float | None
    solve_time: float
    solver: str
    message: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    dual: np.ndarray | None = None


def relative_gap(obj: float | None, bound: float | None) -> float | None:
    """``(obj - bound) / max(1, |obj|)``: relative for objectives above 1, absolute below.

    An objective of 1e-13 (an error rate at eps = 30) cannot be proven to a relative 1e-6
    in double precision, and needs not be: every tolerance of optnoise's designs is read
    against ``max(1, |objective|)`` (the repair budget and the canonical stages too).
    """
    if obj is None or bound is None or not np.isfinite(bound):
        return None
    return max(0.0, (obj - bound) / max(abs(obj), 1.0))
