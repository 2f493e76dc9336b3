"""privacy="composed" for the real-valued releases (optnoise.design.continuous_composed), by independent routes."""

from __future__ import annotations

import numpy as np
import pytest

from optnoise import NoiseDesign
from optnoise.design.continuous_composed import cell_lower_costs
from optnoise.design.continuous_cost import parse_real_metric

K, DELTA, CAP = 2, 1e-6, 25.0


def _design(release: str, m: int = 1, **kw):
    return NoiseDesign(
        release=release,
        sensitivity=1.0,
        resolution=1.0 / m,
        privacy="composed",
        compositions=K,
        delta=DELTA,
        metric="mse",
        **kw,
    )


@pytest.fixture(scope="module")
def continuous_eps():
    return _design("continuous", objective="epsilon", max_distortion=CAP).solve()


def test_least_eps_on_the_reals_is_certified_and_bracketed(continuous_eps):
    res = continuous_eps
    assert res.status in ("optimal", "feasible") and res.verify()
    eps = res.achieved["composed_eps"]
    assert res.distortion <= CAP * (1 + 1e-9)
    assert res.bound is not None and 0.0 < res.bound <= eps
    assert res.gap == pytest.approx((eps - res.bound) / max(1.0, eps), rel=1e-9)
    # the Gaussian, the Laplace and their best convolution of variance 25 composed twice: never better
    base = res.baselines
    assert set(base) == {"gaussian", "laplace", "laplace_gaussian"}
    assert eps <= base["laplace"] and eps <= base["gaussian"] and eps <= base["laplace_gaussian"]
    # and the proven bound holds for them too (they are densities within the cap)
    assert res.bound <= min(base.values())


@pytest.mark.parametrize("theta", [0.5, 0.25, 1.0])
def test_real_shifts_by_dp_accounting_on_sub_cells(continuous_eps, theta, dp_eps):
    """The mixture argument checked without it: the piecewise-constant density and its copy shifted by a real
    ``s = theta w`` are constant on sub-cells of width w / 4, so their sub-cell masses are an exact pair for the
    shift; dp-accounting composes that pair k times and its eps at delta is at most the eps certified."""
    res = continuous_eps
    W, r = 400, 4
    f = res.pmf_at(np.arange(-W, W + 1))
    assert 1.0 - float(f.sum()) < 1e-30
    sub = np.repeat(f / r, r)  # sub-cell masses of X
    j = int(round(theta * r))
    p = np.concatenate([sub, np.zeros(j)])
    q = np.concatenate([np.zeros(j), sub])  # s + X
    eps = dp_eps(p, q, K, DELTA * (1 - 1e-6))
    assert eps <= res.achieved["composed_eps"] * (1 + 1e-3)


def test_grid_release_matches_the_cells_at_m_1(continuous_eps):
    """At m = 1 the grid release's integer noise is the same design (cost eta^2 + 1/12 per cell, the cell
    average of x^2): the same eps; its bound is over grid noises, so it is at least the continuous one."""
    grid = _design("grid", objective="epsilon", max_distortion=CAP).solve()
    assert grid.status in ("optimal", "feasible") and grid.verify()
    assert grid.achieved["composed_eps"] == pytest.approx(continuous_eps.achieved["composed_eps"], rel=1e-9)
    assert grid.distortion == pytest.approx(continuous_eps.distortion, rel=1e-9)
    assert continuous_eps.bound <= grid.bound <= grid.achieved["composed_eps"]
    assert grid.baselines["laplace"] == pytest.approx(continuous_eps.baselines["laplace"], rel=1e-12)
    assert grid.baselines["discrete_laplace"] >= grid.achieved["composed_eps"] * (1 - 1e-9)


def test_grid_cap_is_in_the_query_units():
    """At m = 2 the integer design's cost is in units of w^2 = 1/4: the cap must be too (variance 25 in the
    query's units), and the spec round-trips the cap as given."""
    d = _design("grid", m=2, objective="epsilon", max_distortion=CAP)
    assert d.spec()["max_distortion"] == CAP
    assert NoiseDesign.from_spec(d.spec()).spec() == d.spec()
    res = d.solve()
    assert res.distortion <= CAP * (1 + 1e-9)
    assert res.distortion >= 0.99 * CAP  # the cap binds (the least eps spends it)
    assert res.actual["mse"] == pytest.approx(res.distortion, rel=1e-9)


@pytest.mark.parametrize("metric", ["mse", "mae", "abs^0.5", "exceed:0.7"])
def test_cell_lower_costs_are_below_the_cost_on_each_cell(metric):
    """c_low(k) is at most the cost at every point of cell k (dense sampling) and nondecreasing in |k|."""
    cost = parse_real_metric(metric, 1.0)
    w = 0.5
    k = np.arange(-12, 13)
    low = cell_lower_costs(cost, w, k)
    assert low is not None
    for kk, lo in zip(k, low, strict=True):
        x = np.linspace((kk - 0.5) * w, (kk + 0.5) * w, 201)
        assert lo <= float(np.min(cost.fn(x))) + 1e-12
    half = low[12:]
    assert np.all(np.diff(half) >= 0) and np.array_equal(low[:13][::-1], half)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(objective="epsilon"), "max_distortion is required"),
        (dict(objective="epsilon", max_distortion=9.0, eps=1.0), "eps must be left unset"),
        (dict(eps=1.0, compositions=0), "compositions"),
        (dict(eps=1.0, delta=0.0), "delta must be > 0"),
    ],
)
def test_bad_input(kw, match):
    args = dict(release="continuous", sensitivity=1.0, privacy="composed", compositions=2, delta=1e-6, metric="mse")
    with pytest.raises(ValueError, match=match):
        NoiseDesign(**{**args, **kw})


def test_epsilon_objective_needs_composed():
    with pytest.raises(ValueError, match="objective"):
        NoiseDesign(release="continuous", sensitivity=1.0, eps=1.0, delta=1e-6, objective="epsilon", max_distortion=9)
