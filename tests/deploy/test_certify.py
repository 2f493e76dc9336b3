"""Certified designs: exact bounds, exact checks, repair, exact sampling, save/load and the CLI."""

import decimal
import hashlib
import itertools
import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy.stats import chisquare

from optnoise import DesignResult, Neighborhood, NoiseDesign, delta_dp, delta_pdp, delta_pdp_kadam
from optnoise.cli.main import main
from optnoise.deploy.certified import CertifiedDesign, load_design
from optnoise.deploy.certify import CertificationError
from optnoise.deploy.files import FORMAT_VERSION, file_digest
from optnoise.design import pipeline
from optnoise.privacy.exact import exact_delta, exp_bounds, round_to_total

BD3 = Neighborhood.bd(3, directed=True)


@pytest.fixture(scope="module")
def fig10():
    """The paper's Fig. 10 instance (pdp-kadam, n=8, BD mu_bar=3 directed, eps=1.5, ER) at delta=0.1238."""
    return NoiseDesign(n=8, eps=1.5, delta=0.1238, neighborhood=BD3, privacy="pdp-kadam").solve()


@pytest.fixture(scope="module")
def fig10_cert(fig10):
    return fig10.certify()


# ---------------------------------------------------------------- bounds on e^eps


@pytest.mark.parametrize("x", [0.0, 1e-300, 2.0**-40, 0.1, 0.5, 1.0, 1.5, math.log(2), 3.0, 10.0, 64.0, 700.0, 1234.5])
def test_exp_bounds_bracket_correctly_rounded_decimal_exp(x):
    lo, hi = exp_bounds(x)
    assert lo <= hi
    # Decimal.exp is correctly rounded (General Decimal Arithmetic spec): the true value
    # lies within one unit in the last of 80 digits of it.
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        ref = decimal.Decimal(x).exp()
        ulp = decimal.Decimal(1).scaleb(ref.adjusted() - 79)
        ref_lo, ref_hi = Fraction(ref - ulp), Fraction(ref + ulp)
    assert lo <= ref_hi and hi >= ref_lo  # overlapping intervals
    assert hi - lo <= hi * Fraction(1, 2**120)  # tight: ~2^-128 relative
    # and a second independent library
    mpmath.mp.prec = 300
    m = mpmath.exp(mpmath.mpf(x))
    assert mpmath.mpf(lo.numerator) / lo.denominator <= m <= mpmath.mpf(hi.numerator) / hi.denominator


def test_exp_bounds_zero_is_exact_and_bad_input():
    assert exp_bounds(0.0) == (1, 1)
    for bad in (-1.0, float("nan"), float("inf"), 1e6):
        with pytest.raises(ValueError, match="x"):
            exp_bounds(bad)


# ---------------------------------------------------------------- exact rounding


def test_round_to_total_matches_fraction_largest_remainder(rng):
    for _ in range(30):
        p = rng.dirichlet(np.ones(int(rng.integers(2, 12))))
        p[rng.random(p.size) < 0.2] = 0.0
        if p.sum() == 0:
            continue
        total = int(rng.integers(1, 2**62))
        w = round_to_total(p, total)
        assert sum(int(v) for v in w) == total
        # independent: Fractions, floor, then the largest remainders
        T = sum(Fraction(float(v)) for v in p)
        exact = [Fraction(float(v)) * total / T for v in p]
        base = [math.floor(e) for e in exact]
        order = sorted(range(p.size), key=lambda i: (-(exact[i] - base[i]), i))
        for i in order[: total - sum(base)]:
            base[i] += 1
        assert [int(v) for v in w] == base
        assert all(int(w[i]) == 0 for i in np.flatnonzero(p == 0))  # zeros stay zeros


# ---------------------------------------------------------------- the exact check


def brute_delta(w, shifts, n, notion, L, U):
    """Definitions 1-2 and the MILP (13) by direct enumeration in Fractions (scalar designs)."""
    D = sum(w)
    f = [Fraction(v, D) for v in w]
    nxt = lambda eta, mu: (eta + mu) % (n + 1)  # noqa: E731
    if notion == "dp":
        return max(sum(max(f[e] - L * f[nxt(e, mu)], 0) for e in range(n + 1)) for mu in shifts)
    leaks = {mu: [not (f[e] <= L * f[nxt(e, mu)]) for e in range(n + 1)] for mu in shifts}
    if notion == "pdp":
        return max(sum(f[e] for e in range(n + 1) if leaks[mu][e]) for mu in shifts)
    total = Fraction(0)
    for e in range(n + 1):
        if any(leaks[mu][e] for mu in shifts):
            if not all(f[e] >= U * f[nxt(e, mu)] for mu in shifts):
                return math.inf
            total += f[e]
    return total


