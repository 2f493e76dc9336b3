"""Scripts that chain (issue 32, part 3): exit codes, complete help, sweep rows that keep every budget
field, SIGTERM during a sweep, and messages that state the truth."""

from __future__ import annotations

import csv
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from optnoise.cli import main
from optnoise.design.noise import DESIGN_NOTIONS, NoiseDesign
from optnoise.privacy.fields import BUDGET_FIELD_NAMES

ROOT = Path(__file__).resolve().parents[2]


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def feasible_solves(monkeypatch, design=NoiseDesign):
    """Every solve of ``design`` returns its real result, relabelled 'feasible' (a re-verified, unproven result)."""
    real = design.solve

    def solve(self, *args, **kwargs):
        res = real(self, *args, **kwargs)
        res.status = "feasible"
        return res

    monkeypatch.setattr(design, "solve", solve)


SOLVE = ["solve", "--n", "6", "--eps", "1", "--delta", "0.01", "--neighborhood", "bd:1", "--privacy", "dp"]


def test_a_feasible_result_exits_0_and_5_only_when_optimality_is_required(capsys, monkeypatch):
    # every composed solve exited 5, so `optnoise solve ... && optnoise certify ...` stopped
    feasible_solves(monkeypatch)
    code, out, _ = run(capsys, SOLVE + ["--solver", "highs", "--format", "json"])
    assert code == 0 and json.loads(out)["status"] == "feasible"
    code, _, _ = run(capsys, SOLVE + ["--solver", "highs", "--require-optimal"])
    assert code == 5
    sweep = ["sweep", "--n", "6", "--eps", "1,2", "--delta", "0.01", "--neighborhood", "bd:1", "--privacy", "dp"]
    sweep += ["--solver", "highs", "--no-cache", "--quiet"]
    code, out, _ = run(capsys, sweep)
    assert code == 0 and {r["status"] for r in csv.DictReader(out.splitlines())} == {"feasible"}
    code, _, err = run(capsys, sweep + ["--require-optimal"])
    assert code == 5 and "2 row(s) are not 'optimal'" in err
    # an optimal result exits 0 either way
    monkeypatch.undo()
    assert run(capsys, SOLVE + ["--solver", "highs", "--require-optimal"])[0] == 0


def test_mechanism_takes_require_optimal(capsys, monkeypatch):
    from optnoise.design.mechanism import MechanismDesign

    feasible_solves(monkeypatch, MechanismDesign)
    argv = ["mechanism", "--n", "3", "--eps", "1", "--solver", "highs"]
    assert run(capsys, argv)[0] == 0
    assert run(capsys, argv + ["--require-optimal"])[0] == 5


def _subparsers():
    from optnoise.cli.main import build_parser

    parser = build_parser()
    action = next(a for a in parser._actions if a.choices and "solve" in a.choices)
    return parser, action.choices


def test_help_states_every_notion_default_and_budget_flag():
    parser, commands = _subparsers()
    for name in ("solve", "sweep", "certify"):
        text = " ".join(commands[name].format_help().split())
        for notion in DESIGN_NOTIONS:
            assert notion in text, (name, notion)
        for field in BUDGET_FIELD_NAMES:  # solve --help had no --discretization nor --alphas
            assert f"--{field} " in text, (name, field)
    for name, sub in commands.items():
        for action in sub._actions:
            if not action.option_strings or action.default in (None, False, [], "==SUPPRESS=="):
                continue
            shown = sub._get_formatter()._get_help_string(action) or ""
            # argparse prints no line at all for a flag without help
            assert action.help and "default" in shown, (name, action.option_strings)


def test_every_exit_code_is_documented():
    import optnoise.cli.args as A
    from optnoise.cli.main import EXIT_CODES, build_parser

    codes = {v for k, v in vars(A).items() if k.startswith("EXIT_") and isinstance(v, int)}
    assert codes == set(EXIT_CODES) and {0, 1, 2, 3, 4, 5, 70, 130, 141, 143} <= codes
    epilog = " ".join(build_parser().format_help().split())
    table = (ROOT / "docs" / "guide" / "cli.md").read_text()
    section = table[table.index("## Exit codes") :]
    documented = {int(m) for m in re.findall(r"^\| (\d+) \|", section, flags=re.M)}
    assert documented == codes
    listed = {int(m) for m in re.findall(r"(?:^|;) (\d+) ", epilog.split("exit codes:")[1])}
    assert listed == codes


