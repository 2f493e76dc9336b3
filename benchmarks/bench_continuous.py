"""Continuous designs (issue #31): proven gaps and times, beside the full lower-bound LP; writes benchmarks/RESULTS.md.

* pure DP, l1, eps = 1: upper and lower bounds at m = 4, 8, 16 against the Geng-Viswanath
  staircase's closed form (0.95952, gamma* = 1 / (1 + e^(eps/2)));
* (eps, delta) = (1, 0.1), l1: the lower-bound LP as optnoise solves it (symmetric, lazy rows
  seeded by the upper bound) beside the full LP (every row, no symmetry), same m, same HiGHS;
* Selvi, Liu and Wiesemann's grid (Delta = 1, l1 and l2), gap=2e-3, 60 s each: its diagonal by
  default, all 100 points with ``--grid`` (hours on a shared machine).

Usage::

    python benchmarks/bench_continuous.py            # the grid's diagonal (about half an hour)
    python benchmarks/bench_continuous.py --grid     # all 100 grid points, l1 and l2
    python benchmarks/bench_continuous.py --quick    # m <= 8, two grid points
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

from optnoise import NoiseDesign
from optnoise.design.continuous_bound import lower_bound

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import fmt_row, machine, write_section  # noqa: E402

#: Selvi, Liu and Wiesemann's grid (the rows and columns of Tables 1, 4-6 of their accepted manuscript, in their
#: repository under "GitHub Appendices"; their gaps are (upper - lower) / max(1, midpoint)).
GRID_EPS = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
GRID_DELTA = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.75)
#: The default run: the grid's diagonal (eps and delta both increasing), corners included.
GRID = list(zip(GRID_EPS, GRID_DELTA, strict=True))


def staircase_l1(eps: float) -> float:
    """Geng-Viswanath's optimal l1 cost (Delta = 1): b^g... summed from the staircase's density."""
    g = 1.0 / (1.0 + math.exp(eps / 2.0))
    b = math.exp(-eps)
    mass = cost = 0.0
    for k in range(2000):
        for lo, hi, h in ((k, k + g, b**k), (k + g, k + 1, b ** (k + 1))):
            mass += h * (hi - lo)
            cost += h * (hi**2 - lo**2) / 2.0
    return cost / mass


def pure_rows(ms: list[int]) -> list[str]:
    stair = staircase_l1(1.0)
    rows = []
    for m in ms:
        t0 = time.perf_counter()
        r = NoiseDesign(
            release="continuous", sensitivity=1.0, eps=1.0, delta=0.0, metric="mae", resolution=1 / m
        ).solve()
        rows.append(
            fmt_row(
                [
                    m,
                    f"{r.bound:.5f}",
                    f"{stair:.5f}",
                    f"{r.distortion:.5f}",
                    f"{r.gap:.2%}",
                    f"{time.perf_counter() - t0:.1f}",
                ]
            )
        )
    return rows


def side_by_side(m: int) -> list[str]:
    d = NoiseDesign(release="continuous", sensitivity=1.0, eps=1.0, delta=0.1, metric="mae", resolution=1 / m)
    t0 = time.perf_counter()
    r = d.solve()
    ours = time.perf_counter() - t0
    h = r.history[-1]
    K = (h["cells"] - 1) // 2
    t1 = time.perf_counter()
    full = lower_bound(d.cost_of, [(1.0, 0.1)], m, 1.0 / m, K, None, symmetric=False)
    tf = time.perf_counter() - t1
    return [
        fmt_row(
            [m, "optnoise (sym, lazy)", f"{h['lower']:.6f}", h["lp_rows"], f"{h['lower_time']:.1f}", f"{ours:.1f}"]
        ),
        fmt_row([m, "full LP", f"{full.bound:.6f}", full.rows, f"{tf:.1f}", ""]),
    ]


def grid_rows(points: list[tuple[float, float]], metrics: tuple[str, ...] = ("mae", "mse")) -> list[str]:
    """One row per point and metric, then the largest and median gap."""
    rows, gaps = [], []
    for metric in metrics:
        for eps, delta in points:
            d = NoiseDesign(release="continuous", sensitivity=1.0, eps=eps, delta=delta, metric=metric, gap=2e-3)
            t0 = time.perf_counter()
            r = d.solve(time_limit=60.0)
            rows.append(
                fmt_row(
                    [
                        metric,
                        eps,
                        delta,
                        r.status,
                        f"{r.distortion:.6g}",
                        f"{r.bound:.6g}" if r.bound else "-",
                        f"{r.gap:.3%}" if r.gap is not None else "-",
                        f"{(r.distortion - r.bound) / r.distortion:.3%}" if r.bound is not None else "-",
                        r.m,
                        f"{time.perf_counter() - t0:.1f}",
                    ]
                )
            )
            print(rows[-1], flush=True)
            gaps.append(math.inf if r.gap is None else r.gap)
    return [*rows, "", f"Largest gap {max(gaps):.3%}, median {float(np.median(gaps)):.3%} over {len(gaps)} instances."]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small m and two grid points")
    ap.add_argument("--grid", action="store_true", help="all 100 points of the grid")
    ap.add_argument("--eps", type=float, nargs="*", help="with --grid: only these rows of the grid")
    ap.add_argument("--metric", choices=("mae", "mse"), nargs="*", help="only these metrics (default both)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    ms = [4, 8] if args.quick else [4, 8, 16]
    body = ["## Continuous designs (issue 31)", "", machine(), "", "### Pure DP, l1, eps = 1", ""]
    body += ["| m | lower | staircase | upper | gap | s |", "|---|---|---|---|---|---|", *pure_rows(ms)]
    body += ["", "### (1, 0.1), l1: lower-bound LP beside the full LP", ""]
    body += ["| m | LP | bound | rows | LB s | total s |", "|---|---|---|---|---|---|", *side_by_side(ms[-1])]
    body += ["", "### Points of Selvi et al.'s grid (Delta = 1, gap = 2e-3, 60 s)", ""]
    body += [
        "| metric | eps | delta | status | upper | lower | gap | (u-l)/u | m | s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    points = [(e, d) for e in GRID_EPS for d in GRID_DELTA if not args.eps or e in args.eps] if args.grid else GRID
    body += grid_rows(GRID[6:8] if args.quick else points, tuple(args.metric or ("mae", "mse")))
    text = "\n".join(body)
    print(text)
    if not args.no_write:
        write_section("continuous", text)


if __name__ == "__main__":
    main()
