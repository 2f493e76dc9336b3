"""Parameters shared by the composition2021 figure scripts (Cesar & Rogers, ALT 2021).

The paper's text lost its figure parameters in extraction; the values here are
our choices, stated in each script's docstring and in figures/composition2021/README.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

#: Figs. 1-2: T mechanisms with k of them eps-DP (the rest eps-BR), overall delta.
T_MECHANISMS = 50
DELTA_12 = 1e-6
K_VALUES = (0, 10, 25, 40, 50)


def eps_grid(fast: bool) -> np.ndarray:
    """Per-mechanism epsilon on the x axis of Figs. 1-2."""
    return np.linspace(0.01, 0.5, 4 if fast else 50)


def k_family_figure(
    fs: Any, compute: Callable[[float, int], float], label: Callable[[int], str], title: str, column: str, ylabel: str
) -> tuple[Any, Any, dict[str, np.ndarray]]:
    """Figs. 1-2: overall eps against per-mechanism eps, one curve per number k of DP mechanisms."""
    import matplotlib.pyplot as plt

    eps = eps_grid(fs.fast)
    table: dict[str, np.ndarray] = {"eps": eps}
    fig, ax = plt.subplots(figsize=(5.5, 4))
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(K_VALUES)))
    for k, col in zip(K_VALUES, colors, strict=True):
        table[f"{column}_k{k}"] = np.array([compute(float(e), k) for e in eps])
        ax.plot(eps, table[f"{column}_k{k}"], color=col, label=label(k))
    ax.set_xlabel(r"per-mechanism $\varepsilon$")
    ax.set_ylabel(ylabel)
    ax.set_title(rf"{title}, $T={T_MECHANISMS}$, $\delta=10^{{{int(np.log10(DELTA_12))}}}$", fontsize=10)
    ax.grid(alpha=0.3)
    return fig, ax, table


#: Figs. 4-5: Laplace scale b (each count 0.1-DP, as in Fig. 6), Gaussian with the same variance 2 b^2.
LAPLACE_SCALE = 10.0
GAUSS_SIGMA = float(np.sqrt(2.0) * LAPLACE_SCALE)
#: Figs. 4-5 share delta (Sec. 6.1: their Laplace and zCDP curves are the same). With b = 10 every
#: statement of Sec. 6.1 holds only for delta in about (1.6e-11, 5.8e-9): below, Laplace beats the
#: analytic Gaussian at Delta_0 = 20, so the best one-shot mechanism of Fig. 5's first point would be
#: Laplace; above, the zCDP Gaussian beats Laplace already at k Delta_0 = 20, so Laplace never wins
#: in Fig. 5. 1e-10 is the decade inside that window; the Laplace/zCDP crossing is at k Delta_0 = 25.
DELTA_45 = 1e-10

#: Fig. 6: top-k words of Macbeth, Laplace eps per count, overall delta, trials.
TOP_K = 10
EPS_PER_COUNT = 0.1
DELTA_6 = 1e-5