def test_the_guide_names_every_notion_and_budget_flag():
    text = (ROOT / "docs" / "guide" / "cli.md").read_text()
    solve = text[text.index("## `solve`") : text.index("```{code-cell}", text.index("## `solve`"))]
    for notion in DESIGN_NOTIONS:
        assert f"`{notion}`" in solve, notion
    for field in BUDGET_FIELD_NAMES:
        assert f"--{field}" in solve, field


def test_budget_flags_reach_the_design():
    from optnoise.cli.main import build_parser
    from optnoise.cli.solve import design_from_args

    base = ["solve", "--n", "6", "--neighborhood", "bd:1"]
    a = build_parser().parse_args(base + ["--privacy", "zcdp", "--rho", "0.5", "--alphas", "2,4.5,8"])
    assert design_from_args(a).budget.alphas == (2.0, 4.5, 8.0)
    composed = ["--privacy", "composed", "--eps", "1", "--delta", "1e-5", "--compositions", "3"]
    a = build_parser().parse_args(base + composed + ["--discretization", "1e-3"])
    design = design_from_args(a)
    assert (design.compositions, design.discretization) == (3, 1e-3)


def test_sweep_points_and_rows_keep_every_budget_field(capsys, tmp_path):
    from optnoise.cli.sweeps import ROW_KEYS, grid_points

    # rows for k = 2, 6, 10 could not be told apart: every budget field is a column, and a point keeps its k
    assert set(BUDGET_FIELD_NAMES) <= set(ROW_KEYS) and "achieved_composed_eps" in ROW_KEYS
    pts = grid_points(
        n=[6], eps=[1.0], delta=[1e-5], neighborhoods=["bd:1"], privacy=["composed"], compositions=[2, 6, 10]
    )
    assert [p["compositions"] for p in pts] == [2, 6, 10]
    out = tmp_path / "rows.csv"
    argv = ["sweep", "--n", "4", "--eps", "1", "--delta", "1e-5", "--neighborhood", "bd:1", "--metric", "mse"]
    argv += ["--privacy", "composed", "--compositions", "1", "--discretization", "1e-4,1e-3"]
    code, _, err = run(capsys, argv + ["--no-cache", "--quiet", "--out", str(out)])
    assert code == 0, err
    rows = list(csv.DictReader(out.open()))
    assert [(r["compositions"], float(r["discretization"])) for r in rows] == [("1", 1e-4), ("1", 1e-3)]
    for r in rows:
        achieved = json.loads(r["achieved"])
        assert float(r["achieved_composed_eps"]) == achieved["composed_eps"] <= 1.0 + 1e-6
        # k = 1: the composed delta is the exact single-release one, which must meet the budget
        assert float(r["achieved_composed"]) == float(r["achieved_dp"]) <= 1e-5 * (1 + 1e-6)


def test_zcdp_rows_keep_rho_and_alphas(capsys, tmp_path):
    out = tmp_path / "rows.csv"
    argv = ["sweep", "--n", "4", "--neighborhood", "bd:1", "--metric", "mse", "--privacy", "zcdp"]
    alphas = [1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 32.0, 64.0]
    argv += ["--rho", "0.5,1", "--alphas", ",".join(map(str, alphas)), "--no-cache", "--quiet", "--out", str(out)]
    code, _, err = run(capsys, argv)
    assert code == 0, err
    rows = list(csv.DictReader(out.open()))
    assert [float(r["rho"]) for r in rows] == [0.5, 1.0]
    assert all(json.loads(r["alphas"]) == alphas for r in rows)
    assert all(float(r["achieved_zcdp"]) == json.loads(r["achieved"])["zcdp"] for r in rows)


def test_interrupted_zcdp_sweep_does_not_claim_a_cache(capsys, interrupt_sweep_at, tmp_path):
    calls = interrupt_sweep_at(3)
    cache = tmp_path / "cache"
    argv = ["sweep", "--n", "4", "--neighborhood", "bd:1", "--metric", "mse", "--privacy", "zcdp"]
    code, out, err = run(capsys, argv + ["--rho", "0.25,0.5,1", "--quiet", "--cache", str(cache)])
    assert code == 130 and len(list(csv.DictReader(out.splitlines()))) == 2
    assert not list(cache.glob("*.json"))  # nothing was cached ...
    assert "they are cached" not in err and "2 are not cached" in err  # ... and the message says so
    calls.clear()
    argv = ["sweep", "--n", "6", "--eps", "1,2,3", "--delta", "0.01", "--neighborhood", "bd:1", "--privacy", "dp"]
    code, _, err = run(capsys, argv + ["--solver", "highs", "--quiet", "--cache", str(cache)])
    assert code == 130 and "they are cached" in err and len(list(cache.glob("*.json"))) == 2


