"""``optnoise figures check``: regenerated figure CSVs against the committed ones, within declared tolerances."""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from optnoise.cli.main import main
from optnoise.reproduce import compare
from optnoise.reproduce.compare import EXACT, ROUNDOFF, SOLVER, Tol, check_figures, committed_csvs, compare_csv
from optnoise.reproduce.figures import PAPERS, find_experiments_root, list_scripts

ROOT = find_experiments_root().parent
FIGURES = ROOT / "figures"

TABLE = "series,x,y\nsolver,1,0.5\nsolver,2,0.25\nexact,3,0.125\n"


def _edit(text: str, row: int, column: str, value: str) -> str:
    """``text`` with one cell (data row ``row``, 1-based) replaced."""
    rows = list(csv.reader(io.StringIO(text)))
    rows[row][rows[0].index(column)] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


# --- the cell rule ------------------------------------------------------------------------------


def test_identical_tables_pass():
    assert compare_csv(TABLE, TABLE).ok


def test_exact_allows_one_unit_in_the_last_written_digit_only():
    # two reproductions may round a last-bit difference either way: one unit of the 10th digit passes
    ref = "v\n1.000000000\n9.999999999\n"
    assert compare_csv(ref, "v\n1.000000001\n9.999999998\n").ok
    report = compare_csv(ref, "v\n1.000000003\n9.999999999\n", name="t.csv")
    assert not report.ok
    assert "t.csv: column v: row 1: 1.000000000 -> 1.000000003" in str(report)


def test_perturbed_beyond_tolerance_fails_with_file_column_row_and_sizes():
    tols = {"y": SOLVER}
    bad = _edit(TABLE, 2, "y", "0.2501")  # relative 4e-4 > 1e-6
    report = compare_csv(TABLE, bad, tols, name="paper/fig.csv")
    assert not report.ok
    (line,) = report.problems
    assert line.startswith("paper/fig.csv: column y: row 2: 0.25 -> 0.2501")
    assert "|diff| 0.0001" in line and "relative 0.0004" in line and "rtol 1e-06" in line
    assert "1 difference(s) beyond tolerance" in str(report)


def test_perturbed_within_tolerance_passes():
    ok = _edit(TABLE, 2, "y", repr(0.25 * (1 + 5e-7)))  # inside SOLVER's proven gap 1e-6
    assert compare_csv(TABLE, ok, {"y": SOLVER}).ok
    # the same change is a real difference for an exact column
    assert not compare_csv(TABLE, ok).ok


def test_absolute_tolerance_absorbs_rounding_noise_near_zero_only():
    ref = "d\n2.168404345e-18\n0.5\n"
    assert compare_csv(ref, "d\n1.734723476e-18\n0.5\n", {"d": ROUNDOFF}).ok
    assert not compare_csv(ref, "d\n1.734723476e-18\n0.5\n").ok  # exact by default
    assert not compare_csv(ref, "d\n2.168404345e-18\n0.5000001\n", {"d": ROUNDOFF}).ok


def test_text_nan_inf_and_empty_cells():
    ref = "a,b,c,d\nfeasible,nan,inf,\n"
    assert compare_csv(ref, ref).ok
    for new, col in (
        ("optimal,nan,inf,\n", "a"),
        ("feasible,1,inf,\n", "b"),
        ("feasible,nan,-inf,\n", "c"),
        ("feasible,nan,inf,0\n", "d"),
    ):
        report = compare_csv(ref, "a,b,c,d\n" + new, {k: Tol(rtol=0.5) for k in "abcd"})
        assert [p.split(": ")[1] for p in report.problems] == [f"column {col}"], report.problems


def test_missing_and_extra_rows_and_columns_are_reported():
    fewer_rows = "\n".join(TABLE.splitlines()[:2]) + "\n"
    report = compare_csv(TABLE, fewer_rows, name="f.csv")
    assert report.problems == ["f.csv: missing row(s) 2..3 (3 in the reference, 1 regenerated)"]
    report = compare_csv(fewer_rows, TABLE, name="f.csv")
    assert report.problems == ["f.csv: extra row(s) 2..3 (1 in the reference, 3 regenerated)"]
    renamed = TABLE.replace("series,x,y", "series,x,z")
    report = compare_csv(TABLE, renamed, name="f.csv")
    assert report.problems == ["f.csv: missing column(s) y", "f.csv: extra column(s) z (not in the reference)"]
    # the columns both have are still compared
    report = compare_csv(TABLE, _edit(renamed, 1, "x", "7"), name="f.csv")
    assert any("column x: row 1: 1 -> 7" in p for p in report.problems)


