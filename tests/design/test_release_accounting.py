"""One accounting story for every design kind (issue #24, section 1).

Every result is accounted, plotted and exported from the mechanism it releases:
modulo noise from ``(f, f(.+mu))``, clamped noise and general mechanisms from the
rows of their matrix. Each value is checked against dp-accounting built here from the
released distributions themselves, never from optnoise's own accounting.
"""

from __future__ import annotations

import math
import warnings

import matplotlib
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from optnoise import MechanismDesign, Neighborhood, NoiseDesign
from optnoise.design.clamp import clamp_matrix
from optnoise.privacy.accounting import InfiniteLossWarning

matplotlib.use("Agg")

EPS_GRID = np.linspace(0.0, 6.0, 61)


def _pair_pld(p: np.ndarray, q: np.ndarray, *, both: bool):
    """dp-accounting's PLD of the ordered pair (p, q) (and its reverse when ``both``), from the two PMFs."""
    keep = (p > 0) | (q > 0)
    with np.errstate(divide="ignore"):
        lp, lq = np.log(p), np.log(q)
    upper = {int(i): float(lp[i]) for i in np.flatnonzero(keep)}
    lower = {int(i): float(lq[i]) for i in np.flatnonzero(keep)}
    return pld_lib.from_two_probability_mass_functions(
        lower, upper, value_discretization_interval=1e-4, symmetric=not both
    )


@pytest.fixture(scope="module")
def clamped():
    # pure DP: no infinite privacy loss, so the composed eps is finite and comparable
    return NoiseDesign(
        n=8, eps=0.5, delta=0.0, neighborhood=Neighborhood.bd(1), metric="mse", privacy="dp", release="clamp"
    ).solve(solver="highs")


def test_clamped_design_is_accounted_from_its_released_matrix(clamped):
    res = clamped
    assert res.status == "optimal"
    P = clamp_matrix(res.pmf, 8)
    rp = res.release_pairs()
    assert rp.P.shape == (len(res.design.pairs), 9)  # rows of the 9 x 9 released matrix, not the 17-value PMF
    ours = res.compose(10).epsilon(1e-6)
    # independent: dp-accounting per ordered answer pair, from the matrix rows. The boundary pairs (0, 1)
    # and (1, 0) dominate here, so the adaptive worst case equals the largest single pair up to the two
    # pessimistic discretisations (dp-accounting rounds every loss up to the grid, ours is exact on it)
    per_pair = max(
        _pair_pld(P[a], P[b], both=False).self_compose(10).get_epsilon_for_delta(1e-6) for a, b in res.design.pairs
    )
    assert abs(ours - per_pair) <= 10 * 1e-4
    assert ours <= 10 * 0.5 + 1e-9  # pure 0.5-DP composes to at most 5
    # one release at delta = 1e-3 is the clamp matrix's own hockey stick, not the noise PMF's
    assert res.compose(1).delta(0.5) <= 1e-12
    with pytest.raises(ValueError, match="shift"):
        res.pld(shift=3)  # answers differing by 3 are not neighbours of BD(1)


def test_clamped_design_with_delta_counts_its_infinite_loss_mass():
    res = NoiseDesign(
        n=8, eps=1, delta=1e-3, neighborhood=Neighborhood.bd(1), metric="mse", privacy="dp", release="clamp"
    ).solve(solver="highs")
    P = clamp_matrix(res.pmf, 8)
    with pytest.warns(InfiniteLossWarning):
        comp = res.compose(10)
    # dp-accounting from the matrix rows agrees: mass where a neighbouring row is 0 composes to delta > 1e-6
    dpa = max(
        _pair_pld(P[a], P[b], both=False).self_compose(10).get_epsilon_for_delta(1e-6) for a, b in res.design.pairs
    )
    assert comp.epsilon(1e-6) == dpa
    # one release: (1, 1e-3) as designed (the 1.0001 from dp-accounting)
    single = res.compose(1)
    assert single.delta(1.0) == pytest.approx(1e-3, rel=1e-6)


def test_general_mechanism_composes_plots_and_exports(tmp_path):
    res = MechanismDesign(n=10, eps=1.0, delta=0.0, loss="sq").solve(solver="highs")
    assert res.status == "optimal"
    P = res.matrix
    ours = res.compose(5).epsilon(1e-6)
    per_pair = max(
        _pair_pld(P[a], P[b], both=False).self_compose(5).get_epsilon_for_delta(1e-6) for a, b in res.design.pairs
    )
    assert abs(ours - per_pair) <= 5 * 1e-4
    fig = res.plot()
    fig.savefig(tmp_path / "m.png")
    assert (tmp_path / "m.png").stat().st_size > 1000
    cert = res.certify()
    assert cert.compose(5).epsilon(1e-6) == pytest.approx(ours, abs=1e-6)
    cert.plot()
    single = cert.pld().get_epsilon_for_delta(0.0)
    assert single == pytest.approx(1.0, abs=2e-4)


