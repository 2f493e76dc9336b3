"""Throughput of exact sampling and release from certified designs.

Usage::

    .venv/bin/python benchmarks/bench_release.py [--draws 10000000] [--repeats 5] [--no-write]

Times :meth:`CertifiedDesign.sample` and :meth:`CertifiedDesign.release` in
vectorised seeded mode (numpy ``Generator``; experiments only) and secure mode
(OS CSPRNG, the default), for a few designs, and writes the medians into
``benchmarks/RESULTS.md`` between ``<!-- release:start -->`` and
``<!-- release:end -->`` (the rest of the file is left alone; it is created if
missing). Targets (issue: deployable designs): seeded >= 1e7 draws/s, secure
>= 1e5 draws/s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

from optnoise import Neighborhood, NoiseDesign

sys.path.insert(0, str(Path(__file__).parent))
from _results import machine, write_section  # noqa: E402

SEEDED_TARGET, SECURE_TARGET = 1e7, 1e5


def designs():
    """(label, NoiseDesign) pairs: the paper's Fig. 10 instance, a larger scalar design, a vector design."""
    yield (
        "Fig. 10: n=8, BD3 directed, pdp-kadam, eps=1.5, delta=0.1238",
        NoiseDesign(n=8, eps=1.5, delta=0.1238, neighborhood=Neighborhood.bd(3, directed=True), privacy="pdp-kadam"),
    )
    yield (
        "n=1000, BD5, dp, eps=1, delta=0.05, MSE",
        NoiseDesign(n=1000, eps=1.0, delta=0.05, neighborhood=Neighborhood.bd(5), privacy="dp", metric="mse"),
    )
    yield (
        "d=2, n=16, shifts (1,0),(0,1), dp, eps=1, delta=0.01, ER",
        NoiseDesign(n=16, eps=1.0, delta=0.01, neighborhood=Neighborhood.shifts([(1, 0), (0, 1)]), privacy="dp"),
    )


def rate(fn, count: int, repeats: int) -> float:
    """Median draws per second over ``repeats`` timed calls (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return count / statistics.median(times)


def run(draws: int, repeats: int) -> list[dict]:
    rows = []
    for label, design in designs():
        t = time.perf_counter()
        res = design.solve()
        t_solve = time.perf_counter() - t
        t = time.perf_counter()
        cd = res.certify()
        t_cert = time.perf_counter() - t
        rng = np.random.default_rng(12345)
        q = np.zeros((draws,) + ((design.dim,) if design.dim > 1 else ()), dtype=np.int64)
        secure_n = max(draws // 10, 10_000)
        qs = q[:secure_n]
        rows.append(
            {
                "design": label,
                "solve_s": t_solve,
                "certify_s": t_cert,
                "repair": cd.repair["method"],
                "seeded_sample": rate(partial(cd.sample, draws, rng=rng), draws, repeats),
                "seeded_release": rate(partial(cd.release, q, rng=rng), draws, repeats),
                "secure_sample": rate(partial(cd.sample, secure_n), secure_n, repeats),
                "secure_release": rate(partial(cd.release, qs), secure_n, repeats),
                "draws": draws,
                "secure_draws": secure_n,
            }
        )
        print(
            f"{label}: seeded {rows[-1]['seeded_sample']:.3g}/s, secure {rows[-1]['secure_sample']:.3g}/s", flush=True
        )
    return rows


def section(rows: list[dict], command: str) -> str:
    lines = [
        "## Exact sampling and release (`benchmarks/bench_release.py`)",
        "",
        f"Machine: {machine()}  ",
        f"Command: `{command}`  ",
        f"Date: {time.strftime('%Y-%m-%d')}",
        "",
        "Median draws per second (integer draw below 2^62, then a cumulative-table lookup). "
        f"Targets: seeded >= {SEEDED_TARGET:.0e}/s, secure >= {SECURE_TARGET:.0e}/s. "
        "Seeded mode (numpy Generator) is for reproducible experiments only; secure mode "
        "(os.urandom, the default) is for deployment.",
        "",
        "| design | certify (s) | repair | seeded sample /s | seeded release /s "
        "| secure sample /s | secure release /s |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['design']} | {r['certify_s']:.3f} | {r['repair']} | {r['seeded_sample']:.3g} | "
            f"{r['seeded_release']:.3g} | {r['secure_sample']:.3g} | {r['secure_release']:.3g} |"
        )
    ok_seeded = all(r["seeded_sample"] >= SEEDED_TARGET for r in rows)
    ok_secure = all(r["secure_sample"] >= SECURE_TARGET for r in rows)
    lines += [
        "",
        f"Seeded sampling target met: {'yes' if ok_seeded else 'no'}; "
        f"secure sampling target met: {'yes' if ok_secure else 'no'}. "
        f"Draws per timing: {rows[0]['draws']:,} seeded, {rows[0]['secure_draws']:,} secure.",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, default=10_000_000, help="draws per seeded timing (secure: a tenth)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    a = ap.parse_args(argv)
    rows = run(a.draws, a.repeats)
    cmd = "python benchmarks/bench_release.py" + ("" if argv is None else " " + " ".join(argv or []))
    if argv is None and len(sys.argv) > 1:
        cmd = "python benchmarks/bench_release.py " + " ".join(sys.argv[1:])
    text = section(rows, cmd)
    print(text)
    if not a.no_write:
        write_section(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
