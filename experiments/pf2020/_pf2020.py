"""Shared helpers of the permute-and-flip figure scripts (McKenna & Sheldon, NeurIPS 2020).

Not a figure script (the leading underscore keeps the runner from executing it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from optnoise.mechanisms.selection import (
    em_pmf,
    eps_for_expected_error,
    expected_error,
    median_quality,
    mode_quality,
    pf_pmf,
)
from optnoise.reproduce.compare import Tol
from optnoise.reproduce.datasets import load_dpbench

#: Colours used for every figure of this paper.
COLORS = {"em": "tab:green", "pf": "tab:purple", "rnm": "tab:orange", "ub": "tab:red", "lb": "tab:blue"}
LABELS = {"em": r"$\mathcal{M}_{EM}$", "pf": r"$\mathcal{M}_{PF}$", "rnm": r"$\mathcal{M}_{RNM}$"}
#: EM's expected error, in quality units, that fixes eps in the bar charts (the authors' ``get_bar``:
#: ``expected_epsilon(q, 50.0, pmf=em_pmf)``, then PF's error at that eps).
BAR_TARGET = 50.0
#: The mechanism whose expected error is fixed at :data:`BAR_TARGET` in the primary bar charts.
BAR_ANCHOR = "em"
#: Quality units per count of the mode task: the authors score a bin by ``q = 2 x``.
MODE_SCALE = 2.0
#: Y-axis label of every real-data panel: errors are differences of quality scores.
ERROR_LABEL = {"mode": "expected error (quality units, $q = 2x$)", "median": "expected error (quality units)"}

#: Tolerances of the real-data CSVs (``TOLERANCES`` of Figs. 3, 5, 6, 7): the eps at which a mechanism reaches
#: an error is a Brent root in log eps (rtol 1e-10) and the curves' eps grid ends at one, so every number
#: computed at or from those eps follows it (the errors with their elasticity in eps).
_AT_ROOT = Tol(rtol=1e-8, why="at eps from a Brent root in log eps, rtol 1e-10")
REAL_DATA_TOLERANCES = {
    c: _AT_ROOT
    for c in ("eps", "em_expected_error", "pf_expected_error", "error_ratio", "eps_em_same_error", "eps_ratio")
}
BAR_TOLERANCES = {c: _AT_ROOT for c in ("eps", "em_expected_error", "pf_expected_error", "error_ratio")}


def task_scores(dataset: str, task: str) -> tuple[np.ndarray, bool]:
    """Quality scores of a DPBench task on 1024 bins, and whether to use the monotonic variant.

    Both tasks are scored in the authors' quality units, so every error is a
    difference of their scores. Mode: ``q = 2 x`` (x = counts) with the
    standard mechanisms, as in the authors' notebook: the count has
    sensitivity 1 and only grows when an individual is added, so the monotonic
    variant of Remark 1 applies, and ``eps (2x) / 2 = eps x`` is exactly its
    exponent; one quality unit is half a count. Median: minus the individuals
    to add or remove to make the bin the (lower) median, sensitivity 1,
    standard (non-monotonic) mechanisms.
    """
    x = load_dpbench(dataset)
    if task == "mode":
        return MODE_SCALE * mode_quality(x), False
    if task == "median":
        return median_quality(x), False
    raise ValueError(f"task must be 'mode' or 'median'; got {task!r}")


def errors(q: np.ndarray, eps_grid: np.ndarray, monotonic: bool) -> tuple[np.ndarray, np.ndarray]:
    """Exact expected errors of EM and PF on ``q`` along ``eps_grid``."""
    em = np.array([expected_error(em_pmf(q, e, monotonic=monotonic), q) for e in eps_grid])
    pf = np.array([expected_error(pf_pmf(q, e, monotonic=monotonic), q) for e in eps_grid])
    return em, pf


def line_grid(q: np.ndarray, monotonic: bool, n: int) -> np.ndarray:
    """The authors' eps range: linear from 1e-4 to the eps where EM's expected error is 1 quality unit.

    When that eps is itself tiny (INCOME's counts reach 3 million, so EM's error
    is 1 at eps ~ 7e-6) the start moves down to 1% of it, otherwise the range
    would be empty.
    """
    hi = eps_for_expected_error(q, 1.0, mechanism="em", monotonic=monotonic)
    return np.linspace(min(1e-4, hi / 100), hi, n)


def eps_ratio_peak(q: np.ndarray, monotonic: bool, eps_grid: np.ndarray) -> dict:
    """Where EM needs the largest multiple of PF's budget for PF's expected error (Sec. 6 examples).

    For each eps on the grid: PF's error ``e``, the eps at which EM reaches
    ``e``, and their ratio; returns the grid point with the largest ratio.
    """
    best = None
    for eps in eps_grid[1:]:
        err = expected_error(pf_pmf(q, eps, monotonic=monotonic), q)
        if err < 1.0:
            break
        eps_em = eps_for_expected_error(q, err, mechanism="em", monotonic=monotonic)
        em_err = expected_error(em_pmf(q, eps, monotonic=monotonic), q)
        rec = {
            "eps": float(eps),
            "pf_error": float(err),
            "em_error": float(em_err),
            "error_ratio": float(em_err / err),
            "eps_em": float(eps_em),
            "eps_ratio": float(eps_em / eps),
        }
        if best is None or rec["eps_ratio"] > best["eps_ratio"]:
            best = rec
    return best


def bar_values(
    q: np.ndarray, monotonic: bool, target: float = BAR_TARGET, *, anchor: str = BAR_ANCHOR
) -> tuple[float, float, float]:
    """(eps, EM error, PF error) at the eps where ``anchor``'s expected error is ``target``."""
    eps = eps_for_expected_error(q, target, mechanism=anchor, monotonic=monotonic)
    em = expected_error(em_pmf(q, eps, monotonic=monotonic), q)
    pf = expected_error(pf_pmf(q, eps, monotonic=monotonic), q)
    return eps, em, pf


