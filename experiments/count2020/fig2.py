"""Fig. 2 of Sadeghi, Asoodeh, Calmon (arXiv 2007.09374): delta against eps for several N.

rho = 0.5 fixed (the paper's value was lost in extraction); N = 5, 10, 15, 20.
Solid: the paper's DP delta (N+1) delta~* from Theorem 3 and Remark 2 (as
reconstructed in optnoise.mechanisms.count); dotted: the exact hockey-stick delta of the
same mechanism. The sharp drop is the switch from a Type-I to the Type-II
bound as eps grows.
"""

import matplotlib.pyplot as plt
import numpy as np

from optnoise.mechanisms.count import delta_curve
from optnoise.reproduce.compare import ROUNDOFF
from optnoise.reproduce.figures import FigureScript

RHO = 0.5
NS = (5, 10, 15, 20)


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: The deltas are float sums of masses of order one: below ~1e-15 they are rounding (the plot starts at 1e-16).
TOLERANCES = {"fig2": {f"delta_{m}_N{n}": ROUNDOFF for m in ("paper", "exact") for n in (5, 10, 15, 20)}}


def main(argv=None) -> int:
    fs = FigureScript("count2020", "fig2", argv, description=__doc__)
    eps = fs.grid(full=np.linspace(0.1, 3.0, 59), fast=np.linspace(0.1, 3.0, 6))
    table = {"eps": eps}
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for i, N in enumerate(NS):
        paper = delta_curve(eps, N, RHO, measure="paper")
        exact = delta_curve(eps, N, RHO, measure="exact")
        ax.semilogy(eps, paper, color=f"C{i}", label=rf"$N={N}$")
        ax.semilogy(eps, np.maximum(exact, 1e-300), color=f"C{i}", ls=":")
        table[f"delta_paper_N{N}"] = paper
        table[f"delta_exact_N{N}"] = exact
    ax.set_ylim(1e-16, 2)
    ax.set_xlabel(r"$\varepsilon$")
    ax.set_ylabel(r"$\delta$")
    ax.set_title(rf"$\rho={RHO}$: solid $(N+1)\tilde\delta^*$, dotted exact $\delta$")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    fs.save(fig, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
