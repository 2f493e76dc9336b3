"""Certified grid releases (optnoise.deploy.grid): the additive certificate and sampler, exact rounding, OpenDP."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from optnoise import NoiseDesign, load_design
from optnoise.deploy.files import file_digest
from optnoise.deploy.grid import CertifiedGrid
from optnoise.design.grid import cell_index, cell_value


@pytest.fixture(scope="module")
def solved():
    d = NoiseDesign(release="grid", sensitivity=1.0, resolution=0.125, eps=1.0, delta=1e-6, metric="mse")
    return d.solve(solver="highs")


@pytest.fixture(scope="module")
def cert(solved):
    return solved.certify()


def test_certificate_is_the_integer_noise_over_shifts_1_to_m(solved, cert):
    assert isinstance(cert, CertifiedGrid) and cert.period == 8
    assert cert.certified_delta <= Fraction(1e-6) and cert.verify()
    assert cert.check(np.arange(1, 9)) <= cert.certified_delta  # every shift 1..m, exactly
    assert float(cert.certified_delta) == pytest.approx(solved.achieved["dp"], rel=1e-5)
    # the certified distortion is in the query's units, the rounding included
    assert cert.distortion == pytest.approx(solved.distortion, rel=1e-9)
    assert cert.repair["distortion_solver"] == pytest.approx(solved.distortion, rel=1e-12)


def test_release_rounds_exactly_and_adds_the_sampled_cells(cert):
    qs = [0.0625, math.nextafter(0.0625, 0.0), -3.3, 1e6 + 0.01]
    got = cert.release(np.array(qs), rng=np.random.default_rng(5))
    eta = cert.sample(len(qs), rng=np.random.default_rng(5))
    want = [cell_value(cell_index(q, 1.0, 8) + int(e), 1.0, 8) for q, e in zip(qs, eta, strict=True)]
    assert got.tolist() == want
    assert isinstance(cert.release(2.0), float)


def test_released_error_has_the_reported_mse(cert, solved):
    rng = np.random.default_rng(9)
    q = rng.uniform(-50, 50, 40_000)  # answer positions uniform in their cells, as the model states
    err = cert.release(q, rng=rng) - q
    assert np.mean(err**2) == pytest.approx(solved.distortion, rel=0.04)


def test_save_load_round_trip_and_tampering(tmp_path, cert):
    path = cert.save(tmp_path / "g.json")
    back = load_design(path)
    assert isinstance(back, CertifiedGrid) and back.certified_delta == cert.certified_delta
    assert back.design.spec() == cert.design.spec() and back.distortion == pytest.approx(cert.distortion)
    doc = json.loads(path.read_text())
    doc["problem"]["resolution"] = 0.25  # a coarser grid: the same weights no longer state its problem
    doc["problem"]["steps"] = 4
    doc["sha256"] = file_digest(doc)
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="period"):
        load_design(tmp_path / "bad.json")


@pytest.mark.parametrize("bad", [math.nan, math.inf, "1.0", 1e16, np.array([], dtype=float)])
def test_release_refuses_bad_answers(cert, bad):
    with pytest.raises(ValueError, match="q must be"):
        cert.release(bad)


dp = pytest.importorskip("opendp.prelude")


def test_opendp_map_covers_the_sensitivity_and_refuses_more(cert):
    meas = cert.to_opendp(rng=np.random.default_rng(1))
    delta = meas.map(1.0)[1]
    assert meas.map(1.0)[0] == 1.0 and Fraction(delta) >= cert.certified_delta and delta <= 1e-6
    assert meas.map(0.3) == meas.map(1.0) and meas.map(0.0) == (0.0, 0.0)
    with pytest.raises(Exception, match="not covered"):
        meas.map(1.0000001)
    with pytest.raises(ValueError, match="T must be 'f64'"):
        cert.to_opendp(T="i64")


def test_opendp_chain_after_a_bounded_float_sum():
    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    summed = dp.t.make_clamp(*space, bounds=(0.0, 1.0)) >> dp.t.then_sum()
    sens = summed.map(1)  # OpenDP's float sum pads the sensitivity for its rounding: design for what it states
    assert sens >= 1.0
    res = NoiseDesign(release="grid", sensitivity=sens, resolution=sens / 4, eps=1.0, delta=1e-6, metric="mse").solve(
        solver="highs"
    )
    meas = summed >> res.certify().to_opendp(rng=np.random.default_rng(3))
    assert meas.map(1)[0] == 1.0
    out = meas([0.5] * 200)
    assert abs(out - 100.0) < 20 and isinstance(out, float)
