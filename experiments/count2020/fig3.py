"""Fig. 3 of Sadeghi, Asoodeh, Calmon (arXiv 2007.09374): delta against the reliability 1 - rho.

eps = 0.5, 1, 2 (colours) and N = 10, 20 (solid, dashed); the paper's values
were lost in extraction. delta is the paper's (N+1) delta~* (Theorem 3,
Remark 2). The x-axis is the reliability 1 - rho, the probability of
releasing the true count (P2): the text says that for given eps and N there
is a threshold of it "above which delta grows fast to one" and advises
choosing "the largest value ... just before the knee", which reads on an
axis where larger is more reliable (the largest rho would be the least
useful choice). The knee sits at 1 - theta_N, theta_N the last crossover
value, where delta~* switches from the Type-II bound to the Type-I bound
delta_N; the markers show it.
"""

import matplotlib.pyplot as plt
import numpy as np

from optnoise.mechanisms.count import crossover_values, optimal_alpha, paper_dp_delta
from optnoise.reproduce.compare import ROUNDOFF
from optnoise.reproduce.figures import FigureScript

EPSS = (0.5, 1.0, 2.0)
NS = (10, 20)


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: The deltas are float sums of masses of order one: below ~1e-15 they are rounding.
TOLERANCES = {"fig3": {f"delta_eps{e:g}_N{n}": ROUNDOFF for e in (0.5, 1.0, 2.0) for n in (10, 20)}}


def main(argv=None) -> int:
    fs = FigureScript("count2020", "fig3", argv, description=__doc__)
    reliability = fs.grid(full=np.linspace(0.02, 0.98, 97), fast=np.linspace(0.05, 0.95, 7))
    rho = 1.0 - reliability
    table = {"reliability": reliability, "rho": rho}
    fig, ax = plt.subplots(figsize=(7.2, 4.2))
    for i, eps in enumerate(EPSS):
        for N, ls in zip(NS, ("-", "--"), strict=True):
            d = np.array([float(paper_dp_delta(optimal_alpha(N, r, eps).claimed, N)) for r in rho])
            ax.semilogy(reliability, d, color=f"C{i}", ls=ls, label=rf"$\varepsilon={eps:g}$, $N={N}$")
            th = crossover_values(N, eps)[-1]
            knee = float(paper_dp_delta(optimal_alpha(N, th, eps).claimed, N))
            ax.semilogy([1.0 - th], [knee], "o", color=f"C{i}", ms=5)
            table[f"delta_eps{eps:g}_N{N}"] = d
    ax.plot([], [], "ko", ms=5, label=r"knee, $1-\theta_N$")
    ax.set_xlabel(r"reliability $1-\rho$ (probability of releasing the true count)")
    ax.set_ylabel(r"$\delta=(N+1)\tilde\delta^*$")
    ax.set_title(r"$\delta$ grows fast to 1 above a reliability threshold (the knee)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: no curve is hidden
    fig.tight_layout()
    fs.save(fig, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
