"""The engine: a solver-neutral model, the backends that solve it, and what every layer shares.

* :mod:`~optnoise.engine.model`: :class:`LinearModel` (sparse LP/MILP, optional cones) and its builder
* :mod:`~optnoise.engine.solve`: :func:`solve_model`, the one entry point to every backend
* :mod:`~optnoise.engine.output`: :class:`SolverOutput`, what a backend returns
* :mod:`~optnoise.engine.highs`, :mod:`~optnoise.engine.scip`, :mod:`~optnoise.engine.pulp_backend`,
  :mod:`~optnoise.engine.conic`: one module per backend family (HiGHS, SCIP, PuLP's CBC/Gurobi/CPLEX,
  cvxpy's Clarabel/SCS)
* :mod:`~optnoise.engine.backend`, :mod:`~optnoise.engine.backends`: what a backend declares it can do,
  and the registry of backends (one line each) that ``solve_model`` and ``SOLVERS`` read
* :mod:`~optnoise.engine.race`: ``solver="auto"``, HiGHS and SCIP raced in two processes
* :mod:`~optnoise.engine.lazy`: LPs whose rows are added once violated
* :mod:`~optnoise.engine.tolerance`: solver tolerances and the proven gap a status "optimal" needs
  (the re-verification rule is privacy's: :mod:`optnoise.privacy.verification`)
* :mod:`~optnoise.engine.cache`: the on-disk cache of results
* :mod:`~optnoise.engine.validation`, :mod:`~optnoise.engine.io`: shared input validation and file helpers

Nothing here knows about privacy or designs: the layers above build models and
read solutions.
"""

from optnoise.engine.model import LinearModel, ModelBuilder
from optnoise.engine.output import STATUSES, SolverOutput
from optnoise.engine.solve import SOLVERS, available_solvers, solve_model

__all__ = [
    "LinearModel",
    "ModelBuilder",
    "SolverOutput",
    "STATUSES",
    "SOLVERS",
    "available_solvers",
    "solve_model",
]
