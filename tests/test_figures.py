"""The figure-script conventions and runner."""

import csv

import matplotlib.pyplot as plt
import pytest

from optnoise.figures import PAPERS, FigureScript, find_experiments_root, list_scripts, write_csv


def test_every_paper_has_scripts():
    root = find_experiments_root()
    for paper in PAPERS:
        scripts = list_scripts(paper, root)
        assert scripts, paper
        assert all(not s.name.startswith("_") for s in scripts)


def test_unknown_paper():
    with pytest.raises(ValueError, match="paper must be one of"):
        list_scripts("nature2031")


def test_figure_script_writes_png_and_csv(tmp_path):
    fs = FigureScript("demo", "figX", ["--fast", "--out", str(tmp_path)])
    assert fs.fast and fs.grid(full=[1, 2, 3], fast=[1]) == [1]
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    fs.save(fig, {"x": [0, 1], "y": [1.0, 0.0]})
    assert (tmp_path / "figX.png").stat().st_size > 0
    rows = list(csv.DictReader(open(tmp_path / "figX.csv")))
    assert rows == [{"x": "0", "y": "1.0"}, {"x": "1", "y": "0.0"}]


def test_write_csv_long_format_and_ragged_columns(tmp_path):
    p = write_csv(tmp_path / "t.csv", [{"a": 1}, {"a": 2, "b": "x"}])
    assert open(p).read().splitlines() == ["a,b", "1,", "2,x"]
    with pytest.raises(ValueError, match="equal lengths"):
        write_csv(tmp_path / "u.csv", {"a": [1, 2], "b": [1]})
