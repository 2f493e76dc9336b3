"""Time of the additive release ``q + eta`` on Z (optnoise.design.additive): sums with contribution bound D.

Usage::

    .venv/bin/python benchmarks/bench_additive.py [--sizes 1,8,32] [--no-write]

For each D: ``NoiseDesign(release="additive", neighborhood=Neighborhood.bd(D), eps=1, delta=1e-6,
metric="mse", privacy="dp").solve(solver="highs")`` with the support grown automatically (the
LP at L and the proof at L + L/4), and writes the wall time, support, status and gap into
``benchmarks/RESULTS.md`` between ``<!-- additive:start -->`` and ``<!-- additive:end -->``.
Target (issue 30): D = 32 proven optimal within 30 s on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from optnoise import Neighborhood, NoiseDesign

sys.path.insert(0, str(Path(__file__).parent))
from _results import fmt_row, machine, write_section  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,8,32", help="comma list of contribution bounds D")
    ap.add_argument("--no-write", action="store_true", help="print only")
    a = ap.parse_args()
    rows = [
        fmt_row(["D", "L", "status", "gap", "MSE", "discrete Laplace", "discrete Gaussian", "LP rows", "seconds"]),
        fmt_row(["---"] * 9),
    ]
    for D in (int(x) for x in a.sizes.split(",")):
        design = NoiseDesign(
            release="additive", neighborhood=Neighborhood.bd(D), eps=1.0, delta=1e-6, metric="mse", privacy="dp"
        )
        t0 = time.perf_counter()
        res = design.solve(solver="highs")
        wall = time.perf_counter() - t0
        base = res.baselines
        cells = [D, res.L, res.status, f"{res.gap:.2g}", f"{res.distortion:.6g}"]
        cells += [f"{base['discrete_laplace']:.6g}", f"{base['discrete_gaussian']:.6g}"]
        rows.append(fmt_row(cells + [res.model_size.get("rows"), f"{wall:.1f}"]))
        print(rows[-1], flush=True)
    body = "\n".join(
        [
            "## Additive release on Z: sums with contribution bound D, (1, 1e-6)-DP, MSE",
            "",
            f"Machine: {machine()}. Support grown automatically; the seconds include the proof at L + L/4 "
            "and any repair (benchmarks/bench_additive.py).",
            "",
            *rows,
        ]
    )
    if not a.no_write:
        write_section("additive", body)


if __name__ == "__main__":
    main()
