"""``optnoise compose`` at delta = 0 and eps = 0, its grid bounds, and the solve command's progress bar."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from optnoise.cli import main


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def pure_result(tmp_path_factory):
    """A pure 0.7-DP design (every mass positive: no infinite privacy loss)."""
    path = tmp_path_factory.mktemp("compose") / "res.json"
    argv = ["solve", "--n", "12", "--eps", "0.7", "--neighborhood", "bd:1", "--metric", "circular-mse"]
    assert main(argv + ["--privacy", "dp", "--format", "json", "--out", str(path)]) == 0
    return path


def _max_loss(path):
    f = np.array(json.loads(path.read_text())["pmf"], dtype=float)
    assert np.all(f > 0)
    return max(float(np.max(np.abs(np.log(f) - np.log(np.roll(f, s))))) for s in (1, -1))


def test_delta_zero_is_the_exact_pure_eps(capsys, pure_result):
    """k pure releases compose to k times the largest loss exactly; the PLD's tail truncation gave inf."""
    code, out, err = run(capsys, ["compose", "--result", str(pure_result), "--compositions", "3", "--delta", "0"])
    assert code == 0 and "inf" not in out
    eps = float(out.split("epsilon = ")[1])
    assert eps == pytest.approx(3 * _max_loss(pure_result), rel=1e-9)
    assert eps <= 3 * 0.7 * (1 + 1e-6)


def test_eps_zero_is_accepted(capsys, pure_result):
    code, out, _ = run(
        capsys, ["compose", "--result", str(pure_result), "--compositions", "2", "--eps", "0", "--format", "json"]
    )
    assert code == 0 and 0.0 < json.loads(out)["delta"] <= 1.0


@pytest.mark.parametrize("h", ["800", "2", "1e-300", "0"])
def test_discretization_out_of_range_is_one_short_line(capsys, pure_result, h):
    argv = ["compose", "--result", str(pure_result), "--compositions", "2", "--delta", "1e-6", "--discretization", h]
    code, out, err = run(capsys, argv)
    assert code == 2 and out == ""
    assert "discretization" in err and err.count("\n") == 1 and len(err) < 200
    if h != "0":
        assert "[1e-09, 1]" in err


def test_solve_shows_progress_for_composed_on_a_terminal_unless_quiet(capsys, monkeypatch):
    argv = ["solve", "--n", "8", "--neighborhood", "bd:1", "--privacy", "composed", "--compositions", "2"]
    argv += ["--eps", "1", "--delta", "1e-5", "--time-limit", "2", "--format", "json"]
    _, out, err = run(capsys, argv)
    assert err == "" and json.loads(out)["status"] in ("time_limit", "feasible", "optimal")  # not a terminal
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    _, out, err = run(capsys, argv)
    assert "composed" in err and "check" in err
    json.loads(out)  # stdout stays the JSON document
    _, out, err = run(capsys, argv + ["--quiet"])
    assert err == ""


def test_mip_gap_with_a_composed_design_is_refused(capsys):
    argv = ["solve", "--n", "8", "--neighborhood", "bd:1", "--privacy", "composed", "--compositions", "2"]
    code, _, err = run(capsys, argv + ["--eps", "1", "--delta", "1e-5", "--mip-gap", "0.01"])
    assert code == 2 and "mip_gap" in err and err.count("\n") == 1
