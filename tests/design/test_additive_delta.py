"""objective="delta" for the additive release (optnoise.design.additive_delta), against the distortion objective."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign


def _design(**kw):
    base = dict(release="additive", neighborhood=Neighborhood.bd(2), eps=1.0, metric="mse", support=40)
    return NoiseDesign(**{**base, **kw})


def _hockey(res, eps: float, periods: int = 400) -> float:
    """max over shifts of sum (f - e^eps f(. + mu))_+ written out far into both tails (plain float sums)."""
    L, P = res.L, res.design.period
    x = np.arange(-L - periods * P, L + periods * P + 1)
    f = res.pmf_at(x)
    return max(float(np.maximum(f - math.exp(eps) * res.pmf_at(x + mu), 0).sum()) for mu in res.design.shifts)


@pytest.fixture(scope="module")
def pair():
    a = _design(delta=1e-6).solve()
    return a, _design(objective="delta", max_distortion=a.distortion).solve()


def test_least_delta_at_the_optimal_distortion_is_the_delta_it_was_solved_for(pair):
    a, b = pair
    assert a.status == "optimal" and b.status == "optimal"
    # inverse problems: at the cap D*(1e-6), the least delta is 1e-6 (the solvers' absolute tolerance apart)
    assert b.achieved["dp"] == pytest.approx(1e-6, abs=1e-10)
    assert b.bound <= 1e-6 + 1e-12 and b.distortion <= a.distortion * (1 + 1e-9)
    # the reported delta is the PMF's own, by plain sums on Z
    assert _hockey(b, 1.0) == pytest.approx(b.achieved["dp"], rel=1e-6)


def test_a_cap_above_the_pure_optimum_needs_no_delta(pair):
    a, _ = pair
    pure = _design(delta=0.0).solve()
    assert pure.distortion <= a.distortion * 1.05  # so the cap below admits the pure-DP optimum
    c = _design(objective="delta", max_distortion=a.distortion * 1.05).solve()
    assert c.status == "optimal" and c.achieved["dp"] == 0.0 and c.distortion <= a.distortion * 1.05


def test_spec_round_trip():
    d = _design(objective="delta", max_distortion=8.0)
    again = NoiseDesign.from_spec(d.spec())
    assert repr(again) == repr(d) and again.max_distortion == 8.0 and again.objective == "delta"


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(objective="delta", max_distortion=8.0, delta=1e-6), "delta is what"),
        (dict(objective="delta"), "max_distortion is required"),
        (dict(objective="delta", max_distortion=-1.0), "max_distortion"),
        (dict(delta=1e-6, max_distortion=8.0), "applies only with objective='delta'"),
        (dict(objective="bayes", delta=1e-6), "objective must be one of"),
    ],
)
def test_bad_input(kw, match):
    with pytest.raises(ValueError, match=match):
        _design(**kw)


@pytest.mark.parametrize("cap", [1.2, 1.8])
def test_grown_support_does_not_depend_on_where_it_starts(monkeypatch, cap):
    # the support was fixed at twice the first one, not grown: at L = 2 the least delta is 0.0959 (cap 1.2),
    # the optimum over larger supports 0.0338; grown from L = 2 or from the default start, the same optimum
    import optnoise.design.additive as additive

    kw = dict(release="additive", neighborhood=Neighborhood.bd(1), eps=1.0, metric="mse", objective="delta")
    at_2 = NoiseDesign(**kw, max_distortion=cap, support=2).solve()
    default = NoiseDesign(**kw, max_distortion=cap).solve()
    monkeypatch.setattr(additive, "initial_support", lambda design: 2)
    small = NoiseDesign(**kw, max_distortion=cap).solve()
    assert small.L > 2 and "inactive" in small.support_note and "inactive" in default.support_note
    assert small.status == default.status == "optimal"
    assert small.achieved["dp"] == pytest.approx(default.achieved["dp"], rel=1e-7)
    if cap < 1.5:  # L = 2 binds at this cap: growing lowered the least delta
        assert small.achieved["dp"] < at_2.achieved["dp"] * (1 - 1e-3)
    # the other route: the least distortion at that delta (the distortion objective, support fixed wide) is the cap
    back = NoiseDesign(**{**kw, "objective": "distortion"}, delta=default.achieved["dp"] * (1 + 1e-7), support=60)
    assert back.solve().distortion == pytest.approx(cap, rel=1e-5)
    # a grown support's optimum: no larger one lowers it (the families are nested)
    wide = NoiseDesign(**kw, max_distortion=cap, support=4 * default.L).solve()
    assert wide.achieved["dp"] >= default.achieved["dp"] * (1 - 1e-6) - 1e-12
