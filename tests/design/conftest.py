"""Shared checks of the design tests."""

from __future__ import annotations

import math

import numpy as np
import pytest


def dp_accounting_eps(p: np.ndarray, q: np.ndarray, k: int, delta: float, h: float = 1e-4) -> float:
    """dp-accounting's pessimistic eps at ``delta`` of k releases of the pair (p, q) (masses on a common grid),
    both orders: an accounting independent of optnoise's."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    worst = 0.0
    for a, b in ((p, q), (q, p)):
        one = pld.from_two_probability_mass_functions(
            {i: math.log(v) for i, v in enumerate(a) if v > 0},
            {i: math.log(v) for i, v in enumerate(b) if v > 0},
            pessimistic_estimate=True,
            symmetric=False,
            value_discretization_interval=h,
        )
        worst = max(worst, float(one.self_compose(k).get_epsilon_for_delta(delta)))
    return worst


@pytest.fixture()
def dp_eps():
    """:func:`dp_accounting_eps` as a fixture."""
    return dp_accounting_eps
