"""``optnoise compose``: the composed guarantee of a solved or certified design, checked against dp-accounting."""

from __future__ import annotations

import json

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from optnoise.cli import main


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_compose_a_solved_and_a_certified_design(capsys, tmp_path):
    res = tmp_path / "res.json"
    # pure 0.5-DP, symmetric +-1: no infinite privacy loss, one pair's PLD is the worst case
    argv = ["solve", "--n", "30", "--eps", "0.5", "--neighborhood", "bd:1", "--metric", "circular-mse"]
    code, _, _ = run(capsys, argv + ["--privacy", "dp", "--format", "json", "--out", str(res)])
    assert code == 0
    code, out, err = run(capsys, ["compose", "--result", str(res), "--compositions", "10", "--delta", "1e-6"])
    assert code == 0 and err == ""
    eps = float(out.split("epsilon = ")[1])
    f = np.array(json.loads(res.read_text())["pmf"])
    g = np.roll(f, -1)
    ref = pld_lib.from_two_probability_mass_functions(
        dict(enumerate(np.log(g))), dict(enumerate(np.log(f))), value_discretization_interval=1e-4, symmetric=False
    )
    assert eps == pytest.approx(ref.self_compose(10).get_epsilon_for_delta(1e-6), abs=10 * 1e-4)
    assert eps <= 5.0 + 1e-9  # ten pure 0.5-DP releases are 5-DP
    design = tmp_path / "design.json"
    assert main(["certify", "--result", str(res), "--out", str(design)]) == 0
    capsys.readouterr()
    code, out, _ = run(
        capsys, ["compose", "--result", str(design), "--compositions", "10", "--eps", "5", "--format", "json"]
    )
    assert code == 0 and json.loads(out)["delta"] <= 1e-9


@pytest.mark.parametrize(
    "extra, what",
    [
        (["--compositions", "2.5", "--delta", "1e-6"], "compositions"),
        (["--compositions", "0", "--delta", "1e-6"], "compositions"),
        (["--compositions", str(10**12), "--delta", "1e-6"], "compositions"),
        (["--compositions", "10"], "--delta"),
        (["--compositions", "10", "--delta", "2"], "delta"),
    ],
)
def test_compose_bad_input_is_one_line(capsys, tmp_path, extra, what):
    res = tmp_path / "res.json"
    res.write_text(json.dumps([0.5, 0.25, 0.25]))
    code, _, err = run(capsys, ["compose", "--result", str(res), *extra])
    assert code == 2 and what in err and len(err.strip().splitlines()) == 1
