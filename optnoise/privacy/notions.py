"""The privacy notions as objects: one :class:`Notion` per value of ``privacy=``, in one registry.

A notion owns what the rest of the package would otherwise test its name for: its budget
fields (:mod:`optnoise.privacy.fields`) and their validation, whether it takes ``(eps, delta)``,
the pair rows its LPs add (the hockey stick of ``"dp"``, the indicators of ``"pdp"``, shared ones
for ``"pdp-kadam"``), its budget behaviour (:mod:`optnoise.privacy.budget_kinds`: spec keys,
model size, conic solve, ``achieved`` and its check), how it is
solved and how it certifies. Code below the registry reads these attributes; it does not compare
notion names.

``NoiseDesign(privacy="...")`` looks its notion up once (:func:`get_notion`): an unknown name is a
``ValueError`` listing the known ones.

**Adding a notion.** Write its behaviour (a :class:`~optnoise.privacy.budget_kinds.BudgetKind` when its budget is not
one ``(eps, delta)``, with its :class:`~optnoise.privacy.fields.BudgetField` s) in one module and
call :func:`register_notion` with a :class:`Notion`. Its fields become ``NoiseDesign`` keywords,
spec and result-file keys, sweep-row columns and ``--NAME`` flags of ``solve``, ``sweep`` and
``certify`` (:func:`budget_fields`); its name a value of ``--privacy``.
"""

from __future__ import annotations

from dataclasses import dataclass

from optnoise.privacy.budget_kinds import BudgetKind, ProfileKind, RdpKind, ZcdpKind
from optnoise.privacy.fields import FIELDS_BY_NOTION, BudgetField

__all__ = [
    "Notion",
    "NOTION_REGISTRY",
    "register_notion",
    "unregister_notion",
    "get_notion",
    "notion_names",
    "budget_fields",
]


@dataclass(frozen=True)
class Notion:
    """One privacy notion.

    Attributes
    ----------
    name : str
        The value of ``privacy=`` and ``--privacy``.
    summary : str
        One line for the docs table and ``--help``.
    route : str
        How its design is solved: ``"lp"``, ``"milp"``, ``"conic"`` (convex, certified bound) or
        ``"search"`` (the composed search over LPs).
    lp : str
        The notion of the ``(eps, delta)`` LP/MILP rows it solves with (``"dp"`` or ``"pdp"``); a
        composed design solves ``"dp"`` LPs. Empty for a budget notion.
    indicators : bool
        Its rows are the per-output leak indicators of Definition 2 (a MILP; ``lp="pdp"``); otherwise the
        hockey stick (an LP).
    shared : bool
        ``pdp-kadam``: one leak indicator per noise value shared by every shift (the printed MILP).
    budget : BudgetKind or None
        The behaviour of a budget that is not one ``(eps, delta)`` (``Budget``); ``None`` for the
        ``(eps, delta)`` notions.
    fields : tuple of BudgetField
        The budget fields it takes besides or instead of ``(eps, delta)``.
    composed : bool
        The guarantee is of the k-fold composition (``compositions``); solved, described,
        achieved and certified by :mod:`optnoise.design.composed`.
    certifies : bool
        A result certifies by the exact per-pair check of :mod:`optnoise.deploy.certify` (one
        ``(eps, delta)``); a composed result certifies its single release and recomputes the
        composition (:meth:`~optnoise.design.result.DesignResult.certify`); the budget notions are
        re-verified only.
    achieved : str
        What :attr:`~optnoise.design.result.DesignResult.achieved` holds, keyed how.
    """

    name: str
    summary: str
    route: str
    lp: str = ""
    indicators: bool = False
    shared: bool = False
    budget: BudgetKind | None = None
    fields: tuple[BudgetField, ...] = ()
    composed: bool = False
    certifies: bool = True
    achieved: str = "the largest delta per shift, keyed by shift"

    @property
    def takes_eps(self) -> bool:
        """True when the budget is ``(eps, delta)`` (every notion but the budget ones)."""
        return self.budget is None

    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)


def _fields(name: str) -> tuple[BudgetField, ...]:
    return FIELDS_BY_NOTION.get(name, ())


#: Every notion by name, in the order ``--help`` and the docs list them.
NOTION_REGISTRY: dict[str, Notion] = {}


def register_notion(notion: Notion) -> Notion:
    """Add ``notion`` to the registry (replacing one of the same name); returns it."""
    if not isinstance(notion, Notion):
        raise ValueError(f"notion must be a Notion; got {type(notion).__name__}")
    NOTION_REGISTRY[notion.name] = notion
    return notion


def unregister_notion(name: str) -> None:
    """Remove a notion (tests that register a toy one undo it)."""
    NOTION_REGISTRY.pop(name, None)


def notion_names() -> tuple[str, ...]:
    """The names of every registered notion."""
    return tuple(NOTION_REGISTRY)


def get_notion(name: object, parameter: str = "privacy") -> Notion:
    """The notion called ``name``; a ``ValueError`` naming ``parameter`` and the known names otherwise."""
    found = NOTION_REGISTRY.get(name) if isinstance(name, str) else None
    if found is None:
        known = ", ".join(repr(k) for k in NOTION_REGISTRY)
        raise ValueError(f"{parameter} must be one of {known}; got {name!r}")
    return found


def budget_fields() -> tuple[BudgetField, ...]:
    """The fields of every registered notion, in registry order: the flags, spec keys and sweep columns."""
    return tuple(f for n in NOTION_REGISTRY.values() for f in n.fields)


for _builtin in (
    Notion(
        "pdp",
        "Definition 2 per shift: the mass of outputs with f(eta) > e^eps f(eta+mu) is at most delta",
        "milp",
        lp="pdp",
        indicators=True,
    ),
    Notion(
        "pdp-kadam",
        "the published MILP (13a)-(13h): one indicator per noise value shared by every shift",
        "milp",
        lp="pdp",
        indicators=True,
        shared=True,
    ),
    Notion("dp", "(eps, delta)-DP: the hockey stick per shift is at most delta", "lp", lp="dp"),
    Notion(
        "profile",
        "the dp hockey stick at every listed (eps_j, delta_j) at once",
        "lp",
        budget=ProfileKind(),
        fields=_fields("profile"),
        certifies=False,
        achieved="'profile' (largest relative excess) and 'dp@<eps_j>'",
    ),
    Notion(
        "rdp",
        "Renyi DP at the listed orders, D_alpha <= eps_alpha",
        "conic",
        budget=RdpKind(),
        fields=_fields("rdp"),
        certifies=False,
        achieved="'rdp' (largest D_alpha / eps_alpha) and 'rdp@<alpha>'",
    ),
    Notion(
        "zcdp",
        "rho-zCDP: D_alpha <= rho alpha at every order alpha > 1",
        "conic",
        budget=ZcdpKind(),
        fields=_fields("zcdp"),
        certifies=False,
        achieved="'zcdp' (achieved rho over every order), 'alpha*', 'grid_margin'",
    ),
    Notion(
        "composed",
        "the adaptive k-fold composition is (eps, delta)-DP (PLD accounting)",
        "search",
        lp="dp",
        fields=_fields("composed"),
        composed=True,
        certifies=False,
        achieved="the composed delta at eps, the single-release delta and eps",
    ),
):
    register_notion(_builtin)
