"""Time noise-design solves and write the results to benchmarks/RESULTS.md.

Grid (issue "optnoise core", section 8): n in {8, 32, 128, 256, 1024}, |M| in
{1, 3, 10} (directed BD sets {1..|M|}), ER and MSE, the three notions, HiGHS
and CBC (CBC only up to n=32: PuLP builds its model row by row in Python).
Every solve has a time limit; a solve that hits it is reported as such.

Also measured: the three targets, and the ``pdp`` MILP before/after (the
paper's big-M linearisation per shift vs optnoise's hull formulation).

Usage::

    python benchmarks/bench_design.py            # full grid (about 20-30 min on 2 cores)
    python benchmarks/bench_design.py --quick    # small grid, for a smoke run
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from optnoise import Neighborhood, NoiseDesign

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import RESULTS, fmt_row, machine, write_section  # noqa: E402


def timed(design: NoiseDesign, solver: str, time_limit: float, repeats: int, formulation: str = "hull"):
    times, res = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = design.solve(solver=solver, time_limit=time_limit, formulation=formulation)
        times.append(time.perf_counter() - t0)
        if times[-1] > 2.0:  # slow solves are timed once
            break
    return statistics.median(times), res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small grid")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per solve (default 60)")
    ap.add_argument("--repeats", type=int, default=3, help="repeats of fast solves (median reported)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    a = ap.parse_args(argv)

    ns = [8, 32] if a.quick else [8, 32, 128, 256, 1024]
    ms = [1, 3] if a.quick else [1, 3, 10]
    eps, delta = 1.0, 0.1
    lines = [
        "## Noise design (`benchmarks/bench_design.py`)",
        "",
        f"Machine: {machine()}.",
        f"Command: `python benchmarks/bench_design.py{' --quick' if a.quick else ''}` "
        f"(time limit {a.time_limit:g} s per solve; median of {a.repeats} for solves under 2 s).",
        f"Problem: eps={eps}, delta={delta}, directed BD shift sets {{1..|M|}}. Time is wall-clock for "
        "model build + solve + re-verification.",
        "",
        "### Grid",
        "",
        fmt_row(["n", "|M|", "metric", "notion", "solver", "status", "median s", "rows x cols (ints)"]),
        fmt_row(["---"] * 8),
    ]
    for n in ns:
        for m in ms:
            if m > n:
                continue
            nb = Neighborhood.bd(m, directed=True)
            for metric in ("er", "mse"):
                for notion in ("dp", "pdp", "pdp-kadam"):
                    solvers = ["highs"] + (["cbc"] if n <= 32 else [])
                    for solver in solvers:
                        d = NoiseDesign(n=n, eps=eps, delta=delta, neighborhood=nb, metric=metric, privacy=notion)
                        t, r = timed(d, solver, a.time_limit, a.repeats)
                        sz = r.model_size
                        row = [
                            n,
                            m,
                            metric,
                            notion,
                            solver,
                            r.status,
                            f"{t:.3f}",
                            f"{sz['rows']} x {sz['cols']} ({sz['integers']})",
                        ]
                        lines.append(fmt_row(row))
                        print(fmt_row(row), flush=True)

    lines += [
        "",
        "### Targets (2 cores)",
        "",
        fmt_row(["case", "target", "status", "seconds", "met"]),
        fmt_row(["---"] * 5),
    ]
    targets = [
        (
            "pdp, n=256, BD mu_bar=3 directed",
            5.0,
            NoiseDesign(n=256, eps=eps, delta=delta, neighborhood=Neighborhood.bd(3, directed=True), privacy="pdp"),
        ),
        (
            "pdp-kadam, n=256, BD mu_bar=3 directed",
            5.0,
            NoiseDesign(
                n=256, eps=eps, delta=delta, neighborhood=Neighborhood.bd(3, directed=True), privacy="pdp-kadam"
            ),
        ),
        (
            "pdp, n=256, BD mu_bar=3 symmetric",
            5.0,
            NoiseDesign(n=256, eps=eps, delta=delta, neighborhood=Neighborhood.bd(3), privacy="pdp"),
        ),
        (
            "pdp-kadam, n=256, BD mu_bar=3 symmetric",
            5.0,
            NoiseDesign(n=256, eps=eps, delta=delta, neighborhood=Neighborhood.bd(3), privacy="pdp-kadam"),
        ),
        (
            "dp, n=10^4, |M|=10, MSE",
            10.0,
            NoiseDesign(
                n=10_000,
                eps=eps,
                delta=delta,
                neighborhood=Neighborhood.bd(10, directed=True),
                metric="mse",
                privacy="dp",
            ),
        ),
        (
            "pdp, n=100, |M|=10 directed",
            60.0,
            NoiseDesign(n=100, eps=eps, delta=delta, neighborhood=Neighborhood.bd(10, directed=True), privacy="pdp"),
        ),
    ]
    if a.quick:
        targets = targets[:2]
    for label, target, d in targets:
        t, r = timed(d, "highs", max(a.time_limit, 2 * target), 1)
        ok = "yes" if (r.status == "optimal" and t <= target) else "no"
        row = [label, f"< {target:g} s", r.status + (f" (gap {r.gap:.2g})" if r.gap else ""), f"{t:.2f}", ok]
        lines.append(fmt_row(row))
        print(fmt_row(row), flush=True)

    lines += [
        "",
        "### `pdp` MILP before/after",
        "",
        'Before: the paper\'s big-M linearisation (13c)-(13g) applied to every shift (`formulation="bigm"`). '
        'After: optnoise\'s per-indicator convex-hull form (`formulation="hull"`, the default), whose LP '
        "relaxation is exactly the DP hockey-stick LP.",
        "",
        fmt_row(["case", "bigm status", "bigm s", "hull status", "hull s"]),
        fmt_row(["---"] * 5),
    ]
    cases = [(32, 3, True), (64, 3, True), (128, 3, True), (256, 3, True), (256, 3, False), (100, 10, True)]
    if a.quick:
        cases = cases[:2]
    for n, m, directed in cases:
        d = NoiseDesign(n=n, eps=eps, delta=delta, neighborhood=Neighborhood.bd(m, directed=directed), privacy="pdp")
        tb, rb = timed(d, "highs", a.time_limit, 1, formulation="bigm")
        th, rh = timed(d, "highs", a.time_limit, 1, formulation="hull")
        label = f"n={n}, BD {m} {'directed' if directed else 'symmetric'}"
        row = [label, rb.status, f"{tb:.2f}", rh.status, f"{th:.2f}"]
        lines.append(fmt_row(row))
        print(fmt_row(row), flush=True)

    lines += [
        "",
        "### Notes",
        "",
        "- The hull form's LP relaxation is the DP hockey-stick LP, so the root bound is the `dp` optimum. "
        "Where the `pdp` MILP is slow (|M| = 10), the dual bound reaches the optimum early and the time goes "
        "into finding a matching incumbent: warm starts from the `pdp-kadam` optimum (always PDP-feasible) or "
        "from a MILP restricted to the DP optimum's leaking pairs, and a higher HiGHS heuristic effort, did "
        "not close the last ~1e-5 of relative gap faster.",
        "- Symmetry breaking `f(-e1) <= f(e1)` (symmetric shift sets and costs) is in both forms.",
        "- Reported times include building the model and re-verifying the PMF; CBC runs go through PuLP's "
        "text files and a HiGHS polish of the continuous part.",
    ]
    text = "\n".join(lines)
    if not a.no_write:
        write_section("design", text)
        print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
