"""``optnoise solve --release additive``: no --n, the same numbers as the API, one-line errors (exit 2)."""

import json
import math

import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.cli.args import EXIT_FEASIBLE
from optnoise.cli.main import main

ADDITIVE = ["solve", "--release", "additive", "--neighborhood", "bd:1", "--eps", "1", "--metric", "mse"]


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_solve_additive_json_matches_the_api(capsys):
    code, out, err = run(capsys, ADDITIVE + ["--delta", "1e-6", "--format", "json", "--compare"])
    assert code == 0, err
    d = json.loads(out)
    assert d["release"] == "additive" and d["status"] == "optimal"
    api = NoiseDesign(release="additive", neighborhood=Neighborhood.bd(1), eps=1.0, delta=1e-6, metric="mse").solve()
    assert d["distortion"] == pytest.approx(api.distortion, rel=1e-9)
    assert d["support"] == api.support.tolist()
    assert set(d["baselines"]) == {"discrete_laplace", "discrete_gaussian"}
    assert d["distortion"] <= min(d["baselines"].values())


def test_solve_additive_table_pure_is_the_discrete_laplace(capsys):
    code, out, err = run(capsys, ADDITIVE + ["--compare"])
    assert code == 0, err
    a = math.exp(-1.0)
    line = next(x for x in out.splitlines() if x.startswith("distortion"))
    assert float(line.split()[1]) == pytest.approx(2 * a / (1 - a) ** 2, rel=1e-9)
    assert "discrete_laplace" in out and "inactive" in out


@pytest.mark.parametrize(
    "argv,match",
    [
        (["solve", "--neighborhood", "bd:1", "--eps", "1"], "n is required"),
        (ADDITIVE + ["--n", "5"], "takes no n"),
        (ADDITIVE + ["--privacy", "zcdp"], "instead of eps/delta"),
        (ADDITIVE + ["--privacy", "composed", "--compositions", "2"], "delta is required"),
        (ADDITIVE + ["--support", "0"], "support"),
        (["solve", "--n", "5", "--neighborhood", "bd:1", "--eps", "1", "--support", "3"], "support"),
        (ADDITIVE[:-1] + ["foo"], "metric"),
    ],
)
def test_solve_additive_bad_input(capsys, argv, match):
    code, out, err = run(capsys, argv)
    assert code == 2
    assert match in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------------------
# sweep --release additive: no --n, additive rows, cached and re-proved on load
# ------------------------------------------------------------------------------------------------

SWEEP = ["sweep", "--release", "additive", "--neighborhood", "bd:1", "--metric", "mse", "--quiet", "--format", "json"]


def sweep_rows(capsys, tmp_path, extra):
    code, out, err = run(capsys, SWEEP + ["--cache", str(tmp_path / "cache"), "--out", "-"] + extra)
    assert code == 0, err
    return json.loads(out)


def test_sweep_additive_pure_rows_are_the_discrete_laplace(capsys, tmp_path):
    rows = sweep_rows(capsys, tmp_path, ["--eps", "0.5,1", "--delta", "0"])
    assert [r["eps"] for r in rows] == [0.5, 1.0]
    for r in rows:
        a = math.exp(-r["eps"])
        exact = 2 * a / (1 - a) ** 2  # the Geng-Viswanath optimum for D = 1: the discrete Laplace
        assert r["release"] == "additive" and r["privacy"] == "dp" and "n" not in r
        assert r["status"] == "optimal" and r["gap"] <= 1e-6
        assert r["distortion"] == pytest.approx(exact, rel=1e-6) and r["mse"] == pytest.approx(exact, rel=1e-6)
        assert r["baseline_discrete_laplace"] == pytest.approx(exact, rel=1e-6)
        assert r["baseline_discrete_gaussian"] == math.inf  # no Gaussian is pure DP
        assert r["achieved_dp"] <= 1e-12 and r["support"] == len(json.loads(r["pmf"])) // 2


