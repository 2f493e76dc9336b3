"""Export of certified designs to OpenDP, chainable after OpenDP's own transformations.

:func:`to_opendp` wraps a :class:`~optnoise.deploy.certified.CertifiedDesign`
(modulo noise) or :class:`~optnoise.deploy.certified.CertifiedMechanism` (a
general mechanism, or clamped noise) as an OpenDP measurement through OpenDP's
user-measurement plugin API (``opendp.measurements.make_user_measurement``):

* **input domain and metric**: any integer, ``atom_domain(T=T)`` (default
  ``"i32"``, the output domain of ``make_count`` and of integer ``then_sum``),
  under ``absolute_distance(T=T)``; so ``make_count(...) >> m`` and
  ``make_clamp(...) >> then_sum() >> m`` chain without a domain mismatch;
* **function**: the input is clamped to ``[0, n]`` first (clamping is
  1-Lipschitz in the absolute distance, so neighbours stay neighbours and the
  map below is unchanged), then released with the design's exact sampler
  (``q + eta (mod n+1)``, or row ``x`` of the matrix), OS CSPRNG by default;
* **privacy map**: ``d_in = 0`` maps to no loss; ``d_in >= 1`` maps to
  ``(eps, delta)`` when every pair of answers at distance ``1..d_in`` is
  covered, and raises otherwise (the certificate says nothing about farther
  pairs). OpenDP's absolute distance is symmetric, so the map states the
  guarantee for *both orders* of every pair: ``delta`` is the certified delta,
  or for a directed design (which certifies only its listed order, see
  :mod:`optnoise.privacy.accounting`) the larger of the certified delta and the
  exact (eps, delta)-DP delta of the reverse order, computed exactly from the
  certified weights (:func:`optnoise.privacy.exact.exact_pair_delta`). PDP
  certificates imply the DP guarantee (Kadam et al. 2024, Theorem 1). The
  output measure is ``approximate(max_divergence())``, or ``max_divergence()``
  when that delta is 0. Exact rationals are rounded *up* to the next float.

**Composed designs.** A design made for k releases (``privacy="composed"``) is
certified for one release exactly and for k releases by the project's accounting
(:mod:`optnoise.deploy.composed`). Its single-release export states the one-release
guarantee; OpenDP's own composition of k such measurements (``make_composition``,
or k separate releases under an odometer or filter) adds their epsilons and so
**does not see the composed guarantee** (20 releases of a design for (2, 1e-6)
composed would be accounted as eps = 40); exporting a composed design that way warns.
``to_opendp(compositions=k)`` instead returns one measurement that releases the k
answers together:

* **input**: a vector of k answers, ``vector_domain(atom_domain(T=T), size=k)`` under
  ``linf_distance(T=T)`` (neighbouring datasets move every answer by at most ``d_in``;
  k counting queries, or any k queries of sensitivity 1, chain into it);
* **function**: each answer is clamped to ``[0, n]`` and released with its own
  independent draw of the exact sampler; the output is the vector of k releases;
* **privacy map**: ``d_in >= 1`` (covered as above) maps to the composed (eps, delta):
  the design's target, which its certified weights meet by the recomputed
  accounting (for a directed design, the larger of that and the composition of both
  orders of every pair, since OpenDP's metric is symmetric). The k releases may use
  different neighbouring pairs in every coordinate: the accounting is that of a
  dominating pair of every protected pair (:mod:`optnoise.privacy.accounting`).

OpenDP is an optional dependency (``pip install optnoise[opendp]``); the
constructor needs its ``contrib`` and ``honest-but-curious`` features, which
:func:`to_opendp` enables: the measurement is only as trustworthy as the
certificate it carries, which is exactly what optnoise's exact check provides.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from optnoise.deploy.sampler import check_rng
from optnoise.engine.validation import shown
from optnoise.privacy.exact import check_bounds, exact_pair_delta

__all__ = [
    "to_opendp",
    "additive_to_opendp",
    "certified_opendp",
    "certified_map",
    "composed_map",
    "symmetric_delta",
    "INTEGER_TYPES",
]

#: OpenDP integer types accepted as the input type ``T``.
INTEGER_TYPES = ("i8", "i16", "i32", "i64", "isize", "u8", "u16", "u32", "u64", "usize")


def _float_up(x: Fraction | float) -> float:
    """The smallest float >= x."""
    f = float(x)
    if isinstance(x, Fraction) and Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def symmetric_delta(certified: Any) -> Fraction | float:
    """The exact delta at the certified eps for both orders of every certified pair.

    The certified delta covers each listed ordered pair; the reverse order of each is
    checked exactly as (eps, delta)-DP from the integer weights. For a symmetric
    neighbourhood (every reverse is itself listed) this is the certified delta.
    """
    layout = certified.layout
    reverse = exact_pair_delta(
        certified.weights.ravel(), layout.second, layout.first, certified.denominator, "dp", check_bounds(certified.eps)
    )
    return max(certified.certified_delta, reverse)


def _differences(certified: Any) -> tuple[set[int], int]:
    """The answer differences ``x - x'`` the certificate covers in some order, and ``n``."""
    problem = certified.design
    n = problem.n
    if certified.layout.kind == "pmf":  # modulo noise: the shifts, read modulo n+1
        return {int(s) % (n + 1) for s in np.asarray(problem.shifts).ravel()}, n
    pairs = np.asarray(problem.pairs).reshape(-1, 2)
    return {int(a) - int(b) for a, b in pairs}, n


