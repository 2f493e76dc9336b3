"""Certified grid releases: ``w (round(q / w) + eta)`` with the integer noise of a certified additive design.

The noise of a grid release (:mod:`optnoise.design.grid`) *is* an integer noise for the shifts
``+-1..+-m``, so its certificate, its repair, its exact sampler and its design file are those of
:class:`~optnoise.deploy.additive.CertifiedAdditive` (exact rationals, tails by geometric sums,
no floating point in the sampler: Mironov's attack on textbook floating-point Laplace samplers
does not apply). :class:`CertifiedGrid` adds only what is real-valued:

* :meth:`CertifiedGrid.release` rounds each answer to its cell **exactly**
  (:func:`optnoise.design.grid.cell_index`, rational arithmetic: neighbours at distance
  ``<= Delta`` stay at most ``m`` cells apart) and releases ``Delta / m * (k + eta)``,
  correctly rounded to a float (post-processing);
* :meth:`CertifiedGrid.distortion` is in the query's units (``w^p`` times the integer design's,
  the rounding error included: :mod:`optnoise.design.grid`);
* :meth:`CertifiedGrid.to_opendp` (:func:`grid_to_opendp`) is an OpenDP measurement on ``f64``
  under the absolute distance, so it chains after a bounded float sum.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from optnoise.deploy.additive import CertifiedAdditive
from optnoise.deploy.sampler import check_rng
from optnoise.design.grid import cell_index, cell_value
from optnoise.engine.validation import shown

__all__ = ["CertifiedGrid", "certify_grid", "grid_to_opendp", "MAX_GRID_ANSWER"]

#: Largest absolute answer released: ``k + eta`` stays far inside 64-bit integers and the float output exact enough.
MAX_GRID_ANSWER = 1e15


@dataclasses.dataclass(eq=False)
class CertifiedGrid(CertifiedAdditive):
    """A certified grid release: the certified integer noise (module docstring) and the exact rounding.

    Everything of :class:`~optnoise.deploy.additive.CertifiedAdditive` holds for the integer noise
    ``eta`` (:meth:`sample` draws it, in cells); :meth:`release` returns real values.
    """

    @classmethod
    def of(cls, certified: CertifiedAdditive) -> CertifiedGrid:
        return cls(**{f.name: getattr(certified, f.name) for f in dataclasses.fields(CertifiedAdditive)})

    @property
    def distortion(self) -> float:
        """The design's metric of the released error ``w eta + r`` (rounding included), in the query's units."""
        return float(self.design.scale) * super().distortion

    def cells(self, q: Any) -> list[int]:
        """The exact cell index ``k(q)`` of every answer, flattened (``ValueError`` for a non-finite or huge one)."""
        arr = np.asarray(q)
        if arr.dtype == object or arr.dtype.kind not in "iuf" or arr.size == 0:
            raise ValueError(f"q must be real numbers (a scalar or a numeric array); got {shown(q)}")
        flat = arr.ravel()
        if not np.all(np.isfinite(flat)) or np.any(np.abs(flat.astype(float)) > MAX_GRID_ANSWER):
            raise ValueError(f"q must be finite real numbers with |q| <= {MAX_GRID_ANSWER:g}; got {shown(q)}")
        d = self.design
        return [cell_index(v, d.sensitivity, d.steps) for v in flat.tolist()]

    def release(self, q: Any, rng: np.random.Generator | None = None) -> Any:
        """Release ``Delta / m * (k(q) + eta)`` for every real answer ``q`` (module docstring)."""
        k = self.cells(q)
        eta = np.asarray(self.sample(len(k), rng=rng)).tolist()
        d = self.design  # k + eta in Python integers: no overflow whatever the grid
        vals = np.array([cell_value(a + b, d.sensitivity, d.steps) for a, b in zip(k, eta, strict=True)])
        return float(vals[0]) if np.ndim(q) == 0 else vals.reshape(np.shape(q))

    def to_opendp(
        self, *, rng: np.random.Generator | None = None, T: str = "f64", compositions: int | None = None
    ) -> Any:
        """An OpenDP measurement on real answers (:func:`grid_to_opendp`).

        ``compositions=k`` (a certified composed design): one measurement releasing k answers with the
        composed guarantee; a composed design exported for one release warns, as the additive export does.
        """
        return grid_to_opendp(self, rng=rng, T=T, compositions=compositions)

    def summary(self) -> str:
        d = self.design
        head = (
            f"problem     grid (w (round(q/w) + eta), w = {d.sensitivity:g}/{d.steps})  sensitivity {d.sensitivity:g}  "
            f"notion={self.notion}  metric={d.metric} (rounding included)"
        )
        lines = super().summary().split("\n")[1:]
        # the additive summary's distortion line, restated in query units (a composed or profile line may follow)
        at = next(i for i, line in enumerate(lines) if line.startswith("distortion "))
        lines[at] = (
            f"distortion {self.repair.get('distortion_solver', float('nan')):.10g} -> {self.distortion:.10g} "
            "(query units)"
        )
        return "\n".join([head, *lines])

    def __repr__(self) -> str:
        d = self.design
        return (
            f"CertifiedGrid(sensitivity={d.sensitivity:g}, steps={d.steps}, L={self.support}, notion={self.notion!r}, "
            f"eps={self.eps:g}, certified_delta={float(self.certified_delta):.6g}, bits={self.bits})"
        )


def certify_grid(result: Any, certify: Callable[[Any], CertifiedAdditive]) -> CertifiedGrid:
    """Certify a grid result with the additive certifier ``certify`` (its losses in cells), reported in query units."""
    scale = float(result.design.scale)
    units = copy.copy(result)
    units.distortion = None if result.distortion is None else result.distortion / scale
    out = CertifiedGrid.of(certify(units))
    out.repair = {
        k: (v * scale if k in ("distortion_solver", "distortion_certified", "loss") and v is not None else v)
        for k, v in out.repair.items()
    }
    return out


def grid_to_opendp(
    certified: CertifiedGrid,
    *,
    rng: np.random.Generator | None = None,
    T: str = "f64",
    compositions: int | None = None,
) -> Any:
    """An OpenDP measurement releasing a real answer on the certified grid.

    Input: ``atom_domain(T="f64")`` under ``absolute_distance(T="f64")``, so it chains after a
    bounded float sum (``make_clamp >> then_sum`` on ``f64``). Function: the exact rounding and
    the exact sampler (:meth:`CertifiedGrid.release`). Privacy map: ``d_in = 0`` maps to no loss;
    ``0 < d_in <= Delta`` to the certified ``(eps, delta)`` of both orders
    (:meth:`~optnoise.deploy.additive.CertifiedAdditive.symmetric_delta`, rounded up; ``eps``
    when it is 0): answers at distance ``<= Delta`` are at most ``m`` cells apart, every shift
    ``1..m`` is certified. A larger ``d_in`` is refused (the certificate says nothing about it).

    ``compositions=k`` (a certified composed design, :mod:`optnoise.deploy.composed`): the input is a
    vector of k answers, ``vector_domain(atom_domain(T="f64"), size=k)`` under ``linf_distance``
    (neighbouring datasets move every answer by at most ``d_in``), each released with its own draw,
    and ``0 < d_in <= Delta`` maps to the composed ``(eps, delta)``
    (:func:`~optnoise.deploy.opendp.composed_map`: every coordinate's pair is one of the shifts
    ``1..m`` in cells, dominated by the accounted pair). Without it a composed design exports its
    single-release certificate and warns (OpenDP's composition would add the epsilons).
    """
    from optnoise.deploy.opendp import certified_opendp, check_compositions, composed_map

    rng = check_rng(rng)
    k = check_compositions(certified, compositions)
    if not isinstance(T, str) or T != "f64":
        raise ValueError(f"T must be 'f64' for a grid design (a real-valued query); got {shown(T)}")
    dp, eps, delta = certified_opendp(certified)
    pure = delta == 0.0 and k is None
    sens = float(certified.design.sensitivity)
    loss = (eps if pure else (eps, delta)) if k is None else composed_map(certified, lambda d: None)(1)

    def privacy_map(d_in: Any) -> Any:
        d = float(d_in)
        if not d >= 0.0:
            raise ValueError(f"d_in must be >= 0; got {shown(d_in)}")
        if d == 0.0:
            return 0.0 if pure else (0.0, 0.0)
        if d > sens:
            raise ValueError(
                f"d_in = {d!r} is not covered by the certificate: it covers answers differing by at most the "
                f"sensitivity {sens!r}; certify a design with sensitivity >= d_in"
            )
        return loss

    def release(x: Any) -> float:
        v = float(x)
        if not math.isfinite(v):
            raise ValueError(f"the answer must be a finite float; got {shown(x)}")
        return float(certified.release(v, rng=rng))

    if k is not None:
        return dp.m.make_user_measurement(
            dp.vector_domain(dp.atom_domain(T=T, nan=False), size=k),
            dp.linf_distance(T=T),
            output_measure=dp.approximate(dp.max_divergence()),
            function=lambda x: [release(v) for v in x],
            privacy_map=privacy_map,
            TO=f"Vec<{T}>",
        )
    return dp.m.make_user_measurement(
        dp.atom_domain(T=T, nan=False),  # the output domain of OpenDP's float sums
        dp.absolute_distance(T=T),
        output_measure=dp.max_divergence() if pure else dp.approximate(dp.max_divergence()),
        function=release,
        privacy_map=privacy_map,
        TO=T,
    )