def lp_ratio_curves(m: int, k: int, eps_grid: np.ndarray, cache: Path | None = None) -> dict:
    """PF and EM optimality ratios along ``eps_grid`` for the regular LP and the paper's LP.

    ``regular``: :func:`~optnoise.mechanisms.lattice.solve_lattice_lp` defaults (lattice
    weighting, worst-neighbour privacy rows, monotonicity rows added lazily).
    ``paper``: the LP as printed in Appendix D (no monotonicity rows) with the
    box weighting of the authors' notebook. Solved with ``solver="highs"`` (one
    deterministic backend, so the CSVs stay byte-stable) and cached in ``cache``
    (the figure script's :attr:`~optnoise.reproduce.figures.FigureScript.cache`).
    """
    from optnoise.mechanisms.lattice import solve_lattice_lp

    out = {f"{v}_{r}": np.empty(eps_grid.size) for v in ("regular", "paper") for r in ("pf", "em")}
    for i, eps in enumerate(eps_grid):
        reg = solve_lattice_lp(m, k, float(eps), solver="highs", cache=cache)
        pap = solve_lattice_lp(m, k, float(eps), monotone=False, weighting="box", solver="highs", cache=cache)
        if reg.status != "optimal" or pap.status != "optimal":
            raise RuntimeError(f"LP not solved for m={m}, k={k}, eps={eps}: {reg.status}, {pap.status}")
        out["regular_pf"][i], out["regular_em"][i] = reg.pf_ratio, reg.em_ratio
        out["paper_pf"][i], out["paper_em"][i] = pap.pf_ratio, pap.em_ratio
    return out


#: Fig. 2's eps grid in the authors' ``linear-program.ipynb``: ``np.logspace(-2, 1, 250)``.
FIG2_EPS_POINTS = 250
#: The y-ranges of the authors' Fig. 2 panels (``pf_opt.pdf``, ``pf_opt2.pdf``; ``em_opt3.pdf``).
PF_RATIO_YLIM = (0.9995, 1.0115)
EM_RATIO_YLIM = (0.99, 2.0)


#: The extra deeper-lattice panels of Fig. 2 use 21 eps: each of their LPs is 10-100 times larger.
DEEP_EPS_POINTS = 21


def fig2_eps(fast: bool, points: int = FIG2_EPS_POINTS) -> np.ndarray:
    """The authors' eps grid, ``points`` log-spaced values on [0.01, 10] (6 in fast mode)."""
    return np.logspace(-2, 1, 6 if fast else points)


