"""Continuous designs (issue #31): proven gaps and times, beside the full lower-bound LP; writes benchmarks/RESULTS.md.

* pure DP, l1, eps = 1: upper and lower bounds at m = 4, 8, 16 against the Geng-Viswanath
  staircase's closed form (0.95952, gamma* = 1 / (1 + e^(eps/2)));
* (eps, delta) = (1, 0.1), l1: the lower-bound LP as optnoise solves it (symmetric, lazy rows
  seeded by the upper bound) beside the full LP (every row, no symmetry), same m, same HiGHS;
* a subset of Selvi, Liu and Wiesemann's grid (Delta = 1, l1 and l2), gap=2e-3, 60 s each.

Usage::

    python benchmarks/bench_continuous.py            # everything above (minutes)
    python benchmarks/bench_continuous.py --quick    # m <= 8, two grid points
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from optnoise import NoiseDesign
from optnoise.design.continuous_bound import lower_bound

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import fmt_row, machine, write_section  # noqa: E402

#: Selvi et al.'s grid spans eps in [0.005, 5] and delta in [0.005, 0.75]; its exact points are not in their
#: repository's code, so these are points inside it.
GRID = [(0.5, 0.05), (1.0, 0.1), (2.0, 0.2), (5.0, 0.75), (0.1, 0.005)]


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


def grid_rows(points: list[tuple[float, float]]) -> list[str]:
    rows = []
    for metric in ("mae", "mse"):
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
                        r.m,
                        f"{time.perf_counter() - t0:.1f}",
                    ]
                )
            )
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small m and two grid points")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    ms = [4, 8] if args.quick else [4, 8, 16]
    body = ["## Continuous designs (issue 31)", "", machine(), "", "### Pure DP, l1, eps = 1", ""]
    body += ["| m | lower | staircase | upper | gap | s |", "|---|---|---|---|---|---|", *pure_rows(ms)]
    body += ["", "### (1, 0.1), l1: lower-bound LP beside the full LP", ""]
    body += ["| m | LP | bound | rows | LB s | total s |", "|---|---|---|---|---|---|", *side_by_side(ms[-1])]
    body += ["", "### Points of Selvi et al.'s grid (Delta = 1, gap = 2e-3, 60 s)", ""]
    body += ["| metric | eps | delta | status | upper | lower | gap | m | s |", "|---|---|---|---|---|---|---|---|---|"]
    body += grid_rows(GRID[:2] if args.quick else GRID)
    text = "\n".join(body)
    print(text)
    if not args.no_write:
        write_section("continuous", text)


if __name__ == "__main__":
    main()
