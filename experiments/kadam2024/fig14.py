"""Fig. 14 of Kadam et al. (2024): optimal noise for shift sets observed in smart-meter data.

Part (i), fig14a / fig14b: the shift sets the paper reports for its (private)
California AMI data, n = 10 with {1, 2, 3, 4} and n = 16 with {1, 3, 5, 6},
directed as printed. The paper gives no eps or delta; we use eps = 1,
delta = 0.1. Bars: the MILP (13) as published (pdp-kadam) and the exact PDP
optimum (pdp). The masses at eta in the shift set are e^-eps f(0); everything
else is smaller, the caption's observation.

Part (ii), fig14_meters: the whole pipeline on the public stand-in data,
1,014 London households, hourly kWh in 2013 (optnoise.reproduce.datasets.load_meters:
data/meters, or $OPTNOISE_DATA/meters; see its README). Choices:
* circuits: the data carry no feeder, so the households, in LCLid order, are
  cut into 12 "circuits" of 84-85 homes (the paper: 1,416 homes on 12 circuits);
* query: for one circuit and one hour, the mean consumption of its homes
  observed in that hour, quantised to n+1 levels on [0, 1.2] kWh
  (optnoise.QuantizedMean; every circuit-hour mean of 2013 lies below 1.15 kWh);
* datasets: every (circuit, hour) of 2013, 12 x 8760 of them (the first week
  only in --fast mode); neighbours: remove one household's reading;
* shift set: Neighborhood.from_data over all of them; "as observed" keeps the
  signed differences Q(X) - Q(X') (the paper's (6), directed), "symmetric"
  adds the reverse (add-one) pairs;
* design: eps = 1, delta = 0.1, error rate, MILP (13) (pdp-kadam).

Every PMF is the canonical optimum (NoiseDesign.solve(canonical=True)): with
delta > 0 the tails are not unique (e.g. in fig14b the mass the optimum leaves
free after the e^-2 f(0) step can sit on any of eta = 12..16), and the plain
solve shows whichever vertex HiGHS reaches; the canonical one spreads it
evenly (the lexicographic minimax optimum, see optnoise.design.canonical).
Removing a heavy user lowers a circuit's mean by one to three levels, removing
a light one can raise it by one, so the observed sets are {1, 2, -1} (n = 10)
and {1, 2, 3, -1} (n = 16), not the paper's: the data, circuits and
quantisation differ.
"""

from __future__ import annotations

import os
import sys

import matplotlib.pyplot as plt
import numpy as np

from optnoise import Neighborhood, QuantizedMean
from optnoise.reproduce.compare import SOLVER
from optnoise.reproduce.datasets import load_meters
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _kadam2024 import NOTION_STYLE, progress, solve  # noqa: E402

EPS, DELTA = 1.0, 0.1
PUBLISHED = {"a": (10, (1, 2, 3, 4)), "b": (16, (1, 3, 5, 6))}
CIRCUITS, KWH_RANGE = 12, (0.0, 1.2)


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: The PMFs are canonical MILP/LP optima.
TOLERANCES = {
    "fig14a": {"pdp-kadam": SOLVER, "pdp": SOLVER},
    "fig14b": {"pdp-kadam": SOLVER, "pdp": SOLVER},
    "fig14_meters": {"pmf": SOLVER},
}


def bars(ax, n, series, shifts, title):
    eta = np.arange(n + 1)
    w = 0.8 / len(series)
    for i, (lab, f, color) in enumerate(series):
        ax.bar(eta + (i - (len(series) - 1) / 2) * w, f, width=w, color=color, label=lab)
    mark = sorted({0, *(int(s) % (n + 1) for s in shifts)})
    ax.set_xticks(eta)
    for t in ax.get_xticklabels():
        if int(t.get_text()) in mark:
            t.set_color("C3")
            t.set_fontweight("bold")
    ax.set_xlabel(r"noise value $\eta$ (red: $\eta\in\tilde\mu\cup\{0\}$)")
    ax.set_ylabel(r"$f^\star(\eta)$")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7.5)


