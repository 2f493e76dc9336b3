"""The registry of solver backends: one line per backend, in the order ``SOLVERS`` lists them.

Each entry is the :class:`~optnoise.engine.backend.Backend` its module declares. To add a
backend, write its module (a solve function and a ``BACKEND`` with its capabilities) and add
it here; :func:`optnoise.engine.solve.solve_model`, ``SOLVERS``, ``available_solvers()``, the
CLI's ``--solver`` choices and the design layer's re-solves follow from the registry.
"""

from __future__ import annotations

from optnoise.engine import conic, highs, pulp_backend, race, scip
from optnoise.engine.backend import Backend
from optnoise.engine.validation import check_choice

__all__ = ["BACKENDS", "backend", "backend_of_output"]

#: Every backend by its ``solver=`` name.
BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in (
        race.BACKEND,  # "auto", the default portfolio
        highs.BACKEND,
        scip.BACKEND,
        *pulp_backend.BACKENDS,  # "cbc", "gurobi", "cplex"
        conic.BACKEND,  # "cvxpy"
    )
}


def backend(name: str) -> Backend:
    """The registered backend ``name``; ``ValueError`` listing the registered names otherwise."""
    return BACKENDS[check_choice("solver", name, tuple(BACKENDS))]


def backend_of_output(name: str) -> Backend | None:
    """The backend that produced a :class:`~optnoise.engine.output.SolverOutput` (its ``solver``), if registered."""
    return BACKENDS.get(name)
