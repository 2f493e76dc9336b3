"""The budget fields: every argument of a noise design beyond ``(eps, delta)``, declared once.

A design's budget is one ``(eps, delta)`` for the single-release notions; the other
notions take their own fields instead or besides (``profile``; ``rdp``; ``rho`` and
``alphas`` of zCDP; ``compositions`` and ``discretization`` of a composed design).
:data:`BUDGET_FIELDS` lists them, in order, with what each holds. Everything that
names these fields is derived from it, so that a field added here reaches every
place at once: the keywords :meth:`~optnoise.design.noise.NoiseDesign.from_spec`
reads back, :class:`~optnoise.privacy.budget.Budget`'s fields, the ``solve``,
``sweep`` and ``certify`` flags of the command line (``--NAME``), the keys a
result file is read with, and a sweep row's columns (every field in every row).
"""

from __future__ import annotations

from dataclasses import dataclass

from optnoise.privacy.accounting import DISCRETIZATION

__all__ = ["BudgetField", "BUDGET_FIELDS", "BUDGET_FIELD_NAMES", "FIELDS_BY_NOTION", "FIELD_KINDS", "fields_of"]

#: What a field's value is: one integer, one real number, ``X:Y`` pairs, or a list of reals.
FIELD_KINDS = ("int", "real", "pairs", "reals")


@dataclass(frozen=True)
class BudgetField:
    """One budget field.

    Attributes
    ----------
    name : str
        The :class:`~optnoise.design.noise.NoiseDesign` keyword, spec and result-file key,
        sweep-row column and (as ``--name``) command-line flag.
    notion : str
        The privacy notion that takes it (``privacy=notion``).
    kind : {"int", "real", "pairs", "reals"}
        One integer or real number (a sweep may vary it over a grid), a list of
        ``(x, y)`` pairs written ``X:Y,X:Y``, or a list of reals written ``A,B,C``
        (both one value for every point of a sweep).
    help : str
        What it means, with its default when it has one (the command line's help).
    """

    name: str
    notion: str
    kind: str
    help: str

    @property
    def grid(self) -> bool:
        """True when a sweep may vary the field over a grid (one number per point)."""
        return self.kind in ("int", "real")


BUDGET_FIELDS: tuple[BudgetField, ...] = (
    BudgetField("profile", "profile", "pairs", "points (eps, delta) of the privacy profile, EPS:DELTA,EPS:DELTA"),
    BudgetField("rdp", "rdp", "pairs", "Renyi orders and levels (alpha, eps_alpha), ALPHA:EPS,ALPHA:EPS"),
    BudgetField("rho", "zcdp", "real", "the rho of rho-zCDP (required)"),
    BudgetField(
        "alphas",
        "zcdp",
        "reals",
        "Renyi orders > 1 at which rho-zCDP is imposed, A,B,C (default: a geometric grid up to past the "
        "reference discrete Gaussian's D_inf / rho)",
    ),
    BudgetField(
        "compositions",
        "composed",
        "int",
        "the number k of releases whose adaptive composition must be (eps, delta)-DP (required)",
    ),
    BudgetField(
        "discretization",
        "composed",
        "real",
        f"the privacy-loss grid h of the composition accounting (default {DISCRETIZATION:g}; composed "
        "epsilons are upper bounds accurate to about k h)",
    ),
)

#: The fields' names, in :data:`BUDGET_FIELDS` order.
BUDGET_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in BUDGET_FIELDS)


#: The fields of each notion, in table order.
FIELDS_BY_NOTION: dict[str, tuple[BudgetField, ...]] = {}
for _field in BUDGET_FIELDS:
    FIELDS_BY_NOTION[_field.notion] = FIELDS_BY_NOTION.get(_field.notion, ()) + (_field,)


def fields_of(notions: tuple[str, ...] | str) -> tuple[str, ...]:
    """The names of the fields that ``notions`` (one notion or several) take, in table order."""
    wanted = (notions,) if isinstance(notions, str) else tuple(notions)
    chosen = {f for n in wanted for f in FIELDS_BY_NOTION.get(n, ())}
    return tuple(f.name for f in BUDGET_FIELDS if f in chosen)
