"""Time the general (eps, delta)-DP mechanism LP and write the results to benchmarks/RESULTS.md.

Targets (issue #14): n = 100 under 10 s, n = 500 under 60 s. Problem: inputs
and outputs 0..n, adjacent neighbours (both directions), delta = 1e-3, a
uniform prior; the loss is the absolute error (the default) at three eps, and
the squared error and the error rate at eps = 1.

Side by side in the same run:

* ``optnoise``: ``MechanismDesign(...).solve()``, wall clock including model
  building, every lazy-row round and the re-verification of the matrix;
* ``full model``: the naive reference, the same LP with every privacy row
  (``MechanismDesign.build_model()``, one row and one slack per (pair,
  output)) solved once by HiGHS with its defaults, under a time limit.

Usage::

    python benchmarks/bench_mechanism.py            # n = 100 and 500 (about 15 min on 2 cores)
    python benchmarks/bench_mechanism.py --quick    # n = 30 and 60, for a smoke run
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import date
from pathlib import Path

from optnoise import MechanismDesign
from optnoise.engine.solve import solve_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import fmt_row, machine, write_section  # noqa: E402

DELTA = 1e-3
CASES = [(0.5, "abs"), (1.0, "abs"), (2.0, "abs"), (1.0, "sq"), (1.0, "er")]
TARGETS = {100: 10.0, 500: 60.0}


def run(n: int, eps: float, loss: str, time_limit: float) -> dict:
    """One instance: optnoise's lazy solve and the full model, timed in the same process."""
    t0 = time.perf_counter()
    design = MechanismDesign(n=n, eps=eps, delta=DELTA, loss=loss)
    res = design.solve()
    ours = time.perf_counter() - t0
    t1 = time.perf_counter()
    full = design.build_model()
    build = time.perf_counter() - t1
    ref = solve_model(full, solver="highs", time_limit=time_limit)
    naive = time.perf_counter() - t1
    agree = None
    if ref.status == "optimal" and res.loss is not None and ref.objective is not None:
        agree = abs(res.loss - ref.objective) / max(1.0, abs(ref.objective))
    return {
        "n": n,
        "eps": eps,
        "loss": loss,
        "status": res.status,
        "verified": res.verify(),
        "value": res.loss,
        "seconds": ours,
        "rounds": res.rounds,
        "model": res.model_size,
        "full_model": full.size,
        "full_build": build,
        "full_status": ref.status,
        "full_seconds": naive,
        "full_value": ref.objective,
        "agree": agree,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="n = 30 and 60 only")
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds for the full-model reference")
    ap.add_argument("--no-write", action="store_true", help="print only")
    a = ap.parse_args(argv)
    ns = [30, 60] if a.quick else [100, 500]
    rows = []
    for n in ns:
        for eps, loss in CASES:
            r = run(n, eps, loss, a.time_limit)
            rows.append(r)
            print(
                f"n={n} eps={eps} {loss}: optnoise {r['status']} {r['seconds']:.2f}s ({r['rounds']} rounds), "
                f"full model {r['full_status']} {r['full_seconds']:.2f}s",
                flush=True,
            )
    cmd = "python benchmarks/bench_mechanism.py" + (" --quick" if a.quick else "")
    lines = [
        "## General mechanism design LP (`benchmarks/bench_mechanism.py`)",
        "",
        f"Machine: {machine()}.  ",
        f"Command: `{cmd}` (full-model time limit {a.time_limit:g} s).  ",
        f"Date: {date.today().isoformat()}",
        "",
        f"Problem: `MechanismDesign(n, eps, delta={DELTA:g}, loss=...)`: inputs and outputs 0..n, adjacent "
        "neighbours in both directions, uniform prior, (eps, delta)-DP (the hockey-stick LP). `optnoise` is "
        "`solve()` wall clock (model building, every lazy-row round, re-verification); `rows x cols (nnz)` is "
        "its last model. The naive reference, in the same run, is the full model (one privacy row and one "
        "slack per (pair, output)) solved once by HiGHS with its defaults; its time includes building it. "
        "`agree` is |optnoise - full| / max(1, |full|) where both are optimal. Targets: n = 100 under "
        f"{TARGETS[100]:g} s, n = 500 under {TARGETS[500]:g} s.",
        "",
        fmt_row(
            [
                "n",
                "eps",
                "loss",
                "optnoise s",
                "status",
                "rounds",
                "rows x cols (nnz)",
                "full model rows x cols (nnz)",
                "full model s",
                "full status",
                "optimum",
                "agree",
                "target met",
            ]
        ),
        fmt_row(["---"] * 13),
    ]
    for r in rows:
        m, f = r["model"], r["full_model"]
        target = TARGETS.get(r["n"])
        met = "-" if target is None else ("yes" if r["status"] == "optimal" and r["seconds"] < target else "no")
        lines.append(
            fmt_row(
                [
                    r["n"],
                    r["eps"],
                    r["loss"],
                    f"{r['seconds']:.2f}",
                    r["status"] + ("" if r["verified"] else " (not verified)"),
                    r["rounds"],
                    f"{m['rows']} x {m['cols']} ({m['nonzeros']})",
                    f"{f['rows']} x {f['cols']} ({f['nonzeros']})",
                    f"{r['full_seconds']:.2f}",
                    r["full_status"],
                    "-" if r["value"] is None else f"{r['value']:.10g}",
                    "-" if r["agree"] is None else f"{r['agree']:.1e}",
                    met,
                ]
            )
        )
    both = [r for r in rows if r["full_status"] == "optimal" and r["status"] == "optimal"]
    ratios = [r["full_seconds"] / r["seconds"] for r in both]
    failed = [r for r in rows if r["full_status"] != "optimal"]
    summary = (
        f"Where both finish, the full model takes {min(ratios):.1f} to {max(ratios):.1f} times as long "
        f"(median {sorted(ratios)[len(ratios) // 2]:.1f}) and reaches the same optimum (`agree`)."
        if ratios
        else "The full model finished on no instance."
    )
    if failed:
        summary += " It ends without an optimum on " + ", ".join(
            f"n = {r['n']}, eps = {r['eps']:g}, {r['loss']} ({r['full_status']})" for r in failed
        )
        summary += "."
    lines += [
        "",
        summary,
        "The lazy rows (see `optnoise/design/mechanism.py`) start from the rows of the outputs near each "
        "input, add every row the solution violates and repeat (`rounds`); the last model's optimum is the "
        "full model's. Restricted LPs of 20,000 rows or more use HiGHS' interior point method, and a dual "
        "simplex solve error is retried with it. The error rate (a flat loss) solves the full model at once by "
        "dual simplex: its lazy rounds took 4.2 s (n = 100) and 60 s (n = 500) where the full model takes 0.9 s "
        "and 21 s. Its solution misses the relative delta rule by a hair and is repaired exactly "
        "(`optnoise.deploy.certify`), which costs at most 1e-6 of the loss (`agree` ~6e-8) and 8 s at n = 500; the "
        "full-model column is the unrepaired solver optimum.",
    ]
    body = "\n".join(lines)
    print(body)
    if not a.no_write:
        write_section("mechanism", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