def test_sweep_additive_rows_match_the_api_and_resume_from_the_cache(capsys, tmp_path):
    first = sweep_rows(capsys, tmp_path, ["--eps", "0.5:1:2", "--delta", "1e-6"])
    assert len(first) == 2 and all(r["backend"] != "cache" for r in first)
    for r in first:
        api = NoiseDesign(
            release="additive", neighborhood=Neighborhood.bd(1), eps=r["eps"], delta=1e-6, metric="mse"
        ).solve()
        assert r["status"] == "optimal" and r["distortion"] == pytest.approx(api.distortion, rel=1e-9)
        assert r["achieved_dp"] <= 1e-6 * (1 + 1e-6)
        assert r["distortion"] < min(r["baseline_discrete_laplace"], r["baseline_discrete_gaussian"])
    entries = sorted((tmp_path / "cache").glob("*.json"))
    assert len(entries) == 2
    again = sweep_rows(capsys, tmp_path, ["--eps", "0.5:1:2", "--delta", "1e-6"])
    assert [r["backend"] for r in again] == ["cache", "cache"]
    for r, s in zip(first, again, strict=True):
        assert s["status"] == "optimal" and s["gap"] <= 1e-6  # the bound re-derived from the stored multipliers
        assert s["distortion"] == pytest.approx(r["distortion"], rel=1e-12)
        assert s["baseline_discrete_laplace"] == pytest.approx(r["baseline_discrete_laplace"], rel=1e-12)


@pytest.mark.parametrize("edit", ["pmf", "distortion", "proof"])
def test_sweep_additive_cache_trusts_no_stored_number(capsys, tmp_path, edit):
    sweep_rows(capsys, tmp_path, ["--eps", "1", "--delta", "1e-6"])
    (path,) = (tmp_path / "cache").glob("*.json")
    entry = json.loads(path.read_text())
    res = entry["result"]
    if edit == "pmf":  # a leaky PMF: fails re-verification, so the point is solved again
        L = len(res["pmf"]) // 2
        res["pmf"][L] += 0.01
        res["pmf"][L + 1] -= 0.01
    elif edit == "distortion":  # a stored number is never read: the row's distortion is recomputed
        res["distortion"], res["bound"], res["gap"] = 0.001, 0.001, 0.0
    else:  # multipliers that prove nothing: the 'optimal' status is not re-proved, so solved again
        entry["proof"]["dual"] = [0.0] * len(entry["proof"]["dual"])
    path.write_text(json.dumps(entry))
    (row,) = sweep_rows(capsys, tmp_path, ["--eps", "1", "--delta", "1e-6"])
    api = NoiseDesign(release="additive", neighborhood=Neighborhood.bd(1), eps=1.0, delta=1e-6, metric="mse").solve()
    assert row["status"] == "optimal" and row["distortion"] == pytest.approx(api.distortion, rel=1e-9)
    assert row["backend"] == ("cache" if edit == "distortion" else "highs")


@pytest.mark.parametrize(
    "argv,match",
    [
        (SWEEP + ["--eps", "1", "--delta", "1e-6", "--n", "8"], "takes no --n"),
        (["sweep", "--neighborhood", "bd:1", "--eps", "1", "--quiet"], "n is required"),
        (SWEEP + ["--eps", "1", "--privacy", "zcdp"], "zcdp"),
        (SWEEP[:5] + ["--metric", "foo", "--eps", "1"], "metric"),
    ],
)
def test_sweep_additive_bad_input(capsys, argv, match):
    code, out, err = run(capsys, argv)
    assert code == 2, err
    assert match in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------------------
# solve --format json --out r.json -> certify --result r.json --out design.json -> release
# ------------------------------------------------------------------------------------------------


@pytest.fixture
def result_file(capsys, tmp_path):
    path = tmp_path / "r.json"
    code, _, err = run(capsys, ADDITIVE + ["--delta", "1e-6", "--format", "json", "--out", str(path)])
    assert code == 0, err
    return path


def test_solve_certify_release_chain(capsys, tmp_path, result_file):
    from optnoise import load_design
    from optnoise.deploy.additive import CertifiedAdditive

    design = tmp_path / "design.json"
    code, out, err = run(capsys, ["certify", "--result", str(result_file), "--out", str(design)])
    assert code == 0, err
    cd = load_design(design)  # re-proves the certificate exactly on load
    assert isinstance(cd, CertifiedAdditive) and cd.eps == 1.0 and float(cd.certified_delta) <= 1e-6
    code, out, err = run(capsys, ["release", "--design", str(design), "--answer", "5000", "--count", "200"])
    assert code == 0, err
    values = [int(v) for v in out.split()]
    assert len(values) == 200
    # MSE ~1.84: a deviation beyond 60 has probability far below 1e-20 under the certified noise
    assert all(abs(v - 5000) <= 60 for v in values) and len(set(values)) > 1
    code, out, err = run(capsys, ["release", "--design", str(design), "--answer", "-3,7", "--seed", "1"])
    assert code == 0, err
    low, high = map(int, out.strip().split(","))
    assert abs(low + 3) <= 60 and abs(high - 7) <= 60