def _missing(certified: Any, d: int) -> str | None:
    """Why neighbours at distance up to ``d`` are not covered (``None`` when they are)."""
    diffs, n = _differences(certified)
    if certified.layout.kind == "pmf":
        for k in range(1, min(d, n) + 1):
            if k % (n + 1) not in diffs and (-k) % (n + 1) not in diffs:
                return f"answers differing by {k} (shift +-{k} mod {n + 1}); the certified shifts are {sorted(diffs)}"
        return None
    pairs = {(int(a), int(b)) for a, b in np.asarray(certified.design.pairs).reshape(-1, 2)}
    for k in range(1, min(d, n) + 1):
        for x in range(n + 1 - k):
            if (x, x + k) not in pairs and (x + k, x) not in pairs:
                return f"the answers ({x}, {x + k}) (the certificate covers {len(pairs)} ordered pairs)"
    return None


def certified_map(certified: Any) -> Any:
    """The privacy map ``d_in -> (eps, delta)`` (or ``eps``) that a certified design supports.

    ``delta`` is :func:`symmetric_delta` (rounded up); see the module docstring.
    """

    def uncovered(d: int) -> str | None:
        why = _missing(certified, d)
        return None if why is None else f"it does not cover {why}"

    return _privacy_map(float(certified.eps), _float_up(symmetric_delta(certified)), uncovered)


def _privacy_map(eps: float, delta: float, uncovered: Callable[[int], str | None]) -> Callable[[Any], Any]:
    """``d_in -> (eps, delta)`` (``eps`` when ``delta`` is 0); 0 maps to no loss; refused where ``uncovered`` says."""
    pure = delta == 0.0

    def privacy_map(d_in: Any) -> Any:
        d = int(d_in)
        if d < 0:
            raise ValueError(f"d_in must be >= 0; got {shown(d_in)}")
        if d == 0:
            return 0.0 if pure else (0.0, 0.0)
        why = uncovered(d)
        if why is not None:
            raise ValueError(f"d_in = {d} is not covered by the certificate: {why}")
        return eps if pure else (eps, delta)

    return privacy_map


def composed_map(certified: Any, uncovered: Callable[[int], str | None] | None = None) -> Any:
    """The privacy map ``d_in -> (eps, delta)`` of k releases of a certified composed design (module docstring).

    ``uncovered(d)``: why distance ``d`` is not covered (default: the modulo and matrix layouts' shifts).
    """
    from optnoise.design.composed_bounds import compose_release
    from optnoise.privacy.accounting import ReleasePairs

    c = certified.composed
    eps, k, h = float(c["eps"]), int(c["compositions"]), float(c["discretization"])
    delta = float(c["delta"])
    if getattr(certified.design.neighborhood, "directed", False) and k > 1:
        # OpenDP's metric is symmetric: account both orders of every listed pair
        rp = certified.release_pairs()
        both = ReleasePairs(
            np.concatenate([rp.P, rp.Q]),
            np.concatenate([rp.Q, rp.P]),
            np.concatenate([rp.labels, -rp.labels]),
            rp.modulus,
        )
        delta = max(delta, float(compose_release(both, k, h).delta(eps)))
    elif k == 1:
        sym = certified.symmetric_delta() if uncovered is not None else symmetric_delta(certified)
        delta = max(delta, _float_up(sym))

    def privacy_map(d_in: Any) -> Any:
        d = int(d_in)
        if d < 0:
            raise ValueError(f"d_in must be >= 0; got {shown(d_in)}")
        if d == 0:
            return (0.0, 0.0)
        if uncovered is None:
            missing = _missing(certified, d)
            why = None if missing is None else f"it does not cover {missing}"
        else:
            why = uncovered(d)
        if why is not None:
            raise ValueError(f"d_in = {d} is not covered by the certificate: {why}")
        return (eps, delta)

    return privacy_map


