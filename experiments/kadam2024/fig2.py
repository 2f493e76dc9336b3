"""Fig. 2 of Kadam et al. (2024): optimal error rate against delta for an SD neighbourhood.

rho*(delta, eps) = 1 - f*(0) is piecewise linear in delta: flat regions
delta_low_k <= delta <= delta_bar_k alternate with linear regions of negative
slope (Theorem 2, boundaries (19)). The paper's Fig. 2 is a sketch without
parameters; we draw n = 4, mu_hat = 3 (coprime with n+1 = 5, so m = n = 4 and
k = 0..4 sections), eps = 0.5, where every region is wide enough to see. The
curve is the closed form (optnoise.mechanisms.closed_form.sd.sd_error_rate); the markers are
MILP optima of the published formulation (13) (privacy="pdp-kadam", directed
shift set {3}).
"""

from __future__ import annotations

import os
import sys

import matplotlib.pyplot as plt
import numpy as np

from optnoise import Neighborhood
from optnoise.mechanisms.closed_form.sd import sd_boundaries, sd_error_rate
from optnoise.reproduce.compare import SOLVER
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _kadam2024 import progress, solve  # noqa: E402

N, MU, EPS = 4, 3, 0.5


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: The MILP markers are solver optima; the closed form and its boundaries are exact.
TOLERANCES = {"fig2": {"error_rate": SOLVER.only(series="milp_pdp_kadam")}}


def main(argv=None) -> int:
    fs = FigureScript("kadam2024", "fig2", argv, description=__doc__)
    delta = fs.grid(full=np.linspace(0.0, 1.0, 2001), fast=np.linspace(0.0, 1.0, 101))
    d_milp = fs.grid(full=np.linspace(0.0, 1.0, 26), fast=np.array([0.0, 0.15, 0.5]))
    rho = sd_error_rate(N, MU, EPS, delta=delta)
    low, bar = sd_boundaries(N, MU, EPS)
    progress(fs, f"{d_milp.size} MILPs")
    nb = Neighborhood.sd(MU, directed=True)
    rho_milp = np.array(
        [
            solve(fs, n=N, eps=EPS, delta=float(d), neighborhood=nb, metric="er", privacy="pdp-kadam").distortion
            for d in d_milp
        ]
    )
    gap = np.max(np.abs(rho_milp - sd_error_rate(N, MU, EPS, delta=d_milp)))
    if gap > 1e-7:
        raise RuntimeError(f"Theorem 2 and the MILP differ by {gap:g}")

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for k in range(N + 1):
        ax.axvspan(low[k], bar[k], color="C0", alpha=0.10, lw=0, label=r"flat region $k$" if k == 0 else None)
        if k < N:
            ax.axvspan(bar[k], low[k + 1], color="C1", alpha=0.15, lw=0, label="linear region" if k == 0 else None)
        if bar[k] - low[k] > 0.02:  # the last flat region is the single point delta = 1
            ax.text(0.5 * (low[k] + bar[k]), 0.72, f"$k={k}$", ha="center", fontsize=8, color="C0")
    ax.plot(delta, rho, color="C0", lw=2, label="Theorem 2 (closed form)")
    ax.plot(d_milp, rho_milp, "o", color="k", ms=4, mfc="none", label="MILP (13), pdp-kadam")
    ax.set_xlabel(r"$\delta$")
    ax.set_ylabel(r"error rate $\rho^\star(\delta,\varepsilon)=1-f^\star(0)$")
    ax.set_title(rf"Fig. 2: SD neighbourhood, $n={N}$, $\hat\mu={MU}$, $\varepsilon={EPS}$")
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.02, 0.78)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fs.save(
        fig,
        [{"series": "closed_form", "delta": float(d), "error_rate": float(r)} for d, r in zip(delta, rho, strict=True)]
        + [
            {"series": "milp_pdp_kadam", "delta": float(d), "error_rate": float(r)}
            for d, r in zip(d_milp, rho_milp, strict=True)
        ]
        + [{"series": "delta_low_k", "delta": float(v), "error_rate": "", "k": k} for k, v in enumerate(low)]
        + [{"series": "delta_bar_k", "delta": float(v), "error_rate": "", "k": k} for k, v in enumerate(bar)],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
