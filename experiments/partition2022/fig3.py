"""Fig. 3 of Desfontaines et al. (PoPETs 2022): 5th/50th/95th percentile n against delta.

delta from 1e-12 to 1e-4 (log axis); left eps = 0.1, right eps = 1. Same
percentile convention as fig2 for both mechanisms (the real n where the
release probability is q; for pi_opt Theorem 1's closed form at real n).
"""

import matplotlib.pyplot as plt
import numpy as np

from optnoise.mechanisms.partition import selection_percentile
from optnoise.reproduce.figures import FigureScript

QS = (0.05, 0.5, 0.95)
PCT = {0.05: "5%", 0.5: "median", 0.95: "95%"}
#: Colour and marker per mechanism, line style per percentile. In the left panel pi_opt's median and
#: 95th percentile lie within 1 user of Laplace's 5th percentile and median: Laplace is drawn as wide
#: pale lines underneath, pi_opt as thin lines on top, and the two carry markers at staggered points,
#: so every curve shows where they coincide.
_LS = {0.05: "--", 0.5: "-", 0.95: ":"}
STYLE = {
    **{
        ("laplace", q): {"color": "C1", "ls": _LS[q], "lw": 4.0, "alpha": 0.55, "marker": "s", "ms": 6, "zorder": 2}
        for q in QS
    },
    **{("opt", q): {"color": "C0", "ls": _LS[q], "lw": 1.5, "marker": "o", "ms": 3.5, "zorder": 3} for q in QS},
}


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`): every column exact
#: (closed forms and Brent roots to 1e-13).
TOLERANCES: dict = {"fig3": {}}


def _markevery(n: int, method: str):
    """Markers on every 8th point, pi_opt's shifted by 4 from Laplace's (every point on the --fast grid)."""
    return (0 if method == "laplace" else 4, 8) if n > 8 else None


def _overlaps(curves: dict, rtol: float = 0.005) -> list[str]:
    """Pairs (pi_opt percentile, Laplace percentile) that coincide at the plot's scale: within ``rtol``
    of the panel's largest n at every plotted delta."""
    top = max(float(np.max(y)) for y in curves.values())
    out = []
    for qo in QS:
        for ql in QS:
            gap = np.max(np.abs(curves["opt", qo] - curves["laplace", ql]))
            if gap < rtol * top:
                out.append(
                    rf"$\pi_{{\mathrm{{opt}}}}$ {PCT[qo]} coincides with $\pi_{{\mathrm{{Lap}}}}$ {PCT[ql]} "
                    f"(max gap {gap:.2f} users)"
                )
    return out


def main(argv=None) -> int:
    fs = FigureScript("partition2022", "fig3", argv, description=__doc__)
    deltas = np.geomspace(1e-12, 1e-4, fs.grid(full=41, fast=4))
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    rows = []
    for ax, eps in zip(axes, (0.1, 1.0), strict=False):
        curves = {}
        for method, name in (("opt", r"$\pi_{\mathrm{opt}}$"), ("laplace", r"$\pi_{\mathrm{Lap}}$")):
            for q in QS:
                y = np.array([selection_percentile(q, eps, d, method=method) for d in deltas])
                curves[method, q] = y
                ax.plot(
                    deltas, y, label=f"{name}, {PCT[q]}", markevery=_markevery(len(deltas), method), **STYLE[method, q]
                )
                rows += [
                    {"eps": eps, "delta": float(d), "method": method, "q": q, "n": float(v)}
                    for d, v in zip(deltas, y, strict=True)
                ]
        ax.set_xscale("log")
        ax.set_ylim(0, None)  # the paper's y axes start at 0 (ticks 0-300 and 0-30)
        ax.set_xlabel(r"$\delta$")
        ax.set_ylabel(r"$n$ s.t. $\mathbb{P}[\rho(n)=\mathrm{keep}]=0.05, 0.5, 0.95$")
        ax.set_title(rf"$\varepsilon={eps:g}$")
        ax.grid(alpha=0.3, which="both")
        ax.legend(ncol=2, fontsize=7.5, loc="upper right")
        notes = _overlaps(curves)
        if notes:
            ax.text(
                0.02,
                0.03,
                "\n".join(notes),
                transform=ax.transAxes,
                ha="left",
                va="bottom",
                fontsize=7.5,
                bbox={"boxstyle": "round", "fc": "white", "ec": "0.7", "alpha": 0.9},
            )
    fig.tight_layout()
    fs.save(fig, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