@pytest.mark.parametrize("notion", ["dp", "pdp", "pdp-kadam"])
def test_exact_delta_equals_brute_force(notion, rng):
    bounds = exp_bounds(1.0)
    for _ in range(40):
        n = int(rng.integers(1, 7))
        k = int(rng.integers(1, n + 1))
        shifts = sorted(rng.choice(np.arange(1, n + 1), size=k, replace=False).tolist())
        w = [int(v) for v in rng.integers(0, 50, size=n + 1)]
        if sum(w) == 0:
            continue
        d = NoiseDesign(n=n, eps=1.0, neighborhood=Neighborhood.shifts(shifts, directed=True))
        got = exact_delta(w, d.shift_index(), notion, bounds)
        assert got == brute_delta(w, shifts, n, notion, *bounds)


@pytest.mark.parametrize("notion,func", [("dp", delta_dp), ("pdp", delta_pdp), ("pdp-kadam", delta_pdp_kadam)])
def test_exact_delta_agrees_with_float_accounting(notion, func, rng):
    for _ in range(20):
        n = int(rng.integers(2, 9))
        shifts = [1, 2] if n > 2 else [1]
        p = rng.dirichlet(np.ones(n + 1))
        bits = 62
        w = round_to_total(p, 2**bits)
        pf = np.array([int(v) for v in w], dtype=float) / 2**bits
        d = NoiseDesign(n=n, eps=0.7, neighborhood=Neighborhood.shifts(shifts))
        got = exact_delta(w, d.shift_index(), notion, exp_bounds(0.7))
        ref = func(pf, d.shifts, 0.7)
        assert float(got) == pytest.approx(ref, abs=1e-12)


def test_exact_check_is_conservative_between_the_bounds():
    # Artificial bounds L < 3/2 < U: the pair ratio f(0)/f(1) = 3/2 lies between them, so
    # the check cannot tell which side e^eps is on and must assume the worse one.
    L, U = Fraction(14, 10), Fraction(16, 10)
    d = NoiseDesign(n=1, eps=1.0, neighborhood=Neighborhood.shifts([1], directed=True))
    w = [3, 2]
    idx = d.shift_index()
    assert exact_delta(w, idx, "dp", (L, U)) == Fraction(3, 5) - L * Fraction(2, 5)  # excess w.r.t. L
    assert exact_delta(w, idx, "pdp", (L, U)) == Fraction(3, 5)  # counted as leaking
    assert exact_delta(w, idx, "pdp-kadam", (L, U)) == math.inf  # (13g) not provable with U
    # with the ratio clearly on one side the verdicts are exact
    assert exact_delta([3, 2], idx, "pdp", (Fraction(16, 10), Fraction(17, 10))) == 0
    assert exact_delta([4, 2], idx, "pdp-kadam", (Fraction(16, 10), Fraction(17, 10))) == Fraction(2, 3)


def test_leak_through_zero_mass_counts():
    d = NoiseDesign(n=2, eps=1.0, neighborhood=Neighborhood.shifts([1], directed=True))
    w = [5, 0, 3]  # f(0) > 0 = f(1): infinite privacy loss at eta = 0 for mu = 1
    b = exp_bounds(50.0)  # even a huge e^eps cannot cover it
    assert exact_delta(w, d.shift_index(), "pdp", b) == Fraction(5, 8)
    assert exact_delta(w, d.shift_index(), "dp", b) == Fraction(5, 8)


# ---------------------------------------------------------------- certification


def test_fig10_certified_at_the_papers_deltas():
    for delta in (0.1212, 0.1238, 0.1522):
        res = NoiseDesign(n=8, eps=1.5, delta=delta, neighborhood=BD3, privacy="pdp-kadam").solve()
        cd = res.certify()
        assert cd.certified_delta <= Fraction(delta)
        assert cd.verify()
        # ER has several optimal PMFs here (a margin re-solve may return another); the value is unique
        assert float(cd.distortion) == pytest.approx(res.distortion, abs=1e-6)
        # independent float re-check of the certified PMF
        assert delta_pdp_kadam(cd.pmf_float, cd.design.shifts, 1.5, tol=1e-12) <= delta + 1e-12
        assert abs(cd.repair["loss"]) <= 1e-6


