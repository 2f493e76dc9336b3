"""Fig. 4 (Appendix F) of McKenna & Sheldon (2020): report-noisy-max against EM and PF.

Expected error on the worst-case scores ``q = (0, -c, ..., -c)`` against c,
with eps = 1, Delta = 1 and m = 10 candidates (the text does not give m; 10
shows both regimes clearly). RNM adds Laplace(2 Delta / eps) noise; its error
is the Appendix F integral evaluated numerically. RNM beats EM for small c and
loses for large c; PF is below both everywhere.
"""

import os  # noqa: E402
import sys  # noqa: E402

import matplotlib.pyplot as plt
import numpy as np

from optnoise.mechanisms.selection import em_worst_case_error, pf_worst_case_error, rnm_worst_case_error
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _pf2020 import COLORS, LABELS  # noqa: E402

M, EPS = 10, 1.0


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`): every column exact
#: (closed forms (Eqs. 7-8)).
TOLERANCES: dict = {"fig4": {}}


def main(argv=None) -> int:
    fs = FigureScript("pf2020", "fig4", argv, description=__doc__)
    c = fs.grid(full=np.linspace(0, 24, 121), fast=np.linspace(0, 24, 9))
    em = em_worst_case_error(c, M, EPS)
    pf = pf_worst_case_error(c, M, EPS)
    rnm = rnm_worst_case_error(c, M, EPS)
    fig, ax = plt.subplots(figsize=(5.5, 4))
    ax.plot(c, em, color=COLORS["em"], lw=2.5, label=LABELS["em"])
    ax.plot(c, rnm, color=COLORS["rnm"], lw=2.5, label=LABELS["rnm"] + r" (Laplace $2\Delta/\varepsilon$)")
    ax.plot(c, pf, color=COLORS["pf"], lw=2.5, label=LABELS["pf"])
    ax.set_xlabel(r"$c$")
    ax.set_ylabel(r"$\mathbb{E}[\mathcal{E}(\mathcal{M}, \vec q\,)]$")
    ax.set_title(rf"$\vec q = (0, -c, \dots, -c)$, $m={M}$, $\varepsilon=\Delta=1$", fontsize=10)
    ax.set_xlim(0, c.max())
    ax.set_ylim(0, None)
    ax.legend()
    ax.grid(alpha=0.3)
    fs.save(fig, {"c": c, "em_expected_error": em, "rnm_expected_error": rnm, "pf_expected_error": pf})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