def ratio_panel(
    fs,
    name: str,
    eps: np.ndarray,
    curves: dict,
    key: str,
    *,
    label,
    title: str,
    ylim: tuple[float, float] | None,
    cmap=None,
) -> None:
    """One Fig. 2 panel: optimality ratio of ``key`` ("pf" or "em") against eps; saves ``<name>.png/csv``.

    ``curves`` maps ``(m, k)`` to :func:`lp_ratio_curves` output on ``eps``.
    Solid: the regular-mechanism LP; dashed: the LP as printed in Appendix D
    with the authors' box weighting. ``label(m, k)`` names each curve.
    """
    import matplotlib.pyplot as plt

    from optnoise.mechanisms.selection import GOLDEN_EPS

    cmap = cmap or plt.cm.viridis
    fig, ax = plt.subplots(figsize=(5.5, 4))
    rows = []
    for i, ((m, k), cur) in enumerate(curves.items()):
        col = cmap(i / max(len(curves) - 1, 1) * 0.9)
        ax.plot(eps, cur[f"regular_{key}"], lw=2.2, color=col, label=label(m, k))
        ax.plot(eps, cur[f"paper_{key}"], "--", lw=1.2, color=col)
        rows += [
            {"m": m, "k": k, "eps": e, f"{key}_ratio_regular_lp": a, f"{key}_ratio_paper_lp": b}
            for e, a, b in zip(eps, cur[f"regular_{key}"], cur[f"paper_{key}"], strict=True)
        ]
    ax.axvline(GOLDEN_EPS, color="gray", ls=":", lw=1.5, label=r"$\ln\frac{3+\sqrt{5}}{2}$")
    ax.plot([], [], "k--", lw=1.2, label="LP as printed")
    ax.set_xscale("log")
    ax.set_xlabel(r"$\varepsilon$")
    who = LABELS[key]
    ratio = r"$\mathbb{E}[\mathcal{E}]\,/\,\mathbb{E}[\mathcal{E}(\mathrm{OPT})]$"
    ax.set_ylabel(f"optimality ratio of {who}: {ratio}")
    ax.set_title(title, fontsize=10)
    if ylim is not None:
        ax.set_ylim(*ylim)
    # where no curve is: PF's ratio is exactly 1 above the threshold, EM's is close to 1 at small eps
    ax.legend(fontsize=8, ncol=1 if key == "pf" else 2, loc="upper right" if key == "pf" else "upper left")
    ax.grid(alpha=0.3, which="both")
    fs.save(fig, rows, name=name)


