"""``solve --privacy composed --minimize epsilon`` for the real-valued releases: the least composed eps and refusals."""

from __future__ import annotations

import json

import pytest

from optnoise.cli.main import main

EPS_FORM = [
    "--privacy",
    "composed",
    "--compositions",
    "2",
    "--delta",
    "1e-6",
    "--metric",
    "mse",
    "--minimize",
    "epsilon",
]


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("release", ["continuous", "grid"])
def test_least_eps_in_json_and_table(capsys, release):
    base = ["solve", "--release", release, "--sensitivity", "1", "--resolution", "1", *EPS_FORM]
    code, out, err = run(capsys, [*base, "--max-distortion", "25", "--compare", "--format", "json"])
    assert code in (0, 5), err  # feasible (the composed gap is not proven within the requested one)
    d = json.loads(out)
    eps = d["achieved"]["composed_eps"]
    assert d["distortion"] <= 25 * (1 + 1e-9)
    assert 0 < d["bound"] <= eps <= d["baselines"]["laplace"] <= d["baselines"]["gaussian"]
    code, out, err = run(capsys, [*base, "--max-distortion", "25", "--compare"])
    assert code in (0, 5), err
    line = next(x for x in out.splitlines() if x.startswith("eps "))
    assert float(line.split()[1]) == pytest.approx(eps, rel=1e-9)
    assert "vs laplace" in out


def test_missing_cap_is_one_line_exit_2(capsys):
    code, out, err = run(capsys, ["solve", "--release", "continuous", "--sensitivity", "1", *EPS_FORM])
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "max_distortion" in err
