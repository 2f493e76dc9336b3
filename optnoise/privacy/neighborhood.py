"""Neighbourhoods: the set of query shifts between neighbouring datasets.

For the modulo-addition mechanism ``q~ = q + eta (mod n+1)`` the privacy
constraints depend on the data only through the shifts
``mu = Q(X) - Q(X') (mod n+1)`` over neighbouring pairs ``(X, X')``
(Kadam et al. 2024, eq. (6) and the set M before (13)).

Direction is explicit. The paper's single-distance (SD, Definition 5) and
bounded-difference (BD, Definition 6) sets are *directed*: ``+mu`` only. The
standard DP neighbour relation is symmetric, so every constructor here is
symmetric by default and adds ``-mu (mod n+1)`` for each shift. Pass
``directed=True`` to reproduce the paper.

Examples
--------
>>> Neighborhood.bd(3).resolve(8).ravel().tolist()
[1, 2, 3, 6, 7, 8]
>>> Neighborhood.bd(3, directed=True).resolve(8).ravel().tolist()
[1, 2, 3]
>>> Neighborhood.shifts([(1, 2), (3, 5)], directed=True).resolve(6).tolist()
[[1, 2], [3, 5]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from optnoise.engine.validation import (
    MAX_SHIFTS,
    check_bool,
    check_choice,
    check_int,
    check_int_array,
    parse_int,
    shown,
)

__all__ = ["Neighborhood", "AggregateQuery", "QuantizedMean", "Count", "RELATIONS", "neighbour_pairs"]

#: Neighbour relations understood by :meth:`Neighborhood.from_data`.
RELATIONS = ("remove-one", "add-one", "replace-one")


def _as_shift_tuple(x: Any, name: str = "shifts") -> tuple[int, ...]:
    """One shift as a tuple of exact Python integers (an int, or a tuple for vector queries).

    Strings, bools and floats (also integral ones such as ``2.0``, as
    :func:`~optnoise.engine.validation.check_int`) are refused, not coerced;
    integers of any size stay exact (their range is checked against n in
    :meth:`Neighborhood.resolve`).
    """
    if isinstance(x, (str, bytes)):
        raise ValueError(f"{name} must be integers or tuples of integers; got the string {shown(x)}")
    items = list(x) if isinstance(x, (tuple, list, np.ndarray)) else [x]
    if not items:
        raise ValueError(f"{name} must be integers or equal-length integer tuples; got {shown(x)}")
    out = []
    for v in items:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"{name} must be integers (ints, not floats or bools); got {shown(x)}")
        out.append(int(v))
    return tuple(out)


@dataclass(frozen=True)
class Neighborhood:
    """A set of query shifts and whether it is directed.

    Build one with :meth:`sd`, :meth:`bd`, :meth:`shifts`, :meth:`from_data`
    or :meth:`parse`; the shifts are reduced modulo ``n+1`` only when a
    design fixes ``n`` (:meth:`resolve`).

    Attributes
    ----------
    raw : tuple of tuple of int
        The shifts as given (each a tuple of length ``dim``).
    directed : bool
        ``False`` (default): the relation is symmetric and ``-mu`` is added.
    kind : str
        ``"sd"``, ``"bd"`` or ``"shifts"``, for display.
    """

    raw: tuple[tuple[int, ...], ...]
    directed: bool = False
    kind: str = "shifts"

    # ------------------------------------------------------------------ constructors
    @classmethod
    def sd(cls, mu: int, *, directed: bool = False) -> Neighborhood:
        """Single distance (Definition 5): every neighbour shifts the answer by ``mu``."""
        mu = check_int("mu", mu, minimum=1)
        return cls(((mu,),), check_bool("directed", directed), "sd")

    @classmethod
    def bd(cls, mu_bar: int, *, directed: bool = False) -> Neighborhood:
        """Bounded difference (Definition 6): shifts ``{1, ..., mu_bar}``."""
        # checked before the shifts are listed: bd(10**9) is refused, not expanded
        mu_bar = check_int("mu_bar", mu_bar, minimum=1, maximum=MAX_SHIFTS)
        return cls(tuple((m,) for m in range(1, mu_bar + 1)), check_bool("directed", directed), "bd")

    @classmethod
    def shifts(cls, shifts: Sequence[Any], *, directed: bool = False) -> Neighborhood:
        """An arbitrary shift set (Definition 7): integers, or tuples for vector queries."""
        directed = check_bool("directed", directed)
        if isinstance(shifts, (int, np.integer)) and not isinstance(shifts, (bool, np.bool_)):
            shifts = [shifts]
        if isinstance(shifts, (str, bytes)):  # "12" is not the shift set {1, 2}
            raise ValueError(f"shifts must be a sequence of integers or tuples, not a string; got {shown(shifts)}")
        if hasattr(shifts, "__len__") and len(shifts) > MAX_SHIFTS:
            raise ValueError(f"shifts lists {len(shifts)} shifts; at most {MAX_SHIFTS} are accepted")
        try:
            items = list(shifts)
        except TypeError:
            raise ValueError(f"shifts must be a sequence of integers or tuples; got {shown(shifts)}") from None
        if len(items) > MAX_SHIFTS:
            raise ValueError(f"shifts lists {len(items)} shifts; at most {MAX_SHIFTS} are accepted")
        if not items:
            raise ValueError("shifts must not be empty: a neighbourhood needs at least one shift")
        raw = tuple(_as_shift_tuple(s) for s in items)
        dims = {len(s) for s in raw}
        if len(dims) != 1:
            raise ValueError(f"shifts must all have the same dimension; got dimensions {sorted(dims)}")
        seen: set[tuple[int, ...]] = set()
        for s in raw:
            if s in seen:
                raise ValueError(f"shifts must not contain duplicates; {s if len(s) > 1 else s[0]} appears twice")
            seen.add(s)
            if all(v == 0 for v in s):
                raise ValueError("shifts must not contain 0: a shift of 0 is not a neighbour")
        return cls(raw, directed, "shifts")

    @classmethod
    def parse(cls, spec: str, *, directed: bool = False, dim: int | None = None) -> Neighborhood:
        """Parse a CLI spec: ``sd:MU``, ``bd:MUBAR``, ``shifts:1,3,5`` or ``shifts:1/2,3/5``."""
        if not isinstance(spec, str) or ":" not in spec:
            raise ValueError(f"neighborhood must be 'sd:MU', 'bd:MUBAR' or 'shifts:A,B,...'; got {shown(spec)}")
        kind, _, body = spec.partition(":")
        kind = check_choice("neighborhood kind", kind.strip().lower(), ("sd", "bd", "shifts"))
        if not body.strip():
            raise ValueError(f"neighborhood spec {shown(spec)} lists no shift")
        if body.count(",") >= MAX_SHIFTS:
            raise ValueError(f"neighborhood spec lists more than {MAX_SHIFTS} shifts")
        items = [p.strip() for p in body.split(",")]
        if any(not it for it in items):  # "shifts:1,,2" is a typo, not the set {1, 2}
            raise ValueError(f"neighborhood spec {shown(spec)} is malformed: an empty item between commas")
        try:
            parsed = [tuple(parse_int("neighborhood shift", v) for v in it.split("/")) for it in items]
        except ValueError as exc:
            raise ValueError(f"neighborhood spec {shown(spec)} is malformed: {exc}") from None
        if kind in ("sd", "bd"):
            if len(parsed) != 1 or len(parsed[0]) != 1:
                raise ValueError(f"neighborhood spec {shown(spec)} is malformed: {kind} takes one integer")
            val = parsed[0][0]
            nb = cls.sd(val, directed=directed) if kind == "sd" else cls.bd(val, directed=directed)
        else:
            nb = cls.shifts([p if len(p) > 1 else p[0] for p in parsed], directed=directed)
        if dim is not None and nb.dim != dim:
            if nb.dim == 1 and kind in ("sd", "bd"):
                raise ValueError(
                    f"neighborhood {shown(spec)} is scalar; vector queries (--dim {dim}) need 'shifts:a/b,...'"
                )
            raise ValueError(f"neighborhood {shown(spec)} has {nb.dim}-D shifts but dim is {dim}")
        return nb

    # ------------------------------------------------------------------ properties
    @property
    def dim(self) -> int:
        """Number of query coordinates the shifts act on."""
        return len(self.raw[0])

    def resolve(self, n: int, dim: int | None = None) -> np.ndarray:
        """The shift set for answers in ``{0..n}^dim`` as an int array of shape ``(k, dim)``.

        Shifts are reduced modulo ``n+1``; a symmetric neighbourhood adds
        ``-mu``; duplicates that symmetry creates are merged. Raises
        ``ValueError`` for a shift out of ``[-n, n]`` or two given shifts that
        coincide modulo ``n+1``.
        """
        n = check_int("n", n, minimum=1)
        dim = self.dim if dim is None else dim
        if dim != self.dim:
            raise ValueError(f"neighborhood has {self.dim}-D shifts but the query has dimension {dim}")
        # exact Python integers are compared before any int64 conversion (2**70 must not wrap around)
        bad = next((s for s in self.raw if any(abs(v) > n for v in s)), None)
        if bad is not None:
            what = "mu_bar" if self.kind == "bd" else "mu" if self.kind == "sd" else "shift"
            value = self.raw[-1][0] if self.kind == "bd" else (list(bad) if dim > 1 else bad[0])
            raise ValueError(
                f"{what} out of range: each shift coordinate must lie in [-n, n] = [-{n}, {n}]; got {shown(value)}"
            )
        arr = np.array(self.raw, dtype=np.int64)
        red = np.mod(arr, n + 1)
        if np.any(np.all(red == 0, axis=1)):
            raise ValueError(f"shifts must not be 0 modulo n+1 = {n + 1}")
        uniq = np.unique(red, axis=0)
        if len(uniq) != len(red):
            raise ValueError(f"shifts must be distinct modulo n+1 = {n + 1}; two given shifts coincide")
        if not self.directed:
            red = np.unique(np.concatenate([red, np.mod(-red, n + 1)]), axis=0)
        return red

    def describe(self, n: int | None = None) -> str:
        """A one-line description; with ``n``, the resolved shift set too."""
        label = {"sd": f"SD mu={self.raw[0][0]}", "bd": f"BD mu_bar={len(self.raw)}"}.get(self.kind, "shifts")
        label += ", directed" if self.directed else ", symmetric"
        if n is None:
            return label
        res = self.resolve(n)
        txt = ", ".join(str(int(r[0])) if len(r) == 1 else "(" + ",".join(map(str, r)) + ")" for r in res)
        return f"{label}: {{{txt}}} (mod {n + 1})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (see :meth:`from_dict`)."""
        return {"kind": self.kind, "directed": self.directed, "shifts": [list(s) for s in self.raw]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Neighborhood:
        """Inverse of :meth:`to_dict`, with full validation."""
        if not isinstance(d, dict) or not isinstance(d.get("shifts"), list):
            raise ValueError("neighborhood must be a mapping with a list 'shifts' and a boolean 'directed'")
        try:
            shifts = [s[0] if len(s) == 1 else tuple(s) for s in d["shifts"]]
        except TypeError:
            raise ValueError("neighborhood 'shifts' must be a list of integer lists") from None
        nb = cls.shifts(shifts, directed=check_bool("neighborhood 'directed'", d.get("directed", False)))
        kind = check_choice("neighborhood kind", d.get("kind", "shifts"), ("sd", "bd", "shifts"))
        # the kind is only a label, but a label that contradicts the shifts would misdescribe the design
        if kind == "bd" and nb.raw != tuple((m,) for m in range(1, len(nb.raw) + 1)):
            raise ValueError("neighborhood kind 'bd' must list the shifts 1..mu_bar")
        if kind == "sd" and (len(nb.raw) != 1 or nb.dim != 1 or nb.raw[0][0] < 1):
            raise ValueError("neighborhood kind 'sd' must list one positive shift")
        return cls(nb.raw, nb.directed, kind)

    # ------------------------------------------------------------------ from data
    @classmethod
    def from_data(
        cls,
        records: Any,
        query: AggregateQuery | Callable[[np.ndarray], Any],
        relation: str = "remove-one",
        *,
        n: int,
        groups: Any = None,
        candidates: Any = None,
        directed: bool = False,
    ) -> Neighborhood:
        """The shift set ``{Q(X) - Q(X')}`` over neighbouring datasets of real data.

        Parameters
        ----------
        records : array_like
            One record per row (a 1-D array of values or a 2-D array of rows).
        query : AggregateQuery or callable
            The query. An :class:`AggregateQuery` (e.g. :class:`QuantizedMean`,
            :class:`Count`) is evaluated on all neighbours at once in O(N);
            a plain callable ``query(records) -> int`` is evaluated once per
            neighbour (O(N^2), fine for a few thousand records).
        relation : {"remove-one", "add-one", "replace-one"}
            Neighbours of a dataset X: X minus one record; X plus one candidate;
            X with one record replaced by a candidate.
        n : int
            Answers lie in ``{0..n}``; shifts are taken modulo ``n+1``.
        groups : array_like, optional
            A label per record. Each group is one dataset of the universe (e.g.
            the households of one distribution circuit); the shift set is the
            union over groups. Default: all records form one dataset.
        candidates : array_like, optional
            Records that may be added (``add-one``, ``replace-one``). Default:
            every record of the universe.
        directed : bool
            ``False`` (default) symmetrises the observed shifts.

        Returns
        -------
        Neighborhood
            The observed non-zero shifts (``kind="shifts"``).
        """
        relation = check_choice("relation", relation, RELATIONS)
        n = check_int("n", n, minimum=1)
        recs = np.asarray(records)
        if recs.ndim == 0 or len(recs) == 0:
            raise ValueError("records must be a non-empty array with one record per row")
        if groups is None:
            labels = np.zeros(len(recs), dtype=np.int64)
        else:
            labels = np.asarray(groups)
            if labels.shape != (len(recs),):
                raise ValueError(f"groups must have one label per record ({len(recs)}); got shape {labels.shape}")
        cands = recs if candidates is None else np.asarray(candidates)
        shifts: set[tuple[int, ...]] = set()

        def answers(x: Any) -> np.ndarray:
            try:
                return check_int_array("query answers", x)
            except ValueError:
                raise ValueError(
                    "query must return integer answers (an int, or a tuple of ints for vector queries)"
                ) from None

        def collect(diff: np.ndarray) -> None:
            for row in np.unique(diff.reshape(len(diff), -1), axis=0):
                if np.any(row != 0):
                    shifts.add(tuple(int(v) for v in row))

        if isinstance(query, AggregateQuery) and relation == "remove-one":
            # All groups at once: group sums, then every leave-one-out answer in one call.
            _, inv = np.unique(labels, return_inverse=True)
            phi = np.asarray(query.phi(recs), dtype=float)
            sums = np.zeros((inv.max() + 1,) + phi.shape[1:])
            np.add.at(sums, inv, phi)
            counts = np.bincount(inv).astype(float)
            base = np.asarray(query.finalize(sums, counts))[inv]
            collect(answers(base) - answers(query.finalize(sums[inv] - phi, counts[inv] - 1)))
        else:
            for g in np.unique(labels):
                base, neigh = _neighbour_answers(recs[labels == g], query, relation, cands)
                collect(answers(base) - answers(neigh))
        if not shifts:
            raise ValueError("the data give no non-zero shift: the query is constant on neighbours")
        red = sorted({tuple(int(v) for v in np.mod(s, n + 1)) for s in shifts})
        red = [s for s in red if any(v != 0 for v in s)]
        if not red:
            raise ValueError(f"the data give no shift that is non-zero modulo n+1 = {n + 1}")
        return cls.shifts([s[0] if len(s) == 1 else s for s in red], directed=directed)


# ---------------------------------------------------------------------- queries


class AggregateQuery:
    """A query of the form ``Q(X) = finalize(sum_i phi(x_i), |X|)``.

    Counts, sums and means are of this form, which makes every neighbour's
    answer an O(1) update of the dataset's sums: leave-one-out answers for
    10^5 records take milliseconds.

    Parameters
    ----------
    phi : callable
        Maps a records array (N rows) to per-record contributions, shape ``(N,)``
        or ``(N, k)``.
    finalize : callable
        Maps ``(sums, counts)`` arrays (sums of shape ``(B,)`` or ``(B, k)``,
        counts ``(B,)``) to integer answers of shape ``(B,)`` or ``(B, d)``.
    """

    def __init__(
        self, phi: Callable[[np.ndarray], np.ndarray], finalize: Callable[[np.ndarray, np.ndarray], np.ndarray]
    ):
        self.phi = phi
        self.finalize = finalize

    def __call__(self, records: Any) -> Any:
        X = np.asarray(records)
        s = np.asarray(self.phi(X), dtype=float).sum(axis=0)
        out = np.asarray(self.finalize(s[None, ...], np.array([len(X)])))[0]
        return out


class QuantizedMean(AggregateQuery):
    """Mean of the records' values quantised to ``n+1`` levels on ``[lo, hi]``.

    ``Q(X) = clip(round((mean(x) - lo) / (hi - lo) * n), 0, n)``; an empty
    dataset answers 0.
    """

    def __init__(self, lo: float, hi: float, n: int):
        if not np.isfinite(lo) or not np.isfinite(hi) or not hi > lo:
            raise ValueError(f"QuantizedMean needs finite lo < hi; got lo={shown(lo)}, hi={shown(hi)}")
        n = check_int("n", n, minimum=1)
        self.lo, self.hi, self.n = float(lo), float(hi), n

        def finalize(s: np.ndarray, c: np.ndarray) -> np.ndarray:
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.where(c > 0, s / np.maximum(c, 1), self.lo)
            return np.clip(np.rint((mean - self.lo) / (self.hi - self.lo) * self.n), 0, self.n).astype(np.int64)

        super().__init__(lambda X: np.asarray(X, dtype=float), finalize)


class Count(AggregateQuery):
    """Number of records satisfying ``predicate`` (all records by default), capped at ``n``."""

    def __init__(self, n: int, predicate: Callable[[np.ndarray], np.ndarray] | None = None):
        n = check_int("n", n, minimum=1)
        pred = predicate or (lambda X: np.ones(len(X)))
        super().__init__(
            lambda X: np.asarray(pred(X), dtype=float), lambda s, c: np.minimum(np.rint(s), n).astype(np.int64)
        )


def _neighbour_answers(X: np.ndarray, query: Any, relation: str, cands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Answer on X and on all its neighbours (one row per neighbour).

    Aggregate queries take this path for add-one and replace-one only; their
    remove-one answers are computed for all groups at once in ``from_data``.
    """
    if isinstance(query, AggregateQuery):
        phi = np.asarray(query.phi(X), dtype=float)
        s = phi.sum(axis=0)
        N = len(X)
        base = np.asarray(query.finalize(s[None, ...], np.array([N])))[0]
        pc = np.unique(np.asarray(query.phi(cands), dtype=float), axis=0)
        if relation == "add-one":
            return base, np.asarray(query.finalize(s[None, ...] + pc, np.full(len(pc), N + 1)))
        # replace-one: every (removed contribution, added contribution) pair of distinct values
        px = np.unique(phi, axis=0)
        outs = []
        chunk = max(1, 2_000_000 // max(1, len(pc)))
        for i in range(0, len(px), chunk):
            d = (pc[None, ...] - px[i : i + chunk, None, ...]).reshape((-1,) + pc.shape[1:])
            outs.append(np.asarray(query.finalize(s[None, ...] + d, np.full(len(d), N))))
        return base, np.concatenate(outs)
    if not callable(query):
        raise ValueError("query must be an AggregateQuery or a callable records -> answer")
    base = np.asarray(query(X))
    idx = np.arange(len(X))
    if relation == "remove-one":
        neigh = [query(X[idx != i]) for i in idx]
    elif relation == "add-one":
        neigh = [query(np.concatenate([X, c[None, ...]])) for c in cands]
    else:
        neigh = []
        for i in idx.tolist():
            for c in cands:
                Y = X.copy()
                Y[i] = c
                neigh.append(query(Y))
    return base, np.asarray(neigh)


def neighbour_pairs(n: int, neighborhood: Neighborhood) -> np.ndarray:
    """Ordered pairs ``(q, q')`` of answers in ``{0..n}`` with ``q - q' = mu`` (no wrap-around).

    For mechanisms whose output is not a modulo shift (clamped, range): the
    shifts of ``neighborhood`` are taken as integers, ``mu = Q(X) - Q(X')`` (6),
    and a symmetric neighbourhood adds the reversed pairs.
    """
    n = check_int("n", n, minimum=1)
    if not isinstance(neighborhood, Neighborhood):
        raise ValueError("neighborhood must be a Neighborhood (e.g. Neighborhood.bd(1))")
    if neighborhood.dim != 1:
        raise ValueError("neighborhood must have scalar shifts for a scalar query")
    q = np.arange(n + 1)
    pairs = []
    for (mu,) in neighborhood.raw:
        ok = (q - mu >= 0) & (q - mu <= n)
        pairs.append(np.stack([q[ok], q[ok] - mu], axis=1))
    arr = np.concatenate(pairs) if pairs else np.empty((0, 2), dtype=np.int64)
    if not neighborhood.directed:
        arr = np.concatenate([arr, arr[:, ::-1]])
    arr = np.unique(arr, axis=0)
    if arr.size == 0:
        raise ValueError(f"neighborhood has no pair of answers in 0..{n}: every shift exceeds n")
    return arr
