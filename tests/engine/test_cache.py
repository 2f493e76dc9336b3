"""The shared on-disk result cache: plain keyed data and design results (NoiseDesign, MechanismDesign)."""

import json

from optnoise import MechanismDesign, Neighborhood, NoiseDesign
from optnoise.engine.cache import (
    CACHE_FORMAT,
    CACHE_VERSION,
    cache_key,
    cache_load,
    cache_store,
    cached,
    entry_path,
    load_entry,
    problem_key,
    store_entry,
)


def test_key_is_stable_and_depends_on_every_field():
    k = cache_key("design", {"n": 8, "eps": 1.0})
    assert k == cache_key("design", {"eps": 1.0, "n": 8})  # order-free
    assert len(k) == 24 and int(k, 16) >= 0
    assert k != cache_key("design", {"n": 8, "eps": 1.5})
    assert k != cache_key("lattice_lp", {"n": 8, "eps": 1.0})
    assert isinstance(CACHE_VERSION, int)


def test_cached_computes_once_and_respects_accept(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return {"value": len(calls)}

    assert cached(tmp_path, "a", compute) == {"value": 1}
    assert cached(tmp_path, "a", compute) == {"value": 1} and len(calls) == 1
    # a result that is not accepted (e.g. a time limit) is returned but not stored
    assert cached(tmp_path, "b", compute, accept=lambda d: False) == {"value": 2}
    assert cache_load(tmp_path, "b") is None
    assert cached(None, "a", compute) == {"value": 3}  # no folder: no cache


def test_corrupt_entry_is_dropped(tmp_path):
    cache_store(tmp_path, "k", {"x": [1.0, 2.0]})
    assert json.loads((tmp_path / "k.json").read_text()) == {"x": [1.0, 2.0]}
    (tmp_path / "k.json").write_text("{not json")
    assert cache_load(tmp_path, "k") is None
    assert not (tmp_path / "k.json").exists()
    assert not list(tmp_path.glob("*.tmp"))


class _Res:
    def __init__(self, status, payload=1):
        self.status = status
        self.payload = payload

    def to_dict(self):
        return {"status": self.status, "payload": self.payload}


def _rebuild(entry):
    """The engine hands the whole entry (``result`` and ``proof``) to the caller's rebuild."""
    data = entry["result"]
    return _Res(data["status"], data["payload"])


def test_key_is_stable_and_sensitive():
    spec = {"n": 8, "eps": 1.0}
    assert problem_key(spec, {"solver": "highs"}) == problem_key(dict(reversed(spec.items())), {"solver": "highs"})
    assert problem_key(spec, {"solver": "highs"}) != problem_key(spec, {"solver": "cbc"})
    assert len(problem_key(spec, {})) == 24
    assert entry_path(None, "k") is None


def test_entries_are_checked_on_load(tmp_path):
    spec = {"n": 3}
    path = entry_path(tmp_path / "c", "abc")
    assert load_entry(path, spec, _rebuild) is None
    store_entry(path, spec, _Res("optimal", 7))
    assert json.loads(path.read_text())["cache_format"] == CACHE_FORMAT
    assert load_entry(path, spec, _rebuild).payload == 7
    assert load_entry(path, {"n": 4}, _rebuild) is None  # another problem's entry is not used
    path.write_text("{not json")
    assert load_entry(path, spec, _rebuild) is None
    store_entry(path, spec, _Res("optimal"))

    def refuse(data):
        raise ValueError("does not match")

    assert load_entry(path, spec, refuse) is None
    # a rebuild that cannot prove the stored status returns None: the entry is solved again
    assert load_entry(path, spec, lambda entry: None) is None
    # a result whose status changed on rebuilding (an optimal claim that is no longer proven) is not used
    assert load_entry(path, spec, lambda entry: _Res("feasible")) is None
    store_entry(path, spec, _Res("optimal", 5), proof={"kind": "bound", "bound": 1.0})
    assert json.loads(path.read_text())["proof"] == {"kind": "bound", "bound": 1.0}
    # unverified and failed results are neither written nor used
    other = entry_path(tmp_path / "c", "def")
    store_entry(other, spec, _Res("unverified"))
    assert not other.exists()
    other.write_text(json.dumps({"cache_format": CACHE_FORMAT, "spec": spec, "result": _Res("error").to_dict()}))
    assert load_entry(other, spec, _rebuild) is None


def test_both_designs_hit_their_cache(tmp_path):
    nd = NoiseDesign(n=5, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(1), privacy="dp")
    md = MechanismDesign(n=5, eps=1.0, delta=0.1)
    for d in (nd, md):
        first = d.solve(cache=tmp_path)
        entry = tmp_path / f"{d.key(solver='auto', time_limit=None, mip_gap=1e-9)}.json"
        assert entry.exists() and json.loads(entry.read_text())["result"]["status"] == "optimal"
        assert d.solve(cache=tmp_path).to_dict()["solve_time_s"] == first.solve_time
