"""The figure-script conventions and runner."""

import csv

import matplotlib.pyplot as plt
import pytest

from optnoise.reproduce.figures import PAPERS, FigureScript, find_experiments_root, list_scripts, write_csv


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
    assert rows == [{"x": "0", "y": "1"}, {"x": "1", "y": "0"}]


def test_write_csv_long_format_and_ragged_columns(tmp_path):
    p = write_csv(tmp_path / "t.csv", [{"a": 1}, {"a": 2, "b": "x"}])
    assert open(p).read().splitlines() == ["a,b", "1,", "2,x"]
    with pytest.raises(ValueError, match="equal lengths"):
        write_csv(tmp_path / "u.csv", {"a": [1, 2], "b": [1]})


def test_csv_floats_have_ten_significant_digits(tmp_path):
    # Values that differ only past the 10th digit (as BLAS builds do) write the same bytes.
    a = write_csv(tmp_path / "a.csv", {"x": [0.1 + 0.2, 1 / 3, -0.0, 1e-300, 123456789012.0, 2]})
    b = write_csv(tmp_path / "b.csv", {"x": [0.3, 1 / 3 + 4e-17, 0.0, 1e-300 * (1 + 1e-13), 123456789012.4, 2]})
    assert a.read_bytes() == b.read_bytes()
    assert a.read_text().split() == ["x", "0.3", "0.3333333333", "0", "1e-300", "1.23456789e+11", "2"]


def _png_text_chunks(data: bytes) -> list[bytes]:
    import struct

    chunks, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind in (b"tEXt", b"iTXt", b"zTXt", b"tIME"):
            chunks.append(kind + b":" + data[pos + 8 : pos + 8 + length])
        pos += 12 + length
    return chunks


def test_png_bytes_depend_only_on_the_drawing(tmp_path):
    outs = []
    for sub in ("a", "b"):
        fs = FigureScript("demo", "figX", ["--out", str(tmp_path / sub)])
        fig, ax = plt.subplots()
        ax.plot([0, 1], [1, 0])
        outs.append(fs.save(fig, {"x": [0, 1]}).read_bytes())
    assert outs[0] == outs[1]
    # No software version or timestamp is embedded.
    assert not any(b"Software" in c or c.startswith(b"tIME") for c in _png_text_chunks(outs[0]))


def test_figure_script_cache_folder(tmp_path):
    fs = FigureScript("demo", "figX", ["--out", str(tmp_path / "figs" / "demo")])
    assert fs.cache == (tmp_path / "figs" / ".optnoise-cache" / "demo").resolve()
    default = FigureScript("pf2020", "figX", [])
    assert default.cache == find_experiments_root().parent / ".optnoise-cache" / "pf2020"


def test_runner_runs_scripts_in_workers_and_isolates_failures(tmp_path, monkeypatch):
    import optnoise.reproduce.figures as figures

    root = tmp_path / "repo"
    (root / "optnoise").mkdir(parents=True)
    paper = root / "experiments" / "count2020"
    paper.mkdir(parents=True)
    good = (
        "import matplotlib.pyplot as plt\n"
        "from optnoise.reproduce.figures import FigureScript\n"
        "def main(argv=None):\n"
        "    fs = FigureScript('count2020', NAME, argv)\n"
        "    fig, ax = plt.subplots()\n"
        "    ax.plot([0, 1], [0, 1])\n"
        "    fs.save(fig, {'x': [0, 1]})\n"
        "    return 0\n"
    )
    (paper / "a_good.py").write_text(good.replace("NAME", "'a'"))
    (paper / "b_bad.py").write_text("def main(argv=None):\n    raise RuntimeError('boom')\n")
    (paper / "c_good.py").write_text(good.replace("NAME", "'c'"))
    monkeypatch.setattr(figures, "find_experiments_root", lambda start=None: root / "experiments")
    results = figures.run_figures("count2020", jobs=2, out=tmp_path / "out", progress=False)
    assert [(s.name, rc) for s, rc, _ in results] == [("a_good.py", 0), ("b_bad.py", 1), ("c_good.py", 0)]
    png = tmp_path / "out" / "count2020" / "a.png"
    assert png.exists() and (tmp_path / "out" / "count2020" / "c.csv").exists()
    records = tmp_path / "out" / ".optnoise-cache" / "count2020" / "scripts"
    assert sorted(p.name for p in records.glob("*.json")) == ["a_good.json", "c_good.json"]

    # Up to date: skipped (the PNG is not rewritten). Changed output, changed script or force: run again.
    stamp = png.stat().st_mtime_ns
    figures.run_figures("count2020", jobs=1, out=tmp_path / "out", progress=False)
    assert png.stat().st_mtime_ns == stamp
    png.write_bytes(b"edited")
    figures.run_figures("count2020", jobs=1, out=tmp_path / "out", progress=False)
    assert png.read_bytes() != b"edited"
    stamp = png.stat().st_mtime_ns
    (paper / "a_good.py").write_text(good.replace("NAME", "'a'") + "# changed\n")
    figures.run_figures("count2020", jobs=1, out=tmp_path / "out", progress=False)
    assert png.stat().st_mtime_ns != stamp
    stamp = png.stat().st_mtime_ns
    figures.run_figures("count2020", jobs=1, out=tmp_path / "out", progress=False, force=True)
    assert png.stat().st_mtime_ns != stamp


