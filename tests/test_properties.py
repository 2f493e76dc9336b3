"""Property-based tests (hypothesis) and a table of bad inputs at every public entry point.

Profiles: the CI profile runs a few hundred examples on small problems (n <= 8 scalar,
n <= 3 for d = 2); ``HYPOTHESIS_PROFILE=long`` (registered in conftest.py) runs many more.
"""

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optnoise import (
    METRICS,
    NOTIONS,
    Neighborhood,
    NoiseDesign,
    delta_dp,
    delta_pdp,
    delta_pdp_kadam,
    eps_for_delta,
    hockey_stick,
)
from optnoise.certify import FORMAT_VERSION, certify_result, exact_delta, exp_bounds, load_design
from optnoise.cli import main

# At least a few hundred examples in CI; the long profile (3000) when selected.
N_EXAMPLES = max(300, settings().max_examples)
PROPS = settings(
    max_examples=N_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)


@st.composite
def instances(draw, *, positive_delta=False):
    """(n, shifts, directed, eps, delta, metric): scalar n <= 8 or 2-D n <= 3, shifts distinct mod n+1."""
    dim = draw(st.sampled_from([1, 1, 1, 2]))
    if dim == 1:
        n = draw(st.integers(1, 8))
        res = draw(st.lists(st.integers(1, n), min_size=1, max_size=min(3, n), unique=True))
        # each residue written as +s or as its negative representative s - (n+1)
        shifts = [s if draw(st.booleans()) else s - (n + 1) for s in res]
    else:
        n = draw(st.integers(1, 3))
        pool = [(a, b) for a in range(-n, n + 1) for b in range(-n, n + 1) if (a % (n + 1), b % (n + 1)) != (0, 0)]
        shifts = draw(
            st.lists(
                st.sampled_from(pool), min_size=1, max_size=3, unique_by=lambda s: (s[0] % (n + 1), s[1] % (n + 1))
            )
        )
    directed = draw(st.booleans())
    eps = draw(st.floats(0.05, 4.0))
    lo = 1e-3 if positive_delta else 0.0
    delta = draw(st.floats(lo, 0.5) if positive_delta else st.one_of(st.just(0.0), st.floats(0.0, 0.5)))
    metric = draw(st.sampled_from(METRICS))
    return n, shifts, directed, eps, delta, metric


FLOAT_CHECK = {"dp": delta_dp, "pdp": delta_pdp, "pdp-kadam": delta_pdp_kadam}


@PROPS
@given(inst=instances(), notion=st.sampled_from(NOTIONS))
def test_solved_designs_certify_exactly(inst, notion):
    n, shifts, directed, eps, delta, metric = inst
    d = NoiseDesign(
        n=n,
        eps=eps,
        delta=delta,
        neighborhood=Neighborhood.shifts(shifts, directed=directed),
        metric=metric,
        privacy=notion,
    )
    res = d.solve()
    assert res.status == "optimal"
    cd = res.certify()
    # the exact check passes, independently re-run, and never exceeds the requested delta
    assert cd.certified_delta <= Fraction(delta)
    assert cd.verify()
    assert exact_delta(cd.weights.ravel(), d.shift_index(), notion, exp_bounds(eps)) == cd.certified_delta
    assert sum(int(v) for v in cd.weights.ravel()) == 2**cd.bits
    # an independent float re-check of the sampled PMF (slack only for float rounding of w / 2^62)
    kw = {} if notion == "dp" else {"tol": 1e-13}
    assert FLOAT_CHECK[notion](cd.pmf_float, d.shifts, eps, **kw) <= delta + 1e-12
    # the repair is reported and stays within its loss budget
    r = cd.repair
    assert r["loss"] <= 1e-6 * max(1.0, abs(res.distortion))
    assert r["distortion_certified"] == pytest.approx(float(cd.distortion), rel=1e-12, abs=1e-15)