def test_certify_from_flags_without_n(capsys, tmp_path):
    design = tmp_path / "design.json"
    argv = ["certify", "--release", "additive", "--neighborhood", "bd:1", "--eps", "1", "--delta", "1e-6"]
    code, out, err = run(capsys, argv + ["--metric", "mse", "--out", str(design)])
    assert code == 0, err
    assert "additive" in out and design.exists()


def tamper(path, edit):
    d = json.loads(path.read_text())
    edit(d)
    path.write_text(json.dumps(d))


def _leak(d):
    L = len(d["pmf"]) // 2
    d["pmf"][L] += 0.01
    d["pmf"][L + 1] -= 0.01


@pytest.mark.parametrize(
    "edit,code_,match",
    [
        (_leak, 4, "re-verification failed"),  # a leaky PMF: unverified, refused
        (lambda d: d["problem"].update(eps=3.0), 5, "status 'feasible'"),  # optimal at eps 1, not at eps 3
        (lambda d: d["support"].pop(), 2, "support"),
        (lambda d: d.pop("problem"), 2, "problem"),
        (lambda d: d["problem"].update(metric="foo"), 2, "metric"),
        (lambda d: d.update(pmf=[2.0] * len(d["pmf"])), 2, "sum to 1"),
    ],
)
def test_certify_refuses_a_tampered_result(capsys, tmp_path, result_file, edit, code_, match):
    tamper(result_file, edit)
    out_path = tmp_path / "design.json"
    code, out, err = run(capsys, ["certify", "--result", str(result_file), "--out", str(out_path)])
    assert code == code_, err
    assert match in err and len(err.strip().splitlines()) == 1
    assert not out_path.exists()


@pytest.mark.parametrize("answer,match", [("1e3", "integers"), ("5,,6", "integer answers"), (str(2**63), "2**62")])
def test_release_additive_bad_answers(capsys, tmp_path, result_file, answer, match):
    design = tmp_path / "design.json"
    assert run(capsys, ["certify", "--result", str(result_file), "--out", str(design)])[0] == 0
    code, out, err = run(capsys, ["release", "--design", str(design), "--answer", answer])
    assert code == 2 and match in err and len(err.strip().splitlines()) == 1


def test_solve_additive_zcdp_table(capsys):
    # the table printed the budget as eps/delta, which a zcdp design has not (it crashed with exit 70)
    argv = ["solve", "--release", "additive", "--neighborhood", "bd:1", "--privacy", "zcdp", "--rho", "0.5"]
    code, out, err = run(capsys, argv + ["--metric", "mse"])
    assert code in (0, EXIT_FEASIBLE), err  # optimal (proven gap 4.5e-7 measured) or feasible with its gap
    assert "rho=0.5" in out and "zcdp=" in out
    line = next(x for x in out.splitlines() if x.startswith("distortion"))
    assert float(line.split()[1]) < 1.0  # below the discrete Gaussian's variance at sigma^2 = 1


def test_certify_composed_additive_from_flags(capsys, tmp_path):
    """A composed design is certified at its incumbent (status 'feasible') with its k-fold block, as modulo ones."""
    from optnoise import load_design

    design = tmp_path / "composed.json"
    argv = ["certify", "--release", "additive", "--neighborhood", "bd:1", "--eps", "1", "--delta", "1e-5"]
    code, out, err = run(capsys, argv + ["--privacy", "composed", "--compositions", "4", "--out", str(design)])
    assert code == 0, err
    assert "composed    4 releases" in out
    cd = load_design(design)
    assert cd.composed["compositions"] == 4 and cd.composed["composed_delta"] <= 1e-5 and cd.verify()


def test_solve_compare_with_minimised_delta(capsys):
    # the baselines were calibrated to delta = None (a TypeError, exit 70): a design that minimises delta under
    # a distortion cap has no guarantee to calibrate them to, so there are none
    argv = ["solve", "--release", "additive", "--neighborhood", "bd:1", "--eps", "1", "--metric", "mse"]
    code, out, err = run(
        capsys, argv + ["--minimize", "delta", "--max-distortion", "3", "--compare", "--format", "json"]
    )
    assert code == 0, err
    d = json.loads(out)
    assert d["status"] == "optimal" and d["baselines"] == {}
