"""Helpers shared by the kadam2024 figure scripts (Kadam et al., Cybersecurity 7:54, 2024).

Solves go through :class:`optnoise.NoiseDesign` with HiGHS (deterministic) and
an on-disk cache, so a second ``optnoise figures kadam2024`` run is fast:
:attr:`optnoise.reproduce.figures.FigureScript.cache`.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from optnoise import DesignResult, Neighborhood, NoiseDesign
from optnoise.reproduce.figures import FigureScript

PAPER = "kadam2024"

#: One colour / line style per privacy notion, used by every figure.
NOTION_STYLE = {
    "pdp-kadam": {"color": "C0", "ls": "-", "label": "optimum, published MILP (13) [pdp-kadam]"},
    "pdp": {"color": "C3", "ls": "--", "label": "optimum, PDP per shift (Def. 2) [pdp]"},
    "dp": {"color": "C2", "ls": ":", "label": r"optimum, $(\varepsilon,\delta)$-DP [dp]"},
}
#: One colour / marker per baseline family.
BASELINE_STYLE = {
    "geometric": {"color": "C1", "marker": "o", "label": "discrete geometric"},
    "gaussian": {"color": "C4", "marker": "s", "label": "discrete Gaussian"},
    "exponential": {"color": "C5", "marker": "^", "label": "exponential (Gumbel)"},
    "count": {"color": "C6", "marker": "D", "label": "discrete count (Sadeghi)"},
    "independent": {"color": "C7", "marker": "v", "label": "data independent"},
}


def progress(fs: FigureScript, message: str) -> None:
    """One progress line on stderr (the runner shows a bar per script)."""
    print(f"[{PAPER}/{fs.name}] {message}", file=sys.stderr, flush=True)


def solve(fs: FigureScript, *, canonical: bool = False, **design: Any) -> DesignResult:
    """Solve one :class:`NoiseDesign` (cached in ``fs.cache``) with HiGHS; refuse anything but a verified optimum.

    ``solver="highs"``, not the default ``"auto"`` portfolio: degenerate designs have several optimal
    PMFs, and which one the portfolio returns depends on which backend wins. ``canonical=True`` is
    for figures that draw a PMF: among tied optima it returns the canonical one
    (``NoiseDesign.solve(canonical=True)``, the lexicographic minimax), not whichever vertex HiGHS
    reaches, and it refuses a result whose canonical stages failed.
    """
    res = NoiseDesign(**design).solve(solver="highs", cache=fs.cache, canonical=canonical)
    if res.status != "optimal" or not res.verify():
        raise RuntimeError(f"{NoiseDesign(**design)!r} ended with status {res.status!r} (achieved {res.achieved})")
    if canonical and not res.canonical:
        raise RuntimeError(f"{NoiseDesign(**design)!r}: no canonical optimum ({res.message})")
    return res


def step_lengths(pmf: np.ndarray, *, rtol: float = 1e-6) -> tuple[int, ...]:
    """Lengths of the runs of equal consecutive masses, ``(l_0, l_1, ...)`` (Fig. 10, Table 1)."""
    pmf = np.asarray(pmf, dtype=float)
    lengths = [1]
    for a, b in zip(pmf[:-1], pmf[1:], strict=True):
        if abs(a - b) <= rtol * max(abs(a), abs(b), 1e-300):
            lengths[-1] += 1
        else:
            lengths.append(1)
    return tuple(lengths)


def directed(nb: Neighborhood) -> str:
    """Short label of a neighbourhood's direction."""
    return "directed" if nb.directed else "symmetric"


# --------------------------------------------------------------------------
# Figs. 5 and 7: the optimum against the baselines
# --------------------------------------------------------------------------

#: The paper's convention for a count query: mu = Q(X) - Q(X') = +1 only (directed, SD with mu = 1).
COUNT_DIRECTED = Neighborhood.bd(1, directed=True)
#: A count query's neighbours in both directions, +-1 (the standard DP relation).
COUNT_SYMMETRIC = Neighborhood.bd(1)

