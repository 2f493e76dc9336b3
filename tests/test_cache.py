"""On-disk result caches shared by NoiseDesign and MechanismDesign."""

import json

from optnoise import MechanismDesign, Neighborhood, NoiseDesign
from optnoise.cache import cache_path, load_cached, problem_key, store_cached


def test_key_is_stable_and_sensitive():
    spec = {"n": 8, "eps": 1.0}
    assert problem_key(spec, {"solver": "highs"}) == problem_key(dict(reversed(spec.items())), {"solver": "highs"})
    assert problem_key(spec, {"solver": "highs"}) != problem_key(spec, {"solver": "cbc"})
    assert len(problem_key(spec, {})) == 24
    assert cache_path(None, "k") is None


def test_store_load_and_corrupt_entries(tmp_path):
    path = cache_path(tmp_path / "c", "abc")
    assert load_cached(path, dict) is None
    store_cached(path, {"x": 1})
    assert load_cached(path, dict) == {"x": 1} and not path.with_suffix(".tmp").exists()
    path.write_text("{not json")
    assert load_cached(path, dict) is None and not path.exists()  # deleted, to be solved again

    def refuse(data):
        raise ValueError("does not match")

    store_cached(path, {"x": 1})
    assert load_cached(path, refuse) is None and not path.exists()


def test_both_designs_hit_their_cache(tmp_path):
    nd = NoiseDesign(n=5, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(1), privacy="dp")
    md = MechanismDesign(n=5, eps=1.0, delta=0.1)
    for d in (nd, md):
        first = d.solve(cache=tmp_path)
        entry = tmp_path / f"{d.key(solver='highs', time_limit=None, mip_gap=1e-9)}.json"
        assert entry.exists() and json.loads(entry.read_text())["status"] == "optimal"
        assert d.solve(cache=tmp_path).to_dict()["solve_time_s"] == first.solve_time
