"""Fig. 3 of Kadam et al. (2024): the BD optimum is a staircase, (a) in a flat and (b) in a linear region.

The paper's Fig. 3 is a sketch without parameters. We draw n = 11,
mu_bar = 5 (b = 2, r = 1, so b + r < mu_bar as Theorem 3 needs), eps = 1,
where the regions are flat 0 for delta <= 0.1032, linear up to 0.1057,
flat 1 up to 0.2873, then f(0) = delta.

(a) delta = 0.2, flat region k = 1 ((h, j) = (1, 1)): b + 1 steps after
    eta = 0 with lengths (31) and heights phi_i = phi_0 e^{-i eps} (30).
(b) delta = 0.1044, the linear region before it: b + 2 steps (38) with
    heights psi_i(delta) of (39); the singleton step absorbs the rest of the
    mass. This is the PMF the paper prints; (38)-(39) are valid here because
    j = h (for j < h they leak, see optnoise.mechanisms.closed_form.bd.bd_pmf).

Grey outlines: the flat-region staircases on either side. Step labels sit
above the bars and the outlines, so they never cross a line. Both panels are
checked against the MILP (13) (pdp-kadam, directed shifts {1..5}), canonical
optimum: the flat PMF is unique and must coincide; in the linear region only
f(0) is unique, and the printed PMF must be feasible at that delta. There the
canonical MILP optimum (in the CSV) is another optimal PMF: the staircase of
flat region 1 at the same f(0), with the remaining mass spread evenly over its
last group (optnoise.mechanisms.closed_form.bd.bd_pmf's choice), not the printed singleton.
"""

from __future__ import annotations

import os
import sys

import matplotlib.pyplot as plt
import numpy as np

from optnoise import Neighborhood
from optnoise.mechanisms.closed_form.bd import bd_boundaries, bd_pmf, bd_step_lengths
from optnoise.privacy.curves import delta_pdp_kadam
from optnoise.reproduce.compare import SOLVER
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _kadam2024 import progress, solve  # noqa: E402

