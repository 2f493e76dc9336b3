"""``--release grid`` in the CLI: solve, certify, release end to end, and one-line refusals (exit 2)."""

from __future__ import annotations

import json
import math

import pytest

from optnoise import NoiseDesign
from optnoise.cli.main import main

GRID = ["solve", "--release", "grid", "--sensitivity", "1", "--resolution", "0.125", "--eps", "1", "--metric", "mse"]


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_solve_certify_release_chain(capsys, tmp_path):
    res, design = tmp_path / "r.json", tmp_path / "d.json"
    code, out, err = run(capsys, GRID + ["--delta", "1e-6", "--format", "json", "--compare", "--out", str(res)])
    assert code == 0, err
    d = json.loads(out)
    api = NoiseDesign(release="grid", sensitivity=1.0, resolution=0.125, eps=1.0, delta=1e-6, metric="mse").solve()
    assert d["release"] == "grid" and d["status"] == "optimal" and d["steps"] == 8
    assert d["distortion"] == pytest.approx(api.distortion, rel=1e-9)
    assert d["baselines"]["laplace"] == pytest.approx(2 * (1 / (1 - 2 * math.log1p(-1e-6))) ** 2)
    code, out, err = run(capsys, ["certify", "--result", str(res), "--out", str(design)])
    assert code == 0, err
    assert "grid" in out and "(query units)" in out
    code, out, err = run(capsys, ["release", "--design", str(design), "--value", "3.14159,-2", "--seed", "1"])
    assert code == 0, err
    vals = [float(v) for v in out.strip().split(",")]
    assert len(vals) == 2 and all((8 * v).is_integer() for v in vals)  # on the grid of width 1/8


def test_certify_from_the_problem_flags(capsys):
    code, out, err = run(capsys, ["certify"] + GRID[1:] + ["--delta", "1e-3"])
    assert code == 0, err
    assert "certified   eps=1" in out


@pytest.mark.parametrize(
    "argv,match",
    [
        (GRID[:6] + ["0.3", "--eps", "1"], "resolution must divide"),
        (["solve", "--release", "grid", "--resolution", "0.5", "--eps", "1"], "sensitivity is required"),
        (["solve", "--n", "4", "--eps", "1", "--neighborhood", "bd:1", "--sensitivity", "1"], "sensitivity applies"),
        (["solve", "--n", "4", "--eps", "1"], "neighborhood is required"),
        (GRID + ["--neighborhood", "bd:1"], "neighborhood does not apply"),
        (GRID + ["--sensitivity", "nan"], "sensitivity"),
        (["sweep", "--release", "grid", "--eps", "1", "--neighborhood", "bd:1"], "neighborhood does not apply"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, match):
    code, out, err = run(capsys, argv)
    assert code == 2 and match in err and len(err.strip().splitlines()) == 1


def test_release_refuses_a_non_finite_value(capsys, tmp_path):
    design = tmp_path / "d.json"
    NoiseDesign(release="grid", sensitivity=1.0, resolution=0.5, eps=1.0, metric="mae").solve().certify().save(design)
    for value in ("nan", "1e300", "x"):
        code, out, err = run(capsys, ["release", "--design", str(design), "--value", value])
        assert code == 2 and "value must be" in err and len(err.strip().splitlines()) == 1


def test_result_class_and_answers_are_release_attributes():
    # cli/deploy read a result file and parsed --value by testing release == "grid" (issue 29)
    from optnoise.design.additive_eval import AdditiveResult
    from optnoise.design.grid import GridResult
    from optnoise.design.releases import get_release

    assert get_release("grid").result_class is GridResult and get_release("grid").real_answers
    assert get_release("additive").result_class is AdditiveResult and not get_release("additive").real_answers
    from optnoise.design import continuous

    # read back (a sweep's cache) for the notions whose bound it re-proves; the others are solved again
    assert get_release("continuous").result_class is continuous.RESULT
    assert get_release("continuous").cached_notions == ("dp", "profile")
