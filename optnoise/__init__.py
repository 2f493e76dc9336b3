"""optnoise: optimal noise design for differential privacy on discrete finite queries.

>>> from optnoise import NoiseDesign, Neighborhood
>>> res = NoiseDesign(n=8, eps=1.5, neighborhood=Neighborhood.bd(3, directed=True)).solve()
>>> res.status
'optimal'
"""

from optnoise.deploy.certified import CertifiedDesign, CertifiedMechanism, load_design
from optnoise.deploy.certify import CertificationError, certify_result
from optnoise.design.mechanism import MechanismDesign
from optnoise.design.mechanism_result import MechanismResult
from optnoise.design.metrics import METRICS, cost_vector, modulo_errors
from optnoise.design.noise import OBJECTIVES, NoiseDesign
from optnoise.design.result import DesignResult
from optnoise.engine.model import LinearModel, ModelBuilder
from optnoise.engine.output import SolverOutput
from optnoise.engine.solve import SOLVERS, available_solvers, solve_model
from optnoise.mechanisms import real_baselines as _real_baselines  # noqa: F401  (installs the grid baselines)
from optnoise.privacy.curves import (
    NOTIONS,
    achieved_deltas,
    delta_dp,
    delta_pdp,
    delta_pdp_kadam,
    eps_for_delta,
    hockey_stick,
    mechanism_delta,
)
from optnoise.privacy.exact import exact_delta, exp_bounds
from optnoise.privacy.neighborhood import AggregateQuery, Count, Neighborhood, QuantizedMean
from optnoise.privacy.verification import DELTA_RTOL, RESULT_STATUSES, delta_allowance, pdp_rtol, within_delta

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