#: Panels (a) and (b) of Figs. 5 and 7. (a) is about MSE (n = 8), (b) about the error rate (n = 7).
#: MSE is the circular one, E[min(eta, n+1-eta)^2] (see README): for a noise written in the
#: centred range it is Definition 4, and for a baseline it is its variance up to the tails.
PANELS = {
    "a": {
        "n": 8,
        "metric": "circular-mse",
        "measure": "mse",
        "target": 0.6101,
        "delta": 0.3,
        "families": ("geometric", "gaussian", "exponential"),
        "ylabel": r"MSE $\rho^{MSE}$ (circular)",
    },
    "b": {
        "n": 7,
        "metric": "er",
        "measure": "er",
        "target": 0.3,
        "delta": 0.5,
        "families": ("geometric", "gaussian", "count", "independent"),
        "ylabel": r"error rate $\rho^{ER}$",
    },
}


def error_of(mech: Any, measure: str) -> float:
    """The baseline's error in the panel's measure (circular MSE or error rate)."""
    return float(mech.error_rate() if measure == "er" else mech.mse(distance="circular"))


#: The eps grid of Figs. 5 and 7: step 0.01 on [0.1, 3], so the jumps of Corollaries 1-2 show as
#: steps, and every value the README quotes (0.1, 0.2, ..., 1.0, ...) is a grid point.
EPS_GRID = np.round(np.linspace(0.1, 3.0, 291), 4)
#: The --fast grid of the tests.
EPS_GRID_FAST = np.array([0.3, 1.0, 2.5])
#: Fig. 5's baselines are calibrated to meet delta at eps (1 - CALIBRATION_MARGIN), not at eps:
#: the least-noise PDP parameter sits exactly on Definition 2's strict ">" (see fig5.py).
CALIBRATION_MARGIN = 1e-6


def step(ax: Any, eps: np.ndarray, y: np.ndarray, **kw: Any) -> Any:
    """A curve of eps as a step plot: each value held up to the next grid point.

    Every curve of Figs. 5 and 7 is non-increasing in eps with jumps (Corollaries 1-2, the
    PDP staircase of a baseline); joining grid points by straight lines would draw the jumps
    as ramps.
    """
    return ax.plot(eps, y, drawstyle="steps-post", **kw)


def plot_baselines(ax: Any, eps: np.ndarray, curves: dict[str, np.ndarray]) -> None:
    """One step curve per baseline family; markers on every 29th point, staggered so that
    coinciding curves still show each family's marker."""
    for i, (fam, y) in enumerate(curves.items()):
        st = BASELINE_STYLE[fam]
        every = (min(6 * i, max(len(eps) - 1, 0)), 29) if len(eps) > 29 else None
        step(ax, eps, y, color=st["color"], marker=st["marker"], ms=4.5, lw=1.2, label=st["label"], markevery=every)


def finish(ax: Any, ylabel: str, title: str) -> None:
    """Axis labels, title and grid of a Fig. 5/7 panel."""
    ax.set_xlabel(r"$\varepsilon$")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)


def shared_legend(fig: Any, axes: Any, *, ncol: int = 3, y: float = 0.0) -> None:
    """One legend below the panels with every distinct curve (its bottom at figure height ``y``)."""
    seen: dict[str, Any] = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(lab, h)
    fig.legend(
        list(seen.values()),
        list(seen),
        loc="lower center",
        bbox_to_anchor=(0.5, y),
        ncol=ncol,
        fontsize=8,
        frameon=False,
    )


