"""Fig. 2 of Desfontaines et al. (PoPETs 2022): 5th/50th/95th percentile n against eps, delta = 1e-5.

The percentile is the real n with P[rho(n) = keep] = q (q = 0.05, 0.5, 0.95),
one convention for both mechanisms: pi_opt is Theorem 1's closed form read at
real n (``pi_opt_continuous``; equal to pi_opt at every integer), Laplace its
own formula (at q = 1/2, the threshold). Left panel eps in [0.01, 0.1], right
panel eps in [0.1, 3] (the paper's two panels; log eps axis). The y-ranges
follow the paper's tick labels, which stop at 1000 and 100: they show every
midpoint, while Laplace's 95th percentile (up to 1313 and 132) leaves the top
at the smallest eps, as in the paper.
"""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FormatStrFormatter

from optnoise.mechanisms.partition import selection_percentile
from optnoise.reproduce.figures import FigureScript

DELTA = 1e-5
QS = (0.05, 0.5, 0.95)
#: Upper y-limits of the two panels: ticks end at 1000 and 100, as the paper's do.
YMAX = (1150.0, 115.0)


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`): every column exact
#: (closed forms and Brent roots to 1e-13).
TOLERANCES: dict = {"fig2": {}}


def main(argv=None) -> int:
    fs = FigureScript("partition2022", "fig2", argv, description=__doc__)
    k = fs.grid(full=40, fast=4)
    ranges = [np.geomspace(0.01, 0.1, k), np.geomspace(0.1, 3.0, k)]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    rows = []
    for ax, eps, ymax in zip(axes, ranges, YMAX, strict=True):
        for method, color, name in (("opt", "C0", r"$\pi_{\mathrm{opt}}$"), ("laplace", "C1", r"$\pi_{\mathrm{Lap}}$")):
            for q in QS:
                y = np.array([selection_percentile(q, e, DELTA, method=method) for e in eps])
                ax.plot(
                    eps,
                    y,
                    color=color,
                    ls="-" if q == 0.5 else "--",
                    lw=1.8 if q == 0.5 else 1.0,
                    label=name if q == 0.5 else None,
                )
                rows += [
                    {"eps": float(e), "method": method, "q": q, "n": float(v)} for e, v in zip(eps, y, strict=True)
                ]
        ax.set_xscale("log")
        ax.set_ylim(0, ymax)
        ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))  # 0.01, 0.1, 1 as in the paper
        ax.set_xlabel(r"$\varepsilon$")
        ax.set_ylabel(r"$n$ s.t. $\mathbb{P}[\rho(n)=\mathrm{keep}]=0.05, 0.5, 0.95$")
        ax.grid(alpha=0.3, which="both")
        ax.legend(title="solid: median, dashed: 5%/95%")
    fig.suptitle(r"$\delta=10^{-5}$")
    fig.tight_layout()
    fs.save(fig, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
