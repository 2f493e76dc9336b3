"""Certified composed additive designs: the single release exact, the k-fold guarantee recomputed (issue 30)."""

from __future__ import annotations

import json
import math
from collections import defaultdict

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.deploy import load_design
from optnoise.deploy.additive import CertifiedAdditive
from optnoise.deploy.files import file_digest

pld_lib = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")

K, EPS, DELTA = 4, 1.0, 1e-5


@pytest.fixture(scope="module")
def certified():
    d = NoiseDesign(
        release="additive",
        privacy="composed",
        compositions=K,
        eps=EPS,
        delta=DELTA,
        neighborhood=Neighborhood.bd(1),
        metric="mse",
    )
    res = d.solve()
    assert res.status in ("optimal", "feasible")
    return res, res.certify()


def _window(cd: CertifiedAdditive) -> np.ndarray:
    """The certified PMF on a window holding all but ~1e-25 of its mass (floats)."""
    far = cd.support + int(math.ceil(60.0 / -math.log(float(cd.tail_factor)))) * cd.period
    return cd.pmf_at(np.arange(-far, far + 2))


def _orders(f: np.ndarray):
    return ((f[:-1], f[1:]), (f[1:], f[:-1]))  # both orders of the neighbour pair (shifts +-1)


def brute_force_delta(cd: CertifiedAdditive, k: int, eps: float) -> float:
    """The k-fold privacy-loss distribution convolved atom by atom (no grid), its delta at eps."""
    out = 0.0
    for p, q in _orders(_window(cd)):
        one: dict[float, float] = defaultdict(float)
        for a, b in zip(p, q, strict=True):
            one[round(math.log(a / b), 9)] += a
        assert len(one) < 100  # a staircase: few distinct losses
        comp = {0.0: 1.0}
        for _ in range(k):
            nxt: dict[float, float] = defaultdict(float)
            for l1, p1 in comp.items():
                for l2, p2 in one.items():
                    nxt[round(l1 + l2, 9)] += p1 * p2
            comp = nxt
        out = max(out, sum(m * -math.expm1(eps - v) for v, m in comp.items() if v > eps))
    return out


def dp_accounting_delta(cd: CertifiedAdditive, k: int, eps: float, h: float) -> float:
    """dp-accounting's pessimistic PLD of the two PMFs, composed k times."""
    out = 0.0
    for p, q in _orders(_window(cd)):
        lp = {i: math.log(v) for i, v in enumerate(p) if v > 0}
        lq = {i: math.log(v) for i, v in enumerate(q) if v > 0}
        pld = pld_lib.from_two_probability_mass_functions(lp, lq, value_discretization_interval=h)
        out = max(out, float(pld.self_compose(k).get_delta_for_epsilon(eps)))
    return out


def test_composed_certificate_states_the_single_release_and_the_k_fold_block(certified):
    res, cd = certified
    assert isinstance(cd, CertifiedAdditive)
    assert cd.design.privacy == "dp" and cd.design.compositions is None
    assert cd.eps == EPS and cd.certified_delta <= cd.delta
    c = cd.composed
    assert c["compositions"] == K and c["eps"] == EPS and c["delta"] == DELTA
    assert c["composed_delta"] <= DELTA
    assert cd.verify()
    assert "composed    4 releases" in cd.summary()
    # the tail keeps the composed design's calibrated decay (slower than e^-eps), not one at eps
    assert float(cd.tail_factor) >= math.exp(-res.design.tail_eps) * (1 - 1e-6)


def test_composed_delta_agrees_with_brute_force_and_dp_accounting(certified):
    _, cd = certified
    ours = cd.composed["composed_delta"]
    exact = brute_force_delta(cd, K, EPS)
    # pessimistic: never below the atom-by-atom composition, and close to it
    assert exact <= ours * (1 + 1e-9) and ours <= exact * (1 + 1e-3)
    # dp-accounting's pessimistic grid rounds every loss up (k h in all): an upper bound converging to it
    theirs = dp_accounting_delta(cd, K, EPS, 1e-6)
    assert ours * (1 - 1e-9) <= theirs <= ours * 1.05
    assert exact <= DELTA


def test_composed_file_round_trip(tmp_path, certified):
    _, cd = certified
    back = load_design(cd.save(tmp_path / "c.json"))
    assert isinstance(back, CertifiedAdditive)
    assert back.composed == cd.composed and back.certified_delta == cd.certified_delta
    assert np.array_equal(back.weights, cd.weights) and back.verify()


def _rewrite(tmp_path, cd, name, edit):
    doc = json.loads(cd.save(tmp_path / "c.json").read_text())
    edit(doc)
    doc["sha256"] = file_digest(doc)
    (tmp_path / name).write_text(json.dumps(doc))
    return tmp_path / name


def test_tampered_composed_blocks_are_refused(tmp_path, certified):
    _, cd = certified

    def stated(doc):
        doc["composed"]["composed_delta"] = doc["composed"]["composed_delta"] / 2

    def target(doc):
        doc["composed"]["delta"] = doc["composed"]["composed_delta"] / 2

    def more(doc):
        doc["composed"]["compositions"] = 40

    def unknown(doc):
        doc["composed"]["extra"] = 1

    cases = [
        (stated, "composed.composed_delta.*fresh recomputation"),
        (target, "composed.composed_delta.*do not meet their composed guarantee"),
        (more, "composed.composed_delta"),
        (unknown, "composed.extra"),
    ]
    for edit, message in cases:
        with pytest.raises(ValueError, match=message):
            load_design(_rewrite(tmp_path, cd, "bad.json", edit))


dp = pytest.importorskip("opendp.prelude")


def test_to_opendp_compositions_releases_k_answers_with_the_composed_map(certified):
    _, cd = certified
    dp.enable_features("contrib")
    m = cd.to_opendp(compositions=K, rng=np.random.default_rng(3))
    out = m([10, 20, 30, 40])
    assert len(out) == K and all(isinstance(v, int) for v in out)
    eps, delta = m.map(1)
    assert eps == EPS and cd.composed["composed_delta"] <= delta <= DELTA
    with pytest.raises(Exception, match="not covered"):
        m.map(2)
    with pytest.raises(ValueError, match="compositions must be 4"):
        cd.to_opendp(compositions=3)
    with pytest.warns(UserWarning, match="composed"):
        cd.to_opendp()
