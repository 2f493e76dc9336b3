"""Fig. 3 of Desfontaines et al. (PoPETs 2022): 5th/50th/95th percentile n against delta.

delta from 1e-12 to 1e-4 (log axis); left eps = 0.1, right eps = 1. Same
percentile convention as fig2 for both mechanisms (the real n where the
release probability is q; for pi_opt Theorem 1's closed form at real n).
"""

import matplotlib.pyplot as plt
import numpy as np

from optnoise.mechanisms.partition import selection_percentile
from optnoise.reproduce.figures import FigureScript

QS = (0.05, 0.5, 0.95)


def main(argv=None) -> int:
    fs = FigureScript("partition2022", "fig3", argv, description=__doc__)
    deltas = np.geomspace(1e-12, 1e-4, fs.grid(full=41, fast=4))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    rows = []
    for ax, eps in zip(axes, (0.1, 1.0), strict=False):
        for method, color, name in (("opt", "C0", r"$\pi_{\mathrm{opt}}$"), ("laplace", "C1", r"$\pi_{\mathrm{Lap}}$")):
            for q in QS:
                y = np.array([selection_percentile(q, eps, d, method=method) for d in deltas])
                ax.plot(
                    deltas,
                    y,
                    color=color,
                    ls="-" if q == 0.5 else "--",
                    lw=1.8 if q == 0.5 else 1.0,
                    label=name if q == 0.5 else None,
                )
                rows += [
                    {"eps": eps, "delta": float(d), "method": method, "q": q, "n": float(v)}
                    for d, v in zip(deltas, y, strict=True)
                ]
        ax.set_xscale("log")
        ax.set_ylim(0, None)  # the paper's y axes start at 0 (ticks 0-300 and 0-30)
        ax.set_xlabel(r"$\delta$")
        ax.set_ylabel(r"$n$ s.t. $\mathbb{P}[\rho(n)=\mathrm{keep}]=0.05, 0.5, 0.95$")
        ax.set_title(rf"$\varepsilon={eps:g}$")
        ax.grid(alpha=0.3, which="both")
        ax.legend(title="solid: median, dashed: 5%/95%")
    fig.tight_layout()
    fs.save(fig, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
