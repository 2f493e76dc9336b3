"""Grid release with privacy="composed", objective="epsilon": certificate, design file, OpenDP and sampler.

The k-fold guarantee of the certified weights is checked by dp-accounting on the exact weights (floats) for
every shift 1..m in cells, independently of optnoise's accounting.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

from optnoise import NoiseDesign, load_design
from optnoise.deploy.files import file_digest
from optnoise.deploy.grid import CertifiedGrid

K, DELTA, CAP, W = 2, 1e-6, 25.0, 0.5


@pytest.fixture(scope="module")
def solved():
    d = NoiseDesign(
        release="grid",
        sensitivity=1.0,
        resolution=W,
        privacy="composed",
        compositions=K,
        delta=DELTA,
        objective="epsilon",
        max_distortion=CAP,
        metric="mse",
    )
    res = d.solve()
    assert res.status in ("optimal", "feasible")
    return res


@pytest.fixture(scope="module")
def cert(solved):
    return solved.certify()


def _dp_accounting_eps(cd: CertifiedGrid, k: int, delta: float) -> float:
    """dp-accounting's pessimistic eps of k releases of the certified weights, shifts +-1..+-m cells."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    far = cd.support + int(math.ceil(60.0 / -math.log(float(cd.tail_factor)))) * cd.period
    f = cd.pmf_at(np.arange(-far, far + 1))
    logs = {i: math.log(v) for i, v in enumerate(f) if v > 0}
    worst = 0.0
    for mu in range(1, cd.period + 1):
        for s in (mu, -mu):
            shifted = {i + s: v for i, v in logs.items()}
            one = pld.from_two_probability_mass_functions(
                logs, shifted, pessimistic_estimate=True, value_discretization_interval=1e-4
            )
            worst = max(worst, float(one.self_compose(k).get_epsilon_for_delta(delta)))
    return worst


def test_certificate_carries_the_k_fold_guarantee(solved, cert):
    assert isinstance(cert, CertifiedGrid) and cert.period == 2 and cert.verify()
    c = cert.composed
    assert c is not None and c["compositions"] == K and c["delta"] == DELTA
    assert c["composed_delta"] <= DELTA and c["eps"] == cert.eps
    assert c["eps"] >= solved.achieved["composed_eps"] and c["eps"] <= solved.achieved["composed_eps"] + K * 1e-4 + 1e-9
    # independent route: dp-accounting on the exact weights over every shift in cells, both signs
    assert _dp_accounting_eps(cert, K, DELTA) <= c["eps"] * (1 + 1e-3)
    # the cap holds in the query's units, the rounding included
    assert cert.distortion <= CAP * (1 + 1e-6)
    assert cert.distortion == pytest.approx(solved.distortion, rel=1e-6)


def test_summary_states_the_composed_guarantee_and_one_distortion(cert):
    lines = cert.summary().splitlines()
    assert any(x.startswith("composed    2 releases") for x in lines)
    dist = [x for x in lines if x.startswith("distortion")]
    assert len(dist) == 1 and dist[0].endswith("(query units)")


def test_save_load_round_trip_and_a_tampered_composed_block(tmp_path, cert):
    path = cert.save(tmp_path / "g.json")
    back = load_design(path)
    assert isinstance(back, CertifiedGrid) and back.verify()
    assert back.certified_delta == cert.certified_delta and back.composed == cert.composed
    assert back.design.spec() == cert.design.spec() and back.distortion == pytest.approx(cert.distortion)
    doc = json.loads(path.read_text())
    doc["composed"]["composed_delta"] = doc["composed"]["composed_delta"] / 2 + 1e-12
    doc["sha256"] = file_digest(doc)
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="composed_delta"):
        load_design(tmp_path / "bad.json")


def test_sampler_releases_on_the_grid_with_the_reported_mse(cert, solved):
    rng = np.random.default_rng(11)
    q = rng.uniform(-40, 40, 40_000)  # answers uniform within their cells, as the distortion's model
    out = cert.release(q, rng=rng)
    assert np.all(np.round(out / W) * W == out)  # released values are grid points
    err = out - q
    assert np.mean(err**2) == pytest.approx(solved.distortion, rel=0.05)
    assert abs(np.mean(err)) < 0.1


dp = pytest.importorskip("opendp.prelude")


def test_opendp_k_answers_with_the_composed_map(cert):
    meas = cert.to_opendp(rng=np.random.default_rng(1), compositions=K)
    c = cert.composed
    assert meas.map(1.0) == (c["eps"], c["delta"])  # d_in = sensitivity: every shift 1..m is covered
    assert meas.map(0.3) == meas.map(1.0) and meas.map(0.0) == (0.0, 0.0)
    with pytest.raises(Exception, match="not covered"):
        meas.map(1.0000001)
    out = meas([3.3, -7.1])
    assert len(out) == K and all(isinstance(v, float) and round(v / W) * W == v for v in out)
    with pytest.raises(ValueError, match="compositions must be 2"):
        cert.to_opendp(compositions=3)


def test_opendp_single_release_warns_and_states_the_one_release_certificate(cert):
    with pytest.warns(UserWarning, match="compositions=2"):
        meas = cert.to_opendp(rng=np.random.default_rng(2))
    one = meas.map(1.0)
    assert (one if isinstance(one, float) else one[0]) == cert.eps


def test_opendp_single_design_does_not_warn_and_chains_after_a_bounded_float_sum():
    """The warning is for composed designs only: a (eps, delta) grid design chains after a float sum silently."""
    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    summed = dp.t.make_clamp(*space, bounds=(0.0, 1.0)) >> dp.t.then_sum()
    sens = summed.map(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the single-release export of a non-composed design does not warn
        d = NoiseDesign(release="grid", sensitivity=sens, resolution=sens / 2, eps=1.0, delta=1e-6, metric="mse")
        meas = summed >> d.solve(solver="highs").certify().to_opendp(rng=np.random.default_rng(3))
    assert meas.map(1)[0] == 1.0