@settings(max_examples=max(100, N_EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=instances(positive_delta=True))
def test_notion_ordering_dp_pdp_kadam(inst):
    n, shifts, directed, eps, delta, metric = inst
    nb = Neighborhood.shifts(shifts, directed=directed)
    vals = {}
    for notion in NOTIONS:
        res = NoiseDesign(n=n, eps=eps, delta=delta, neighborhood=nb, metric=metric, privacy=notion).solve()
        assert res.status == "optimal"
        vals[notion] = res.distortion
    scale = max(1.0, abs(vals["pdp-kadam"]))
    assert vals["dp"] <= vals["pdp"] + 1e-7 * scale
    assert vals["pdp"] <= vals["pdp-kadam"] + 1e-7 * scale


@settings(max_examples=max(100, N_EXAMPLES // 3), deadline=None)
@given(
    w=st.lists(st.integers(0, 2**62), min_size=2, max_size=9).filter(lambda w: sum(w) > 0),
    eps=st.floats(0.01, 80.0),
    k=st.integers(1, 3),
)
def test_exact_delta_order_and_bounds(w, eps, k):
    # For any integer PMF: 0 <= dp <= pdp <= pdp-kadam (PDP implies DP; shared indicators add rows),
    # and the pure-eps check (delta 0) agrees across notions.
    n = len(w) - 1
    d = NoiseDesign(n=n, eps=1.0, neighborhood=Neighborhood.bd(min(k, n), directed=True))
    b = exp_bounds(min(eps, 64.0))
    idx = d.shift_index()
    dp, pdp, kad = (exact_delta(w, idx, notion, b) for notion in ("dp", "pdp", "pdp-kadam"))
    assert 0 <= dp <= pdp <= kad
    assert (dp == 0) == (pdp == 0) == (kad == 0)


# ---------------------------------------------------------------------------------------------
# bad inputs: ValueError naming the parameter, or CLI exit 2 with exactly one stderr line
# ---------------------------------------------------------------------------------------------

NB = Neighborhood.bd(2)
PMF = np.full(5, 0.2)


def _design(**kw):
    base = dict(n=4, eps=1.0, delta=0.1, neighborhood=NB)
    base.update(kw)
    return NoiseDesign(**base)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A good design file, and corrupted / tampered / newer ones, plus a bad PMF file."""
    root = tmp_path_factory.mktemp("bad")
    cd = _design(privacy="dp").solve().certify()
    good = cd.save(root / "good.json")
    data = json.loads(good.read_text())
    out = {"good": good, "missing": root / "nothere.json"}
    (root / "corrupt.json").write_text(good.read_text()[: len(good.read_text()) // 2])
    out["corrupt"] = root / "corrupt.json"
    (root / "newer.json").write_text(json.dumps(dict(data, format_version=FORMAT_VERSION + 1)))
    out["newer"] = root / "newer.json"
    (root / "negw.json").write_text(json.dumps(dict(data, weights=["-5"] + data["weights"][1:])))
    out["negw"] = root / "negw.json"
    (root / "count.json").write_text(json.dumps(dict(data, weights=data["weights"][:-1])))
    out["count"] = root / "count.json"
    bad_eps = dict(data, problem=dict(data["problem"], eps=float("nan")))
    (root / "nan_eps.json").write_text(json.dumps(bad_eps))
    out["nan_eps"] = root / "nan_eps.json"
    (root / "noformat.json").write_text(json.dumps({"weights": [1]}))
    out["noformat"] = root / "noformat.json"
    (root / "negpmf.json").write_text(json.dumps([1.2, -0.2, 0.0, 0.0, 0.0]))
    out["negpmf"] = root / "negpmf.json"
    res = root / "res.json"
    assert (
        main(
            [
                "solve",
                "--n",
                "4",
                "--eps",
                "1",
                "--delta",
                "0.1",
                "--neighborhood",
                "bd:2",
                "--format",
                "json",
                "--out",
                str(res),
            ]
        )
        == 0
    )
    out["res"] = res
    (root / "res_corrupt.json").write_text(res.read_text()[:100])
    out["res_corrupt"] = root / "res_corrupt.json"
    out["cd"] = cd
    return out


PY_CASES = [
    # NoiseDesign
    ("design-eps-nan", lambda f: _design(eps=float("nan")), "eps"),
    ("design-eps-inf", lambda f: _design(eps=float("inf")), "eps"),
    ("design-eps-zero", lambda f: _design(eps=0.0), "eps"),
    ("design-eps-negative", lambda f: _design(eps=-1.0), "eps"),
    ("design-delta-above-1", lambda f: _design(delta=1.5), "delta"),
    ("design-delta-nan", lambda f: _design(delta=float("nan")), "delta"),
    ("design-delta-negative", lambda f: _design(delta=-0.1), "delta"),
    ("design-huge-n", lambda f: _design(n=10**9), "n is too large"),
    ("design-n-zero", lambda f: _design(n=0), "n must be"),
    ("design-n-fraction", lambda f: _design(n=2.5), "n must be an integer"),
    ("design-metric-unknown", lambda f: _design(metric="rmse"), "metric"),
    ("design-privacy-unknown", lambda f: _design(privacy="rdp"), "privacy"),
    ("design-cost-length", lambda f: _design(metric=np.ones(3)), "metric cost array"),
    ("design-cost-nan", lambda f: _design(metric=np.array([0, 1, np.nan, 1, 1.0])), "metric cost array"),
    ("design-objective-delta-no-cap", lambda f: _design(delta=None, objective="delta"), "max_distortion"),
    ("design-neighborhood-type", lambda f: _design(neighborhood=[1, 2]), "neighborhood"),
    ("design-shift-out-of-range", lambda f: _design(neighborhood=Neighborhood.shifts([9])), "shift"),
    (
        "design-shifts-coincide-mod",
        lambda f: _design(neighborhood=Neighborhood.shifts([1, -4])),
        "shifts must be distinct",
    ),
    # Neighborhood constructors
    ("nb-shift-zero", lambda f: Neighborhood.shifts([0]), "shifts must not contain 0"),
    ("nb-vector-shift-zero", lambda f: Neighborhood.shifts([(0, 0)]), "shifts must not contain 0"),
    ("nb-duplicate-shifts", lambda f: Neighborhood.shifts([1, 1]), "duplicates"),
    ("nb-empty", lambda f: Neighborhood.shifts([]), "empty"),
    ("nb-fractional", lambda f: Neighborhood.shifts([1.5]), "shifts must be integers"),
    ("nb-nan", lambda f: Neighborhood.shifts([float("nan")]), "shifts must be integers"),
    ("nb-mixed-dims", lambda f: Neighborhood.shifts([(1, 2), (1,)]), "same dimension"),
    ("nb-bd-zero", lambda f: Neighborhood.bd(0), "mu_bar"),
    ("nb-sd-negative", lambda f: Neighborhood.sd(-1), "mu"),
    ("nb-parse-kind", lambda f: Neighborhood.parse("xx:3"), "neighborhood"),
    # privacy accounting
    ("privacy-negative-mass", lambda f: delta_dp([1.2, -0.2, 0, 0, 0], [1], 1.0), "pmf must be non-negative"),
    ("privacy-not-normalised", lambda f: delta_pdp([0.5, 0.2, 0, 0, 0], [1], 1.0), "pmf must sum to 1"),
    ("privacy-nan-mass", lambda f: delta_pdp_kadam([np.nan, 1, 0, 0, 0], [1], 1.0), "pmf must contain only finite"),
    ("privacy-shift-zero", lambda f: delta_pdp(PMF, [0], 1.0), "shift"),
    ("privacy-eps-nan", lambda f: delta_dp(PMF, [1], float("nan")), "eps"),
    ("privacy-eps-negative", lambda f: delta_pdp_kadam(PMF, [1], -1.0), "eps"),
    ("privacy-delta-above-1", lambda f: eps_for_delta(PMF, [1], 2.0), "delta"),
    ("privacy-notion-unknown", lambda f: eps_for_delta(PMF, [1], 0.1, notion="rdp"), "notion"),
    ("privacy-length-mismatch", lambda f: hockey_stick([0.5, 0.5], [1.0], 1.0), "same number of outputs"),
    # solve
    ("solve-solver-unknown", lambda f: _design().solve(solver="glpk"), "solver"),
    ("solve-time-limit-negative", lambda f: _design().solve(time_limit=-1), "time_limit"),
    ("solve-time-limit-nan", lambda f: _design().solve(time_limit=float("nan")), "time_limit"),
    # certify
    ("certify-not-a-result", lambda f: certify_result("res.json"), "result must be a DesignResult"),
    ("certify-bits-small", lambda f: _design().solve().certify(bits=8), "bits"),
    ("certify-bits-large", lambda f: _design().solve().certify(bits=70), "bits"),
    ("certify-delta-above-1", lambda f: _design().solve().certify(delta=1.5), "delta"),
    ("certify-delta-nan", lambda f: _design().solve().certify(delta=float("nan")), "delta"),
    ("certify-max-loss-negative", lambda f: _design().solve().certify(max_loss=-1.0), "max_loss"),
    ("certify-solver-unknown", lambda f: _design().solve().certify(solver="glpk"), "solver"),
    ("exact-delta-notion", lambda f: exact_delta([1, 1], np.array([[1, 0]]), "rdp", exp_bounds(1.0)), "notion"),
    # load
    ("load-missing-file", lambda f: load_design(f["missing"]), "design file could not be read"),
    ("load-corrupted-json", lambda f: load_design(f["corrupt"]), "not valid JSON"),
    ("load-newer-version", lambda f: load_design(f["newer"]), "newer than this optnoise supports"),
    ("load-negative-weight", lambda f: load_design(f["negw"]), "non-negative integer strings"),
    ("load-weight-count", lambda f: load_design(f["count"]), "weights must be"),
    ("load-spec-eps-nan", lambda f: load_design(f["nan_eps"]), "eps"),
    ("load-not-a-design", lambda f: load_design(f["noformat"]), "format tag"),
    # sampling / release
    ("release-nan", lambda f: f["cd"].release(float("nan")), "q must be"),
    ("release-out-of-range", lambda f: f["cd"].release(5), "q must be"),
    ("release-negative", lambda f: f["cd"].release([-1, 2]), "q must be"),
    ("release-rng-type", lambda f: f["cd"].release(1, rng="seed"), "rng must be"),
    ("sample-size-negative", lambda f: f["cd"].sample(-1), "size"),
]


@pytest.mark.parametrize("call,match", [c[1:] for c in PY_CASES], ids=[c[0] for c in PY_CASES])
def test_bad_python_input(call, match, files):
    with pytest.raises(ValueError, match=match):
        call(files)


CLI_CASES = [
    ("solve-eps-nan", ["solve", "--n", "4", "--eps", "nan", "--neighborhood", "bd:1"], "eps"),
    ("solve-eps-zero", ["solve", "--n", "4", "--eps", "0", "--neighborhood", "bd:1"], "eps"),
    ("solve-eps-negative", ["solve", "--n", "4", "--eps=-1", "--neighborhood", "bd:1"], "eps"),
    ("solve-delta-above-1", ["solve", "--n", "4", "--eps", "1", "--delta", "2", "--neighborhood", "bd:1"], "delta"),
    ("solve-huge-n", ["solve", "--n", "1000000000", "--eps", "1", "--neighborhood", "bd:1"], "n is too large"),
    ("solve-shift-zero", ["solve", "--n", "4", "--eps", "1", "--neighborhood", "shifts:0"], "0"),
    ("solve-duplicate-shifts", ["solve", "--n", "4", "--eps", "1", "--neighborhood", "shifts:1,1"], "duplicates"),
    ("verify-negative-pmf", ["verify", "--pmf", "{negpmf}", "--eps", "1", "--neighborhood", "bd:1"], "pmf"),
    ("certify-eps-inf", ["certify", "--n", "4", "--eps", "inf", "--neighborhood", "bd:1"], "eps"),
    ("certify-no-input", ["certify"], "--result"),
    ("certify-both-inputs", ["certify", "--result", "{res}", "--n", "4"], "either --result"),
    ("certify-result-missing", ["certify", "--result", "{missing}"], "result file"),
    ("certify-result-corrupt", ["certify", "--result", "{res_corrupt}"], "not valid JSON"),
    ("certify-bits", ["certify", "--result", "{res}", "--bits", "99"], "bits"),
    ("certify-max-loss-nan", ["certify", "--result", "{res}", "--max-loss", "nan"], "max_loss"),
    ("release-corrupt-design", ["release", "--design", "{corrupt}", "--value", "1"], "not valid JSON"),
    ("release-newer-design", ["release", "--design", "{newer}", "--value", "1"], "newer"),
    ("release-tampered-design", ["release", "--design", "{negw}", "--value", "1"], "weights"),
    ("release-value-range", ["release", "--design", "{good}", "--value", "99"], "q must be"),
    ("release-value-text", ["release", "--design", "{good}", "--value", "abc"], "value"),
    ("release-value-vector", ["release", "--design", "{good}", "--value", "1/2"], "coordinate"),
    ("release-count-zero", ["release", "--design", "{good}", "--value", "1", "--count", "0"], "count"),
    ("release-seed-negative", ["release", "--design", "{good}", "--value", "1", "--seed=-1"], "seed"),
]


@pytest.mark.parametrize("argv,match", [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES])
def test_bad_cli_input(argv, match, files, capsys):
    argv = [a.format(**{k: str(v) for k, v in files.items() if k != "cd"}) for a in argv]
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse usage errors exit directly (also code 2, one line)
        rc = exc.code
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert rc == 2, captured.err
    assert len(lines) == 1, lines
    assert match in lines[0]
    assert "Traceback" not in captured.err


def test_table_is_large_enough():
    assert len(PY_CASES) + len(CLI_CASES) >= 40
    kinds = " ".join(c[0] for c in PY_CASES + CLI_CASES)
    for needed in (
        "nan",
        "inf",
        "eps-zero",
        "eps-negative",
        "delta-above-1",
        "huge-n",
        "shift-zero",
        "duplicate",
        "negative",
        "corrupt",
    ):
        assert needed in kinds, needed


def test_profiles_are_registered():
    # CI: a few hundred examples; the long profile is selectable with HYPOTHESIS_PROFILE=long
    assert N_EXAMPLES >= 300
    assert settings.get_profile("long").max_examples > settings.get_profile("ci").max_examples
    assert math.isfinite(N_EXAMPLES)
