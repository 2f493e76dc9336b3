"""Reading continuous results back (optnoise.design.continuous.read_back, a sweep's cache): nothing stored trusted."""

from __future__ import annotations

import numpy as np
import pytest

from optnoise import NoiseDesign
from optnoise.design.continuous import read_back


@pytest.fixture(scope="module")
def solved():
    d = NoiseDesign(release="continuous", sensitivity=1.0, resolution=0.25, gap=0.05, eps=1.0, delta=0.1, metric="mae")
    res = d.solve()
    assert res.status == "optimal" and res.proof is not None and res.proof["m"] == 4
    return d, res


def test_read_back_reverifies_the_mechanism_and_reproves_the_bound(solved):
    d, res = solved
    data = res.to_dict()
    data["bound"], data["distortion"], data["achieved"] = 1e9, 0.0, {}  # stored numbers are not used
    back = read_back(data, design=d, proof=res.proof, backend="cache")
    assert back.status == res.status and back.backend == "cache" and back.verify()
    assert back.distortion == pytest.approx(res.distortion, rel=1e-12)
    assert back.achieved["dp"] == pytest.approx(res.achieved["dp"], rel=1e-9)
    assert back.bound == pytest.approx(res.bound, rel=1e-9) and back.bound <= back.distortion


def test_the_stored_entries_only_start_the_lp(solved):
    """Without the stored active entries (or with junk ones) the LP generates its rows itself: the same bound."""
    d, res = solved
    for active in ([], [[0, 0, 1, 0], [2, 1, 3, -5]]):
        back = read_back(res.to_dict(), design=d, proof={**res.proof, "active": active})
        assert back.bound == pytest.approx(res.bound, rel=1e-7)


def test_without_a_proof_optimal_is_not_claimed(solved):
    d, res = solved
    back = read_back(res.to_dict(), design=d, proof=None)
    assert back.bound is None and back.status == "feasible"  # the cache then solves it again (status changed)


def test_masses_that_break_the_guarantee_are_refused(solved):
    d, res = solved
    data = res.to_dict()
    pmf = np.asarray(data["pmf"])
    pmf[len(pmf) // 2] += 0.5  # a spike at 0: the shifts see it
    data["pmf"] = (pmf / pmf.sum() * (1 - res.tail.mass)).tolist()
    with pytest.raises(ValueError, match="re-verify"):
        read_back(data, design=d, proof=res.proof)


@pytest.mark.parametrize("field,value", [("m", 0), ("m", 8), ("pmf", None), ("release", "grid")])
def test_malformed_fields_are_refused(solved, field, value):
    d, res = solved
    with pytest.raises(ValueError):
        read_back({**res.to_dict(), field: value}, design=d, proof=res.proof)


def test_renyi_results_are_not_read_back():
    d = NoiseDesign(release="continuous", sensitivity=1.0, resolution=1.0, privacy="zcdp", rho=0.5, metric="mse")
    with pytest.raises(ValueError, match="not read back"):
        read_back({"release": "continuous"}, design=d)