def test_runner_caps_its_workers(tmp_path, monkeypatch):
    # figures --jobs 1000 started a thousand processes: jobs is capped (JOBS_PER_CORE per core) and
    # never more workers start than there are scripts
    import concurrent.futures

    import optnoise.reproduce.figures as figures
    from optnoise.engine.validation import max_jobs

    paper = tmp_path / "experiments" / "count2020"
    paper.mkdir(parents=True)
    (paper / "a_ok.py").write_text("def main(argv=None):\n    return 0\n")
    monkeypatch.setattr(figures, "find_experiments_root", lambda start=None: tmp_path / "experiments")
    started = []

    class Pool(concurrent.futures.ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            started.append(kwargs["max_workers"])
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Pool)
    results = figures.run_figures("count2020", jobs=max_jobs(), out=tmp_path / "out", progress=False, force=True)
    assert started == [1] and [rc for _, rc, _ in results] == [0]
    for bad in (0, max_jobs() + 1, 2**64 + 1, 2.0, True):
        with pytest.raises(ValueError, match="jobs"):
            figures.run_figures("count2020", jobs=bad, progress=False)
    assert started == [1]


def _drawn(fig) -> list:
    """Every data coordinate a figure draws, in a comparable form (after ``FigureScript.save`` rounded them)."""
    import numpy as np

    out = []
    for ax in fig.get_axes():
        out += [np.asarray(line.get_xydata()).tolist() for line in ax.lines]
        for coll in ax.collections:
            out.append(np.asarray(coll.get_offsets()).tolist())
            out += [np.asarray(p.vertices).tolist() for p in coll.get_paths() if not hasattr(coll, "get_sizes")]
        out += [list(p.get_bbox().bounds) for p in ax.patches]
        out += [list(t.get_position()) for t in ax.texts]
        out += [list(ax.get_xlim()), list(ax.get_ylim())]
    return out


def _demo_figure(scale: float):
    import numpy as np

    x = np.round(np.linspace(0.1, 3.0, 30), 6)
    y = np.round(np.exp(-x) / 3, 7) * scale
    fig, (ax, bx) = plt.subplots(1, 2)
    ax.plot(x, y)
    ax.scatter(x, y)
    ax.fill_between(x, y, 2 * y)
    ax.errorbar(x[:5], y[:5], yerr=y[:5] / 10)
    ax.axvspan(x[3], x[7], alpha=0.2)
    ax.annotate("peak", (x[0], y[0]), xytext=(x[2], y[2]))
    ax.set_ylim(0, 1.3 * y.max())
    bx.bar(x[:8], y[:8], width=0.05)
    bx.step(x, y)
    bx.text(x[4], y[4], "t")
    return fig, {"x": x, "y": y}


def test_equal_csvs_draw_equal_pictures(tmp_path):
    # the same numbers up to last bits (as another BLAS or CPU computes them): equal CSVs, and the
    # PNGs are drawn from the numbers as tabled, so every drawn coordinate is the same float
    drawn, files = [], []
    for i, scale in enumerate((1.0, 1.0 + 3e-14)):
        fig, table = _demo_figure(scale)
        FigureScript("demo", "figX", ["--out", str(tmp_path / str(i))]).save(fig, table)
        drawn.append(_drawn(fig))
        files.append({p.suffix: p.read_bytes() for p in (tmp_path / str(i)).iterdir()})
    assert files[0][".csv"] == files[1][".csv"]
    assert drawn[0] == drawn[1]
    assert files[0][".png"] == files[1][".png"]


def test_a_real_difference_still_draws_differently(tmp_path):
    drawn = []
    for i, scale in enumerate((1.0, 1.001)):
        fig, table = _demo_figure(scale)
        FigureScript("demo", "figX", ["--out", str(tmp_path / str(i))]).save(fig, table)
        drawn.append(_drawn(fig))
    assert drawn[0] != drawn[1]
    assert (tmp_path / "0" / "figX.png").read_bytes() != (tmp_path / "1" / "figX.png").read_bytes()
