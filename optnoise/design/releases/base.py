"""The release interface and its registry: how a design's noise turns an answer into a release.

A :class:`Release` owns everything that depends on how noise is added: the noise support and
its shape, the cost vector of each metric, the neighbour pairs and the model, the actual errors,
the accounting pairs (``release_pairs``), the certification layout and the solve.
:class:`~optnoise.design.noise.NoiseDesign` looks its release up once
(``NoiseDesign(release="...")``) and calls these hooks; it does not compare release names.

**Adding a release.** Write one module exposing the hook functions of :mod:`optnoise.design.additive`::

    setup(design, **kw)          # validate NoiseDesign's keywords, set the design's attributes
    model_size(design)           # rows, cols, integers, nonzeros of its model
    solve(design, **solve_kw)    # a result (NoiseDesign.solve's keywords)
    spec(design)                 # plain data; must hold "release": NAME
    describe(design)             # repr

(optionally ``build(design)``, ``pair_layout(design)``, ``shift_list(design)``, and the constants
``RELEASE_FIELDS``, ``INTEGER_FIELDS``, ``REQUIRED_FLAGS``, ``SWEEPABLE``, ``DEFAULT_PRIVACY``,
``RESULT`` and ``REAL_ANSWERS`` read as the :class:`Release` attributes of the same meaning), then register
it with one line in :mod:`optnoise.design.releases`::

    register_release(ModuleRelease("NAME", module))

Its name becomes a value of ``NoiseDesign(release=)`` and of ``--release`` in ``solve`` and
``sweep``. A release that reuses the ``(n+1)``-value machinery (rows, layouts, the LP pipeline)
subclasses :class:`~optnoise.design.releases.lattice.LatticeRelease` instead, as ``modulo`` and
``clamp`` do.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from optnoise.engine.model import LinearModel
from optnoise.engine.validation import shown

__all__ = [
    "Release",
    "ModuleRelease",
    "RELEASE_REGISTRY",
    "register_release",
    "unregister_release",
    "get_release",
    "release_names",
    "release_field_names",
]


class Release:
    """How noise is added; every hook takes the :class:`~optnoise.design.noise.NoiseDesign` it serves.

    Attributes
    ----------
    name : str
        The value of ``release=``.
    summary : str
        One line for ``--help`` and the docs.
    takes_n : bool
        The answers lie in ``{0..n}`` (``n`` required); False for a release on all integers.
    in_spec : bool
        Whether ``spec()``, ``repr`` and sweep rows name the release (the default release does not).
    default_privacy : str
        The notion of ``privacy=None``.
    """

    name = ""
    summary = ""
    takes_n = True
    in_spec = True
    default_privacy = "pdp"
    #: The keywords only this release takes (``NoiseDesign`` refuses them for every other release).
    fields: tuple[str, ...] = ()
    #: The problem's required flags on the command line (``optnoise certify`` from flags).
    required: tuple[str, ...] = ("n", "eps", "neighborhood")
    #: Whether ``optnoise sweep`` runs it.
    sweepable = True
    #: Of :attr:`fields`, those that take integers (the others take reals): how ``sweep`` parses their grids.
    integer_fields: tuple[str, ...] = ()
    #: The class of this release's results read back from a file or a sweep's cache (its ``from_dict``);
    #: ``None``: the release's results are not read back that way (a sweep solves its points again).
    result_class: Any = None
    #: The notions whose results :attr:`result_class` reads back (``None``: every notion).
    cached_notions: tuple[str, ...] | None = None
    #: The answers are real numbers rounded by the release (``optnoise release --value 3.7``), not integers.
    real_answers = False
    #: Whether its results can be certified and deployed (``optnoise certify``).
    deployable = True

    def setup(self, design: Any, **kw: Any) -> None:
        """Validate ``NoiseDesign``'s keywords and set the design's attributes."""
        raise NotImplementedError

    def model_size(self, design: Any, formulation: str = "hull") -> dict[str, int]:
        raise NotImplementedError

    def build(self, design: Any, formulation: str = "hull") -> LinearModel:
        raise ValueError(f"release={shown(self.name)} has no single LP/MILP model")

    def spec(self, design: Any) -> dict[str, Any]:
        raise NotImplementedError

    def describe(self, design: Any) -> str:
        raise NotImplementedError

    def solve(self, design: Any, **kw: Any) -> Any:
        raise NotImplementedError

    def shift_list(self, design: Any) -> list[Any]:
        """The resolved shifts as plain data."""
        return design.shifts.tolist() if design.dim > 1 else design.shifts.ravel().tolist()

    def pair_layout(self, design: Any, resolve: Any) -> Any:
        """How :mod:`optnoise.deploy.certify` checks, repairs and samples a PMF of this release."""
        raise ValueError(f"certification of release={shown(self.name)} designs is not yet supported")

    # ---- what a release of the LP pipeline answers (LatticeRelease); others raise
    #: The noise is added modulo ``n+1``: every shift permutes the noise, so the pairs to protect are
    #: ``(f, f(. + mu))``; otherwise they are rows of the release's matrix per answer pair, repaired by
    #: mixing (:func:`~optnoise.design.clamp.clamp_repair`).
    cyclic = False

    def evaluate(self, design: Any, pmf: Any, eps: float | None, pure: bool) -> tuple[float, dict, dict]:
        """Distortion, achieved ``(eps, delta)`` deltas (empty without an eps) and actual errors of a PMF."""
        raise self._unsupported("evaluate")

    def errors(self, design: Any, pmf: Any) -> tuple[float, dict[str, float]]:
        """Distortion and actual errors of a PMF."""
        distortion, _, actual = self.evaluate(design, pmf, None, False)
        return distortion, actual

    def release_pairs(self, design: Any, pmf: Any) -> Any:
        """The protected pairs of output distributions (:class:`~optnoise.privacy.accounting.ReleasePairs`)."""
        raise self._unsupported("release_pairs")

    def single_delta(self, design: Any, pmf: Any, eps: float) -> float:
        """The exact single-release hockey stick at ``eps`` (the worst protected pair)."""
        raise self._unsupported("single_delta")

    def draw(self, design: Any, pmf: Any, baseline: Any, **kw: Any) -> Any:
        """Draw the release and its privacy profile."""
        raise self._unsupported("draw")

    def _unsupported(self, hook: str) -> ValueError:
        return ValueError(f"release={shown(self.name)} has no {hook}()")

    def spec_kwargs(self, spec: dict[str, Any]) -> dict[str, Any] | None:
        """The ``NoiseDesign`` keywords of a spec, for a release that rebuilds them itself (None: the common way)."""
        return None

    def spec_shape(self, spec: dict[str, Any]) -> tuple[int, ...] | None:
        """The ``shape`` keyword ``NoiseDesign.from_spec`` passes back (None: the release infers it)."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class ModuleRelease(Release):
    """A release written as one module of hook functions (see the module docstring)."""

    def __init__(self, name: str, module: ModuleType, *, summary: str = "", takes_n: bool = False) -> None:
        for hook in ("setup", "model_size", "solve", "spec", "describe"):
            if not callable(getattr(module, hook, None)):
                raise ValueError(f"module {module.__name__} lacks the release hook {hook}()")
        self.name, self.module, self.takes_n = name, module, takes_n
        self.default_privacy = getattr(module, "DEFAULT_PRIVACY", "dp")
        self.fields = tuple(getattr(module, "RELEASE_FIELDS", ()))
        self.required = tuple(getattr(module, "REQUIRED_FLAGS", ("eps", "neighborhood")))
        self.sweepable = bool(getattr(module, "SWEEPABLE", True))
        self.integer_fields = tuple(getattr(module, "INTEGER_FIELDS", ()))
        self.result_class = getattr(module, "RESULT", None)
        notions = getattr(module, "CACHED_NOTIONS", None)
        self.cached_notions = None if notions is None else tuple(notions)
        self.real_answers = bool(getattr(module, "REAL_ANSWERS", False))
        self.deployable = bool(getattr(module, "DEPLOYABLE", True))
        self.summary = summary or (module.__doc__ or name).strip().splitlines()[0]

    def setup(self, design: Any, **kw: Any) -> None:
        self.module.setup(design, **kw)

    def model_size(self, design: Any, formulation: str = "hull") -> dict[str, int]:
        return dict(self.module.model_size(design))

    def build(self, design: Any, formulation: str = "hull") -> LinearModel:
        if not callable(getattr(self.module, "build", None)):
            return super().build(design, formulation)
        return self.module.build(design)

    def spec(self, design: Any) -> dict[str, Any]:
        return dict(self.module.spec(design))

    def describe(self, design: Any) -> str:
        return str(self.module.describe(design))

    def solve(self, design: Any, **kw: Any) -> Any:
        return self.module.solve(design, **kw)

    def problem_lines(self, design: Any) -> list[str]:
        """The ``problem`` and ``neighbours`` lines ``optnoise solve`` prints (the module's, else its repr)."""
        hook = getattr(self.module, "problem_lines", None)
        return list(hook(design)) if callable(hook) else [f"problem     {design!r}"]

    def spec_kwargs(self, spec: dict[str, Any]) -> dict[str, Any] | None:
        hook = getattr(self.module, "from_spec", None)
        return dict(hook(spec)) if callable(hook) else None

    def shift_list(self, design: Any) -> list[Any]:
        hook = getattr(self.module, "shift_list", None)
        return hook(design) if callable(hook) else super().shift_list(design)

    def pair_layout(self, design: Any, resolve: Any) -> Any:
        hook = getattr(self.module, "pair_layout", None)
        return hook(design) if callable(hook) else super().pair_layout(design, resolve)