def test_row_restricted_tolerances():
    tols = {"y": SOLVER.only(series="solver")}
    assert compare_csv(TABLE, _edit(TABLE, 1, "y", "0.5000001"), tols).ok  # a solver row
    report = compare_csv(TABLE, _edit(TABLE, 3, "y", "0.1250001"), tols)  # an exact row
    assert not report.ok and f"allowed {EXACT}" in report.problems[0]
    several = {"y": (SOLVER.only(series="solver"), Tol(rtol=0.01).only(series="exact"))}
    assert compare_csv(TABLE, _edit(TABLE, 3, "y", "0.126"), several).ok


@pytest.mark.parametrize("kw", [{"rtol": -1e-9}, {"atol": float("nan")}, {"rtol": float("inf")}, {"atol": True}])
def test_bad_tolerance_names_the_parameter(kw):
    with pytest.raises(ValueError, match=next(iter(kw))):
        Tol(**kw)


# --- the declarations ---------------------------------------------------------------------------


def _header(path: Path) -> list[str]:
    with path.open(newline="") as fh:
        return next(csv.reader(fh))


def _column_values(path: Path, column: str) -> set[str]:
    with path.open(newline="") as fh:
        return {row[column] for row in csv.DictReader(fh)}


@pytest.fixture(scope="module")
def declared():
    tols, problems = compare.declared_tolerances(find_experiments_root())
    assert problems == []
    return tols


def test_every_script_declares_tolerances():
    for paper in PAPERS:
        for script in list_scripts(paper):
            text = script.read_text()
            assert "\nTOLERANCES" in text, f"{paper}/{script.name} declares no TOLERANCES"


def test_declarations_cover_every_committed_csv_and_name_only_real_columns(declared):
    committed = {p.relative_to(FIGURES).as_posix()[: -len(".csv")] for p in FIGURES.glob("*/*.csv")}
    assert set(declared) == committed
    for key, columns in declared.items():
        path = FIGURES / f"{key}.csv"
        header = _header(path)
        for column, tol in columns.items():
            assert column in header, f"{key}.csv has no column {column!r}"
            for t in tol if isinstance(tol, tuple) else (tol,):
                for where_col, value in t.where:
                    assert where_col in header, f"{key}.csv has no column {where_col!r}"
                    assert value in _column_values(path, where_col), f"{key}.csv: no row with {where_col}={value}"


def test_a_script_without_declaration_is_reported(tmp_path):
    exp = tmp_path / "experiments"
    (exp / "count2020").mkdir(parents=True)
    (exp / "count2020" / "fig1.py").write_text("def main(argv=None):\n    return 0\n")
    (exp / "count2020" / "fig2.py").write_text("TOLERANCES = {'fig2': {'x': 1e-3}}\n")
    (exp / "count2020" / "fig3.py").write_text("raise ImportError('no such module')\n")
    _, problems = compare.declared_tolerances(exp)
    assert problems == [
        "count2020/fig1.py: declares no TOLERANCES (a mapping of each CSV it writes to its columns)",
        "count2020/fig2.py: TOLERANCES['fig2'] must map column names to a Tol or a tuple of Tol",
        "count2020/fig3.py: could not be loaded (ImportError: no such module)",
    ]


# --- the whole check, against git -------------------------------------------------------------


def test_committed_csvs_are_the_files_git_holds():
    got = committed_csvs(ROOT)
    assert set(got) == {p.relative_to(FIGURES).as_posix() for p in FIGURES.glob("*/*.csv")}
    for name in ("count2020/fig1.csv", "kadam2024/fig4.csv"):
        shown = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"HEAD:figures/{name}"], capture_output=True, check=True
        ).stdout.decode()
        assert got[name] == shown


