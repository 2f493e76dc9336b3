"""Fig. 11 of Kadam et al. (2024): optimal error rate of the BD neighbourhood against mu_bar, n = 9.

(a) delta = 0.2, one curve per eps in {0.5, 1, 1.5, 2}.
(b) eps = 2, one curve per delta in {0, 0.2, 0.4, 0.6, 0.8}.
The caption fixes n, delta (a) and eps (b); the other values are our choice.
Lines: the MILP (13) as published (pdp-kadam, directed shifts {1..mu_bar}).
Crosses: the closed forms where they apply, Lemma 4 for delta = 0 and
Theorem 3 for delta > 0 when b + r < mu_bar (and b <= 3), i.e.
mu_bar in {4, 6, 7, 8, 9} at n = 9. A larger neighbourhood can only cost
accuracy, so every curve rises with mu_bar. In (b) the published formulation
gains almost nothing from delta <= 0.4 at eps = 2 (those curves coincide with
delta = 0 except at small mu_bar); delta helps once the line f(0) = delta of
Theorem 3(c) is reached.

Equal values are frequent (in (b) delta = 0.2 and 0.4 coincide at every
mu_bar, and both coincide with delta = 0 from mu_bar = 5), so every curve has
its own marker and line style and is shifted sideways by a few hundredths of
a mu_bar step; the closed-form crosses sit on the shifted markers, and their
legend entry comes last.
"""

from __future__ import annotations

import os
import sys

import matplotlib.pyplot as plt
import numpy as np

from optnoise import Neighborhood
from optnoise.mechanisms.closed_form.bd import bd_error_rate
from optnoise.reproduce.compare import SOLVER
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _kadam2024 import progress, solve  # noqa: E402

N = 9
MARKERS = ("o", "s", "^", "D", "v")
LINESTYLES = ("-", "--", ":", "-.", (0, (5, 1.5, 1, 1.5, 1, 1.5)))
#: Sideways shift between consecutive curves, in units of mu_bar.
DODGE = 0.07


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: error_rate is a MILP optimum; the closed forms are exact.
TOLERANCES = {f"fig11{p}": {"error_rate": SOLVER} for p in "ab"}


def closed_form(mu_bar: int, eps: float, delta: float) -> float:
    try:
        return float(bd_error_rate(N, mu_bar, eps, delta=delta))
    except ValueError:  # outside the range of Theorem 3
        return np.nan


def main(argv=None) -> int:
    fs = FigureScript("kadam2024", "fig11", argv, description=__doc__)
    mu_bars = fs.grid(full=np.arange(1, N + 1), fast=np.array([1, 4, 9]))
    panels = {"a": [(e, 0.2) for e in (0.5, 1.0, 1.5, 2.0)], "b": [(2.0, d) for d in (0.0, 0.2, 0.4, 0.6, 0.8)]}
    for panel, settings in panels.items():
        progress(fs, f"panel {panel}: {len(settings) * mu_bars.size} MILPs")
        fig, ax = plt.subplots(figsize=(8.0, 4.2))
        rows = []
        for i, (eps, delta) in enumerate(settings):
            er = np.array(
                [
                    solve(
                        fs,
                        n=N,
                        eps=eps,
                        delta=delta,
                        neighborhood=Neighborhood.bd(int(m), directed=True),
                        metric="er",
                        privacy="pdp-kadam",
                    ).distortion
                    for m in mu_bars
                ]
            )
            cf = np.array([closed_form(int(m), eps, delta) for m in mu_bars])
            ok = ~np.isnan(cf)
            if np.any(np.abs(cf[ok] - er[ok]) > 1e-7):
                raise RuntimeError(f"closed form and MILP differ at eps={eps}, delta={delta}: {cf} vs {er}")
            lab = rf"$\varepsilon={eps:g}$" if panel == "a" else rf"$\delta={delta:g}$"
            # coinciding curves stay visible: own marker and line style, and a small sideways shift
            x = mu_bars + (i - (len(settings) - 1) / 2) * DODGE
            ax.plot(
                x, er, color=f"C{i}", marker=MARKERS[i], ls=LINESTYLES[i], ms=7, mfc="none", mew=1.6, lw=1.6, label=lab
            )
            ax.plot(x[ok], cf[ok], "x", color="k", ms=5, mew=1.2)
            rows += [
                {
                    "eps": eps,
                    "delta": delta,
                    "mu_bar": int(m),
                    "error_rate": float(v),
                    "closed_form": "" if np.isnan(c) else float(c),
                }
                for m, v, c in zip(mu_bars, er, cf, strict=True)
            ]
        fixed = r"$\delta=0.2$" if panel == "a" else r"$\varepsilon=2$"
        ax.set_title(rf"Fig. 11{panel}: BD, $n={N}$, {fixed} (MILP (13), pdp-kadam)", fontsize=10)
        ax.set_xlabel(r"$\bar\mu$")
        ax.set_ylabel(r"error rate $\rho^\star$")
        ax.set_xticks(np.arange(1, N + 1))
        ax.grid(alpha=0.3)
        ax.plot([], [], "x", color="k", ms=5, mew=1.2, label="closed form (Lemma 4, Theorem 3)")
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        fig.tight_layout()
        fs.save(fig, rows, name=f"fig11{panel}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
