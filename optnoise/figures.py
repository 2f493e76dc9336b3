"""Figure reproduction: the shared conventions of ``experiments/`` and its runner.

Every figure script lives in ``experiments/<paper>/`` and follows one shape::

    from optnoise.figures import FigureScript

    def main(argv=None) -> int:
        fig_script = FigureScript("kadam2024", "fig2", argv, description=__doc__)
        grid = fig_script.grid(full=np.linspace(0, 1, 201), fast=np.linspace(0, 1, 11))
        ...                                  # compute, plot onto a matplotlib figure
        fig_script.save(fig, {"delta": grid, "error_rate": er})
        return 0

    if __name__ == "__main__":
        raise SystemExit(main())

``save`` writes ``<out>/<name>.png`` and ``<out>/<name>.csv`` holding exactly
the plotted numbers. ``--fast`` selects coarse grids, so the test suite can
run every script in seconds; ``--out`` redirects the output folder (default
``figures/<paper>`` in the repository).

``optnoise figures PAPER`` (and ``make reproduce``) runs the scripts of a
paper through :func:`run_figures`.
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "CSV_DIGITS",
    "PNG_METADATA",
    "FigureScript",
    "PAPERS",
    "find_experiments_root",
    "format_float",
    "list_scripts",
    "run_figures",
    "write_csv",
]

#: The papers whose figures optnoise regenerates, in the order ``all`` runs them.
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
    candidates.append(Path(__file__).resolve().parent.parent)
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
#: builds and CPUs, so a reproduction elsewhere writes the same bytes.
CSV_DIGITS = 10

#: PNG metadata of every figure: no software version or timestamp, so the
#: bytes depend only on what is drawn.
PNG_METADATA: dict[str, Any] = {"Software": None}


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

    def grid(self, *, full: Any, fast: Any) -> Any:
        """Pick the full or the coarse version of a parameter grid."""
        return fast if self.fast else full

    def save(self, fig: Any, table: Any, *, name: str | None = None) -> Path:
        """Write ``<name>.png`` (150 dpi, fixed metadata) and ``<name>.csv``; close the figure."""
        import matplotlib.pyplot as plt

        stem = name or self.name
        png = self.out / f"{stem}.png"
        fig.savefig(png, dpi=150, bbox_inches="tight", metadata=PNG_METADATA)
        plt.close(fig)
        write_csv(self.out / f"{stem}.csv", table)
        return png


def list_scripts(paper: str, root: Path | None = None) -> list[Path]:
    """The figure scripts of one paper, in a stable order."""
    root = root or find_experiments_root()
    folder = root / paper
    if not folder.is_dir():
        raise ValueError(f"paper must be one of {', '.join(PAPERS)}, or 'all'; got {paper!r}")
    return sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))


def run_figures(
    paper: str,
    *,
    fast: bool = False,
    jobs: int = 1,
    out: str | os.PathLike | None = None,
    progress: bool = True,
) -> list[tuple[Path, int, float]]:
    """Run every figure script of ``paper`` (or of ``"all"`` papers) as subprocesses.

    Returns one ``(script, returncode, seconds)`` triple per script. Scripts are
    independent processes, so ``jobs > 1`` runs them in parallel.
    """
    from concurrent.futures import ThreadPoolExecutor

    from tqdm import tqdm

    root = find_experiments_root()
    papers = [p for p in PAPERS if (root / p).is_dir()] if paper == "all" else [paper]
    scripts = [s for p in papers for s in list_scripts(p, root)]

    def _run(script: Path) -> tuple[Path, int, float]:
        cmd = [sys.executable, str(script)]
        if fast:
            cmd.append("--fast")
        if out is not None:
            cmd += ["--out", str(Path(out) / script.parent.name)]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=root.parent, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.stderr.write(f"\n[{script.parent.name}/{script.name}] failed:\n{proc.stderr[-4000:]}\n")
        return script, proc.returncode, time.perf_counter() - t0

    results = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        it = pool.map(_run, scripts)
        for res in tqdm(it, total=len(scripts), desc=f"figures {paper}", unit="script", disable=not progress):
            results.append(res)
    return results
