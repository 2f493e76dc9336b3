"""The one solve sequence (optnoise.design.settle): noise and mechanism designs re-solve, repair and settle alike."""

from __future__ import annotations

import numpy as np
import pytest

import optnoise.design.settle as S
from optnoise import MechanismDesign, MechanismResult, Neighborhood, NoiseDesign
from optnoise.engine.output import SolverOutput


def test_retry_plan_other_algorithm_then_robust_settings():
    plan = S.retry_plan(False, None, {"time_limit": 5})
    assert plan[0] == {"time_limit": 5, "solver": "ipm"}
    assert plan[1:] == [{"time_limit": 5, **extra} for extra in S.ROBUST_RETRIES]
    assert S.retry_plan(False, "ipm", None)[0] == {"solver": "simplex"}
    # a MILP has no LP algorithm to switch, and a caller's choice of algorithm is kept
    assert S.retry_plan(True, None, None) == list(S.ROBUST_RETRIES)
    assert all(p["solver"] == "simplex" for p in S.retry_plan(False, None, {"solver": "simplex"}))


def test_normalised_rows_clip_round_off_and_refuse_empty_rows():
    got = S.normalised_rows(np.array([0.5, -1e-12, 0.5, 0.25, 0.75, 0.0]), 2)
    np.testing.assert_array_equal(got, [[0.5, 0.0, 0.5], [0.25, 0.75, 0.0]])
    assert S.normalised_rows(np.array([1.0, 0.0, 0.0, -1e-13]), 2) is None
    assert S.normalised_rows(np.array([np.nan, 1.0])) is None


def record_infeasible(monkeypatch):
    """Every solve says "infeasible" (a spurious status: a feasible point is known); the options are recorded."""
    seen: list[dict] = []

    def fake(model, **kw):
        seen.append(dict(kw.get("options") or {}))
        return SolverOutput("infeasible", None, None, None, None, 0.0, "highs", message="fake")

    monkeypatch.setattr(S, "solve_model", fake)
    return seen


@pytest.mark.parametrize(
    "design",
    [
        NoiseDesign(n=6, eps=1.0, neighborhood=Neighborhood.bd(2), metric="mse"),
        MechanismDesign(n=6, eps=1.0, delta=0.01, loss="sq"),
    ],
    ids=["noise", "mechanism"],
)
def test_noise_and_mechanism_designs_run_the_same_sequence(monkeypatch, design):
    seen = record_infeasible(monkeypatch)
    res = design.solve(solver="highs")
    # the same re-solves in the same order, then "error" (never "infeasible") with the reason
    assert seen == [{}, *S.retry_plan(False, None, None)]
    assert res.status == "error" and "numerical failure" in res.message and "feasible" in res.message


def test_a_backend_without_highs_options_is_not_re_solved_with_them(monkeypatch):
    seen = record_infeasible(monkeypatch)
    res = MechanismDesign(n=4, eps=1.0, delta=0.01, loss="sq").solve(solver="cbc")
    assert seen == [{}] and res.status == "error"


def test_an_unverified_mechanism_matrix_is_replaced_by_its_exact_repair():
    # the optimum with 1e-8 of row 0's mass moved onto its likeliest output: its tight rows now break
    # (eps, delta)-DP beyond the 1e-6 relative rule; the repair must fix that within REPAIR_RTOL of its loss
    d = MechanismDesign(n=4, eps=1.0, delta=1e-3, loss="sq")
    best = d.solve(solver="highs")
    assert best.status == "optimal"
    P = best.matrix.copy()
    P[0] = P[0] * (1 - 1e-8) + 1e-8 * np.eye(P.shape[1])[int(np.argmax(P[0]))]
    bad = MechanismResult(d, "optimal", P, "highs", 0.0, best.model_size)
    assert bad.status == "unverified"
    fixed = S.repaired_result(d, bad)
    assert fixed is not None and fixed.status == "optimal" and fixed.verify()
    assert "exact repair" in fixed.message and "relative loss change" in fixed.message
    assert fixed.loss <= bad.loss * (1 + S.REPAIR_RTOL) + S.REPAIR_RTOL


def test_a_backend_without_exact_points_has_them_refined_by_highs():
    # cvxpy's interior point meets rows to ~1e-8: its point is refined by HiGHS (a declared capability,
    # not a list of backend names)
    res = NoiseDesign(n=6, eps=1.0, delta=0.01, neighborhood=Neighborhood.bd(2), metric="mse").solve(solver="cvxpy")
    assert res.status == "optimal" and res.verify() and "refined by HiGHS" in res.message


def test_the_basis_proof_keeps_to_its_time_limit(monkeypatch):
    # the continuous lower bound runs it after its rows (m = 128: a re-solve of ~10 min); it gets the time that is left
    model = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(1), privacy="dp").build_model()
    seen = []
    real = S.basis_dual

    def spy(model, scale, *, time_limit=None):
        seen.append(time_limit)
        return real(model, scale, time_limit=time_limit)

    monkeypatch.setattr(S, "basis_dual", spy)
    x = np.full(model.shape[1], 0.1)
    S.proof_dual(model, x, 7.5)
    S.proof_dual(model, x)
    assert seen == [7.5, None]