def test_eq57_vector_example_certified():
    # Kadam et al. (57): n=4, eps=3, delta=0, shifts {0,1,2}^2 \ (0,0) directed, error rate
    shifts = [(a, b) for a in range(3) for b in range(3) if (a, b) != (0, 0)]
    res = NoiseDesign(n=4, eps=3.0, neighborhood=Neighborhood.shifts(shifts, directed=True)).solve()
    cd = res.certify()
    assert cd.certified_delta == 0 and cd.verify()
    a, b, c = 0.0346, 0.0017, 0.6954
    eq57 = np.array([[c, a, a, b, b], [a, a, a, b, b], [a, a, a, b, b], [b] * 5, [b] * 5])
    np.testing.assert_allclose(cd.pmf_float, eq57, atol=5e-5)
    # pure eps-DP checked independently: every ratio f(eta)/f(eta+mu) <= e^3
    f = cd.pmf
    L = exp_bounds(3.0)[0]
    for e1, e2 in itertools.product(range(5), repeat=2):
        for mu in shifts:
            assert f[e1, e2] <= L * f[(e1 + mu[0]) % 5, (e2 + mu[1]) % 5]


def test_certificate_holds_for_every_notion_and_direction():
    for notion, directed, delta in itertools.product(("dp", "pdp", "pdp-kadam"), (False, True), (0.0, 0.05)):
        res = NoiseDesign(
            n=6, eps=0.8, delta=delta, neighborhood=Neighborhood.bd(2, directed=directed), metric="mse", privacy=notion
        ).solve()
        cd = res.certify()
        assert cd.notion == notion and cd.certified_delta <= Fraction(delta)
        shifts = cd.design.shifts
        assert len(shifts) == (2 if directed else 4)
        func = {"dp": delta_dp, "pdp": delta_pdp, "pdp-kadam": delta_pdp_kadam}[notion]
        kw = {} if notion == "dp" else {"tol": 1e-12}
        assert func(cd.pmf_float, shifts, 0.8, **kw) <= delta + 1e-12


def test_mixing_repair_is_the_documented_mixture():
    # The pure-DP LP optimum has tight ratio rows f(eta) = e^eps f(eta+mu); rounding breaks
    # about half of them, and mixing uniform noise repairs them.
    res = NoiseDesign(n=8, eps=1.0, neighborhood=Neighborhood.bd(1), metric="mse", privacy="dp").solve()
    cd = res.certify()
    r = cd.repair
    assert r["method"] == "mix-uniform" and r["mix_units"] > 0
    c, N, D = r["mix_units"], 9, 2**62
    expected = [int(v) + c for v in round_to_total(np.clip(res.pmf, 0, None), D - c * N)]
    assert cd.weights.tolist() == expected
    assert r["mix_weight"] == pytest.approx(c * N / D)
    # distortion of the mixture is (1-lam) d + lam * mean cost, up to the rounding
    lam = c * N / D
    mixed = (1 - lam) * res.distortion + lam * cd.design.cost.mean()
    assert r["distortion_certified"] == pytest.approx(mixed, abs=1e-15)
    assert float(cd.distortion) == pytest.approx(r["distortion_certified"], rel=1e-15)


def test_never_quietly_weakens_the_target():
    res = NoiseDesign(n=8, eps=1.0, delta=0.2, neighborhood=BD3, privacy="pdp").solve()
    # a stricter target than the design solved for costs distortion: refused under a small loss budget
    with pytest.raises(CertificationError, match=r"cannot certify the requested \(eps=1, delta=0\)"):
        res.certify(delta=0.0, max_loss=1e-6)
    # with an explicit loss budget the stricter target is met, and the loss is reported
    cd = res.certify(delta=0.0, max_loss=math.inf)
    assert cd.certified_delta == 0 and cd.repair["loss"] > 1e-3
    # a looser target is only ever taken when asked for
    assert res.certify().delta == 0.2


