"""The shared on-disk result cache."""

import json

from optnoise.cache import CACHE_VERSION, cache_key, cache_load, cache_store, cached


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
