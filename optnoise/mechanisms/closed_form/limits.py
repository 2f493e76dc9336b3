"""The n -> infinity limits of the SD and BD closed forms."""

from __future__ import annotations

from typing import Any

import numpy as np

from optnoise.engine.validation import check_int, shown
from optnoise.mechanisms.closed_form.common import eps_array, geometric_f0, scalar_or_array

__all__ = [
    "sd_limit_error_rate",
    "sd_limit_pmf",
    "sd_limit_phi0",
    "bd_limit_error_rate",
    "bd_limit_pmf",
    "bd_limit_phi0",
]


def sd_limit_error_rate(eps: Any, *, as_printed: bool = False) -> Any:
    """``lim_{n->inf} rho*`` for the SD neighbourhood at ``delta = 0``, (44).

    The limit of (17b) (and (18c), as ``N_mu -> inf``) is ``e^-eps`` for every
    ``eps > 0``, and the MILP agrees (``n=30, eps=0.3``: ``rho* = 0.7408``).
    The paper's (44) caps it at 0.5 for ``eps <= ln 2`` ("rho* is also
    constrained by 0.5", i.e. the constraint ``f(0) >= 0.5`` brought in by the
    proof of Lemma 2), which is not part of (13)/(14); ``as_printed=True``
    returns that curve, ``min(e^-eps, 0.5)``.
    """
    e = eps_array(eps)
    rho = np.exp(-e)
    return scalar_or_array(np.minimum(rho, 0.5) if as_printed else rho)


def sd_limit_pmf(eps: Any, h: Any) -> Any:
    """Limit masses (45): ``f_inf(h mu) = (1 - rho_inf) e^{-h eps}``, ``h = 0, 1, ...``.

    With the true ``rho_inf = e^-eps`` these sum to 1; all other noise values
    have mass 0.
    """
    e = eps_array(eps)
    h = np.asarray(h)
    if np.any(h < 0) or not np.issubdtype(h.dtype, np.integer):
        raise ValueError(f"h must be integers >= 0; got {shown(h)}")
    return scalar_or_array(-np.expm1(-e) * np.exp(-h * e))


def sd_limit_phi0(i: Any, eps: Any) -> Any:
    """Flat level (51): ``f_i*(0) = (1 - e^-eps) / (1 - e^{-(i+1) eps})``.

    With the index ``i = n - k`` counted from ``delta = 1`` backwards, the
    k-th flat region of Theorem 2 has this ``f*(0)`` whatever ``n`` is, so it is
    also the ``n -> inf`` value; ``rho* >= 1 - f_i*(0)`` between the flat
    regions i and i+1. As ``i -> inf`` it tends to ``1 - e^-eps`` (44).
    """
    e = eps_array(eps)
    i = np.asarray(i)
    if np.any(i < 0) or not np.issubdtype(i.dtype, np.integer):
        raise ValueError(f"i must be integers >= 0; got {shown(i)}")
    return scalar_or_array(geometric_f0(i, e))


def bd_limit_error_rate(mu_bar: int, eps: Any, *, as_printed: bool = False) -> Any:
    """``lim_{n->inf} rho*`` for the BD neighbourhood at ``delta = 0``, (46)-(48).

    ``rho_inf = mu_bar e^-eps / (mu_bar e^-eps + 1 - e^-eps)`` (47), the limit
    of (29), for every ``eps > 0``. The printed (48) caps it at 0.5 for
    ``eps <= ln(1 + mu_bar)`` (see :func:`sd_limit_error_rate`);
    ``as_printed=True`` returns that curve.
    """
    mu_bar = check_int("mu_bar", mu_bar, minimum=1)
    e = eps_array(eps)
    a = mu_bar * np.exp(-e)
    rho = a / (a - np.expm1(-e))
    return scalar_or_array(np.minimum(rho, 0.5) if as_printed else rho)


def bd_limit_pmf(mu_bar: int, eps: Any, eta: Any) -> Any:
    """Limit PMF (49)-(50): ``f_inf(eta) = f_inf(0) e^{-ceil(eta/mu_bar) eps}``, ``eta = 0, 1, ...``."""
    mu_bar = check_int("mu_bar", mu_bar, minimum=1)
    e = eps_array(eps)
    eta = np.asarray(eta)
    if np.any(eta < 0) or not np.issubdtype(eta.dtype, np.integer):
        raise ValueError(f"eta must be integers >= 0; got {shown(eta)}")
    f0 = 1.0 - np.asarray(bd_limit_error_rate(mu_bar, e))
    step = -(-eta // mu_bar)  # ceil(eta / mu_bar): the staircase step of eta
    return scalar_or_array(f0 * np.exp(-step * e))


def bd_limit_phi0(mu_bar: int, c: int, j: int, eps: Any) -> Any:
    """Limit (53) of ``phi_0^k`` in the flat region ``(h, j) = (b - c, j)`` as ``b -> inf``.

    ``c = b - h`` counts segments from ``delta = 1`` backwards. The limit of
    the (correct) (34) with ``u_hj = 1`` (``j < h``, as holds eventually for
    fixed j) is::

        phi0 = (1 - e^-eps) / (mu_bar e^-eps + 1 - e^-eps - e^{-(c+1) eps}
                                + (1 - e^-eps) e^{-(c+j+1) eps})

    The printed (52)-(53) have ``beta -> 1 - e^{-(c+j+1) eps}/(1 - e^-eps)``,
    which is not the limit of (36); see the module notes. Both tend to (46) as
    ``c -> inf``. The masses follow (54): ``phi_i = e^{-i eps} phi0``.
    """
    mu_bar = check_int("mu_bar", mu_bar, minimum=1)
    c = check_int("c", c, minimum=0)
    j = check_int("j", j, minimum=1)
    e = eps_array(eps)
    q = -np.expm1(-e)  # 1 - e^-eps
    den = mu_bar * np.exp(-e) + q - np.exp(-(c + 1) * e) + q * np.exp(-(c + j + 1) * e)
    return scalar_or_array(q / den)
