"""Fig. 3 of Sadeghi, Asoodeh, Calmon (arXiv 2007.09374): delta against rho for several eps and N.

eps = 0.5, 1, 2 (colours) and N = 10, 20 (solid, dashed); the paper's values
were lost in extraction. delta is the paper's (N+1) delta~* (Theorem 3,
Remark 2). The "knee" the text describes (delta shoots up once the error
probability rho drops below a threshold) sits at the last crossover value
theta_N, where delta~* switches from the Type-II bound to the Type-I bound
delta_N; the markers show theta_N.
"""

import matplotlib.pyplot as plt
import numpy as np

from optnoise.count import crossover_values, optimal_alpha, paper_dp_delta
from optnoise.figures import FigureScript

EPSS = (0.5, 1.0, 2.0)
NS = (10, 20)


def main(argv=None) -> int:
    fs = FigureScript("count2020", "fig3", argv, description=__doc__)
    rho = fs.grid(full=np.linspace(0.02, 0.98, 97), fast=np.linspace(0.05, 0.95, 7))
    table = {"rho": rho}
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for i, eps in enumerate(EPSS):
        for N, ls in zip(NS, ("-", "--"), strict=True):
            d = np.array([float(paper_dp_delta(optimal_alpha(N, r, eps).claimed, N)) for r in rho])
            ax.semilogy(rho, d, color=f"C{i}", ls=ls, label=rf"$\varepsilon={eps:g}$, $N={N}$")
            th = crossover_values(N, eps)[-1]
            ax.semilogy([th], [float(paper_dp_delta(optimal_alpha(N, th, eps).claimed, N))], "o", color=f"C{i}", ms=5)
            table[f"delta_eps{eps:g}_N{N}"] = d
    ax.set_xlabel(r"probability of a wrong count $\rho$")
    ax.set_ylabel(r"$\delta=(N+1)\tilde\delta^*$")
    ax.set_title(r"knee at the crossover $\theta_N$ (markers)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2)
    fs.save(fig, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
