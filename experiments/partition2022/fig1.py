"""Fig. 1 of Desfontaines et al. (PoPETs 2022): release probability against the number of users.

pi_opt (Theorem 1) against Laplace thresholding (Definition 9), both evaluated
at integer user counts n (partition counts are integers). Left: eps = 1,
delta = 1e-5, n = 5..22; right: eps = 0.1, delta = 1e-10, n = 150..310 (the
paper's axes show 6..20 and 160..300).
"""

import matplotlib.pyplot as plt
import numpy as np

from optnoise.mechanisms.partition import pi_laplace, pi_opt
from optnoise.reproduce.figures import FigureScript

PANELS = [(1.0, 1e-5, (5, 22)), (0.1, 1e-10, (150, 310))]


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`): every column exact
#: (closed forms and Brent roots to 1e-13).
TOLERANCES: dict = {"fig1": {}}


def main(argv=None) -> int:
    fs = FigureScript("partition2022", "fig1", argv, description=__doc__)
    step = fs.grid(full=1, fast=5)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    rows = []
    for ax, (eps, delta, (lo, hi)) in zip(axes, PANELS, strict=False):
        n = np.arange(lo, hi + 1, step)
        po, pl = pi_opt(n, eps, delta), pi_laplace(n, eps, delta)
        ax.plot(n, po, "o-", ms=3, label=r"$\pi_{\mathrm{opt}}$")
        ax.plot(n, pl, "s--", ms=3, label=r"$\pi_{\mathrm{Lap}}$")
        ax.set_xlabel(r"number of users $n$")
        ax.set_ylabel(r"$\mathbb{P}[\rho(n)=\mathrm{keep}]$")
        ax.set_title(rf"$\varepsilon={eps:g}$, $\delta=10^{{{int(np.log10(delta))}}}$")
        ax.grid(alpha=0.3)
        ax.legend()
        rows += [
            {"eps": eps, "delta": delta, "n": int(k), "pi_opt": float(a), "pi_lap": float(b)}
            for k, a, b in zip(n, po, pl, strict=True)
        ]
    fig.tight_layout()
    fs.save(fig, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
