"""The optnoise command line: contract keys, exit codes and one-line errors."""

import csv
import io
import json
import shlex
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from optnoise import Neighborhood, NoiseDesign
from optnoise.cli.main import main
from optnoise.engine.validation import max_jobs

#: One worker more than this machine allows (JOBS_PER_CORE per core).
TOO_MANY_JOBS = str(max_jobs() + 1)

SOLVE = [
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
    "--metric",
    "er",
    "--privacy",
    "pdp-kadam",
]


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_solve_json_contract(capsys):
    code, out, err = run(capsys, SOLVE + ["--format", "json"])
    assert code == 0, err
    d = json.loads(out)
    for key in (
        "n",
        "eps",
        "delta",
        "shifts",
        "directed",
        "metric",
        "privacy",
        "status",
        "pmf",
        "distortion",
        "achieved",
        "solver",
        "solve_time_s",
    ):
        assert key in d
    assert d["shifts"] == [1, 2, 3] and d["directed"] is True
    assert d["status"] == "optimal"
    assert set(d["achieved"]) == {"pdp", "pdp-kadam", "dp"}
    assert abs(sum(d["pmf"]) - 1) < 1e-9


@pytest.mark.parametrize("solver", ["auto", "highs", "scip", "cvxpy"])
def test_solve_json_stdout_is_pure_json(solver):
    # capsys cannot see C-level writes: run the console entry point in a real process, where
    # highspy's banner used to precede the JSON on stdout (cvxpy builds its own HiGHS for MILPs).
    import subprocess
    import sys

    argv = [
        sys.executable,
        "-c",
        "import sys; from optnoise.cli import main; sys.exit(main())",
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
        "pdp",
        "--solver",
        solver,
        "--format",
        "json",
    ]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["status"] == "optimal" and d["solver"] == solver
    assert d["backend"] == ("highs" if solver in ("auto", "cvxpy") else solver) or solver == "cvxpy"


@pytest.mark.parametrize("solver", ["scip", "auto"])
def test_solve_table_names_the_backend(capsys, solver):
    code, out, err = run(capsys, SOLVE + ["--solver", solver])
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("notion"))
    assert line.endswith("solver scip") if solver == "scip" else line.endswith("solver auto (won: highs)")
    _, ref, _ = run(capsys, SOLVE + ["--solver", "highs"])
    dist = [x for x in out.splitlines() if x.startswith("distortion")]
    assert dist == [x for x in ref.splitlines() if x.startswith("distortion")] and dist


def test_default_solver_is_auto(capsys):
    code, out, err = run(capsys, SOLVE + ["--format", "json"])
    d = json.loads(out)
    assert code == 0 and d["solver"] == "auto" and d["backend"] in ("highs", "scip")


def test_solve_table_prints_the_shift_set(capsys):
    code, out, _ = run(capsys, ["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3"])
    assert code == 0
    assert "{1, 2, 3, 6, 7, 8} (mod 9)" in out  # symmetric default, printed as used
    assert "status      optimal" in out


def test_vector_query_cli(capsys):
    code, out, _ = run(
        capsys,
        [
            "solve",
            "--n",
            "6",
            "--eps",
            "3",
            "--neighborhood",
            "shifts:1/2,3/5",
            "--dim",
            "2",
            "--directed",
            "--format",
            "json",
        ],
    )
    assert code == 0
    d = json.loads(out)
    assert np.asarray(d["pmf"]).shape == (7, 7)
    assert d["shifts"] == [[1, 2], [3, 5]]


def test_minimise_delta_and_infeasible(capsys, tmp_path):
    code, out, _ = run(
        capsys,
        [
            "solve",
            "--n",
            "6",
            "--eps",
            "1",
            "--neighborhood",
            "bd:2",
            "--minimize",
            "delta",
            "--max-distortion",
            "0.4",
            "--privacy",
            "dp",
            "--format",
            "json",
        ],
    )
    assert code == 0 and json.loads(out)["status"] == "optimal"
    cost = tmp_path / "cost.json"
    cost.write_text(json.dumps([1.0] * 7))
    code, out, _ = run(
        capsys,
        [
            "solve",
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
            "--format",
            "json",
        ],
    )
    assert code == 3
    assert json.loads(out)["status"] == "infeasible"


def test_time_limit_reports_status(capsys):
    code, out, _ = run(
        capsys,
        [
            "solve",
            "--n",
            "120",
            "--eps",
            "1",
            "--delta",
            "0.1",
            "--neighborhood",
            "bd:10",
            "--time-limit",
            "0.5",
            "--format",
            "json",
        ],
    )
    d = json.loads(out)
    assert d["status"] in ("time_limit", "optimal")
    assert code == (0 if d["status"] == "optimal" else 3)
    if d["status"] == "time_limit" and d["pmf"] is not None:
        assert d["gap"] is not None


@pytest.mark.parametrize("command", ["solve", "sweep"])
def test_mip_gap_and_highs_options_reach_the_solver(capsys, monkeypatch, command):
    from optnoise.design.noise import NoiseDesign

    seen = []
    real = NoiseDesign.solve

    def spy(self, *args, **kwargs):
        seen.append((kwargs.get("mip_gap"), kwargs.get("options")))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(NoiseDesign, "solve", spy)
    argv = [
        command,
        "--n",
        "8",
        "--eps",
        "1",
        "--delta",
        "0.1",
        "--neighborhood",
        "bd:3",
        "--mip-gap",
        "1e-4",
        "--highs-option",
        "mip_allow_restart=false",
        "--highs-option",
        "random_seed=3",
    ]
    code, _, err = run(capsys, argv + (["--no-cache", "--quiet"] if command == "sweep" else []))
    # a looser gap may stop before the proof: "feasible", which exits 0 (5 only with --require-optimal)
    assert code == 0, err
    assert seen == [(1e-4, {"mip_allow_restart": False, "random_seed": 3})]


