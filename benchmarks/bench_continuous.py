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
    nice -n 10 python benchmarks/bench_continuous.py --grid --jsonl benchmarks/selvi_grid.jsonl --time-limit 180
        # resumable: one JSON line per instance appended as it finishes; instances already in the file are skipped
    python benchmarks/bench_continuous.py --grid --jsonl benchmarks/selvi_grid.jsonl --summary   # the table, no run
    python benchmarks/bench_continuous.py --side-by-side 128 --time-limit 1200    # m = 128 beside the full LP
"""

from __future__ import annotations

import argparse
import json
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


SIDE_HEADER = "| m | LP | bound | rows | LB wall s | total wall / CPU s |"


def side_by_side(m: int, time_limit: float | None = None) -> list[str]:
    """(1, 0.1), l1 at ``m``: optnoise's lower-bound LP beside the full LP (every row, no symmetry), same K."""
    d = NoiseDesign(release="continuous", sensitivity=1.0, eps=1.0, delta=0.1, metric="mae", resolution=1 / m)
    t0, c0 = time.perf_counter(), time.process_time()
    r = d.solve(time_limit=time_limit)
    ours, ours_cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"m = {m}: ours {r.distortion} / {r.bound} in {ours:.1f} s, CPU {ours_cpu:.1f} s ({r.message})", flush=True)
    if not r.history:  # the upper bound did not finish: no lower-bound LP to set beside the full one
        return [fmt_row([m, f"optnoise: {r.message}", "-", "-", "-", f"{ours:.1f} / {ours_cpu:.1f}"])]
    h = r.history[-1]
    K = (h["cells"] - 1) // 2
    t1, c1 = time.perf_counter(), time.process_time()
    full = lower_bound(d.cost_of, [(1.0, 0.1)], m, 1.0 / m, K, None, symmetric=False, time_limit=time_limit)
    tf, tf_cpu = time.perf_counter() - t1, time.process_time() - c1
    shown = "-" if full.bound is None else f"{full.bound:.6f}"
    note = "" if full.complete else f" (not finished: {full.message or 'time limit'})"
    mine = "-" if h["lower"] is None else f"{h['lower']:.6f}"
    return [
        fmt_row(
            [m, "optnoise (sym, lazy)", mine, h["lp_rows"], f"{h['lower_time']:.1f}", f"{ours:.1f} / {ours_cpu:.1f}"]
        ),
        fmt_row([m, "full LP" + note, shown, full.rows, f"{tf:.1f}", f"{tf:.1f} / {tf_cpu:.1f}"]),
    ]


GRID_HEADER = [
    "| metric | eps | delta | status | upper | lower | gap | (u-l)/u | m | wall / CPU s | <= TL, AG |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
]


def grid_instance(metric: str, eps: float, delta: float, time_limit: float = 60.0) -> dict:
    """One instance of the grid (gap=2e-3, ``time_limit`` s wall clock) as a JSON record, with the baselines check.

    ``cpu_seconds`` is the process's CPU time: on a shared machine at low priority the wall clock
    mostly measures the other jobs.
    """
    d = NoiseDesign(release="continuous", sensitivity=1.0, eps=eps, delta=delta, metric=metric, gap=2e-3)
    t0, c0 = time.perf_counter(), time.process_time()
    r = d.solve(time_limit=time_limit)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    base = r.baselines
    ceiling = min(base.get("truncated_laplace", math.inf), base.get("gaussian", math.inf))
    return {
        "metric": metric,
        "eps": eps,
        "delta": delta,
        "status": r.status,
        "upper": r.distortion,
        "lower": r.bound,
        "gap": r.gap,  # (u - l) / max(1, u), the project's and Selvi et al.'s scale
        "ratio": None if r.bound is None else (r.distortion - r.bound) / r.distortion,
        "m": r.m,
        "m_reached": max((h["m"] for h in r.history), default=r.m),
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "time_limit": time_limit,
        "truncated_laplace": base.get("truncated_laplace"),
        "gaussian": base.get("gaussian"),
        "below_baselines": bool(r.distortion <= ceiling),
    }


def record_row(rec: dict) -> str:
    pct = lambda v: "-" if v is None else f"{v:.3%}"  # noqa: E731
    return fmt_row(
        [
            rec["metric"],
            rec["eps"],
            rec["delta"],
            rec["status"],
            f"{rec['upper']:.6g}",
            "-" if rec["lower"] is None else f"{rec['lower']:.6g}",
            pct(rec["gap"]),
            pct(rec["ratio"]),
            rec["m_reached"],
            f"{rec['seconds']:.1f} / {rec.get('cpu_seconds', math.nan):.1f}",
            "yes" if rec["below_baselines"] else "NO",
        ]
    )


def summary(records: list[dict]) -> str:
    """Worst and median gap (both scales), largest time, baselines check, count done."""
    if not records:
        return "No instance done."
    gaps = [math.inf if r["gap"] is None else r["gap"] for r in records]
    ratios = [math.inf if r["ratio"] is None else r["ratio"] for r in records]
    times = [r["seconds"] for r in records]
    cpus = [r.get("cpu_seconds", math.nan) for r in records]
    over = sum(not r["below_baselines"] for r in records)
    slow = sum(t > 60.0 for t in times)
    return (
        f"{len(records)} instances done. Gap (u-l)/max(1,u): largest {max(gaps):.3%}, median "
        f"{float(np.median(gaps)):.3%}, {sum(g > 5e-3 for g in gaps)} above 0.5%. Plain (u-l)/u: largest "
        f"{max(ratios):.3%}, median {float(np.median(ratios)):.3%}. Largest wall time {max(times):.1f} s "
        f"({slow} above 60 s), largest CPU time {max(cpus):.1f} s ({sum(c > 60.0 for c in cpus)} above 60 s). "
        f"Upper bound above the truncated Laplace or analytic Gaussian: {over}."
    )


