"""Pictures of designs and sweeps (matplotlib).

:func:`plot_design` draws a noise PMF next to its privacy profile
``delta(eps)`` (the worst case over the neighbourhood's shifts,
:func:`optnoise.privacy.curves.delta_dp`), optionally against a baseline;
:func:`plot_sweep` draws one column of a sweep CSV against another, one line
per value of a third. ``DesignResult.plot()``, ``CertifiedDesign.plot()``,
``optnoise solve ... --plot design.png`` and ``optnoise plot sweep.csv ...``
use them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from optnoise.engine.validation import check_finite_array
from optnoise.privacy.accounting import ReleasePairs, mechanism_pairs, noise_pairs, privacy_profile
from optnoise.privacy.curves import delta_dp
from optnoise.privacy.noise_families import IntegerNoise, Mechanism

__all__ = ["plot_design", "plot_mechanism", "plot_real_density"]

#: Smallest delta drawn on the log axis: below it a float64 profile is rounding error (its
#: terms are probabilities of order 1), so the curve ends there instead of tracing the noise.
DELTA_FLOOR = 1e-15


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


def _default_eps(rp: ReleasePairs) -> np.ndarray:
    """0 up to a little past the largest finite privacy loss of the pairs (capped at 10)."""
    both = (rp.P > 0) & (rp.Q > 0)
    with np.errstate(divide="ignore"):
        loss = np.log(np.where(both, rp.P, 1.0)) - np.log(np.where(both, rp.Q, 1.0))
    top = float(loss.max()) if np.any(both) else 1.0
    return np.linspace(0.0, min(10.0, max(0.5, 1.1 * top)), 400)


def _profile_panel(ax: Any, grid: np.ndarray, prof: Any, label: str, base: Any = None, base_name: str = "") -> None:
    """The right panel: ``delta(eps)`` on a log axis, with an optional baseline.

    Values at or below :data:`DELTA_FLOOR` are not drawn: ``delta = 0`` has no place on a log
    axis, and a flat line at the floor would read as a positive delta. A curve ends where the
    profile reaches 0 (past the largest finite privacy loss).
    """

    def shown(values: Any) -> np.ndarray:
        arr = np.asarray(values, dtype=float)
        return np.where(arr > DELTA_FLOOR, arr, np.nan)

    ax.semilogy(grid, shown(prof), lw=1.6, label=label)
    if base is not None:
        ax.semilogy(grid, shown(base), "--", lw=1.2, label=base_name)
    ax.set_xlim(grid[0], grid[-1])
    ax.set_xlabel("eps")
    ax.set_ylabel("delta(eps)  (worst neighbouring pair)")
    ax.set_title("privacy profile")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)


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
        :class:`~optnoise.privacy.noise_families.Mechanism`.
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
    grid = _default_eps(noise_pairs(f, shifts)) if eps is None else check_finite_array("eps", np.atleast_1d(eps))
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
    bprof = None if baseline is None else _profile(baseline, shifts, grid, f.shape)
    _profile_panel(ax_prof, grid, delta_dp(f, shifts, grid), label, bprof, str(base_name))
    return fig


def plot_real_density(
    cells: Any, masses: Any, width: float, pairs: ReleasePairs, *, eps: Any = None, axes: Any = None, label: str = ""
) -> Any:
    """Draw a piecewise-constant noise density (left) and the profile ``delta(eps)`` of ``pairs`` (right).

    ``cells`` are integer cell indices, cell ``k`` the interval ``[(k - 1/2) w, (k + 1/2) w)`` holding
    ``masses[k]`` (a continuous release, :mod:`optnoise.design.continuous`); ``pairs`` are what the
    release protects (its profile is the worst case over them). Returns the figure.
    """
    k = np.asarray(cells, dtype=float)
    f = np.asarray(masses, dtype=float)
    grid = _default_eps(pairs) if eps is None else check_finite_array("eps", np.atleast_1d(eps))
    if axes is None:
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    ax_pdf, ax_prof = axes
    edges = np.append(k - 0.5, k[-1] + 0.5) * width
    ax_pdf.stairs(f / width, edges, lw=1.4, label=label)
    ax_pdf.set_xlabel("noise x")
    ax_pdf.set_ylabel("density p(x)")
    ax_pdf.set_title("noise density (cells of width w)")
    ax_pdf.legend(loc="upper right", fontsize=8)
    _profile_panel(ax_prof, grid, privacy_profile(pairs, eps=grid), label)
    return ax_pdf.figure


def plot_mechanism(
    matrix: Any,
    pairs: Any,
    *,
    outputs: Any = None,
    noise: Any = None,
    baseline: Any = None,
    baseline_label: str | None = None,
    eps: Any = None,
    axes: Any = None,
    label: str = "optimal",
    baseline_noise: Any = None,
) -> Any:
    """Draw a released matrix ``P[x, y]`` (left) and its privacy profile ``delta(eps)`` (right, log scale).

    The profile is the worst case ``max H_{e^eps}(P[x] || P[x'])`` over the ordered
    neighbour ``pairs`` (:func:`optnoise.privacy.accounting.privacy_profile`).

    Parameters
    ----------
    matrix : array_like, shape (n+1, m+1)
        Row ``x`` is the output distribution of input ``x``.
    pairs : array_like, shape (K, 2)
        The ordered neighbour pairs ``(x, x')`` the release protects.
    outputs : array_like, optional
        The value of every output column (default ``0..m``).
    noise : array_like, shape (2n+1,), optional
        For clamped noise: its PMF on ``-n..n``, drawn on the left instead of the matrix.
    baseline : array_like or Mechanism, optional
        A matrix of the same shape (or an object with ``.matrix``), drawn on the profile panel.
    baseline_noise : array_like, shape (2n+1,), optional
        With ``noise``: the baseline's noise PMF, drawn beside it on the left.
    eps, axes, label, baseline_label
        As for :func:`plot_design`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    M = check_finite_array("matrix", np.asarray(matrix, dtype=float), ndim=2)
    rp = mechanism_pairs(M, pairs)
    grid = _default_eps(rp) if eps is None else check_finite_array("eps", np.atleast_1d(eps))
    if np.any(grid < 0):
        raise ValueError("eps values of the profile must be >= 0")
    if axes is None:
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    ax_left, ax_prof = axes
    fig = ax_left.figure
    if noise is not None:
        f = np.asarray(noise, dtype=float).ravel()
        n = (f.size - 1) // 2
        ax_left.plot(np.arange(-n, n + 1), f, "o-", ms=3, lw=1.2, label=label)
        if baseline_noise is not None:
            b = np.asarray(baseline_noise, dtype=float).ravel()
            name = baseline_label or getattr(baseline, "name", None) or "baseline"
            ax_left.plot(np.arange(-n, n + 1), b, "s--", ms=3, lw=1.0, label=name)
        ax_left.set_xlabel("noise value eta (released as clip(q + eta, 0, n))")
        ax_left.set_ylabel("probability f(eta)")
        ax_left.set_title("noise PMF")
        ax_left.legend(loc="upper right", fontsize=8)
    else:
        vals = np.arange(M.shape[1]) if outputs is None else np.asarray(outputs, dtype=float)
        img = ax_left.imshow(M, origin="lower", aspect="auto", cmap="viridis", interpolation="nearest")
        step = max(1, M.shape[1] // 6)
        ax_left.set_xticks(range(0, M.shape[1], step), [f"{v:g}" for v in vals[::step]])
        ax_left.set_xlabel("output y")
        ax_left.set_ylabel("input x")
        ax_left.set_title("mechanism P[x, y]")
        fig.colorbar(img, ax=ax_left, label="probability")
    bprof = None
    if baseline is not None:
        B = np.asarray(getattr(baseline, "matrix", baseline), dtype=float)
        if B.shape != M.shape:
            raise ValueError(f"baseline matrix must have the release's shape {M.shape}; got {B.shape}")
        bprof = privacy_profile(mechanism_pairs(B, pairs), eps=grid)
    name = baseline_label or getattr(baseline, "name", None) or "baseline"
    _profile_panel(ax_prof, grid, privacy_profile(rp, eps=grid), label, bprof, name)
    return fig
