"""Closed-form optimal noise PMFs of Kadam et al. (2024).

Source: S. Kadam, A. Scaglione, N. Ravi et al., "Optimum noise mechanism for
differentially private queries in discrete finite sets", Cybersecurity 7:54
(2024); equation numbers below are the paper's.

Every closed form here minimises the error rate ``rho = 1 - f(0)`` (10) of the
modulo-``(n+1)`` additive mechanism ``q~ = q + eta (mod n+1)`` under the
paper's ``(eps, delta)``-PDP constraint as written in its MILP (13a)-(13h)
(``privacy="pdp-kadam"``; for ``delta = 0`` the LP (14)). The shift sets are the
paper's *directed* ones:

* single distance (SD, Definition 5): ``M = {mu}``;
* bounded difference (BD, Definition 6): ``M = {1, ..., mu_bar}``.

Both neighbourhoods in the solver layer are ``Neighborhood.sd(mu,
directed=True)`` and ``Neighborhood.bd(mu_bar, directed=True)``.

Where the optimum is not unique (linear regions of Theorems 2 and 3, the last
segment of Theorem 3) only ``f(0)``, hence the error rate, is unique; each
function says which optimal PMF it returns. Flat regions have a unique PMF.

Corrections to the printed paper
--------------------------------
Each was found and confirmed by solving the MILP (13) with HiGHS at tight
tolerances; ``tests/mechanisms/test_closed_form.py`` re-checks every one against the
solver layer.

1. Remark 3 (non-coprime SD) says "replace n with ``N_mu``". The cycle
   ``{k mu mod (n+1)}`` has ``N_mu`` elements where the coprime case has
   ``n+1``, so the substitution is ``n -> N_mu - 1`` (as (18c) does relative
   to (17b)). E.g. ``n=7, mu=2``: ``f(0) = (1-e^-eps)/(1-e^{-4 eps})``.
2. (35)-(36): the split of (34) into ``mu_bar alpha + beta`` is wrong when
   ``j = h``; see :func:`bd_alpha_beta`. The first form of (34) is right.
3. (38) leaves ``l_{b+1}`` undefined for ``j < h``; the ``mu_bar - 1`` range
   is ``[b-h+1 : b+1]`` minus the singleton.
4. (39): for ``j < h`` the printed linear-region PMF leaks in a way (13g)
   forbids (its ``f(0)`` is right); :func:`bd_pmf` returns another optimum.
5. Theorem 3's region sequence is confirmed for ``b <= 3`` only, and for
   ``b = 3`` needs a cut where the line ``f(0) = delta`` overtakes a flat
   region (``eps < ln((1+sqrt 5)/2)``). For ``b >= 4`` the flat regions
   ``(h, j)``, ``j <= h-2`` leak more than (37c) says. See :func:`bd_boundaries`.
6. (43) writes ``alpha_b`` for ``alpha_hj``; the text before Corollary 1
   gives ``delta = (1 - rho) e^{-n eps}`` for the first branch, where (21) and
   (24) give ``e^{-(n-1) eps}`` (the solver agrees with the latter).
7. (44) and (48) cap the limit error rate at 0.5 for small ``eps``, from the
   constraint ``f(0) >= 0.5`` assumed in the proof of Lemma 2; that is not the
   limit of (17b) or (29), nor of the MILP (for ``eps < ln 2`` the masses (45)
   would sum to more than 1). The limit functions return the true limits;
   ``as_printed=True`` gives the printed curves.
8. (52)-(53): the printed limit of ``beta`` is not the limit of (36); see
   :func:`bd_limit_phi0`.
"""

from optnoise.mechanisms.closed_form.bd import (
    BDRegions,
    bd_alpha_beta,
    bd_boundaries,
    bd_error_rate,
    bd_level_curve,
    bd_level_eps,
    bd_phi0,
    bd_pmf,
    bd_step_lengths,
)
from optnoise.mechanisms.closed_form.limits import (
    bd_limit_error_rate,
    bd_limit_phi0,
    bd_limit_pmf,
    sd_limit_error_rate,
    sd_limit_phi0,
    sd_limit_pmf,
)
from optnoise.mechanisms.closed_form.sd import (
    sd_boundaries,
    sd_cycle,
    sd_error_rate,
    sd_level_curve,
    sd_level_eps,
    sd_pmf,
)

__all__ = [
    "sd_cycle",
    "sd_boundaries",
    "sd_pmf",
    "sd_error_rate",
    "sd_level_curve",
    "sd_level_eps",
    "BDRegions",
    "bd_step_lengths",
    "bd_phi0",
    "bd_alpha_beta",
    "bd_boundaries",
    "bd_pmf",
    "bd_error_rate",
    "bd_level_curve",
    "bd_level_eps",
    "sd_limit_error_rate",
    "sd_limit_pmf",
    "sd_limit_phi0",
    "bd_limit_error_rate",
    "bd_limit_pmf",
    "bd_limit_phi0",
]
