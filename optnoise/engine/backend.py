"""What a solver backend is: one solve function and the capabilities it declares.

Each backend module (:mod:`~optnoise.engine.highs`, :mod:`~optnoise.engine.scip`,
:mod:`~optnoise.engine.pulp_backend`, :mod:`~optnoise.engine.conic`, :mod:`~optnoise.engine.race`)
declares its :class:`Backend` beside its code, and :mod:`optnoise.engine.backends` lists them, one
line each. :func:`optnoise.engine.solve.solve_model` and the design layer read the capabilities
(``integers``, ``warm_start``, ``cones``, ``time_limit``, ``highs_options``, ``exact_points``)
instead of testing backend names, so adding a backend is one module and one registry line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from optnoise.engine.model import LinearModel
    from optnoise.engine.output import SolverOutput

__all__ = ["Backend", "SolveRequest"]


@dataclass(frozen=True)
class SolveRequest:
    """The arguments of one solve, as :func:`~optnoise.engine.solve.solve_model` checked them.

    A backend reads what it can use and ignores the rest (its :class:`Backend` says which).
    """

    time_limit: float | None
    mip_gap: float
    verbose: bool = False
    options: Mapping[str, Any] | None = None
    concurrent: bool = True
    start: np.ndarray | None = None
    conic_solver: str = "clarabel"


@dataclass(frozen=True)
class Backend:
    """A solver backend and what it can do.

    Attributes
    ----------
    name : str
        The ``solver=`` name users pass.
    solve : callable
        ``solve(model, request) -> SolverOutput``; infeasibility and time limits are statuses.
    integers : bool
        Solves MILPs (integer columns).
    warm_start : bool
        Uses ``request.start`` as a first incumbent (a MIP start).
    cones : bool
        Solves models with power/exponential cones.
    time_limit : bool
        Honours ``request.time_limit``.
    highs_options : bool
        Takes raw HiGHS options (``request.options``), so the design layer's robust re-solves
        (other algorithm, presolve off) apply to it.
    exact_points : bool
        Its points meet every row to the engine's feasibility tolerance; ``False`` (a backend read
        back from a text file, about 8 digits) has its points refined by HiGHS
        (:func:`optnoise.engine.highs.refine_with_highs`).
    available : callable
        ``available() -> bool``: whether this machine can run it.
    """

    name: str
    solve: Callable[[LinearModel, SolveRequest], SolverOutput]
    integers: bool = True
    warm_start: bool = False
    cones: bool = False
    time_limit: bool = True
    highs_options: bool = False
    exact_points: bool = True
    available: Callable[[], bool] = lambda: True
