"""Export of certified designs to other DP libraries (OpenDP).

:func:`to_opendp` wraps a :class:`~optnoise.deploy.certified.CertifiedDesign` as an
OpenDP measurement through OpenDP's user-measurement plugin API
(``opendp.measurements.make_user_measurement``):

* input: an integer answer ``q`` in ``{0..n}`` (``atom_domain(bounds=(0, n))``)
  under the absolute distance;
* function: ``q + eta (mod n+1)`` with ``eta`` drawn by the design's exact
  sampler (:meth:`CertifiedDesign.release`, OS CSPRNG);
* privacy map: ``d_in = 0`` maps to no loss; ``d_in >= 1`` maps to the
  certificate ``(eps, certified_delta)`` when every shift ``+-1..+-d_in``
  (mod n+1) is in the certified neighbourhood, and raises otherwise (the
  certificate says nothing about farther pairs). The output measure is
  ``approximate(max_divergence())`` (or ``max_divergence()`` when the
  certified delta is 0); PDP certificates imply this DP guarantee (Kadam et
  al. 2024, Theorem 1). ``certified_delta`` is an exact rational, rounded
  *up* to the next float.

OpenDP is an optional dependency (``pip install optnoise[opendp]``); the
constructor needs its ``contrib`` and ``honest-but-curious`` features, which
:func:`to_opendp` enables: the measurement is only as trustworthy as the
certificate it carries, which is exactly what optnoise's exact check provides.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["to_opendp", "certified_map"]


def _float_up(x: Fraction | float) -> float:
    """The smallest float >= x."""
    f = float(x)
    if isinstance(x, Fraction) and Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def certified_map(design: Any) -> Any:
    """The privacy map ``d_in -> (eps, delta)`` (or ``eps``) that a certified design supports.

    ``design`` is a :class:`~optnoise.deploy.certified.CertifiedDesign` of a scalar query.
    """
    problem = design.design
    n = problem.n
    shifts = {int(s) % (n + 1) for s in np.asarray(problem.shifts).ravel()}
    eps = float(design.eps)
    delta = _float_up(design.certified_delta)
    pure = delta == 0.0

    def privacy_map(d_in: Any) -> Any:
        d = int(d_in)
        if d < 0:
            raise ValueError(f"d_in must be >= 0; got {d_in!r}")
        if d == 0:
            return 0.0 if pure else (0.0, 0.0)
        needed = {s % (n + 1) for k in range(1, d + 1) for s in (k, -k)}
        if d > n or not needed <= shifts:
            raise ValueError(
                f"d_in = {d} is not covered by the certificate: neighbours differing by up to {d} need the "
                f"shifts +-1..+-{d} (mod {n + 1}), the certified neighbourhood has {sorted(shifts)}"
            )
        return eps if pure else (eps, delta)

    return privacy_map


def to_opendp(design: Any, *, rng: np.random.Generator | None = None) -> Any:
    """An OpenDP measurement that releases ``q + eta (mod n+1)`` with the certified sampler.

    Parameters
    ----------
    design : CertifiedDesign
        A certified scalar design.
    rng : numpy.random.Generator, optional
        ``None`` (default): the OS CSPRNG, for deployment. A seeded generator
        is for reproducible tests only.

    Returns
    -------
    opendp.mod.Measurement
    """
    try:
        import opendp.prelude as dp
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise ImportError("to_opendp needs OpenDP: pip install 'optnoise[opendp]'") from None
    if design.design.dim != 1:
        raise ValueError(f"to_opendp supports scalar designs (d = 1); this design has d = {design.design.dim}")
    if not design.verify():
        raise ValueError("the design's weights do not reproduce its certificate; refusing to export it")
    dp.enable_features("contrib", "honest-but-curious")
    n = design.n
    pure = _float_up(design.certified_delta) == 0.0
    measure = dp.max_divergence() if pure else dp.approximate(dp.max_divergence())

    def release(q: Any) -> int:
        return int(design.release(int(q), rng=rng))

    return dp.m.make_user_measurement(
        dp.atom_domain(bounds=(0, n), T=int),
        dp.absolute_distance(T=int),
        output_measure=measure,
        function=release,
        privacy_map=certified_map(design),
        TO=int,
    )
