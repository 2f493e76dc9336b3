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
import math
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
            f"({best['label']}): {'met' if met else 'NOT met'}."
            + "".join(
                f" On the integers {r['eps']:.6f}: {'at most' if r['eps'] <= RING else 'above'} {RING}." for r in z
            )
            + " Rows run in parallel on a loaded machine (times are wall times there).",
        ]
    lines += _why(rows, real)
    lines += [
        "",
        "The bound on the reals holds over every density (the cell masses of any density meet the integer "
        "constraints; each cell charged its least cost), on the integers over every noise on Z; both are the "
        "trade-off bounds of the release wrapped onto a ring, so they are loose (gap 15-20%).",
    ]
    return "\n".join(lines)


def _why(rows: list[dict], real: dict) -> list[str]:
    """Why the reals stop where they do, from the rows: their eps against m, the integers' eps, the baselines."""
    best: dict[int, float] = {}
    for r in rows:
        if r["part"] != "z":
            m = int(r["part"][1:])
            best[m] = min(best.get(m, math.inf), float(r["eps"]))
    z = [r for r in rows if r["part"] == "z"]
    ms = sorted(best)
    if len(ms) < 3 or not z:
        return []
    trend = ", ".join(f"{best[m]:.5f} at m = {m}" for m in ms)
    gains = [best[a] - best[b] for a, b in zip(ms, ms[1:], strict=False)]
    ratio = gains[-2] / gains[-1] if gains[-1] > 0 else math.inf
    # a gain shrinking by `ratio` per halving leaves gains[-1] / (ratio - 1) to come
    limit = best[ms[-1]] - gains[-1] / (ratio - 1) if ratio > 1 else best[ms[-1]]
    b = z[0]["baselines"]
    top = min(best.values())
    return [
        "",
        f"How far and why. Every row's search is polished (`design/composed_polish.py`) and the `w` rows start "
        f"each finer resolution from the coarser design refined (`design/continuous_warm.py`). On the reals: "
        f"{trend}; the last two halvings of the cell width gained {gains[-2]:.2e} then {gains[-1]:.2e} "
        f"(ratio {ratio:.1f}); continued geometrically the reals approach {limit:.5f}, "
        f"{'above' if limit > z[0]['eps'] else 'below'} the integers' {z[0]['eps']:.5f} and "
        f"{'above' if limit > PUBLISHED['ours (Gilani et al.)'] else 'below'} 2.66. The integer problem is "
        "easier at equal variance: an integer query "
        f"needs only the shift 1 and lattice noise pays no within-cell spread, and the baselines show the same "
        f"(discrete Laplace {b['discrete_laplace']:.4f} against the Laplace {real['laplace']:.4f}, discrete "
        f"Gaussian {b['discrete_gaussian']:.4f} against {real['gaussian']:.4f}). No proof bounds the reals below "
        "by the integers (the proven bounds are far lower): this is measured. Gilani et al. give two decimals, "
        f"and their Laplace and Gaussian (2.83, 2.92) agree with ours ({real['laplace']:.4f}, "
        f"{real['gaussian']:.4f}) to those two only: the best on the reals, {top:.5f}, rounds to their "
        f"{PUBLISHED['ours (Gilani et al.)']} but is {top - PUBLISHED['ours (Gilani et al.)']:.5f} above 2.66000.",
    ]


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
