"""The default solver against naive references, measured side by side in one run; writes RESULTS.md.

Issue "Fast on hard instances" (SCIP backend, ``solver="auto"`` portfolio, lattice LP). Every row
times the new default and a naive reference in the same run, one after the other, so the ratio
does not depend on how busy the (shared) machine was on another day:

* ``pdp``, n = 64, directed shifts {1..10}, eps = 1, delta = 0.1, error rate and MSE:
  ``NoiseDesign.solve()`` (default ``solver="auto"``: HiGHS, raced against SCIP in a second
  process) against the paper's big-M linearisation per shift solved by ``scipy.optimize.milp``,
  and against each backend alone.
* Permute-and-flip lattice LP ([PF] Theorem 3 with monotonicity rows): ``solve_lattice_lp``
  defaults (interior point with crossover, monotonicity rows added lazily, warm dual simplex)
  against all rows at once by the simplex (the naive reference), at m = 5, k = 12, eps = 0.1;
  then m = 6, k = 12 at eps 0.1, 0.5, 1 and (``--m7``) m = 7, k = 12.
* ``dp`` at n = 10^5 with symmetric BD(10) (an LP with 2.1 million columns).

Wall-clock seconds are what the targets are about; CPU seconds of this process and its children
are shown beside them, since other jobs share the two cores (a race uses both).

Usage::

    python benchmarks/bench_portfolio.py            # about 15 min on 2 cores
    python benchmarks/bench_portfolio.py --quick    # small instances, smoke run
    python benchmarks/bench_portfolio.py --m7       # also m = 7, k = 12 (long)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from optnoise import Neighborhood, NoiseDesign
from optnoise.engine.solve import solve_model
from optnoise.engine.tolerance import MIP_REL_GAP
from optnoise.mechanisms.lattice import build_lattice_lp, solve_lattice_lp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import fmt_row, machine, write_section  # noqa: E402

#: The optima the issue states for the pdp n = 64 instances (to 1e-6 relative).
PDP64_OPTIMA = {"er": 0.8446734, "mse": 102.71114}


#: The lattice LP before this change (the pf_lp section, bench_pf_lp.py, 2026-11-22: lazy rows, HiGHS' default
#: simplex, a fresh model every round), for the before/after record.
LATTICE_BEFORE = (
    "Before (`pf_lp` section, 2026-11-22: lazy rows re-solved from scratch by HiGHS' default simplex): m=5, k=12: "
    "44.6 s / 4.4 s / 0.3 s at eps 0.1 / 0.5 / 1; m=6, k=12: 898 s / 49 s / 0.5 s; m=7, k=12 not attempted "
    "(interior point on all rows did not finish in 500 s, issue 17)."
)

#: Measured and not adopted (one-off runs on 2026-11-23 on the shared 2-core machine, load 5-14, so
#: wall times are 2-4x those of an idle machine); kept so the next attempt starts from them.
TRIED = [
    "Tried and not adopted (one-off runs, 2026-11-23, shared machine):",
    "",
    "- SCIP tightened to HiGHS' 1e-9 feasibility tolerance (the first version): on the n=64 error-rate instance "
    "SCIP alone stopped at gap 7e-6 after 60 s (idle core), where at its defaults (1e-6 primal, 1e-7 dual; "
    "adopted) it proves 0.84467341 in 26-38 s (in memory or read from MPS, the other core busy); under load "
    "8-14: 57.8 s at 1e-6, 40.9 s at 1e-8. Every SCIP point is now polished by HiGHS at 1e-9 (integers fixed, "
    "LP re-solved) and re-verified; its gap is recomputed against SCIP's bound, still a valid bound.",
    "- SCIP emphasis settings on the n=64 error rate (SCIP alone at 1e-9 tolerances, CPU-time limits, "
    "2026-11-23): default settings found the optimum 0.84467341 but stopped at gap 7.2e-6 after 65 CPU seconds "
    "(8449 nodes); aggressive heuristics: gap 3.3e-5 (852 nodes); emphasis optimality: incumbent 0.84550 after "
    "1 node.",
    "- The `pdp-kadam` optimum as a first incumbent for the n=64 error rate: HiGHS proves it in 10 s, but its "
    "error rate 0.8485 is far from the optimum 0.84467 (SCIP was then handed HiGHS' own incumbent after 1 s; "
    "since 2026-11-24 it starts from none, see the pdp_m10 section).",
    "- Lattice LP, all rows at once by interior point instead of lazy rows: m=5, k=12: 3.1-3.8 s at eps 0.1 "
    "(lazy 6.1 s), 3.0 s at eps 0.5 (lazy 1.2 s), 6.8 s at eps 1 (lazy 0.3-0.5 s); m=6, k=12: 95 s at eps 0.1 "
    "(lazy 146 s), 109 s at eps 0.5 (lazy 60 s). Neither wins everywhere, so `auto` races the two once the "
    "LP has run for a second.",
    "- Lattice LP rounds after the first: fresh interior-point solves cost as much as the first round each "
    "(m=6: 40-45 s); the warm dual simplex from the previous basis is kept (m=6, eps=0.5: 35 s and 3.5 s).",
    "- Lattice LP by the interior point on its dual (28k rows instead of 162k at m=6): m=5, k=12, eps=0.1 "
    "7.7 s against 3.1 s on the primal; Clarabel (direct LDL interior point) 28.8 s; HiGHS PDLP did not finish "
    "in 60 s; HiGHS' `hipo` interior point is not in this highspy build.",
]


def cpu() -> float:
    """CPU seconds of this process and its finished children (the SCIP process of a race)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed(fn):
    w0, c0 = time.perf_counter(), cpu()
    out = fn()
    return out, time.perf_counter() - w0, cpu() - c0