N, MU_BAR, EPS = 11, 5, 1.0
B, R = divmod(N, MU_BAR)
D_FLAT, D_LINEAR = 0.2, 0.1044
H, J = 1, 1  # the flat region of panel (a) and the linear region leading to it


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`); unlisted columns are exact.
#: The MILP columns are solver optima; Theorem 3 and (39) are exact.
TOLERANCES = {"fig3": {"milp_flat": SOLVER, "milp_linear": SOLVER}}


def printed_linear_pmf(delta: float) -> tuple[np.ndarray, tuple[int, ...], np.ndarray]:
    """The linear-region PMF (38)-(39) for (h, j) = (H, J): lengths, step heights psi_i and the PMF."""
    lengths = np.asarray(bd_step_lengths(N, MU_BAR, H, J, linear=True))
    xi_j = (1 - np.exp(-J * EPS)) / (1 - np.exp(-EPS))
    single = B - H + J + 1
    i = np.arange(lengths.size)
    psi = np.where(i < single, delta * np.exp((B - H - i) * EPS) / xi_j, delta * np.exp((B - H - i + 1) * EPS) / xi_j)
    rest = np.dot(np.delete(lengths, single), np.delete(psi, single))
    psi[single] = (1 - rest) / lengths[single]
    return np.repeat(psi, lengths), tuple(int(v) for v in lengths), psi


def draw(ax, pmf, lengths, sym, title, outlines):
    eta = np.arange(N + 1)
    for (f, lab), (col, ls) in zip(outlines, (("0.5", "--"), ("C3", ":")), strict=False):
        ax.step(eta, f, where="mid", color=col, lw=1.2, ls=ls, label=lab)
    colors = np.repeat(np.arange(len(lengths)) % 2, lengths)
    ax.bar(eta, pmf, color=np.where(colors == 0, "C0", "C9"), edgecolor="k", lw=0.5, width=0.85)
    # the outlines are drawn with where="mid": over a group they reach into the half cells on each side
    tops = np.max([pmf] + [f for f, _ in outlines], axis=0)
    start = 0
    for i, ell in enumerate(lengths):
        if ell == 0:
            continue
        mid = start + (ell - 1) / 2
        top = tops[max(start - 1, 0) : start + ell + 1].max() if ell == 1 else tops[start : start + ell].max()
        ax.annotate(
            rf"${sym}_{{{i}}}$" + "\n" + rf"$\ell_{{{i}}}={ell}$",
            (mid, top),
            xytext=(0, 3),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=7.5,
        )
        start += ell
    ax.set_yscale("log")
    ax.set_ylim(3e-3, 2.0)
    ax.set_xticks(eta)
    ax.set_xlabel(r"noise value $\eta$")
    ax.set_ylabel(r"$f^\star(\eta)$ (log scale)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, axis="y")


def main(argv=None) -> int:
    fs = FigureScript("kadam2024", "fig3", argv, description=__doc__)
    reg = bd_boundaries(N, MU_BAR, EPS)
    if not (reg.delta_bar[0] < D_LINEAR < reg.delta_low[1] <= D_FLAT <= reg.delta_bar[1]):
        raise RuntimeError(f"the chosen deltas are not in the intended regions: {reg}")
    nb = Neighborhood.bd(MU_BAR, directed=True)
    progress(fs, "2 MILPs")
    flat = bd_pmf(N, MU_BAR, EPS, delta=D_FLAT)
    flat_len = bd_step_lengths(N, MU_BAR, H, J)
    milp_flat = solve(
        fs, n=N, eps=EPS, delta=D_FLAT, neighborhood=nb, metric="er", privacy="pdp-kadam", canonical=True
    ).pmf
    if np.max(np.abs(milp_flat - flat)) > 1e-7:
        raise RuntimeError(f"flat region: Theorem 3 {flat} vs MILP {milp_flat}")
    lin, lin_len, _ = printed_linear_pmf(D_LINEAR)
    milp_lin = solve(
        fs, n=N, eps=EPS, delta=D_LINEAR, neighborhood=nb, metric="er", privacy="pdp-kadam", canonical=True
    ).pmf
    if abs(milp_lin[0] - lin[0]) > 1e-7 or delta_pdp_kadam(lin, nb, EPS, tol=1e-12) > D_LINEAR + 1e-9:
        raise RuntimeError(f"linear region: printed (39) {lin} vs MILP {milp_lin}")
    f_before = bd_pmf(N, MU_BAR, EPS, delta=0.0)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    draw(
        axes[0],
        flat,
        flat_len,
        r"\phi^{1}",
        rf"(a) flat region $k=1$, $\delta={D_FLAT}$: $b+1={B + 1}$ steps after $\eta=0$",
        [(f_before, r"flat region $k=0$ ($\delta\leq$" + f"{reg.delta_bar[0]:.4f})")],
    )
    draw(
        axes[1],
        lin,
        lin_len,
        r"\psi^{1}",
        rf"(b) linear region, $\delta={D_LINEAR}$: $b+2={B + 2}$ steps (singleton $\ell_{{{B - H + J + 1}}}=1$)",
        [(f_before, r"flat $k=0$"), (flat, r"flat $k=1$")],
    )
    for ax in axes:
        ax.legend(loc="upper right", fontsize=8)
    fig.suptitle(
        rf"Fig. 3: BD staircase (Theorem 3): $n={N}$, $\bar\mu={MU_BAR}$ ($b={B}$, $r={R}$), "
        rf"$\varepsilon={EPS:g}$, heights fall by $e^{{-\varepsilon}}$ per step",
        fontsize=11,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    eta = np.arange(N + 1)
    fs.save(
        fig,
        {
            "eta": eta,
            "flat_delta_0p2": flat,
            "linear_delta_0p1044": lin,
            "flat_k0": f_before,
            "milp_flat": milp_flat,
            "milp_linear": milp_lin,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
