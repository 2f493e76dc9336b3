"""Optimal mechanisms without wrap-around: how much the general optimum gains over additive noise.

A count query with answers 0..n (n = 20), neighbours differing by 1 (both
directions), released error averaged over a uniform true answer. For every
eps, under pure eps-DP and under (eps, 1e-3)-DP:

* general optimum: the best mechanism over all matrices P[x, y]
  (``MechanismDesign``, loss "sq" for the MSE panels, "er" for the error rate);
* clamped additive optimum: the best noise on {-n..n} released as
  clip(q + eta, 0, n) (``NoiseDesign(..., release="clamp")``, metric "mse"/"er");
* modulo optimum: the best modulo noise (``NoiseDesign``, metric
  "circular-mse"/"er", +-1 shifts mod n+1), charged with the error of what it
  releases, q + eta (mod n+1) (``res.actual``);
* truncated geometric mechanism: clip(q + geometric noise, 0, n) with
  alpha = e^-eps (pure), or the least alpha with delta(eps) <= 1e-3;
* discrete Gaussian, clamped: the least sigma^2 with delta(eps) <= delta
  (for delta = 0 that is the sigma^2 whose clamped matrix is eps-DP).

Every design is solved with HiGHS and re-verified (``verify()``); the
baselines are calibrated with ``optnoise.mechanisms.baselines.calibrate``.
"""

import matplotlib.pyplot as plt
import numpy as np

from optnoise import MechanismDesign, Neighborhood, NoiseDesign
from optnoise.mechanisms.baselines import calibrate, discrete_gaussian, geometric
from optnoise.reproduce.compare import SOLVER
from optnoise.reproduce.figures import FigureScript

