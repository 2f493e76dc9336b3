"""``optnoise sweep`` and ``optnoise mechanism-sweep``: grids of designs, in parallel, resumable."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from typing import Any

from optnoise.cli.additive_points import release_row_keys
from optnoise.cli.args import (
    EXIT_FEASIBLE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_UNVERIFIED,
    parse_field,
    solver_args,
    write_rows,
)
from optnoise.cli.points import ROW_KEYS, grid_points, is_cached, parse_grid
from optnoise.cli.sweeps import SweepInterrupted, run_sweep
from optnoise.design.releases import LatticeRelease, get_release, release_field_names
from optnoise.engine.validation import check_jobs, check_output_path
from optnoise.privacy.notions import budget_fields
from optnoise.privacy.verification import UNVERIFIED

__all__ = ["cmd_sweep", "run_sweep_command"]


def cmd_sweep(a: argparse.Namespace) -> int:
    if a.out != "-":
        check_output_path("out", a.out)  # before any solve: a typo must not cost the whole sweep
    check_jobs(a.jobs)  # before the grid is built
    # every budget field: a grid of numbers, or one value (pairs, a list) for every point; a design states the
    # range of its fields (e.g. the cap of compositions), so integer grids are only checked to be integers here
    budget = {
        f.name: parse_field(f, text) if not f.grid else parse_grid(f.name, text, integer=f.kind == "int", maximum=None)
        for f in budget_fields()
        if (text := getattr(a, f.name)) is not None
    }
    release = get_release(a.release)
    if not release.sweepable:
        raise ValueError(f"release: --release {release.name} is not yet supported by sweep (use optnoise solve)")
    own = not isinstance(release, LatticeRelease)  # a release that makes its own rows (additive, grid, ...)
    if a.n is None and release.takes_n:
        raise ValueError("n is required (a grid such as 8 or 8,16 or 8:64:3) unless the release takes none")
    if a.n is not None and not release.takes_n:
        raise ValueError(f"n: --release {release.name} takes no --n (no range of answers); drop --n")
    if a.neighborhood is None and "neighborhood" in release.required:
        raise ValueError(f"neighborhood is required with --release {release.name} (e.g. --neighborhood bd:1)")
    # the release's own fields (sensitivity, resolution, support, gap): grids, refused by a release without them
    fields = {}
    for name in release_field_names():
        text = getattr(a, name, None)
        if text is None:
            continue
        if name not in release.fields:
            raise ValueError(f"{name} does not apply to --release {release.name}")
        fields[name] = parse_grid(name, text, integer=name in release.integer_fields, maximum=None)
    privacy = a.privacy if a.privacy is not None else release.default_privacy
    points = grid_points(
        n=parse_grid("n", a.n, integer=True) if release.takes_n else None,
        eps=parse_grid("eps", a.eps) if a.eps is not None else None,
        delta=parse_grid("delta", a.delta) if a.delta is not None else None,
        neighborhoods=a.neighborhood if a.neighborhood is not None else [None],
        directed=a.directed,
        metric=[m.strip() for m in a.metric.split(",")],
        privacy=[p.strip() for p in privacy.split(",")],
        objective=a.minimize,
        max_distortion=parse_grid("max-distortion", a.max_distortion) if a.max_distortion is not None else None,
        dim=a.dim,
        release=a.release,
        release_fields=fields,
        **budget,
    )
    return run_sweep_command(points, a, release_row_keys(release) if own else ROW_KEYS)


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
        how = "terminated (SIGTERM)" if stop.signum == signal.SIGTERM else "interrupted"
        print(
            f"optnoise {a.command}: {how}: wrote the {len(stop.rows)} of {stop.total} finished rows"
            f"{_resume_note(stop.rows, a.no_cache)}",
            file=sys.stderr,
        )
        return EXIT_TERMINATED if stop.signum == signal.SIGTERM else EXIT_INTERRUPTED
    write_rows(rows, a.format, a.out, keys)
    flagged = sum(r["status"] == UNVERIFIED for r in rows)
    if flagged:
        print(
            f"optnoise {a.command}: {flagged} row(s) have status {UNVERIFIED!r} (reason in the 'error' column)",
            file=sys.stderr,
        )
        return EXIT_UNVERIFIED
    short = sum(r["status"] != "optimal" for r in rows)
    if a.require_optimal and short:
        print(f"optnoise {a.command}: {short} row(s) are not 'optimal' (--require-optimal)", file=sys.stderr)
        return EXIT_FEASIBLE
    return EXIT_OK


def _resume_note(rows: list[dict[str, Any]], no_cache: bool) -> str:
    """What running the sweep again will reuse: only the cached rows (:func:`~optnoise.cli.points.is_cached`)."""
    if no_cache or not rows:
        return ""
    kept = sum(map(is_cached, rows))
    if kept == len(rows):
        return "; they are cached, so running the sweep again resumes it"
    lost = len(rows) - kept
    head = f"; {kept} of them are cached, so running the sweep again resumes from those" if kept else ""
    return (
        f"{head}; {lost} {'is' if lost == 1 else 'are'} not cached (rdp/zcdp points, unverified or failed rows) "
        "and would be solved again"
    )
