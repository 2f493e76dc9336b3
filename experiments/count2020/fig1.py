"""Fig. 1 of Sadeghi, Asoodeh, Calmon (arXiv 2007.09374): optimal noise pmf against the discrete Gaussian.

The parameter values of the paper's Fig. 1 were lost in extraction. Chosen:
N = 10, rho = 0.5, eps = 1, which reproduces the structure the text
describes: rho lies between the crossover values theta_2 and theta_3, so
delta~* is the Type-I bound delta_3, only alpha_1..alpha_3 are non-zero and
the noise lives on {-3..3} instead of {-N..N}. The discrete Gaussian
N_Z(0, sigma^2) has sigma^2 chosen so that its variance equals that of the
proposed noise (exact normalisation over Z). As in the paper ("for z >= 0,
noting the symmetry for z < 0"), only z = 0..N is drawn: both pmfs are
symmetric.
"""

import matplotlib.pyplot as plt
import numpy as np

from optnoise.mechanisms.count import optimal_alpha
from optnoise.privacy.noise_families import discrete_gaussian_pmf, discrete_gaussian_sigma2
from optnoise.reproduce.figures import FigureScript

N, RHO, EPS = 10, 0.5, 1.0


#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`): every column exact
#: (Theorem 3's closed form and the discrete Gaussian PMF).
TOLERANCES: dict = {"fig1": {}}


def main(argv=None) -> int:
    fs = FigureScript("count2020", "fig1", argv, description=__doc__)
    m = optimal_alpha(N, RHO, EPS)
    z_all = np.arange(-N, N + 1)
    if not np.allclose(m.pmf, m.pmf[::-1]):
        raise RuntimeError("the proposed noise pmf is not symmetric; drawing z >= 0 only would hide half of it")
    z = z_all[N:]
    proposed = m.pmf[N:]
    sigma2 = discrete_gaussian_sigma2(m.variance)
    dg = discrete_gaussian_pmf(z, sigma2)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.bar(z - 0.2, proposed, width=0.4, label=rf"proposed $P_Z$ ({m.method})")
    ax.bar(
        z + 0.2, dg, width=0.4, label=rf"$\mathcal{{N}}_{{\mathbb{{Z}}}}(0,\sigma^2)$, same variance {m.variance:.3f}"
    )
    ax.set_xlabel(r"noise value $z \geq 0$ (both pmfs are symmetric)")
    ax.set_ylabel(r"$P(Z=z)$")
    ax.set_title(rf"$N={N}$, $\rho={RHO}$, $\varepsilon={EPS:g}$: $\tilde\delta^*={m.claimed:.3g}$")
    ax.set_xticks(z)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(loc="upper right")  # the tail z >= 4 is (nearly) empty
    fs.save(fig, {"z": z, "proposed": proposed, "discrete_gaussian": dg})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