def check_compositions(certified: Any, compositions: Any) -> int | None:
    """``compositions``: ``None`` (one release), or the k of a certified composed design."""
    c = getattr(certified, "composed", None)
    if compositions is None:
        if c is not None and int(c["compositions"]) > 1:
            k = int(c["compositions"])
            warnings.warn(
                f"this design was made for {k} composed releases at (eps={c['eps']:g}, delta={c['delta']:g}), but "
                f"the measurement releases one answer with the single-release guarantee (eps={certified.eps:g}); "
                f"OpenDP's own composition of {k} such measurements adds their epsilons and will not see the "
                f"composed guarantee: use to_opendp(compositions={k}) to release the {k} answers together",
                UserWarning,
                stacklevel=4,  # the caller of CertifiedDesign.to_opendp
            )
        return None
    if isinstance(compositions, bool) or not isinstance(compositions, (int, np.integer)):
        raise ValueError(f"compositions must be None or an integer; got {shown(compositions)}")
    if c is None:
        raise ValueError(
            "compositions applies to a certified composed design (NoiseDesign(privacy='composed', compositions=k)); "
            "this design certifies one release: compose OpenDP measurements of it instead"
        )
    if int(compositions) != int(c["compositions"]):
        raise ValueError(
            f"compositions must be {int(c['compositions'])}, the releases this design was certified for; "
            f"got {shown(compositions)}"
        )
    return int(compositions)


def to_opendp(
    certified: Any, *, rng: np.random.Generator | None = None, T: str = "i32", compositions: int | None = None
) -> Any:
    """An OpenDP measurement releasing with the certified exact sampler (see the module docstring).

    The single-release export (``compositions=None``) carries the one-release certificate: OpenDP's
    composition of several such measurements does not see a composed design's composed guarantee
    (a ``UserWarning`` says so when the design is composed); pass ``compositions=k`` for that.

    Parameters
    ----------
    certified : CertifiedDesign or CertifiedMechanism
        A certified scalar design, general mechanism or clamped design.
    rng : numpy.random.Generator, optional
        ``None`` (default): the OS CSPRNG, for deployment. A seeded generator
        is for reproducible tests only.
    T : str
        The OpenDP integer type of the input (one of :data:`INTEGER_TYPES`).
    compositions : int, optional
        For a certified composed design, its k: the measurement takes a vector of k answers
        (``linf_distance``) and releases k answers with the composed (eps, delta) as its map.

    Returns
    -------
    opendp.mod.Measurement

    Raises
    ------
    ValueError
        ``rng`` is neither None nor a numpy Generator (checked here, at export,
        not at the first release), the design is not a certified scalar design, or
        ``compositions`` is given for a design not certified for that many releases.
    """
    rng = check_rng(rng)
    k = check_compositions(certified, compositions)
    if not isinstance(T, str) or T not in INTEGER_TYPES:
        raise ValueError(f"T must be one of {', '.join(INTEGER_TYPES)}; got {shown(T)}")
    try:
        import opendp.prelude as dp
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise ImportError("to_opendp needs OpenDP: pip install 'optnoise[opendp]'") from None
    if getattr(certified.design, "dim", 1) != 1:
        raise ValueError(f"to_opendp supports scalar designs (d = 1); this design has d = {certified.design.dim}")
    if not certified.verify():  # a composed design's composed guarantee is recomputed here too
        raise ValueError("the design's weights do not reproduce its certificate; refusing to export it")
    dp.enable_features("contrib", "honest-but-curious")
    n = certified.n
    outputs = None if certified.layout.kind == "pmf" else np.asarray(certified.outputs)
    integral = outputs is None or bool(np.all(outputs == np.round(outputs)))
    if k is not None:

        def release_all(x: Any) -> Any:
            q = np.clip(np.asarray([int(v) for v in x], dtype=np.int64), 0, n)  # 1-Lipschitz in every coordinate
            out = np.asarray(certified.release(q, rng=rng)).ravel().tolist()
            return [int(v) for v in out] if integral else [float(v) for v in out]

        return dp.m.make_user_measurement(
            dp.vector_domain(dp.atom_domain(T=T), size=k),
            dp.linf_distance(T=T),
            output_measure=dp.approximate(dp.max_divergence()),
            function=release_all,
            privacy_map=composed_map(certified),
            TO="Vec<i64>" if integral else "Vec<f64>",
        )
    privacy_map = certified_map(certified)
    pure = privacy_map(0) == 0.0
    measure = dp.max_divergence() if pure else dp.approximate(dp.max_divergence())

    def release(x: Any) -> Any:
        q = min(max(int(x), 0), n)  # 1-Lipschitz: neighbours stay neighbours (module docstring)
        out = certified.release(q, rng=rng)
        return int(out) if integral else float(out)

    return dp.m.make_user_measurement(
        dp.atom_domain(T=T),
        dp.absolute_distance(T=T),
        output_measure=measure,
        function=release,
        privacy_map=privacy_map,
        TO=int if integral else float,
    )