def real_data_panel(ax, dataset: str, task: str, n: int, *, annotate: bool = True) -> list[dict]:
    """Expected error of EM and PF against eps on one DPBench task; returns the plotted rows.

    eps runs linearly from 1e-4 to where EM's expected error is 1, y on a log
    scale cut at 1 (the authors' choices). With ``annotate``, the eps at which
    EM needs the largest multiple of PF's budget is marked.
    """
    import matplotlib.ticker as mticker

    q, mono = task_scores(dataset, task)
    eps = line_grid(q, mono, n)
    em, pf = errors(q, eps, mono)
    ax.plot(eps, em, color=COLORS["em"], lw=2.2, label=LABELS["em"])
    ax.plot(eps, pf, color=COLORS["pf"], lw=2.2, label=LABELS["pf"])
    ax.set_yscale("log")
    ax.set_ylim(1, None)
    ax.set_xlim(0, eps[-1])
    ax.xaxis.set_major_formatter(mticker.ScalarFormatter(useMathText=True))
    ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
    ax.set_xlabel(r"$\varepsilon$")
    ax.set_ylabel(ERROR_LABEL[task])
    ax.set_title(f"{dataset}, {task}", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    rows = [
        {
            "dataset": dataset,
            "task": task,
            "kind": "curve",
            "eps": e,
            "em_expected_error": a,
            "pf_expected_error": b,
            "error_ratio": a / b,
        }
        for e, a, b in zip(eps, em, pf, strict=True)
    ]
    if annotate:
        peak = eps_ratio_peak(q, mono, eps)
        if peak is not None:
            ax.plot([peak["eps"]], [peak["pf_error"]], "o", color="k", ms=5)
            ax.annotate(
                f"$\\varepsilon$={peak['eps']:.3g}: EM/PF error {peak['error_ratio']:.2f};\n"
                f"EM needs {peak['eps_ratio']:.2f}$\\times$ the budget",
                (peak["eps"], peak["pf_error"]),
                xycoords="data",
                textcoords="axes fraction",
                xytext=(0.97, 0.97),
                ha="right",
                va="top",
                fontsize=7,
                bbox={"boxstyle": "round", "fc": "white", "ec": "0.7", "alpha": 0.9},
                arrowprops={"arrowstyle": "-", "color": "0.4", "lw": 0.8},
            )
            rows.append(
                {
                    "dataset": dataset,
                    "task": task,
                    "kind": "peak",
                    "eps": peak["eps"],
                    "em_expected_error": peak["em_error"],
                    "pf_expected_error": peak["pf_error"],
                    "error_ratio": peak["error_ratio"],
                    "eps_em_same_error": peak["eps_em"],
                    "eps_ratio": peak["eps_ratio"],
                }
            )
    return rows


def bar_panel(ax, datasets, task: str, *, anchor: str = BAR_ANCHOR) -> list[dict]:
    """Bars of EM's and PF's expected error at the eps where ``anchor``'s error is :data:`BAR_TARGET`.

    ``anchor="em"`` is the authors' setting (their notebook fixes EM's error at
    50 quality units and reports PF's at that eps; the paper's sentence naming
    the mechanism was lost in extraction). Errors are in quality units
    (:func:`task_scores`).
    """
    rows = []
    for d in datasets:
        q, mono = task_scores(d, task)
        eps, em, pf = bar_values(q, mono, anchor=anchor)
        rows.append(
            {
                "dataset": d,
                "task": task,
                "anchor": anchor,
                "eps": eps,
                "em_expected_error": em,
                "pf_expected_error": pf,
                "error_ratio": em / pf,
            }
        )
    x = np.arange(len(datasets))
    w = 0.38
    ax.bar(x - w / 2, [r["em_expected_error"] for r in rows], w, color=COLORS["em"], label=LABELS["em"])
    bars = ax.bar(x + w / 2, [r["pf_expected_error"] for r in rows], w, color=COLORS["pf"], label=LABELS["pf"])
    for b, r in zip(bars, rows, strict=True):
        ax.annotate(
            f"{r['error_ratio']:.2f}x",
            (b.get_x() + b.get_width() / 2, b.get_height()),
            textcoords="offset points",
            xytext=(0, 2),
            ha="center",
            fontsize=7,
        )
    ax.set_xticks(x)
    ax.set_xticklabels(datasets, rotation=20, fontsize=8)
    ax.set_ylim(0, 1.3 * max(max(r["em_expected_error"] for r in rows), BAR_TARGET))
    ax.set_ylabel(ERROR_LABEL[task])
    who = anchor.upper()
    ax.set_title(
        rf"{task}: $\varepsilon$ where $\mathbb{{E}}[\mathcal{{E}}(\mathcal{{M}}_{{{who}}})] = {BAR_TARGET:g}$"
        " (labels: EM/PF)",
        fontsize=10,
    )
    ax.grid(alpha=0.3, axis="y")
    return rows


#: Line-plot datasets of the appendix figures (the authors' list without HEPTH, shown in Fig. 3).
APPENDIX_DATASETS = ("MEDCOST", "ADULTFRANK", "INCOME", "SEARCHLOGS", "PATENT")


def appendix_grid(name: str, task: str, argv, doc: str) -> int:
    """Figs. 5/6: one :func:`real_data_panel` per appendix dataset on a 2 x 3 grid."""
    import matplotlib.pyplot as plt

    from optnoise.reproduce.figures import FigureScript

    fs = FigureScript("pf2020", name, argv, description=doc)
    n = fs.grid(full=100, fast=5)
    datasets = fs.grid(full=APPENDIX_DATASETS, fast=APPENDIX_DATASETS[:2])
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5))
    rows = []
    for ax, d in zip(axes.flat, datasets, strict=False):
        rows += real_data_panel(ax, d, task, n, annotate=not fs.fast)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    for ax in list(axes.flat)[len(datasets) :]:
        ax.axis("off")
    axes.flat[-1].legend(handles, labels, loc="center", fontsize=12, title=f"{task} task")
    fig.tight_layout()
    fs.save(fig, rows)
    return 0