#: Every release by name, in the order ``--help`` and the docs list them.
RELEASE_REGISTRY: dict[str, Release] = {}


def register_release(release: Release) -> Release:
    """Add ``release`` to the registry (replacing one of the same name); returns it."""
    if not isinstance(release, Release) or not release.name:
        raise ValueError(f"release must be a named Release; got {release!r}")
    RELEASE_REGISTRY[release.name] = release
    return release


def unregister_release(name: str) -> None:
    """Remove a release (tests that register a toy one undo it)."""
    RELEASE_REGISTRY.pop(name, None)


def release_names() -> tuple[str, ...]:
    """The names of every registered release."""
    return tuple(RELEASE_REGISTRY)


def release_field_names() -> tuple[str, ...]:
    """Every field a registered release takes (:attr:`Release.fields`), in registry order, once each."""
    return tuple(dict.fromkeys(f for r in RELEASE_REGISTRY.values() for f in r.fields))


def get_release(name: object) -> Release:
    """The release called ``name``; a ``ValueError`` naming ``release`` and the known names otherwise."""
    release = RELEASE_REGISTRY.get(name) if isinstance(name, str) else None
    if release is None:
        known = ", ".join(repr(k) for k in RELEASE_REGISTRY)
        raise ValueError(f"release must be one of {known}; got {name!r}")
    return release
