"""The composed certificate of a certified composed design: stated, verified, saved, re-verified on load.

The composed delta is checked against dp-accounting built directly from the two PMFs of the pair (an
independent route: for a symmetric PMF under +-1 every protected pair has the same loss distribution).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from optnoise import Neighborhood, NoiseDesign
from optnoise.deploy import CertifiedDesign, CertifiedMechanism, load_design
from optnoise.deploy.files import file_digest
from optnoise.design.clamp import clamp_matrix
from optnoise.design.result import DesignResult
from optnoise.privacy import accounting
from optnoise.privacy.exact import check_bounds

#: 20 releases at (2, 1e-4); a symmetric geometric-like PMF at 0.14 per release meets it with 2% to spare
#: (its one release is 0.14-DP, so its single-release delta at eps = 2 is exactly 0)
K, EPS, DELTA, E0, N = 20, 2.0, 1e-4, 0.14, 10


def modulo_pmf(e0: float, n: int = N) -> np.ndarray:
    x = np.arange(n + 1)
    f = np.exp(-e0 * np.minimum(x, n + 1 - x))
    return f / f.sum()


def composed_design(**kw):
    args = {"n": N, "eps": EPS, "delta": DELTA, "neighborhood": Neighborhood.bd(1), "privacy": "composed"}
    return NoiseDesign(**{**args, "compositions": K, **kw})


def independent_delta(f: np.ndarray, k: int, eps: float, h: float = 1e-4) -> float:
    """dp-accounting from the two PMFs ``f`` and ``f(.+1)``, composed k times."""
    g = np.roll(f, -1)
    lp = {i: math.log(v) for i, v in enumerate(f)}
    lq = {i: math.log(v) for i, v in enumerate(g)}
    pld = pld_lib.from_two_probability_mass_functions(lp, lq, value_discretization_interval=h)
    return float(pld.self_compose(k).get_delta_for_epsilon(eps))


@pytest.fixture(scope="module")
def result():
    res = DesignResult(composed_design(), "feasible", modulo_pmf(E0), "test", 0.0, None)
    assert res.status == "feasible" and res.verify()
    return res


@pytest.fixture(scope="module")
def certified(result):
    return result.certify()


def with_digest(doc):
    doc = dict(doc)
    doc["sha256"] = file_digest(doc)
    return doc


def legacy(doc):
    """The older form of a composed file: the block in ``repair``, with the single-release target."""
    doc = json.loads(json.dumps(doc))
    if "composed" in doc:
        block = doc.pop("composed")
        block.pop("accounting")
        block["single_release_delta"] = doc["certificate"]["delta"]
        doc["repair"]["composed"] = block
    return doc


def write(tmp_path, doc, name="d.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_certificate_states_and_verifies_the_k_fold_guarantee(certified):
    c = certified.composed
    assert (c["compositions"], c["eps"], c["delta"], c["discretization"]) == (K, EPS, DELTA, 1e-4)
    want = independent_delta(certified.pmf_float, K, EPS)
    assert c["composed_delta"] <= DELTA
    assert c["composed_delta"] == pytest.approx(want, rel=1e-2)
    assert certified.check_composed() == pytest.approx(c["composed_delta"], rel=1e-9)
    # beside it, the exact single release (0.14-DP, so delta 0 at eps = 2)
    assert certified.certified_delta == 0 and certified.eps == EPS and certified.verify()


def test_summary_states_the_composed_guarantee_not_the_rounding_headroom(certified):
    text = certified.summary()
    assert "20 releases" in text and "target 0.0001" in text and f"{certified.composed['composed_delta']:.6g}" in text
    assert "1e-15" not in text  # the single release's internal headroom used to read as its "target"
    assert "one release eps=2  delta=0" in text


def test_design_file_has_a_composed_block_and_round_trips(certified, tmp_path):
    path = certified.save(tmp_path / "d.json")
    doc = json.loads(path.read_text())
    assert doc["composed"] == certified.composed and "composed" not in doc["repair"]
    again = load_design(path)
    assert isinstance(again, CertifiedDesign) and again.composed == certified.composed
    assert again.to_dict() == doc and again.verify()


def _edited(certified, e0):
    """A consistent file of other weights (fresh exact certificate, fresh digest) with the old composed block."""
    f = modulo_pmf(e0)
    D = certified.denominator
    w = np.floor(f * D).astype(np.int64)
    w[0] += D - int(w.sum())
    layout = certified.layout
    got = layout.check(w.ravel(), D, check_bounds(EPS))
    assert got <= certified.delta  # the single-release certificate still holds: only the composed one is stale
    kw = {k: getattr(certified, k) for k in ("design", "bits", "eps", "delta", "repair", "solver")}
    return CertifiedDesign(weights=w, certified_delta=got, composed=dict(certified.composed), **kw).to_dict()


@pytest.mark.parametrize("legacy", [False, True])
def test_edited_weights_with_fresh_digest_are_refused(certified, tmp_path, legacy):
    """Weights edited and re-digested used to keep their old composed delta (summary printed it)."""
    for e0, why in ((0.2, "do not meet their composed guarantee"), (0.139, "does not match a fresh recomputation")):
        doc = _edited(certified, e0)
        field = "composed"
        if legacy:
            doc, field = globals()["legacy"](doc), "repair.composed"
        with pytest.raises(ValueError, match=rf"'{field}\.composed_delta'.*{why}"):
            load_design(write(tmp_path, with_digest(doc)))


def test_legacy_block_is_reverified_and_moved(certified, tmp_path):
    doc = legacy(certified.to_dict())
    cd = load_design(write(tmp_path, with_digest(doc)))
    assert cd.composed == certified.composed and "composed" not in cd.repair
    assert "20 releases" in cd.summary()


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda b: "1e-5", "repair.composed"),
        (lambda b: {**b, "composed_delta": "9e-05"}, "repair.composed.composed_delta"),
        (lambda b: {**b, "composed_delta": None}, "repair.composed.composed_delta"),
        (lambda b: {**b, "compositions": "20"}, "repair.composed"),
        (lambda b: {**b, "compositions": 20.0}, "repair.composed"),
        (lambda b: {**b, "eps": 1.0}, "repair.composed.eps"),
        (lambda b: {**b, "delta": 0.0}, "repair.composed.delta"),
        (lambda b: {**b, "delta": 1e-6}, "repair.composed.composed_delta"),
        (lambda b: {**b, "discretization": 0.5}, "repair.composed"),
        (lambda b: {**b, "single_release_delta": 0.5}, "repair.composed.single_release_delta"),
        (lambda b: {**b, "note": 1}, "repair.composed.note"),
        (lambda b: {k: v for k, v in b.items() if k != "eps"}, "repair.composed.eps"),
    ],
)
def test_malformed_legacy_block_is_a_clean_error_on_load(certified, tmp_path, edit, field):
    """A composed block holding a string used to load, then crash summary() with a TypeError."""
    doc = legacy(certified.to_dict())
    doc["repair"]["composed"] = edit(doc["repair"]["composed"])
    with pytest.raises(ValueError, match=f"'{field}'"):
        load_design(write(tmp_path, with_digest(doc)))


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda b: None, "composed"),
        (lambda b: {**b, "accounting": "exact"}, "composed.accounting"),
        (lambda b: {**b, "single_release_delta": 1e-15}, "composed.single_release_delta"),
        (lambda b: {k: v for k, v in b.items() if k != "accounting"}, "composed.accounting"),
        (lambda b: {**b, "composed_delta": float("nan")}, "composed.composed_delta"),
    ],
)
def test_malformed_block_is_a_clean_error_on_load(certified, tmp_path, edit, field):
    doc = certified.to_dict()
    doc["composed"] = edit(doc["composed"])
    with pytest.raises(ValueError, match=f"'{field}'"):
        load_design(write(tmp_path, with_digest(doc)))


def test_composed_block_beside_legacy_block_is_refused(certified, tmp_path):
    doc = certified.to_dict()
    doc["repair"]["composed"] = dict(doc["composed"])
    with pytest.raises(ValueError, match="'repair.composed'"):
        load_design(write(tmp_path, with_digest(doc)))


def test_single_release_files_are_unchanged(tmp_path):
    cd = NoiseDesign(n=6, eps=1.0, delta=0.05, neighborhood=Neighborhood.bd(1), privacy="dp").solve().certify()
    assert cd.composed is None and "composed" not in cd.to_dict()
    assert load_design(cd.save(tmp_path / "s.json")).composed is None


def test_clamped_composed_design_certifies_as_its_matrix(tmp_path):
    """Clamp + composed certify() used to fail: 'pmf must have 2n+1 entries, got 121'."""
    v = np.arange(-N, N + 1)
    f = np.exp(-0.2 * np.abs(v))
    f /= f.sum()
    d = composed_design(release="clamp", metric="mse", compositions=4, eps=1.0, delta=2e-2)
    res = DesignResult(d, "feasible", f, "test", 0.0, None)
    assert res.status == "feasible"
    cd = res.certify()
    assert isinstance(cd, CertifiedMechanism) and cd.verify()
    c = cd.composed
    assert c["compositions"] == 4 and 0 < c["composed_delta"] <= 2e-2
    # the composition of the solver's (unrounded) clamped matrix, from its own pairs
    want = accounting.compose_pairs(accounting.mechanism_pairs(clamp_matrix(f, N), d.pairs), 4, warn=False)
    assert c["composed_delta"] == pytest.approx(want.delta(1.0), rel=1e-6)
    again = load_design(cd.save(tmp_path / "c.json"))
    assert again.composed == c and "4 releases" in again.summary()


def test_certification_error_lives_below_design_and_does_not_depend_on_the_hook(monkeypatch):
    """``CertificationError`` is one class (privacy layer, re-exported by deploy), raised by a composed result
    whatever certifier is installed: the design layer no longer finds it through ``sys.modules``."""
    import optnoise
    from optnoise.deploy import certify as deploy_certify
    from optnoise.design import result as result_module
    from optnoise.privacy.verification import CertificationError

    assert deploy_certify.CertificationError is CertificationError is optnoise.CertificationError
    # a certifier defined outside optnoise.deploy (a test double) leaves the error class unchanged
    monkeypatch.setattr(result_module, "_certifier", lambda res, **kw: None)
    unproven = DesignResult(composed_design(), "time_limit", modulo_pmf(E0), "test", 0.0, None)
    with pytest.raises(CertificationError, match="status 'time_limit'"):
        unproven.certify()
