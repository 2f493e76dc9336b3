"""Every budget notion is reachable from the command line (issue #25, deliverable 3)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.cli import main

BASE = ["--n", "20", "--neighborhood", "bd:1", "--metric", "circular-mse", "--solver", "auto"]


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "flags, api",
    [
        (["--privacy", "zcdp", "--rho", "0.5"], {"privacy": "zcdp", "rho": 0.5}),
        (["--privacy", "rdp", "--rdp", "2:0.5,8:1"], {"privacy": "rdp", "rdp": [(2, 0.5), (8, 1.0)]}),
        (
            ["--privacy", "profile", "--profile", "0.5:0.1,1:0.01"],
            {"privacy": "profile", "profile": [(0.5, 0.1), (1, 0.01)]},
        ),
    ],
)
def test_solve_reaches_every_budget_notion(capsys, flags, api):
    code, out, err = run(capsys, ["solve", *BASE, *flags, "--format", "json"])
    d = json.loads(out)
    assert code in (0, 5) and d["status"] in ("optimal", "feasible"), err
    # the same design through the API
    ref = NoiseDesign(n=20, neighborhood=Neighborhood.bd(1), metric="circular-mse", **api).solve()
    assert d["distortion"] == pytest.approx(ref.distortion, rel=1e-6)


def test_sweep_sweeps_rho(capsys):
    code, out, err = run(capsys, ["sweep", *BASE, "--privacy", "zcdp", "--rho", "0.3,0.6", "--quiet", "--no-cache"])
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0, err
    assert len(rows) == 2 and float(rows[0]["distortion"]) > float(rows[1]["distortion"])  # more rho, less noise


@pytest.mark.parametrize(
    "flags, what",
    [
        (["--privacy", "zcdp", "--rho", "0.5", "--eps", "1"], "eps"),
        (["--privacy", "zcdp"], "rho"),
        (["--privacy", "rdp", "--rdp", "2:0.5:3"], "rdp"),
        (["--privacy", "rdp", "--rdp", "x:1"], "rdp"),
        (["--privacy", "profile", "--profile", ""], "profile"),
        (["--privacy", "dp", "--rho", "0.5", "--eps", "1"], "rho"),
        (["--privacy", "dp"], "eps"),
        (["--privacy", "nope", "--eps", "1"], "privacy"),
    ],
)
def test_budget_flags_bad_input_is_one_line(capsys, flags, what):
    code, _, err = run(capsys, ["solve", *BASE, *flags])
    assert code == 2 and what in err and len(err.strip().splitlines()) == 1, err
