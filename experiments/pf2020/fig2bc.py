"""Figs. 2(b) and 2(c) of McKenna & Sheldon (2020): optimality ratios of PF and EM against lattice depth.

The authors' configuration (``linear-program.ipynb``): m = 4 candidates on
lattices of depth k = 2, 4, 6, 8 (bound B = 2k Delta), 250 log-spaced eps on
[0.01, 10], y-ranges of their plots. 2(b): PF's optimality ratio, which grows
slowly with k and is 1 above ln((3+sqrt5)/2). 2(c): EM's ratio, much larger,
growing with eps and k towards 2, and tending to 1 as eps -> 0. Solid: the
regular-mechanism LP (lattice weighting, monotonicity rows); dashed: the LP as
printed with the notebook's box weighting.

Extra panels ``fig2b_k16`` and ``fig2c_k16``: k = 2, 4, 8, 16 (B up to 32),
on 21 log-spaced eps (the k = 16 LPs are much larger).
"""

import os  # noqa: E402
import sys  # noqa: E402

import matplotlib.pyplot as plt

from optnoise.reproduce.compare import SOLVER
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _pf2020 import DEEP_EPS_POINTS, EM_RATIO_YLIM, PF_RATIO_YLIM, fig2_eps, lp_ratio_curves, ratio_panel  # noqa: E402

M = 4
K_PRIMARY = (2, 4, 6, 8)
K_DEEP = (2, 4, 8, 16)


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: The ratios divide by the LP optimum of Theorem 3.
TOLERANCES = {
    **{s: {"pf_ratio_regular_lp": SOLVER, "pf_ratio_paper_lp": SOLVER} for s in ("fig2b", "fig2b_k16")},
    **{s: {"em_ratio_regular_lp": SOLVER, "em_ratio_paper_lp": SOLVER} for s in ("fig2c", "fig2c_k16")},
}


def main(argv=None) -> int:
    fs = FigureScript("pf2020", "fig2b", argv, description=__doc__)
    for suffix, eps, ks in (
        ("", fig2_eps(fs.fast), fs.grid(full=K_PRIMARY, fast=(2, 4))),
        ("_k16", fig2_eps(fs.fast, DEEP_EPS_POINTS), fs.grid(full=K_DEEP, fast=(8,))),
    ):
        curves = {(M, k): lp_ratio_curves(M, k, eps, cache=fs.cache) for k in ks}
        extra = "extra: " if suffix else ""
        for panel, key, ylim in (("fig2b", "pf", PF_RATIO_YLIM), ("fig2c", "em", EM_RATIO_YLIM)):
            who = "PF" if key == "pf" else "EM"
            ratio_panel(
                fs,
                panel + suffix,
                eps,
                curves,
                key,
                label=lambda m, k: f"$k={k}$ ($B={2 * k}\\Delta$)",
                title=rf"{extra}{who} vs optimal regular mechanism, $m={M}$, {eps.size} $\varepsilon$",
                ylim=ylim,
                cmap=plt.cm.plasma,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
