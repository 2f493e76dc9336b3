"""The design file format: canonical JSON, its digest, the certificate block, the problem it names.

A design file (:meth:`optnoise.deploy.certified.CertifiedDesign.save`) is JSON
with the exact weights (decimal strings), the problem specification, the
certificate (and, for a composed design, its ``composed`` block), solver metadata and the optnoise
version, plus a SHA-256 digest
of the canonical JSON of all of them (:func:`file_digest`). The digest detects
corruption and careless or partial edits; it is **not a signature**: anyone
who can rewrite the file can recompute it. What no edit can do is make the
weights leak more than the certificate states for the problem stated in the
file: that is re-proved exactly on every load.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from optnoise.design.mechanism import MechanismDesign
from optnoise.design.noise import NoiseDesign
from optnoise.engine.validation import shown
from optnoise.privacy.exact import check_bounds, frac_str

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "FILE_FIELDS",
    "OPTIONAL_FIELDS",
    "file_digest",
    "certificate_block",
    "design_from_spec",
]


#: Tag and version of the JSON design format written by :meth:`CertifiedDesign.save`.
FORMAT = "optnoise-certified-design"


#: Version 2: the digest covers the whole file (version 1 hashed the weights only and is refused).
FORMAT_VERSION = 2


#: The fields of a design file, besides its digest ``sha256``.
FILE_FIELDS = (
    "format",
    "format_version",
    "optnoise_version",
    "problem",
    "denominator_bits",
    "shape",
    "weights",
    "certificate",
    "repair",
    "solver",
)


#: Fields a design file has only when they apply: ``composed``, the k-fold guarantee of a certified
#: composed design (:mod:`optnoise.deploy.composed`). Files without them are read as before.
OPTIONAL_FIELDS = ("composed",)


def file_digest(doc: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of every field of a design file but ``sha256`` itself.

    Canonical: keys sorted, no whitespace, ASCII escapes; floats as Python's
    shortest round-trip repr, so a file's digest does not depend on how it
    was indented or re-serialised.
    """
    body = {k: v for k, v in doc.items() if k != "sha256"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def certificate_block(design: Any, eps: float, delta: float, certified: Fraction | float) -> dict[str, Any]:
    """The certificate block of a design file (a function of the problem, eps, delta and the exact delta)."""
    lo, hi = check_bounds(eps)
    return {
        "notion": design.privacy,
        "eps": eps,
        "delta": delta,
        "certified_delta": frac_str(certified),
        "certified_delta_float": float(certified),
        "exp_eps_lower": frac_str(lo),
        "exp_eps_upper": frac_str(hi),
    }


def design_from_spec(spec: Any) -> Any:
    """The problem a design file names, rebuilt (and fully re-validated) from its spec."""
    if not isinstance(spec, dict):
        raise ValueError("design file 'problem' must be a mapping (NoiseDesign.spec())")
    kinds: dict[str, Callable[[dict[str, Any]], Any]] = {
        "noise": NoiseDesign.from_spec,
        "mechanism": MechanismDesign.from_spec,
    }
    kind = spec.get("kind", "noise")
    if kind not in kinds:
        raise ValueError(f"design file 'problem.kind' must be one of {', '.join(sorted(kinds))}; got {shown(kind)}")
    return kinds[kind](spec)
