"""Where continuous designs start (optnoise.design.continuous_start): sizes that change speed, never results."""

from __future__ import annotations

import math

import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.design import additive, continuous


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
    assert additive.compact_support(cells) == math.ceil(2 * m * width) + m


def test_the_noise_scale_start_is_hundreds_of_times_wider_at_small_eps(monkeypatch):
    m, eps = 8, 0.005
    cells = continuous._upper_design(_design(eps, 0.75), m)
    monkeypatch.setattr(additive, "compact_support", lambda design: None)
    assert additive.initial_support(cells) >= 4 * m / eps


def test_no_compact_start_for_pure_dp_renyi_pdp_or_composed():
    assert additive.compact_support(continuous._upper_design(_design(1.0, 0.0), 8)) is None
    zcdp = NoiseDesign(release="continuous", sensitivity=1.0, privacy="zcdp", rho=0.5, metric="mse")
    assert additive.compact_support(continuous._upper_design(zcdp, 8)) is None
    pdp = NoiseDesign(
        release="additive", neighborhood=Neighborhood.bd(1), eps=1.0, delta=0.3, privacy="pdp", metric="mse"
    )
    assert additive.compact_support(pdp) is None
    composed = NoiseDesign(
        release="additive",
        neighborhood=Neighborhood.bd(1),
        eps=1.0,
        delta=1e-6,
        privacy="composed",
        compositions=4,
        metric="mse",
    )
    assert additive.compact_support(composed) is None


def test_the_compact_start_reaches_integer_designs_too(monkeypatch):
    # the same rule for the additive release on Z (it was the continuous release's alone): q + eta at (0.05, 0.6)
    d = NoiseDesign(
        release="additive", neighborhood=Neighborhood.bd(1), eps=0.05, delta=0.6, privacy="dp", metric="mse"
    )
    width = math.log1p(math.expm1(0.05) / 1.0) / 0.05
    assert additive.compact_support(d) == math.ceil(2 * width) + 1
    assert additive.initial_support(d) == max(math.ceil(2 * width) + 1, 8)
    compact = d.solve(solver="highs")
    monkeypatch.setattr(additive, "compact_support", lambda design: None)
    wide = NoiseDesign(
        release="additive", neighborhood=Neighborhood.bd(1), eps=0.05, delta=0.6, privacy="dp", metric="mse"
    )
    wide = wide.solve(solver="highs")
    assert compact.status == wide.status == "optimal"
    assert compact.distortion == pytest.approx(wide.distortion, rel=1e-6)
    assert compact.support.size < wide.support.size


@pytest.mark.parametrize(("eps", "delta", "metric"), [(0.01, 0.75, "mae"), (0.02, 0.25, "mse")])
def test_the_compact_start_finds_the_default_starts_optimum(eps, delta, metric, monkeypatch):
    # the support grows from the compact start: the same optimum as from the default (wide) start, proven the same way
    m = 4
    d = _design(eps, delta, metric=metric)
    compact = continuous._solve_upper(continuous._upper_design(d, m), "highs", None, None)
    monkeypatch.setattr(additive, "compact_support", lambda design: None)
    wide = continuous._solve_upper(continuous._upper_design(d, m), "highs", None, None)
    assert compact.status == wide.status == "optimal"
    assert compact.L < wide.L
    assert compact.distortion == pytest.approx(wide.distortion, rel=2e-6)
    assert "boundary is inactive" in compact.support_note