@pytest.fixture
def regenerated(tmp_path, declared, monkeypatch):
    """A copy of the committed CSVs (as a regeneration that matched would leave them); tolerances loaded once."""
    monkeypatch.setattr(compare, "declared_tolerances", lambda experiments: (declared, []))
    out = tmp_path / "figures"
    for name, text in committed_csvs(ROOT).items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    return out


def test_check_figures_passes_on_the_committed_csvs(regenerated):
    report = check_figures(regenerated)
    assert report.ok, str(report)
    assert report.compared == len(list(FIGURES.glob("*/*.csv")))


def test_check_figures_fails_on_a_real_difference_and_passes_within_tolerance(regenerated):
    path = regenerated / "beyond" / "composition_k.csv"
    committed = path.read_text()
    row = next(i for i, r in enumerate(csv.DictReader(io.StringIO(committed)), 1) if r["k"] == "2")
    value = float(next(r for r in csv.DictReader(io.StringIO(committed)) if r["k"] == "2")["mse_composed"])
    path.write_text(_edit(committed, row, "mse_composed", repr(value * (1 + 2e-4))))  # the search's spread
    assert check_figures(regenerated).ok
    path.write_text(_edit(committed, row, "mse_composed", repr(value * 1.01)))
    report = check_figures(regenerated)
    assert len(report.problems) == 1
    assert report.problems[0].startswith(f"beyond/composition_k.csv: column mse_composed: row {row}: ")


def test_check_figures_reports_missing_extra_and_undeclared_files(regenerated):
    (regenerated / "count2020" / "fig1.csv").unlink()
    shutil.copy(regenerated / "count2020" / "fig2.csv", regenerated / "count2020" / "fig9.csv")
    report = check_figures(regenerated)
    assert report.problems == [
        "count2020/fig1.csv: missing (in the reference, not regenerated)",
        "count2020/fig9.csv: extra (regenerated, not in the reference)",
    ]
    # against a reference folder instead of git, a CSV no script declares
    ref = regenerated.parent / "reference"
    shutil.copytree(regenerated, ref)
    assert check_figures(regenerated, reference=ref).problems == [
        "count2020/fig9.csv: no figure script declares its tolerances"
    ]


def test_cli_check(capsys, regenerated):
    assert main(["figures", "check", "--out", str(regenerated)]) == 0
    assert "match the reference within their declared tolerances" in capsys.readouterr().out
    path = regenerated / "count2020" / "fig1.csv"
    path.write_text(_edit(path.read_text(), 1, "proposed", "0.9"))
    assert main(["figures", "check", "--out", str(regenerated)]) == 1
    err = capsys.readouterr().err
    assert "count2020/fig1.csv: column proposed: row 1:" in err and "1 difference(s) beyond tolerance" in err


@pytest.mark.parametrize(
    "argv, word",
    [
        (["figures", "check", "--against", "HEAD", "--reference", "x"], "--against"),
        (["figures", "check", "--against", "no-such-revision"], "reference"),
        (["figures", "check", "--out", "/no/such/folder"], "figures folder"),
        (["figures", "check", "--reference", "/no/such/folder"], "reference folder"),
        (["figures", "check", "--against=--output=/tmp/x"], "against"),
        (["figures", "all", "--against", "HEAD"], "check"),
    ],
)
def test_cli_check_bad_input_is_one_line_exit_2(capsys, argv, word):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and word in err[0], err


# --- a figure script under another BLAS thread count -------------------------------------------


@pytest.mark.slow
def test_blas_thread_count_does_not_move_a_figure_beyond_its_tolerances(tmp_path, declared):
    # count2020/fig4: HiGHS LPs and numpy linear algebra; OpenBLAS reads its thread count at start-up
    script = find_experiments_root() / "count2020" / "fig4.py"
    outs = []
    for threads in ("1", "2"):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
        env.update(MPLBACKEND="Agg", PYTHONPATH=str(ROOT))
        out = tmp_path / f"threads{threads}"
        subprocess.run([sys.executable, str(script), "--fast", "--out", str(out)], env=env, check=True, cwd=ROOT)
        outs.append((out / "fig4.csv").read_text())
    report = compare_csv(outs[0], outs[1], declared["count2020/fig4"], name="fig4.csv")
    assert report.ok, str(report)
    assert len(outs[0].splitlines()) > 5
