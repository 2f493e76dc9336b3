"""Extension (not in the paper): bounded DP and counts that change by up to c, via the LP.

Left: eps = 1, delta = 1e-5 under bounded (replace-one) DP. The factor-2
reduction of Sec. 5, pi_opt(eps/2, delta/2), against the LP primitive with
an asymmetric split of the budget between inequality (1) (rising side) and
(4) (approach to 1), chosen to maximise sum pi; both are verified by the
exact two-partition check (optnoise.mechanisms.partition_lp.bounded_dp_delta). The
unbounded pi_opt(eps, delta) is shown for reference (it is not bounded-DP).
Right: add/remove DP where a user changes a count by up to c = 3: the LP
optimum against pi_opt at the group-privacy budget (eps/c, delta/sum e^{j eps/c}).
"""

import matplotlib.pyplot as plt
import numpy as np

from optnoise.mechanisms.partition import pi_opt
from optnoise.mechanisms.partition_lp import (
    bounded_dp_delta,
    bounded_dp_primitive,
    group_privacy_primitive,
    partition_lp,
)
from optnoise.reproduce.compare import SOLVER
from optnoise.reproduce.figures import FigureScript

EPS, DELTA, C = 1.0, 1e-5, 3


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: The LP columns are solver optima; the closed forms are exact.
TOLERANCES = {"ext_bounded": {"bounded_lp": SOLVER, "c3_lp": SOLVER}}


def main(argv=None) -> int:
    fs = FigureScript("partition2022", "ext_bounded", argv, description=__doc__)
    splits = fs.grid(full=np.linspace(0.1, 0.9, 33), fast=np.array([0.6, 0.75]))
    best = bounded_dp_primitive(EPS, DELTA, splits=splits)
    n = np.arange(best.pi.size)
    half = pi_opt(n, EPS / 2, DELTA / 2)
    full = pi_opt(n, EPS, DELTA)
    lp_c = partition_lp(int(n[-1]), EPS, DELTA, max_change=C).pi
    gp_c = group_privacy_primitive(n, EPS, DELTA, max_change=C)
    shown = n <= 45
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    ax = axes[0]
    ax.plot(
        n[shown],
        half[shown],
        "s--",
        ms=3,
        label=rf"factor 2: $\pi_{{\mathrm{{opt}}}}(\varepsilon/2,\delta/2)$, "
        rf"$\delta$={bounded_dp_delta(half, EPS):.2g}",
    )
    ax.plot(
        n[shown],
        best.pi[shown],
        "o-",
        ms=3,
        label=rf"LP, $\varepsilon_{{\uparrow}}$={best.extra['eps_up']:.3g}, "
        rf"$\delta$={best.extra['achieved_delta']:.2g}",
    )
    ax.plot(n[shown], full[shown], ":", color="gray", label=r"unbounded $\pi_{\mathrm{opt}}(\varepsilon,\delta)$")
    ax.set_title(r"bounded DP, $\varepsilon=1$, $\delta=10^{-5}$")
    ax.set_xlabel(r"number of users $n$")
    ax.set_ylabel(r"$\mathbb{P}[\rho(n)=\mathrm{keep}]$")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    ax = axes[1]
    ax.plot(n[shown], lp_c[shown], "o-", ms=3, label=rf"LP, changes up to $c={C}$")
    ax.plot(n[shown], gp_c[shown], "s--", ms=3, label=r"group privacy: $\pi_{\mathrm{opt}}(\varepsilon/c,\cdot)$")
    ax.set_title(rf"count changes by up to $c={C}$, $\varepsilon=1$, $\delta=10^{{-5}}$")
    ax.set_xlabel(r"number of users $n$")
    ax.set_ylabel(r"$\mathbb{P}[\rho(n)=\mathrm{keep}]$")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fs.save(
        fig,
        {
            "n": n,
            "bounded_factor2": half,
            "bounded_lp": best.pi,
            "unbounded_opt": full,
            "c3_lp": lp_c,
            "c3_group_privacy": gp_c,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
