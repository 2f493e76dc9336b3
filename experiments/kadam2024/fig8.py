"""Fig. 8 of Kadam et al. (2024): the optimal noise PMF next to the discrete Gaussian and geometric ones.

n = 8, eps = 1, delta = 0, geometric alpha = 0.7, Gaussian sigma^2 = 3.38 (the
caption's values). The baselines' noises are wrapped modulo 9 (the release
q + eta mod 9). The optimum minimises the error rate at (eps, delta) =
(1, 0) (delta = 0: the LP (14)) for a count query; the paper's directed
convention mu = +1 gives the one-sided staircase, and the symmetric
neighbourhood mu = +-1 (the relation under which the baselines are private)
gives a two-sided one. Both have the largest mass at eta = 0, the paper's
point. The legend lists each PMF's f(0), circular MSE and its smallest eps
for delta = 0 under mu = +-1: the two baselines are (1, 0)-DP with room to
spare (alpha = 0.7 is e^-0.36), so the caption's "same MSE" does not hold;
the MSEs are in the CSV and README. Both optima are unique at delta = 0 (every
lower bound f(eta+mu) >= e^-eps f(eta) is tight); they are solved as canonical
optima (NoiseDesign.solve(canonical=True)) like every PMF of these figures.
"""

from __future__ import annotations

import os
import sys

import matplotlib.pyplot as plt
import numpy as np

from optnoise.mechanisms.baselines import discrete_gaussian, geometric
from optnoise.privacy.curves import eps_for_delta
from optnoise.reproduce.compare import SOLVER
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _kadam2024 import BASELINE_STYLE, COUNT_DIRECTED, COUNT_SYMMETRIC, NOTION_STYLE, progress, solve  # noqa: E402

N, EPS, ALPHA, SIGMA2 = 8, 1.0, 0.7, 3.38


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: The optima (canonical) and the quantities computed from them are solver results; the baselines are exact.
TOLERANCES = {
    "fig8": {
        f"opt_{d}{q}": SOLVER for d in ("directed", "symmetric") for q in ("", "_circular_mse", "_eps_pure_symmetric")
    }
}


def main(argv=None) -> int:
    fs = FigureScript("kadam2024", "fig8", argv, description=__doc__)
    progress(fs, "2 LPs")
    circ = np.minimum(np.arange(N + 1), N + 1 - np.arange(N + 1)) ** 2
    pmfs = {
        r"optimum, $\mu=+1$ (paper's convention)": solve(
            fs, n=N, eps=EPS, delta=0.0, neighborhood=COUNT_DIRECTED, metric="er", privacy="pdp-kadam", canonical=True
        ).pmf,
        r"optimum, $\mu=\pm1$": solve(
            fs, n=N, eps=EPS, delta=0.0, neighborhood=COUNT_SYMMETRIC, metric="er", privacy="pdp-kadam", canonical=True
        ).pmf,
        rf"discrete Gaussian $\sigma^2={SIGMA2}$": discrete_gaussian(N, SIGMA2).noise,
        rf"discrete geometric $\alpha={ALPHA}$": geometric(N, ALPHA).noise,
    }
    colors = [
        NOTION_STYLE["pdp-kadam"]["color"],
        "C9",
        BASELINE_STYLE["gaussian"]["color"],
        BASELINE_STYLE["geometric"]["color"],
    ]
    eta = np.arange(N + 1)
    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    w = 0.2
    table = {"eta": eta}
    for i, ((lab, f), c) in enumerate(zip(pmfs.items(), colors, strict=True)):
        e0 = eps_for_delta(f, COUNT_SYMMETRIC, 0.0, notion="dp")
        ax.bar(
            eta + (i - 1.5) * w,
            f,
            width=w,
            color=c,
            label=f"{lab}: $f(0)={f[0]:.3f}$, MSE$={circ @ f:.2f}$, " + rf"$\varepsilon_{{\pm1}}={e0:.2f}$",
        )
        key = ["opt_directed", "opt_symmetric", "gaussian", "geometric"][i]
        table[key] = f
        table[f"{key}_circular_mse"] = np.full(eta.size, circ @ f)
        table[f"{key}_eps_pure_symmetric"] = np.full(eta.size, e0)
    ax.set_xticks(eta)
    ax.set_xlabel(r"noise value $\eta$ (modulo $n+1=9$; $\eta=8$ is $-1$)")
    ax.set_ylabel(r"$f(\eta)$")
    ax.set_title(
        rf"Fig. 8: noise PMFs, $n={N}$, $\varepsilon={EPS:g}$, $\delta=0$"
        + "\n"
        + r"(MSE: circular; $\varepsilon_{\pm1}$: smallest $\varepsilon$ of pure DP for neighbours $q\pm1$)",
        fontsize=10,
    )
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7.5, loc="upper right")
    fig.tight_layout()
    fs.save(fig, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
