"""Fig. 4 of Kadam et al. (2024): f*(0) against delta for a BD neighbourhood, in b segments.

Theorem 3: segment h in [b-1]_+ holds h pairs of flat and linear regions
(h, j), j = 1..h; in the last segment (h = b) f*(0) = delta (40). The paper's
Fig. 4 is a sketch without parameters; we draw n = 15, mu_bar = 5 (b = 3,
r = 0, so b + r < mu_bar) and eps = 1, which has every kind of region:
flat (0, 0) (Lemma 4), segment 1 = {(1, 1)}, segment 2 = {(2, 1), (2, 2)},
then segment 3, the line f*(0) = delta. Curve: closed form
(optnoise.mechanisms.closed_form.bd.bd_error_rate); markers: MILP (13) (pdp-kadam,
directed shifts {1..5}).
"""

from __future__ import annotations

import os
import sys

import matplotlib.pyplot as plt
import numpy as np

from optnoise import Neighborhood
from optnoise.mechanisms.closed_form.bd import bd_boundaries, bd_error_rate
from optnoise.reproduce.compare import SOLVER
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _kadam2024 import progress, solve  # noqa: E402

N, MU_BAR, EPS = 15, 5, 1.0
B = N // MU_BAR


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: The MILP markers are solver optima; the closed form and its regions are exact.
TOLERANCES = {"fig4": {"f0": SOLVER.only(series="milp_pdp_kadam")}}


def main(argv=None) -> int:
    fs = FigureScript("kadam2024", "fig4", argv, description=__doc__)
    reg = bd_boundaries(N, MU_BAR, EPS)
    delta = fs.grid(full=np.linspace(0.0, 1.0, 10001), fast=np.linspace(0.0, 1.0, 501))
    # MILP checks: the middle of every flat and linear region, plus points on the last line
    lin_mid = 0.5 * (reg.delta_bar[:-1] + reg.delta_low[1:])
    flat_mid = 0.5 * (reg.delta_low + reg.delta_bar)
    d_milp = np.sort(np.concatenate([flat_mid, lin_mid, [0.0, 0.3, 0.5, 0.8, 1.0]]))
    if fs.fast:
        d_milp = d_milp[::3]
    f0 = 1.0 - bd_error_rate(N, MU_BAR, EPS, delta=delta)
    progress(fs, f"{d_milp.size} MILPs")
    nb = Neighborhood.bd(MU_BAR, directed=True)
    f0_milp = np.array(
        [
            solve(fs, n=N, eps=EPS, delta=float(d), neighborhood=nb, metric="er", privacy="pdp-kadam").pmf[0]
            for d in d_milp
        ]
    )
    gap = np.max(np.abs(f0_milp - (1.0 - bd_error_rate(N, MU_BAR, EPS, delta=d_milp))))
    if gap > 1e-7:
        raise RuntimeError(f"Theorem 3 and the MILP differ by {gap:g}")

    fig, ax = plt.subplots(figsize=(7, 4.4))
    seg_colors = {0: "0.9", 1: "C0", 2: "C1", B: "C2"}
    for k, (h, j, lo, hi) in enumerate(zip(reg.h, reg.j, reg.delta_low, reg.delta_bar, strict=True)):
        ax.axvspan(lo, hi, color=seg_colors[int(h)], alpha=0.25 if h else 0.6, lw=0)
        if k > 0:
            ax.axvspan(reg.delta_bar[k - 1], lo, color=seg_colors[int(h)], alpha=0.08, lw=0, hatch="///")
        ax.text(0.5 * (lo + hi), 0.2925 - 0.0012 * (k % 2), f"({h},{j})", ha="center", fontsize=8)
    ax.axvspan(reg.delta_bar[-1], delta[-1], color=seg_colors[B], alpha=0.15, lw=0)
    ax.text(
        0.5 * (reg.delta_bar[-1] + 0.4), 0.2925, rf"segment $h=b={B}$: $f^\star(0)=\delta$", ha="center", fontsize=8
    )
    ax.plot(delta, f0, color="k", lw=1.8, label="Theorem 3 (closed form)")
    ax.plot(d_milp, f0_milp, "o", color="C3", ms=5, mfc="none", label="MILP (13), pdp-kadam")
    for h in range(1, B):
        ax.plot([], [], color=seg_colors[h], lw=6, alpha=0.4, label=rf"segment $h={h}$: {h} flat + {h} linear")
    ax.set_xlabel(r"$\delta$")
    ax.set_ylabel(r"$f^\star(0)=1-\rho^\star(\delta,\varepsilon)$")
    ax.set_title(
        rf"Fig. 4: BD neighbourhood, $n={N}$, $\bar\mu={MU_BAR}$ ($b={B}$, $r=0$), $\varepsilon={EPS:g}$"
        "\n(labels: flat regions $(h,j)$; the steep short pieces are the linear regions)",
        fontsize=10,
    )
    ax.set_xlim(0.0, 0.4)
    ax.set_ylim(0.262, 0.296)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ins = ax.inset_axes((0.775, 0.34, 0.21, 0.4))
    ins.plot(delta, f0, color="k", lw=1.2)
    ins.plot(d_milp, f0_milp, "o", color="C3", ms=3, mfc="none")
    ins.axvspan(0.0, 0.4, color="0.5", alpha=0.15, lw=0)
    ins.set_xlim(0, 1)
    ins.set_ylim(0, 1.02)
    ins.set_title(r"all $\delta\in[0,1]$ (shaded: zoom)", fontsize=7)
    ins.tick_params(labelsize=7)
    fig.tight_layout()
    fs.save(
        fig,
        [{"series": "closed_form", "delta": float(d), "f0": float(v)} for d, v in zip(delta, f0, strict=True)]
        + [
            {"series": "milp_pdp_kadam", "delta": float(d), "f0": float(v)}
            for d, v in zip(d_milp, f0_milp, strict=True)
        ]
        + [
            {
                "series": "flat_region",
                "delta": float(lo),
                "f0": float(p),
                "h": int(h),
                "j": int(j),
                "delta_bar": float(hi),
            }
            for h, j, lo, hi, p in zip(reg.h, reg.j, reg.delta_low, reg.delta_bar, reg.phi0, strict=True)
        ],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
