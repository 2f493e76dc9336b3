"""Real-valued queries: optimal noise over all densities against the classical mechanisms (issue 31).

A real query of sensitivity ``Delta = 1`` released as ``q + X`` under (eps, delta)-DP, one
release, for the l1 (``mae``: ``E|X|``) and l2 (``mse``: ``E X^2``) losses, at
delta in {0.005, 0.05, 0.2}:

* optnoise: ``NoiseDesign(release="continuous", sensitivity=1, eps=, delta=, metric=,
  resolution=1/m)``. Its ``distortion`` is the cost of a valid mechanism (a piecewise-constant
  density on cells of width ``1/m``, re-verified for every shift), an upper bound on the least
  distortion over *all* densities; its ``bound`` is a proven lower bound on it. The true optimum
  lies in the band between them. ``m`` grows with eps (:data:`CELLS`), because the optimum
  concentrates within ``~Delta`` as eps grows and the band closes like the cell width.
* the truncated Laplace (Geng, Ding, Guo, Kumar 2020) and the analytic Gaussian (Balle and Wang
  2018), each calibrated to the same (eps, delta) (``res.baselines``), and the Laplace;
* the Geng-Viswanath staircase, the optimum under *pure* eps-DP (closed form): a valid but
  uncalibrated (eps, delta) mechanism here, drawn dotted as a reference.

The last panel draws the proven relative gap ``(upper - lower) / max(1, upper)`` against ``m`` at
(eps, delta) = (1, 0.1), l1: how fast the bracket closes as the cells shrink.
"""

import matplotlib.pyplot as plt

from optnoise import NoiseDesign
from optnoise.mechanisms.real_baselines import staircase_cost
from optnoise.reproduce.compare import SOLVER, Tol
from optnoise.reproduce.figures import FigureScript

DELTAS = (0.005, 0.05, 0.2)
METRICS = ("mae", "mse")
#: Cells per sensitivity for each eps: a finer grid at large eps, where the noise lives within ~Delta.
CELLS = {0.25: 4, 0.5: 4, 1.0: 8, 2.0: 16, 4.0: 16}
#: The gap-against-m panel's setting.
GAP_SETTING = (1.0, 0.1, "mae")
#: Calibrated closed forms and bisections (mechanisms.real_baselines).
CALIBRATED = Tol(rtol=1e-9, atol=0.0, why="baselines: closed forms and scales bisected to ~1e-13")

#: Per-column tolerances of the CSV comparison (``optnoise figures check``).
TOLERANCES = {
    "real_valued": {
        "upper": SOLVER,
        "lower": SOLVER,
        "gap": Tol(rtol=1e-4, atol=1e-7, why="a difference of two solver values"),
        "truncated_laplace": CALIBRATED,
        "gaussian": CALIBRATED,
        "laplace": CALIBRATED,
        "staircase_pure": CALIBRATED,
    },
}

STYLE = {
    "truncated_laplace": dict(
        color="tab:blue", marker="s", ls="--", lw=1.4, ms=6, mfc="none", label="truncated Laplace"
    ),
    "gaussian": dict(color="tab:red", marker="^", ls="-.", lw=1.4, ms=6, mfc="none", label="analytic Gaussian"),
    "laplace": dict(color="tab:green", marker="v", ls=(0, (5, 2)), lw=1.0, ms=5, mfc="none", label="Laplace"),
    "staircase_pure": dict(
        color="0.45", marker="", ls=":", lw=1.4, label=r"staircase, pure $\varepsilon$-DP (reference, not calibrated)"
    ),
}
NAMES = ("truncated_laplace", "gaussian", "laplace", "staircase_pure")


def point(eps: float, delta: float, metric: str, m: int, panel: str) -> dict:
    """The bracket of the continuous optimum at one setting, and the baselines calibrated to it."""
    res = NoiseDesign(
        release="continuous", sensitivity=1.0, eps=eps, delta=delta, metric=metric, resolution=1.0 / m
    ).solve(solver="highs")
    if res.status not in ("optimal", "feasible") or not res.verify() or res.bound is None:
        raise RuntimeError(f"the continuous design gave no verified bracket: {res!r}")
    if not res.bound <= res.distortion:
        raise RuntimeError(f"lower bound {res.bound} above the mechanism's {res.distortion}")
    base = res.baselines
    return {
        "panel": panel,
        "metric": metric,
        "eps": eps,
        "delta": delta,
        "m": m,
        "upper": res.distortion,
        "lower": res.bound,
        "gap": res.gap,
        "truncated_laplace": base["truncated_laplace"],
        "gaussian": base["gaussian"],
        "laplace": base["laplace"],
        "staircase_pure": staircase_cost(eps, metric),
    }