def test_minimise_delta_design_certified_near_the_minimum():
    res = NoiseDesign(
        n=6, eps=1.0, neighborhood=Neighborhood.bd(2), privacy="pdp", objective="delta", max_distortion=0.4
    ).solve()
    cd = res.certify()
    assert float(cd.certified_delta) <= res.delta_objective + 1e-6
    assert float(cd.certified_delta) >= res.delta_objective - 1e-6  # it is the minimum
    with pytest.raises(CertificationError, match="cannot certify"):
        res.certify(delta=res.delta_objective - 0.1)  # stricter than the minimum: refused
    assert res.certify(delta=0.9).delta == 0.9


def test_refuses_non_optimal_results():
    cost = np.ones(7)
    bad = NoiseDesign(
        n=6, eps=1.0, neighborhood=Neighborhood.bd(2), metric=cost, privacy="pdp", objective="delta", max_distortion=0.5
    ).solve()
    assert bad.status == "infeasible"
    with pytest.raises(CertificationError, match="status 'infeasible'"):
        bad.certify()
    good = NoiseDesign(n=6, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(2), privacy="pdp").solve()
    incumbent = DesignResult(
        design=good.design,
        status="time_limit",
        pmf=good.pmf,
        solver="highs",
        solve_time=1.0,
        model_size=good.model_size,
        gap=0.5,
    )
    with pytest.raises(CertificationError, match="allow_suboptimal"):
        incumbent.certify()
    cd = incumbent.certify(allow_suboptimal=True)
    assert cd.solver["status"] == "time_limit" and cd.verify()
    no_pmf = DesignResult(
        design=good.design, status="time_limit", pmf=None, solver="highs", solve_time=1.0, model_size={}
    )
    with pytest.raises(CertificationError, match="has no PMF"):
        no_pmf.certify(allow_suboptimal=True)


def test_large_kadam_design_with_tolerance_tail_is_repaired():
    # n=256: HiGHS' PMF ends in masses ~1e-10 that leak only within its 1e-9 tolerance, which (13g)
    # cannot accept: as returned it is not a pdp-kadam PMF at any delta. The solve therefore repairs it
    # (margin re-solve with the leak pattern fixed, then uniform mixing) before calling it optimal.
    res = NoiseDesign(n=256, eps=1.5, delta=0.1, neighborhood=BD3, privacy="pdp-kadam").solve()
    assert res.status == "optimal" and res.verify()
    assert "exact repair (margin-resolve" in res.message
    assert 0 <= res.gap <= 1e-6  # the repair's distortion change is reported as the gap
    # an independent float check at the design's eps (PDP ratio slack only)
    assert delta_pdp_kadam(res.pmf, res.design.shifts, 1.5, rtol=math.expm1(1.5e-6 + 1e-12)) <= 0.1
    # the unrepaired solver PMF really fails: (13g) breaks in its tail
    d = res.design
    raw, _ = pipeline.settle_noise(d, d.build_model(), "highs", None, 1e-9, False, None, True, repair=False)
    assert raw.status == "unverified" and raw.achieved["pdp-kadam"] == math.inf
    cd = raw.certify(allow_unverified=True)
    assert cd.verify() and cd.certified_delta <= Fraction(1, 10)
    assert cd.repair["method"].startswith("margin-resolve")
    assert 0 <= cd.repair["loss"] <= 1e-6
    with pytest.raises(CertificationError, match="status 'unverified'"):
        raw.certify()


@pytest.mark.parametrize("delta", [1e-9, 1e-12])
def test_certify_works_at_tiny_delta(delta):
    # issue 13: at delta <= 1e-9 the margin loop used to stop at once ("0 margin re-solves")
    d = NoiseDesign(
        n=500, eps=0.1, delta=delta, neighborhood=Neighborhood.shifts([1, 2]), privacy="dp", metric="circular-mae"
    )
    res = d.solve()
    assert res.status == "optimal" and res.verify()
    cd = res.certify()
    assert cd.verify() and cd.certified_delta <= Fraction(delta)
    assert cd.repair["loss"] <= 1e-6 * max(1.0, res.distortion)
    # independent check: the exact hockey stick of the certified weights, by brute force over Fractions
    w = [int(v) for v in cd.weights]
    D = sum(w)
    lo, _ = exp_bounds(0.1)
    for mu in d.shifts.ravel():
        excess = sum(max(Fraction(w[e], D) - lo * Fraction(w[(e + mu) % 501], D), Fraction(0)) for e in range(501))
        assert excess <= Fraction(delta)


