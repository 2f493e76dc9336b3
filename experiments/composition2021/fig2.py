"""Fig. 2 of Cesar & Rogers (ALT 2021): optimal non-adaptive composition of eps-DP and eps-BR mechanisms.

k eps-DP and T-k eps-BR mechanisms, Theorem 3.

Overall epsilon at delta = 1e-6 against the per-mechanism epsilon, T = 50,
k = 0, 10, 25, 40, 50 eps-DP mechanisms (the rest eps-BR), same grid as Fig. 1.
k = T is the optimal DP bound (KOV, Theorem 1) and k = 0 is Dong-Durfee-Rogers
(Theorem 2); the curves in between interpolate. The sup over the BR
parameter t is taken on Theorem 3's finite candidate set.
The paper's T, delta and eps range are lost in extraction: ours are a choice.
"""

from __future__ import annotations

import os
import sys

from optnoise.mechanisms.composition import br_dp_epsilon
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _composition2021 import DELTA_12, T_MECHANISMS, k_family_figure  # noqa: E402

#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`): every column exact
#: (closed forms and Brent roots to 1e-13).
TOLERANCES: dict = {"fig2": {}}


def main(argv=None) -> int:
    fs = FigureScript("composition2021", "fig2", argv, description=__doc__)
    T = T_MECHANISMS

    def label(k: int) -> str:
        note = " (KOV)" if k == T else " (DDR)" if k == 0 else ""
        return f"$k={k}$ DP, {T - k} BR{note}"

    fig, ax, table = k_family_figure(
        fs,
        lambda e, k: br_dp_epsilon(e, T, k, DELTA_12),
        label,
        "Optimal non-adaptive DP+BR composition",
        "thm3",
        r"optimal overall $\varepsilon_g$",
    )
    ax.legend(fontsize=8)
    fs.save(fig, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