def terminate_when(args: list[str], ready, timeout: float = 180) -> tuple[int, str]:
    """Run ``python ARGS``, send it SIGTERM once ``ready()`` holds (while it still runs); its exit code and stderr."""
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + timeout
        while not ready() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert ready() and proc.poll() is None, proc.communicate(timeout=60)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err


def test_sigterm_during_a_sweep_writes_the_finished_rows(tmp_path):
    # the process used to die at once with nothing written; now it stops as on Ctrl-C (exit 143)
    out, ready = tmp_path / "rows.csv", tmp_path / "ready"
    script = tmp_path / "sweep.py"
    script.write_text(
        "import sys, time\n"
        "import optnoise.cli.sweeps as S\n"
        "from optnoise.cli import main\n"
        "real, done = S.run_point, []\n"
        "def slow(p, *a, **k):\n"
        "    if len(done) == 2:\n"
        f"        open({str(ready)!r}, 'w').close()\n"
        "        time.sleep(120)\n"
        "    done.append(p)\n"
        "    return real(p, *a, **k)\n"
        "S.run_point = slow\n"
        "sys.exit(main(['sweep', '--n', '6', '--eps', '1,2,3,4', '--delta', '0.01', '--neighborhood', 'bd:1',\n"
        f"                '--privacy', 'dp', '--solver', 'highs', '--no-cache', '--quiet', '--out', {str(out)!r}]))\n"
    )
    code, err = terminate_when([str(script)], ready.exists)
    assert code == 143, err
    rows = list(csv.DictReader(out.open()))
    assert [float(r["eps"]) for r in rows] == [1.0, 2.0] and "terminated (SIGTERM)" in err


@pytest.mark.parametrize(
    ("grid", "wanted", "unwanted"),
    [
        ("0:10:3", "<= 1000", "2000000"),  # stated the cap of n, not the design's
        ("2000", "<= 1000", "2000000"),
        ("2:3:10", "integers", "range 'start:stop:count'; got"),  # was "not a range"
    ],
)
def test_compositions_grid_messages(capsys, grid, wanted, unwanted):
    argv = ["sweep", "--n", "6", "--eps", "1", "--delta", "1e-5", "--neighborhood", "bd:1", "--privacy", "composed"]
    code, _, err = run(capsys, argv + ["--compositions", grid, "--no-cache", "--quiet"])
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert wanted in err and unwanted not in err and "compositions" in err


def test_the_two_compositions_checks_have_distinct_names():
    import optnoise.design.composed as C
    from optnoise.privacy import accounting

    assert not hasattr(C, "check_compositions")
    with pytest.raises(ValueError, match="<= 1000"):
        C.check_design_compositions(1001)
    assert accounting.check_compositions(1001) == 1001 and accounting.MAX_COMPOSITIONS == 10**6


def test_sigterm_stops_a_parallel_sweep_with_its_rows(tmp_path):
    # with --jobs 2 the parent stops its workers and writes what they finished, as on Ctrl-C
    out, cache = tmp_path / "rows.csv", tmp_path / "cache"
    argv = ["sweep", "--n", "12", "--eps", "0.5:3:2000", "--delta", "0.01", "--neighborhood", "bd:2"]
    argv += ["--privacy", "dp", "--solver", "highs", "--jobs", "2", "--quiet", "--cache", str(cache), "--out", str(out)]
    entry = "import sys; from optnoise.cli import main; sys.exit(main())"
    code, err = terminate_when(["-c", entry, *argv], lambda: len(list(cache.glob("*.json"))) >= 2)
    assert code == 143, err
    rows = list(csv.DictReader(out.open()))
    assert 2 <= len(rows) < 2000 and all(r["status"] == "optimal" for r in rows)
    assert f"wrote the {len(rows)} of 2000 finished rows" in err
