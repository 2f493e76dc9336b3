"""Fig. 10 of Kadam et al. (2024): optimal BD noise PMFs, n = 8, mu_bar = 3, eps = 1.5.

(a) delta = 0 (Lemma 4): the staircase from eta = 1 with b = 2 steps of length
    mu_bar = 3 and a last step of length r = 2, heights falling by e^-eps.
(b) delta = 0.1212 (end of the first flat region, delta_bar_0), 0.1238 (start
    of the next, delta_low_1) and 0.1522 (delta_low_2): step lengths
    (1,3,3,2), (1,3,2,3) and (1,3,2,2,1), as the caption states. The caption's
    values are rounded; at exactly 0.1238 the optimum is still in the linear
    region before delta_low_1 = 0.1238036 (steps (1,3,2,2,1) with an unequal
    last step). The bars are therefore drawn at the exact boundaries,
    recovered from the MILP alone (_kadam2024.fig10_boundaries: bisection for
    delta_bar_0, the minimal-delta MILP (15) for the flat starts), moved 1e-7
    into their flat regions: at a boundary itself the optimum is not unique
    (the flat and the linear PMF tie). Inside them it is; the bars are the
    canonical optima (NoiseDesign.solve(canonical=True)) all the same, which
    would pick one member of a tie.

MILP (13) exactly as published (privacy="pdp-kadam", directed shifts
{1, 2, 3}). Here b + r = 4 >= mu_bar, outside Theorem 3's stated range, so
there is no closed form for delta > 0; the step lengths printed above each
bar group are read off the MILP optimum. The delta at which each staircase
starts is the PMF's own pdp-kadam delta (in the CSV): 0.0000, 0.1238,
0.1522.
"""

from __future__ import annotations

import os
import sys

import matplotlib.pyplot as plt
import numpy as np

from optnoise import Neighborhood
from optnoise.mechanisms.closed_form.bd import bd_pmf
from optnoise.reproduce.compare import SOLVER
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _kadam2024 import FIG10_CAPTION, fig10_boundaries, progress, solve, step_lengths  # noqa: E402

N, MU_BAR, EPS = 8, 3, 1.5
COLORS_B = ("C0", "C3", "C8")  # the caption's blue, red and yellow bars


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: PMFs and error rates are canonical MILP optima; the boundaries are MILP-decided (a bisection on optima and
#: minimal deltas re-verified from PMFs); step lengths (text) are exact.
TOLERANCES = {
    "fig10a": {"pmf": SOLVER},
    "fig10b": {"boundary": SOLVER, "delta": SOLVER, "pmf": SOLVER, "error_rate": SOLVER, "achieved_pdp_kadam": SOLVER},
}


def main(argv=None) -> int:
    fs = FigureScript("kadam2024", "fig10", argv, description=__doc__)
    nb = Neighborhood.bd(MU_BAR, directed=True)
    eta = np.arange(N + 1)
    progress(fs, "boundaries of the flat regions (about 35 MILPs)")
    deltas_b = fig10_boundaries(fs)

    res = solve(fs, n=N, eps=EPS, delta=0.0, neighborhood=nb, metric="er", privacy="pdp-kadam", canonical=True)
    if np.max(np.abs(res.pmf - bd_pmf(N, MU_BAR, EPS))) > 1e-9:
        raise RuntimeError("Lemma 4 and the LP disagree")
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bar(eta, res.pmf, color="C0", edgecolor="k", lw=0.5)
    for x, f in zip(eta, res.pmf, strict=True):
        ax.text(x, f, f"{f:.4f}", ha="center", va="bottom", fontsize=8)
    ax.set_title(
        rf"Fig. 10a: BD, $n={N}$, $\bar\mu={MU_BAR}$, $\varepsilon={EPS}$, $\delta=0$: "
        f"steps {step_lengths(res.pmf)}",
        fontsize=10,
    )
    ax.set_xticks(eta)
    ax.set_xlabel(r"noise value $\eta$")
    ax.set_ylabel(r"$f^\star(\eta)$")
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fs.save(fig, {"eta": eta, "pmf": res.pmf}, name="fig10a")

    fig, ax = plt.subplots(figsize=(7, 4.2))
    w = 0.27
    rows = []
    names = (r"\overline{\delta}_0", r"\underline{\delta}_1", r"\underline{\delta}_2")
    for i, (d, cap, name, c) in enumerate(zip(deltas_b, FIG10_CAPTION, names, COLORS_B, strict=True)):
        inside = d - 1e-7 if i == 0 else d + 1e-7
        r = solve(fs, n=N, eps=EPS, delta=inside, neighborhood=nb, metric="er", privacy="pdp-kadam", canonical=True)
        lengths = step_lengths(r.pmf)
        ax.bar(
            eta + (i - 1) * w,
            r.pmf,
            width=w,
            color=c,
            edgecolor="k",
            lw=0.3,
            label=rf"${name}={d:.6f}$ ({cap}): steps {lengths}, $f^\star(0)={r.pmf[0]:.4f}$",
        )
        rows += [
            {
                "boundary": d,
                "delta": inside,
                "caption_delta": cap,
                "eta": int(e),
                "pmf": float(f),
                "step_lengths": " ".join(map(str, lengths)),
                "error_rate": r.distortion,
                "achieved_pdp_kadam": r.achieved["pdp-kadam"],
            }
            for e, f in zip(eta, r.pmf, strict=True)
        ]
    ax.set_yscale("log")
    ax.set_ylim(5e-4, 1.5)
    ax.set_title(
        rf"Fig. 10b: BD, $n={N}$, $\bar\mu={MU_BAR}$, $\varepsilon={EPS}$: staircases at three $\delta$", fontsize=10
    )
    ax.set_xticks(eta)
    ax.set_xlabel(r"noise value $\eta$")
    ax.set_ylabel(r"$f^\star(\eta)$ (log scale)")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7.5, loc="upper right")
    fig.tight_layout()
    fs.save(fig, rows, name="fig10b")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
