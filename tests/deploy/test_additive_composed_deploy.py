"""Certified composed additive designs: the single release exact, the k-fold guarantee recomputed (issue 30)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.signal import fftconvolve

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


def bracket_delta(cd: CertifiedAdditive, k: int, eps: float, h: float = 1e-7) -> tuple[float, float]:
    """The k-fold delta at eps bracketed by rounding every single-release loss down and up to a multiple of h.

    ``delta(eps) = E[(1 - e^(eps - L))_+]`` grows with every loss, so composing the rounded-down
    losses gives a lower bound and the rounded-up ones an upper bound (FFT convolution on the grid;
    no privacy-loss library involved).
    """
    lo_hi = [0.0, 0.0]
    for p, q in _orders(_window(cd)):
        keep = (p > 0) & (q > 0)
        assert np.sum(p[~keep]) < 1e-20  # no infinite losses on the window
        losses, mass = np.log(p[keep] / q[keep]), p[keep]
        for side, rounding in enumerate((np.floor, np.ceil)):
            idx = rounding(losses / h).astype(np.int64)
            base = int(idx.min())
            one = np.bincount(idx - base, weights=mass)
            comp = one
            for _ in range(k - 1):
                comp = np.clip(fftconvolve(comp, one), 0.0, None)
            values = (np.arange(comp.size) + k * base) * h
            above = values > eps
            lo_hi[side] = max(lo_hi[side], float(np.sum(comp[above] * -np.expm1(eps - values[above]))))
    return lo_hi[0], lo_hi[1]


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
    lower, upper = bracket_delta(cd, K, EPS)
    # pessimistic: never below the exact composition, and close to it
    assert lower <= ours * (1 + 1e-6) and ours <= upper * (1 + 1e-3)
    # dp-accounting's pessimistic grid rounds every loss up (k h in all): an upper bound converging to it
    theirs = dp_accounting_delta(cd, K, EPS, 1e-6)
    assert ours * (1 - 1e-9) <= theirs <= ours * 1.05
    assert lower <= DELTA


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


def test_epsilon_form_certifies_the_eps_it_proves_and_exports_it(tmp_path):
    # objective="epsilon" crashed certify() (float(None): the design has no eps); and at the cap the design is
    # the pure discrete Laplace whose 2-fold loss sits exactly at the searched eps, so a single release checked
    # at the composed eps let the rounding push the 2-fold delta to 1.1e-5 > 1e-6
    d = NoiseDesign(
        release="additive",
        privacy="composed",
        compositions=2,
        objective="epsilon",
        max_distortion=8.0,
        delta=1e-6,
        neighborhood=Neighborhood.bd(1),
        metric="mse",
    )
    res = d.solve()
    searched = res.achieved["composed_eps"]
    cd = res.certify()
    eps = cd.composed["eps"]
    assert searched <= eps <= searched * (1 + 1e-3)
    assert cd.composed["composed_delta"] <= 1e-6
    lo, hi = bracket_delta(cd, 2, eps)
    assert hi <= 1e-6 + 1e-12  # independent of the project's accounting
    assert dp_accounting_delta(cd, 2, eps, 1e-4) <= 1e-6
    assert cd.eps == eps  # the design file ties the single release's eps to the k-fold block's
    m = cd.to_opendp(compositions=2)
    assert m.map(1) == pytest.approx((eps, 1e-6))
    back = load_design(cd.save(tmp_path / "eps_form.json"))  # re-proved on load
    assert back.composed["eps"] == eps and back.composed["composed_delta"] <= 1e-6
