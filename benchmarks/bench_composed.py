"""Composition-targeted design against the usual noises, side by side in one run.

For a +-1 count query released modulo a wide ring with the circular MSE, the per-release
MSE whose k-fold composition is (1, 1e-5)-DP, at k in {1, 2, 5, 10, 20, 50, 100}, for

* the discrete Gaussian, the discrete Laplace and the best Laplace + Gaussian convolution
  (the Laplace share of the variance optimised per k by golden section over [0, 1], both ends
  included), each calibrated by bisection on its scale with the same accounting as the
  design: optnoise's ``compose_pairs`` at discretisation h;
* ``NoiseDesign(privacy="composed", compositions=k, discretization=h)`` (k = 1: the LP).

Both h = 1e-4 (optnoise's default) and h = 1e-3 (the accounting behind the issue's numbers)
are run. Also: the dual form (least composed eps at variance 25, k = 10, delta = 1e-6) and the
speed target (k = 100 at sigma ~ 40). Writes the section ``composed`` of benchmarks/RESULTS.md.

Usage::

    python benchmarks/bench_composed.py            # full (about 10 min on 2 cores)
    python benchmarks/bench_composed.py --quick    # k in {1, 10}, h = 1e-4 only
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from optnoise import Neighborhood, NoiseDesign
from optnoise.design.composed_families import Support, calibrate_family, family_within, gaussian_guess, golden_share
from optnoise.design.metrics import cost_vector
from optnoise.privacy import accounting

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import fmt_row, machine, write_section  # noqa: E402

NB = Neighborhood.bd(1)
EPS, DELTA = 1.0, 1e-5
KS = (1, 2, 5, 10, 20, 50, 100)
#: What the measured tables say (kept with the script so that a re-run keeps it).
READING = """\
Reading. The issue's 0.92 x DG target at k = 10 is not met: 129.30 = 0.929 x DG at h = 1e-4 and at h = 1e-3.
optnoise's connect-the-dots accounting evaluates the privacy profile exactly on the grid, so h = 1e-3 costs almost
nothing here (DG 139.173 vs 139.176); the issue's DG = 140.45 comes from dp-accounting's
`from_two_probability_mass_functions`, which rounds every loss up by up to h (about k h / 2 in eps). Against that
number the design is 129.30 / 140.45 = 0.9206. The colleague's prototype design, calibrated by this accounting,
also gives 129.30: the same optimum from several starts. The composed design is never above the best calibrated
baseline (ratio <= 0.9999 at every k), and k = 1 is the LP optimum. The lower bounds (the k = 1 LP, and the sum
statistic (LP_k - 1/4) / k) are valid but loose. Wall times were measured with other jobs on the 2 cores (load 4),
before the search ran both of its starts whenever the time budget allows (2026-11-25, for reproducibility);
re-measured since on an idle machine: the k = 10 design at n = 170 takes 18 s, and the k = 100 speed target 32.1 s
(MSE 1555.98, search stopped at its evaluation limit)."""


def ring(k: int, eps: float = EPS, delta: float = DELTA) -> int:
    """n with a ring half-width of 12 continuous-Gaussian sigmas (at least 40): wrap-around negligible."""
    s = math.sqrt(gaussian_guess(k, eps, delta, 1.0))
    return 2 * max(40, math.ceil(12 * s))


def baseline(kind: str, n: int, k: int, h: float, w: float = 0.5, rtol: float = 1e-7, start: float | None = None):
    """(MSE, variance parameter) of a family member calibrated by bisection with the accounting at h."""
    sup = Support(n, (n + 1,), "modulo")
    got = calibrate_family(kind, sup, k, EPS, DELTA, w=w, discretization=h, rtol=rtol, start=start)
    assert got is not None
    return float(cost_vector("circular-mse", n) @ got[0]), got[1]


def best_convolution(n: int, k: int, h: float):
    """Golden section over the Laplace share w in [0, 1] (ends included), coarse, then the best w to 1e-7."""
    start = [None]

    def at(w: float) -> float:
        m, V = baseline("convolution", n, k, h, w, rtol=1e-5, start=start[0])
        start[0] = V
        return m

    _, w = golden_share(at)
    return baseline("convolution", n, k, h, w)[0], w


def run_k(k: int, h: float) -> dict:
    n = ring(k)
    t = time.perf_counter()
    dg = baseline("gaussian", n, k, h)[0]
    lap = baseline("laplace", n, k, h)[0]
    conv, w = best_convolution(n, k, h)
    t_base = time.perf_counter() - t
    d = NoiseDesign(
        n=n,
        eps=EPS,
        delta=DELTA,
        neighborhood=NB,
        metric="circular-mse",
        privacy="composed",
        compositions=k,
        discretization=h,
    )
    t = time.perf_counter()
    res = d.solve()
    t_ours = time.perf_counter() - t
    comp = res.compose(k, discretization=h)
    return {
        "k": k,
        "n": n,
        "dg": dg,
        "lap": lap,
        "conv": conv,
        "w": w,
        "ours": res.distortion,
        "status": res.status,
        "bound": res.bound,
        "eps": comp.epsilon(DELTA),
        "delta": comp.delta(EPS),
        "t_ours": t_ours,
        "t_base": t_base,
        "path": "LP" if k == 1 else res.message.split(",")[1].strip().split(" ")[0],
    }


def dual(h: float) -> dict:
    k, delta, cap = 10, 1e-6, 25.0
    n = 2 * 70
    sup = Support(n, (n + 1,), "modulo")

    cost = cost_vector("circular-mse", n)

    def at_cap(kind: str, w: float = 0.5) -> float:
        f = family_within(kind, sup, cost, cap, w=w)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return accounting.compose(f, [1, -1], k, discretization=h, warn=False).epsilon(delta)

    ws = np.linspace(0, 1, 21)
    conv = [at_cap("convolution", float(w)) for w in ws]
    d = NoiseDesign(
        n=n,
        delta=delta,
        neighborhood=NB,
        metric="circular-mse",
        privacy="composed",
        compositions=k,
        objective="epsilon",
        max_distortion=cap,
        discretization=h,
    )
    t = time.perf_counter()
    res = d.solve()
    return {
        "h": h,
        "dg": at_cap("gaussian"),
        "lap": at_cap("laplace"),
        "conv": min(conv),
        "w": float(ws[int(np.argmin(conv))]),
        "ours": res.eps_objective,
        "mse": res.distortion,
        "bound": res.bound,
        "t": time.perf_counter() - t,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args(argv)
    ks = (1, 10) if a.quick else KS
    hs = (1e-4,) if a.quick else (1e-4, 1e-3)
    lines = [
        "## Composition-targeted design (`benchmarks/bench_composed.py`)",
        "",
        f"Machine: {machine()}.",
        f"Command: `python benchmarks/bench_composed.py{' --quick' if a.quick else ''}`.",
        "Problem: +-1 count query, modulo release on a ring of half-width 12 sigma (circular MSE), k-fold "
        f"composition to (eps, delta) = ({EPS:g}, {DELTA:g}). Every column is calibrated by optnoise's accounting "
        "(`compose_pairs`, connect-the-dots PLD) at the same h; best L+G = the Laplace + Gaussian convolution with "
        "the Laplace share w of the variance optimised per k. 'ours' is `NoiseDesign(privacy=\"composed\")` "
        "(k = 1: the LP, status optimal; otherwise status feasible with the proven lower bound). Times: the "
        "design's `solve()` (2 cores shared), and the three baselines' calibrations together.",
        "",
        READING,
        "",
    ]
    for h in hs:
        lines += [
            f"### h = {h:g}",
            "",
            fmt_row(
                [
                    "k",
                    "n",
                    "DG",
                    "DLap",
                    "best L+G (w)",
                    "ours",
                    "ours / DG",
                    "ours / best baseline",
                    "lower bound",
                    "composed eps (ours)",
                    "path",
                    "time ours [s]",
                    "time baselines [s]",
                ]
            ),
            fmt_row(["---"] * 13),
        ]
        for k in ks:
            r = run_k(k, h)
            best = min(r["dg"], r["lap"], r["conv"])
            row = [
                k,
                r["n"],
                f"{r['dg']:.3f}",
                f"{r['lap']:.3f}",
                f"{r['conv']:.3f} ({r['w']:.2f})",
                f"**{r['ours']:.3f}**",
                f"{r['ours'] / r['dg']:.4f}",
                f"{r['ours'] / best:.4f}",
                f"{r['bound']:.3f}" if r["bound"] is not None else "-",
                f"{r['eps']:.6f}",
                r["path"],
                f"{r['t_ours']:.1f}",
                f"{r['t_base']:.1f}",
            ]
            print(fmt_row(row), flush=True)
            lines.append(fmt_row(row))
        lines.append("")
    lines += [
        "### Dual form: least composed eps at variance 25 (k = 10, delta = 1e-6, ring n = 140)",
        "",
        fmt_row(["h", "DG", "DLap", "best L+G (w)", "ours (MSE)", "lower bound", "time ours [s]"]),
        fmt_row(["---"] * 7),
    ]
    for h in hs:
        r = dual(h)
        row = [
            f"{h:g}",
            f"{r['dg']:.4f}",
            f"{r['lap']:.4f}",
            f"{r['conv']:.4f} ({r['w']:.2f})",
            f"**{r['ours']:.4f}** ({r['mse']:.4f})",
            f"{r['bound']:.4f}" if r["bound"] is not None else "-",
            f"{r['t']:.1f}",
        ]
        print(fmt_row(row), flush=True)
        lines.append(fmt_row(row))
    if not a.quick:
        n = 2 * 9 * 40
        d = NoiseDesign(
            n=n, eps=0.94, delta=DELTA, neighborhood=NB, metric="circular-mse", privacy="composed", compositions=100
        )
        t = time.perf_counter()
        res = d.solve()
        sec = time.perf_counter() - t
        lines += [
            "",
            f"Speed target (k = 100, eps = 0.94, so the calibrated Gaussian has sigma ~ 40; n = {n}): "
            f"{sec:.1f} s (target 60 s), MSE {res.distortion:.2f}, status {res.status}.",
        ]
        print(lines[-1], flush=True)
    if not a.no_write:
        write_section("composed", "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
