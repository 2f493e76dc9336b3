"""Pictures of sweeps: one CSV column against another, one line per group."""

from __future__ import annotations

import csv
import io
import math
import os
from typing import Any

import numpy as np

from optnoise.engine.io import read_text
from optnoise.engine.validation import shown

__all__ = ["read_table", "plot_sweep"]


def read_table(path: str | os.PathLike) -> list[dict[str, str]]:
    """Rows of a CSV file (a sweep's output) as dictionaries."""
    text = read_text(path, "sweep CSV")  # regular files of bounded size only (optnoise.engine.io)
    try:
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise ValueError(f"sweep CSV {shown(str(path))} is not a valid CSV: {exc}") from None
    if not rows:
        raise ValueError(f"sweep CSV {shown(str(path))} has no data rows")
    return rows


def _column(rows: list[dict[str, str]], name: str, *, numeric: bool) -> list[Any]:
    if name not in rows[0]:
        raise ValueError(f"column {shown(name)} is not in the CSV; it has {', '.join(rows[0])}")
    vals = [r[name] for r in rows]
    if not numeric:
        return vals
    out = []
    for v in vals:
        try:
            out.append(float(v) if v not in ("", "None") else math.nan)
        except ValueError:
            raise ValueError(f"column {shown(name)} must be numeric; found {shown(v)}") from None
    return out


def plot_sweep(
    rows: Any,
    *,
    x: str,
    y: str,
    hue: str | None = None,
    logx: bool = False,
    logy: bool = False,
    ax: Any = None,
) -> Any:
    """Plot column ``y`` against column ``x`` of a sweep table, one line per value of ``hue``.

    ``rows`` is a CSV path or a list of row dicts (:func:`read_table`). Rows
    with a missing ``x`` or ``y`` (e.g. infeasible points) are left out, and so
    are rows whose value is <= 0 on a logarithmic axis (``logx``/``logy``), which
    cannot show them; a ``ValueError`` says so when no row is left.
    Returns the matplotlib Figure.
    """
    table = read_table(rows) if isinstance(rows, str | os.PathLike) else list(rows)
    if not table:
        raise ValueError("the sweep table has no rows")
    xs = _column(table, x, numeric=True)
    ys = _column(table, y, numeric=True)
    hs = _column(table, hue, numeric=False) if hue else [""] * len(table)
    if ax is None:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4), constrained_layout=True)
    groups: dict[str, list[tuple[float, float]]] = {}
    finite = 0
    for xv, yv, h in zip(xs, ys, hs, strict=True):
        if not (np.isfinite(xv) and np.isfinite(yv)):
            continue
        finite += 1
        # a log axis cannot show values <= 0: they are left out here (matplotlib would warn and drop them)
        if (logx and xv <= 0) or (logy and yv <= 0):
            continue
        groups.setdefault(h, []).append((xv, yv))
    if not groups:
        if finite:
            axes = " and ".join(f"{shown(c)} (--log{a})" for c, a, on in ((x, "x", logx), (y, "y", logy)) if on)
            raise ValueError(
                f"no row has positive values on the logarithmic axes ({axes}), which cannot show values <= 0; "
                "plot without the log axis"
            )
        raise ValueError(f"no row has finite values of both {shown(x)} and {shown(y)}")

    def key(h: str) -> Any:
        try:
            return (0, float(h), h)
        except ValueError:
            return (1, 0.0, h)

    for h in sorted(groups, key=key):
        pts = sorted(groups[h])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=3, label=f"{hue} = {h}" if hue else y)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    if hue:
        ax.legend(fontsize=8, title=None)
    return ax.figure