N = 20
DELTAS = (0.0, 1e-3)
NB = Neighborhood.bd(1)
# measure -> (general loss, clamped metric, modulo metric, key of res.actual)
MEASURES = {
    "mse": ("sq", "mse", "circular-mse", "mse_mean"),
    "er": ("er", "er", "er", "er"),
}
#: Top of the ratio panels: the gaps between the near-optimal mechanisms are a few percent.
RATIO_TOP = {"mse": 1.45, "er": 1.08}
MECHS = ("general", "clamp", "modulo", "geometric", "gaussian")
LABELS = {
    "general": "general optimum (any P[x, y])",
    "clamp": "clamped additive optimum",
    "modulo": "modulo optimum (released error)",
    "geometric": "truncated geometric",
    "gaussian": "discrete Gaussian, clamped",
}
STYLE = {
    "general": dict(color="k", lw=2.2, marker="o", ms=3.5),
    "clamp": dict(color="tab:blue", lw=1.6, ls="--", marker="s", ms=3),
    "modulo": dict(color="tab:red", lw=1.4, ls="-.", marker="^", ms=3),
    "geometric": dict(color="tab:green", lw=1.4, ls=":", marker="v", ms=3),
    "gaussian": dict(color="tab:purple", lw=1.4, ls=(0, (5, 2, 1, 2)), marker="d", ms=3),
}


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns (the
#: closed-form baselines, calibrated by a 48-step bisection to the last bit) are exact.
TOLERANCES = {
    "no_wraparound": {f"{m}_{e}": SOLVER for m in ("general", "clamp", "modulo") for e in ("mse", "er")},
}


def _verified(res):
    if res.status != "optimal" or not res.verify():
        raise RuntimeError(f"a design did not solve to a verified optimum: {res!r}")
    return res


def point(eps: float, delta: float) -> dict:
    """Every mechanism's released MSE and error rate at one (eps, delta)."""
    row: dict = {"eps": eps, "delta": delta}
    for measure, (loss, clamp_metric, modulo_metric, key) in MEASURES.items():
        general = _verified(MechanismDesign(n=N, eps=eps, delta=delta, loss=loss).solve(solver="highs"))
        clamp = _verified(
            NoiseDesign(
                n=N, eps=eps, delta=delta, neighborhood=NB, privacy="dp", metric=clamp_metric, release="clamp"
            ).solve(solver="highs")
        )
        modulo = _verified(
            NoiseDesign(n=N, eps=eps, delta=delta, neighborhood=NB, privacy="dp", metric=modulo_metric).solve(
                solver="highs"
            )
        )
        row[f"general_{measure}"] = general.loss
        row[f"clamp_{measure}"] = clamp.distortion
        row[f"modulo_{measure}"] = modulo.actual[key]
    alpha = np.exp(-eps) if delta == 0 else calibrate("geometric", N, eps, delta, notion="dp", variant="clamped")
    sigma2 = calibrate("gaussian", N, eps, delta, notion="dp", variant="clamped")
    for name, mech, param in (
        ("geometric", geometric(N, alpha, variant="clamped"), alpha),
        ("gaussian", discrete_gaussian(N, sigma2, variant="clamped"), sigma2),
    ):
        achieved = mech.delta(eps, notion="dp")
        if not achieved <= delta + 1e-12:
            raise RuntimeError(f"{name} at eps={eps} misses delta={delta}: {achieved}")
        row[f"{name}_mse"] = mech.mse(distance="linear")
        row[f"{name}_er"] = mech.error_rate()
        row["alpha" if name == "geometric" else "sigma2"] = param
    return row


def main(argv=None) -> int:
    fs = FigureScript("beyond", "no_wraparound", argv, description=__doc__)
    grid = fs.grid(full=np.round(np.arange(0.2, 3.01, 0.2), 10), fast=np.array([0.5, 1.5]))
    rows = [point(float(e), d) for d in DELTAS for e in grid]
    fig, axes = plt.subplots(2, 4, figsize=(18, 8), sharex=True)
    for i, delta in enumerate(DELTAS):
        sub = [r for r in rows if r["delta"] == delta]
        eps = [r["eps"] for r in sub]
        regime = r"pure $\varepsilon$-DP" if delta == 0 else rf"$(\varepsilon, {delta:g})$-DP"
        for j, (measure, title) in enumerate((("mse", "released MSE"), ("er", "error rate"))):
            ax, rax = axes[i, 2 * j], axes[i, 2 * j + 1]
            base = np.array([r[f"general_{measure}"] for r in sub])
            top = RATIO_TOP[measure]
            off = []
            for m in MECHS:
                vals = np.array([r[f"{m}_{measure}"] for r in sub])
                ax.plot(eps, vals, label=LABELS[m], **STYLE[m])
                ratio = vals / base
                if ratio.max() > top:  # far above: named in the panel instead of squashing the small gaps
                    off.append(rf"{LABELS[m]}: $\times${ratio.min():.3g} to $\times${ratio.max():.3g}")
                else:
                    rax.plot(eps, ratio, **STYLE[m])
            ax.set_yscale("log")
            rax.set_ylim(0.99, top)
            if off:
                rax.text(
                    0.97,
                    0.97,
                    "off scale:\n" + "\n".join(off),
                    transform=rax.transAxes,
                    ha="right",
                    va="top",
                    fontsize=8,
                    bbox=dict(facecolor="white", alpha=0.85, edgecolor="0.8"),
                )
            ax.set_title(f"{title}, {regime}", fontsize=10)
            rax.set_title(f"{title} / general optimum, {regime}", fontsize=10)
            ax.set_ylabel(f"{title} (uniform answer)")
            rax.set_ylabel("ratio to the general optimum")
            for a_ in (ax, rax):
                a_.grid(alpha=0.3, which="both")
                if i == 1:
                    a_.set_xlabel(r"$\varepsilon$")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, frameon=False, bbox_to_anchor=(0.5, -0.01))
    fig.suptitle(rf"Count query $0..{N}$, neighbours $\pm 1$: the optimum over all mechanisms against additive noise")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    table = {k: [r[k] for r in rows] for k in rows[0]}
    fs.save(fig, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
