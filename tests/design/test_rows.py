"""Pair rows (optnoise.design.rows): with the PMF fixed, the rows admit exactly the budgets the exact curves
(optnoise.privacy.curves) allow, and a minimised budget column lands on the curves' delta."""

import math

import numpy as np
import pytest

from optnoise.design.rows import add_pair_rows
from optnoise.engine.model import ModelBuilder
from optnoise.engine.solve import solve_model
from optnoise.privacy.curves import delta_dp, delta_pdp, delta_pdp_kadam, hockey_stick

#: A 3-point PMF on Z_3 at eps = ln 2 (E = 2), worked by hand:
#: shift +1 compares f with (0.3, 0.2, 0.5): f - 2g = (-0.1, -0.1, -0.8), nothing leaks;
#: shift -1 compares f with (0.2, 0.5, 0.3): f - 2g = (0.1, -0.7, -0.4), the hockey stick is 0.1 and the
#: mass 0.5 of eta = 0 leaks (PDP delta 0.5).
HAND_PMF = np.array([0.5, 0.3, 0.2])
HAND_EPS = math.log(2.0)
HAND_DP, HAND_PDP = 0.1, 0.5


def entries(n_values: int, shifts: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Entries ``(f(eta), f(eta + mu))`` of every shift mu on Z_N, grouped by shift (columns are the noise values)."""
    eta = np.arange(n_values)
    first = np.concatenate([eta for _ in shifts])
    second = np.concatenate([(eta + mu) % n_values for mu in shifts])
    group = np.repeat(np.arange(len(shifts)), n_values)
    return first, second, group


def fixed_model(pmf: np.ndarray, shifts: list[int], eps: float, notion: str, *, delta=None, minimise=False, **kw):
    """A model whose noise columns are fixed to ``pmf``; with ``minimise`` it minimises the budget column ``t``."""
    mb = ModelBuilder()
    f = mb.add_vars(pmf.size, lb=pmf, ub=pmf, name="f")
    assert np.array_equal(f, np.arange(pmf.size))
    first, second, group = entries(pmf.size, shifts)
    t = None
    if minimise:
        t = int(mb.add_vars(1, lb=0.0, ub=1.0, name="t")[0])
        mb.set_objective([t], [1.0])
    add_pair_rows(mb, first, second, group, eps=eps, notion=notion, delta=delta, t=t, **kw)
    return mb.build()


def solve(model):
    return solve_model(model, solver="highs")


def test_hand_example_minimised_budget():
    assert delta_dp(HAND_PMF, [1, -1], HAND_EPS) == pytest.approx(HAND_DP)
    assert delta_pdp(HAND_PMF, [1, -1], HAND_EPS) == pytest.approx(HAND_PDP)
    for notion, want, kw in (("dp", HAND_DP, {}), ("pdp", HAND_PDP, {}), ("pdp", HAND_PDP, {"formulation": "bigm"})):
        out = solve(fixed_model(HAND_PMF, [1, 2], HAND_EPS, notion, minimise=True, **kw))
        assert out.status == "optimal", (notion, kw, out.message)
        assert out.objective == pytest.approx(want, abs=1e-8), (notion, kw)


@pytest.mark.parametrize("notion, want", [("dp", HAND_DP), ("pdp", HAND_PDP)])
def test_fixed_budget_admits_exactly_the_curve(notion, want):
    # a PMF meeting the budget satisfies the rows; one violating it (budget 1% short) does not
    ok = solve(fixed_model(HAND_PMF, [1, 2], HAND_EPS, notion, delta=want * (1 + 1e-6)))
    assert ok.status == "optimal", ok.message
    bad = solve(fixed_model(HAND_PMF, [1, 2], HAND_EPS, notion, delta=want * 0.99))
    assert bad.status == "infeasible", bad.status


def test_pure_rows_are_the_ratio_bound():
    model = fixed_model(HAND_PMF, [1, 2], HAND_EPS, "pure")
    # the PMF breaks p <= 2 q at eta = 0, shift -1 (0.5 > 2 * 0.2), by exactly 0.1
    assert model.residuals(HAND_PMF)["rows"] == pytest.approx(0.1)
    assert solve(model).status == "infeasible"
    flat = np.full(3, 1 / 3)
    assert model.residuals(flat)["rows"] == 0.0
    assert solve(fixed_model(flat, [1, 2], HAND_EPS, "pure")).status == "optimal"


@pytest.mark.parametrize("seed", range(4))
def test_minimised_budget_equals_exact_curves(seed):
    rng = np.random.default_rng(seed)
    pmf = rng.dirichlet(np.full(7, 2.0))
    shifts, eps = [1, 2, 5, 6], 0.4
    dp = solve(fixed_model(pmf, shifts, eps, "dp", minimise=True))
    assert dp.objective == pytest.approx(delta_dp(pmf, shifts, eps), abs=1e-8)
    for form in ("hull", "bigm"):
        pdp = solve(fixed_model(pmf, shifts, eps, "pdp", minimise=True, formulation=form))
        assert pdp.objective == pytest.approx(delta_pdp(pmf, shifts, eps), abs=1e-8), form
    # the published MILP: one indicator per noise value shared by every shift (budgeted in group 0)
    shared = np.tile(np.arange(pmf.size), len(shifts))
    kadam = solve(fixed_model(pmf, shifts, eps, "pdp", minimise=True, formulation="bigm", shared=shared))
    want = delta_pdp_kadam(pmf, shifts, eps)
    if math.isinf(want):
        assert kadam.status == "infeasible"
    else:
        assert kadam.status == "optimal" and kadam.objective == pytest.approx(want, abs=1e-8)


def test_kadam_rows_refuse_an_inconsistent_indicator():
    # (13g): a leaking eta = 0 needs f(0) >= 2 f(0 + mu) for every shift; 0.5 < 2 * 0.3 for mu = +1
    assert math.isinf(delta_pdp_kadam(HAND_PMF, [1, 2], HAND_EPS))
    shared = np.tile(np.arange(3), 2)
    out = solve(fixed_model(HAND_PMF, [1, 2], HAND_EPS, "pdp", minimise=True, formulation="bigm", shared=shared))
    assert out.status == "infeasible"


def test_small_budget_is_met_relatively():
    # f(0) - 2 f(2) = 0.5 + 1e-7 - 2 (0.25 - 1e-7) = 3e-7: a budget short by a relative 1e-4 is an absolute
    # 3e-11, below the solver's feasibility tolerance (1e-9), and must still be refused (the row is written
    # relative to delta)
    pmf = np.array([0.5 + 1e-7, 0.25, 0.25 - 1e-7])
    eps = math.log(2.0)
    hs = float(hockey_stick(pmf, np.roll(pmf, -2), eps))
    exact = delta_dp(pmf, [1, 2], eps)
    assert exact == pytest.approx(hs) == pytest.approx(3e-7, rel=1e-6)
    assert solve(fixed_model(pmf, [1, 2], eps, "dp", delta=exact * (1 + 1e-6))).status == "optimal"
    assert solve(fixed_model(pmf, [1, 2], eps, "dp", delta=exact * (1 - 1e-4))).status == "infeasible"


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"notion": "rdp", "delta": 0.1}, "notion"),
        ({"notion": "dp", "delta": 0.1, "formulation": "tight"}, "formulation"),
        ({"notion": "dp"}, "exactly one of delta and t"),
        ({"notion": "dp", "delta": 0.1, "t": 0}, "exactly one of delta and t"),
        ({"notion": "pdp", "delta": 0.1, "shared": np.zeros(6, dtype=int)}, "formulation='bigm'"),
    ],
)
def test_bad_arguments(kw, match):
    mb = ModelBuilder()
    mb.add_vars(3, ub=1.0, name="f")
    first, second, group = entries(3, [1, 2])
    with pytest.raises(ValueError, match=match):
        add_pair_rows(mb, first, second, group, eps=0.5, **kw)
    with pytest.raises(ValueError, match="one entry each"):
        add_pair_rows(mb, first, second[:-1], group, eps=0.5, notion="dp", delta=0.1)
