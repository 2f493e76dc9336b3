"""``optnoise figures`` and ``optnoise plot``: regenerate the papers' figures, draw a design or a sweep."""

from __future__ import annotations

import argparse
import sys

from optnoise.cli.args import EXIT_CLAIM_FAILED, EXIT_OK
from optnoise.engine.io import ensure_folder
from optnoise.engine.validation import check_jobs, shown

__all__ = ["cmd_figures", "cmd_plot"]


def cmd_figures(a: argparse.Namespace) -> int:
    from optnoise.reproduce.figures import PAPERS, run_figures

    if a.paper == "check":
        return _check_figures(a)
    if a.against is not None or a.reference is not None:
        raise ValueError("--against and --reference go with `optnoise figures check`")
    if a.paper != "all" and a.paper not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS)}, 'all' or 'check'; got {shown(a.paper)}")
    jobs = check_jobs(a.jobs)
    if a.out is not None:
        ensure_folder("out", a.out)  # an unwritable folder fails here in one line, not in every script
    else:
        from optnoise.reproduce.figures import find_experiments_root

        ensure_folder("out", find_experiments_root().parent / "figures")
    results = run_figures(a.paper, fast=a.fast, jobs=jobs, out=a.out, force=a.force)
    failed = [s for s, rc, _ in results if rc != 0]
    for s, rc, dt in results:
        print(f"{'ok  ' if rc == 0 else 'FAIL'} {s.parent.name}/{s.name}  {dt:.1f}s")
    if failed:
        print(f"{len(failed)} script(s) failed", file=sys.stderr)
        return EXIT_CLAIM_FAILED
    return EXIT_OK


def _check_figures(a: argparse.Namespace) -> int:
    """``optnoise figures check``: the regenerated CSVs against the committed ones (or ``--reference``)."""
    from optnoise.reproduce.compare import check_figures

    if a.fast or a.force:
        raise ValueError("--fast and --force go with regenerating figures, not with `optnoise figures check`")
    if a.against is not None and a.reference is not None:
        raise ValueError("pass --against (a git revision) or --reference (a folder), not both")
    report = check_figures(a.out, rev=a.against or "HEAD", reference=a.reference)
    if report.ok:
        print(report)
        return EXIT_OK
    print(report, file=sys.stderr)
    return EXIT_CLAIM_FAILED


def cmd_plot(a: argparse.Namespace) -> int:
    from optnoise.plotting.files import check_plot_path, save_figure
    from optnoise.plotting.sweeps import plot_sweep

    check_plot_path(a.out)
    fig = plot_sweep(a.csv, x=a.x, y=a.y, hue=a.hue, logx=a.logx, logy=a.logy)
    path = save_figure(fig, a.out)
    print(f"wrote {path}")
    return EXIT_OK
