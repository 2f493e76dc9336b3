"""Fig. 1 of Cesar & Rogers (ALT 2021): the set-wise adaptive bound, Eq. (3), for k eps-DP and T-k eps-BR mechanisms.

Overall epsilon at delta = 1e-6 against the per-mechanism epsilon, for T = 50
mechanisms of which k = 0, 10, 25, 40, 50 are eps-DP and the rest eps-BR
(Lemma 3.3 with the means and subgaussian constants of Lemma 3.2), compared
with the optimal DP composition bound (KOV, Theorem 1) for 50 eps-DP mechanisms.
k = T is advanced composition; k = 0 is Dong et al.'s Corollary 3.1.
The paper's T, delta and eps range are lost in extraction: ours are a choice.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from optnoise.mechanisms.composition import kov_epsilon, setwise_epsilon
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _composition2021 import DELTA_12, T_MECHANISMS, k_family_figure  # noqa: E402

#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`): every column exact
#: (closed forms and Brent roots to 1e-13).
TOLERANCES: dict = {"fig1": {}}


def main(argv=None) -> int:
    fs = FigureScript("composition2021", "fig1", argv, description=__doc__)
    T, delta = T_MECHANISMS, DELTA_12
    fig, ax, table = k_family_figure(
        fs,
        lambda e, k: setwise_epsilon(delta, dp=[e] * k, br=[e] * (T - k)),
        lambda k: f"Eq. (3), $k={k}$ DP, {T - k} BR",
        "Set-wise adaptive bound",
        "eq3",
        r"overall $\varepsilon_g$",
    )
    table["kov_optimal_dp"] = np.array([kov_epsilon(e, T, delta) for e in table["eps"]])
    ax.plot(table["eps"], table["kov_optimal_dp"], "k--", lw=2, label=f"optimal DP (Thm. 1), {T} DP")
    ax.legend(fontsize=8)
    fs.save(fig, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
