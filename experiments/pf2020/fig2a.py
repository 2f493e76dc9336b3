"""Fig. 2(a) of McKenna & Sheldon (2020): optimality ratio of PF for several numbers of candidates.

``E[err(PF)] / E[err(OPT)]`` averaged over the bounded lattice, OPT from the
LP of Theorem 3 solved with HiGHS through optnoise's solver layer, at the
authors' configuration (``linear-program.ipynb``): lattice depth k = 4 (bound
B = 2k Delta = 8, 5 score levels), m = 3..6 candidates, 250 log-spaced eps on
[0.01, 10], y-range of their plot. Solid: the regular-mechanism LP (each
score vector with max 0 counts once; worst-neighbour privacy rows;
monotonicity rows added lazily). Dashed: the LP as printed in Appendix D (no
monotonicity rows) with the notebook's box weighting (each vector of the box
{0, ..., -B}^m counts once): without the monotonicity rows its optimum can be
non-monotone and then not eps-DP; with the other weighting its ratios differ
slightly (lower at k = 4, higher at k = 8).
The ratio is exactly 1 above ln((3+sqrt5)/2) (dotted line) and barely above 1
below it.

Extra panel ``fig2a_k8``: a deeper lattice, k = 8 (B = 16), m = 2..6, on 21
log-spaced eps (each LP is much larger).
"""

import os  # noqa: E402
import sys  # noqa: E402

from optnoise.reproduce.compare import SOLVER
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _pf2020 import DEEP_EPS_POINTS, PF_RATIO_YLIM, fig2_eps, lp_ratio_curves, ratio_panel  # noqa: E402

#: The authors' Fig. 2(a): k = 4, m = 3..6 (their notebook also solves m = 2, where PF is optimal).
K_PRIMARY, M_PRIMARY = 4, (3, 4, 5, 6)
K_DEEP, M_DEEP = 8, (2, 3, 4, 5, 6)


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: The ratios divide by the LP optimum of Theorem 3.
TOLERANCES = {s: {"pf_ratio_regular_lp": SOLVER, "pf_ratio_paper_lp": SOLVER} for s in ("fig2a", "fig2a_k8")}


def main(argv=None) -> int:
    fs = FigureScript("pf2020", "fig2a", argv, description=__doc__)
    for name, k, ms, eps, what in (
        (
            "fig2a",
            K_PRIMARY,
            fs.grid(full=M_PRIMARY, fast=(3, 4)),
            fig2_eps(fs.fast),
            "PF vs optimal regular mechanism,",
        ),
        (
            "fig2a_k8",
            K_DEEP,
            fs.grid(full=M_DEEP, fast=(2, 3)),
            fig2_eps(fs.fast, DEEP_EPS_POINTS),
            "extra: deeper lattice",
        ),
    ):
        curves = {(m, k): lp_ratio_curves(m, k, eps, cache=fs.cache) for m in ms}
        ratio_panel(
            fs,
            name,
            eps,
            curves,
            "pf",
            label=lambda m, k: f"$m={m}$",
            title=rf"{what} $k={k}$ ($B={2 * k}\Delta$), {eps.size} $\varepsilon$",
            ylim=PF_RATIO_YLIM,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