def test_mps_export(capsys, tmp_path):
    path = tmp_path / "m.mps"
    code, _, _ = run(capsys, SOLVE + ["--mps", str(path)])
    assert code == 0 and path.read_text().startswith("NAME")


BAD = [
    (["solve", "--n", "8", "--eps", "0", "--neighborhood", "bd:3"], "eps"),
    (["solve", "--n", "8", "--eps", "nan", "--neighborhood", "bd:3"], "eps"),
    (["solve", "--n", "8", "--eps", "-1", "--neighborhood", "bd:3"], "eps"),
    (["solve", "--n", "8", "--eps", "1", "--delta", "1.5", "--neighborhood", "bd:3"], "delta"),
    (["solve", "--n", "8", "--eps", "1", "--delta", "-0.1", "--neighborhood", "bd:3"], "delta"),
    (["solve", "--n", "0", "--eps", "1", "--neighborhood", "bd:3"], "n"),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "shifts:0"], "0"),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "shifts:12"], "out of range"),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "shifts:"], "shift"),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "ball:3"], "neighborhood kind"),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--metric", "rmse"], "metric"),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--privacy", "rdp"], "privacy"),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--solver", "glpk"], "solver"),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--cost", "1,2,3"], "cost"),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--minimize", "delta"], "max_distortion"),
    (["solve", "--n", "8", "--eps", "abc", "--neighborhood", "bd:3"], "eps"),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--mip-gap", "-1"], "mip_gap"),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--mip-gap", "x"], "mip-gap"),
    (
        [
            "sweep",
            "--n",
            "8",
            "--eps",
            "1",
            "--delta",
            "0.1",
            "--neighborhood",
            "bd:3",
            "--mip-gap",
            "nan",
            "--no-cache",
        ],
        "mip_gap",
    ),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--highs-option", "bogus=1"], "bogus"),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--highs-option", "novalue"], "NAME=VALUE"),
    (
        [
            "sweep",
            "--n",
            "8",
            "--eps",
            "1",
            "--delta",
            "0.1",
            "--neighborhood",
            "bd:3",
            "--no-cache",
            "--highs-option",
            "mip_allow_restart=maybe",
        ],
        "True or False",
    ),
    (
        [
            "solve",
            "--n",
            "8",
            "--eps",
            "1",
            "--neighborhood",
            "bd:3",
            "--solver",
            "cbc",
            "--highs-option",
            "random_seed=3",
        ],
        "HiGHS options",
    ),
    (["sweep", "--n", "8", "--eps", "0:1:x", "--neighborhood", "bd:3"], "eps"),
    (["sweep", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--jobs", "0"], "jobs"),
    (["figures", "nopaper"], "paper"),
    # --- unbounded counts: jobs is capped (JOBS_PER_CORE per core), release counts too ---
    (["sweep", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--no-cache", "--jobs", str(2**64 + 1)], "jobs"),
    (["sweep", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--no-cache", "--jobs", TOO_MANY_JOBS], "jobs"),
    (["mechanism-sweep", "--n", "4", "--eps", "1", "--no-cache", "--jobs", str(2**64 + 1)], "jobs"),
    (["mechanism-sweep", "--n", "4", "--eps", "1", "--no-cache", "--jobs", TOO_MANY_JOBS], "jobs"),
    (["figures", "all", "--jobs", TOO_MANY_JOBS], "jobs"),
    (["release", "--design", "nothere.json", "--value", "1", "--count", "100000001"], "count"),
    # --- strictness: max_loss is validated like max_distortion; outputs are parsed exactly ---
    (["mechanism", "--n", "4", "--eps", "1", "--objective", "delta", "--max-loss", "-1"], "max_loss"),
    (["mechanism", "--n", "4", "--eps", "1", "--objective", "delta", "--max-loss", "nan"], "max_loss"),
    (["mechanism-sweep", "--n", "4", "--eps", "1", "--objective", "delta", "--max-loss", "-1"], "max_loss"),
    (["mechanism", "--n", "4", "--eps", "1", "--outputs", "0,18446744073709551617"], "outputs"),
    (["mechanism", "--n", "4", "--eps", "1", "--outputs", "18446744073709551617"], "outputs"),
    (["mechanism", "--n", "4", "--eps", "1", "--outputs", "0,1e308"], "outputs"),
    (["mechanism", "--n", "4", "--eps", "1", "--outputs", "0,,1"], "outputs"),
    (["mechanism", "--n", "4", "--eps", "1", "--outputs", "0,100000000", "--loss", "sq"], "loss"),
    # --- messages: a long value is cut, not echoed whole ---
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--cost", ",".join(["1"] * 60000)], "cost"),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--cost", ",".join(["x"] * 60000)], "cost"),
    (["solve", "--n", "8", "--eps", "1" * 5000, "--neighborhood", "bd:3"], "eps"),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "shifts:" + ",".join(["x"] * 5000)], "neighborhood"),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--solver", "x" * 5000], "solver"),
    (["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--cost", "x" * 5000 + ".json"], "cost"),
]


@pytest.mark.parametrize("argv, word", BAD)
def test_bad_input_is_one_line_exit_2(capsys, argv, word):
    code, _, err = run(capsys, argv)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert word in lines[0]
    assert "Traceback" not in err
    # an echoed value is cut (optnoise.engine.validation.shown): a 120 KB argument is not copied into the error
    assert len(lines[0]) <= 400, len(lines[0])


def test_missing_required_flag_is_one_line(capsys):
    code, _, err = run(capsys, ["solve", "--n", "8"])
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert run(capsys, ["--version"])[0] == 0


def test_verify_pass_and_fail(capsys, tmp_path):
    res = tmp_path / "res.json"
    code, _, _ = run(capsys, SOLVE + ["--format", "json", "--out", str(res)])
    assert code == 0
    common = ["verify", "--pmf", str(res), "--eps", "1.5", "--neighborhood", "bd:3", "--directed"]
    code, out, _ = run(capsys, common + ["--delta", "0.1239", "--privacy", "pdp-kadam", "--tol", "1e-9"])
    assert code == 0, out
    code, out, _ = run(capsys, common + ["--delta", "0.05", "--privacy", "pdp"])
    assert code == 1 and "FAIL" in out
    # the same pmf against the symmetric neighbourhood leaks more
    code, out, _ = run(
        capsys,
        [
            "verify",
            "--pmf",
            str(res),
            "--eps",
            "1.5",
            "--neighborhood",
            "bd:3",
            "--delta",
            "0.1239",
            "--format",
            "json",
        ],
    )
    assert code == 1 and json.loads(out)["ok"] is False


def test_verify_rejects_bad_pmf(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[0.5, 0.6]")
    code, _, err = run(capsys, ["verify", "--pmf", str(bad), "--eps", "1", "--neighborhood", "sd:1"])
    assert code == 2 and "sum to 1" in err
    code, _, err = run(
        capsys, ["verify", "--pmf", str(tmp_path / "missing.json"), "--eps", "1", "--neighborhood", "sd:1"]
    )
    assert code == 2 and "not found" in err
    neg = tmp_path / "neg.txt"
    neg.write_text("1.5 -0.5")
    code, _, err = run(capsys, ["verify", "--pmf", str(neg), "--eps", "1", "--neighborhood", "sd:1"])
    assert code == 2 and "non-negative" in err


def test_verify_refuses_an_eps_whose_exponential_overflows(capsys, tmp_path):
    # found by the command-line fuzzer: eps = 1e25 overflowed math.expm1 inside the PDP slack (exit 70)
    pmf = tmp_path / "p.json"
    pmf.write_text("[0.5, 0.5]")
    code, _, err = run(capsys, ["verify", "--pmf", str(pmf), "--eps", "1e25", "--neighborhood", "sd:1"])
    assert code == 2 and "eps must be <= 709.783" in err and len(err.strip().splitlines()) == 1
    # the largest accepted eps still reads the PMF: uniform noise on two values never leaks
    code, out, _ = run(capsys, ["verify", "--pmf", str(pmf), "--eps", "709", "--neighborhood", "sd:1"])
    assert code == 0, out


def test_sweep_csv(capsys, tmp_path):
    out = tmp_path / "s.csv"
    code, _, err = run(
        capsys,
        [
            "sweep",
            "--n",
            "6,8",
            "--eps",
            "0.5:1.5:3",
            "--delta",
            "0,0.1",
            "--neighborhood",
            "bd:2",
            "--neighborhood",
            "sd:1",
            "--directed",
            "--privacy",
            "dp,pdp",
            "--cache",
            str(tmp_path / "cache"),
            "--out",
            str(out),
            "--quiet",
            "--jobs",
            "2",
        ],
    )
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert len(rows) == 2 * 3 * 2 * 2 * 2
    assert all(r["status"] == "optimal" for r in rows)
    assert {r["neighborhood"] for r in rows} == {"bd:2", "sd:1"}


# ---------------------------------------------------------------------------------------------
# issue 13: results you can trust
# ---------------------------------------------------------------------------------------------

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_flow() -> list[list[str]]:
    """The README's solve -> verify -> certify -> release block, as argument lists (continuations joined)."""
    text = README.read_text()
    start = text.index("The whole flow")
    block = text[text.index("```sh", start) + 5 : text.index("```", text.index("```sh", start) + 5)]
    commands = block.replace("\\\n", " ").strip().splitlines()
    return [shlex.split(c) for c in commands]


def test_readme_command_sequence_runs_as_written(tmp_path):
    flow = readme_flow()
    assert [c[1] for c in flow] == ["solve", "verify", "certify", "release"]
    exe = Path(sys.executable).with_name("optnoise")
    outs = []
    for argv in flow:
        assert argv[0] == "optnoise"
        out = subprocess.run([str(exe), *argv[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, (argv, out.stderr)
        assert "Traceback" not in out.stderr
        outs.append(out.stdout)
    # verify passes every notion with the shared rule (it used to report pdp 0.3714 and kadam inf)
    assert outs[1].count("ok  ") == 3 and "FAIL" not in outs[1]
    released = [int(v) for v in outs[3].split()]
    assert len(released) == 10 and all(0 <= v <= 8 for v in released)


def test_verify_uses_the_shared_rule(capsys, tmp_path):
    res = tmp_path / "res.json"
    assert main(SOLVE + ["--format", "json", "--out", str(res)]) == 0
    capsys.readouterr()
    common = ["verify", "--pmf", str(res), "--eps", "1.5", "--neighborhood", "bd:3", "--directed"]
    # the README's own flow: tolerance 0 used to fail (pdp 0.3714, pdp-kadam inf)
    code, out, _ = run(capsys, common + ["--delta", "0.1238", "--privacy", "all"])
    assert code == 0, out
    # --tol 1e-9 (the largest accepted) used to fail on 0.12380000000000005 > 0.1238
    code, out, _ = run(capsys, common + ["--delta", "0.1238", "--privacy", "pdp-kadam", "--tol", "1e-9"])
    assert code == 0, out
    # the rule is relative: a claim 1% below the achieved delta fails
    code, out, _ = run(capsys, common + ["--delta", "0.1225", "--privacy", "pdp-kadam", "--format", "json"])
    assert code == 1 and json.loads(out)["ok"] is False


def test_verify_tol_nan_cannot_make_a_leaking_pmf_pass(capsys, tmp_path):
    # issue 13: --tol nan made a PMF leaking 0.9 pass
    leaky = tmp_path / "leaky.json"
    leaky.write_text(json.dumps([0.9, 0.1, 0.0]))
    base = ["verify", "--pmf", str(leaky), "--eps", "1", "--neighborhood", "sd:1", "--delta", "0.1"]
    code, _, err = run(capsys, base + ["--tol", "nan"])
    assert code == 2 and "tol" in err and len(err.strip().splitlines()) == 1
    code, out, _ = run(capsys, base)
    assert code == 1 and "FAIL" in out


def _loose_solver(monkeypatch):
    """Let HiGHS run with a loosened MIP feasibility tolerance, as the refused option used to."""
    import optnoise.engine.highs as S

    real = S.highs_instance

    def loose(model, **kw):
        h = real(model, **kw)
        h.setOptionValue("mip_feasibility_tolerance", 0.5)
        h.setOptionValue("primal_feasibility_tolerance", 0.5)
        return h

    monkeypatch.setattr(S, "highs_instance", loose)


def test_a_loosened_solver_is_never_reported_optimal(capsys, monkeypatch):
    # issue 13, section 1: with primal_feasibility_tolerance=0.5 the CLI printed "optimal", exit 0, while
    # its own achieved pdp was 0.825 against pure DP. The option is now refused up front ...
    argv = ["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3"]
    code, _, err = run(capsys, argv + ["--highs-option", "primal_feasibility_tolerance=0.5"])
    assert code == 2 and "loosens" in err
    # ... and a solver that still returns such a point (simulated) yields "unverified", exit 4, with the reason
    _loose_solver(monkeypatch)
    code, out, err = run(capsys, argv + ["--delta", "0.1", "--format", "json"])
    d = json.loads(out)
    assert code == 4 and d["status"] == "unverified" and d["verified"] is False
    assert "re-verification failed" in d["message"] and "unverified" in err
    assert len(err.strip().splitlines()) == 1


def test_sweep_flags_unverified_rows(capsys, monkeypatch, tmp_path):
    _loose_solver(monkeypatch)
    out = tmp_path / "s.csv"
    argv = ["sweep", "--n", "8", "--eps", "1", "--delta", "0.1", "--neighborhood", "bd:3", "--no-cache", "--quiet"]
    code, _, err = run(capsys, argv + ["--out", str(out)])
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert code == 4 and "unverified" in err
    assert rows[0]["status"] == "unverified" and "re-verification failed" in rows[0]["error"]


def test_tampered_cache_entry_is_solved_again(capsys, tmp_path):
    # issue 13: a cached PMF replaced by a point mass came back as an optimal row with distortion 0
    cache = tmp_path / "cache"
    argv = ["sweep", "--n", "8", "--eps", "1", "--delta", "0.1", "--neighborhood", "bd:3", "--quiet"]
    argv += ["--cache", str(cache), "--format", "json"]
    code, out, _ = run(capsys, argv)
    first = json.loads(out)[0]
    assert code == 0 and first["status"] == "optimal"
    (entry,) = cache.glob("*.json")
    data = json.loads(entry.read_text())
    data["result"]["pmf"] = [1.0] + [0.0] * 8
    data["result"]["distortion"] = 0.0
    entry.write_text(json.dumps(data))
    code, out, _ = run(capsys, argv)
    again = json.loads(out)[0]
    assert code == 0 and again["status"] == "optimal"
    assert again["distortion"] == pytest.approx(first["distortion"], abs=1e-9)
    assert again["achieved_pdp"] <= 0.1 + 1e-7
    # a cache entry whose stored problem differs (a replaced file) is solved again too
    data = json.loads(entry.read_text())
    data["spec"]["eps"] = 2.0
    entry.write_text(json.dumps(data))
    assert json.loads(run(capsys, argv)[1])[0]["distortion"] == pytest.approx(first["distortion"], abs=1e-9)


def test_output_paths_are_checked_before_any_work(capsys, monkeypatch, tmp_path):
    from optnoise.design.noise import NoiseDesign

    def no_solve(*a, **k):
        raise AssertionError("solved before the output path was checked")

    monkeypatch.setattr(NoiseDesign, "solve", no_solve)
    missing = str(tmp_path / "nope" / "x.json")
    cases = [
        ["sweep", "--n", "8", "--eps", "1:2:3", "--neighborhood", "bd:3", "--no-cache", "--out", missing],
        ["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--out", missing],
        ["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--mps", str(tmp_path / "nope" / "m.mps")],
        ["certify", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--out", missing],
        ["certify", "--n", "8", "--eps", "1", "--neighborhood", "bd:3", "--out", str(tmp_path)],
    ]
    for argv in cases:
        code, _, err = run(capsys, argv)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (argv, err)
    # certify --out DIR used to leave DIR.tmp behind
    assert not Path(str(tmp_path) + ".tmp").exists()


def test_unreachable_dask_scheduler_is_one_line(capsys):
    pytest.importorskip("dask.distributed")
    argv = ["sweep", "--n", "4", "--eps", "1", "--neighborhood", "bd:1", "--no-cache", "--quiet"]
    argv += ["--backend", "dask", "--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "1"]
    code, _, err = run(capsys, argv)
    assert code == 2 and "could not connect" in err and len(err.strip().splitlines()) == 1


def test_output_piped_into_head_is_not_a_traceback():
    # issue 13: BrokenPipeError when piped into head
    exe = Path(sys.executable).with_name("optnoise")
    cmd = f"{exe} sweep --n 8 --eps 0.5:1:40 --neighborhood bd:1 --no-cache --quiet --format json | head -c 10"
    out = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in out.stderr and "Exception ignored" not in out.stderr
    assert out.returncode in (0, 141)
    assert len(out.stderr.strip().splitlines()) <= 1


def test_sigint_stops_a_parallel_sweep_and_keeps_finished_rows(tmp_path):
    # issue 13: SIGINT kept all workers solving for 20 s and exited 130 without writing the CSV
    exe = Path(sys.executable).with_name("optnoise")
    out, cache = tmp_path / "s.csv", tmp_path / "cache"
    # the second point (|M| = 10 at n = 100) takes well over a minute, so it is still running at the signal
    argv = [str(exe), "sweep", "--n", "12,100", "--eps", "1", "--delta", "0.1", "--neighborhood", "bd:10"]
    argv += ["--privacy", "pdp", "--jobs", "2", "--cache", str(cache), "--out", str(out), "--quiet"]
    # SIGINT handled as in a terminal, even when this test runs under a runner that ignores it (a shell
    # starts background jobs with SIGINT ignored, and children inherit that; the CLI then rightly ignores it)
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while not list(cache.glob("*.json")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)  # until the small point is done
    assert proc.poll() is None, proc.communicate()
    assert list(cache.glob("*.json")), "no point finished"
    time.sleep(0.5)  # the large point (a hard MILP) is being solved by a worker
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    assert proc.returncode == 130, err
    assert took < 3.0, took
    assert "interrupted" in err and "Traceback" not in err
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [r["n"] for r in rows] == ["12"] and rows[0]["status"] == "optimal"
    # no worker is left running
    assert subprocess.run(["pgrep", "-f", str(cache)], capture_output=True).stdout.strip() == b""


def _cli_tokens():
    """Fragments of plausible and implausible command lines."""
    flags = ["--n", "--eps", "--delta", "--neighborhood", "--metric", "--privacy", "--minimize", "--max-distortion"]
    flags += ["--solver", "--time-limit", "--mip-gap", "--highs-option", "--cost", "--dim", "--format", "--directed"]
    flags += ["--out", "--mps", "--pmf", "--tol", "--result", "--bits", "--max-loss", "--design", "--value"]
    flags += ["--count", "--seed", "--jobs", "--no-cache", "--quiet", "--backend", "--scheduler", "--bogus", "-x"]
    values = ["4", "8", "0", "-1", "1", "0.5", "1e-9", "nan", "inf", "-inf", "50", "2.5", "", " ", "abc", "9" * 25]
    values += ["\u0663", "1,,2", "1:2:3", "0:1:100000000", "bd:3", "sd:1", "shifts:1,2", "shifts:1/2", "bd:0"]
    values += ["shifts:9223372036854775808", "bd:1000000000", "er", "mse", "pdp", "dp", "pdp-kadam", "delta"]
    values += ["distortion", "highs", "cvxpy", "json", "table", "csv", "random_seed=1", "mip_rel_gap=nan"]
    values += ["primal_feasibility_tolerance=0.5", "-1,2,3", "1/2", "{good}", "{deep}", "{true}", "{adir}"]
    values += ["{nodir}", "{res}", "{negpmf}"]
    commands = ["solve", "verify", "certify", "release", "sweep", "figures", "bogus"]
    return commands, flags, values


@pytest.fixture(scope="module")
def fuzz_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    cd = NoiseDesign(n=4, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(2), privacy="dp").solve().certify()
    res = root / "res.json"
    res.write_text(json.dumps(cd.design.solve().to_dict()))
    (root / "deep.json").write_text("[" * 50000 + "]" * 50000)
    (root / "true.json").write_text("true")
    (root / "negpmf.json").write_text("[1.2, -0.2, 0, 0, 0]")
    (root / "adir").mkdir()
    return {
        "good": str(cd.save(root / "good.json")),
        "deep": str(root / "deep.json"),
        "true": str(root / "true.json"),
        "adir": str(root / "adir"),
        "nodir": str(root / "no" / "x.json"),
        "res": str(res),
        "negpmf": str(root / "negpmf.json"),
        "root": root,
    }


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_random_command_lines_never_show_a_traceback(data, fuzz_files, capsys, monkeypatch):
    # issue 13: a hypothesis test drives the parser with random argument lists; every outcome is an
    # exit code with at most a one-line error, never a traceback or an internal error
    commands, flags, values = _cli_tokens()
    command = data.draw(st.sampled_from(commands))
    pairs = data.draw(st.lists(st.tuples(st.sampled_from(flags), st.sampled_from(values)), max_size=7))
    argv = [command]
    if data.draw(st.booleans()):  # start from a valid command line, so that random flags reach the solvers
        argv += {
            "solve": ["--n", "4", "--eps", "1", "--neighborhood", "bd:1"],
            "sweep": ["--n", "4", "--eps", "0.5,1", "--neighborhood", "bd:1"],
            "certify": ["--n", "4", "--eps", "1", "--neighborhood", "bd:1"],
            "verify": ["--pmf", fuzz_files["res"], "--eps", "1", "--neighborhood", "bd:1"],
            "release": ["--design", fuzz_files["good"], "--value", "1"],
        }.get(command, [])
    for flag, value in pairs:
        argv += [flag, value.format(**fuzz_files)] if flag not in ("--directed", "--no-cache", "--quiet") else [flag]
    if command == "figures":
        argv = ["figures", data.draw(st.sampled_from(["bogus", "all --jobs 0", "kadam2024 --jobs -1"]))]
        argv = argv[:1] + argv[1].split()
    if command == "sweep":
        argv += ["--no-cache", "--quiet", "--jobs", "1", "--backend", "process"]
    if command == "release":
        argv = [a if a != "--count" else "--seed" for a in argv]  # large counts would print for long
    if command in ("solve", "certify", "sweep"):
        argv += ["--time-limit", "5"]
    monkeypatch.chdir(fuzz_files["root"])
    code = main(argv)
    out, err = capsys.readouterr()
    event(f"exit {code}")
    assert code in (0, 1, 2, 3, 4), (argv, code, err)
    assert "Traceback" not in err and "internal error" not in err, (argv, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1, (argv, err)


# ---------------------------------------------------------------- optnoise mechanism

MECH = ["mechanism", "--n", "10", "--eps", "1", "--neighbors", "adjacent", "--loss", "abs", "--objective", "bayes"]


def test_mechanism_json_contract_and_out(capsys, tmp_path):
    from optnoise import MechanismDesign

    out_file = tmp_path / "m.json"
    code, out, err = run(capsys, MECH + ["--format", "json", "--out", str(out_file)])
    assert code == 0, err
    d = json.loads(out)
    for key in ("n", "eps", "delta", "neighbors", "pairs", "directed", "outputs", "loss_function", "objective"):
        assert key in d
    for key in ("privacy", "status", "matrix", "loss", "achieved", "actual", "solver", "solve_time_s", "model_size"):
        assert key in d
    assert d["status"] == "optimal" and d["neighbors"] == "adjacent" and len(d["pairs"]) == 20
    assert set(d["achieved"]) == {"dp", "pdp"}
    P = np.array(d["matrix"])
    assert P.shape == (11, 11) and np.allclose(P.sum(axis=1), 1)
    assert d["loss"] == pytest.approx(MechanismDesign(n=10, eps=1.0).solve().loss, rel=1e-9)
    assert json.loads(out_file.read_text()) == d


def test_mechanism_table_and_pairs(capsys):
    code, out, err = run(
        capsys, ["mechanism", "--n", "4", "--eps", "1", "--delta", "0.05", "--neighbors", "pairs:0-1,2-3"]
    )
    assert code == 0, err
    assert "4 ordered pairs" in out and "status      optimal" in out and "matrix" in out
    code, out, _ = run(capsys, ["mechanism", "--n", "4", "--eps", "1", "--neighbors", "pairs:0-1", "--directed"])
    assert code == 0 and "1 ordered pairs" in out


def test_mechanism_exit_codes(capsys, tmp_path):
    # every mechanism has Bayes loss 1 under an all-ones loss matrix: a cap of 0.5 is infeasible (exit 3);
    # a negative cap is bad input (exit 2, in BAD), as --max-distortion -1 is for solve
    ones = tmp_path / "ones.json"
    ones.write_text(json.dumps([[1.0] * 11] * 11))
    code, out, err = run(capsys, MECH + ["--loss", str(ones), "--objective", "delta", "--max-loss", "0.5"])
    assert code == 3 and "infeasible" in out
    for argv, word in (
        (MECH + ["--privacy", "pdp-kadam"], "privacy"),
        (MECH[:-2] + ["--objective", "median"], "objective"),
        (["mechanism", "--n", "4", "--eps", "1", "--neighbors", "pairs:0-9"], "neighbors"),
        (["mechanism", "--n", "4", "--eps", "1", "--neighbors", "pairs:0+1"], "neighbors"),
        (["mechanism", "--n", "4", "--eps", "1", "--prior", "0.5,0.5"], "prior"),
        (["mechanism", "--n", "4", "--eps", "1", "--loss", "huber"], "loss"),
        (["mechanism", "--n", "4", "--eps", "x"], "eps"),
    ):
        code, out, err = run(capsys, argv)
        assert code == 2, (argv, out, err)
        assert err.count("\n") == 1 and word in err and "Traceback" not in err
    design = tmp_path / "d.json"
    code, out, err = run(capsys, MECH + ["--delta", "0.01", "--certify", str(design)])
    assert code == 0 and "certified" in out
    code, out, err = run(capsys, ["release", "--design", str(design), "--value", "0,10", "--count", "4", "--seed", "3"])
    assert code == 0 and len(out.splitlines()) == 4
    assert all(0 <= int(v) <= 10 for line in out.splitlines() for v in line.split(","))


def test_mechanism_solver_and_time_limit_flags(capsys, tmp_path):
    code, out, err = run(capsys, MECH + ["--solver", "cvxpy", "--time-limit", "30", "--format", "json"])
    assert code == 0, err
    assert json.loads(out)["solver"] == "cvxpy"
    code, out, err = run(capsys, MECH + ["--mps", str(tmp_path / "m.mps")])
    assert code == 0 and (tmp_path / "m.mps").exists()


def test_mechanism_sweep_csv(capsys, tmp_path):
    argv = ["mechanism-sweep", "--n", "4,6", "--eps", "0.5:1.5:3", "--delta", "0,0.05", "--loss", "abs,sq"]
    code, out, err = run(capsys, argv + ["--quiet", "--no-cache"])
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 2 * 3 * 2 * 2
    assert all(r["status"] == "optimal" for r in rows)
    r = next(r for r in rows if r["n"] == "6" and r["loss_function"] == "sq" and r["delta"] == "0.05")
    from optnoise import MechanismDesign

    ref = MechanismDesign(n=6, eps=float(r["eps"]), delta=0.05, loss="sq").solve()
    assert float(r["loss"]) == pytest.approx(ref.loss, rel=1e-9)
    code, _, err = run(capsys, ["mechanism-sweep", "--n", "4", "--eps", "1", "--objective", "delta", "--quiet"])
    assert code == 2 and "max_loss" in err


def test_solve_release_clamp(capsys):
    argv = ["solve", "--n", "6", "--eps", "1", "--delta", "0.05", "--neighborhood", "bd:1", "--privacy", "dp"]
    code, out, err = run(capsys, argv + ["--metric", "mse", "--release", "clamp", "--format", "json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["release"] == "clamp" and len(d["pmf"]) == 13 and set(d["achieved"]) == {"dp", "pdp"}
    code, _, err = run(capsys, argv + ["--privacy", "pdp-kadam", "--release", "clamp"])
    assert code == 2 and "privacy" in err


def test_clamp_solve_certify_release_round_trip(capsys, tmp_path):
    argv = ["--n", "6", "--eps", "1", "--delta", "0.05", "--neighborhood", "bd:1", "--privacy", "dp"]
    argv += ["--metric", "mse", "--release", "clamp"]
    res_file, design_file = tmp_path / "r.json", tmp_path / "d.json"
    code, _, err = run(capsys, ["solve", *argv, "--format", "json", "--out", str(res_file)])
    assert code == 0, err
    assert json.loads(res_file.read_text())["shifts"] == [-1, 1]  # signed answer differences: nothing wraps
    code, out, err = run(capsys, ["certify", "--result", str(res_file), "--out", str(design_file)])
    assert code == 0, err
    assert "12 ordered pairs" in out
    code, out, err = run(capsys, ["release", "--design", str(design_file), "--value", "0,6", "--count", "50"])
    assert code == 0, err
    assert all(0 <= int(v) <= 6 for line in out.splitlines() for v in line.split(","))


# --------------------------------------------------------------------------------------------
# pictures: solve --plot and the plot sub-command (issue #15)
# --------------------------------------------------------------------------------------------


def test_solve_plot_writes_png(capsys, tmp_path):
    png = tmp_path / "design.png"
    code, _, _ = run(capsys, SOLVE + ["--plot", str(png)])
    assert code == 0 and png.read_bytes()[:4] == b"\x89PNG"
    code, _, err = run(capsys, SOLVE + ["--plot", str(tmp_path / "design.jpg")])
    assert code == 2 and "must end in .png" in err and err.count("\n") == 1


def test_plot_sweep_csv(capsys, tmp_path):
    csv_path = tmp_path / "sweep.csv"
    code, _, _ = run(
        capsys,
        [
            "sweep",
            "--n",
            "6",
            "--eps",
            "0.5,1,2",
            "--delta",
            "0,0.01",
            "--neighborhood",
            "bd:1",
            "--privacy",
            "dp",
            "--no-cache",
            "--quiet",
            "--out",
            str(csv_path),
        ],
    )
    assert code == 0
    png = tmp_path / "sweep.png"
    code, out, _ = run(
        capsys, ["plot", str(csv_path), "--x", "eps", "--y", "distortion", "--hue", "delta", "--out", str(png)]
    )
    assert code == 0 and "wrote" in out and png.read_bytes()[:4] == b"\x89PNG"
    code, _, err = run(capsys, ["plot", str(csv_path), "--x", "eps", "--y", "nope", "--out", str(png)])
    assert code == 2 and "column 'nope'" in err
    code, _, err = run(
        capsys, ["plot", str(tmp_path / "missing.csv"), "--x", "eps", "--y", "distortion", "--out", str(png)]
    )
    assert code == 2 and err.count("\n") == 1


# --------------------------------------------------------------------------------------------
# strict input: nothing but one error line (or the normal output) on stderr, bounded releases
# --------------------------------------------------------------------------------------------


def _cli_process(argv, cwd):
    """The CLI in a fresh interpreter: Python warnings reach its real stderr there (pytest captures them here)."""
    import os

    import optnoise

    code = "import sys; from optnoise.cli import main; sys.exit(main())"
    root = str(Path(optnoise.__file__).resolve().parents[1])  # the package under test, whatever the cwd
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-c", code, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_stderr_holds_only_the_error_line_or_nothing(tmp_path):
    # --outputs 0,1e308 overflowed the losses (RuntimeWarnings on stderr, exit 0); --logy of a column without
    # positive values leaked matplotlib's UserWarning
    zeros = tmp_path / "zeros.csv"
    zeros.write_text("eps,delta,distortion\n0.5,0,0.3\n1,0,0.2\n2,0,0.1\n")
    some = tmp_path / "some.csv"
    some.write_text("eps,delta,distortion\n0.5,0,0.3\n1,0.01,0.2\n2,0.001,0.1\n")
    png = str(tmp_path / "p.png")
    for argv, code, word in (
        (["mechanism", "--n", "4", "--eps", "1", "--outputs", "0,1e308"], 2, "outputs"),
        (["mechanism", "--n", "4", "--eps", "1", "--outputs", "0,1e308", "--loss", "er"], 2, "outputs"),
        (["plot", str(zeros), "--x", "eps", "--y", "delta", "--logy", "--out", png], 2, "--logy"),
        (["plot", str(zeros), "--x", "delta", "--y", "eps", "--logx", "--out", png], 2, "--logx"),
        (["plot", str(some), "--x", "eps", "--y", "delta", "--logy", "--out", png], 0, None),
        (["mechanism", "--n", "4", "--eps", "1", "--outputs", "0,2,1000000"], 0, None),
    ):
        out = _cli_process(argv, tmp_path)
        assert out.returncode == code, (argv, out.stderr)
        if word is None:
            assert out.stderr == "", (argv, out.stderr)
        else:
            lines = out.stderr.splitlines()
            assert len(lines) == 1 and word in lines[0], (argv, out.stderr)


def test_plot_leaves_out_nonpositive_values_on_a_log_axis(tmp_path):
    from optnoise.plotting.sweeps import plot_sweep

    rows = [{"eps": "0.5", "delta": "0"}, {"eps": "1", "delta": "0.01"}, {"eps": "2", "delta": "-1"}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no matplotlib warning about nonpositive values
        fig = plot_sweep(rows, x="eps", y="delta", logy=True)
    (line,) = fig.axes[0].get_lines()
    assert list(line.get_xdata()) == [1.0] and list(line.get_ydata()) == [0.01]
    with pytest.raises(ValueError, match=r"no row has positive values on the logarithmic axes \('delta' \(--logy\)\)"):
        plot_sweep(rows[:1], x="eps", y="delta", logy=True)


@pytest.fixture(scope="module")
def design_file(tmp_path_factory):
    root = tmp_path_factory.mktemp("release")
    cd = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3), privacy="dp").solve().certify()
    return cd, cd.save(root / "d.json")


def test_release_streams_its_draws_in_bounded_chunks(capsys, monkeypatch, design_file):
    # release --count 1e8 drew and formatted every value at once (~9.5 GB); it now draws and writes
    # RELEASE_CHUNK releases at a time, with the same values a single seeded draw gives
    import optnoise.cli.deploy as D
    from optnoise.deploy.certified import CertifiedDesign

    cd, path = design_file
    sizes = []
    real = CertifiedDesign.release

    def spy(self, q, rng=None):
        sizes.append(np.size(q))
        return real(self, q, rng=rng)

    monkeypatch.setattr(CertifiedDesign, "release", spy)
    monkeypatch.setattr(D, "RELEASE_CHUNK", 8)
    argv = ["release", "--design", str(path), "--value", "3,5,7", "--count", "11", "--seed", "4"]
    code, out, err = run(capsys, argv)
    assert code == 0, err
    assert sizes == [6, 6, 6, 6, 6, 3]  # 2 releases of 3 values per chunk of at most 8 draws, then the last
    ref = real(cd, np.tile([3, 5, 7], (11, 1)), rng=np.random.default_rng(4))
    assert out == "\n".join(",".join(map(str, row)) for row in ref.tolist()) + "\n"
    sizes.clear()
    code, out, err = run(capsys, argv + ["--format", "json"])
    assert code == 0, err
    assert json.loads(out) == {"design": str(path), "seeded": True, "released": ref.tolist()}
    assert max(sizes) <= 8


def test_release_count_is_capped(capsys, design_file):
    from optnoise.cli.deploy import MAX_RELEASES

    _, path = design_file
    code, _, err = run(capsys, ["release", "--design", str(path), "--value", "1", "--count", str(MAX_RELEASES + 1)])
    assert code == 2 and f"count must be an integer >= 1 and <= {MAX_RELEASES}" in err
    code, _, err = run(capsys, ["release", "--design", str(path), "--value", "1,2", "--count", str(MAX_RELEASES)])
    assert code == 2 and "exceeds the limit" in err and len(err.strip().splitlines()) == 1


def test_certify_refuses_its_input_as_output_before_any_work(capsys, monkeypatch, tmp_path):
    """certify --result r.json --out r.json used to overwrite its input; now one line, exit 2, input intact."""
    import os

    from optnoise.design.result import DesignResult

    res = NoiseDesign(n=4, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(1), privacy="dp").solve()
    src = tmp_path / "r.json"
    src.write_text(json.dumps(res.to_dict()))
    before = src.read_bytes()
    (tmp_path / "sub").mkdir()
    os.symlink(src, tmp_path / "link.json")
    os.link(src, tmp_path / "hard.json")

    def no_work(*a, **k):
        raise AssertionError("worked before the output path was checked")

    monkeypatch.setattr(DesignResult, "certify", no_work)
    monkeypatch.chdir(tmp_path / "sub")
    for out in (str(src), os.path.join(os.pardir, "r.json"), str(tmp_path / "link.json"), str(tmp_path / "hard.json")):
        code, _, err = run(capsys, ["certify", "--result", str(src), "--out", out])
        assert code == 2 and len(err.strip().splitlines()) == 1 and "overwrite the input" in err, (out, err)
    assert src.read_bytes() == before


def test_certify_states_the_composed_guarantee(capsys, tmp_path):
    """A composed result certified as a single (eps, 0) release with a confusing "target 1e-15"; now its k-fold
    guarantee is stated, verified and written to the design file's composed block."""
    from optnoise.deploy import load_design
    from optnoise.design.result import DesignResult

    x = np.arange(11)
    f = np.exp(-0.14 * np.minimum(x, 11 - x))
    d = NoiseDesign(n=10, eps=2.0, delta=1e-4, neighborhood=Neighborhood.bd(1), privacy="composed", compositions=20)
    res = DesignResult(d, "feasible", f / f.sum(), "test", 0.0, {})
    src, out = tmp_path / "r.json", tmp_path / "d.json"
    src.write_text(json.dumps(res.to_dict()))
    code, text, err = run(capsys, ["certify", "--result", str(src), "--out", str(out)])
    assert code == 0, err
    assert "20 releases (composed): eps=2" in text and "<= target 0.0001" in text and "1e-15" not in text
    block = json.loads(out.read_text())["composed"]
    assert block["compositions"] == 20 and 0 < block["composed_delta"] <= 1e-4
    assert load_design(out).composed == block
    code, text, err = run(capsys, ["certify", "--result", str(src), "--format", "json"])
    assert code == 0 and json.loads(text)["composed"]["compositions"] == 20
