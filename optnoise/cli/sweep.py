"""``optnoise sweep`` and ``optnoise mechanism-sweep``: grids of designs, in parallel, resumable."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from optnoise.cli.args import EXIT_INTERRUPTED, EXIT_OK, EXIT_UNVERIFIED, parse_pairs, solver_args, write_rows
from optnoise.cli.sweeps import (
    ROW_KEYS,
    SweepInterrupted,
    grid_points,
    parse_grid,
    run_sweep,
)
from optnoise.engine.tolerance import UNVERIFIED
from optnoise.engine.validation import check_jobs, check_output_path

__all__ = ["cmd_sweep", "run_sweep_command"]


def cmd_sweep(a: argparse.Namespace) -> int:
    if a.out != "-":
        check_output_path("out", a.out)  # before any solve: a typo must not cost the whole sweep
    check_jobs(a.jobs)  # before the grid is built
    points = grid_points(
        n=parse_grid("n", a.n, integer=True),
        eps=parse_grid("eps", a.eps) if a.eps is not None else None,
        delta=parse_grid("delta", a.delta) if a.delta is not None else None,
        neighborhoods=a.neighborhood,
        directed=a.directed,
        metric=[m.strip() for m in a.metric.split(",")],
        privacy=[p.strip() for p in a.privacy.split(",")],
        objective=a.minimize,
        max_distortion=parse_grid("max-distortion", a.max_distortion) if a.max_distortion is not None else None,
        dim=a.dim,
        release=a.release,
        compositions=parse_grid("compositions", a.compositions, integer=True) if a.compositions is not None else None,
        rho=parse_grid("rho", a.rho) if a.rho is not None else None,
        rdp=parse_pairs(a.rdp, "rdp"),
        profile=parse_pairs(a.profile, "profile"),
    )
    return run_sweep_command(points, a, ROW_KEYS)


def run_sweep_command(points: list[dict[str, Any]], a: argparse.Namespace, keys: Sequence[str]) -> int:
    """Solve a sweep's points with the command's flags, write its rows (``keys``), and pick the exit code."""
    jobs = check_jobs(a.jobs)
    try:
        rows = run_sweep(
            points,
            **solver_args(a),
            jobs=jobs,
            backend=a.backend,
            scheduler=a.scheduler,
            cache=None if a.no_cache else a.cache,
            progress=not a.quiet,
            connect_timeout=a.connect_timeout,
        )
    except SweepInterrupted as stop:
        write_rows(stop.rows, a.format, a.out, keys)
        kept = "" if a.no_cache else "; they are cached, so running the sweep again resumes it"
        print(
            f"optnoise {a.command}: interrupted: wrote the {len(stop.rows)} of {stop.total} finished rows{kept}",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    write_rows(rows, a.format, a.out, keys)
    flagged = sum(r["status"] == UNVERIFIED for r in rows)
    if flagged:
        print(
            f"optnoise {a.command}: {flagged} row(s) have status {UNVERIFIED!r} (reason in the 'error' column)",
            file=sys.stderr,
        )
        return EXIT_UNVERIFIED
    return EXIT_OK
