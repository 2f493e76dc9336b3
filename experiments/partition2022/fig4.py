"""Fig. 4 of Desfontaines et al. (PoPETs 2022): midpoint against kappa (partitions per user).

eps = 1, delta = 1e-5, kappa = 1..7. pi_opt and Laplace split the budget,
(eps/kappa, delta/kappa); Gaussian thresholding uses the analytic Gaussian
(Balle-Wang) with L2 sensitivity sqrt(kappa) and the delta split between
noise and threshold that minimises the threshold (a user's kappa singleton
partitions appear with total probability 1 - (1 - q)^kappa = delta_threshold).
Midpoints: the real n where the release probability is 1/2, for every
mechanism (for pi_opt, Theorem 1's closed form at real n).
"""

import matplotlib.pyplot as plt
import numpy as np

from optnoise.mechanisms.partition import selection_percentile
from optnoise.reproduce.figures import FigureScript

EPS, DELTA = 1.0, 1e-5


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`): every column exact
#: (closed forms and Brent roots to 1e-13).
TOLERANCES: dict = {"fig4": {}}


def main(argv=None) -> int:
    fs = FigureScript("partition2022", "fig4", argv, description=__doc__)
    kappa = np.arange(1, fs.grid(full=7, fast=4) + 1)
    table = {"kappa": kappa}
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for method, marker, name in (
        ("opt", "o", r"$\pi_{\mathrm{opt}}$"),
        ("laplace", "s", r"$\pi_{\mathrm{Lap}}$"),
        ("gaussian", "^", r"$\pi_{\mathrm{Gauss}}$"),
    ):
        y = np.array([selection_percentile(0.5, EPS, DELTA, method=method, kappa=int(k)) for k in kappa])
        table[f"midpoint_{method}"] = y
        ax.plot(kappa, y, marker=marker, label=name)
    ax.set_ylim(0, None)  # the paper's axis starts at 0
    ax.set_xlabel(r"$\kappa$")
    ax.set_ylabel(r"$n$ s.t. $\mathbb{P}[\rho(n)=\mathrm{keep}]=1/2$")
    ax.set_title(r"$\varepsilon=1$, $\delta=10^{-5}$, budget split over $\kappa$")
    ax.grid(alpha=0.3)
    ax.legend()
    fs.save(fig, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
