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
from optnoise.engine.validation import check_delta, check_eps, shown
from optnoise.privacy.exact import check_bounds, frac_str

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "FILE_FIELDS",
    "OPTIONAL_FIELDS",
    "file_digest",
    "certificate_block",
    "check_certificate",
    "read_certificate",
    "design_document",
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


def design_document(body: dict[str, Any]) -> dict[str, Any]:
    """A design file from its fields (all of :data:`FILE_FIELDS` but the header): plain JSON, with its digest."""
    from optnoise import __version__

    doc = {"format": FORMAT, "format_version": FORMAT_VERSION, "optnoise_version": __version__, **body}
    doc = json.loads(json.dumps(doc))  # plain JSON values, exactly as a reader will see them
    doc["sha256"] = file_digest(doc)
    return doc


def read_certificate(
    data: dict[str, Any], design: Any, bad: Callable[[str, str], Exception]
) -> tuple[dict[str, Any], float, float]:
    """The ``certificate`` block of a design file and its eps and delta, checked against the problem it names.

    Also checks that ``repair`` and ``solver`` are mappings; ``bad(field, why)`` makes the error.
    """
    for name in ("repair", "solver"):
        if not isinstance(data[name], dict):
            raise bad(name, f"must be a mapping; got {type(data[name]).__name__}")
    cert = data["certificate"]
    if not isinstance(cert, dict):
        raise bad("certificate", f"must be a mapping; got {type(cert).__name__}")
    eps = check_eps(cert.get("eps"), name="design file field 'certificate.eps'")
    delta = check_delta(cert.get("delta"), name="design file field 'certificate.delta'")
    if eps != design.eps:
        raise bad("certificate.eps", f"must be the problem's eps {shown(design.eps)}; got {shown(eps)}")
    if design.objective != "delta" and delta != design.delta:
        raise bad("certificate.delta", f"must be the problem's delta {shown(design.delta)}; got {shown(delta)}")
    return cert, eps, delta


def check_certificate(
    cert: dict[str, Any],
    design: Any,
    eps: float,
    delta: float,
    got: Fraction | float,
    bad: Callable[[str, str], Exception],
) -> Fraction:
    """``got``, the fresh exact re-check of the file's weights, if it meets ``delta`` and equals ``cert``.

    Otherwise ``bad(field, why)`` is raised: the weights leak more than the target, or a certificate
    field differs from the fresh re-check.
    """
    if not isinstance(got, Fraction) or not got <= Fraction(delta):
        got_text = "inf" if not isinstance(got, Fraction) else f"{float(got):.6g}"
        raise bad(
            "weights",
            f"do not meet their certificate: the exact check of the stated problem gives delta {got_text} > "
            f"the certified target {delta:g}",
        )
    fresh = certificate_block(design, eps, delta, got)
    for key, value in fresh.items():
        if cert.get(key) != value:
            raise bad(
                f"certificate.{key}",
                f"does not match a fresh exact re-check of the problem ({value!r} expected, "
                f"{cert.get(key)!r} in the file): the weights do not match their certificate",
            )
    extra = sorted(set(cert) - set(fresh))
    if extra:
        raise bad(f"certificate.{extra[0]}", "is not a field of the certificate")
    return got


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
