"""Deploy: exactly certified designs, design files, the exact sampler and OpenDP export.

* :mod:`~optnoise.deploy.certify`: :func:`certify_result`, a solved design to exact weights
* :mod:`~optnoise.deploy.certified`: :class:`CertifiedDesign`, :class:`CertifiedMechanism`, :func:`load_design`
* :mod:`~optnoise.deploy.files`: the design file format and its digest
* :mod:`~optnoise.deploy.sampler`: exact sampling from integer weights
* :mod:`~optnoise.deploy.opendp`: OpenDP measurements carrying the certificate
"""

from optnoise.deploy.certified import CertifiedDesign, CertifiedMechanism, load_design
from optnoise.deploy.certify import CertificationError, certify_result

__all__ = ["CertifiedDesign", "CertifiedMechanism", "CertificationError", "certify_result", "load_design"]
