"""Shared check for the fast mode of a figure script (imported by the per-paper test files)."""

from __future__ import annotations

import runpy
from pathlib import Path

from optnoise.reproduce.figures import list_scripts as scripts  # noqa: F401  (re-exported for the per-paper tests)


def run_fast(script: Path, out: Path) -> None:
    """Run ``main(["--fast", "--out", out])`` and check every PNG has a non-empty CSV beside it."""
    assert runpy.run_path(str(script))["main"](["--fast", "--out", str(out)]) == 0
    pngs = list(out.glob("*.png"))
    assert pngs, f"{script.name} wrote no PNG"
    for png in pngs:
        assert png.stat().st_size > 1000
        csv = png.with_suffix(".csv")
        assert csv.exists() and len(csv.read_text().splitlines()) > 1
