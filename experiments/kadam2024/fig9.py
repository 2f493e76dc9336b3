"""Fig. 9 of Kadam et al. (2024): optimal SD noise PMFs, n = 7, eps = 0.75, for several delta.

(a) mu_hat = 3 (coprime with n+1 = 8): every mass is positive at delta = 0 and
    f(0) >= f(3) >= f(6) >= f(1) >= f(4) >= f(7) >= f(2) >= f(5) (Lemmas 2-3).
(b) mu_hat = 2 (not coprime): f(1) = f(3) = f(5) = f(7) = 0. The paper says
    f*(0) is higher than in (a); that holds only while (a) still spreads its
    mass over more than the four values (b) keeps, i.e. for delta below
    delta_low = 0.058526 ((a)'s flat region with four masses, Theorem 2 (19c));
    from there on both optima keep the same number of masses and f*(0) is
    equal (at delta = 0.15 and 0.35 here). Black dashes on the eta = 0 bars
    mark (a)'s f*(0) at the same delta, and the title states the threshold.

The paper does not list its delta values; we use delta in {0, 0.05, 0.15,
0.35}, each inside a flat region of Theorem 2 for both panels, where the
optimum is unique (in a linear region only f(0) is): two where (b)'s f*(0)
is higher and two where it is not. Bars: the MILP (13) (pdp-kadam, directed
shift {mu_hat}, canonical optimum); dots: Theorem 2 (closed form).
"""

from __future__ import annotations

import os
import sys

import matplotlib.pyplot as plt
import numpy as np

from optnoise import Neighborhood
from optnoise.mechanisms.closed_form.sd import sd_boundaries, sd_cycle, sd_pmf
from optnoise.reproduce.compare import SOLVER
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _kadam2024 import progress, solve  # noqa: E402

N, EPS = 7, 0.75
DELTAS = (0.0, 0.05, 0.15, 0.35)


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: The PMFs are canonical MILP optima; Theorem 2's columns are exact.
TOLERANCES = {f"fig9{p}": {f"delta_{d:g}": SOLVER for d in (0, 0.05, 0.15, 0.35)} for p in "ab"}


def main(argv=None) -> int:
    fs = FigureScript("kadam2024", "fig9", argv, description=__doc__)
    eta = np.arange(N + 1)
    # (a)'s f*(0) (Theorem 2; panel (a) checks it against the MILP) and the start of (a)'s flat
    # region with as many masses as (b) keeps: section k keeps m - k + 1 = n + 1 - k masses (19c)
    f0_a = {d: float(sd_pmf(N, 3, EPS, delta=d)[0]) for d in DELTAS}
    threshold = float(sd_boundaries(N, 3, EPS)[0][N + 1 - sd_cycle(N, 2).size])
    for panel, mu in (("a", 3), ("b", 2)):
        low, bar = sd_boundaries(N, mu, EPS)
        if not all(np.any((low <= d) & (d <= bar)) for d in DELTAS):
            raise RuntimeError(f"a delta of {DELTAS} is not in a flat region for mu_hat={mu}")
        progress(fs, f"panel {panel}: {len(DELTAS)} MILPs")
        nb = Neighborhood.sd(mu, directed=True)
        fig, ax = plt.subplots(figsize=(6.5, 4.2))
        w = 0.8 / len(DELTAS)
        table = {"eta": eta}
        for i, d in enumerate(DELTAS):
            f = solve(fs, n=N, eps=EPS, delta=d, neighborhood=nb, metric="er", privacy="pdp-kadam", canonical=True).pmf
            cf = sd_pmf(N, mu, EPS, delta=d)
            if np.max(np.abs(f - cf)) > 1e-7:
                raise RuntimeError(f"Theorem 2 and the MILP differ at delta={d}: {cf} vs {f}")
            x = eta + (i - (len(DELTAS) - 1) / 2) * w
            ax.bar(x, f, width=w, color=f"C{i}", label=rf"$\delta={d:g}$: $f^\star(0)={f[0]:.3f}$")
            ax.plot(x, cf, "k.", ms=3)
            table[f"delta_{d:g}"] = f
            table[f"delta_{d:g}_closed_form"] = cf
            if panel == "b":
                x0 = x[0]
                ax.hlines(f0_a[d], x0 - w / 2, x0 + w / 2, colors="k", linestyles="--", lw=1.2)
        ax.plot([], [], "k.", label="Theorem 2 (closed form)")
        order = ", ".join(str(int((k * mu) % (N + 1))) for k in range((N + 1) // np.gcd(N + 1, mu)))
        title = rf"Fig. 9{panel}: SD, $n={N}$, $\hat\mu={mu}$, $\varepsilon={EPS}$ (order {order})"
        if panel == "b":
            ax.plot([], [], "k--", lw=1.2, label=r"$f^\star(0)$ of (a) ($\hat\mu=3$) at the same $\delta$")
            title += (
                "\n"
                + r"$f^\star(0)$ is above (a)'s only for $\delta<$"
                + f"{threshold:.4f} (while (a) keeps more than 4 masses); equal from there on"
            )
        ax.set_title(title, fontsize=10)
        ax.set_xticks(eta)
        ax.set_xlabel(r"noise value $\eta$")
        ax.set_ylabel(r"$f^\star(\eta)$")
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fs.save(fig, table, name=f"fig9{panel}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
