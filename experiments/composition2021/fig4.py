"""Fig. 4 of Cesar & Rogers (ALT 2021): Laplace vs Gaussian noise on a histogram, one release, equal variance.

Overall epsilon at delta = 1e-10 against the l0-sensitivity Delta_0 (counts a
user can change, each by at most Delta_inf = 1), for noise of the same
variance 2 b^2 with b = 10 (each Laplace count is 0.1-DP; Gaussian sigma =
sqrt(2) b):
* Laplace, Lemma 6.2 (optimal DP composition of Delta_0 eps-DP counts);
* Gaussian, analytic (Lemma 6.1) with L2 sensitivity sqrt(Delta_0) Delta_inf;
* Gaussian through zCDP (Lemma 6.3), rho = Delta_0 Delta_inf^2 / (2 sigma^2).
Paper's claim: Laplace wins for small Delta_0, Gaussian as Delta_0 grows.
The paper's b, delta and Delta_0 range are lost in extraction: ours are a choice.
"""

from __future__ import annotations

import os
import sys

import matplotlib.pyplot as plt
import numpy as np

from optnoise.mechanisms.gaussian import analytic_gaussian_epsilon, gaussian_zcdp_epsilon, laplace_histogram_epsilon
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _composition2021 import DELTA_45, GAUSS_SIGMA, LAPLACE_SCALE  # noqa: E402

#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`): every column exact
#: (closed forms and Brent roots to 1e-13).
TOLERANCES: dict = {"fig4": {}}


def main(argv=None) -> int:
    fs = FigureScript("composition2021", "fig4", argv, description=__doc__)
    l0 = fs.grid(full=np.arange(1, 101), fast=np.array([1, 5, 20, 100]))
    d, b, s = DELTA_45, LAPLACE_SCALE, GAUSS_SIGMA
    lap = np.array([laplace_histogram_epsilon(b, d, l0_sensitivity=int(n)) for n in l0])
    ana = np.array([analytic_gaussian_epsilon(s, d, sensitivity=float(np.sqrt(n))) for n in l0])
    zc = np.array([gaussian_zcdp_epsilon(s, d, l0_sensitivity=int(n)) for n in l0])
    fig, ax = plt.subplots(figsize=(5.5, 4))
    ax.plot(l0, lap, label=rf"Laplace, $b={b:g}$ (Lemma 6.2)")
    ax.plot(l0, ana, label=rf"Gaussian, analytic, $\sigma={s:.2f}$ (Lemma 6.1)")
    ax.plot(l0, zc, label=r"Gaussian via zCDP (Lemma 6.3)")
    ax.set_xscale("log")
    ax.set_xlabel(r"$\ell_0$-sensitivity $\Delta_0$ ($\Delta_\infty = 1$)")
    ax.set_ylabel(r"overall $\varepsilon$")
    ax.set_title(rf"One histogram release, equal variance $2b^2$, $\delta=10^{{{int(np.log10(d))}}}$", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    fs.save(fig, {"l0_sensitivity": l0, "eps_laplace": lap, "eps_gauss_analytic": ana, "eps_gauss_zcdp": zc})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
