"""Figure reproduction: the shared conventions of ``experiments/`` and its runner.

Every figure script lives in ``experiments/<paper>/`` and follows one shape::

    from optnoise.reproduce.compare import SOLVER
    from optnoise.reproduce.figures import FigureScript

    TOLERANCES = {"fig2": {"error_rate": SOLVER}}   # per CSV and column; unlisted columns are exact

    def main(argv=None) -> int:
        fig_script = FigureScript("kadam2024", "fig2", argv, description=__doc__)
        grid = fig_script.grid(full=np.linspace(0, 1, 201), fast=np.linspace(0, 1, 11))
        ...                                  # compute, plot onto a matplotlib figure
        fig_script.save(fig, {"delta": grid, "error_rate": er})
        return 0

    if __name__ == "__main__":
        raise SystemExit(main())

``save`` writes ``<out>/<name>.png`` and ``<out>/<name>.csv`` holding exactly
the plotted numbers, the PNG drawn from them as tabled. Each script also declares
``TOLERANCES``, per CSV and column, for ``optnoise figures check``
(:mod:`optnoise.reproduce.compare`). ``--fast`` selects coarse grids, so the test suite can
run every script in seconds; ``--out`` redirects the output folder (default
``figures/<paper>`` in the repository).

``optnoise figures PAPER`` (and ``make reproduce``) runs the scripts of a
paper through :func:`run_figures`; ``make reproduce`` then runs ``optnoise figures check``.
"""

from __future__ import annotations

import argparse
import csv
import functools
import os
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from optnoise.engine.validation import check_jobs, shown
from optnoise.plotting.files import PNG_METADATA

__all__ = [
    "CSV_DIGITS",
    "FigureScript",
    "draw_as_tabled",
    "PAPERS",
    "find_experiments_root",
    "format_float",
    "list_scripts",
    "run_figures",
    "script_key",
    "tabled",
    "write_csv",
]

#: The papers whose figures optnoise regenerates, in the order ``all`` runs them (``beyond``: the
#: toolkit's own research figures, beyond the papers).
PAPERS = ("kadam2024", "pf2020", "partition2022", "count2020", "composition2021", "beyond")


def find_experiments_root(start: str | os.PathLike | None = None) -> Path:
    """Locate the repository's ``experiments/`` folder.

    Looks in ``start`` (default: the working directory) and its parents, then
    beside the installed package (an editable install keeps the repository
    layout).
    """
    candidates = []
    here = Path(start or os.getcwd()).resolve()
    candidates += [here, *here.parents]
    candidates.append(Path(__file__).resolve().parents[2])
    for base in candidates:
        if (base / "experiments").is_dir() and (base / "optnoise").is_dir():
            return base / "experiments"
    raise ValueError("experiments folder not found: run from the optnoise repository (an editable install)")


