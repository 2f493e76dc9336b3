"""Pictures of designs and sweeps (matplotlib).

:func:`plot_design` draws a noise PMF next to its privacy profile
``delta(eps)`` (the worst case over the neighbourhood's shifts,
:func:`optnoise.privacy.delta_dp`), optionally against a baseline;
:func:`plot_sweep` draws one column of a sweep CSV against another, one line
per value of a third. ``DesignResult.plot()``, ``CertifiedDesign.plot()``,
``optnoise solve ... --plot design.png`` and ``optnoise plot sweep.csv ...``
use them.
"""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from optnoise._validation import check_finite_array
from optnoise.figures import PNG_METADATA
from optnoise.mechanisms import IntegerNoise, Mechanism
from optnoise.privacy import delta_dp

__all__ = ["check_plot_path", "plot_design", "plot_sweep", "read_table", "save_figure"]

#: Smallest delta drawn on the log axis (a profile at 0 is drawn there).
DELTA_FLOOR = 1e-16


def _signed(n: int) -> np.ndarray:
    """Noise values ``0..n`` as signed offsets ``-floor((n+1)/2)..``: the wrapped distance with its sign."""
    eta = np.arange(n + 1)
    return np.where(eta <= n // 2, eta, eta - (n + 1))


def _profile(obj: Any, shifts: Any, eps: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """delta(eps) of a PMF (same shape as the design, over ``shifts``), an IntegerNoise or a Mechanism."""
    if isinstance(obj, IntegerNoise):
        return np.asarray(obj.delta(eps), dtype=float)
    if isinstance(obj, Mechanism):
        return np.asarray(obj.delta(eps), dtype=float)
    pmf = getattr(obj, "pmf_float", None)
    pmf = getattr(obj, "pmf", None) if pmf is None else pmf
    arr = np.asarray(obj if pmf is None else pmf, dtype=float)
    if arr.shape != shape:
        raise ValueError(f"baseline PMF must have the design's shape {shape}; got {arr.shape}")
    return np.asarray(delta_dp(arr, shifts, eps), dtype=float)


def _baseline_pmf(obj: Any, n: int) -> np.ndarray | None:
    if isinstance(obj, IntegerNoise):
        return obj.wrapped(n)
    if isinstance(obj, Mechanism):
        return obj.noise
    pmf = getattr(obj, "pmf_float", None)
    pmf = getattr(obj, "pmf", None) if pmf is None else pmf
    return np.asarray(obj if pmf is None else pmf, dtype=float)


def _default_eps(pmf: np.ndarray, shifts: Any) -> np.ndarray:
    """0 up to a little past the largest finite privacy loss (capped at 10)."""
    from optnoise.privacy import shifted_pmfs

    f, g = shifted_pmfs(pmf, shifts)
    both = (f[None, :] > 0) & (g > 0)
    with np.errstate(divide="ignore"):
        loss = np.log(np.where(both, f[None, :], 1.0)) - np.log(np.where(both, g, 1.0))
    top = float(loss.max()) if np.any(both) else 1.0
    return np.linspace(0.0, min(10.0, max(0.5, 1.1 * top)), 400)


def plot_design(
    pmf: Any,
    shifts: Any,
    *,
    baseline: Any = None,
    baseline_label: str | None = None,
    eps: Any = None,
    axes: Any = None,
    label: str = "optimal",
) -> Any:
    """Draw a noise PMF (left) and its privacy profile ``delta(eps)`` (right, log scale).

    Parameters
    ----------
    pmf : array_like, shape ``(n+1,)*d``
        The noise. Scalar designs are drawn against the signed noise value;
        vector designs as an image of the first two coordinates' marginal.
    shifts : Neighborhood or array_like
        The neighbourhood (the profile is the worst case over its shifts).
    baseline : array_like, IntegerNoise, Mechanism or result, optional
        Drawn on both panels for comparison: a PMF of the same shape (or an
        object with ``.pmf``), an integer noise (its PMF wrapped onto
        ``{0..n}``; its profile on the integers, ``n = inf``) or a
        :class:`~optnoise.mechanisms.Mechanism`.
    eps : array_like, optional
        Where to draw the profile (default: 0 to a little past the largest finite loss).
    axes : pair of matplotlib Axes, optional
        Draw into these instead of a new figure.
    label, baseline_label : str
        Legend entries.

    Returns
    -------
    matplotlib.figure.Figure
    """
    f = np.asarray(pmf, dtype=float)
    n = f.shape[0] - 1
    grid = _default_eps(f, shifts) if eps is None else check_finite_array("eps", np.atleast_1d(eps))
    if axes is None:
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    ax_pmf, ax_prof = axes
    fig = ax_pmf.figure
    base_name = baseline_label or (
        getattr(baseline, "name", None) if isinstance(baseline, IntegerNoise | Mechanism) else "baseline"
    )
    if f.ndim == 1:
        order = np.argsort(_signed(n))
        x = _signed(n)[order]
        ax_pmf.plot(x, f[order], "o-", ms=3, lw=1.2, label=label)
        if baseline is not None:
            b = _baseline_pmf(baseline, n)
            if b is not None and b.shape == f.shape:
                ax_pmf.plot(x, b[order], "s--", ms=2.5, lw=1.0, label=base_name)
        ax_pmf.set_xlabel("noise value eta (signed, mod n+1)")
        ax_pmf.set_ylabel("probability f(eta)")
        ax_pmf.legend(loc="upper right", fontsize=8)
    else:
        marg = f.sum(axis=tuple(range(2, f.ndim))) if f.ndim > 2 else f
        order = np.argsort(_signed(n))
        img = ax_pmf.imshow(marg[np.ix_(order, order)], origin="lower", cmap="viridis")
        ticks = _signed(n)[order]
        ax_pmf.set_xlabel("eta_2 (signed)")
        ax_pmf.set_ylabel("eta_1 (signed)")
        step = max(1, (n + 1) // 6)
        ax_pmf.set_xticks(range(0, n + 1, step), ticks[::step])
        ax_pmf.set_yticks(range(0, n + 1, step), ticks[::step])
        fig.colorbar(img, ax=ax_pmf, label="probability")
    ax_pmf.set_title("noise PMF")
    prof = np.maximum(np.asarray(delta_dp(f, shifts, grid), dtype=float), DELTA_FLOOR)
    ax_prof.semilogy(grid, prof, lw=1.6, label=label)
    if baseline is not None:
        bprof = np.maximum(_profile(baseline, shifts, grid, f.shape), DELTA_FLOOR)
        ax_prof.semilogy(grid, bprof, "--", lw=1.2, label=base_name)
    ax_prof.set_xlabel("eps")
    ax_prof.set_ylabel("delta(eps)  (worst shift)")
    ax_prof.set_title("privacy profile")
    ax_prof.grid(True, which="both", alpha=0.3)
    ax_prof.legend(loc="upper right", fontsize=8)
    return fig


def check_plot_path(path: str | os.PathLike) -> Path:
    """An output path ending in .png, .pdf or .svg."""
    p = Path(path)
    if p.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise ValueError(f"plot path must end in .png, .pdf or .svg; got {str(path)!r}")
    return p


def save_figure(fig: Any, path: str | os.PathLike) -> Path:
    """Write a figure (format by the suffix, 150 dpi, PNG metadata without software/time) and close it."""
    import matplotlib.pyplot as plt

    path = check_plot_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=150, bbox_inches="tight", metadata=PNG_METADATA if path.suffix.lower() == ".png" else None)
    plt.close(fig)
    return path


def read_table(path: str | os.PathLike) -> list[dict[str, str]]:
    """Rows of a CSV file (a sweep's output) as dictionaries."""
    p = Path(path)
    try:
        with p.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"sweep CSV could not be read from {str(path)!r}: {exc.__class__.__name__}") from None
    if not rows:
        raise ValueError(f"sweep CSV {str(path)!r} has no data rows")
    return rows


def _column(rows: list[dict[str, str]], name: str, *, numeric: bool) -> list[Any]:
    if name not in rows[0]:
        raise ValueError(f"column {name!r} is not in the CSV; it has {', '.join(rows[0])}")
    vals = [r[name] for r in rows]
    if not numeric:
        return vals
    out = []
    for v in vals:
        try:
            out.append(float(v) if v not in ("", "None") else math.nan)
        except ValueError:
            raise ValueError(f"column {name!r} must be numeric; found {v!r}") from None
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
    with a missing ``x`` or ``y`` (e.g. infeasible points) are left out.
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
    for xv, yv, h in zip(xs, ys, hs, strict=True):
        if np.isfinite(xv) and np.isfinite(yv):
            groups.setdefault(h, []).append((xv, yv))
    if not groups:
        raise ValueError(f"no row has finite values of both {x!r} and {y!r}")

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
