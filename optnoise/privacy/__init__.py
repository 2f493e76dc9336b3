"""Privacy: neighbourhoods, the noise families every layer uses, privacy curves, accounting and budgets.

* :mod:`~optnoise.privacy.neighborhood`: :class:`Neighborhood`, the query shifts between neighbours
* :mod:`~optnoise.privacy.noise_families`: integer noises (geometric, discrete Gaussian) and release matrices
* :mod:`~optnoise.privacy.curves`: exact delta(eps) curves: hockey stick, PDP, mechanism matrices
* :mod:`~optnoise.privacy.exact`: the same checks in exact rational arithmetic
* :mod:`~optnoise.privacy.accounting`: PLDs and k-fold composition (dp-accounting)
* :mod:`~optnoise.privacy.profile`: privacy-profile constraints
* :mod:`~optnoise.privacy.renyi`: Renyi-DP and zCDP constraints
* :mod:`~optnoise.privacy.budget`: the budgets a design can hold instead of one (eps, delta)
"""

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
from optnoise.privacy.neighborhood import AggregateQuery, Count, Neighborhood, QuantizedMean

__all__ = [
    "Neighborhood",
    "AggregateQuery",
    "QuantizedMean",
    "Count",
    "NOTIONS",
    "achieved_deltas",
    "delta_dp",
    "delta_pdp",
    "delta_pdp_kadam",
    "eps_for_delta",
    "hockey_stick",
    "mechanism_delta",
]