def certified_opendp(certified: Any) -> tuple[Any, float, float]:
    """OpenDP's prelude (its features enabled), and the certified eps and delta of both orders (rounded up).

    For an additive or grid design (:meth:`~optnoise.deploy.additive.CertifiedAdditive.symmetric_delta`);
    refuses weights that do not reproduce their certificate.
    """
    try:
        import opendp.prelude as dp
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise ImportError("to_opendp needs OpenDP: pip install 'optnoise[opendp]'") from None
    if not certified.verify():
        raise ValueError("the design's weights do not reproduce its certificate; refusing to export it")
    dp.enable_features("contrib", "honest-but-curious")
    return dp, float(certified.eps), _float_up(certified.symmetric_delta())


def additive_to_opendp(
    certified: Any, *, rng: np.random.Generator | None = None, T: str = "i64", compositions: int | None = None
) -> Any:
    """An OpenDP measurement releasing ``q + eta`` on the integers with a certified additive noise.

    Input: ``atom_domain(T=T)`` (default ``"i64"``) under ``absolute_distance(T=T)``, so it chains after
    ``make_count(..., TO=T)`` and a bounded integer ``then_sum()``; no clamp and no range: any integer
    ``q`` is released as ``q + eta``. Privacy map: ``d_in = 0`` maps to no loss; ``d_in`` maps to the
    certified ``(eps, delta)`` (``eps`` when pure) when every distance ``1..d_in`` is a shift of the
    neighbourhood (in some order), with ``delta`` the exact delta of both orders
    (:meth:`~optnoise.deploy.additive.CertifiedAdditive.symmetric_delta`, rounded up to a float); a
    larger ``d_in`` is refused (the certificate says nothing about it). The output is ``T`` (saturated at
    its range, post-processing that cannot weaken the guarantee). ``compositions=k`` (a certified composed
    design): a vector of k answers under ``linf_distance``, released together with the composed guarantee as
    its map (:func:`composed_map`), as :func:`to_opendp` does for modulo designs.
    """
    rng = check_rng(rng)
    k = check_compositions(certified, compositions)
    if not isinstance(T, str) or T not in ("i32", "i64"):
        raise ValueError(f"T must be 'i32' or 'i64' for an additive design; got {shown(T)}")
    dp, eps, delta = certified_opendp(certified)
    pure = delta == 0.0
    covered = {abs(int(s)) for s in np.asarray(certified.design.shifts).ravel()}
    D = 0
    while D + 1 in covered:
        D += 1

    def uncovered(d: int) -> str | None:
        if d <= D:
            return None
        return (
            f"it covers answers differing by at most {D} (neighbourhood "
            f"{certified.design.neighborhood.describe()}); certify a design with a larger sensitivity "
            "(e.g. Neighborhood.bd(d_in))"
        )

    privacy_map = _privacy_map(eps, delta, uncovered)
    lo, hi = (-(2**31), 2**31 - 1) if T == "i32" else (-(2**63), 2**63 - 1)

    def release(x: Any) -> int:
        # q + eta in Python integers, saturated to T's range only when it would overflow: post-processing
        return min(max(int(x) + int(certified.sample(rng=rng)), lo), hi)

    if k is not None:
        return dp.m.make_user_measurement(
            dp.vector_domain(dp.atom_domain(T=T), size=k),
            dp.linf_distance(T=T),
            output_measure=dp.approximate(dp.max_divergence()),
            function=lambda x: [release(v) for v in x],
            privacy_map=composed_map(certified, uncovered),
            TO=f"Vec<{T}>",
        )

    return dp.m.make_user_measurement(
        dp.atom_domain(T=T),
        dp.absolute_distance(T=T),
        output_measure=dp.max_divergence() if pure else dp.approximate(dp.max_divergence()),
        function=release,
        privacy_map=privacy_map,
        TO=T,
    )