def load_records(fast: bool) -> tuple[np.ndarray, np.ndarray, int, int]:
    meters = load_meters()
    wh, observed = meters.wh, meters.observed
    hours = np.arange(168 if fast else wh.shape[1])
    homes = wh.shape[0]
    circuit = np.arange(homes) * CIRCUITS // homes  # ids are sorted: contiguous blocks of 84-85 homes
    kwh = wh[:, hours] / 1000.0
    obs = observed[:, hours]
    label = circuit[:, None] * len(hours) + hours[None, :]  # one dataset per (circuit, hour)
    return kwh[obs], label[obs], homes, len(hours)


def main(argv=None) -> int:
    fs = FigureScript("kadam2024", "fig14", argv, description=__doc__)
    for panel, (n, shifts) in PUBLISHED.items():
        progress(fs, f"panel {panel}: n={n}, shifts {shifts}")
        nb = Neighborhood.shifts(list(shifts), directed=True)
        series, table = [], {"eta": np.arange(n + 1)}
        for p in ("pdp-kadam", "pdp"):
            f = solve(fs, n=n, eps=EPS, delta=DELTA, neighborhood=nb, metric="er", privacy=p, canonical=True).pmf
            series.append((NOTION_STYLE[p]["label"] + f": $f(0)={f[0]:.3f}$", f, NOTION_STYLE[p]["color"]))
            table[p] = f
        fig, ax = plt.subplots(figsize=(7, 4))
        bars(
            ax,
            n,
            series,
            shifts,
            rf"Fig. 14{panel}: published set $\tilde\mu=\{{{', '.join(map(str, shifts))}\}}$, "
            rf"$n={n}$, $\varepsilon={EPS:g}$, $\delta={DELTA:g}$",
        )
        fig.tight_layout()
        fs.save(fig, table, name=f"fig14{panel}")

    records, labels, homes, hours = load_records(fs.fast)
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.4))
    rows = []
    for ax, n in zip(axes, (10, 16), strict=False):
        progress(fs, f"meters: shift set for n={n} over {CIRCUITS * hours} circuit-hours")
        query = QuantizedMean(*KWH_RANGE, n)
        signed = Neighborhood.from_data(records, query, "remove-one", n=n, groups=labels, directed=True)
        obs = sorted(int(s[0]) if s[0] <= n // 2 else int(s[0]) - (n + 1) for s in signed.raw)
        series = []
        for name, nb, color in (
            ("as observed (remove-one)", signed, "C0"),
            ("symmetric (remove- and add-one)", Neighborhood(signed.raw, False, "shifts"), "C1"),
        ):
            f = solve(
                fs, n=n, eps=EPS, delta=DELTA, neighborhood=nb, metric="er", privacy="pdp-kadam", canonical=True
            ).pmf
            series.append((f"{name}: $f(0)={f[0]:.3f}$", f, color))
            rows += [
                {
                    "n": n,
                    "shift_set": name,
                    "shifts": " ".join(map(str, nb.resolve(n).ravel())),
                    "eta": e,
                    "pmf": float(v),
                }
                for e, v in enumerate(f)
            ]
        step = (KWH_RANGE[1] - KWH_RANGE[0]) / n
        bars(
            ax, n, series, obs, rf"$n={n}$ (step {step:.3f} kWh): observed $\tilde\mu=\{{{', '.join(map(str, obs))}\}}$"
        )
    fig.suptitle(
        rf"Fig. 14 pipeline on London smart meters: {homes} homes in {CIRCUITS} circuits, {hours} hours; "
        rf"MILP (13), $\varepsilon={EPS:g}$, $\delta={DELTA:g}$",
        fontsize=10,
    )
    fig.tight_layout()
    fs.save(fig, rows, name="fig14_meters")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