def naive_bigm(design: NoiseDesign, time_limit: float) -> tuple[str, float | None, float | None]:
    """The paper's big-M per shift through ``scipy.optimize.milp``: status, objective, gap."""
    model = design.build_model(formulation="bigm")
    res = milp(
        model.c,
        integrality=model.integrality.astype(int),
        bounds=Bounds(model.col_lower, model.col_upper),
        constraints=LinearConstraint(model.A, model.row_lower, model.row_upper),
        options={"time_limit": time_limit, "mip_rel_gap": MIP_REL_GAP},
    )
    obj = None if res.x is None else float(res.fun + model.offset)
    status = "optimal" if res.status == 0 else ("time_limit" if res.status == 1 else f"status {res.status}")
    gap = getattr(res, "mip_gap", None)
    return status, obj, gap


def cell(status: str, wall: float, cpu_s: float, limit: float) -> str:
    if status == "optimal":
        return f"{wall:.1f} (cpu {cpu_s:.1f})"
    return f"> {limit:g} ({status})"


def pdp64(limit: float, quick: bool) -> list[str]:
    n = 24 if quick else 64
    lines = [
        f"### `pdp`, n={n}, directed shifts {{1..10}}, eps=1, delta=0.1",
        "",
        "Seconds to a proof at optnoise's relative gap 1e-9 (build + solve + re-verification for "
        f"`NoiseDesign.solve`), limit {limit:g} s; `>` = stopped at the limit. Target: the default "
        "solver proves both within 30 s.",
        "",
        fmt_row(
            [
                "metric",
                "optimum",
                "default (auto) s",
                "won",
                "HiGHS alone s",
                "SCIP alone s",
                "naive big-M (scipy milp) s",
                "auto vs naive",
            ]
        ),
        fmt_row(["---"] * 8),
    ]
    for metric in ("er", "mse"):
        d = NoiseDesign(
            n=n, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(10, directed=True), metric=metric, privacy="pdp"
        )
        auto, wa, ca = timed(lambda: d.solve(time_limit=limit))  # noqa: B023
        highs, wh, ch = timed(lambda: d.solve("highs", time_limit=limit))  # noqa: B023
        scip, ws, cs = timed(lambda: d.solve("scip", time_limit=limit))  # noqa: B023
        (nst, nobj, _), wn, cn = timed(lambda: naive_bigm(d, limit))  # noqa: B023
        best = min(r.distortion for r in (auto, highs, scip) if r.distortion is not None)
        ref = PDP64_OPTIMA[metric] if not quick else best
        agree = auto.status == "optimal" and abs(auto.distortion - ref) <= 1e-6 * abs(ref)
        ratio = f"{wn / wa:.1f}x" if auto.status == "optimal" else "-"
        if nst != "optimal" and auto.status == "optimal":
            ratio = f"> {limit / wa:.1f}x"
        lines.append(
            fmt_row(
                [
                    metric,
                    f"{auto.distortion:.8g}" + (" (issue's value to 1e-6: yes)" if agree and not quick else ""),
                    cell(auto.status, wa, ca, limit) + ("" if auto.status == "optimal" else f", gap {auto.gap:.1e}"),
                    auto.backend,
                    cell(highs.status, wh, ch, limit) + ("" if highs.status == "optimal" else f", gap {highs.gap:.1e}"),
                    cell(scip.status, ws, cs, limit) + ("" if scip.status == "optimal" else f", gap {scip.gap:.1e}"),
                    cell(nst, wn, cn, limit) + ("" if nobj is None else f", obj {nobj:.8g}"),
                    ratio,
                ]
            )
        )
        print(lines[-1], flush=True)
    return lines


