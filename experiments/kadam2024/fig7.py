"""Fig. 7 of Kadam et al. (2024): the (eps, delta) trade-off of the optimum and the baselines at a fixed distortion.

(a) MSE = 0.6101, n = 8: discrete geometric, discrete Gaussian and
    exponential (Gumbel) mechanisms; the optimum minimises delta subject to
    MSE <= 0.6101 (the variant (15) of the MILP).
(b) ER = 0.3, n = 7: discrete geometric, discrete Gaussian, discrete count and
    data-independent mechanisms; the optimum minimises delta subject to
    ER <= 0.3.

Each baseline's parameter is solved numerically so that its distortion equals
the target (optnoise.mechanisms.baselines.match_parameter); the values are in the CSV
and in figures/kadam2024/README.md. The count mechanism has ER = rho = 0.3 by
construction; its weights are re-optimised for every eps. The other choices
(modulo release, count neighbourhood, circular MSE, PDP accounting of the
baselines; *_exact files with the symmetric neighbourhood and exact optima)
are those of Fig. 5; see experiments/kadam2024/fig5.py. As there, eps runs
over 291 points (0.1 to 3, step 0.01), drawn as step plots; the legend is
below the axes, off the optimum's drop.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from optnoise.mechanisms import baselines
from optnoise.reproduce.compare import SOLVER
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _kadam2024 import (  # noqa: E402
    COUNT_DIRECTED,
    COUNT_SYMMETRIC,
    EPS_GRID,
    EPS_GRID_FAST,
    PANELS,
    error_of,
    exact_figure,
    faithful_figure,
    progress,
    solve,
)

#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: The optima's deltas are LP/MILP optima; the baselines (Brent roots to 1e-13, closed forms) are exact.
_OPTIMA = tuple(
    SOLVER.only(curve=f"optimum {c}")
    for c in ("pdp-kadam/directed", "pdp-kadam/symmetric", "pdp/symmetric", "dp/symmetric")
)
# The published panels hold the directed optimum only, the _exact panels all four.
TOLERANCES = {
    **{f"fig7{p}": {"delta": _OPTIMA[0]} for p in "ab"},
    **{f"fig7{p}_exact": {"delta": _OPTIMA} for p in "ab"},
}


def min_delta(fs, cfg, eps, notion, nb) -> np.ndarray:
    """Smallest delta with distortion <= target, re-verified from the returned PMF."""
    return np.array(
        [
            solve(
                fs,
                n=cfg["n"],
                eps=float(e),
                neighborhood=nb,
                metric=cfg["metric"],
                privacy=notion,
                objective="delta",
                max_distortion=cfg["target"],
            ).achieved[notion]
            for e in eps
        ]
    )


def main(argv=None) -> int:
    fs = FigureScript("kadam2024", "fig7", argv, description=__doc__)
    eps = fs.grid(full=EPS_GRID, fast=EPS_GRID_FAST)
    for panel, cfg in PANELS.items():
        n, target = cfg["n"], cfg["target"]
        progress(fs, f"panel {panel}: optima at {eps.size} eps")
        opt = {"pdp-kadam/directed": min_delta(fs, cfg, eps, "pdp-kadam", COUNT_DIRECTED)}
        for notion in ("pdp-kadam", "pdp", "dp"):
            opt[f"{notion}/symmetric"] = min_delta(fs, cfg, eps, notion, COUNT_SYMMETRIC)
        progress(fs, f"panel {panel}: baselines")
        par, base, check = {}, {}, {}
        for fam in cfg["families"]:
            for e in eps:  # the count mechanism's weights depend on eps; the others' parameter does not
                p = baselines.match_parameter(fam, n, target, measure=cfg["measure"], distance="circular", eps=float(e))
                mech = baselines.build(fam, n, p, eps=float(e))
                par.setdefault(fam, []).append(p)
                check.setdefault(fam, []).append(error_of(mech, cfg["measure"]))
                for notion in ("pdp", "dp"):
                    base.setdefault(notion, {}).setdefault(fam, []).append(
                        mech.delta(float(e), notion=notion, neighborhood=COUNT_SYMMETRIC)
                    )
        base = {k: {f: np.array(v) for f, v in d.items()} for k, d in base.items()}

        rows = [
            {"eps": float(e), "curve": f"optimum {k}", "delta": float(v[i]), "parameter": "", "distortion": ""}
            for k, v in opt.items()
            for i, e in enumerate(eps)
        ]
        rows += [
            {
                "eps": float(e),
                "curve": f"{fam} ({notion})",
                "delta": float(base[notion][fam][i]),
                "parameter": float(par[fam][i]),
                "distortion": float(check[fam][i]),
            }
            for notion in base
            for fam in cfg["families"]
            for i, e in enumerate(eps)
        ]
        what = "MSE" if cfg["measure"] == "mse" else "ER"
        setting = rf"$n={n}$, {what} $={target}$"
        fig = faithful_figure(
            eps,
            opt["pdp-kadam/directed"],
            base["pdp"],
            r"$\delta$",
            rf"Fig. 7{panel}: {setting}, PDP (Def. 2), neighbours $\mu=+1$ only (the paper's)",
        )
        fs.save(
            fig, [r for r in rows if "(dp)" not in r["curve"] and "symmetric" not in r["curve"]], name=f"fig7{panel}"
        )
        fig = exact_figure(eps, opt, base, r"$\delta$", f"Fig. 7{panel}", setting)
        fs.save(fig, rows, name=f"fig7{panel}_exact")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
