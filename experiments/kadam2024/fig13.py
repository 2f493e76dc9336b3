"""Fig. 13 of Kadam et al. (2024): optimal joint noise PMFs f*(eta_1, eta_2) of 2-D vector queries.

(a) BD neighbourhood, n = 4, eps = 3, mu_bar_1 = mu_bar_2 = 2: the shifts
    {0,1,2}^2 without (0,0), directed; delta = 0 (not in the caption; the
    same instance as the paper's eq. (57), whose matrix this reproduces,
    with marginals [0.7681, 0.1073, 0.1073, 0.0086, 0.0086]). A 2-D staircase.
(b) Arbitrary neighbourhood, n = 6, eps = 3, mu_1 in {1, 3}, mu_2 in {2, 5}: the
    four shifts (1,2), (1,5), (3,2), (3,5), directed; delta = 0 (our choice).
    The second largest masses, e^-eps f*(0,0), sit at exactly those shifts.

Both minimise the error rate 1 - f(0,0) with the LP (14) (delta = 0, where all
privacy notions coincide). Only f*(0,0) is unique: the LP may spread the
remaining mass in several optimal ways, and the plot shows the one HiGHS
returns. Heatmaps on a log colour scale; exact zeros are
white; each cell is labelled with its mass.
"""

from __future__ import annotations

import os
import sys

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm

from optnoise import Neighborhood
from optnoise.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _kadam2024 import progress, solve  # noqa: E402

EPS = 3.0
PANELS = {
    "a": (
        4,
        [(a, b) for a in range(3) for b in range(3) if (a, b) != (0, 0)],
        r"BD, $\bar\mu_1=\bar\mu_2=2$: shifts $\{0,1,2\}^2\setminus\{(0,0)\}$",
    ),
    "b": (6, [(a, b) for a in (1, 3) for b in (2, 5)], r"arbitrary: $\mu_1\in\{1,3\}$, $\mu_2\in\{2,5\}$"),
}


def main(argv=None) -> int:
    fs = FigureScript("kadam2024", "fig13", argv, description=__doc__)
    for panel, (n, shifts, what) in PANELS.items():
        progress(fs, f"panel {panel}: LP on {(n + 1) ** 2} noise values")
        res = solve(
            fs,
            n=n,
            eps=EPS,
            delta=0.0,
            neighborhood=Neighborhood.shifts(shifts, directed=True),
            metric="er",
            privacy="pdp-kadam",
        )
        f = res.pmf
        fig, ax = plt.subplots(figsize=(5.6, 4.8))
        masked = np.ma.masked_less_equal(f, 1e-12)
        im = ax.imshow(masked, cmap="viridis", norm=LogNorm(vmin=max(masked.min(), 1e-6), vmax=1.0))
        for (i, j), v in np.ndenumerate(f):
            txt = "0" if v <= 1e-12 else (f"{v:.4f}" if v >= 1e-3 else f"{v:.0e}")
            ax.text(
                j,
                i,
                txt,
                ha="center",
                va="center",
                fontsize=7 if n > 4 else 8,
                color="white" if 1e-12 < v < 0.05 else "black",
            )
        for a, b in shifts:
            ax.add_patch(plt.Rectangle((b - 0.5, a - 0.5), 1, 1, fill=False, ec="C3", lw=1.5))
        ax.set_xticks(range(n + 1))
        ax.set_yticks(range(n + 1))
        ax.set_xlabel(r"$\eta_2$")
        ax.set_ylabel(r"$\eta_1$")
        ax.set_title(
            rf"Fig. 13{panel}: $n={n}$, $\varepsilon={EPS:g}$, $\delta=0$, {what}"
            + "\n"
            + r"(red boxes: the shifts $\mu$)",
            fontsize=9,
        )
        fig.colorbar(im, ax=ax, label=r"$f^\star(\eta_1,\eta_2)$ (log scale)")
        fig.tight_layout()
        i1, i2 = np.indices(f.shape)
        fs.save(
            fig,
            {
                "eta1": i1.ravel(),
                "eta2": i2.ravel(),
                "pmf": f.ravel(),
                "is_shift": [int((a, b) in shifts) for a, b in zip(i1.ravel(), i2.ravel(), strict=True)],
            },
            name=f"fig13{panel}",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
