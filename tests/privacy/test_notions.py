"""The notion registry (optnoise.privacy.notions) and the Budget that looks its notion up."""

from __future__ import annotations

import pytest

from optnoise.privacy.budget import BUDGET_NOTIONS, Budget
from optnoise.privacy.fields import BUDGET_FIELDS
from optnoise.privacy.notions import NOTION_REGISTRY, budget_fields, get_notion


def test_a_budget_of_an_unknown_notion_falls_into_no_branch():
    # Budget tested self.privacy in every method, an unknown value falling into the zCDP branch
    for bad in ("nope", "dp"):
        with pytest.raises(ValueError, match="privacy must be one of"):
            Budget(bad).spec()
    with pytest.raises(ValueError, match="privacy must be one of"):
        Budget("nope").achieved(None, None)


def test_every_field_belongs_to_its_notion_and_only_budget_notions_have_a_budget():
    # the fields of the registered notions are the table's, in its order
    assert budget_fields() == BUDGET_FIELDS
    for f in BUDGET_FIELDS:
        assert f in get_notion(f.notion).fields
    assert BUDGET_NOTIONS == tuple(k for k, v in NOTION_REGISTRY.items() if not v.takes_eps)
    # the row kind each (eps, delta) notion solves with, and its indicators, agree
    for notion in NOTION_REGISTRY.values():
        if notion.takes_eps:
            assert notion.lp in ("dp", "pdp") and notion.indicators == (notion.lp == "pdp")
    # certification covers the single (eps, delta) notions (a composed result certifies its single release)
    assert [k for k, v in NOTION_REGISTRY.items() if v.certifies] == ["pdp", "pdp-kadam", "dp"]
    with pytest.raises(ValueError, match="privacy must be one of 'pdp', 'pdp-kadam', 'dp'.*; got 'x'"):
        get_notion("x")
