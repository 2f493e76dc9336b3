"""release='continuous' with privacy='rdp'/'zcdp': the mixture argument, both bounds, the result's methods."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optnoise.design import continuous_renyi
from optnoise.design.noise import NoiseDesign
from optnoise.privacy.renyi import renyi_divergence

RHO = 0.5  # sigma = 1 for the Gaussian baseline at sensitivity 1


def zcdp(**kw):
    args = {"release": "continuous", "sensitivity": 1.0, "privacy": "zcdp", "rho": RHO, "metric": "mse"}
    args.update(kw)
    return NoiseDesign(**args)


def fine_divergence(f: np.ndarray, sub: int, shift: int, alpha: float) -> float:
    """``D_alpha`` of the piecewise-constant density with cell masses ``f`` and its shift by ``shift / sub`` cells.

    Computed on ``sub`` equal sub-cells per cell, where both densities are constant: exact for the density
    (no appeal to the mixture formula). ``f`` must vanish (to rounding) near both ends of its window.
    """
    g = np.repeat(f / sub, sub)
    p, q = g[shift:], g[:-shift]  # the output sub-cell i: density p at i, the shifted one at i - shift
    return float(renyi_divergence(p, q, alpha))


def test_fractional_shift_divergence_is_the_mixture_of_integer_shifts():
    # a two-sided geometric on cells (strictly positive, negligible beyond the window)
    k = np.arange(-300, 301)
    f = 0.6 ** np.abs(k)
    f /= f.sum()
    sub = 8
    for alpha in (1.5, 2.0, 7.0):
        E = [math.exp((alpha - 1) * fine_divergence(f, sub, j * sub, alpha)) for j in (1, 2, 3)]
        for j, r in ((1, 3), (2, 5), (1, 1), (2, 7)):
            theta = r / sub
            got = math.exp((alpha - 1) * fine_divergence(f, sub, j * sub + r, alpha))
            assert got == pytest.approx((1 - theta) * E[j - 1] + theta * E[j], rel=1e-10)
            assert got <= max(E[j - 1], E[j]) * (1 + 1e-12)


def test_gaussian_baseline_closed_form():
    d = zcdp(resolution=0.5)
    assert continuous_renyi.gaussian_baseline(d) == {"gaussian": 1.0}
    r = zcdp(resolution=0.5, metric="mae", privacy="rdp", rho=None, rdp=[(2.0, 0.5), (4.0, 1.0)])
    assert continuous_renyi.gaussian_baseline(r)["gaussian"] == pytest.approx(math.sqrt(2 * 2.0 / math.pi))
