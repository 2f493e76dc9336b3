"""The backend registry: each backend declares what it can do, and a new one is one module plus one line."""

from __future__ import annotations

import numpy as np
import pytest

from optnoise.engine import backends, solve
from optnoise.engine.backend import Backend, SolveRequest
from optnoise.engine.highs import solve_highs
from optnoise.engine.model import ModelBuilder


def small_lp():
    mb = ModelBuilder()
    x = mb.add_vars(2, lb=0.0, ub=1.0)
    mb.add_row(x, [1.0, 1.0], lower=1.0, upper=1.0)
    mb.set_objective(x, [1.0, 2.0])
    return mb.build()


def test_solvers_are_the_registry_in_order():
    assert solve.SOLVERS == ("auto", "highs", "scip", "cbc", "gurobi", "cplex", "cvxpy")
    assert tuple(backends.BACKENDS) == solve.SOLVERS


def test_capabilities_are_declared_not_inferred_from_names():
    b = backends.BACKENDS
    assert b["highs"].warm_start and b["highs"].highs_options and b["highs"].exact_points
    assert b["scip"].warm_start and not b["scip"].highs_options
    assert not b["cbc"].exact_points and not b["cbc"].highs_options  # ~8 digits: refined by HiGHS
    assert not b["cvxpy"].exact_points and b["auto"].exact_points  # "auto" reports "highs" or "scip" as solver
    assert b["cvxpy"].cones and b["auto"].cones and not b["highs"].cones
    assert all(x.integers for x in b.values())


def test_a_new_backend_is_one_registry_entry(monkeypatch):
    calls = []

    def toy_solve(model, req: SolveRequest):
        calls.append(req)
        return solve_highs(model, req.time_limit, req.mip_gap, req.verbose)

    toy = Backend("toy", toy_solve, highs_options=False, exact_points=True)
    monkeypatch.setitem(backends.BACKENDS, "toy", toy)
    out = solve.solve_model(small_lp(), solver="toy", time_limit=5.0)
    assert out.status == "optimal" and np.allclose(out.x, [1.0, 0.0]) and calls[0].time_limit == 5.0
    assert "toy" in solve.available_solvers()
    # its declared capabilities decide: no HiGHS options for it, refused with the backends that take them
    with pytest.raises(ValueError, match="use them with solver 'auto' or 'highs', not 'toy'"):
        solve.solve_model(small_lp(), solver="toy", options={"presolve": "off"})


def test_unknown_backend_lists_the_registered_ones():
    with pytest.raises(ValueError, match="solver must be one of 'auto', 'highs'"):
        backends.backend("glpk")


def test_a_conic_model_needs_a_backend_with_cones():
    mb = ModelBuilder()
    x = mb.add_vars(3, lb=0.0, ub=2.0)
    mb.add_power_cones([x[0]], [x[1]], [x[2]], [0.5])
    with pytest.raises(ValueError, match="solver must be 'auto' or 'cvxpy' for a conic model"):
        solve.solve_model(mb.build(), solver="highs")


def test_the_optimal_gap_rule_is_one_function():
    from optnoise.engine.tolerance import OPTIMAL_GAP, proven_optimal, settle_gap

    assert proven_optimal(OPTIMAL_GAP) and not proven_optimal(2 * OPTIMAL_GAP) and not proven_optimal(None)
    assert settle_gap("optimal", 2 * OPTIMAL_GAP)[0] == "feasible" and settle_gap("optimal", None)[0] == "optimal"
    out = solve.settle_proof(solve.SolverOutput("optimal", None, 1.0, 0.99, 0.01, 0.0, "highs"))
    assert out.status == "feasible" and "exceeds" in out.message
