"""The additive design as plain data and text: :func:`spec` (JSON-ready), :func:`describe`, :func:`budget_text`."""

from __future__ import annotations

from typing import Any

from optnoise.design.additive_eval import ADDITIVE

__all__ = ["budget_text", "describe", "problem_lines", "spec"]


def spec(design: Any) -> dict[str, Any]:
    """The design as plain data (JSON-ready)."""
    return {
        "release": ADDITIVE,
        "eps": design.eps,
        "delta": design.delta,
        "neighborhood": design.neighborhood.to_dict(),
        "shifts": design.shifts.tolist(),
        "directed": design.neighborhood.directed,
        "metric": design.metric,
        "cost": None if design.cost is None else design.cost.tolist(),
        "privacy": design.privacy,
        "objective": design.objective,
        **({"max_distortion": design.max_distortion} if design.max_distortion is not None else {}),
        "support": design.support,
        **({"profile": [list(p) for p in design.profile]} if design.profile is not None else {}),
        **({"rdp": [list(p) for p in design.rdp]} if design.rdp is not None else {}),
        **({"rho": design.rho} if design.rho is not None else {}),
        **({"alphas": list(design.alphas)} if design.alphas is not None else {}),
        **(
            {"compositions": design.compositions, "discretization": design.discretization}
            if design.compositions is not None
            else {}
        ),
    }


def budget_text(design: Any) -> str:
    """The design's budget as ``name=value`` text (profile, rdp, rho or eps and delta)."""
    if design.profile is not None:
        return f"profile={list(design.profile)}"
    if design.rdp is not None:
        return f"rdp={list(design.rdp)}"
    if design.rho is not None:
        return f"rho={design.rho}"
    k = f", compositions={design.compositions}" if design.compositions is not None else ""
    return f"eps={design.eps}, delta={design.delta}{k}"


def problem_lines(design: Any) -> list[str]:
    """The ``problem`` and ``neighbours`` lines ``optnoise solve`` prints for this release."""
    return [
        f"problem     q + eta on the integers (release additive)  {budget_text(design)}",
        f"neighbours  {design.neighborhood.describe()}: shifts {design.shifts.tolist()}",
    ]


def describe(design: Any) -> str:
    budget = budget_text(design)
    return (
        f"NoiseDesign(release='additive', {budget}, neighborhood={design.neighborhood.describe()}, "
        f"metric={design.metric!r}, privacy={design.privacy!r}"
        + (f", support={design.support})" if design.support is not None else ")")
    )