def faithful_figure(
    eps: np.ndarray, optimum: np.ndarray, baselines: dict[str, np.ndarray], ylabel: str, title: str
) -> Any:
    """Fig. 5/7 as published: the MILP (13) optimum for mu = +1 against the baselines under PDP.

    The legend sits below the axes, where it cannot hide a curve (in Fig. 7b it covered the
    optimum's drop).
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.8))
    step(
        ax,
        eps,
        optimum,
        color=NOTION_STYLE["pdp-kadam"]["color"],
        lw=2.2,
        label=r"optimum, MILP (13), $\mu=+1$ [pdp-kadam]",
    )
    plot_baselines(ax, eps, baselines)
    finish(ax, ylabel, title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2, fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def ranges(eps: np.ndarray, mask: np.ndarray) -> str:
    """The grid points where ``mask`` holds, as a union of grid intervals: "[0.1, 0.7] ∪ {1.6}"."""
    out, i = [], 0
    while i < len(eps):
        if not mask[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(eps) and mask[j + 1]:
            j += 1
        out.append(f"{{{eps[i]:g}}}" if i == j else f"[{eps[i]:g}, {eps[j]:g}]")
        i = j + 1
    return " ∪ ".join(out) if out else "∅"


def exact_findings(
    eps: np.ndarray,
    optima: dict[str, np.ndarray],
    baselines: dict[str, dict[str, np.ndarray]],
    *,
    at: float = 1.0,
    tie: float = 0.02,
) -> list[str]:
    """What the exact panels show, read off the plotted curves (the figures' captions).

    Lines: which baselines beat the published MILP (13) on mu = +-1 and where; the values at
    eps = ``at``; where the exact PDP optimum is below every baseline; where the DP optimum is
    within ``tie`` (relative) of its best baseline.
    """
    fmt = "{:.3g}".format
    kadam, pdp, dp = (optima[f"{k}/symmetric"] for k in ("pdp-kadam", "pdp", "dp"))
    i = int(np.argmin(np.abs(eps - at)))
    label = {f: BASELINE_STYLE[f]["label"] for f in BASELINE_STYLE}
    lose = [
        f"{label[f]} at ε ∈ {ranges(eps, kadam > b + 1e-9)}"
        for f, b in baselines["pdp"].items()
        if np.any(kadam > b + 1e-9)
    ]
    pdp_base = np.vstack(list(baselines["pdp"].values()))
    best = min(baselines["pdp"], key=lambda f: np.nan_to_num(baselines["pdp"][f][i], nan=np.inf))
    lines = [
        "With neighbours μ = ±1 the published MILP (13) [pdp-kadam] loses to the "
        + ("; ".join(lose) if lose else "baselines nowhere")
        + f". At ε = {eps[i]:g}: published {fmt(kadam[i])}, {label[best]} {fmt(baselines['pdp'][best][i])}, "
        f"exact PDP optimum [pdp] {fmt(pdp[i])}.",
    ]
    pdp_wins = np.all(pdp[None, :] <= np.nan_to_num(pdp_base, nan=np.inf) + 1e-7, axis=0)
    dp_base = np.vstack(list(baselines["dp"].values()))
    best_dp = np.nanmin(dp_base, axis=0)
    fam_dp = [list(baselines["dp"])[k] for k in np.nanargmin(np.where(np.isnan(dp_base), np.inf, dp_base), axis=0)]
    close = (best_dp - dp) <= tie * np.maximum(best_dp, 1e-300)
    near = sorted({label[fam_dp[k]] for k in np.nonzero(close & (best_dp > 1e-12))[0]})
    lines.append(
        f"The exact PDP optimum is at or below every baseline at ε ∈ {ranges(eps, pdp_wins)}; "
        f"the (ε, δ)-DP optimum [dp] is within {tie:.0%} of its best baseline "
        f"({', '.join(near) if near else 'none'}) at ε ∈ {ranges(eps, close & (best_dp > 1e-12))} "
        f"(at ε = {eps[i]:g}: {fmt(dp[i])} vs {label[fam_dp[i]]} {fmt(best_dp[i])})."
    )
    return lines


def published_band() -> dict[str, Any]:
    """Style of the published MILP (13) on mu = +-1 in the exact figures' PDP panel.

    That curve coincides with the exact PDP optimum and the data-independent baseline on long eps
    ranges (error rate 0.5 in Fig. 5b, delta 0.7 in Fig. 7b) and runs next to the baselines after,
    so a line of ordinary width is hidden. It is drawn as a thin line in a wide translucent band,
    above the baselines (they show through the band) and below the exact PDP optimum (whose dashes
    stay visible on it).
    """
    from matplotlib import patheffects

    return {
        "lw": 1.2,
        "solid_capstyle": "butt",
        "zorder": 2.4,
        "path_effects": [patheffects.Stroke(linewidth=8, foreground="C0", alpha=0.3), patheffects.Normal()],
    }


def exact_figure(
    eps: np.ndarray,
    optima: dict[str, np.ndarray],
    baselines: dict[str, dict[str, np.ndarray]],
    ylabel: str,
    figure: str,
    setting: str,
) -> Any:
    """Fig. 5/7 with exact optima on the symmetric neighbourhood: a PDP panel and a DP panel.

    ``optima`` maps ``"<notion>/symmetric"`` and ``"pdp-kadam/directed"`` to curves;
    ``baselines[notion][family]`` is a baseline accounted under ``notion``. The title states
    the condition of the paper's headline and the caption what the curves show
    (:func:`exact_findings`).
    """
    import textwrap

    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 5.9), sharey=True)
    for ax, notion in zip(axes, ("pdp", "dp"), strict=False):
        for nt in ("pdp-kadam", "pdp") if notion == "pdp" else ("dp",):
            st = NOTION_STYLE[nt]
            step(
                ax,
                eps,
                optima[f"{nt}/symmetric"],
                color=st["color"],
                ls=st["ls"],
                label=st["label"] + r", $\mu=\pm1$",
                **(published_band() if nt == "pdp-kadam" else {"lw": 2, "zorder": 2.5}),
            )
        if notion == "pdp":
            step(
                ax,
                eps,
                optima["pdp-kadam/directed"],
                color="0.5",
                lw=1,
                ls="-.",
                label=rf"optimum [pdp-kadam], $\mu=+1$ only ({figure})",
            )
        plot_baselines(ax, eps, baselines[notion])
        what = "PDP (Definition 2)" if notion == "pdp" else r"$(\varepsilon,\delta)$-DP"
        finish(ax, ylabel, rf"{what}, neighbours $\mu=\pm1$: {setting}")
    fig.suptitle(
        f"{figure} with neighbours $\\mu=\\pm1$ and exact optima (baselines accounted under each panel's notion)\n"
        "The paper's \u201csignificantly outperforms\u201d holds for its one-directional neighbours $\\mu=+1$ only",
        fontsize=11,
    )
    shared_legend(fig, axes, y=0.09)
    caption = "\n".join(textwrap.fill(line, 150) for line in exact_findings(eps, optima, baselines))
    fig.text(0.5, 0.005, caption, ha="center", va="bottom", fontsize=8, color="0.15")
    fig.tight_layout(rect=(0, 0.25, 1, 1))
    return fig


# --------------------------------------------------------------------------
# Fig. 10 and Table 1: BD n = 8, mu_bar = 3, eps = 1.5
# --------------------------------------------------------------------------

FIG10 = {"n": 8, "mu_bar": 3, "eps": 1.5}
#: The caption's boundaries, rounded to 4 decimals: delta_bar_0, delta_low_1, delta_low_2.
FIG10_CAPTION = (0.1212, 0.1238, 0.1522)


def fig10_boundaries(fs: FigureScript) -> tuple[float, float, float]:
    """The exact deltas behind the caption's rounded 0.1212, 0.1238 and 0.1522, from the MILP alone.

    delta_bar_0 (end of the first flat region) is found by bisecting the error
    rate of (13) within the caption's rounding interval. delta_low_1 and
    delta_low_2 (starts of flat regions) are the minimal delta of (15) for
    the error rate the MILP reaches at the caption's value + 5e-5, the top of
    its rounding interval.
    """
    nb = Neighborhood.bd(FIG10["mu_bar"], directed=True)
    base = dict(n=FIG10["n"], eps=FIG10["eps"], neighborhood=nb, metric="er", privacy="pdp-kadam")
    er0 = solve(fs, delta=0.0, **base).distortion
    lo, hi = FIG10_CAPTION[0] - 5e-5, FIG10_CAPTION[0] + 5e-5
    if not (abs(solve(fs, delta=lo, **base).distortion - er0) < 1e-9 < er0 - solve(fs, delta=hi, **base).distortion):
        raise RuntimeError("the first flat region does not end within the caption's rounding of 0.1212")
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        if abs(solve(fs, delta=mid, **base).distortion - er0) < 1e-9:
            lo = mid
        else:
            hi = mid
    starts = []
    for d in FIG10_CAPTION[1:]:
        level = solve(fs, delta=d + 5e-5, **base).distortion
        # + 1e-9, the solver's feasibility tolerance: the level reached above must stay reachable
        starts.append(solve(fs, objective="delta", max_distortion=level + 1e-9, **base).achieved["pdp-kadam"])
    return lo, starts[0], starts[1]