def lattice(quick: bool, m7: bool, limit: float) -> list[str]:
    ref_case = (4, 8, 0.1) if quick else (5, 12, 0.1)
    lines = [
        "### Permute-and-flip lattice LP (monotone, lattice weighting)",
        "",
        'Default: `solve_lattice_lp(m, k, eps)` (`solver="auto"`: interior point with crossover on the LP '
        "without monotonicity rows, violated rows added, warm dual simplex). Naive reference: every row "
        "at once, HiGHS simplex. Target: at m=5, k=12, eps=0.1 the default is at least 5x faster, same optimum.",
        "",
        fmt_row(
            [
                "m",
                "k",
                "eps",
                "vars",
                "rows (final)",
                "rounds",
                "default s",
                "naive full-row simplex s",
                "speed-up",
                "same optimum",
            ]
        ),
        fmt_row(["---"] * 10),
    ]
    m, k, eps = ref_case
    sol, wd, cd = timed(lambda: solve_lattice_lp(m, k, eps))
    full = build_lattice_lp(m, k, eps)
    naive, wn, cn = timed(lambda: solve_model(full.model, solver="highs", options={"solver": "simplex"}))
    same = naive.status == "optimal" and abs(naive.objective - sol.objective) <= 1e-9 * abs(naive.objective)
    lines.append(
        fmt_row(
            [
                m,
                k,
                eps,
                sol.lp.n_vars,
                sol.lp.model.shape[0],
                sol.rounds,
                f"{wd:.1f} (cpu {cd:.1f})",
                f"{wn:.1f} (cpu {cn:.1f})",
                f"{wn / wd:.1f}x",
                "yes" if same else f"no ({naive.status})",
            ]
        )
    )
    print(lines[-1], flush=True)
    lines += [
        "",
        "Scaling (default only; target: m=6, k=12 under 60 s at every eps; m=7, k=12 solves):",
        "",
        fmt_row(
            [
                "m",
                "k",
                "eps",
                "vars",
                "rows (final)",
                "monotone rows added / all",
                "rounds",
                "status",
                "wall s",
                "cpu s",
                "objective",
            ]
        ),
        fmt_row(["---"] * 11),
    ]
    sizes = [(4, 12)] if quick else [(6, 12)] + ([(7, 12)] if m7 else [])
    for m, k in sizes:
        for eps in (0.1, 0.5, 1.0):
            sol, w, c = timed(lambda: solve_lattice_lp(m, k, eps, time_limit=limit))  # noqa: B023
            added = sol.lp.row_blocks.get("monotone", np.zeros(0)).size
            lines.append(
                fmt_row(
                    [
                        m,
                        k,
                        eps,
                        sol.lp.n_vars,
                        sol.lp.model.shape[0],
                        f"{added} / {sol.lp.monotone_pairs[0].size}",
                        sol.rounds,
                        sol.status,
                        f"{w:.1f}",
                        f"{c:.1f}",
                        "-" if sol.objective is None else f"{sol.objective:.10g}",
                    ]
                )
            )
            print(lines[-1], flush=True)
    return lines


def dp_large(quick: bool) -> list[str]:
    n = 10_000 if quick else 100_000
    d = NoiseDesign(n=n, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(10), metric="mse", privacy="dp")
    res, w, c = timed(lambda: d.solve())
    line = fmt_row(
        [
            n,
            "symmetric BD(10)",
            "mse",
            res.status,
            res.backend,
            f"{w:.1f}",
            f"{c:.1f}",
            res.model_size["cols"],
            f"{res.distortion:.10g}",
            res.verify(),
        ]
    )
    print(line, flush=True)
    return [
        f"### `dp` at n={n}, symmetric BD(10), eps=1, delta=0.1",
        "",
        fmt_row(
            ["n", "shifts", "metric", "status", "backend", "wall s", "cpu s", "columns", "distortion", "re-verified"]
        ),
        fmt_row(["---"] * 10),
        line,
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small instances")
    ap.add_argument("--m7", action="store_true", help="also the lattice LP at m=7, k=12")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per MILP solve (default 60)")
    ap.add_argument("--lp-time-limit", type=float, default=1800.0, help="seconds per lattice LP (default 1800)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    lines = [
        "## Portfolio, SCIP and the lattice LP against naive references (`benchmarks/bench_portfolio.py`)",
        "",
        f"Machine: {machine()}. cpu = CPU seconds of the process and its SCIP child.",
        f"Command: `python benchmarks/bench_portfolio.py{' --quick' if a.quick else ''}{' --m7' if a.m7 else ''}`. "
        f"Date: {time.strftime('%Y-%m-%d')}. Every ratio compares two solves of this one run.",
        "",
    ]
    lines += pdp64(a.time_limit, a.quick) + [""]
    lines += lattice(a.quick, a.m7, a.lp_time_limit) + ["", LATTICE_BEFORE, ""]
    lines += dp_large(a.quick)
    lines += ["", f"Total benchmark time {time.perf_counter() - t0:.0f} s.", "", *TRIED]
    text = "\n".join(lines)
    print(text)
    if not a.no_write:
        write_section("portfolio", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
