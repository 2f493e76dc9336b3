"""Fig. 6 of Cesar & Rogers (ALT 2021): noisy top-10 word counts of Macbeth, Laplace vs Gaussian with Algorithm 1.

Data: data/macbeth/shakespeare-macbeth.txt (optnoise.reproduce.datasets.macbeth_word_counts). Tokenisation: lower-case
the text, then take maximal runs of letters a-z keeping inner apostrophes
("call'd" is one word); no stop words removed. Top 10 words: the, and, to,
of, i, a, that, my, you, in.
Unrestricted-sensitivity setting: a user can change all k = 10 counts by at
most Delta_inf = 1. Laplace: each count gets Lap(1/0.1), overall eps from the
optimal DP composition of 10 0.1-DP mechanisms at delta = 1e-5 (the paper's
eps ~ 0.99369). Gaussian: sigma solved from Lemma 6.3 with that eps and delta
(Delta_0 = 10), then Algorithm 1 (order-constrained least squares, Eq. (9),
counts >= 0) using the true ranking, i.e. assuming the discovery phase ranked
the words correctly. The paper ran 100 trials; with 100 the standard error
of each plotted standard deviation is about 1, as large as the differences the
figure is about, so this uses 20,000 seeded trials (noise drawn in one call).
Left (the paper's plot): mean released count minus true count, +-1 empirical
standard deviation. Right: the standard deviations themselves with +-2
standard errors (delta method, from the sample's fourth central moment).
"""

from __future__ import annotations

import os
import sys

import matplotlib.pyplot as plt
import numpy as np

from optnoise.mechanisms.composition import kov_epsilon
from optnoise.mechanisms.gaussian import gaussian_zcdp_sigma, ordered_gaussian_counts
from optnoise.reproduce.datasets import macbeth_word_counts
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _composition2021 import DELTA_6, EPS_PER_COUNT, TOP_K  # noqa: E402

#: Trials per mechanism: the standard error of each plotted standard deviation is then about 0.1.
TRIALS = 20_000


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`): every column exact
#: (seeded simulation (numpy pinned) and closed forms).
TOLERANCES: dict = {"fig6": {}}


def _std_and_se(err: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-column sample standard deviation and its standard error (delta method, any distribution)."""
    s = err.std(axis=0, ddof=1)
    m4 = ((err - err.mean(axis=0)) ** 4).mean(axis=0)
    return s, np.sqrt(np.maximum(m4 - s**4, 0.0) / err.shape[0]) / (2.0 * s)


def main(argv=None) -> int:
    fs = FigureScript("composition2021", "fig6", argv, description=__doc__)
    trials = fs.grid(full=TRIALS, fast=2000)
    words, counts = zip(*macbeth_word_counts(TOP_K), strict=True)
    true = np.array(counts, dtype=float)
    eps_total = float(kov_epsilon(EPS_PER_COUNT, TOP_K, DELTA_6))
    sigma = gaussian_zcdp_sigma(eps_total, DELTA_6, l0_sensitivity=TOP_K)
    rng = np.random.default_rng(20210101)
    lap = rng.laplace(0.0, 1.0 / EPS_PER_COUNT, size=(trials, TOP_K))
    gau = ordered_gaussian_counts(true, sigma, rng=rng, size=trials) - true
    x = np.arange(TOP_K)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [1.25, 1]})
    table: dict[str, object] = {"word": list(words), "true_count": true}
    for off, err, key, lab, col in (
        (-0.12, lap, "laplace", rf"Laplace, $b={1 / EPS_PER_COUNT:g}$", "C0"),
        (0.12, gau, "gauss_alg1", rf"Gaussian $\sigma={sigma:.2f}$ + Algorithm 1", "C3"),
    ):
        std, se = _std_and_se(err)
        ax.errorbar(x + off, err.mean(0), yerr=std, fmt="o", color=col, capsize=3, label=lab)
        ax2.errorbar(x + off, std, yerr=2 * se, fmt="o", color=col, capsize=3, ms=4, label=lab)
        table[f"{key}_err_mean"] = err.mean(0)
        table[f"{key}_err_std"] = std
        table[f"{key}_err_std_se"] = se
        table[f"{key}_err_mean_se"] = std / np.sqrt(trials)
    ticks = [f"{w}\n({c})" for w, c in zip(words, counts, strict=True)]
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks(x, ticks, fontsize=8)
    ax.set_xlabel("word (true count), ranked by count")
    ax.set_ylabel("released count $-$ true count")
    ax.set_title(
        rf"Macbeth top-{TOP_K}, $(\varepsilon, \delta) = ({eps_total:.5f}, 10^{{{int(np.log10(DELTA_6))}}})$: "
        rf"mean $\pm$ 1 std, {trials:,} trials",
        fontsize=10,
    )
    lim = 1.15 * max(float(np.max(np.abs(e.mean(0)) + e.std(0))) for e in (lap, gau))
    ax.set_ylim(-lim, 1.45 * lim)  # head room for the legend
    ax.legend(fontsize=8, loc="upper center", ncol=2)
    ax.grid(alpha=0.3, axis="y")
    ax2.set_xticks(x, ticks, fontsize=8)
    ax2.set_xlabel("word (true count)")
    ax2.set_ylabel("standard deviation of the error")
    ax2.set_title(r"the spreads, $\pm 2$ standard errors", fontsize=10)
    ax2.legend(fontsize=8, loc="lower left")
    ax2.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    table["eps_total"] = np.full(TOP_K, eps_total)
    table["sigma"] = np.full(TOP_K, sigma)
    table["trials"] = np.full(TOP_K, trials)
    fs.save(fig, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
