"""optnoise: optimal noise design for differential privacy on discrete finite queries.

>>> from optnoise import NoiseDesign, Neighborhood
>>> res = NoiseDesign(n=8, eps=1.5, neighborhood=Neighborhood.bd(3, directed=True)).solve()
>>> res.status
'optimal'
"""

from optnoise.certify import (
    CertificationError,
    CertifiedDesign,
    CertifiedMechanism,
    certify_result,
    exact_delta,
    exp_bounds,
    load_design,
)
from optnoise.design import METRICS, OBJECTIVES, DesignResult, NoiseDesign, cost_vector, modulo_errors
from optnoise.mechanism_design import MechanismDesign, MechanismResult
from optnoise.model import LinearModel, ModelBuilder
from optnoise.neighborhood import AggregateQuery, Count, Neighborhood, QuantizedMean
from optnoise.privacy import (
    NOTIONS,
    achieved_deltas,
    delta_dp,
    delta_pdp,
    delta_pdp_kadam,
    eps_for_delta,
    hockey_stick,
    mechanism_delta,
)
from optnoise.solvers import SOLVERS, SolverOutput, available_solvers, solve_model
from optnoise.tolerance import DELTA_ATOL, DELTA_RTOL, RESULT_STATUSES, delta_allowance, pdp_rtol, within_delta

__version__ = "0.1.0"

__all__ = [
    "NoiseDesign",
    "DesignResult",
    "CertifiedDesign",
    "CertifiedMechanism",
    "MechanismDesign",
    "MechanismResult",
    "CertificationError",
    "certify_result",
    "load_design",
    "exact_delta",
    "exp_bounds",
    "Neighborhood",
    "AggregateQuery",
    "QuantizedMean",
    "Count",
    "METRICS",
    "OBJECTIVES",
    "NOTIONS",
    "SOLVERS",
    "DELTA_RTOL",
    "DELTA_ATOL",
    "pdp_rtol",
    "RESULT_STATUSES",
    "delta_allowance",
    "within_delta",
    "LinearModel",
    "ModelBuilder",
    "SolverOutput",
    "solve_model",
    "available_solvers",
    "cost_vector",
    "modulo_errors",
    "achieved_deltas",
    "delta_dp",
    "delta_pdp",
    "delta_pdp_kadam",
    "eps_for_delta",
    "hockey_stick",
    "mechanism_delta",
    "__version__",
]
