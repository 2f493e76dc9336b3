"""Stored proofs are re-checked, never trusted (issue 32): forged cache entries and result files.

Every expected value comes from an independent route: the fresh solve of the same design, or the
distortion of the uniform PMF computed here by hand."""

from __future__ import annotations

import glob
import json

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.deploy.certify import CertificationError, certify_result
from optnoise.design.result import DesignResult
from optnoise.engine.tolerance import OPTIMAL_GAP

NB = Neighborhood.bd(1)


def _entry(folder):
    (path,) = glob.glob(str(folder / "*.json"))
    return path, json.loads(open(path).read())


def _uniform_cost(d):
    return float(np.sum(d.cost) / d.cost.size)


def test_a_forged_composed_entry_is_not_served_as_optimal(tmp_path):
    # the issue: a composed entry edited to the uniform PMF, "optimal", proof.bound = its distortion, was
    # served as optimal with gap 0 (distortion 10.0 against the real 4.34 for n = 10, k = 2)
    d = NoiseDesign(n=10, eps=1.0, delta=1e-5, neighborhood=NB, metric="mse", privacy="composed", compositions=2)
    first = d.solve(time_limit=120, cache=tmp_path)
    assert first.status in ("optimal", "feasible") and first.bound is not None
    path, doc = _entry(tmp_path)
    uniform = _uniform_cost(d)
    assert uniform > first.distortion * 1.5
    doc["result"].update(pmf=[1 / 11] * 11, status="optimal", gap=0.0, bound=uniform)
    doc["proof"] = {"kind": "bound", "bound": uniform, "backend": "composed"}
    open(path, "w").write(json.dumps(doc))
    again = d.solve(time_limit=120, cache=tmp_path)
    assert not (again.status == "optimal" and again.distortion == pytest.approx(uniform))
    assert again.bound is not None and again.bound <= again.distortion + 1e-9
    assert again.bound == pytest.approx(first.bound)


def test_a_stored_bound_above_the_objective_is_not_kept(tmp_path):
    d = NoiseDesign(n=10, eps=1.0, delta=1e-5, neighborhood=NB, metric="mse", privacy="composed", compositions=2)
    first = d.solve(time_limit=120, cache=tmp_path)
    path, doc = _entry(tmp_path)
    doc["result"]["bound"] = 2 * first.distortion
    doc["proof"] = {"kind": "bound", "bound": 2 * first.distortion, "backend": "composed"}
    open(path, "w").write(json.dumps(doc))
    again = d.solve(time_limit=120, cache=tmp_path)
    assert again.bound is not None and again.bound <= again.distortion * (1 + OPTIMAL_GAP)
    assert again.bound == pytest.approx(first.bound)


def test_an_epsilon_entry_with_a_raised_eps_is_not_served_as_optimal(tmp_path):
    # k = 1, least eps under a distortion cap: the LP bisection proves its gap, so the fresh result is optimal
    kw = dict(n=8, delta=1e-3, neighborhood=NB, metric="mse", privacy="composed", compositions=1)
    d = NoiseDesign(objective="epsilon", max_distortion=2.0, **kw)
    first = d.solve(cache=tmp_path)
    assert first.status == "optimal" and first.eps_objective is not None
    path, doc = _entry(tmp_path)
    raised = 2.0 * first.eps_objective
    doc["result"].update(eps=raised, bound=raised, gap=0.0)
    doc["proof"] = {"kind": "bound", "bound": raised, "backend": "composed"}
    open(path, "w").write(json.dumps(doc))
    again = d.solve(cache=tmp_path)
    assert not (again.status == "optimal" and again.eps_objective == pytest.approx(raised))
    assert again.eps_objective == pytest.approx(first.eps_objective)


def _forged_lp_result(tmp_path):
    d = NoiseDesign(n=8, eps=1.0, delta=0.01, neighborhood=NB, metric="mse", privacy="dp")
    res = d.solve(solver="highs")
    assert res.status == "optimal"
    data = res.to_dict()
    uniform = _uniform_cost(d)
    data.update(pmf=[1 / 9] * 9, status="optimal", bound=uniform, gap=0.0, distortion=uniform)
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(data))
    return d, res, data, path


def test_a_hand_edited_result_is_rechecked_on_load_and_not_certified(tmp_path):
    # the issue: certify accepted {"status": "optimal", "bound": <distortion>} and sealed it into the design file
    d, real, data, _ = _forged_lp_result(tmp_path)
    loaded = DesignResult.from_dict(data, design=d)
    assert loaded.verify()  # the uniform PMF is private ...
    assert loaded.status == "feasible"  # ... but not optimal: the re-derived bound is the real optimum's
    assert loaded.bound == pytest.approx(real.distortion, rel=1e-6)
    with pytest.raises(CertificationError, match="status 'feasible'"):
        certify_result(loaded)
    # a genuine result keeps its status through the same check
    assert DesignResult.from_dict(real.to_dict(), design=d).status == "optimal"


def test_cli_certify_refuses_a_forged_optimal_result(tmp_path, capsys):
    from optnoise.cli import main

    _, _, _, path = _forged_lp_result(tmp_path)
    out = tmp_path / "design.json"
    code = main(["certify", "--result", str(path), "--out", str(out)])
    _, err = capsys.readouterr()
    assert code != 0 and not out.exists() and "feasible" in err


def _mechanism_entry_served(tmp_path, edit):
    from optnoise import MechanismDesign

    d = MechanismDesign(n=80, eps=1.0, delta=1e-3, loss="sq")  # large enough for lazy rows
    first = d.solve(cache=tmp_path)
    assert first.status == "optimal" and first.bound is not None
    path, doc = _entry(tmp_path)
    assert doc["proof"]["kind"] == "lp-dual" and "active" in doc["proof"]  # restricted LP multipliers, not a number
    edit(doc, first)
    open(path, "w").write(json.dumps(doc))
    calls = []
    original = MechanismDesign._solve_lazy

    def counting(self, *a, **k):
        calls.append(1)
        return original(self, *a, **k)

    MechanismDesign._solve_lazy = counting
    try:
        again = d.solve(cache=tmp_path)
    finally:
        MechanismDesign._solve_lazy = original
    return first, again, bool(calls)


def test_a_genuine_mechanism_entry_is_served_with_its_rechecked_bound(tmp_path):
    first, again, solved = _mechanism_entry_served(tmp_path, lambda doc, first: None)
    assert not solved and again.status == "optimal"
    assert again.bound == pytest.approx(first.bound, rel=1e-9) and again.bound <= again.loss * (1 + OPTIMAL_GAP)


def test_a_mechanism_entry_with_a_bare_bound_is_solved_again(tmp_path):
    # before: the cache took a mechanism entry's stored number ("kind": "bound") as its proof
    def forge(doc, first):
        doc["proof"] = {"kind": "bound", "bound": first.loss, "backend": "highs"}

    _, again, solved = _mechanism_entry_served(tmp_path, forge)
    assert solved and again.status == "optimal"


def test_a_mechanism_entry_with_forged_multipliers_is_not_optimal(tmp_path):
    def forge(doc, first):
        doc["proof"]["dual"] = [0.0] * len(doc["proof"]["dual"])  # proves only the trivial bound

    first, again, solved = _mechanism_entry_served(tmp_path, forge)
    assert solved and again.status == "optimal" and again.bound == pytest.approx(first.bound, rel=1e-6)
