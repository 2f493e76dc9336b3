"""Figs. 2(b) and 2(c) of McKenna & Sheldon (2020): optimality ratios of PF and EM against lattice depth.

m = 4 candidates (as in the notebook) on lattices of depth k = 2, 4, 8, 16
(bound B = 2k Delta up to 32, 17 score levels; the notebook stopped at k = 8).
2(b): PF's optimality ratio, which grows slowly with k and is 1 above
ln((3+sqrt5)/2). 2(c): EM's ratio, much larger, growing with eps and k towards
2, and tending to 1 as eps -> 0. Solid: the regular-mechanism LP (lattice
weighting, monotonicity rows); dashed: the LP as printed with the notebook's
box weighting. eps: 21 log-spaced points on 10^-2..10.
"""

import os  # noqa: E402
import sys  # noqa: E402

import matplotlib.pyplot as plt
import numpy as np

from optnoise.figures import FigureScript
from optnoise.selection import GOLDEN_EPS

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _pf2020 import lp_ratio_curves  # noqa: E402

M = 4


def main(argv=None) -> int:
    fs = FigureScript("pf2020", "fig2b", argv, description=__doc__)
    eps = fs.grid(full=np.logspace(-2, 1, 21), fast=np.logspace(-1.5, 0.5, 5))
    ks = fs.grid(full=(2, 4, 8, 16), fast=(2, 4))
    m = fs.grid(full=M, fast=3)
    curves = {k: lp_ratio_curves(m, k, eps, cache=fs.cache) for k in ks}
    for panel, key, ylabel in (("fig2b", "pf", r"$\mathcal{M}_{PF}$"), ("fig2c", "em", r"$\mathcal{M}_{EM}$")):
        fig, ax = plt.subplots(figsize=(5.5, 4))
        rows = []
        for i, k in enumerate(ks):
            col = plt.cm.plasma(i / max(len(ks), 1))
            ax.plot(eps, curves[k][f"regular_{key}"], lw=2.2, color=col, label=f"$k={k}$ ($B={2 * k}$)")
            ax.plot(eps, curves[k][f"paper_{key}"], "--", lw=1.2, color=col)
            for j, e in enumerate(eps):
                rows.append(
                    {
                        "m": m,
                        "k": k,
                        "eps": e,
                        f"{key}_ratio_regular_lp": curves[k][f"regular_{key}"][j],
                        f"{key}_ratio_paper_lp": curves[k][f"paper_{key}"][j],
                    }
                )
        ax.axvline(GOLDEN_EPS, color="gray", ls=":", lw=1.5, label=r"$\ln\frac{3+\sqrt{5}}{2}$")
        ax.plot([], [], "k--", lw=1.2, label="LP as printed")
        ax.set_xscale("log")
        ax.set_xlabel(r"$\varepsilon$")
        ax.set_ylabel(r"optimality ratio of " + ylabel)
        ax.set_title(rf"{ylabel} vs optimal regular mechanism, $m={m}$", fontsize=10)
        if key == "em":
            ax.set_ylim(0.99, 2.0)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3, which="both")
        fs.save(fig, rows, name=panel)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
