"""Fig. 2(a) of McKenna & Sheldon (2020): optimality ratio of PF for several numbers of candidates.

``E[err(PF)] / E[err(OPT)]`` averaged over the bounded lattice, OPT from the
LP of Theorem 3 solved with HiGHS through optnoise's solver layer. The paper
used k = 4 (bound B = 8) and m = 3..6; here the lattice is deeper, k = 8
(B = 2k Delta = 16, 9 score levels), m = 2..6. Solid: the regular-mechanism
LP (each score vector with max 0 counts once; worst-neighbour privacy rows;
monotonicity rows added lazily). Dashed: the LP as printed in Appendix D (no
monotonicity rows) with the notebook's box weighting -- a relaxation whose
optimum can be non-monotone and not eps-DP, so its ratios are slightly higher.
eps: 21 log-spaced points on 10^-2..10 (the notebook's range). The ratio is exactly 1 above
ln((3+sqrt5)/2) (dotted line) and barely above 1 below it.
"""

import os  # noqa: E402
import sys  # noqa: E402

import matplotlib.pyplot as plt
import numpy as np

from optnoise.figures import FigureScript
from optnoise.selection import GOLDEN_EPS

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _pf2020 import lp_ratio_curves  # noqa: E402


def main(argv=None) -> int:
    fs = FigureScript("pf2020", "fig2a", argv, description=__doc__)
    eps = fs.grid(full=np.logspace(-2, 1, 21), fast=np.logspace(-1.5, 0.5, 5))
    k = fs.grid(full=8, fast=3)
    ms = fs.grid(full=(2, 3, 4, 5, 6), fast=(2, 3))
    rows = []
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for i, m in enumerate(ms):
        cur = lp_ratio_curves(m, k, eps, cache=fs.cache)
        col = plt.cm.viridis(i / max(len(ms) - 1, 1))
        ax.plot(eps, cur["regular_pf"], lw=2.2, color=col, label=f"$m={m}$")
        ax.plot(eps, cur["paper_pf"], "--", lw=1.2, color=col)
        for j, e in enumerate(eps):
            rows.append(
                {
                    "m": m,
                    "k": k,
                    "eps": e,
                    "pf_ratio_regular_lp": cur["regular_pf"][j],
                    "pf_ratio_paper_lp": cur["paper_pf"][j],
                }
            )
    ax.axvline(GOLDEN_EPS, color="gray", ls=":", lw=1.5, label=r"$\ln\frac{3+\sqrt{5}}{2}$")
    ax.plot([], [], "k--", lw=1.2, label="LP as printed")
    ax.set_xscale("log")
    ax.set_xlabel(r"$\varepsilon$")
    ax.set_ylabel(
        r"optimality ratio $\mathbb{E}[\mathcal{E}(\mathcal{M}_{PF})] / \mathbb{E}[\mathcal{E}(\mathrm{OPT})]$"
    )
    ax.set_title(rf"PF vs optimal regular mechanism, lattice bound $2k\Delta$, $k={k}$", fontsize=10)
    ax.legend(fontsize=8, ncol=2)
    ax.grid(alpha=0.3, which="both")
    fs.save(fig, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
