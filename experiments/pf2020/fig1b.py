"""Fig. 1(b) of McKenna & Sheldon (2020): ratio of EM's to PF's expected error on the worst case.

``E[err_EM] / E[err_PF]`` from Eqs. 7-8 on ``q = (0, -c, ..., -c)`` against
``p = exp(-eps c / (2 Delta))``; the ratio depends on c and eps only through p.
m = 2, 3, 4, 10 as in the authors' notebook, plus m = 100 and 1000 to show the
convergence to 1 as m grows. The ratio stays in [1, 2] and tends to 2 as p -> 0
(large eps c).
"""

import matplotlib.pyplot as plt
import numpy as np

from optnoise.mechanisms.selection import em_worst_case_error, pf_worst_case_error
from optnoise.reproduce.figures import FigureScript

MS = (2, 3, 4, 10, 100, 1000)


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`): every column exact
#: (closed forms (Eqs. 7-8)).
TOLERANCES: dict = {"fig1b": {}}


def main(argv=None) -> int:
    fs = FigureScript("pf2020", "fig1b", argv, description=__doc__)
    p = fs.grid(full=np.linspace(1e-6, 1 - 1e-6, 400), fast=np.linspace(1e-3, 1 - 1e-3, 25))
    c = -2.0 * np.log(p)  # eps = Delta = 1
    table = {"p": p, "eps_c_over_delta": c}
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for i, m in enumerate(MS):
        ratio = em_worst_case_error(c, m, 1.0) / pf_worst_case_error(c, m, 1.0)
        table[f"ratio_m{m}"] = ratio
        ax.plot(p, ratio, lw=2.2, color=plt.cm.viridis(i / (len(MS) - 1)), label=f"$m={m}$")
    ax.set_xlabel(r"$p = e^{-\varepsilon c / (2\Delta)}$")
    ax.set_ylabel(r"$\mathbb{E}[\mathcal{E}(\mathcal{M}_{EM})] \,/\, \mathbb{E}[\mathcal{E}(\mathcal{M}_{PF})]$")
    ax.set_xlim(0, 1)
    ax.set_ylim(1, 2)
    ax.set_title(r"Worst case $\vec q = (0, -c, \dots, -c)$: EM / PF", fontsize=10)
    ax.legend(ncol=2)
    ax.grid(alpha=0.3)
    fs.save(fig, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