def write_csv(path: str | os.PathLike, table: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]]) -> Path:
    """Write a table to CSV.

    ``table`` is either a mapping of equal-length columns or a list of row
    mappings (long format, for data that does not share one x axis).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(table, Mapping):
        cols = {k: np.atleast_1d(np.asarray(v)).ravel() for k, v in table.items()}
        lengths = {len(v) for v in cols.values()}
        if len(lengths) > 1:
            raise ValueError(f"table columns must have equal lengths; got {sorted(lengths)}")
        header = list(cols)
        rows: Iterable[Sequence[Any]] = zip(*cols.values(), strict=True)
    else:
        rows_list = list(table)
        header = list(dict.fromkeys(k for r in rows_list for k in r))
        rows = ([r.get(k, "") for k in header] for r in rows_list)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for row in rows:
            w.writerow([_fmt(x) for x in row])
    return path


#: Significant digits of every float in a figure CSV. Ten digits are far below
#: the plots' resolution and far above the last-bit differences between BLAS
#: builds and CPUs, so an exact computation elsewhere writes the same digits (a
#: last-bit difference can still round the 10th either way); what a solver or a
#: search decides may move more, within the tolerances its script declares
#: (:mod:`optnoise.reproduce.compare`).
CSV_DIGITS = 10


def format_float(x: float | np.floating[Any]) -> str:
    """``x`` with :data:`CSV_DIGITS` significant digits (``-0`` written as ``0``)."""
    s = f"{float(x):.{CSV_DIGITS}g}"
    return "0" if s == "-0" else s


def _fmt(x: Any) -> Any:
    if isinstance(x, (float, np.floating)):
        return format_float(x)
    if isinstance(x, np.integer):
        return int(x)
    return x


def tabled(values: Any) -> Any:
    """``values`` as a figure CSV writes them: floats rounded to :data:`CSV_DIGITS` significant digits.

    Non-float data (integers, strings, dates) is returned unchanged; masks are kept.
    """
    a = np.asanyarray(values)
    if a.dtype.kind != "f":
        return values
    data = np.ma.getdata(a)
    out = np.array([float(format_float(x)) if np.isfinite(x) else x for x in data.ravel()]).reshape(data.shape)
    return np.ma.array(out, mask=np.ma.getmaskarray(a)) if np.ma.isMaskedArray(a) else out


def draw_as_tabled(fig: Any) -> None:
    """Round every data coordinate drawn on ``fig`` with :func:`tabled` (see :meth:`FigureScript.save`).

    Marker shapes (in points) are left alone; only positions in data coordinates are rounded.
    """
    from matplotlib.collections import LineCollection, PathCollection, PolyCollection
    from matplotlib.image import AxesImage
    from matplotlib.patches import Polygon, Rectangle, StepPatch
    from matplotlib.text import Annotation

    for ax in fig.get_axes():
        for line in ax.lines:
            line.set_data(tabled(line.get_xdata(orig=True)), tabled(line.get_ydata(orig=True)))
        for coll in ax.collections:
            if isinstance(coll, LineCollection):
                coll.set_segments([tabled(seg) for seg in coll.get_segments()])
            elif isinstance(coll, PolyCollection) and not isinstance(coll, PathCollection):
                for path in coll.get_paths():
                    path.vertices = tabled(path.vertices)
            offsets = coll.get_offsets()
            if len(offsets):
                coll.set_offsets(tabled(offsets))
        for patch in ax.patches:
            if isinstance(patch, Rectangle):
                patch.set_bounds(*(float(tabled(v)) for v in patch.get_bbox().bounds))
            elif isinstance(patch, Polygon):
                patch.set_xy(tabled(patch.get_xy()))
            elif isinstance(patch, StepPatch):
                values, edges, baseline = patch.get_data()
                patch.set_data(tabled(values), tabled(edges), tabled(baseline) if baseline is not None else None)
        for image in ax.images:
            if isinstance(image, AxesImage):
                image.set_data(tabled(image.get_array()))
                left, right, bottom, top = (float(tabled(v)) for v in image.get_extent())
                image.set_extent((left, right, bottom, top))
        for text in ax.texts:
            text.set_position(_tabled_point(text.get_position()))
            if isinstance(text, Annotation):
                text.xy = _tabled_point(text.xy)
        if getattr(ax, "_colorbar", None) is None:  # a colorbar's limits are its norm's, not data
            # the limits autoscaling derives from the data, or the script set: the same digits
            ax.set_xlim(*tabled(np.asarray(ax.get_xlim(), dtype=float)))
            ax.set_ylim(*tabled(np.asarray(ax.get_ylim(), dtype=float)))


def _tabled_point(xy: Any) -> Any:
    """A text position rounded by :func:`tabled`; unchanged when it is not numeric (dates, categories)."""
    try:
        return tuple(float(v) for v in tabled(np.asarray(xy, dtype=float)))
    except (TypeError, ValueError):
        return xy


#: Files written by :meth:`FigureScript.save` in this process: the runner's record of a script's outputs.
_WRITTEN: list[Path] = []

#: Packages whose versions can change a figure's bytes; part of a script's up-to-date key.
_KEY_PACKAGES = ("numpy", "scipy", "matplotlib", "highspy", "pyscipopt", "cvxpy", "pulp")


def script_key(script: str | os.PathLike, argv: Sequence[str]) -> str:
    """Hash of everything a figure script's outputs depend on.

    The script and every module of its paper folder (helpers included), every module of the
    installed ``optnoise``, the data files (:func:`optnoise.reproduce.datasets.data_fingerprint`), the
    arguments, and the versions of Python and of the numerical and plotting packages.
    """
    import hashlib
    import importlib.metadata
    import json
    import platform

    script = Path(script)
    h = hashlib.sha256()
    pkg = Path(__file__).resolve().parents[1]  # the whole optnoise package
    for f in sorted(script.parent.glob("*.py")):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    for f in sorted(pkg.rglob("*.py")):
        h.update(f.relative_to(pkg).as_posix().encode())
        h.update(f.read_bytes())
    versions: dict[str, str | None] = {}
    for name in _KEY_PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    extra = {"script": script.name, "argv": list(argv), "python": platform.python_version(), "versions": versions}
    h.update(json.dumps(extra, sort_keys=True).encode())
    h.update(_data_key().encode())
    return h.hexdigest()[:24]


@functools.lru_cache(maxsize=1)
def _data_key() -> str:
    """:func:`optnoise.reproduce.datasets.data_fingerprint`, once per (worker) process."""
    from optnoise.reproduce.datasets import data_fingerprint

    return data_fingerprint()


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


class FigureScript:
    """Command-line conventions and output writer shared by every figure script.

    Parameters
    ----------
    paper : str
        Folder name under ``experiments/`` and ``figures/``.
    name : str
        Output stem, e.g. ``"fig5a"``; files are ``<name>.png`` and ``<name>.csv``.
    argv : list of str, optional
        Command-line arguments (``--fast``, ``--out DIR``); ``None`` reads ``sys.argv``.
    description : str, optional
        Shown by ``--help``.
    """

    def __init__(self, paper: str, name: str, argv: Sequence[str] | None = None, *, description: str | None = None):
        parser = argparse.ArgumentParser(prog=f"{paper}/{name}", description=description)
        parser.add_argument("--fast", action="store_true", help="coarse grids, for tests (seconds)")
        parser.add_argument("--out", default=None, help="output folder (default figures/<paper>)")
        args = parser.parse_args(argv)
        self.paper = paper
        self.name = name
        self.fast: bool = bool(args.fast)
        if args.out is None:
            self.out = find_experiments_root().parent / "figures" / paper
        else:
            self.out = Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        import matplotlib

        matplotlib.use("Agg")

    @property
    def cache(self) -> Path:
        """Folder of this paper's cached solves (:mod:`optnoise.engine.cache`).

        ``.optnoise-cache/<paper>`` at the repository root for the default output folder, else
        beside ``--out`` (so the tests' fast runs never share entries with a full reproduction).
        Entries are keyed by everything that determines a result, so a second ``make reproduce``
        re-plots every figure without solving again.
        """
        default = (find_experiments_root().parent / "figures" / self.paper).resolve()
        if self.out.resolve() == default:
            return find_experiments_root().parent / ".optnoise-cache" / self.paper
        return self.out.resolve().parent / ".optnoise-cache" / self.paper

    def grid(self, *, full: Any, fast: Any) -> Any:
        """Pick the full or the coarse version of a parameter grid."""
        return fast if self.fast else full

    def save(self, fig: Any, table: Any, *, name: str | None = None, extra: Mapping[str, Any] | None = None) -> Path:
        """Write ``<name>.png`` (150 dpi, fixed metadata) and ``<name>.csv``; close the figure.

        ``extra`` maps further CSV stems to their tables (a figure whose panels have different columns);
        each is written as ``<stem>.csv`` and declares its own tolerances.

        The picture is drawn from the numbers as tabled: every plotted coordinate (lines, markers,
        bars, spans, filled areas, error bars, images, text positions and the axis limits) is
        first rounded to the :data:`CSV_DIGITS` significant digits the CSV writes
        (:func:`draw_as_tabled`), so two runs whose CSVs are equal draw equal PNGs, even where
        their floats differ in the last bits (as BLAS builds and CPUs make them).
        """
        import matplotlib.pyplot as plt

        stem = name or self.name
        png = self.out / f"{stem}.png"
        draw_as_tabled(fig)
        fig.savefig(png, dpi=150, bbox_inches="tight", metadata=PNG_METADATA)
        plt.close(fig)
        write_csv(self.out / f"{stem}.csv", table)
        _WRITTEN.extend([png, self.out / f"{stem}.csv"])
        for other, rows in (extra or {}).items():
            write_csv(self.out / f"{other}.csv", rows)
            _WRITTEN.append(self.out / f"{other}.csv")
        return png


def list_scripts(paper: str, root: Path | None = None) -> list[Path]:
    """The figure scripts of one paper, in a stable order."""
    root = root or find_experiments_root()
    folder = root / paper
    if not folder.is_dir():
        raise ValueError(f"paper must be one of {', '.join(PAPERS)}, or 'all'; got {shown(paper)}")
    return sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))


def _run_script(script: str, argv: list[str], cwd: str, record: str | None) -> tuple[int, float, str, bool]:
    """Run one figure script's ``main(argv)`` in this (worker) process.

    Returns the return code, seconds, the tail of its stderr, and whether it was skipped. With
    ``record`` (a JSON file), a script whose :func:`script_key` and outputs (same bytes) match the
    record is skipped; after a successful run the record is rewritten. Runs in a long-lived worker,
    so interpreter start-up (numpy, scipy, matplotlib, optnoise) is paid once per worker, not per
    script. Matplotlib's settings are reset to those of a fresh process first, so the PNGs are the
    same bytes as a script run on its own.
    """
    import contextlib
    import io
    import json
    import runpy
    import traceback

    import matplotlib

    t0 = time.perf_counter()
    os.chdir(cwd)
    key = script_key(script, argv) if record else None
    if record and Path(record).exists():
        try:
            rec = json.loads(Path(record).read_text())
            if (
                rec.get("key") == key
                and rec["outputs"]
                and all(Path(f).exists() and _sha(Path(f)) == digest for f, digest in rec["outputs"].items())
            ):
                return 0, time.perf_counter() - t0, "", True
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass  # an unreadable record: run the script
    matplotlib.use("Agg")
    matplotlib.rcParams.update(matplotlib.rcParamsOrig)
    import matplotlib.pyplot as plt

    err = io.StringIO()
    saved_path = list(sys.path)
    del _WRITTEN[:]
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = runpy.run_path(script, run_name="optnoise_figure_script")["main"](argv)
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception:
        rc = 1
        err.write(traceback.format_exc())
    finally:
        sys.path[:] = saved_path
        plt.close("all")
    rc = int(rc or 0)
    if record and rc == 0 and _WRITTEN:
        path = Path(record)
        path.parent.mkdir(parents=True, exist_ok=True)
        outputs = {str(Path(f).resolve()): _sha(Path(f)) for f in _WRITTEN}
        path.write_text(json.dumps({"key": key, "outputs": outputs}, indent=1))
    return rc, time.perf_counter() - t0, err.getvalue()[-4000:], False


def run_figures(
    paper: str,
    *,
    fast: bool = False,
    jobs: int = 1,
    out: str | os.PathLike | None = None,
    progress: bool = True,
    force: bool = False,
) -> list[tuple[Path, int, float]]:
    """Run every figure script of ``paper`` (or of ``"all"`` papers) in ``jobs`` worker processes.

    Returns one ``(script, returncode, seconds)`` triple per script. Workers are spawned once
    and run one script after another (each script's ``main``), so interpreter start-up is paid
    per worker, not per script; a script that raises is reported with return code 1 and its
    traceback on stderr, and the others go on.

    A script is skipped when it is up to date: the record of its last successful run (in the
    paper's cache folder, ``.optnoise-cache/<paper>/scripts/``) has the same :func:`script_key`
    and its outputs still hold the bytes it wrote. ``force=True`` runs every script.
    Whether skipped or run, each script's solves are cached (:attr:`FigureScript.cache`).
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from tqdm import tqdm

    jobs = check_jobs(jobs)
    root = find_experiments_root()
    papers = [p for p in PAPERS if (root / p).is_dir()] if paper == "all" else [paper]
    scripts = [s for p in papers for s in list_scripts(p, root)]

    def argv_of(script: Path) -> list[str]:
        argv = ["--fast"] if fast else []
        if out is not None:
            argv += ["--out", str(Path(out) / script.parent.name)]
        return argv

    def record_of(script: Path) -> Path:
        """Where the runner records a script's key and outputs: beside its paper's solve cache."""
        base = root.parent if out is None else Path(out)
        return (
            base / ".optnoise-cache" / script.parent.name / "scripts" / f"{script.stem}{'-fast' if fast else ''}.json"
        )

    results: list[tuple[Path, int, float]] = []
    workers = max(1, min(jobs, len(scripts)))  # never more workers than scripts
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futs = [
            pool.submit(_run_script, str(s), argv_of(s), str(root.parent), None if force else str(record_of(s)))
            for s in scripts
        ]
        for script, fut in tqdm(
            zip(scripts, futs, strict=True),
            total=len(scripts),
            desc=f"figures {paper}",
            unit="script",
            disable=not progress,
        ):
            try:
                rc, seconds, err, _skipped = fut.result()
            except BrokenProcessPool as exc:  # a worker died (e.g. out of memory): report, go on
                rc, seconds, err = 1, 0.0, f"worker process died: {exc}"
            if rc != 0:
                sys.stderr.write(f"\n[{script.parent.name}/{script.name}] failed:\n{err}\n")
            results.append((script, rc, seconds))
    return results
