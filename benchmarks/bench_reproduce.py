"""Cold and warm ``make reproduce``: every figure twice, with an empty cache and then with the cache it left.

``make reproduce`` runs ``optnoise figures all --jobs 2``. This script runs the same command
into a fresh temporary folder (``--out``; the solve cache then lives beside it, so the
repository's own ``.optnoise-cache`` is neither used nor touched), first cold, then warm into
the same folder, and checks that every output still holds the bytes of the cold run. Writes the ``reproduce`` section
of ``benchmarks/RESULTS.md``.

Usage::

    python benchmarks/bench_reproduce.py            # two full reproductions (about 5 min on 2 idle cores)
    python benchmarks/bench_reproduce.py --fast     # the --fast grids, smoke run
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import machine, write_section  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: The same measurement before scripts could be skipped (every script re-run, solves read from the cache).
SOLVE_CACHE_ONLY = (
    "With the solve caches alone (every script re-run, every solve read from the cache; this script before "
    "up-to-date scripts were skipped, 2026-11-23, load average 12-14): cold 1720 s wall / 268 s CPU, warm 545 s "
    "wall / 110 s CPU, 3.2x (2.4x in CPU time). Warm time then went into computations that are not solves "
    "(baseline calibration in kadam2024/fig5: 187 s; exact PF/EM error curves on DPBench in pf2020/fig3, fig5, "
    "fig6: 50-119 s each) and into drawing; pf2020/fig2a went from 1251 s to 15 s and fig2bc from 371 s to 13 s."
)


def reproduce(out: Path, jobs: int, fast: bool) -> tuple[float, float, dict[str, float]]:
    """Run every figure script once; wall seconds, CPU seconds of the run, seconds per script."""
    cmd = [sys.executable, "-m", "optnoise.cli", "figures", "all", "--jobs", str(jobs), "--out", str(out)]
    if fast:
        cmd.append("--fast")
    c0 = os.times()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    c1 = os.times()
    if proc.returncode != 0:
        raise SystemExit(f"reproduction failed:\n{proc.stdout}\n{proc.stderr[-4000:]}")
    per = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "ok":
            per[parts[1]] = float(parts[2].rstrip("s"))
    return wall, (c1.children_user + c1.children_system) - (c0.children_user + c0.children_system), per


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fast", action="store_true", help="the scripts' --fast grids")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2, as make reproduce)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="optnoise-reproduce-") as tmp:
        out = Path(tmp) / "figures"
        cold, cold_cpu, per_cold = reproduce(out, a.jobs, a.fast)
        files = sorted(p for p in out.rglob("*") if p.is_file() and ".optnoise-cache" not in p.parts)
        before = {f: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
        # The same command again, as a second `make reproduce`: same output folder, the cache the first run left.
        warm, warm_cpu, per_warm = reproduce(out, a.jobs, a.fast)
        differ = [str(f.relative_to(out)) for f in files if hashlib.sha256(f.read_bytes()).hexdigest() != before[f]]
        entries = sum(1 for _ in (out / ".optnoise-cache").rglob("*.json"))
    slow = sorted(per_cold, key=per_cold.get, reverse=True)[:6]
    lines = [
        "## Cold and warm reproduction (`benchmarks/bench_reproduce.py`)",
        "",
        f"Machine: {machine()}.",
        f"Command: `python benchmarks/bench_reproduce.py{' --fast' if a.fast else ''}` "
        f"(`optnoise figures all --jobs {a.jobs}`, as `make reproduce`, twice: empty cache, then the cache the "
        f"first run left). Date: {time.strftime('%Y-%m-%d')}. The warm run skips every script whose "
        "outputs are up to date (same script, paper helpers, optnoise sources, data, arguments and package "
        "versions, and the outputs still hold the recorded bytes); `optnoise figures all --force` re-runs them, "
        "reading every solve from the cache.",
        "",
        "| run | wall s | CPU s (workers) |",
        "| --- | --- | --- |",
        f"| cold | {cold:.1f} | {cold_cpu:.1f} |",
        f"| warm | {warm:.1f} | {warm_cpu:.1f} |",
        "",
        f"Warm is {cold / warm:.1f}x faster than cold in wall time ({cold_cpu / max(warm_cpu, 1e-9):.1f}x in CPU "
        f"time); target 10x. {len(files)} files written, "
        + (
            "all byte-identical between the two runs"
            if not differ
            else f"{len(differ)} differ: {', '.join(differ[:8])}"
        )
        + f"; {entries} cached solves.",
        "",
        "Slowest scripts cold -> warm (seconds inside the worker, an up-to-date check when skipped): "
        + "; ".join(f"{s} {per_cold[s]:.1f} -> {per_warm.get(s, float('nan')):.1f}" for s in slow)
        + ".",
    ]
    lines += ["", SOLVE_CACHE_ONLY]
    text = "\n".join(lines)
    print(text)
    if not a.no_write:
        write_section("reproduce", text)
    return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())
