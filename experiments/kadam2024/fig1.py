"""Fig. 1 of Kadam et al. (2024): the order in which Lemma 3 assigns the optimal SD masses, n = 7.

The noise values 0..7 sit on a circle (the sum is modulo n+1 = 8). Starting
at eta = 0, each step of +mu_hat (mod 8) assigns the next mass
f(k mu_hat) = e^{-k eps} f(0) (Lemma 2/3): (a) mu_hat = 3, coprime with 8, visits
0, 3, 6, 1, 4, 7, 2, 5 (every value); (b) mu_hat = 2 visits 0, 2, 4, 6 and the
values 1, 3, 5, 7 get 0 (18b). Each arrow carries its factor e^-eps near its
tail, away from the centre where the chords of (a) cross. Masses are drawn for eps = 0.75, delta = 0 (the
eps of Fig. 9; Fig. 1 itself has none) from the closed form
(optnoise.mechanisms.closed_form.sd.sd_pmf) and checked against the LP (14) with the
directed shift set {mu_hat}; the CSV holds both.
"""

from __future__ import annotations

import os
import sys

import matplotlib.pyplot as plt
import numpy as np

from optnoise import Neighborhood
from optnoise.mechanisms.closed_form.sd import sd_cycle, sd_pmf
from optnoise.reproduce.compare import SOLVER
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _kadam2024 import progress, solve  # noqa: E402

N, EPS = 7, 0.75
PANELS = (("a", 3), ("b", 2))


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: mass_lp is the LP (14)'s canonical optimum; the closed form is exact.
TOLERANCES = {"fig1": {"mass_lp": SOLVER}}


def main(argv=None) -> int:
    fs = FigureScript("kadam2024", "fig1", argv, description=__doc__)
    fig, axes = plt.subplots(1, 2, figsize=(10, 5))
    rows = []
    m = N + 1
    ang = np.pi / 2 - 2 * np.pi * np.arange(m) / m  # eta = 0 at the top, clockwise
    xy = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    for ax, (panel, mu) in zip(axes, PANELS, strict=False):
        progress(fs, f"panel {panel}: mu_hat = {mu}")
        cyc = sd_cycle(N, mu)
        f_cf = sd_pmf(N, mu, EPS)
        f_lp = solve(
            fs,
            n=N,
            eps=EPS,
            delta=0.0,
            neighborhood=Neighborhood.sd(mu, directed=True),
            metric="er",
            privacy="pdp-kadam",
        ).pmf
        order = {int(eta): k for k, eta in enumerate(cyc)}
        ax.add_patch(plt.Circle((0, 0), 1.0, fill=False, color="0.85", lw=1))
        for k in range(len(cyc)):
            a, b = xy[cyc[k]], xy[cyc[(k + 1) % len(cyc)]]
            if k == len(cyc) - 1:  # the cycle closes: f(N mu) = f(0) is not a new assignment
                ax.annotate(
                    "",
                    xy=b * 0.86,
                    xytext=a * 0.86,
                    arrowprops=dict(arrowstyle="->", color="0.6", ls="--", lw=1, shrinkA=8, shrinkB=8),
                )
                continue
            ax.annotate(
                "",
                xy=b * 0.86,
                xytext=a * 0.86,
                arrowprops=dict(arrowstyle="-|>", color="C0", lw=1.5, shrinkA=8, shrinkB=8),
            )
            # label near the arrow's tail: the chords of (a) all cross in the middle of the circle
            mid = 0.86 * (a + 0.27 * (b - a))
            ax.text(
                *mid,
                r"$e^{-\varepsilon}$",
                fontsize=8,
                color="C0",
                ha="center",
                va="center",
                bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none"),
            )
        for eta in range(m):
            on = eta in order
            size = 900 * f_cf[eta] / f_cf.max() + 120 if on else 120
            ax.scatter(*xy[eta], s=size, color="C0" if on else "0.8", zorder=3, edgecolor="k")
            lab = (
                (rf"$\eta={eta}$" + "\n" + rf"$f_{{({order[eta]})}}={f_cf[eta]:.3f}$")
                if on
                else rf"$\eta={eta}$" + "\n" + r"$f=0$"
            )
            ax.text(*(xy[eta] * (1.3 + 0.18 * abs(xy[eta][0]))), lab, ha="center", va="center", fontsize=9)
            rows.append(
                {
                    "panel": panel,
                    "mu_hat": mu,
                    "eta": eta,
                    "order": order.get(eta, ""),
                    "mass_closed_form": float(f_cf[eta]),
                    "mass_lp": float(f_lp[eta]),
                }
            )
        seq = ", ".join(str(int(e)) for e in cyc)
        ax.set_title(
            rf"({panel}) $n={N}$, $\hat\mu={mu}$: order {seq}"
            + "\n"
            + rf"$\varepsilon={EPS}$, $\delta=0$; marker area $\propto f^\star(\eta)$",
            fontsize=10,
        )
        ax.set_xlim(-1.75, 1.75)
        ax.set_ylim(-1.6, 1.6)
        ax.set_aspect("equal")
        ax.axis("off")
        if np.max(np.abs(f_cf - f_lp)) > 1e-7:
            raise RuntimeError(f"Lemma 3 and the LP disagree for mu_hat={mu}: {f_cf} vs {f_lp}")
    fig.suptitle(r"Fig. 1: assignment order of the optimal SD masses, $f^\star(k\hat\mu)=e^{-k\varepsilon}f^\star(0)$")
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fs.save(fig, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
