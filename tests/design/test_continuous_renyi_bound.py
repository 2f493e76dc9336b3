"""The Renyi tangent-cut lower bound over all densities (optnoise.design.continuous_renyi_bound).

A lower bound over all densities can never exceed the cost of any density meeting the budget: the Gaussian
(zcdp, closed form) and the Laplace (rdp, its closed-form Renyi curve) are such densities.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from optnoise import NoiseDesign
from optnoise.design.continuous_bound import lower_bound
from optnoise.design.continuous_cost import parse_real_metric
from optnoise.design.continuous_renyi import converted_profile
from optnoise.design.continuous_renyi_bound import renyi_cell_bound
from optnoise.privacy.renyi import zcdp_alphas


def _zcdp_orders(rho: float) -> list[tuple[float, float]]:
    return [(float(a), rho * float(a)) for a in zcdp_alphas(64)]


def _laplace_rdp(alpha: float, b: float) -> float:
    """D_alpha of the Laplace of scale b against its shift by 1 (Mironov 2017, closed form)."""
    a = alpha
    inner = a / (2 * a - 1) * math.exp((a - 1) / b) + (a - 1) / (2 * a - 1) * math.exp(-a / b)
    return math.log(inner) / (a - 1)


@pytest.mark.parametrize("rho,metric", [(0.5, "mse"), (2.0, "mse"), (0.5, "mae")])
def test_never_above_the_gaussian(rho, metric):
    """The Gaussian of variance 1 / (2 rho) meets rho-zCDP at sensitivity 1 (MSE sigma^2, MAE sigma sqrt(2/pi))."""
    sigma = math.sqrt(1 / (2 * rho))
    gauss = sigma**2 if metric == "mse" else sigma * math.sqrt(2 / math.pi)
    for m, K in ((1, 8), (2, 14)):
        b = renyi_cell_bound(parse_real_metric(metric, 1.0), _zcdp_orders(rho), m, 1.0 / m, K)
        assert b is not None and 0.0 < b <= gauss


@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_never_above_the_laplace_meeting_its_own_curve(scale):
    """rdp budget = the Laplace's own Renyi curve at some orders: the Laplace (MSE 2 b^2) is a density meeting it."""
    orders = [(a, _laplace_rdp(a, scale)) for a in (1.5, 2.0, 3.0, 5.0, 8.0)]
    for m, K in ((1, 12), (2, 24)):
        b = renyi_cell_bound(parse_real_metric("mse", 1.0), orders, m, 1.0 / m, K)
        assert b is not None and 0.0 < b <= 2 * scale**2


def test_tighter_than_the_conversion_and_below_the_mechanism():
    """zcdp rho = 0.5, mse, m = 2: above the (eps, delta) conversion's bound at the same m and K (the previous
    lower bound), below the design's mechanism; the solve reports the larger."""
    d = NoiseDesign(release="continuous", sensitivity=1.0, resolution=0.5, privacy="zcdp", rho=0.5, metric="mse")
    cost, K = d.cost_of, 14
    old = lower_bound(cost, converted_profile(d), 2, 0.5, K, None)
    new = renyi_cell_bound(cost, _zcdp_orders(0.5), 2, 0.5, K)
    assert old.bound is not None and new is not None and new > old.bound + 0.1
    res = d.solve()
    assert res.bound is not None and res.bound <= res.distortion and res.bound <= 1.0
    assert res.bound > old.bound + 0.1  # the solve reports the tangent bound (at its own truncation K)


def test_a_user_cost_not_monotone_has_no_bound():
    cost = parse_real_metric(lambda x: np.cos(x) ** 2, 1.0)
    assert renyi_cell_bound(cost, _zcdp_orders(0.5), 1, 1.0, 6) is None
