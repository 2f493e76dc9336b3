"""Deployable designs: exactly certified privacy, exact sampling, save/load.

A PMF returned by an LP/MILP solver meets the privacy constraints of
Kadam et al. (2024), (13c)-(13h) / (14c), only up to the solver's feasibility
tolerance (~1e-9), and sampling it with floating point adds error of its own.
This module turns a :class:`~optnoise.design.result.DesignResult` into a
:class:`CertifiedDesign`:

1. **Exact PMF.** Integer weights ``w(eta)`` over the common denominator
   ``D = 2**bits`` (default ``bits = 62``): the sampled distribution is
   ``w / D`` *exactly*.
2. **Exact check.** The privacy notion the design asked for ("pdp",
   "pdp-kadam" or "dp"; pure eps-DP when delta = 0) is checked with integer
   arithmetic against rational bounds ``L <= e^eps <= U`` (:func:`exp_bounds`),
   each in the direction that can only *over*-state the leakage:

   ``"dp"`` (hockey stick, Definition 1, eq. (8))
       ``sum_eta [w(eta) - L w(eta+mu)]_+ / D``. A smaller multiplier can only
       enlarge every term, so using ``L <= e^eps`` upper-bounds the true delta.
   ``"pdp"`` (Definition 2 taken literally)
       An output leaks for shift mu unless ``w(eta) <= L w(eta+mu)`` holds
       exactly; since ``L <= e^eps`` this implies the true non-leak condition,
       so the leak set used is a superset of the true one and its mass an upper
       bound. ``w(eta+mu) = 0 < w(eta)`` always leaks.
   ``"pdp-kadam"`` (the MILP (13), shared indicators)
       The certificate *exhibits* a feasible point of (13c)-(13h) at the true
       e^eps: ``u(eta) = 1`` exactly where ``eta`` leaks for some shift in the
       conservative sense above, ``y = u f``. Rows (13f) then hold because a
       non-leaking eta has ``w <= L g <= e^eps g``; (13g) is required as
       ``w(eta) >= U w(eta+mu)`` for every shift, which implies
       ``w >= e^eps g`` since ``U >= e^eps``; (13c) is ``sum u w / D <= delta``.
       When (13g) fails the certified delta is ``inf``.

   Why each direction is safe is restated in :func:`exact_delta`.
3. **Repair.** Rounding to ``1/D`` (and the solver's own ~1e-9 slack) can break
   constraints that are tight at the optimum. The exact repair of
   :mod:`optnoise.design.repair` (uniform mixing, margin re-solves, the pure
   eps-DP fallback; every candidate re-checked exactly) finds the certifying
   weights that cost the least loss. The certified (eps, delta), the mixing
   weight, the margin and the distortion loss ``certified - solver`` are
   reported in :attr:`CertifiedDesign.repair`. If no candidate certifies the
   requested (eps, delta) within ``max_loss``, :class:`CertificationError` (a
   ``ValueError``) is raised: the target is never quietly weakened.
4. **Exact sampling.** :meth:`CertifiedDesign.sample` draws an integer
   uniformly below ``D`` and looks it up in the cumulative integer table
   (``searchsorted`` semantics, accelerated by a guide table on the top
   bits): ``P(eta) = w(eta) / D`` exactly. The default randomness is the
   operating system's CSPRNG (``os.urandom``, as used by :mod:`secrets`),
   drawn in bulk. A seeded ``numpy.random.Generator`` may be passed for
   reproducible experiments; **seeded mode is not for deployment** (its state
   is guessable and it is not a cryptographic generator).
5. **Save/load.** JSON with the exact weights (decimal strings), the problem
   specification, the certificate, solver metadata and the optnoise version,
   plus a SHA-256 digest of the canonical JSON of all of them
   (:func:`file_digest`). :func:`load_design` refuses a file whose digest does
   not match, any format version but :data:`FORMAT_VERSION`, and any
   certificate field that differs from a fresh exact re-check of the problem
   the file names (recomputed on every load); every refusal names the field.
   The digest detects corruption and careless or partial edits; it is **not a
   signature**: anyone who can rewrite the file can recompute it, so a file
   from an untrusted source must be authenticated by other means (a signature,
   a trusted store). What no edit can do is make the weights leak more than
   the certificate states for the problem stated in the file: that is
   re-proved exactly on load.

Command line::

    optnoise solve --n 8 --eps 1.5 --delta 0.1238 --neighborhood bd:3 --directed \
        --privacy pdp-kadam --format json --out res.json
    optnoise certify --result res.json --out design.json      # or the solve flags instead of --result
    optnoise release --design design.json --value 3 --count 5  # OS CSPRNG
    optnoise release --design design.json --value 3 --seed 1   # reproducible, NOT for deployment

``certify --result`` rebuilds the design from the solve JSON, whose
``shifts`` are the resolved set (already symmetrised), so the stored
neighbourhood is that set marked ``directed``: the same constraints. Exit
codes: 0 certified, 1 the requested (eps, delta) cannot be certified within
``--max-loss``, 2 bad input (one line), 3 the solve is not optimal. Vector
answers are written ``a/b``; several answers are comma-separated.

Example
-------
>>> from optnoise import NoiseDesign, Neighborhood
>>> res = NoiseDesign(n=8, eps=1.5, delta=0.1238, privacy="pdp",
...                   neighborhood=Neighborhood.bd(3, directed=True)).solve()
>>> cd = res.certify()
>>> cd.certified_delta <= 0.1238
True
>>> 0 <= cd.release(5, rng=np.random.default_rng(1)) <= 8  # seeded: experiments only
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from optnoise.deploy.additive import certify_additive
from optnoise.deploy.certified import CertifiedDesign, CertifiedMechanism
from optnoise.deploy.grid import certify_grid
from optnoise.design.additive_eval import ADDITIVE, notion_of
from optnoise.design.grid import GRID
from optnoise.design.repair import (
    DEFAULT_BITS,
    MARGINS,
    MAX_LOSS,
    RepairFailed,
    exact_repair,
    prepare,
    solution_of,
)
from optnoise.design.result import set_certifier
from optnoise.engine.solve import SOLVERS
from optnoise.engine.validation import check_choice, check_delta, check_int, check_positive, shown
from optnoise.privacy.notions import NOTION_REGISTRY, get_notion
from optnoise.privacy.verification import CertificationError, delta_allowance

__all__ = ["CertificationError", "certify_result"]


def certify_result(
    result: Any,
    *,
    delta: float | None = None,
    bits: int = DEFAULT_BITS,
    max_loss: float = MAX_LOSS,
    margins: tuple[float, ...] = MARGINS,
    allow_suboptimal: bool = False,
    allow_unverified: bool = False,
    solver: str = "highs",
) -> Any:
    """Certify a solved design exactly and build its exact sampler.

    Parameters
    ----------
    result : DesignResult or MechanismResult
        A solved design (``status == "optimal"``).
    delta : float, optional
        The delta to certify at the design's eps. Default: the design's delta;
        for a minimise-delta design (15a), which asks for no particular delta,
        the solver's minimum with the slack of the tolerance rule
        (:func:`optnoise.privacy.verification.delta_allowance`; the exact certified delta,
        reported, is usually far closer to the minimum). For a design
        certified at another delta than its own, the returned design states
        the problem at that delta.
    bits : int
        The weights are integers over ``2**bits`` (16..62).
    max_loss : float
        Largest accepted increase of the design's loss (distortion) from
        repair, relative to ``max(1, |solver loss|)``; ``inf`` accepts any.
    margins : tuple of float
        Absolute margins tried by the re-solve step, in order (those that do
        not fit below a small delta are replaced by fractions of it).
    allow_suboptimal : bool
        Certify the incumbent of a ``"feasible"`` or ``"time_limit"`` result (it
        meets the guarantee, but is not proven optimal; the certificate is about
        privacy, and says nothing of optimality).
    allow_unverified : bool
        Repair an ``"unverified"`` result (its solution meets the constraints
        only within the solver's tolerance); the loss is measured against its
        own. Other statuses are always refused.
    solver : str
        Backend for the re-solve step.

    Returns
    -------
    CertifiedDesign (noise PMFs) or CertifiedMechanism (mechanism matrices,
    and clamped noise designs, which are certified as their induced matrix).

    Raises
    ------
    CertificationError
        Non-optimal status, no solution, or the target cannot be certified
        within ``max_loss`` (the message says which).
    """
    # a release with a certifier of its own (q + eta on Z); noise and matrices are certified below
    release = getattr(getattr(result, "design", None), "release", None)
    special = RELEASE_CERTIFIERS.get(release) if isinstance(release, str) else None
    if special is not None:
        return special(result, delta=delta, bits=bits, max_loss=max_loss, allow_suboptimal=allow_suboptimal)
    if not (hasattr(result, "design") and hasattr(result, "status") and hasattr(result.design, "pair_layout")):
        raise ValueError(
            "result must be a DesignResult or MechanismResult (from NoiseDesign.solve() or "
            f"MechanismDesign.solve()); got {type(result).__name__}"
        )
    design = result.design
    if not get_notion(design.privacy).certifies:
        certified = ", ".join(k for k, v in NOTION_REGISTRY.items() if v.certifies)
        raise CertificationError(
            f"certification covers privacy in {certified}; a {design.privacy!r} design has no single "
            "(eps, delta) to certify (account for it with result.compose(k) or result.pld())"
        )
    sol = solution_of(result)
    ok_status = (
        result.status == "optimal"
        or (allow_suboptimal and result.status in ("feasible", "time_limit"))
        or (allow_unverified and result.status == "unverified")
    )
    if not ok_status or sol is None:
        what = "matrix" if hasattr(result, "matrix") else "PMF"
        why = f"has no {what}" if sol is None else "is not proven optimal"
        unproven = result.status in ("feasible", "time_limit")
        hint = "; pass allow_suboptimal=True to certify the incumbent" if unproven else ""
        raise CertificationError(f"cannot certify a result with status {result.status!r}: it {why}{hint}")
    bits = check_int("bits", bits, minimum=16, maximum=62)
    if isinstance(max_loss, (int, float)) and not isinstance(max_loss, bool) and max_loss == math.inf:
        max_loss = math.inf
    else:
        max_loss = check_positive("max_loss", max_loss, allow_zero=True)
    check_choice("solver", solver, SOLVERS)
    if delta is None:
        if design.objective != "delta":
            target_f = float(design.delta or 0.0)  # set whenever delta is not what is minimised
        else:
            target_f = min(1.0, delta_allowance(float(result.delta_objective or 0.0)))
    else:
        target_f = check_delta(delta)
    if isinstance(margins, (str, bytes)) or not isinstance(margins, (tuple, list)) or not margins:
        raise ValueError(f"margins must be a non-empty sequence of positive numbers; got {shown(margins)}")
    margins = tuple(check_positive("margins", t) for t in margins)
    layout = design.pair_layout()
    p_result = prepare(layout.embed(sol))
    # the loss the repair is measured against: the result's own, on its clipped and renormalised solution
    base = layout.loss_of(p_result / np.repeat(p_result.reshape(layout.rows, -1).sum(axis=1), layout.cols))
    if design.objective != "delta" and target_f != design.delta:
        # the certified design names the problem at the delta it is certified for, so that a saved
        # file's certificate always equals a fresh check of the problem it states
        design = design.replace(delta=target_f)
        layout = design.pair_layout()
    try:
        fixed = exact_repair(
            design, p_result, base=base, target=target_f, bits=bits, max_loss=max_loss, margins=margins, solver=solver
        )
    except RepairFailed as exc:
        raise CertificationError(
            f"cannot certify the requested (eps={design.eps:g}, delta={target_f:g}) under {design.privacy!r} "
            f"with distortion loss <= max_loss={max_loss:g} (relative to max(1, distortion)); {exc}. "
            "Pass a larger max_loss, or a larger delta explicitly, to accept a weaker design."
        ) from None
    repair = {
        "method": fixed.method,
        "mix_units": fixed.mix_units,
        "mix_weight": fixed.mix_weight,
        "margin": fixed.margin,
        "distortion_solver": base,
        "distortion_certified": fixed.loss,
        "loss": fixed.loss - base,
        "max_loss": None if max_loss == math.inf else max_loss,
        "attempts": fixed.attempts,
    }
    solver_meta = {
        "name": result.solver,
        "status": result.status,
        "gap": result.gap,
        "solve_time_s": result.solve_time,
        "model_size": result.model_size,
    }
    kind = CertifiedDesign if layout.kind == "pmf" else CertifiedMechanism
    return kind(
        design=design,
        weights=np.array([int(v) for v in fixed.weights], dtype=np.int64),
        bits=bits,
        eps=design.eps,
        delta=target_f,
        certified_delta=fixed.delta,
        repair=repair,
        solver=solver_meta,
    )


def _certify_additive(result: Any, *, delta: float | None, bits: int, max_loss: float, allow_suboptimal: bool) -> Any:
    """An additive result (``q + eta`` on Z): :func:`optnoise.deploy.additive.certify_additive`."""
    design = result.design
    # a composed result is "optimal" only with the one-release LP's bound; its incumbent certifies like modulo ones
    composed = notion_of(design).composed and result.status == "feasible"
    ok = result.status == "optimal" or composed or (allow_suboptimal and result.status in ("feasible", "time_limit"))
    if not ok or result.pmf is None:
        raise CertificationError(f"cannot certify a result with status {result.status!r}: it is not proven optimal")
    if delta is not None and check_delta(delta) != design.delta:
        raise CertificationError("delta for an additive design must be the design's own (re-solve at another delta)")
    bits = check_int("bits", bits, minimum=16, maximum=62)
    if not (isinstance(max_loss, (int, float)) and max_loss == math.inf):
        max_loss = check_positive("max_loss", max_loss, allow_zero=True)
    meta = {"name": result.backend, "status": result.status, "gap": result.gap, "solve_time_s": result.solve_time}
    meta["model_size"] = result.model_size
    return certify_additive(result, bits=bits, max_loss=max_loss, solver_meta=meta, error=CertificationError)


#: Releases certified by a format of their own, by release name (every other design: its pair layout).
RELEASE_CERTIFIERS: dict[str, Callable[..., Any]] = {
    ADDITIVE: _certify_additive,
    # the grid's noise is an additive one in units of the grid's width
    GRID: lambda result, **kw: certify_grid(result, lambda units: _certify_additive(units, **kw)),
}

set_certifier(certify_result)
