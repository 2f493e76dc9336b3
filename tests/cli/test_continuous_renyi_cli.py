"""``--release continuous --privacy zcdp|rdp`` in the CLI, and certify refusing continuous designs (exit 2)."""

from __future__ import annotations

import json

from optnoise.cli.main import main

ZCDP = ["solve", "--release", "continuous", "--sensitivity", "1", "--resolution", "0.5", "--metric", "mse"]


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_zcdp_solve_and_certify_refusal(capsys, tmp_path):
    path = tmp_path / "r.json"
    code, out, err = run(capsys, ZCDP + ["--privacy", "zcdp", "--rho", "0.5", "--compare", "--out", str(path)])
    assert code in (0, 5), err
    d = json.loads(path.read_text())
    assert d["design"]["privacy"] == "zcdp" and d["design"]["rho"] == 0.5
    assert d["baselines"] == {"gaussian": 1.0}
    assert d["bound"] <= 1.0 and d["bound"] <= d["distortion"]
    assert "vs gaussian" in out
    # certify: one line on stderr, exit 2, naming the deployable grid release
    code, out, err = run(capsys, ["certify", "--result", str(path)])
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--release grid --sensitivity 1.0 --resolution 0.5" in err and "Traceback" not in err
    code, out, err = run(capsys, ["release", "--design", str(path), "--value", "1"])
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_certify_from_flags_refuses_before_solving(capsys):
    argv = ["certify", "--release", "continuous", "--sensitivity", "1", "--resolution", "0.5", "--eps", "1"]
    code, out, err = run(capsys, argv)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "release grid" in err


def test_rdp_flags(capsys):
    code, out, err = run(capsys, ZCDP + ["--privacy", "rdp", "--rdp", "2:0.5,4:1", "--format", "json"])
    assert code in (0, 5), err
    d = json.loads(out)
    assert d["design"]["rdp"] == [[2.0, 0.5], [4.0, 1.0]]
    assert d["bound"] <= 2.0  # the Gaussian with sigma^2 = 2 meets this budget (mse 2)
