"""OpenDP export of certified designs: the measurement samples with the exact sampler and its privacy map is
the certificate."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign

dp = pytest.importorskip("opendp.prelude")


@pytest.fixture(scope="module")
def certified():
    res = NoiseDesign(n=10, eps=1.0, delta=1e-2, neighborhood=Neighborhood.bd(2), metric="circular-mse", privacy="dp")
    return res.solve().certify()


def test_measurement_invokes_and_maps_like_the_certificate(certified):
    cd = certified
    meas = cd.to_opendp(rng=np.random.default_rng(5))
    out = [meas(4) for _ in range(2000)]
    assert all(0 <= v <= 10 for v in out)
    # the released noise follows the certified PMF (chi-square-ish check on the mode)
    noise = (np.array(out) - 4) % 11
    freq = np.bincount(noise, minlength=11) / len(out)
    assert np.max(np.abs(freq - cd.pmf_float)) < 0.05
    eps, delta = meas.map(1)
    assert eps == cd.eps and delta >= cd.certified_delta and Fraction(delta) - cd.certified_delta < 1e-17
    assert meas.map(2) == (eps, delta)  # BD(2) certifies neighbours up to distance 2
    assert meas.map(0) == (0.0, 0.0)
    assert meas.check(2, (cd.eps, float(cd.delta)))
    with pytest.raises(Exception, match="not covered"):
        meas.map(3)


def test_pure_design_uses_max_divergence():
    cd = NoiseDesign(n=6, eps=0.8, neighborhood=Neighborhood.bd(1), privacy="dp").solve().certify()
    meas = cd.to_opendp()
    assert cd.certified_delta == 0
    assert meas.map(1) == pytest.approx(0.8) and "MaxDivergence" in str(meas.output_measure)
    assert 0 <= meas(3) <= 6


def test_rng_is_checked_at_export(certified):
    # to_opendp(rng="x") used to build the measurement and fail only at its first release
    for bad in ("x", 3, np.random.RandomState(1)):
        with pytest.raises(ValueError, match="rng must be None"):
            certified.to_opendp(rng=bad)
