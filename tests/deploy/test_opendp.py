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


# ----------------------------------------------------------------------- composed designs


def _composed_certified(k=6, eps=1.5, delta=1e-2, e0=0.3, neighborhood=None, pmf=None):
    """A certified composed design from a known PMF (a symmetric geometric-like PMF at e0 per release)."""
    from optnoise.design.result import DesignResult

    x = np.arange(11)
    f = np.exp(-e0 * np.minimum(x, 11 - x)) if pmf is None else np.asarray(pmf, dtype=float)
    nb = neighborhood or Neighborhood.bd(1)
    d = NoiseDesign(n=10, eps=eps, delta=delta, neighborhood=nb, privacy="composed", compositions=k)
    res = DesignResult(d, "feasible", f / f.sum(), "test", 0.0, None)
    assert res.status == "feasible", res.message
    return res.certify()


@pytest.fixture(scope="module")
def composed():
    return _composed_certified()


def test_composed_export_releases_k_answers_with_the_composed_map(composed):
    cd, k = composed, 6
    meas = cd.to_opendp(compositions=k, rng=np.random.default_rng(3))
    assert meas.map(1) == (1.5, 1e-2) and meas.map(0) == (0.0, 0.0)
    assert 0 < cd.composed["composed_delta"] <= 1e-2
    with pytest.raises(Exception, match="not covered"):
        meas.map(2)  # BD(1) certifies neighbours at distance 1 only
    out = np.array([meas([4, 0, 10, 7, -3, 99]) for _ in range(600)])
    assert out.shape == (600, k) and out.min() >= 0 and out.max() <= 10
    # every coordinate is clamped, then released with its own draw of the exact sampler
    noise = (out - np.array([4, 0, 10, 7, 0, 10])) % 11
    freq = np.bincount(noise.ravel(), minlength=11) / noise.size
    assert np.max(np.abs(freq - cd.pmf_float)) < 0.03
    # chained after a transformation to k counting queries (each moves by <= d_in under the symmetric distance)
    counts = dp.t.make_user_transformation(
        dp.vector_domain(dp.atom_domain(T="i32")),
        dp.symmetric_distance(),
        dp.vector_domain(dp.atom_domain(T="i32"), size=k),
        dp.linf_distance(T="i32"),
        function=lambda data: [sum(1 for v in data if v >= j) for j in range(k)],
        stability_map=lambda d_in: d_in,
    )
    chain = counts >> meas
    assert chain.map(1) == (1.5, 1e-2)
    assert len(chain([1, 2, 3, 8])) == k
    # OpenDP's own composition of k single-release exports adds their epsilons: k x 1.5 = 9
    with pytest.warns(UserWarning, match="will not see the composed guarantee"):
        single = cd.to_opendp()
    total = dp.c.make_composition([single] * k).map(1)
    total_eps = total[0] if isinstance(total, tuple) else total  # one release is pure here: max_divergence
    assert total_eps == pytest.approx(k * 1.5) and total_eps > meas.map(1)[0]


def test_composed_export_is_refused_for_other_k_and_single_designs(composed, certified):
    for bad in (5, 7, 0, True, 6.0, "6"):
        with pytest.raises(ValueError, match="compositions"):
            composed.to_opendp(compositions=bad)
    with pytest.raises(ValueError, match="compositions applies to a certified composed design"):
        certified.to_opendp(compositions=3)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        certified.to_opendp()  # no warning for a single-release design


def test_directed_composed_export_accounts_both_orders():
    """OpenDP's metric is symmetric: the k-fold map covers the reverse order a directed design does not list."""
    import math

    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    # an asymmetric PMF: its +1 order leaks less than its reverse
    f = np.array([3.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.1, 1.3, 1.6, 2.0, 8.0])
    cd = _composed_certified(k=3, eps=3.0, delta=0.01, pmf=f, neighborhood=Neighborhood.bd(1, directed=True))
    meas = cd.to_opendp(compositions=3)
    eps, delta = meas.map(1)
    w = cd.pmf_float
    g = np.roll(w, -1)  # f(. + 1)

    def pld(p, q):
        lp = {i: math.log(v) for i, v in enumerate(p)}
        lq = {i: math.log(v) for i, v in enumerate(q)}
        return pld_lib.from_two_probability_mass_functions(lp, lq, value_discretization_interval=1e-4)

    # every sequence of orders over the 3 rounds (the adversary may pick either order in each round)
    orders = (pld(w, g), pld(g, w))
    seqs = []
    for a in orders:
        for b in orders:
            for c in orders:
                seqs.append(float(a.compose(b).compose(c).get_delta_for_epsilon(eps)))
    forward, reverse = seqs[0], seqs[-1]
    # one order meets the target (the listed one: the design is feasible), the other does not
    assert min(forward, reverse) <= 0.01 < max(forward, reverse) and cd.composed["composed_delta"] <= 0.01
    assert eps == 3.0 and delta >= max(seqs) - 1e-9 and delta > 0.01
