"""Lazy-row LPs cut short: the bound the completed rounds proved survives (``engine/lazy.py``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from optnoise.engine import lazy
from optnoise.engine.model import ModelBuilder
from optnoise.engine.solve import solve_model


def _lp():
    """min -x0 - 2 x1 - x2 over [0, 1]^3, with cut rows that bind one after another."""
    mb = ModelBuilder()
    x = mb.add_vars(3, lb=0.0, ub=1.0)
    mb.set_objective(x, [-1.0, -2.0, -1.0])
    model = mb.build()
    cuts = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 1.0, 1.0]]))
    return model, cuts, np.array([1.0, 1.0, 1.2])


def _cut_short_at(monkeypatch, round_no: int, keep_dual: bool) -> None:
    """Make HiGHS' round ``round_no`` end at a time limit (no solution; its multipliers kept or not)."""
    real = lazy.highs_output
    calls = {"n": 0}

    def short(h, model, seconds):
        out = real(h, model, seconds)
        calls["n"] += 1
        if calls["n"] != round_no:
            return out
        dual = out.dual if keep_dual else None
        return dataclasses.replace(out, status="time_limit", x=None, objective=None, dual=dual, bound=None)

    monkeypatch.setattr(lazy, "highs_output", short)


def test_a_round_cut_short_keeps_the_previous_rounds_bound(monkeypatch):
    model, cuts, upper = _lp()
    full = dataclasses.replace(
        model, A=sp.vstack([model.A, cuts], format="csr"), row_lower=np.full(3, -np.inf), row_upper=upper
    )
    optimum = solve_model(full, solver="highs").objective
    relaxed = solve_model(model, solver="highs").objective  # round 1 solves the LP without cut rows
    assert relaxed == pytest.approx(-4.0) and optimum == pytest.approx(-2.0)
    _cut_short_at(monkeypatch, 2, keep_dual=False)
    out, added, rounds = lazy.solve_with_cuts(model, cuts, upper, solver="highs", concurrent=False)
    assert out.status == "time_limit" and out.x is None and rounds == 2
    # the bound of round 1 is the relaxation's optimum (strong duality), and it bounds the full LP below
    assert out.bound == pytest.approx(relaxed, abs=1e-9) and out.bound <= optimum
    assert out.info["bound_round"] == 1


def test_an_interrupted_rounds_own_multipliers_count_when_they_prove_more(monkeypatch):
    model, cuts, upper = _lp()
    _cut_short_at(monkeypatch, 2, keep_dual=True)
    out, _, rounds = lazy.solve_with_cuts(model, cuts, upper, solver="highs", concurrent=False)
    # round 2's multipliers (here those of its optimum: round 1's violated rows already settle the LP) prove more
    assert rounds == 2 and out.info["bound_round"] == 2
    assert -4.0 < out.bound <= -2.0 + 1e-9


def test_no_bound_when_no_round_proved_one(monkeypatch):
    model, cuts, upper = _lp()
    _cut_short_at(monkeypatch, 1, keep_dual=False)
    out, _, rounds = lazy.solve_with_cuts(model, cuts, upper, solver="highs", concurrent=False)
    assert out.status == "time_limit" and rounds == 1 and out.bound is None and "bound_round" not in out.info


@pytest.mark.parametrize(("crossover", "later"), [("off", "ipm"), ("on", "simplex")])
def test_rounds_after_an_interior_point_without_crossover_run_it_again(monkeypatch, crossover, later):
    # without crossover there is no basis for the dual simplex to resume from: every round runs the interior point
    from optnoise.engine import highs

    made = []
    real = highs.highs_instance

    def keep(model, **kw):
        made.append(real(model, **kw))
        return made[-1]

    monkeypatch.setattr(highs, "highs_instance", keep)
    model, cuts, upper = _lp()
    options = {"solver": "ipm", "run_crossover": crossover}
    out, _, rounds = lazy.solve_with_cuts(model, cuts, upper, solver="highs", concurrent=False, options=options)
    assert out.status == "optimal" and rounds >= 2 and out.objective == pytest.approx(-2.0, abs=1e-7)
    assert made[0].getOptionValue("solver")[1] == later


def test_split_rows_and_with_cuts_rebuild_the_full_lp():
    model, cuts, upper = _lp()
    full = lazy.with_cuts(model, cuts, upper, np.arange(3))
    base, got_cuts, got_upper = lazy.split_rows(full, np.array([1, 2]))
    assert base.shape[0] == full.shape[0] - 2 and np.array_equal(got_upper, upper[1:])
    again = lazy.with_cuts(base, got_cuts, got_upper, np.array([0, 1]))
    assert solve_model(again, solver="highs").objective == pytest.approx(solve_model(full, solver="highs").objective)
    two_sided = dataclasses.replace(full, row_lower=np.zeros(full.shape[0]))
    with pytest.raises(AssertionError, match="one-sided"):
        lazy.split_rows(two_sided, np.array([0]))