def test_certify_falls_back_to_the_pure_design():
    # a pdp design at delta 1e-12: the pure eps-DP design meets the target and costs ~nothing
    res = NoiseDesign(n=12, eps=0.7, delta=1e-12, neighborhood=Neighborhood.bd(2), privacy="pdp-kadam").solve()
    assert res.status == "optimal"
    cd = res.certify(margins=(1e-3,))  # a margin as large as this is useless at 1e-12: the fallback decides
    assert cd.verify() and cd.certified_delta <= Fraction(1, 10**12)
    assert cd.repair["method"].startswith(("pure-fallback", "none", "mix-uniform", "margin-resolve"))


def test_margins_must_be_a_sequence(fig10):
    for bad in (None, (), "1e-9", 1e-9):
        with pytest.raises(ValueError, match="margins"):
            fig10.certify(margins=bad)


# ---------------------------------------------------------------- exact sampling


def test_table_distribution_equals_certified_pmf_by_enumeration():
    # 16-bit denominator: enumerate every possible uniform draw through the lookup
    res = NoiseDesign(n=5, eps=1.0, neighborhood=Neighborhood.bd(2), privacy="dp").solve()
    cd = res.certify(bits=16, max_loss=math.inf)
    counts = np.bincount(cd._lookup(np.arange(2**16, dtype=np.int64)), minlength=6)
    assert counts.tolist() == cd.weights.tolist()


def test_table_lookup_preimages_are_the_weight_intervals(fig10_cert, rng):
    cd = fig10_cert
    w = cd.weights.ravel().tolist()
    assert sum(w) == 2**62
    starts = np.concatenate([[0], np.cumsum(w)[:-1]])
    for i, (s, wi) in enumerate(zip(starts, w, strict=True)):
        if wi == 0:
            continue
        # a monotone lookup that maps both ends of [start, start + w) to i maps the whole interval to i
        got = cd._lookup(np.array([s, s + wi - 1], dtype=np.int64))
        assert got.tolist() == [i, i]
    u = np.sort(rng.integers(0, 2**62, size=200_000, dtype=np.int64))
    idx = cd._lookup(u.copy())
    assert np.all(np.diff(idx) >= 0)
    np.testing.assert_array_equal(idx, np.searchsorted(np.cumsum(w), u, side="right"))
    # near every boundary
    edges = np.concatenate([starts - 1, starts, starts + 1])
    edges = edges[(edges >= 0) & (edges < 2**62)].astype(np.int64)
    np.testing.assert_array_equal(cd._lookup(edges.copy()), np.searchsorted(np.cumsum(w), edges, side="right"))


def test_chi_square_one_million_seeded_draws(fig10_cert):
    cd = fig10_cert
    x = cd.sample(10**6, rng=np.random.default_rng(2024))
    obs = np.bincount(x, minlength=9)
    exp = cd.pmf_float * 10**6
    assert chisquare(obs, exp).pvalue > 1e-3
    # the test has power: the same draws against the solver's uncertified neighbour of this PMF fail
    other = NoiseDesign(n=8, eps=1.5, delta=0.1522, neighborhood=BD3, privacy="pdp-kadam").solve().pmf
    assert chisquare(obs, other * 10**6).pvalue < 1e-6


def test_chi_square_secure_mode(fig10_cert):
    x = fig10_cert.sample(200_000)  # OS CSPRNG: not reproducible, threshold 1e-6
    obs = np.bincount(x, minlength=9)
    assert chisquare(obs, fig10_cert.pmf_float * 200_000).pvalue > 1e-6


def test_vector_sampling_and_release():
    res = NoiseDesign(n=3, eps=1.0, neighborhood=Neighborhood.shifts([(1, 0), (0, 1)]), privacy="dp").solve()
    cd = res.certify()
    x = cd.sample(200_000, rng=np.random.default_rng(1))
    assert x.shape == (200_000, 2) and x.min() >= 0 and x.max() <= 3
    obs = np.zeros((4, 4))
    np.add.at(obs, (x[:, 0], x[:, 1]), 1)
    assert chisquare(obs.ravel(), cd.pmf_float.ravel() * 200_000).pvalue > 1e-3
    q = np.array([[0, 3], [2, 2], [3, 0]])
    a = cd.release(q, rng=np.random.default_rng(5))
    noise = cd.sample(3, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a, (q + noise) % 4)
    assert cd.release([1, 2]).shape == (2,)
    with pytest.raises(ValueError, match="last axis of length d = 2"):
        cd.release([1, 2, 3])


