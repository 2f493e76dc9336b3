"""The grid release ``w (round(q / w) + eta)`` of a real query (optnoise.design.grid), against independent routes.

* exact rounding: float rounding can push the integer sensitivity to m + 1 (an instance is
  shown); the exact cell index never does, on thousands of boundary pairs;
* the reported distortion (rounding included, uniform position in the cell) equals a
  quadrature over the rounding error of the brute-force PMF on a long window;
* the grid release is a valid mechanism on the reals, so under pure DP it can never beat
  the Geng-Viswanath staircase (closed form), and it closes on it as m grows;
* the privacy of the integer noise is re-checked by plain hockey-stick sums over shifts 1..m.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate

from optnoise import NoiseDesign
from optnoise.design.grid import MAX_STEPS, GridResult, cell_index, grid_steps
from optnoise.mechanisms.real_baselines import staircase_cost
from optnoise.privacy.curves import hockey_stick


def _grid(**kw):
    kw.setdefault("sensitivity", 1.0)
    kw.setdefault("resolution", 0.25)
    kw.setdefault("eps", 1.0)
    kw.setdefault("metric", "mse")  # NoiseDesign's default "er" does not apply to a real error
    return NoiseDesign(release="grid", **kw)


def _farthest_neighbour(q: float, D: float) -> float:
    """The largest float q2 with q2 - q <= D exactly (as real numbers)."""
    q2 = q + D
    while Fraction(q2) - Fraction(q) > Fraction(D):
        q2 = math.nextafter(q2, -math.inf)
    while Fraction(math.nextafter(q2, math.inf)) - Fraction(q) <= Fraction(D):
        q2 = math.nextafter(q2, math.inf)
    return q2


def test_float_rounding_breaks_the_sensitivity_exact_rounding_does_not():
    D, m = 1.0, 3
    q, q2 = -0.16666666666666674, 0.8333333333333333
    assert Fraction(q2) - Fraction(q) <= Fraction(D)  # neighbours: at most D apart as real numbers
    w = D / m
    for naive in (
        math.floor(q2 / w + 0.5) - math.floor(q / w + 0.5),
        math.floor(q2 * m + 0.5) - math.floor(q * m + 0.5),
    ):
        assert naive == m + 1  # float rounding: why the rounding must be exact
    assert cell_index(q2, D, m) - cell_index(q, D, m) == m


@pytest.mark.parametrize("D,m", [(1.0, 3), (0.3, 7), (0.1, 10), (2.7, 6), (1.1, 12)])
def test_exact_rounding_keeps_the_integer_sensitivity_at_boundaries(D, m):
    w = D / m
    for j in range(-40, 40):
        q = (j + 0.5) * w
        for _ in range(4):
            q = math.nextafter(q, -math.inf)
        for _ in range(8):
            q = math.nextafter(q, math.inf)
            q2 = _farthest_neighbour(q, D)
            assert 0 <= cell_index(q2, D, m) - cell_index(q, D, m) <= m
            assert abs(cell_index(-q2, D, m) - cell_index(-q, D, m)) <= m


def test_cell_index_rounds_half_up_exactly():
    assert cell_index(0.0625, 1.0, 8) == 1  # q / w = 0.5 exactly
    assert cell_index(math.nextafter(0.0625, 0.0), 1.0, 8) == 0
    assert cell_index(-0.0625, 1.0, 8) == 0
    assert cell_index(3, 1.0, 8) == 24  # integers too
    for bad in (math.nan, math.inf, "1", None, True):
        with pytest.raises(ValueError, match="q must be"):
            cell_index(bad, 1.0, 8)


def _window(res: GridResult, extra: int = 600) -> tuple[np.ndarray, np.ndarray]:
    x = np.arange(-res.L - extra, res.L + extra + 1)
    return x, res.pmf_at(x)


@pytest.mark.parametrize("metric,p", [("mse", 2.0), ("mae", 1.0), ("abs^3", 3.0)])
def test_distortion_is_the_rounding_averaged_cost_by_quadrature(metric, p):
    res = _grid(sensitivity=2.0, resolution=0.5, delta=1e-3, metric=metric).solve(solver="highs")
    assert res.status == "optimal"
    w = 0.5
    x, f = _window(res)
    # E over r uniform on (-w/2, w/2] of sum_eta f(eta) |w eta + r|^p, by quadrature in r
    got = integrate.quad(lambda r: float(f @ np.abs(w * x + r) ** p), -w / 2, w / 2, limit=200)[0] / w
    assert res.distortion == pytest.approx(got, rel=1e-9)
    if metric == "mse":
        assert res.actual["mse"] == pytest.approx(got, rel=1e-9)
        assert res.worst_case == pytest.approx(float(f @ (w * x + w / 2) ** 2), rel=1e-9)  # symmetric noise
        assert res.worst_case == pytest.approx(res.distortion + w**2 / 6, rel=1e-9)
    assert res.bound <= res.distortion * (1 + 1e-9)


def test_exceed_metric_by_quadrature():
    res = _grid(sensitivity=1.0, resolution=0.25, delta=1e-2, metric="exceed:0.6").solve(solver="highs")
    assert res.status == "optimal"
    x, f = _window(res)
    w = 0.25
    got = integrate.quad(lambda r: float(f @ (np.abs(w * x + r) > 0.6)), -w / 2, w / 2, points=[-0.1, 0.1])[0] / w
    assert res.distortion == pytest.approx(got, rel=1e-7)


@pytest.mark.parametrize("metric", ["mae", "mse"])
def test_pure_dp_never_beats_the_continuous_staircase_and_closes_on_it(metric):
    best = staircase_cost(1.0, metric)
    costs = []
    for m in (1, 3, 9):  # nested grids (cells of width w/3 tile a cell of width w, centres aligned)
        res = _grid(resolution=1.0 / m, metric=metric).solve(solver="highs")
        assert res.status == "optimal"
        costs.append(res.distortion)
        assert res.distortion >= best * (1 - 1e-9)  # a piecewise-constant density is a valid real mechanism
    assert costs[0] >= costs[1] * (1 - 1e-9) and costs[1] >= costs[2] * (1 - 1e-9)  # nested families
    assert costs[2] <= best * (1 + 1e-3)


@pytest.mark.parametrize("privacy,kw", [("dp", {"delta": 1e-4}), ("profile", {"profile": [(0.5, 1e-2), (1.5, 1e-5)]})])
def test_privacy_of_the_integer_noise_over_shifts_1_to_m(privacy, kw):
    res = _grid(privacy=privacy, metric="mse", **({} if privacy == "dp" else {"eps": None}), **kw).solve(solver="highs")
    assert res.status == "optimal" and res.steps == 4
    x, f = _window(res)
    pairs = [(1.0, 1e-4)] if privacy == "dp" else kw["profile"]
    for s in range(1, 5):
        for eps, delta in pairs:
            p, q = np.concatenate([f, np.zeros(s)]), np.concatenate([np.zeros(s), f])
            assert hockey_stick(p, q, eps) <= delta * (1 + 1e-6)
            assert hockey_stick(q, p, eps) <= delta * (1 + 1e-6)


def test_pdp_passes_through():
    res = _grid(resolution=1.0, delta=0.05, privacy="pdp", metric="mae").solve(solver="highs")
    assert res.status == "optimal" and res.design.privacy == "pdp" and res.achieved["pdp"] <= 0.05 * (1 + 1e-6)


def test_spec_and_result_round_trip():
    d = _grid(resolution=0.125, delta=1e-6, metric="mse")
    again = NoiseDesign.from_spec(d.spec())
    assert again.spec() == d.spec() and again.steps == 8 and repr(again) == repr(d)
    assert d.replace(delta=1e-3).delta == 1e-3
    res = d.solve(solver="highs")
    back = GridResult.from_dict(res.to_dict(), design=again)
    assert back.status == "optimal" and back.distortion == pytest.approx(res.distortion, rel=1e-12)
    assert back.bound == pytest.approx(res.bound, rel=1e-6) and back.resolution == 0.125
    tampered = res.to_dict()
    tampered["pmf"] = [0.0] * len(tampered["pmf"])
    with pytest.raises(ValueError, match="pmf"):
        GridResult.from_dict(tampered, design=again)


def test_release_value_rounds_exactly_and_scales():
    res = _grid(sensitivity=1.0, resolution=0.125, delta=1e-6, metric="mse").solve(solver="highs")
    assert res.release_value(3.06, 0) == 3.0 and res.release_value(3.07, 2) == 3.125 + 0.25
    assert res.resolution == 0.125 and res.sensitivity == 1.0 and res.release == "grid"


def test_resolution_that_almost_divides_uses_the_exact_width():
    d = _grid(sensitivity=1.0, resolution=0.1, delta=1e-3, metric="mse")
    assert d.steps == 10 and d.width == 0.1


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"resolution": 0.3}, r"resolution must divide.*resolution=0\.333333333333 \(m = 3\)"),
        ({"resolution": 1.0 / 1000}, rf"resolution is too fine.*m <= {MAX_STEPS}"),
        ({"resolution": -0.1}, "resolution must be"),
        ({"resolution": None}, "resolution is required"),
        ({"sensitivity": math.nan}, "sensitivity must be"),
        ({"sensitivity": math.inf}, "sensitivity must be"),
        ({"sensitivity": "1"}, "sensitivity must be"),
        ({"sensitivity": 0.0}, "sensitivity must be"),
        ({"metric": "er"}, "metric must be one of"),
        ({"metric": [1.0, 2.0]}, "metric must be a name"),
        ({"n": 4}, "n does not apply"),
        ({"privacy": "pdp-kadam"}, "release='grid'"),
        ({"support": 1}, "support must be at least"),
    ],
)
def test_bad_input_is_a_value_error_naming_the_parameter(kw, match):
    with pytest.raises(ValueError, match=match):
        _grid(**kw)


def test_grid_arguments_are_refused_elsewhere():
    from optnoise import Neighborhood

    with pytest.raises(ValueError, match="sensitivity applies only with release in grid"):
        NoiseDesign(release="additive", neighborhood=Neighborhood.bd(1), eps=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="neighborhood does not apply"):
        _grid(neighborhood=Neighborhood.bd(1))
    with pytest.raises(ValueError, match="cache is not yet supported for release='grid'"):
        _grid().solve(cache="somewhere")
    with pytest.raises(ValueError, match="neighborhood must be a Neighborhood"):  # optional only for the grid
        NoiseDesign(n=4, eps=1.0)
    assert grid_steps(1.0, 0.25) == (1.0, 0.25, 4)


def test_the_discrete_laplace_on_a_fine_grid_tends_to_the_real_laplace():
    # two routes: the discrete Laplace calibrated by exact sums on Z (rounding charged) against the closed-form
    # Laplace scale on the reals; both pure 1-DP at sensitivity 2, and the design below both and above the staircase
    res = _grid(sensitivity=2.0, resolution=2.0 / 16, metric="mae").solve(solver="highs")
    b = res.baselines
    assert b["discrete_laplace"] == pytest.approx(b["laplace"], rel=1e-3) and b["laplace"] == 2.0
    assert b["staircase"] * (1 - 1e-9) <= res.distortion <= b["discrete_laplace"]
