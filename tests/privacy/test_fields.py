"""The table of budget fields (optnoise.privacy.fields) against what takes them: one declaration serves all."""

from __future__ import annotations

import inspect

from optnoise.design.noise import DESIGN_NOTIONS, RELEASE_FIELDS, NoiseDesign
from optnoise.privacy.budget import _FIELDS, BUDGET_NOTIONS
from optnoise.privacy.fields import BUDGET_FIELD_NAMES, BUDGET_FIELDS, FIELD_KINDS, fields_of

#: NoiseDesign's keywords that are not budget fields (the problem, the objective and the release).
CORE = {"self", "n", "eps", "delta", "neighborhood", "metric", "privacy", "objective", "max_distortion", "shape"}


def test_the_table_is_exactly_noise_designs_budget_keywords():
    # the release's own keywords (support, sensitivity, ...) are the release registry's, not budget fields
    params = set(inspect.signature(NoiseDesign.__init__).parameters) - CORE - {"release", *RELEASE_FIELDS}
    assert params == set(BUDGET_FIELD_NAMES) and len(BUDGET_FIELD_NAMES) == len(set(BUDGET_FIELD_NAMES))
    for f in BUDGET_FIELDS:
        assert f.notion in DESIGN_NOTIONS and f.kind in FIELD_KINDS and f.help
        assert f.grid == (f.kind in ("int", "real"))


def test_budget_holds_the_fields_of_its_notions():
    assert _FIELDS == fields_of(BUDGET_NOTIONS) == ("profile", "rdp", "rho", "alphas")
    assert fields_of("composed") == ("compositions", "discretization")


def test_a_spec_round_trip_keeps_every_field():
    from optnoise.privacy.neighborhood import Neighborhood

    design = NoiseDesign(
        n=6,
        eps=1.0,
        delta=1e-5,
        neighborhood=Neighborhood.bd(1),
        privacy="composed",
        compositions=4,
        discretization=1e-3,
    )
    back = NoiseDesign.from_spec(design.spec())
    assert (back.compositions, back.discretization) == (4, 1e-3)
    zcdp = NoiseDesign(n=6, neighborhood=Neighborhood.bd(1), privacy="zcdp", rho=0.5, alphas=[2.0, 4.0])
    assert NoiseDesign.from_spec(zcdp.spec()).budget == zcdp.budget
