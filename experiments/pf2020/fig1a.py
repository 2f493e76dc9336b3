"""Fig. 1(a) of McKenna & Sheldon (2020): expected error of EM and PF on the worst-case scores.

Scores ``q = (0, -c, ..., -c)`` with m = 3 candidates, eps = 1, Delta = 1; the
x axis is ``p = exp(-eps c / (2 Delta))`` as in the authors' notebook (the top
axis shows the matching c). Curves are Eq. 7 (EM) and Eq. 8 (PF); both vanish
at c = 0 (p = 1) and as c -> infinity (p -> 0), and PF is always below EM
(Theorem 2). Where the extracted text is silent, m = 3 and eps = Delta = 1 are
taken from the notebook.
"""

import os  # noqa: E402
import sys  # noqa: E402

import matplotlib.pyplot as plt
import numpy as np

from optnoise.mechanisms.selection import em_worst_case_error, pf_worst_case_error
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _pf2020 import COLORS, LABELS  # noqa: E402

M, EPS, DELTA = 3, 1.0, 1.0


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`): every column exact
#: (closed forms (Eqs. 7-8)).
TOLERANCES: dict = {"fig1a": {}}


def main(argv=None) -> int:
    fs = FigureScript("pf2020", "fig1a", argv, description=__doc__)
    p = fs.grid(full=np.linspace(1e-6, 1 - 1e-6, 400), fast=np.linspace(1e-3, 1 - 1e-3, 25))
    c = -2.0 * DELTA / EPS * np.log(p)
    em = em_worst_case_error(c, M, EPS, sensitivity=DELTA)
    pf = pf_worst_case_error(c, M, EPS, sensitivity=DELTA)

    fig, ax = plt.subplots(figsize=(5.5, 4))
    ax.plot(p, em, color=COLORS["em"], lw=2.5, label=LABELS["em"] + " (Eq. 7)")
    ax.plot(p, pf, color=COLORS["pf"], lw=2.5, label=LABELS["pf"] + " (Eq. 8)")
    ax.set_xlabel(r"$p = e^{-\varepsilon c / (2\Delta)}$")
    ax.set_ylabel(r"$\mathbb{E}[\mathcal{E}(\mathcal{M}, \vec q\,)]$")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, None)
    top = ax.secondary_xaxis(
        "top", functions=(lambda x: -2 * np.log(np.clip(x, 1e-12, 1)), lambda y: np.exp(-np.asarray(y) / 2))
    )
    top.set_xticks([0.5, 1, 2, 4, 8])
    top.set_xlabel(r"$c$")
    ax.set_title(rf"Worst case $\vec q = (0, -c, \dots, -c)$, $m={M}$, $\varepsilon=\Delta=1$", fontsize=10)
    ax.legend()
    ax.grid(alpha=0.3)
    fs.save(fig, {"p": p, "c": c, "em_expected_error": em, "pf_expected_error": pf})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
