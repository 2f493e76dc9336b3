"""Time the optimal-regular-mechanism LP of permute-and-flip ([PF] Theorem 3, Fig. 2).

For each (m candidates, lattice depth k) the LP of
:func:`optnoise.mechanisms.lattice.solve_lattice_lp` is built and solved with HiGHS
through the project's solver layer, with the monotonicity rows added lazily
(default) and, for comparison, the paper's LP (no monotonicity rows). The
lattice bound is ``B = 2 k Delta`` (k + 1 score levels).

Writes its own section of ``benchmarks/RESULTS.md`` between the markers
``<!-- pf_lp:start -->`` and ``<!-- pf_lp:end -->`` (creating the file if
missing, leaving other sections alone).

Usage::

    .venv/bin/python benchmarks/bench_pf_lp.py            # full grid (tens of minutes)
    .venv/bin/python benchmarks/bench_pf_lp.py --quick    # small sizes (seconds)
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from optnoise.mechanisms.lattice import solve_lattice_lp
from optnoise.mechanisms.selection import GOLDEN_EPS

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import machine, write_section  # noqa: E402

FULL_SIZES = [(3, 4), (4, 8), (5, 8), (6, 8), (4, 16), (5, 12), (7, 8), (6, 12)]
QUICK_SIZES = [(3, 4), (4, 8), (5, 8)]
EPS = (0.1, 0.5, 1.0)


def run(sizes, eps_list, time_limit):
    rows = []
    for m, k in sizes:
        for eps in eps_list:
            rec = {"m": m, "k": k, "B": 2 * k, "levels": k + 1, "eps": eps}
            t0 = time.perf_counter()
            sol = solve_lattice_lp(m, k, eps, time_limit=time_limit)
            rec.update(
                classes=sol.lp.n_classes,
                vars=sol.lp.n_vars,
                rows=sol.lp.model.shape[0],
                all_mono=int(sol.lp.monotone_pairs[0].size),
                rounds=sol.rounds,
                status=sol.status,
                build=sol.lp.build_time,
                solve=sol.solve_time,
                wall=time.perf_counter() - t0,
                pf=sol.pf_ratio,
                em=sol.em_ratio,
            )
            t0 = time.perf_counter()
            paper = solve_lattice_lp(m, k, eps, monotone=False, weighting="box", time_limit=time_limit)
            rec.update(
                paper_solve=paper.solve_time,
                paper_status=paper.status,
                paper_pf=paper.pf_ratio,
                paper_em=paper.em_ratio,
            )
            rows.append(rec)
            print(
                f"m={m} k={k} eps={eps}: {rec['vars']} vars, {rec['rows']} rows, {rec['rounds']} rounds, "
                f"{rec['status']} in {rec['solve']:.2f}s; PF {rec['pf']:.5f} EM {rec['em']:.4f} | "
                f"paper LP {paper.status} {paper.solve_time:.2f}s PF {paper.pf_ratio:.5f}",
                flush=True,
            )
    return rows


def fmt(x, nd=5):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def section(rows, cmd, quick):
    lines = [
        "## Permute-and-flip: optimal regular mechanism LP (Theorem 3, Fig. 2)",
        "",
        f"Machine: {machine()}. Solver: HiGHS via `optnoise.engine.solve.solve_model`.",
        f"Command: `{cmd}`{' (quick grid)' if quick else ''}. Date: {time.strftime('%Y-%m-%d')}.",
        "",
        "One LP variable per symmetry class (sorted scores, level of the candidate); only the worst-neighbour",
        "privacy rows of Prop. 2; monotonicity rows (Definition 3) added lazily as cuts, `rounds` = solves needed.",
        "`rows` is the final model; `mono` is how many monotonicity rows exist in total. Ratios are",
        "E[err(M)] / E[err(OPT)] averaged over the lattice (each vector with max 0 once).",
        "`paper LP` = the LP as printed (no monotonicity rows) with the notebook's box weighting.",
        f"PF is provably optimal for eps >= ln((3+sqrt5)/2) = {GOLDEN_EPS:.4f}.",
        "",
        "| m | k | bound B | levels | eps | classes | vars | rows | mono | rounds | build s | solve s | status "
        "| PF ratio | EM ratio | paper LP solve s | paper PF ratio |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['m']} | {r['k']} | {r['B']} | {r['levels']} | {r['eps']} | {r['classes']} | {r['vars']} | "
            f"{r['rows']} | {r['all_mono']} | {r['rounds']} | {r['build']:.2f} | {r['solve']:.2f} | {r['status']} | "
            f"{fmt(r['pf'])} | {fmt(r['em'], 4)} | {r['paper_solve']:.2f} | {fmt(r['paper_pf'])} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    ap.add_argument("--time-limit", type=float, default=600.0, help="seconds per LP solve")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "RESULTS.md"))
    args = ap.parse_args(argv)
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    rows = run(sizes, EPS, args.time_limit)
    cmd = ".venv/bin/python benchmarks/bench_pf_lp.py" + (" --quick" if args.quick else "")
    write_section("pf_lp", section(rows, cmd, args.quick), Path(args.out))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
