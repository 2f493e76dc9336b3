"""Fig. 13 of Kadam et al. (2024): optimal joint noise PMFs f*(eta_1, eta_2) of 2-D vector queries.

(a) BD neighbourhood, n = 4, eps = 3, mu_bar_1 = mu_bar_2 = 2: the shifts
    {0,1,2}^2 without (0,0), directed; delta = 0 (not in the caption; the
    same instance as the paper's eq. (57), whose matrix this reproduces,
    with marginals [0.7681, 0.1073, 0.1073, 0.0086, 0.0086]). A 2-D staircase.
(b) Arbitrary neighbourhood, n = 6, eps = 3, mu_1 in {1, 3}, mu_2 in {2, 5}: the
    four shifts (1,2), (1,5), (3,2), (3,5), directed; delta = 0 (our choice).
    The second largest masses, e^-eps f*(0,0), sit at exactly those shifts.

Both minimise the error rate 1 - f(0,0) with the LP (14) (delta = 0, where all
privacy notions coincide). The whole optimal PMF is unique, not only f*(0,0):
every constraint f(eta) <= e^eps f(eta+mu) bounds f(eta+mu) from below, so
f(eta) >= e^{-eps d(eta)} f(0,0), where d(eta) is the least number of shifts
summing to eta (mod n+1); the masses sum to 1, so the largest f(0,0) is
1 / sum_eta e^{-eps d(eta)} and it makes every bound tight. Hence the small
masses in (b), down to 2.5e-7, are exact values e^{-3k} f*(0,0), k = 0..5,
not solver noise: the script checks each against e^{-eps d(eta)} f*(0,0)
(d by breadth-first search) to 1e-10 absolute, and the PMF is the canonical
optimum (NoiseDesign.solve(canonical=True)), which would pick one member if
there were several. Heatmaps on a log colour scale with a tick at each level
e^{-3k} f*(0,0); each cell is labelled with its mass.
"""

from __future__ import annotations

import os
import sys

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm

from optnoise import Neighborhood
from optnoise.reproduce.compare import SOLVER
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _kadam2024 import progress, solve  # noqa: E402

EPS = 3.0
PANELS = {
    "a": (
        4,
        [(a, b) for a in range(3) for b in range(3) if (a, b) != (0, 0)],
        r"BD, $\bar\mu_1=\bar\mu_2=2$: shifts $\{0,1,2\}^2\setminus\{(0,0)\}$",
    ),
    "b": (6, [(a, b) for a in (1, 3) for b in (2, 5)], r"arbitrary: $\mu_1\in\{1,3\}$, $\mu_2\in\{2,5\}$"),
}


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: The PMFs are canonical MILP optima.
TOLERANCES = {f"fig13{p}": {"pmf": SOLVER} for p in "ab"}


def shift_distance(n: int, shifts: list[tuple[int, int]]) -> np.ndarray:
    """d(eta): the least number of shifts summing to eta (mod n+1), by breadth-first search."""
    d = np.full((n + 1, n + 1), -1)
    d[0, 0] = 0
    frontier = [(0, 0)]
    while frontier:
        nxt = []
        for a, b in frontier:
            for s1, s2 in shifts:
                c = ((a + s1) % (n + 1), (b + s2) % (n + 1))
                if d[c] < 0:
                    d[c] = d[a, b] + 1
                    nxt.append(c)
        frontier = nxt
    return d


def main(argv=None) -> int:
    fs = FigureScript("kadam2024", "fig13", argv, description=__doc__)
    for panel, (n, shifts, what) in PANELS.items():
        progress(fs, f"panel {panel}: LP on {(n + 1) ** 2} noise values")
        res = solve(
            fs,
            n=n,
            eps=EPS,
            delta=0.0,
            neighborhood=Neighborhood.shifts(shifts, directed=True),
            metric="er",
            privacy="pdp-kadam",
            canonical=True,
        )
        f = res.pmf
        dist = shift_distance(n, shifts)
        if np.any(dist < 0) or not np.allclose(f, f[0, 0] * np.exp(-EPS * dist), rtol=0, atol=1e-10):
            raise RuntimeError(f"panel {panel}: the LP optimum is not e^(-eps d) f(0,0)")
        levels = f[0, 0] * np.exp(-EPS * np.arange(dist.max() + 1))
        fig, ax = plt.subplots(figsize=(6.4, 5.2))
        im = ax.imshow(f, cmap="viridis", norm=LogNorm(vmin=levels[-1] / 2, vmax=1.0))
        for (i, j), v in np.ndenumerate(f):
            txt = f"{v:.4f}" if v >= 1e-3 else f"{v:.1e}"
            ax.text(
                j, i, txt, ha="center", va="center", fontsize=7 if n > 4 else 8, color="white" if v < 0.05 else "black"
            )
        for a, b in shifts:
            ax.add_patch(plt.Rectangle((b - 0.5, a - 0.5), 1, 1, fill=False, ec="C3", lw=1.5))
        ax.set_xticks(range(n + 1))
        ax.set_yticks(range(n + 1))
        ax.set_xlabel(r"$\eta_2$")
        ax.set_ylabel(r"$\eta_1$")
        ax.set_title(
            rf"Fig. 13{panel}: $n={n}$, $\varepsilon={EPS:g}$, $\delta=0$, {what}"
            + "\n"
            + r"(red boxes: the shifts $\mu$). Unique optimum $f^\star(\eta)=e^{-\varepsilon d(\eta)}f^\star(0,0)$,"
            + "\n"
            + r"$d(\eta)$ = fewest shifts summing to $\eta$: small masses are exact, not solver noise",
            fontsize=8.5,
        )
        cb = fig.colorbar(im, ax=ax, label=r"$f^\star(\eta_1,\eta_2)$ (log scale)")
        cb.set_ticks(levels, labels=[rf"$d={k}$: {v:.2g}" for k, v in enumerate(levels)], fontsize=8)
        cb.minorticks_off()
        fig.tight_layout()
        i1, i2 = np.indices(f.shape)
        fs.save(
            fig,
            {
                "eta1": i1.ravel(),
                "eta2": i2.ravel(),
                "pmf": f.ravel(),
                "is_shift": [int((a, b) in shifts) for a, b in zip(i1.ravel(), i2.ravel(), strict=True)],
                "shift_distance": dist.ravel(),
            },
            name=f"fig13{panel}",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