def main(argv=None) -> int:
    fs = FigureScript("beyond", "real_valued", argv, description=__doc__)
    eps_grid = [float(e) for e in fs.grid(full=list(CELLS), fast=[1.0, 2.0])]
    ms = [int(m) for m in fs.grid(full=[2, 4, 8, 16, 32], fast=[2, 4])]
    cells = {e: fs.grid(full=CELLS[e], fast=4) for e in eps_grid}  # the fast mode (tests) stays coarse
    rows = [point(e, d, met, cells[e], "eps") for met in METRICS for d in DELTAS for e in eps_grid]
    e0, d0, met0 = GAP_SETTING
    rows += [point(e0, d0, met0, m, "resolution") for m in ms]

    fig, axes = plt.subplots(2, 4, figsize=(17, 8.5))
    for i, met in enumerate(METRICS):
        for j, d in enumerate(DELTAS):
            ax = axes[i, j]
            sub = [r for r in rows if r["panel"] == "eps" and r["metric"] == met and r["delta"] == d]
            eps = [r["eps"] for r in sub]
            ax.fill_between(eps, [r["lower"] for r in sub], [r["upper"] for r in sub], color="k", alpha=0.25, lw=0)
            ax.plot(eps, [r["upper"] for r in sub], color="k", marker="o", ms=4, lw=1.6, label="optnoise upper bound")
            ax.plot(eps, [r["lower"] for r in sub], color="k", marker="_", ms=8, lw=0.8, label="proven lower bound")
            for name in NAMES:
                ax.plot(eps, [r[name] for r in sub], **STYLE[name])
            loss = r"$E|X|$" if met == "mae" else r"$E X^2$"
            ax.set_title(f"{loss} ({'l1' if met == 'mae' else 'l2'}), $\\delta = {d:g}$", fontsize=10)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xticks(eps)
            ax.set_xticklabels([f"{e:g}" for e in eps])
            ax.set_xlabel(r"$\varepsilon$ (sensitivity 1, one release)")
            ax.set_ylabel(loss)
            ax.grid(alpha=0.3, which="both")
    # the last column: the gap against m, and the truncated Laplace's excess (thin on the loss axes)
    gax = axes[0, 3]
    sub = [r for r in rows if r["panel"] == "resolution"]
    gax.plot([r["m"] for r in sub], [r["gap"] for r in sub], color="k", marker="o", lw=1.6, label="proven gap")
    gax.set_xscale("log", base=2)
    gax.set_yscale("log")
    gax.set_xticks([r["m"] for r in sub])
    gax.set_xticklabels([str(r["m"]) for r in sub])
    gax.set_xlabel(r"$m$ = cells per sensitivity (cell width $1/m$)")
    gax.set_ylabel("(upper - lower) / max(1, upper)")
    gax.set_title(f"proven gap against $m$, $\\varepsilon = {e0:g}$, $\\delta = {d0:g}$, l1", fontsize=10)
    gax.grid(alpha=0.3, which="both")
    xax = axes[1, 3]
    for d, ls in zip(DELTAS, ("-", "--", ":"), strict=True):
        for met, col in zip(METRICS, ("tab:blue", "tab:red"), strict=True):
            s = [r for r in rows if r["panel"] == "eps" and r["metric"] == met and r["delta"] == d]
            xax.plot(
                [r["eps"] for r in s],
                [r["truncated_laplace"] / r["upper"] - 1 for r in s],
                color=col,
                ls=ls,
                marker="o",
                ms=3,
                label=f"{'l1' if met == 'mae' else 'l2'}, $\\delta = {d:g}$",
            )
    xax.set_xscale("log", base=2)
    xax.set_xticks(eps_grid)
    xax.set_xticklabels([f"{e:g}" for e in eps_grid])
    xax.set_xlabel(r"$\varepsilon$")
    xax.set_ylabel("truncated Laplace / optnoise upper - 1")
    xax.set_title("what the truncated Laplace loses (at least)", fontsize=10)
    xax.legend(fontsize=8, ncol=2)
    xax.grid(alpha=0.3, which="both")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=6, frameon=False, bbox_to_anchor=(0.5, -0.005))
    fig.suptitle(
        r"A real query of sensitivity 1 released as $q + X$ under $(\varepsilon, \delta)$-DP: "
        "optimal noise over all densities"
    )
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fs.save(fig, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
