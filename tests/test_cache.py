"""On-disk result caches shared by NoiseDesign and MechanismDesign."""

import json

from optnoise import MechanismDesign, Neighborhood, NoiseDesign
from optnoise.cache import CACHE_FORMAT, entry_path, load_entry, problem_key, store_entry


class _Res:
    def __init__(self, status, payload=1):
        self.status = status
        self.payload = payload

    def to_dict(self):
        return {"status": self.status, "payload": self.payload}


def _rebuild(data):
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
        entry = tmp_path / f"{d.key(solver='highs', time_limit=None, mip_gap=1e-9)}.json"
        assert entry.exists() and json.loads(entry.read_text())["result"]["status"] == "optimal"
        assert d.solve(cache=tmp_path).to_dict()["solve_time_s"] == first.solve_time
