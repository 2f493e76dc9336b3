"""Fig. 6 of Kadam et al. (2024): clamping the discrete geometric and Gaussian mechanisms changes delta(eps).

n = 8, geometric alpha = 0.7 and discrete Gaussian sigma^2 = 3.38 (the
caption's values). For each noise: the un-truncated mechanism q + eta on all
integers ("n = inf", the reference the paper calls "calculated for
n = +inf"), the clamped release (55)-(56) on {0..8} (with the last column of
(56) corrected, see optnoise.mechanisms), and the modulo release the paper
advocates. Neighbours: a count query, q and q +- 1 (the paper does not state
it; sensitivity 1 in both directions is the natural choice for these
symmetric noises).

(a) PDP (Definition 2), the paper's notion: clamping raises the Gaussian's
    delta; the geometric's is unchanged, because its privacy-loss ratio is
    1/alpha on a whole half-line and the clamped end masses keep that ratio.
(b) (eps, delta)-DP, added by us: clamping is post-processing, so its delta
    can never exceed the n = inf one; the increase in (a) is specific to PDP
    (Meiser 2018; Proposition 1).

The caption's "same MSE = 3.38" holds for the Gaussian (variance 3.38); the
two-sided geometric with alpha = 0.7 has variance 2 alpha/(1-alpha)^2 = 15.6.
The alpha with variance 3.38 (0.4717, solved numerically) is drawn thin for
comparison.
"""

from __future__ import annotations

import os
import sys

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import brentq

from optnoise.privacy.noise_families import discrete_gaussian_noise, geometric_noise
from optnoise.reproduce.compare import ROUNDOFF
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _kadam2024 import BASELINE_STYLE, progress, shared_legend  # noqa: E402

N, ALPHA, SIGMA2 = 8, 0.7, 3.38


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: Closed forms; the clamped and modulo deltas are float sums of masses of order one (rounding below ~1e-15).
TOLERANCES = {
    "fig6": {
        f"{notion}_{noise}_{variant}": ROUNDOFF
        for notion in ("pdp", "dp")
        for noise in ("geometric", "gaussian", "geometric_mse")
        for variant in ("clamped", "modulo")
        if not (noise == "geometric_mse" and variant == "modulo")
    }
}


def main(argv=None) -> int:
    fs = FigureScript("kadam2024", "fig6", argv, description=__doc__)
    eps = fs.grid(full=np.linspace(0.005, 2.0, 400), fast=np.linspace(0.01, 2.0, 40))
    alpha_mse = brentq(lambda a: geometric_noise(a).variance - SIGMA2, 0.01, 0.99, xtol=1e-14)
    noises = {
        "geometric": geometric_noise(ALPHA),
        "gaussian": discrete_gaussian_noise(SIGMA2),
        "geometric_mse": geometric_noise(alpha_mse),
    }
    label = {
        "geometric": rf"geometric $\alpha={ALPHA}$",
        "gaussian": rf"Gaussian $\sigma^2={SIGMA2}$",
        "geometric_mse": rf"geometric $\alpha={alpha_mse:.4f}$ (variance {SIGMA2})",
    }
    table = {"eps": eps}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), sharey=True)
    for ax, notion in zip(axes, ("pdp", "dp"), strict=False):
        progress(fs, f"{notion}: {eps.size} eps")
        for key, noise in noises.items():
            fam = "gaussian" if key == "gaussian" else "geometric"
            color = BASELINE_STYLE[fam]["color"]
            thin = key == "geometric_mse"
            curves = {
                "inf": noise.delta(eps, notion=notion),
                "clamped": noise.mechanism(N, variant="clamped").delta(eps, notion=notion),
                "modulo": noise.mechanism(N, variant="modulo").delta(eps, notion=notion),
            }
            for var, ls in (("inf", "-"), ("clamped", "--"), ("modulo", ":")):
                if thin and var == "modulo":
                    continue
                ax.plot(
                    eps,
                    curves[var],
                    color="0.55" if thin else color,
                    ls=ls,
                    lw=0.9 if thin else 1.8,
                    label=f"{label[key]}, "
                    + {"inf": r"$n=\infty$", "clamped": f"clamped to [0, {N}]", "modulo": f"modulo {N + 1}"}[var],
                )
                table[f"{notion}_{key}_{var}"] = curves[var]
        ax.set_xlabel(r"$\varepsilon$")
        ax.set_ylabel(r"$\delta$")
        ax.set_title(
            "(a) PDP (Definition 2), as in the paper"
            if notion == "pdp"
            else r"(b) $(\varepsilon,\delta)$-DP: clamping is post-processing",
            fontsize=10,
        )
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
    axes[0].text(
        0.97,
        0.55,
        "geometric: clamped and $n=\\infty$\ncoincide (dashed under solid)",
        transform=axes[0].transAxes,
        ha="right",
        fontsize=8,
        color=BASELINE_STYLE["geometric"]["color"],
    )
    axes[1].text(
        0.97,
        0.55,
        "clamped $\\leq$ $n=\\infty$ for every noise\n(here they coincide)",
        transform=axes[1].transAxes,
        ha="right",
        fontsize=8,
    )
    shared_legend(fig, axes)
    fig.suptitle(rf"Fig. 6: effect of clamping, $n={N}$, neighbours $q$ and $q\pm1$", fontsize=11)
    fig.tight_layout(rect=(0, 0.17, 1, 1))
    table["alpha_variance_matched"] = np.full(eps.size, alpha_mse)
    fs.save(fig, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
