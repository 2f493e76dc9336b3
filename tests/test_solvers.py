"""The solver-neutral model and its backends on hand-solvable problems."""

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.model import ModelBuilder
from optnoise.solvers import available_solvers, solve_model, write_mps


def knapsack():
    # max 3a + 4b + 5c s.t. 2a + 3b + 4c <= 11.5, 0 <= a,b,c <= 10 integer -> a=4, b=1: 16
    mb = ModelBuilder()
    x = mb.add_vars(3, lb=0, ub=10, integer=True, name="x")
    mb.add_row(x, [2, 3, 4], upper=11.5)
    mb.set_objective(x, [-3, -4, -5])
    return mb.build()


def lp():
    # min -x - 2y s.t. x + y <= 1, x, y in [0, 1] -> y = 1, objective -2
    mb = ModelBuilder()
    x = mb.add_vars(2, lb=0.0, ub=1.0, name="xy")
    mb.add_row(x, [1.0, 1.0], upper=1.0)
    mb.set_objective(x, [-1.0, -2.0], offset=0.5)
    return mb.build()


@pytest.mark.parametrize("solver", ["highs", "cbc", "cvxpy"])
def test_backends_on_hand_solved_problems(solver):
    out = solve_model(lp(), solver=solver)
    assert out.status == "optimal"
    assert out.objective == pytest.approx(-1.5, abs=1e-7)
    np.testing.assert_allclose(out.x, [0, 1], atol=1e-7)
    out = solve_model(knapsack(), solver=solver)
    assert out.status == "optimal"
    assert out.objective == pytest.approx(-16.0)
    assert knapsack().residuals(out.x)["rows"] <= 1e-9


@pytest.mark.parametrize("solver", ["highs", "cbc", "cvxpy"])
def test_infeasible_status(solver):
    mb = ModelBuilder()
    x = mb.add_vars(1, lb=0.0, ub=1.0)
    mb.add_row(x, [1.0], lower=2.0)
    mb.set_objective(x, [1.0])
    out = solve_model(mb.build(), solver=solver)
    assert out.status == "infeasible"
    assert out.x is None


def test_batch_rows_and_blocks():
    mb = ModelBuilder()
    f = mb.add_vars(3, ub=1.0, name="f")
    rows = mb.add_rows([0, 0, 1, 1], [f[0], f[1], f[1], f[2]], [1, 1, 1, -1], lower=[1, 0], upper=[1, 0])
    assert rows.tolist() == [0, 1]
    m = mb.build()
    assert m.shape == (2, 3)
    assert m.block("f").tolist() == [0, 1, 2]
    assert m.size == {"rows": 2, "cols": 3, "integers": 0, "nonzeros": 4}
    with pytest.raises(ValueError, match="block"):
        m.block("g")
    with pytest.raises(IndexError):
        mb.add_row([7], [1.0])


def test_mps_needs_suffix(tmp_path):
    with pytest.raises(ValueError, match="mps"):
        write_mps(lp(), tmp_path / "model.lp")


def test_bad_solver_and_unavailable_commercial():
    with pytest.raises(ValueError, match="solver must be one of"):
        solve_model(lp(), solver="glpk")
    if "gurobi" not in available_solvers():
        with pytest.raises(ValueError, match="not available"):
            solve_model(lp(), solver="gurobi")


def test_highs_options_reach_the_solver_and_keep_the_optimum():
    d = NoiseDesign(n=32, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3), privacy="pdp")
    ref = d.solve()
    assert d.solve(options={"mip_allow_restart": False}).distortion == pytest.approx(ref.distortion, abs=1e-9)
    capped = d.solve(options={"mip_max_nodes": 1})  # stops early: the option took effect
    assert capped.status == "time_limit"
    assert capped.verify()


@pytest.mark.parametrize(
    "options, word",
    [
        ({"no_such_option": 1}, "no_such_option"),
        ({"mip_allow_restart": "yes"}, "True or False"),
        ({"primal_feasibility_tolerance": "abc"}, "float"),
        ({"random_seed": -1}, "refused"),
        ({"threads": 1.5}, "int"),
        # issue 13: loosened tolerances, gap/termination options and non-finite values are refused up front
        ({"primal_feasibility_tolerance": 0.5}, "loosens a tolerance"),
        ({"mip_feasibility_tolerance": 1e-3}, "loosens a tolerance"),
        ({"dual_feasibility_tolerance": 1e-6}, "loosens a tolerance"),
        ({"kkt_tolerance": 1e-3}, "loosens a tolerance"),
        ({"mip_rel_gap": float("nan")}, "mip_gap"),
        ({"mip_abs_gap": 1.0}, "mip_gap"),
        ({"objective_bound": 0.5}, "before optimality"),
        ({"small_matrix_value": 0.5}, "coefficients"),
        ({"output_flag": True}, "stdout"),
        ({"random_seed": True}, "int"),
        ({"primal_feasibility_tolerance": float("nan")}, "finite"),
        ({1: 2}, "options must be a mapping"),
    ],
)
def test_bad_highs_options_are_value_errors(options, word):
    d = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(2), privacy="pdp")
    with pytest.raises(ValueError, match=word):
        d.solve(options=options)


@pytest.mark.parametrize("options", [[1], "presolve=off", 3])
def test_options_must_be_a_mapping(options):
    d = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(2), privacy="dp")
    with pytest.raises(ValueError, match="options must be a mapping"):
        d.solve(options=options)


def test_tighter_tolerances_are_accepted():
    d = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(2), privacy="pdp")
    res = d.solve(options={"primal_feasibility_tolerance": 1e-10, "mip_feasibility_tolerance": 1e-10})
    assert res.status == "optimal" and res.verify()


def test_highs_options_with_another_backend_are_refused():
    d = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(2), privacy="dp")
    with pytest.raises(ValueError, match="HiGHS options"):
        d.solve(solver="cbc", options={"random_seed": 1})


def test_banner_absorption_restores_stdout_across_threads(monkeypatch):
    # Concurrent first constructions must leave file descriptor 1 where it was; without the lock a
    # thread could save the redirected descriptor and restore it last.
    import os
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import optnoise.solvers as solvers

    before = os.fstat(1)
    for _ in range(50):
        monkeypatch.setattr(solvers, "_banner_absorbed", False)  # as in a fresh process
        start = threading.Barrier(8)

        def first_construction(_, start=start):
            start.wait()
            solvers.absorb_highs_banner()

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(first_construction, range(8)))
        after = os.fstat(1)
        assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)