def read_jsonl(path: Path) -> list[dict]:
    """The records of a resumable run (a torn last line, from an interrupted run, is ignored)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def grid_rows(
    points: list[tuple[float, float]],
    metrics: tuple[str, ...] = ("mae", "mse"),
    jsonl: Path | None = None,
    run: bool = True,
    time_limit: float = 60.0,
) -> list[str]:
    """One row per point and metric, then the summary; with ``jsonl``, resumable (done instances are skipped)."""
    records = read_jsonl(jsonl) if jsonl is not None else []
    done = {(r["metric"], r["eps"], r["delta"]) for r in records}
    for eps, delta in points:
        for metric in metrics:
            if (metric, eps, delta) in done or not run:
                continue
            rec = grid_instance(metric, eps, delta, time_limit)
            records.append(rec)
            if jsonl is not None:
                with jsonl.open("a") as fh:
                    fh.write(json.dumps(rec) + "\n")
            print(record_row(rec), flush=True)
    wanted = {(mt, e, d) for e, d in points for mt in metrics}
    mine = sorted(
        (r for r in records if (r["metric"], r["eps"], r["delta"]) in wanted),
        key=lambda r: (r["metric"], r["eps"], r["delta"]),
    )
    return [*GRID_HEADER, *(record_row(r) for r in mine), "", summary(mine)]


def selvi_section(
    points: list[tuple[float, float]], metrics: tuple[str, ...], jsonl: Path, run: bool = True, time_limit: float = 60.0
) -> str:
    """The RESULTS.md section of a resumable grid run (its own section: the hand-written notes stay)."""
    body = ["## Continuous designs: Selvi et al.'s 10 x 10 grid (issue 31)", "", machine(), ""]
    body += [
        f"Delta = 1, gap = 2e-3, a wall-clock limit of {time_limit:g} s each (passed to every LP), one instance at a",
        "time on one of the 2 cores (the other core ran one other job). The CPU time is the benchmark process's own",
        "(its threads): a child process that `solver='auto'` may start for the upper bound is not counted;",
        "gap = (u-l)/max(1,u) (optnoise's relative_gap, Selvi et al.'s scale), (u-l)/u the plain ratio;",
        "m = the largest resolution tried; the last column: upper bound <= truncated Laplace and analytic Gaussian.",
        f"Records: `{jsonl.as_posix()}` (one JSON line per instance, appended as it finishes).",
        "",
    ]
    body += grid_rows(points, metrics, jsonl, run, time_limit)
    return "\n".join(body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small m and two grid points")
    ap.add_argument("--grid", action="store_true", help="all 100 points of the grid")
    ap.add_argument("--eps", type=float, nargs="*", help="with --grid: only these rows of the grid")
    ap.add_argument("--metric", choices=("mae", "mse"), nargs="*", help="only these metrics (default both)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--jsonl", type=Path, help="resumable grid run: append one JSON line per instance, skip done ones")
    ap.add_argument("--summary", action="store_true", help="with --jsonl: only write the table from the file")
    ap.add_argument("--time-limit", type=float, default=60.0, help="wall-clock seconds per grid instance")
    ap.add_argument("--side-by-side", type=int, metavar="M", help="only (1, 0.1), l1 at this m beside the full LP")
    args = ap.parse_args()
    if args.side_by_side:
        rows = side_by_side(args.side_by_side, args.time_limit)
        print("\n".join([SIDE_HEADER, "|---|---|---|---|---|---|", *rows]))
        return
    metrics = tuple(args.metric or ("mae", "mse"))
    points = [(e, d) for e in GRID_EPS for d in GRID_DELTA if not args.eps or e in args.eps] if args.grid else GRID
    if args.jsonl is not None:
        # one point of every eps row and delta column before the next (shifted diagonals; the diagonal, run
        # before, last): a run stopped early still samples the whole grid
        order = {(e, GRID_DELTA[(i + o) % 10]): o * 10 + i for o in range(10) for i, e in enumerate(GRID_EPS)}
        points.sort(key=lambda pt: (order.get(pt, 0) - 10) % 100)
        text = selvi_section(points, metrics, args.jsonl, run=not args.summary, time_limit=args.time_limit)
        print(text)
        if not args.no_write:
            write_section("continuous_selvi", text)
        return
    ms = [4, 8] if args.quick else [4, 8, 16]
    body = ["## Continuous designs (issue 31)", "", machine(), "", "### Pure DP, l1, eps = 1", ""]
    body += ["| m | lower | staircase | upper | gap | s |", "|---|---|---|---|---|---|", *pure_rows(ms)]
    body += ["", "### (1, 0.1), l1: lower-bound LP beside the full LP", ""]
    body += [SIDE_HEADER, "|---|---|---|---|---|---|", *side_by_side(ms[-1])]
    body += ["", "### Points of Selvi et al.'s grid (Delta = 1, gap = 2e-3, 60 s)", ""]
    body += grid_rows(GRID[6:8] if args.quick else points, metrics)
    text = "\n".join(body)
    print(text)
    if not args.no_write:
        write_section("continuous", text)


if __name__ == "__main__":
    main()
