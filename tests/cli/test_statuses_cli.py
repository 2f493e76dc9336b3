"""Statuses and tolerances from the command line (issue #24, section 2): one line, exit 2 for a tolerance
that proves nothing; exit 5 for a feasible (not proven optimal) result."""

from __future__ import annotations

import json

import numpy as np

from optnoise.cli import main


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_verify_refuses_a_tolerance_that_hides_a_leak(capsys, tmp_path):
    # the issue: `verify --tol 1` passed a PMF whose true delta is 0.9
    leaky = tmp_path / "leaky.json"
    leaky.write_text(json.dumps([0.9, 0.1, 0.0]))
    base = ["verify", "--pmf", str(leaky), "--eps", "1", "--neighborhood", "sd:1", "--delta", "0.1"]
    code, _, err = run(capsys, base + ["--tol", "1"])
    assert code == 2 and "tol" in err and "at most" in err and len(err.strip().splitlines()) == 1
    code, out, _ = run(capsys, base + ["--tol", "1e-9"])
    assert code == 1 and "FAIL" in out


def test_a_tiny_claimed_delta_is_not_met_through_an_absolute_slack(capsys, tmp_path):
    # the issue: a claim of delta = 1e-15 (or 0) was passed by delta = 9e-13 through the absolute 1e-12
    # the two-sided geometric on the ring of 41 (pure 1-DP, every ratio between distances d and d+1 tight),
    # with the mass at distance 19 raised by 3e-4: its ratio exceeds e^1 by 3e-4 (far beyond the 1e-6 eps
    # slack) while its hockey-stick delta is only ~8e-13, below the old absolute 1e-12
    d = np.minimum(np.arange(41), 41 - np.arange(41))
    f = np.exp(-d.astype(float))
    f[19] *= 1 + 3e-4
    f /= f.sum()
    from optnoise.privacy.curves import delta_dp

    assert 5e-13 < delta_dp(f, [1, -1], 1.0) < 1e-12
    path = tmp_path / "f.json"
    path.write_text(json.dumps(f.tolist()))
    for claim in ("1e-15", "0"):
        argv = ["verify", "--pmf", str(path), "--eps", "1", "--neighborhood", "bd:1", "--delta", claim]
        code, out, _ = run(capsys, argv + ["--privacy", "dp"])
        assert code == 1 and "FAIL" in out, (claim, out)


def test_mip_gap_bounds_and_the_feasible_exit_code(capsys):
    argv = ["solve", "--n", "8", "--eps", "1.5", "--delta", "0.1238", "--neighborhood", "bd:3", "--directed"]
    code, _, err = run(capsys, argv + ["--mip-gap", "1e300"])
    assert code == 2 and "mip_gap" in err and len(err.strip().splitlines()) == 1
    code, out, _ = run(capsys, argv + ["--mip-gap", "0.5", "--solver", "highs", "--format", "json"])
    d = json.loads(out)
    assert code == 0 and d["status"] in ("optimal", "feasible")  # a re-verified guarantee exits 0 (issue 32)
    assert d["bound"] is not None and d["bound"] <= d["distortion"] + 1e-12
    strict = ["--mip-gap", "0.5", "--solver", "highs", "--format", "json", "--require-optimal"]
    code, out, _ = run(capsys, argv + strict)
    assert (code, json.loads(out)["status"]) in ((0, "optimal"), (5, "feasible"))


def test_certify_a_feasible_result_only_when_asked(capsys, tmp_path):
    # a feasible result meets its guarantee without a proof of optimality: certify states why it
    # refuses, and --allow-suboptimal certifies its solution (the certificate is about privacy only)
    plain = tmp_path / "p.json"
    argv = ["solve", "--n", "8", "--eps", "1", "--delta", "0.01", "--neighborhood", "bd:1", "--privacy", "dp"]
    assert run(capsys, argv + ["--metric", "mse", "--format", "json", "--out", str(plain)])[0] == 0
    d = json.loads(plain.read_text())
    d["status"] = "feasible"
    feasible = tmp_path / "f.json"
    feasible.write_text(json.dumps(d))
    code, _, err = run(capsys, ["certify", "--result", str(feasible)])
    assert code == 5 and "--allow-suboptimal" in err and len(err.strip().splitlines()) == 1
    code, out, _ = run(capsys, ["certify", "--result", str(feasible), "--allow-suboptimal", "--format", "json"])
    cert = json.loads(out)
    assert code == 0 and cert["certificate"]["eps"] == 1.0 and cert["solver"]["status"] == "feasible"


def test_certify_a_composed_result(capsys, tmp_path):
    # composed designs are feasible for k >= 2 (optimality is not provable): certify takes them as they
    # are, checks the single release exactly and recomputes the composed guarantee of the exact weights
    res, cert = tmp_path / "r.json", tmp_path / "c.json"
    argv = ["solve", "--n", "12", "--neighborhood", "bd:1", "--metric", "circular-mse", "--privacy", "composed"]
    code, _, _ = run(capsys, argv + ["--compositions", "2", "--eps", "1", "--delta", "1e-5", "--out", str(res)])
    assert code == 0 and json.loads(res.read_text())["status"] == "feasible"  # chains: solve && certify
    code, out, _ = run(capsys, ["certify", "--result", str(res), "--out", str(cert)])
    assert code == 0 and "2 releases (composed): eps=1" in out and "<= target 1e-05" in out
    code, out, _ = run(capsys, ["compose", "--result", str(cert), "--compositions", "2", "--delta", "1e-5"])
    assert code == 0 and float(out.split("=")[-1]) <= 1.0


def test_python_dash_m_runs_the_command():
    import subprocess
    import sys

    argv = [sys.executable, "-m", "optnoise.cli", "--version"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("optnoise ") and out.stderr == ""
