"""Design: optimal noise (:class:`NoiseDesign`) and optimal mechanisms (:class:`MechanismDesign`).

* :mod:`~optnoise.design.noise`: :class:`NoiseDesign`, the problem and its LP/MILP
* :mod:`~optnoise.design.mechanism`: :class:`MechanismDesign`, the LP over all matrices ``P[x, y]``
* :mod:`~optnoise.design.clamp`: clamped additive noise ``clip(q + eta, 0, n)``
* :mod:`~optnoise.design.result`: :class:`DesignResult`, :class:`MechanismResult`, what they share
* :mod:`~optnoise.design.pipeline`: build, solve, settle (verify, repair, canonical, cache)
* :mod:`~optnoise.design.rows`: privacy rows between pairs of distributions
* :mod:`~optnoise.design.metrics`: distortion metrics and released errors
* :mod:`~optnoise.design.matrix`: the mechanism LP's pairs, outputs and losses
* :mod:`~optnoise.design.layout`: how checks and repairs see a design's probabilities
* :mod:`~optnoise.design.repair`: the exact repair of a solver's solution
* :mod:`~optnoise.design.canonical`: one canonical member of a face of tied optima
"""

from optnoise.design.mechanism import MechanismDesign
from optnoise.design.mechanism_result import MechanismResult
from optnoise.design.metrics import METRICS, cost_vector, modulo_errors
from optnoise.design.noise import OBJECTIVES, RELEASES, NoiseDesign
from optnoise.design.result import DesignResult

__all__ = [
    "NoiseDesign",
    "DesignResult",
    "MechanismDesign",
    "MechanismResult",
    "METRICS",
    "OBJECTIVES",
    "RELEASES",
    "cost_vector",
    "modulo_errors",
]
