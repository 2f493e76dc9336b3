"""Composition on the integers and on the reals (issues 30 and 31): Gilani et al.'s setting; writes RESULTS.md.

Gilani et al. ("Optimizing noise distributions for differential privacy", ICML 2025) design continuous noise
for k-fold composition: at variance 25, sensitivity 1, k = 10, delta = 1e-6 they report eps = 2.66 against
2.83 (Laplace) and 2.92 (Gaussian). Here, the least composed eps under ``max_distortion = 25`` (MSE):

* ``release="additive"`` (a count on Z, ``bd(1)``);
* ``release="continuous"`` at ``m`` cells per unit of sensitivity (a mechanism on the reals, with the proven
  eps bound over every density, :mod:`optnoise.design.continuous_composed`);

beside the Gaussian and the Laplace of variance 25 composed k times (exact for the Gaussian, dp-accounting
for the Laplace: :func:`optnoise.mechanisms.real_baselines.composed_real_baselines`) and the discrete
Laplace/Gaussian of the integer design's own candidates.

Usage::

    python benchmarks/bench_gilani.py              # k = 10: Z, the reals at m = 1, 2, 4, then 8, 16 warm-started
    python benchmarks/bench_gilani.py --only c2 --json a.json   # one row into a file (run rows in parallel)
    python benchmarks/bench_gilani.py --merge a.json b.json     # write the section from such files
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from optnoise import Neighborhood, NoiseDesign
from optnoise.design.continuous_warm import resolution_chain, solve_refined
from optnoise.mechanisms.real_baselines import composed_real_baselines

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import fmt_row, machine, write_section  # noqa: E402

DELTA, CAP = 1e-6, 25.0
#: Gilani et al.'s published numbers (ICML 2025) and the modulo ring design's (benchmarks, "composed" section).
PUBLISHED = {"ours (Gilani et al.)": 2.66, "Laplace": 2.83, "Gaussian": 2.92}
RING = 2.6625


def run(part: str, k: int) -> dict:
    common = dict(privacy="composed", compositions=k, delta=DELTA, objective="epsilon", max_distortion=CAP)
    if part == "z":
        d = NoiseDesign(release="additive", neighborhood=Neighborhood.bd(1), metric="mse", **common)
        label = "integers (additive, bd(1))"
    else:
        m = int(part[1:])
        d = NoiseDesign(release="continuous", sensitivity=1.0, resolution=1.0 / m, metric="mse", **common)
        label = f"reals (continuous, m = {m})"
        if part.startswith("w"):
            label += f", warm-started from m = {', '.join(map(str, resolution_chain(m)[:-1]))}"
    t = time.perf_counter()
    res = solve_refined(d) if part.startswith("w") else d.solve()
    row = {
        "part": part,
        "label": label,
        "k": k,
        "eps": res.achieved.get("composed_eps"),
        "bound": res.bound,
        "mse": res.distortion,
        "status": res.status,
        "verified": bool(res.verify()),
        "time": time.perf_counter() - t,
        "baselines": dict(res.baselines),
    }
    print(json.dumps(row), flush=True)
    return row


def section(rows: list[dict]) -> str:
    k = rows[0]["k"]
    real = composed_real_baselines(compositions=k, delta=DELTA, metric="mse", max_distortion=CAP)
    lines = [
        "## Composition on the integers and the reals: Gilani et al.'s setting (`benchmarks/bench_gilani.py`)",
        "",
        machine(),
        "",
        f"Least composed eps at delta = {DELTA:g} under MSE <= {CAP:g} (variance 25), sensitivity 1, k = {k}. "
        "Baselines of variance 25 composed k times: the Gaussian exactly (one Gaussian at sensitivity sqrt(k)), "
        "the Laplace by dp-accounting (pessimistic, h = 1e-4); the discrete ones are the integer design's "
        "calibrated candidates. Published (Gilani et al., ICML 2025): "
        + ", ".join(f"{n} {v}" for n, v in PUBLISHED.items())
        + f"; the modulo ring design (n = 140, section above): {RING}.",
        "",
        fmt_row(["design", "eps (ours)", "proven eps bound", "MSE", "status", "time [s]", "Laplace", "Gaussian"]),
        fmt_row(["---"] * 8),
    ]
    for r in rows:
        lines.append(
            fmt_row(
                [
                    r["label"],
                    f"**{r['eps']:.5f}**",
                    "none" if r["bound"] is None else f"{r['bound']:.4f}",
                    f"{r['mse']:.4f}",
                    r["status"] + ("" if r["verified"] else " (NOT verified)"),
                    f"{r['time']:.0f}",
                    f"{real['laplace']:.4f}",
                    f"{real['gaussian']:.4f}",
                ]
            )
        )
    z = [r for r in rows if r["part"] == "z"]
    if z:
        b = z[0]["baselines"]
        lines += [
            "",
            f"Integer baselines (eps at the cap, same accounting): discrete Laplace {b['discrete_laplace']:.4f}, "
            f"discrete Gaussian {b['discrete_gaussian']:.4f}, best convolution {b['convolution']:.4f}.",
        ]
    best = min((r for r in rows if r["part"] != "z"), key=lambda r: r["eps"], default=None)
    if best is not None:
        met = best["eps"] <= PUBLISHED["ours (Gilani et al.)"] and best["eps"] <= RING
        lines += [
            "",
            f"Target (issue 31: eps on the reals <= 2.66 and <= {RING}): best on the reals {best['eps']:.5f} "
            f"({best['label']}): {'met' if met else 'NOT met'}. Rows run in parallel on a loaded machine "
            "(times are wall times there).",
        ]
    lines += [
        "",
        "The bound on the reals holds over every density (the cell masses of any density meet the integer "
        "constraints; each cell charged its least cost), on the integers over every noise on Z; both are the "
        "trade-off bounds of the release wrapped onto a ring, so they are loose (gap 15-20%).",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument(
        "--only",
        default=None,
        help="one part: z, c1, c2, ... (c<m>: the reals at m cells; w<m>: the same warm-started from m/4, m/2)",
    )
    ap.add_argument("--json", default=None, help="with --only: write the row to this file")
    ap.add_argument("--merge", nargs="*", default=None, help="rows' JSON files: write the section from them")
    a = ap.parse_args()
    if a.merge:
        rows = [json.loads(Path(p).read_text()) for p in a.merge]
    elif a.only:
        row = run(a.only, a.k)
        if a.json:
            Path(a.json).write_text(json.dumps(row))
        return
    else:
        rows = [run(p, a.k) for p in ("z", "c1", "c2", "c4", "w8", "w16")]
    order = {"z": 0, "c": 1, "w": 2}
    rows = sorted(rows, key=lambda r: (order[r["part"][0]], int(r["part"][1:] or 0)))
    write_section("gilani", section(rows))


if __name__ == "__main__":
    main()
