"""``--release continuous`` in the CLI: the bracket (upper, proven lower bound, gap), baselines, refusals (exit 2)."""

from __future__ import annotations

import json
import math

import pytest

from optnoise import NoiseDesign
from optnoise.cli.main import main

REAL = ["solve", "--release", "continuous", "--sensitivity", "1", "--resolution", "0.125", "--metric", "mae"]


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_json_brackets_the_staircase(capsys):
    # pure DP, l1, eps = 1: the Geng-Viswanath staircase is optimal over all densities, 0.95952 in closed
    # form at gamma* = 1/(1 + e^{eps/2}) (issue 31); the proven bracket must contain it
    code, out, err = run(capsys, REAL + ["--eps", "1", "--delta", "0", "--compare", "--format", "json"])
    assert code in (0, 5), err  # optimal, or feasible with the proven gap reached at this fixed resolution
    d = json.loads(out)
    stair = d["baselines"]["staircase"]
    assert d["bound"] <= 0.95952 <= d["distortion"]
    assert stair == pytest.approx(0.95952, abs=1e-5)
    assert d["gap"] == pytest.approx((d["distortion"] - d["bound"]) / max(1.0, d["distortion"]))
    assert d["m"] == 8 and d["resolution"] == 0.125


def test_table_matches_the_api(capsys):
    code, out, err = run(capsys, REAL + ["--eps", "1", "--delta", "0.1", "--compare"])
    assert code in (0, 5), err
    api = NoiseDesign(release="continuous", sensitivity=1.0, resolution=0.125, eps=1.0, delta=0.1, metric="mae")
    res = api.solve()
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert float(lines["distortion"].split()[1]) == pytest.approx(res.distortion, rel=1e-9)
    assert float(lines["bound"].split()[1]) == pytest.approx(res.bound, rel=1e-9)
    assert lines["resolution"].startswith("resolution  w = 0.125")
    # the truncated Laplace (Geng et al. 2020) is a valid (1, 0.1) mechanism: our optimum cannot exceed it
    tl = float(next(x for x in out.splitlines() if "vs truncated_laplace" in x).split()[2])
    assert res.bound <= res.distortion <= tl
    assert math.isfinite(tl)


def test_gap_flag_refines(capsys):
    # without --resolution, m doubles until the proven gap is met: a loose gap stops at the first m
    argv = [a for a in REAL if a not in ("--resolution", "0.125")] + ["--eps", "1", "--delta", "0.1", "--gap", "0.5"]
    code, out, err = run(capsys, argv + ["--format", "json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["status"] == "optimal" and d["gap"] <= 0.5 and len(d["history"]) == 1


@pytest.mark.parametrize(
    "extra,match",
    [
        (["--eps", "1", "--gap", "2"], "gap must be in"),
        (["--eps", "1", "--resolution", "0.3"], "m = 3 would do"),
        (["--eps", "1", "--neighborhood", "bd:1"], "neighborhood does not apply"),
        (["--eps", "1", "--sensitivity", "-1"], "sensitivity"),
        (["--eps", "1", "--sensitivity", "nan"], "sensitivity"),
    ],
)
def test_bad_input_one_line_exit_2(extra, match, capsys):
    code, out, err = run(capsys, REAL + extra)
    assert code == 2 and match in err and len(err.strip().splitlines()) == 1


def test_sensitivity_is_required(capsys):
    code, _, err = run(capsys, ["solve", "--release", "continuous", "--eps", "1", "--metric", "mae"])
    assert code == 2 and "sensitivity is required" in err and len(err.strip().splitlines()) == 1


def test_other_releases_still_need_a_neighbourhood(capsys):
    code, _, err = run(capsys, ["solve", "--n", "4", "--eps", "1"])
    assert code == 2 and "neighborhood is required" in err
