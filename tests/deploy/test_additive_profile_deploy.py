"""Certified profile additive designs: the exact certificate at every (eps_i, delta_i) of the profile (issue 30)."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.deploy import load_design
from optnoise.deploy.additive import CertifiedAdditive
from optnoise.deploy.files import file_digest

PROFILES = [
    (1, [(1.0, 1e-3), (2.0, 0.0)]),  # a pure pair: the tail needs the slack candidates
    (2, [(0.5, 1e-2), (1.0, 1e-4), (3.0, 1e-8)]),
]


def _certified(D, profile):
    res = NoiseDesign(release="additive", neighborhood=Neighborhood.bd(D), privacy="profile", profile=profile).solve()
    assert res.status == "optimal"
    return res, res.certify()


@pytest.fixture(scope="module", params=PROFILES, ids=["pure-pair", "three-pairs"])
def certified(request):
    return _certified(*request.param)


def _brute_hockey(cd, eps, M):
    """max over the shifts of sum_o [h(o) - e^eps h(o + mu)]_+ over -M..M in floats (the tails beyond negligible)."""
    x = np.arange(-M - cd.period, M + cd.period + 1)
    h = cd.pmf_at(x)
    o = np.arange(-M, M + 1) + M + cd.period
    return max(float(np.maximum(h[o] - math.exp(eps) * h[o + mu], 0.0).sum()) for mu in cd.design.shifts)


def test_every_pair_is_certified_exactly_and_matches_brute_force(certified):
    res, cd = certified
    assert isinstance(cd, CertifiedAdditive) and cd.verify()
    assert [(e, d) for e, d, _ in cd.profile] == list(res.design.profile)
    assert (cd.eps, cd.delta, cd.certified_delta) == cd.profile[0]
    M = cd.support + 400 * cd.period
    assert cd.pmf_at(np.arange(-M, M + 1)).sum() == pytest.approx(1.0, abs=1e-12)
    for (e, d, got), solver_delta in zip(cd.profile, res.achieved["profile"], strict=True):
        assert isinstance(got, Fraction) and got <= Fraction(d)
        brute = _brute_hockey(cd, e, M)
        assert brute <= d * (1 + 1e-9) + 1e-15
        assert float(got) == pytest.approx(brute, rel=1e-6, abs=1e-14)
        assert float(got) == pytest.approx(solver_delta, rel=1e-4, abs=1e-12)
    assert cd.distortion == pytest.approx(res.distortion, rel=1e-6)
    assert "profile     eps=" in cd.summary()


def test_profile_file_round_trip(tmp_path, certified):
    _, cd = certified
    back = load_design(cd.save(tmp_path / "p.json"))
    assert isinstance(back, CertifiedAdditive) and back.verify()
    assert back.profile == cd.profile and np.array_equal(back.weights, cd.weights)


def _rewrite(tmp_path, cd, edit):
    doc = json.loads(cd.save(tmp_path / "p.json").read_text())
    edit(doc)
    doc["sha256"] = file_digest(doc)
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    return tmp_path / "bad.json"


def _leak(doc):
    w = [int(t) for t in doc["weights"]]
    L = doc["additive"]["support"]
    w[L - 1] += w[L] // 3  # mass moved off the mode: the pairs' hockey sticks grow
    w[L] -= w[L] // 3
    doc["weights"] = [str(v) for v in w]


def _understate(doc):
    doc["certificate"]["pairs"][-1]["certified_delta"] = "0"


def _drop(doc):
    doc["certificate"]["pairs"].pop()


def _single(doc):
    doc["certificate"] = doc["certificate"]["pairs"][0]


@pytest.mark.parametrize(
    "edit, match",
    [
        (_leak, "'weights'.*do not meet their certificate"),
        (_understate, r"certificate.pairs\[\d\].certified_delta"),
        (_drop, "certificate.pairs"),
        (_single, "certificate"),
    ],
)
def test_tampered_profile_files_are_refused(tmp_path, edit, match):
    _, cd = _certified(*PROFILES[1])
    with pytest.raises(ValueError, match=match):
        load_design(_rewrite(tmp_path, cd, edit))
