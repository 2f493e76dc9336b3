"""``optnoise sweep`` and ``optnoise mechanism-sweep``: grids of designs, in parallel, resumable."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from typing import Any

from optnoise.cli.additive_points import ADDITIVE_ROW_KEYS
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
from optnoise.design.releases import get_release
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
    additive = not release.takes_n
    if a.n is None and not additive:
        raise ValueError("n is required (a grid such as 8 or 8,16 or 8:64:3) unless --release additive")
    if a.n is not None and additive:
        raise ValueError(f"n: --release {release.name} takes no --n (q + eta on all integers); drop --n")
    privacy = a.privacy if a.privacy is not None else release.default_privacy
    if release.name == "additive" and (
        a.minimize != "distortion" or set(privacy.split(",")) - {"dp", "pdp", "profile"}
    ):
        # its rows, cache and proofs are those of the (eps, delta) LP; the other additive designs: optnoise solve
        raise ValueError(
            "privacy: sweep --release additive takes dp, pdp or profile with --minimize distortion (use optnoise "
            "solve --release additive for rdp, zcdp, composed and --minimize delta)"
        )
    points = grid_points(
        n=None if additive else parse_grid("n", a.n, integer=True),
        eps=parse_grid("eps", a.eps) if a.eps is not None else None,
        delta=parse_grid("delta", a.delta) if a.delta is not None else None,
        neighborhoods=a.neighborhood,
        directed=a.directed,
        metric=[m.strip() for m in a.metric.split(",")],
        privacy=[p.strip() for p in privacy.split(",")],
        objective=a.minimize,
        max_distortion=parse_grid("max-distortion", a.max_distortion) if a.max_distortion is not None else None,
        dim=a.dim,
        release=a.release,
        **budget,
    )
    return run_sweep_command(points, a, ADDITIVE_ROW_KEYS if additive else ROW_KEYS)


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