def test_release_scalar_arrays_and_modulo(fig10_cert):
    cd = fig10_cert
    v = cd.release(5)
    assert isinstance(v, int) and 0 <= v <= 8
    q = np.arange(9).repeat(1000).reshape(9, 1000)
    out = cd.release(q, rng=np.random.default_rng(3))
    noise = cd.sample((9, 1000), rng=np.random.default_rng(3))
    assert out.shape == q.shape
    np.testing.assert_array_equal(out, (q + noise) % 9)
    for bad in (9, -1, 2.5, float("nan"), "3", []):
        with pytest.raises(ValueError, match="q must be"):
            cd.release(bad)
    with pytest.raises(ValueError, match="rng must be None"):
        cd.release(3, rng=42)


# ---------------------------------------------------------------- save / load


def test_save_load_round_trip(fig10_cert, tmp_path):
    path = fig10_cert.save(tmp_path / "d.json")
    back = load_design(path)
    assert back.weights.tolist() == fig10_cert.weights.tolist()
    assert back.certified_delta == fig10_cert.certified_delta
    assert back.design.spec() == fig10_cert.design.spec()
    assert (back.eps, back.delta, back.bits) == (fig10_cert.eps, fig10_cert.delta, fig10_cert.bits)
    data = json.loads(path.read_text())
    assert data["format_version"] == FORMAT_VERSION
    assert data["optnoise_version"] and data["solver"]["status"] == "optimal"
    assert Fraction(data["certificate"]["certified_delta"]) == fig10_cert.certified_delta
    assert all(isinstance(w, str) for w in data["weights"])
    # same draws from the same seed
    a = fig10_cert.sample(1000, rng=np.random.default_rng(0))
    b = back.sample(1000, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(a, b)


def _write(tmp_path, doc, name, *, resign=True):
    """Write a design document; ``resign`` recomputes its digest (a consistent edit)."""
    doc = json.loads(json.dumps(doc))
    if resign:
        doc["sha256"] = file_digest(doc)
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


def test_digest_covers_the_canonical_whole_file(fig10_cert, tmp_path):
    data = fig10_cert.to_dict()
    # independent recomputation: sha256 of the sorted, compact, ASCII JSON of every other field
    body = {k: v for k, v in data.items() if k != "sha256"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    assert data["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    # indentation does not matter, the content does: every field is covered
    p = tmp_path / "indented.json"
    p.write_text(json.dumps(data, indent=7))
    assert load_design(p).certified_delta == fig10_cert.certified_delta
    edits = {
        "problem": dict(data["problem"], metric="mse"),
        "certificate": dict(data["certificate"], delta=0.9),
        "repair": dict(data["repair"], loss=0.0),
        "solver": dict(data["solver"], name="gurobi"),
        "optnoise_version": "9.9.9",
        "shape": [10],
        "denominator_bits": 61,
    }
    for field, value in edits.items():
        with pytest.raises(ValueError, match="'sha256'"):
            load_design(_write(tmp_path, dict(data, **{field: value}), f"{field}.json", resign=False))


def test_load_refuses_tampered_and_unknown_version_files(fig10_cert, tmp_path):
    data = fig10_cert.to_dict()
    # move mass from f(0) to the leaking f(1): sums still match, digest does not
    w = [int(v) for v in data["weights"]]
    w[0] -= 2**55
    w[1] += 2**55
    t = dict(data, weights=[str(v) for v in w])
    with pytest.raises(ValueError, match="'sha256'"):
        load_design(_write(tmp_path, t, "digest.json", resign=False))
    # an editor who also fixes the digest is caught by the exact re-check of the certificate
    with pytest.raises(ValueError, match="'certificate.certified_delta'|'weights'"):
        load_design(_write(tmp_path, t, "cert.json"))
    # a certificate claiming a smaller delta than the weights give
    c = dict(data, certificate=dict(data["certificate"], certified_delta="1/1000"))
    with pytest.raises(ValueError, match="'certificate.certified_delta'"):
        load_design(_write(tmp_path, c, "claim.json"))
    for version, word in ((FORMAT_VERSION + 1, "newer than this optnoise supports"), (0, "unknown"), (-7, "unknown")):
        with pytest.raises(ValueError, match=f"'format_version'.*{word}"):
            load_design(_write(tmp_path, dict(data, format_version=version), f"v{version}.json"))
    with pytest.raises(ValueError, match="'format_version'.*re-certify"):
        load_design(_write(tmp_path, dict(data, format_version=1), "v1.json"))
    with pytest.raises(ValueError, match="not valid JSON"):
        p = tmp_path / "trunc.json"
        p.write_text(json.dumps(data)[:200])
        load_design(p)


def test_consistent_edits_are_refused_naming_the_field(fig10_cert, tmp_path):
    # issue 13, section 7: edits that kept the old weights-only digest valid
    data = fig10_cert.to_dict()
    # shrink the neighbourhood to {1}: the digest now covers the problem
    small = dict(data, problem=dict(data["problem"], neighborhood=dict(data["problem"]["neighborhood"], shifts=[[1]])))
    small["problem"]["shifts"] = [1]
    with pytest.raises(ValueError, match="'sha256'"):
        load_design(_write(tmp_path, small, "shrunk.json", resign=False))
    # a certificate delta differing from the problem's delta
    loose = dict(data, certificate=dict(data["certificate"], delta=0.9))
    with pytest.raises(ValueError, match="'certificate.delta'"):
        load_design(_write(tmp_path, loose, "delta.json"))
    # a weight change (still summing to 2^bits): the digest covers the weights
    w = [int(v) for v in data["weights"]]
    w[0] -= 1
    w[4] += 1
    with pytest.raises(ValueError, match="'sha256'"):
        load_design(_write(tmp_path, dict(data, weights=[str(v) for v in w]), "weights.json", resign=False))
    # exp bounds, notion and eps of the certificate are recomputed too
    for key, value in (("exp_eps_lower", "1/1"), ("notion", "dp"), ("certified_delta_float", 0.0), ("eps", 1.4)):
        doc = dict(data, certificate=dict(data["certificate"], **{key: value}))
        with pytest.raises(ValueError, match=f"'certificate.{key}'"):
            load_design(_write(tmp_path, doc, f"{key}.json"))
    # unknown and missing fields, malformed metadata
    with pytest.raises(ValueError, match="'extra'"):
        load_design(_write(tmp_path, dict(data, extra=1), "extra.json"))
    with pytest.raises(ValueError, match="'repair'"):
        load_design(_write(tmp_path, {k: v for k, v in data.items() if k != "repair"}, "norepair.json"))
    with pytest.raises(ValueError, match="'solver'"):
        load_design(_write(tmp_path, dict(data, solver=[1]), "solver.json"))
    with pytest.raises(ValueError, match="'shape'"):
        load_design(_write(tmp_path, dict(data, shape=[10]), "shape.json"))
    with pytest.raises(ValueError, match="'denominator_bits'"):
        load_design(_write(tmp_path, dict(data, denominator_bits=8), "bits.json"))
    with pytest.raises(ValueError, match="'problem'"):
        load_design(_write(tmp_path, dict(data, problem=dict(data["problem"], eps=float("nan"))), "nan.json"))
    # A fully consistent edit (digest recomputed, certificate still a true exact check of the stated
    # problem) loads, and states exactly that problem: the digest is not a signature (README). No edit can
    # make the weights leak more than the file's certificate says for the file's own problem.
    back = load_design(_write(tmp_path, small, "shrunk-resigned.json"))
    assert back.design.shifts.ravel().tolist() == [1]
    assert back.check() == back.certified_delta <= Fraction(back.delta)


def test_save_refuses_bad_paths_and_leaves_no_temporary_file(fig10_cert, tmp_path):
    with pytest.raises(ValueError, match="directory"):
        fig10_cert.save(tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        fig10_cert.save(tmp_path / "missing" / "d.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    fig10_cert.save(tmp_path / "d.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.json"]


def test_load_design_refuses_non_paths_and_deep_json(tmp_path):
    for bad in (None, 3, ""):
        with pytest.raises(ValueError, match="path"):
            load_design(bad)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(ValueError, match="nested too deeply"):
        load_design(deep)


def test_cli_solve_certify_release(tmp_path, capsys):
    res, des = tmp_path / "res.json", tmp_path / "design.json"
    assert (
        main(
            [
                "solve",
                "--n",
                "8",
                "--eps",
                "1.5",
                "--delta",
                "0.1238",
                "--neighborhood",
                "bd:3",
                "--directed",
                "--privacy",
                "pdp-kadam",
                "--format",
                "json",
                "--out",
                str(res),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["certify", "--result", str(res), "--out", str(des)]) == 0
    out = capsys.readouterr().out
    assert "certified" in out and "0.1238" in out
    cd = load_design(des)
    assert cd.notion == "pdp-kadam" and cd.design.shifts.ravel().tolist() == [1, 2, 3]
    assert main(["release", "--design", str(des), "--value", "3", "--count", "4", "--seed", "7"]) == 0
    lines = capsys.readouterr().out.split()
    expected = cd.release(np.full((4, 1), 3), rng=np.random.default_rng(7)).ravel().tolist()
    assert [int(v) for v in lines] == expected
    assert main(["release", "--design", str(des), "--value", "1,8", "--format", "json"]) == 0
    rel = json.loads(capsys.readouterr().out)["released"]
    assert len(rel) == 1 and len(rel[0]) == 2 and all(0 <= v <= 8 for v in rel[0])


def test_cli_certify_from_problem_flags_vector(tmp_path, capsys):
    des = tmp_path / "v.json"
    assert (
        main(
            [
                "certify",
                "--n",
                "3",
                "--eps",
                "1",
                "--neighborhood",
                "shifts:1/0,0/1",
                "--dim",
                "2",
                "--privacy",
                "dp",
                "--out",
                str(des),
                "--format",
                "json",
            ]
        )
        == 0
    )
    d = json.loads(capsys.readouterr().out)
    assert d["shape"] == [4, 4]
    assert main(["release", "--design", str(des), "--value", "1/2,3/0", "--count", "2", "--seed", "1"]) == 0
    rows = capsys.readouterr().out.split()
    assert len(rows) == 2 and all(len(r.split(",")) == 2 for r in rows)


def test_cli_exit_codes(tmp_path, capsys):
    # a certificate that cannot be met within --max-loss 0: exit 1, one line
    # (16-bit weights: rounding breaks tight rows by ~1e-5, so any repair costs far more than 1e-9)
    rc = main(
        [
            "certify",
            "--n",
            "8",
            "--eps",
            "1",
            "--neighborhood",
            "bd:1",
            "--metric",
            "mse",
            "--privacy",
            "dp",
            "--bits",
            "16",
            "--max-loss",
            "1e-9",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 1 and "cannot certify" in err and len(err.strip().splitlines()) == 1
    # an infeasible problem: exit 3 (not optimal)
    cost = tmp_path / "cost.json"
    cost.write_text(json.dumps([1.0] * 7))
    rc = main(
        [
            "certify",
            "--n",
            "6",
            "--eps",
            "1",
            "--neighborhood",
            "bd:2",
            "--cost",
            str(cost),
            "--minimize",
            "delta",
            "--max-distortion",
            "0.5",
        ]
    )
    assert rc == 3 and "infeasible" in capsys.readouterr().err


def test_certified_design_validates_weights(fig10_cert):
    with pytest.raises(ValueError, match="sum to 2\\*\\*bits"):
        CertifiedDesign(
            design=fig10_cert.design,
            weights=np.ones(9, dtype=np.int64),
            bits=62,
            eps=1.5,
            delta=0.1238,
            certified_delta=Fraction(0),
        )


def test_release_signature_follows_the_issue_contract():
    # CertifiedDesign.release(q, rng=None): rng may be passed positionally.
    from optnoise import Neighborhood, NoiseDesign

    cert = NoiseDesign(n=4, eps=1.0, neighborhood=Neighborhood.bd(1)).solve().certify()
    a = cert.release([0, 1, 2], np.random.default_rng(3))
    b = cert.release([0, 1, 2], rng=np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)


def test_cli_certify_at_delta_1e_9(capsys):
    # issue 13, the reported command: "0 margin re-solves", exit 1
    argv = ["certify", "--n", "500", "--eps", "0.1", "--delta", "1e-9", "--neighborhood", "shifts:1,2"]
    argv += ["--privacy", "dp", "--metric", "circular-mae", "--format", "json"]
    assert main(argv) == 0
    d = json.loads(capsys.readouterr().out)
    assert Fraction(d["certificate"]["certified_delta"]) <= Fraction(1e-9)
    assert d["repair"]["loss"] <= 1e-6 * max(1.0, d["repair"]["distortion_solver"])
