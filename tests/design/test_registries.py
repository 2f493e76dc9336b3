"""The notion and release registries: a registered toy notion and toy release reach the API, ``solve`` and
``sweep`` with no other change; unknown names and misplaced fields are refused by name."""

from __future__ import annotations

import csv
import json

import pytest

from optnoise.cli.main import main
from optnoise.design.noise import NoiseDesign
from optnoise.design.releases import ModuloRelease, get_release, register_release, release_names, unregister_release
from optnoise.privacy.neighborhood import Neighborhood
from optnoise.privacy.notions import Notion, get_notion, notion_names, register_notion, unregister_notion


class ToyModulo(ModuloRelease):
    """The modulo release under another name, named in its spec: a release added by one class and one line."""

    name = "toy-modulo"
    summary = "a toy copy of the modulo release"
    in_spec = True


@pytest.fixture
def toys():
    """A toy notion (solved with the dp rows, judged by its own achieved key) and a toy release, registered."""
    register_notion(Notion("toy-dp", "a toy notion solved with the (eps, delta)-DP rows", "lp", lp="dp"))
    register_release(ToyModulo())
    yield
    unregister_notion("toy-dp")
    unregister_release("toy-modulo")


def _solve_json(capsys, *flags: str) -> dict:
    args = ["solve", "--n", "4", "--eps", "1", "--delta", "0.05", "--neighborhood", "bd:1", "--format", "json"]
    assert main([*args, *flags]) == 0
    return json.loads(capsys.readouterr().out)


def test_toy_notion_and_release_reach_solve(toys, capsys):
    ref = _solve_json(capsys, "--privacy", "dp", "--solver", "highs")
    toy = _solve_json(capsys, "--privacy", "toy-dp", "--release", "toy-modulo", "--solver", "highs")
    assert toy["privacy"] == "toy-dp" and toy["release"] == "toy-modulo"
    assert toy["status"] == ref["status"] == "optimal"
    assert toy["distortion"] == pytest.approx(ref["distortion"], abs=1e-9)
    # re-verified independently of the solver: the toy notion is judged by the dp hockey stick
    assert toy["achieved"]["toy-dp"] == pytest.approx(toy["achieved"]["dp"]) and toy["achieved"]["dp"] <= 0.05 * (
        1 + 1e-6
    )
    # the help lists them, derived from the registries
    try:
        main(["solve", "--help"])
    except SystemExit:
        pass
    text = capsys.readouterr().out
    assert "toy-dp" in text and "toy-modulo" in text


def test_toy_notion_and_release_reach_sweep(toys, tmp_path, capsys):
    out = tmp_path / "rows.csv"
    args = ["sweep", "--n", "4", "--eps", "1", "--delta", "0.05", "--neighborhood", "bd:1", "--solver", "highs"]
    assert main([*args, "--privacy", "dp,toy-dp", "--release", "toy-modulo", "--out", str(out), "--quiet"]) == 0
    rows = list(csv.DictReader(out.open()))
    assert [r["privacy"] for r in rows] == ["dp", "toy-dp"]
    assert float(rows[0]["distortion"]) == pytest.approx(float(rows[1]["distortion"]), abs=1e-9)


def test_spec_round_trip_of_a_registered_release(toys):
    d = NoiseDesign(n=4, eps=1.0, delta=0.05, neighborhood=Neighborhood.bd(1), privacy="toy-dp", release="toy-modulo")
    assert d.spec()["release"] == "toy-modulo" and "release='toy-modulo'" in repr(d)
    assert NoiseDesign.from_spec(d.spec()).spec() == d.spec()


def test_unknown_names_list_the_known_ones():
    nb = Neighborhood.bd(1)
    with pytest.raises(ValueError, match="privacy must be one of .*'zcdp'.*'composed'; got 'nope'"):
        NoiseDesign(n=4, eps=1.0, neighborhood=nb, privacy="nope")
    with pytest.raises(
        ValueError, match="release must be one of 'modulo', 'clamp', 'additive', 'grid', 'continuous'; got 'nope'"
    ):
        NoiseDesign(n=4, eps=1.0, neighborhood=nb, release="nope")
    assert set(notion_names()) >= {"pdp", "pdp-kadam", "dp", "profile", "rdp", "zcdp", "composed"}
    assert release_names()[:3] == ("modulo", "clamp", "additive")
    assert get_release("clamp").name == "clamp" and get_notion("zcdp").budget is not None


def test_a_field_names_the_notions_that_take_it():
    # the allowed values are the notions that take the field, not every budget notion (was: profile, rdp, zcdp)
    with pytest.raises(ValueError, match=r"^rho applies only with privacy in zcdp$"):
        NoiseDesign(n=4, eps=1.0, neighborhood=Neighborhood.bd(1), privacy="dp", rho=0.5)
    with pytest.raises(ValueError, match=r"^profile applies only with privacy in profile$"):
        NoiseDesign(n=4, eps=1.0, neighborhood=Neighborhood.bd(1), privacy="pdp", profile=[(1.0, 0.1)])


def test_clamp_refuses_the_notions_it_has_no_rows_for():
    nb = Neighborhood.bd(1)
    with pytest.raises(ValueError, match=r"privacy for release='clamp' must be one of 'pdp', 'dp', 'composed'"):
        NoiseDesign(n=4, eps=1.0, neighborhood=nb, privacy="pdp-kadam", release="clamp")
    with pytest.raises(ValueError, match=r"release='clamp'.*got 'profile'"):
        NoiseDesign(n=4, neighborhood=nb, privacy="profile", profile=[(1.0, 0.1)], release="clamp")
