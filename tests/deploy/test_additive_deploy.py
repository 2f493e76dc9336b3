"""Certified additive designs (q + eta on Z): exact certificate with exact tail sums, exact sampler, design
file, OpenDP export. Every number is checked by an independent route: brute-force float sums over a long
window of Z against the exact geometric sums, the float re-verification of the solve, closed forms."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from optnoise import Neighborhood, NoiseDesign
from optnoise.deploy import load_design
from optnoise.deploy.additive import MIX_BITS, CertifiedAdditive, exact_additive_delta
from optnoise.deploy.certify import CertificationError


def _solve(D: int, eps: float, delta: float, metric: str = "mse", **kw):
    res = NoiseDesign(
        release="additive", neighborhood=Neighborhood.bd(D), eps=eps, delta=delta, metric=metric, **kw
    ).solve()
    assert res.status == "optimal"
    return res


@pytest.fixture(scope="module")
def pure2():
    return _solve(2, 1.0, 0.0).certify()


@pytest.fixture(scope="module")
def count():
    return _solve(1, 0.5, 1e-6).certify()


def _window_hockey(cd, shifts, eps, M):
    """max over shifts of sum_o [h(o) - e^eps h(o + mu)]_+ over o in -M..M, in floats (brute force)."""
    x = np.arange(-M - cd.period, M + cd.period + 1)
    h = cd.pmf_at(x)
    worst = 0.0
    for mu in shifts:
        o = np.arange(-M, M + 1)
        p, q = h[o + M + cd.period], h[o + mu + M + cd.period]
        worst = max(worst, float(np.maximum(p - math.exp(eps) * q, 0.0).sum()))
    return worst


@pytest.mark.parametrize("D,eps,delta", [(1, 0.5, 1e-6), (3, 1.0, 1e-5), (2, 1.0, 0.0), (1, 1.0, 0.0)])
def test_certificate_meets_target_and_matches_float_reverification(D, eps, delta):
    res = _solve(D, eps, delta)
    cd = res.certify()
    assert isinstance(cd, CertifiedAdditive) and cd.verify()
    assert isinstance(cd.certified_delta, Fraction) and cd.certified_delta <= Fraction(delta)
    # the certified noise is the solver's up to rounding and a tiny mixture: same guarantee, same cost
    assert cd.distortion == pytest.approx(res.distortion, rel=1e-6)
    assert float(cd.certified_delta) == pytest.approx(res.achieved["dp"], rel=1e-5, abs=1e-12)
    # brute force over a long window of Z: the tails' mass beyond it is negligible
    M = cd.support + 300 * cd.period
    assert cd.pmf_at(np.arange(-M, M + 1)).sum() == pytest.approx(1.0, abs=1e-12)
    brute = _window_hockey(cd, cd.design.shifts, eps, M)
    assert brute <= delta * (1 + 1e-9) + 1e-15
    if delta > 0:
        assert brute == pytest.approx(float(cd.certified_delta), rel=1e-6)


def test_pure_dp_on_z_is_the_discrete_laplace_for_d1():
    eps = 1.0
    cd = _solve(1, eps, 0.0).certify()
    assert cd.certified_delta == 0
    a = math.exp(-eps)
    assert cd.distortion == pytest.approx(2 * a / (1 - a) ** 2, rel=1e-6)
    # every ratio, tails included, within e^eps (brute force, far into the tails)
    x = np.arange(-cd.support - 200, cd.support + 201)
    h = cd.pmf_at(x)
    assert np.all(h > 0) and np.max(h[:-1] / h[1:]) <= math.exp(eps) * (1 + 1e-12)
    assert np.max(h[1:] / h[:-1]) <= math.exp(eps) * (1 + 1e-12)


@pytest.mark.parametrize("eps_check", [0.3, 0.6, 0.95])
def test_exact_tail_sums_equal_brute_force_far_into_the_tails(pure2, eps_check):
    """At a smaller eps the pure design leaks a positive delta, much of it from the tails: the exact geometric
    window sums must equal the float sum over a very long window."""
    cd = pure2
    args = (cd.weights.tolist(), cd.bits, cd.support, cd.period, cd.laplace, cd.mix)
    for shifts in ([1], [-2], [2, -1]):
        exact = exact_additive_delta(*args, shifts, eps_check, "dp")
        M = cd.support + 2000 * cd.period
        brute = _window_hockey(cd, shifts, eps_check, M)
        assert float(exact) == pytest.approx(brute, rel=1e-9)
        # the tails matter: cutting at the finite support misses part of it
        assert _window_hockey(cd, shifts, eps_check, cd.support) < brute * (1 - 1e-6)


def test_tail_factor_is_an_upper_bound_on_exp_minus_eps(pure2):
    A = pure2.tail_factor
    assert A >= Fraction(math.exp(-1.0)) * (1 - Fraction(1, 2**50))
    assert A * Fraction(math.exp(1.0)) >= 1 - Fraction(1, 2**50)
    assert A < 1


def _chi2(samples, cd):
    """Chi-square p-value of the samples against the certified PMF: one bin per value near 0, two tail bins."""
    edge = cd.support + 4 * cd.period
    far = 3000 * cd.period
    x = np.arange(-edge, edge + 1)
    p = np.concatenate(
        [
            [cd.pmf_at(np.arange(-edge - far, -edge)).sum()],
            cd.pmf_at(x),
            [cd.pmf_at(np.arange(edge + 1, edge + far)).sum()],
        ]
    )
    obs = np.concatenate(
        [
            [np.sum(samples < -edge)],
            np.bincount(samples[np.abs(samples) <= edge] + edge, minlength=x.size),
            [np.sum(samples > edge)],
        ]
    )
    keep = p * samples.size >= 5
    exp = p[keep] / p[keep].sum() * obs[keep].sum()
    return stats.chisquare(obs[keep], exp).pvalue


def test_sampler_matches_the_pmf_chi_square(pure2):
    s = pure2.sample(200_000, rng=np.random.default_rng(7))
    assert s.dtype == np.int64 and np.abs(s).max() > pure2.support  # tails are sampled
    assert _chi2(s, pure2) > 1e-3
    # a heavy mixture exercises the discrete-Laplace component (Y1 - Y2 of two exact geometrics)
    heavy = CertifiedAdditive(
        design=pure2.design,
        weights=pure2.weights,
        bits=pure2.bits,
        support=pure2.support,
        laplace=pure2.laplace,
        mix=1 << (MIX_BITS - 1),
        eps=pure2.eps,
        delta=pure2.delta,
        certified_delta=pure2.certified_delta,
    )
    s2 = heavy.sample(200_000, rng=np.random.default_rng(8))
    assert _chi2(s2, heavy) > 1e-3
    # a wrong distribution is detected: the test can fail
    assert _chi2(s2, pure2) < 1e-6


def test_sampler_is_reproducible_with_a_seed_and_uses_the_csprng_by_default(count):
    a = count.sample(50, rng=np.random.default_rng(3))
    b = count.sample(50, rng=np.random.default_rng(3))
    assert np.array_equal(a, b)
    assert isinstance(count.sample(), int)
    out = count.release(np.array([10**12, -5, 0]))
    assert out.shape == (3,) and abs(int(out[0]) - 10**12) < 1000
    with pytest.raises(ValueError, match="rng must be None"):
        count.sample(3, rng="x")
    with pytest.raises(ValueError, match="q must be integers"):
        count.release(1.5)


def test_save_load_round_trip_and_tampering(tmp_path, pure2):
    path = pure2.save(tmp_path / "d.json")
    back = load_design(path)
    assert isinstance(back, CertifiedAdditive)
    assert back.certified_delta == pure2.certified_delta and np.array_equal(back.weights, pure2.weights)
    assert back.laplace == pure2.laplace and back.mix == pure2.mix and back.support == pure2.support
    doc = json.loads(path.read_text())
    # move a unit of weight to the far end: digest recomputed, the exact re-check refuses it
    w = [int(t) for t in doc["weights"]]
    w[0] += w[pure2.support] // 2
    w[pure2.support] -= w[pure2.support] // 2
    doc["weights"] = [str(v) for v in w]
    from optnoise.deploy.files import file_digest

    doc["sha256"] = file_digest(doc)
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="'weights'.*do not meet their certificate"):
        load_design(tmp_path / "bad.json")
    doc2 = json.loads(path.read_text())
    doc2["additive"]["mix"] = "0"
    doc2["sha256"] = file_digest(doc2)
    (tmp_path / "bad2.json").write_text(json.dumps(doc2))
    with pytest.raises(ValueError, match="field .weights.: do not meet their certificate"):
        load_design(tmp_path / "bad2.json")


def test_modulo_files_still_load(tmp_path):
    cd = NoiseDesign(n=6, eps=0.8, neighborhood=Neighborhood.bd(1), privacy="dp").solve().certify()
    back = load_design(cd.save(tmp_path / "m.json"))
    assert type(back).__name__ == "CertifiedDesign" and back.certified_delta == cd.certified_delta


def test_certify_refusals():
    res = _solve(1, 1.0, 1e-3)
    with pytest.raises(CertificationError, match="delta"):
        res.certify(delta=1e-2)
    # a Renyi budget has no (eps, delta) pair to check exactly: refused by name
    # (support given: the refusal is the subject, not the support's growth, minutes for one order)
    nb = Neighborhood.bd(1)
    rdp = NoiseDesign(release="additive", neighborhood=nb, privacy="rdp", rdp=[(2.0, 0.5)], support=7).solve()
    with pytest.raises(CertificationError, match="privacy='rdp'.*not yet supported"):
        rdp.certify()


dp = pytest.importorskip("opendp.prelude")


def test_opendp_count_chain_releases_near_the_count(count):
    dp.enable_features("contrib")
    meas = count.to_opendp(rng=np.random.default_rng(11))
    chain = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance(), TO="i64") >> meas
    out = chain(list(range(5000)))
    assert isinstance(out, int) and abs(out - 5000) < 100  # P(|eta| >= 100) < 1e-15 for this noise
    eps, delta = chain.map(1)
    assert eps == 0.5 and Fraction(delta) >= count.certified_delta and delta <= 1e-6
    assert meas.map(0) == (0.0, 0.0)
    with pytest.raises(Exception, match="not covered by the certificate.*at most 1"):
        meas.map(2)
    # no clamp, no n: a huge count passes through unchanged up to the noise
    assert abs(meas(10**15) - 10**15) < 100


def test_opendp_bounded_sum_chain_and_pure_measure():
    dp.enable_features("contrib")
    cd = _solve(3, 1.0, 0.0).certify()
    meas = cd.to_opendp(rng=np.random.default_rng(2))
    assert "MaxDivergence" in str(meas.output_measure) and "Approximate" not in str(meas.output_measure)
    summ = dp.t.make_sum(dp.vector_domain(dp.atom_domain(bounds=(0, 3), T="i64")), dp.symmetric_distance())
    chain = summ >> meas
    assert chain.map(1) == pytest.approx(1.0)  # one record moves the sum by <= 3, covered by bd(3)
    assert abs(chain([3] * 1000) - 3000) < 200
    with pytest.raises(Exception, match="not covered"):
        chain.map(2)  # d_in 6 > 3


def test_directed_design_maps_both_orders_exactly():
    """A directed neighbourhood certifies its listed order; OpenDP's symmetric distance needs both, and the
    reverse order's exact delta (checked here by brute force over Z) is what the map states."""
    dp.enable_features("contrib")
    nb = Neighborhood.shifts([1, 3], directed=True)
    res = NoiseDesign(release="additive", neighborhood=nb, eps=1.0, delta=1e-2, metric="er").solve()
    cd = res.certify()
    assert cd.certified_delta <= Fraction(1, 100)
    M = cd.support + 300 * cd.period
    forward = _window_hockey(cd, [1, 3], 1.0, M)
    backward = _window_hockey(cd, [-1, -3], 1.0, M)
    assert float(cd.certified_delta) == pytest.approx(forward, rel=1e-6)
    assert float(cd.symmetric_delta()) == pytest.approx(max(forward, backward), rel=1e-6)
    meas = cd.to_opendp(rng=np.random.default_rng(4))
    eps, delta = meas.map(1)
    assert eps == 1.0 and Fraction(delta) >= cd.symmetric_delta()
    with pytest.raises(Exception, match="at most 1"):
        meas.map(2)  # distance 2 is not a shift of the neighbourhood


