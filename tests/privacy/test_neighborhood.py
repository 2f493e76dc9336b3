"""Neighborhood: direction, resolution modulo n+1, parsing, and shift sets from data."""

import numpy as np
import pytest

from optnoise import Count, Neighborhood, QuantizedMean
from optnoise.privacy.neighborhood import AggregateQuery


def flat(nb, n):
    return nb.resolve(n).ravel().tolist()


def test_symmetric_by_default_directed_on_request():
    assert flat(Neighborhood.bd(3), 8) == [1, 2, 3, 6, 7, 8]
    assert flat(Neighborhood.bd(3, directed=True), 8) == [1, 2, 3]
    assert flat(Neighborhood.sd(3, directed=True), 7) == [3]
    assert flat(Neighborhood.sd(4), 7) == [4]  # -4 = 4 mod 8: symmetry merges it
    assert flat(Neighborhood.shifts([1, 3, 5]), 9) == [1, 3, 5, 7, 9]
    assert flat(Neighborhood.shifts([-1], directed=True), 4) == [4]


def test_vector_shifts_reduce_per_coordinate():
    nb = Neighborhood.shifts([(1, 2), (3, 5)], directed=True)
    assert nb.dim == 2
    assert nb.resolve(6).tolist() == [[1, 2], [3, 5]]
    sym = Neighborhood.shifts([(1, 0)]).resolve(4).tolist()
    assert sym == [[1, 0], [4, 0]]


@pytest.mark.parametrize(
    "spec, directed, n, want",
    [
        ("sd:3", True, 7, [3]),
        ("bd:2", False, 5, [1, 2, 4, 5]),
        ("shifts:1,3", True, 9, [1, 3]),
        ("shifts:1/2,3/5", True, 6, [1, 2, 3, 5]),
    ],
)
def test_parse(spec, directed, n, want):
    assert Neighborhood.parse(spec, directed=directed).resolve(n).ravel().tolist() == want


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: Neighborhood.bd(0), "mu_bar"),
        (lambda: Neighborhood.sd(-2), "mu"),
        (lambda: Neighborhood.shifts([]), "empty"),
        (lambda: Neighborhood.shifts([0]), "0"),
        (lambda: Neighborhood.shifts([(0, 0)]), "0"),
        (lambda: Neighborhood.shifts([1, 1]), "duplicates"),
        (lambda: Neighborhood.shifts([1.5]), "integers"),
        (lambda: Neighborhood.shifts([(1, 2), 3]), "dimension"),
        (lambda: Neighborhood.shifts([1, -8]).resolve(8), "coincide"),
        (lambda: Neighborhood.bd(5).resolve(4), "out of range"),
        (lambda: Neighborhood.shifts([(1, 1)]).resolve(4, dim=1), "dimension"),
        (lambda: Neighborhood.parse("bd"), "neighborhood"),
        (lambda: Neighborhood.parse("ball:3"), "neighborhood kind"),
        (lambda: Neighborhood.parse("shifts:a,b"), "malformed"),
        (lambda: Neighborhood.parse("bd:3", dim=2), "scalar"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_dict_round_trip():
    nb = Neighborhood.shifts([(1, 2), (3, 5)], directed=True)
    assert Neighborhood.from_dict(nb.to_dict()).resolve(6).tolist() == nb.resolve(6).tolist()
    with pytest.raises(ValueError):
        Neighborhood.from_dict({"directed": True})


def test_from_data_remove_one_matches_generic_callable(rng):
    x = rng.gamma(2.0, 0.3, size=60)
    groups = rng.integers(0, 4, size=60)
    q = QuantizedMean(0.0, 2.0, 10)
    fast = Neighborhood.from_data(x, q, "remove-one", n=10, groups=groups, directed=True)
    slow = Neighborhood.from_data(x, lambda X: q(X), "remove-one", n=10, groups=groups, directed=True)
    assert fast.resolve(10).tolist() == slow.resolve(10).tolist()
    # brute force by hand: Q(X) - Q(X minus one record), over all groups
    want = set()
    for g in np.unique(groups):
        X = x[groups == g]
        for i in range(len(X)):
            d = int(q(X)) - int(q(np.delete(X, i)))
            if d % 11:
                want.add(d % 11)
    assert set(fast.resolve(10).ravel().tolist()) == want


@pytest.mark.parametrize("relation", ["add-one", "replace-one"])
def test_from_data_other_relations_match_generic(rng, relation):
    x = rng.integers(0, 5, size=12).astype(float)
    q = QuantizedMean(0.0, 4.0, 8)
    cands = np.arange(5.0)
    fast = Neighborhood.from_data(x, q, relation, n=8, candidates=cands, directed=True)
    slow = Neighborhood.from_data(x, lambda X: q(X), relation, n=8, candidates=cands, directed=True)
    assert fast.resolve(8).tolist() == slow.resolve(8).tolist()


def test_count_query_has_sensitivity_one():
    x = np.arange(20)
    nb = Neighborhood.from_data(x, Count(n=50), "remove-one", n=50)
    assert flat(nb, 50) == [1, 50]


def test_from_data_large_input_is_vectorised(rng):
    # 10^5 records through the O(N) aggregate path (timing lives in benchmarks/).
    x = rng.gamma(2.0, 0.5, size=100_000)
    groups = rng.integers(0, 20_000, size=100_000)  # about 5 records per dataset
    nb = Neighborhood.from_data(x, QuantizedMean(0.0, 3.0, 16), "remove-one", n=16, groups=groups)
    assert nb.resolve(16).size >= 1


def test_from_data_vector_query(rng):
    X = rng.integers(0, 3, size=(6, 2)).astype(float)
    q = AggregateQuery(lambda R: R, lambda s, c: np.clip(np.rint(s / np.maximum(c, 1)[:, None] * 4), 0, 4).astype(int))
    nb = Neighborhood.from_data(X, q, "remove-one", n=4, directed=True)
    assert nb.dim == 2


def test_from_data_errors():
    with pytest.raises(ValueError, match="relation"):
        Neighborhood.from_data([1.0, 2.0], Count(n=3), "swap", n=3)
    with pytest.raises(ValueError, match="no non-zero shift"):
        Neighborhood.from_data([1.0, 1.0, 1.0], QuantizedMean(0, 2, 4), "remove-one", n=4)
    with pytest.raises(ValueError, match="groups"):
        Neighborhood.from_data([1.0, 2.0], Count(n=3), n=3, groups=[0])


def test_shift_counts_and_shifts_are_ints_not_floats():
    # Neighborhood.bd(2.0) was accepted (and result files with float shifts through Neighborhood.shifts)
    for call in (
        lambda: Neighborhood.bd(2.0),
        lambda: Neighborhood.sd(1.0),
        lambda: Neighborhood.bd(True),
        lambda: Neighborhood.shifts([1.0, 2]),
        lambda: Neighborhood.shifts([(1, 2.0)]),
        lambda: Neighborhood.shifts(np.array([1.0, 2.0])),
    ):
        with pytest.raises(ValueError, match="must be (an integer|integers)"):
            call()
    assert Neighborhood.bd(np.int64(2)) == Neighborhood.bd(2)
    assert Neighborhood.shifts(np.array([1, 2])).raw == ((1,), (2,))
