"""The optnoise command line: contract keys, exit codes and one-line errors."""

import csv
import io
import json

import numpy as np
import pytest

from optnoise.cli import main

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


@pytest.mark.parametrize("solver", ["highs", "cvxpy"])
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
    assert json.loads(out.stdout)["status"] == "optimal"


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
    from optnoise.design import NoiseDesign

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
]


@pytest.mark.parametrize("argv, word", BAD)
def test_bad_input_is_one_line_exit_2(capsys, argv, word):
    code, _, err = run(capsys, argv)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert word in lines[0]
    assert "Traceback" not in err


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
    code, out, _ = run(capsys, common + ["--delta", "0.1239", "--privacy", "pdp-kadam", "--tol", "1e-8"])
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
