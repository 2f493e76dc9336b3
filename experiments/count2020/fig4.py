"""Fig. 4 of Sadeghi, Asoodeh, Calmon (arXiv 2007.09374): proposed mechanism against the discrete Gaussian.

For each eps: the optimal mechanism (Theorem 3) for (N, rho); a discrete
Gaussian with the same variance; their deltas. Proposed: the paper's
(N+1) delta~*, the exact hockey-stick delta of the same mechanism, and the
alpha that minimises the exact delta directly (hockey-stick LP; values below
1e-8 are hidden, the LP's feasibility tolerance is 1e-9). Discrete Gaussian:
the paper's eq. (45) (Canonne-Kamath-Steinke Thm. 7) with sigma^2 set to the
variance, and the exact hockey stick of the discrete Gaussian whose variance
matches (indistinguishable here). Panels: (N, rho) = (10, 0.5) and (20, 0.7);
the paper's values were lost in extraction.
"""

import matplotlib.pyplot as plt
import numpy as np

from optnoise.mechanisms.count import count_lp, optimal_alpha, paper_dp_delta
from optnoise.privacy.noise_families import cks_delta, discrete_gaussian_delta, discrete_gaussian_sigma2
from optnoise.reproduce.compare import ROUNDOFF, SOLVER
from optnoise.reproduce.figures import FigureScript

CASES = ((10, 0.5), (20, 0.7))


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: Deltas are float sums of masses of order one (rounding below ~1e-15); lp_hockey is an LP optimum.
TOLERANCES = {
    "fig4": {"paper": ROUNDOFF, "exact": ROUNDOFF, "lp_hockey": SOLVER, "dg_cks": ROUNDOFF, "dg_exact": ROUNDOFF}
}


def main(argv=None) -> int:
    fs = FigureScript("count2020", "fig4", argv, description=__doc__)
    eps = fs.grid(full=np.linspace(0.1, 3.0, 59), fast=np.linspace(0.1, 3.0, 5))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    rows = []
    for ax, (N, rho) in zip(axes, CASES, strict=False):
        cols = {k: [] for k in ("paper", "exact", "lp_hockey", "dg_cks", "dg_exact")}
        for e in eps:
            m = optimal_alpha(N, rho, e)
            lp = count_lp(N, rho, e, objective="hockey").delta_exact
            cols["paper"].append(float(paper_dp_delta(m.claimed, N)))
            cols["exact"].append(m.delta_exact)
            cols["lp_hockey"].append(lp if lp >= 1e-8 else np.nan)
            cols["dg_cks"].append(cks_delta(e, m.variance))
            cols["dg_exact"].append(discrete_gaussian_delta(e, discrete_gaussian_sigma2(m.variance)))
        style = {
            "paper": ("C0", "-", r"proposed, $(N+1)\tilde\delta^*$"),
            "exact": ("C0", ":", "proposed, exact"),
            "lp_hockey": ("C2", "-.", "proposed, LP on exact $\\delta$"),
            "dg_cks": ("C1", "-", r"$\mathcal{N}_{\mathbb{Z}}$, eq. (45), $\sigma^2$=Var"),
            "dg_exact": ("C3", "--", r"$\mathcal{N}_{\mathbb{Z}}$ same variance, exact"),
        }
        for k, (c, ls, lab) in style.items():
            ax.semilogy(eps, np.maximum(np.asarray(cols[k], dtype=float), 1e-300), color=c, ls=ls, label=lab)
        ax.set_ylim(1e-14, 2)
        ax.set_xlabel(r"$\varepsilon$")
        ax.set_ylabel(r"$\delta$")
        ax.set_title(rf"$N={N}$, $\rho={rho}$")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
        rows += [
            {"N": N, "rho": rho, "eps": float(e), **{k: float(v[j]) for k, v in cols.items()}}
            for j, e in enumerate(eps)
        ]
    fig.tight_layout()
    fs.save(fig, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
