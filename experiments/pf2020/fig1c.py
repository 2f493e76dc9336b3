"""Fig. 1(c) of McKenna & Sheldon (2020): worst-case expected error against the number of candidates.

For each m, Eqs. 7 and 8 are maximised over c (Prop. 4), with eps = Delta = 1
(the errors scale as Delta / eps). Reference lines: the upper bound
``(2 Delta / eps) ln m`` of Prop. 1 / Cor. 1 and the lower bound
``(Delta / (2 eps)) ln m`` of Prop. 5. m runs over 2..10^4 on a log grid
(the notebook uses every integer; the curves are smooth). The EM/PF ratio is
largest at m = 2 and decays towards 1.
"""

import os  # noqa: E402
import sys  # noqa: E402

import matplotlib.pyplot as plt
import numpy as np

from optnoise.mechanisms.selection import (
    expected_error_upper_bound,
    pf_worst_case_lower_bound,
    worst_case_expected_error,
)
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _pf2020 import COLORS, LABELS  # noqa: E402

#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`): every column exact
#: (closed forms, maximised over c by bounded Brent (flat at the maximum)).
TOLERANCES: dict = {"fig1c": {}}


def main(argv=None) -> int:
    fs = FigureScript("pf2020", "fig1c", argv, description=__doc__)
    ms = fs.grid(
        full=np.unique(np.round(np.geomspace(2, 10_000, 250)).astype(int)), fast=np.array([2, 3, 10, 100, 1000, 10_000])
    )
    em = np.array([worst_case_expected_error("em", int(m), 1.0)[0] for m in ms])
    pf = np.array([worst_case_expected_error("pf", int(m), 1.0)[0] for m in ms])
    ub = np.array([expected_error_upper_bound(int(m), 1.0) for m in ms])
    lb = np.array([pf_worst_case_lower_bound(int(m), 1.0) for m in ms])

    fig, ax = plt.subplots(figsize=(5.5, 4))
    ax.plot(ms, em, color=COLORS["em"], lw=2.5, label=LABELS["em"])
    ax.plot(ms, pf, color=COLORS["pf"], lw=2.5, label=LABELS["pf"])
    ax.plot(ms, ub, "--", color=COLORS["ub"], lw=2, label=r"$\frac{2\Delta}{\varepsilon}\ln m$ (Prop. 1, Cor. 1)")
    ax.plot(ms, lb, "--", color=COLORS["lb"], lw=2, label=r"$\frac{\Delta}{2\varepsilon}\ln m$ (Prop. 5)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"number of candidates $m$")
    ax.set_ylabel(r"worst-case expected error ($\varepsilon=\Delta=1$)")
    ax.set_title(r"$\max_{\vec q}\ \mathbb{E}[\mathcal{E}(\mathcal{M}, \vec q\,)]$", fontsize=10)
    ax.legend(loc="lower right", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    fs.save(
        fig,
        {
            "m": ms,
            "em_worst_case": em,
            "pf_worst_case": pf,
            "upper_bound": ub,
            "lower_bound": lb,
            "ratio_em_pf": em / pf,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