def test_pdp_certificate_is_the_leak_mass_on_z():
    res = NoiseDesign(
        release="additive", neighborhood=Neighborhood.bd(1), eps=1.0, delta=1e-2, privacy="pdp", support=6
    ).solve()
    cd = res.certify()
    assert cd.notion == "pdp" and cd.verify() and cd.certified_delta <= Fraction(1, 100)
    M = cd.support + 300
    x = np.arange(-M - 1, M + 2)
    h = cd.pmf_at(x)

    def leak(factor):  # mass of the outputs o with h(o) > factor h(o + mu), worst shift, brute force
        return max(float(h[1:-1][h[1:-1] > factor * h[1 + mu : h.size - 1 + mu]].sum()) for mu in (-1, 1))

    e = math.exp(1.0)
    assert leak(e * (1 + 1e-9)) <= float(cd.certified_delta) <= leak(e * (1 - 1e-9)) + 1e-15
    assert float(cd.certified_delta) == pytest.approx(res.achieved["pdp"], rel=1e-5)


def test_to_opendp_refuses_a_bad_type(count):
    with pytest.raises(ValueError, match="T must be 'i32' or 'i64'"):
        count.to_opendp(T="u8")


def test_certify_refuses_the_least_delta_objective():
    # its exact check would have read delta (unset: the minimised value) as the target
    res = NoiseDesign(
        release="additive", neighborhood=Neighborhood.bd(1), eps=1.0, objective="delta", max_distortion=2.0
    ).solve(solver="highs")
    with pytest.raises(CertificationError, match="objective='delta'"):
        res.certify()