@pytest.mark.parametrize("directed", [True, False])
def test_every_single_shift_curve_lies_below_the_worst_case(directed):
    nb = Neighborhood.bd(3, directed=directed)
    res = NoiseDesign(n=8, eps=1.5, delta=0.1238, neighborhood=nb, metric="er", privacy="pdp-kadam").solve(
        solver="highs"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InfiniteLossWarning)
        worst = res.pld().self_compose(10)
        shifts = (1, 2, 3) if directed else (1, 2, 3, -1, -2, -3)
        for mu in shifts:
            one = res.pld(shift=mu).self_compose(10)
            assert np.all(
                np.asarray(one.get_delta_for_epsilon(list(EPS_GRID)))
                <= np.asarray(worst.get_delta_for_epsilon(list(EPS_GRID))) + 1e-12
            ), mu
            assert one.get_epsilon_for_delta(1e-6) <= worst.get_epsilon_for_delta(1e-6) + 1e-12
    if directed:
        # the reporter's numbers: the worst case composes to 26.27; a single shift was 45.00 (both orders)
        assert worst.get_epsilon_for_delta(1e-6) == pytest.approx(26.27, abs=0.01)
        with pytest.raises(ValueError, match="shift"):
            res.pld(shift=-1)  # a directed BD(3) does not protect the order -1


def test_directed_pair_pld_is_one_order_and_symmetric_both():
    f = np.array([0.5, 0.3, 0.15, 0.05])
    res_dir = NoiseDesign(n=3, eps=1.0, delta=0.5, neighborhood=Neighborhood.shifts([1], directed=True), privacy="dp")
    res_dir = res_dir.solve(solver="highs")
    g = np.roll(res_dir.pmf, -1)
    # the listed order only: H(f || f(.+1)), as dp-accounting's remove direction
    ref = _pair_pld(res_dir.pmf, g, both=False)
    ours = res_dir.pld(shift=1)
    for e in (0.0, 0.5, 1.0):
        assert ours.get_delta_for_epsilon(e) == pytest.approx(ref.get_delta_for_epsilon(e), abs=2e-4)
    assert f.sum() == pytest.approx(1.0)


def test_opendp_chains_after_opendp_transformations():
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    res = NoiseDesign(n=10, eps=1.0, delta=1e-2, neighborhood=Neighborhood.bd(1), metric="circular-mse", privacy="dp")
    cert = res.solve(solver="highs").certify()
    m = cert.to_opendp(rng=np.random.default_rng(3))
    count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())
    chain = count >> m
    out = chain([1, 2, 3, 4, 5])
    assert 0 <= out <= 10
    # a count of 25 records is clamped to n = 10 first (1-Lipschitz): the release is in range
    assert 0 <= chain(list(range(25))) <= 10
    eps, delta = chain.map(1)
    assert eps == cert.eps and delta >= float(cert.certified_delta) and delta - float(cert.certified_delta) < 1e-17
    bounded_sum = dp.t.make_clamp(dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance(), bounds=(0, 1))
    chain2 = bounded_sum >> dp.t.then_sum() >> m
    assert 0 <= chain2([0, 1, 1, 0, 1]) <= 10
    assert chain2.map(1) == (eps, delta)


def test_opendp_export_of_clamped_directed_and_mechanism_designs(clamped):
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())
    cert = clamped.certify()
    m = cert.to_opendp(rng=np.random.default_rng(1))
    assert m.map(1) == pytest.approx(0.5)  # pure: the certificate's eps under max_divergence
    assert 0 <= (count >> m)([1] * 30) <= 8
    with pytest.raises(Exception, match="not covered"):
        m.map(2)
    # a directed design: every map(1) used to raise; now both orders are stated, the reverse exactly
    d = NoiseDesign(n=8, eps=1.5, delta=0.1238, neighborhood=Neighborhood.bd(3, directed=True), privacy="pdp-kadam")
    dc = d.solve(solver="highs").certify()
    dm = dc.to_opendp()
    eps, delta = dm.map(1)
    f = dc.pmf_float
    reverse = max(float(np.maximum(np.roll(f, -mu) - math.exp(1.5) * f, 0).sum()) for mu in (1, 2, 3))
    assert eps == 1.5 and delta == pytest.approx(max(reverse, float(dc.certified_delta)), rel=1e-9)
    assert dm.map(3) == (eps, delta)
    mech = MechanismDesign(n=6, eps=1.0, delta=1e-3, loss="abs").solve(solver="highs").certify()
    mm = mech.to_opendp()
    assert mm.map(1)[0] == 1.0 and 0 <= (count >> mm)([1, 1]) <= 6
    with pytest.raises(ValueError, match="rng"):
        mech.to_opendp(rng="x")
