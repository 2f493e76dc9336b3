"""``optnoise solve --release additive``: no --n, the same numbers as the API, one-line errors (exit 2)."""

import json
import math

import pytest

from optnoise import Neighborhood, NoiseDesign
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
        (ADDITIVE + ["--privacy", "zcdp"], "not yet supported for release='additive'"),
        (ADDITIVE + ["--support", "0"], "support"),
        (["solve", "--n", "5", "--neighborhood", "bd:1", "--eps", "1", "--support", "3"], "support"),
        (ADDITIVE[:-1] + ["foo"], "metric"),
    ],
)
def test_solve_additive_bad_input(capsys, argv, match):
    code, out, err = run(capsys, argv)
    assert code == 2
    assert match in err and len(err.strip().splitlines()) == 1
