"""Where continuous designs start (optnoise.design.continuous_start): sizes that change speed, never results."""

from __future__ import annotations

import math

import pytest

from optnoise import NoiseDesign
from optnoise.design import additive, continuous
from optnoise.design.continuous_start import first_support


def _design(eps, delta, **kw):
    args = dict(release="continuous", sensitivity=1.0, eps=eps, delta=delta, metric="mae", privacy="dp")
    return NoiseDesign(**{**args, **kw})


@pytest.mark.parametrize(("eps", "delta"), [(0.005, 0.75), (0.01, 0.5), (0.1, 0.3)])
def test_the_first_support_is_twice_the_truncated_laplaces_plus_m(eps, delta):
    # the truncated Laplace's half-width (Geng, Ding, Guo, Kumar 2020), by hand, is at most Delta = 1 at delta >= 1/2
    width = math.log1p(math.expm1(eps) / (2 * min(delta, 0.5))) / eps
    assert width <= 1.0 + 1e-12 or delta < 0.5
    m = 8
    cells = continuous._upper_design(_design(eps, delta), m)
    assert additive.initial_support(cells) == max(2 * m, 8, math.ceil(2 * m * width) + m)
    # the default start (a few noise scales m / eps) is hundreds of times wider at small eps
    cells.first_support = None
    assert additive.initial_support(cells) >= 4 * m / eps


def test_no_first_support_for_pure_dp_or_renyi():
    assert first_support(_design(1.0, 0.0), 8) is None
    zcdp = NoiseDesign(release="continuous", sensitivity=1.0, privacy="zcdp", rho=0.5, metric="mse")
    assert first_support(zcdp, 8) is None


@pytest.mark.parametrize(("eps", "delta", "metric"), [(0.01, 0.75, "mae"), (0.02, 0.25, "mse")])
def test_the_compact_start_finds_the_default_starts_optimum(eps, delta, metric):
    # the support grows from the compact start: the same optimum as from the default (wide) start, proven the same way
    m = 4
    d = _design(eps, delta, metric=metric)
    compact = continuous._solve_upper(continuous._upper_design(d, m), "highs", None, None)
    wide_cells = continuous._upper_design(d, m)
    wide_cells.first_support = None
    wide = continuous._solve_upper(wide_cells, "highs", None, None)
    assert compact.status == wide.status == "optimal"
    assert compact.L < wide.L
    assert compact.distortion == pytest.approx(wide.distortion, rel=2e-6)
    assert "boundary is inactive" in compact.support_note
