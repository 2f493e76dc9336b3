"""The composed certificate: the k-fold guarantee a certified composed design was made for.

A ``NoiseDesign(privacy="composed", compositions=k, eps=eps, delta=delta)`` promises that its
**k-fold adaptive composition** is (eps, delta)-DP. Its certified form
(:meth:`DesignResult.certify <optnoise.design.result.DesignResult.certify>`) carries two guarantees:

* the **single release**, proved exactly (the ``certificate`` of the design file: the ``"dp"``
  problem at eps and the exact delta of one release, :mod:`optnoise.privacy.exact`);
* the **k-fold composition** (the ``composed`` block, :func:`composed_block`): the delta at eps
  of k releases by the project's accounting (:func:`optnoise.design.composed_bounds.compose_release`:
  dp-accounting's pessimistic PLD of a dominating pair of every protected pair, at the design's
  discretisation h), recomputed from the certified integer weights (as floats) and required to be
  <= the design's delta. This one is a float computation, pessimistic by construction (its
  accuracy is that of :mod:`optnoise.privacy.accounting`), not an exact rational.

On load (:func:`check_composed_block`) the block is recomputed from the file's weights: a block
whose fields are malformed, whose eps is not the certificate's, whose recomputed delta exceeds its
target, or whose stated ``composed_delta`` is not the recomputed one (to :data:`RTOL`, the accounting's
float reproducibility across machines) is refused, naming the field. Files written before the block
existed kept it in ``repair.composed`` (with ``single_release_delta``); those are checked the same way.
"""

from __future__ import annotations

import math
from typing import Any

from optnoise.design.composed import check_design_compositions, check_discretization
from optnoise.design.composed_bounds import compose_release
from optnoise.engine.validation import check_delta, shown

__all__ = ["ACCOUNTING", "COMPOSED_FIELDS", "RTOL", "ATOL", "check_composed_block", "composed_block", "composed_delta"]

#: How the composed delta is computed (stated in the block, so a reader knows it is not exact).
ACCOUNTING = "pld-pessimistic"
#: The fields of a ``composed`` block.
COMPOSED_FIELDS = ("compositions", "eps", "delta", "discretization", "composed_delta", "accounting")
#: The field only files of the older ``repair.composed`` form have (the single-release target).
LEGACY_FIELD = "single_release_delta"
#: The design-file field of the composed block (files before it kept the block in ``repair.composed``).
BLOCK = "composed"
#: Tolerance between a stored and a recomputed composed delta: the FFT of the composition is exact
#: only to float rounding, which differs between machines in the last digits.
RTOL, ATOL = 1e-6, 1e-15


def composed_delta(certified: Any, k: int, discretization: float, eps: float) -> float:
    """Delta at ``eps`` of ``k`` releases of the certified weights (the exact certified delta at k = 1)."""
    if k == 1:
        return float(certified.certified_delta)
    return float(compose_release(certified.release_pairs(), k, discretization).delta(eps))


def composed_block(certified: Any, k: int, eps: float, delta: float, discretization: float) -> dict[str, Any]:
    """The ``composed`` block of a certified design: the target and the recomputed composed delta.

    The caller refuses a block whose ``composed_delta`` exceeds ``delta`` (no target is quietly weakened).
    """
    got = composed_delta(certified, k, discretization, eps)
    return {
        "compositions": int(k),
        "eps": float(eps),
        "delta": float(delta),
        "discretization": float(discretization),
        "composed_delta": got,
        "accounting": ACCOUNTING,
    }


def _number(field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"design file field {shown(field)} must be a finite number; got {shown(value)}")
    return float(value)


def check_composed_block(certified: Any, block: Any, field: str = "composed") -> dict[str, Any]:
    """Re-verify a design file's composed block against the certified weights; the block as certified.

    Parameters
    ----------
    certified : CertifiedDesign or CertifiedMechanism
        The design the file holds (its single-release certificate already re-proved).
    block : Any
        The file's block (``composed``, or ``repair.composed`` of older files).
    field : str
        Its name in the file, for the messages.

    Raises
    ------
    ValueError
        Naming the field: not a mapping, an unknown or missing field, a malformed value, an eps
        other than the certificate's, a recomputed delta above the target, or a stated
        ``composed_delta`` that is not the recomputed one.
    """

    def bad(name: str, why: str) -> ValueError:
        return ValueError(f"design file field {shown(f'{field}.{name}' if name else field)}: {why}")

    if not isinstance(block, dict):
        raise bad("", f"must be a mapping; got {type(block).__name__}")
    current = field == BLOCK  # the current block, not the legacy repair.composed
    allowed = set(COMPOSED_FIELDS) | (set() if current else {LEGACY_FIELD})
    unknown = sorted(set(block) - allowed)
    if unknown:
        raise bad(unknown[0], "is not a field of the composed block")
    required = [k for k in COMPOSED_FIELDS if k != "accounting" or current]
    missing = [k for k in required if k not in block]
    if missing:
        raise bad(missing[0], "is missing")
    if not hasattr(certified.design, "compositions"):
        raise bad("", "applies only to noise designs (NoiseDesign(privacy='composed'))")
    try:
        k = check_design_compositions(block["compositions"])
        h = check_discretization(block["discretization"]) if block["discretization"] is not None else None
        target = check_delta(block["delta"])
    except ValueError as exc:
        raise bad("", str(exc)) from None
    if h is None:
        raise bad("discretization", "must be a number (the accounting grid h)")
    if target == 0.0:
        raise bad("delta", "must be > 0 (a composed design's delta)")
    eps = _number(f"{field}.eps", block["eps"])
    if eps != certified.eps:
        raise bad("eps", f"must be the certificate's eps {shown(certified.eps)}; got {shown(block['eps'])}")
    stated = _number(f"{field}.composed_delta", block["composed_delta"])
    if block.get("accounting", ACCOUNTING) != ACCOUNTING:
        raise bad("accounting", f"must be {shown(ACCOUNTING)}; got {shown(block['accounting'])}")
    if LEGACY_FIELD in block and block[LEGACY_FIELD] != certified.delta:
        raise bad(
            LEGACY_FIELD, f"must be the certificate's delta {shown(certified.delta)}; got {shown(block[LEGACY_FIELD])}"
        )
    fresh = composed_block(certified, k, eps, target, h)
    got = fresh["composed_delta"]
    if not got <= target:
        raise bad(
            "composed_delta",
            f"the weights do not meet their composed guarantee: {k} releases have delta {got:.6g} > the target "
            f"{target:g} at eps = {eps:g} (recomputed, h = {h:g})",
        )
    if not abs(stated - got) <= max(ATOL, RTOL * got):
        raise bad(
            "composed_delta",
            f"does not match a fresh recomputation from the weights ({got!r} expected, {stated!r} in the file): "
            "the weights do not match their composed certificate",
        )
    fresh["composed_delta"] = stated  # within the accounting's reproducibility: the file's value stands
    return fresh
