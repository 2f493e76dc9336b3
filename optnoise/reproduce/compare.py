"""Check a reproduction: every regenerated figure CSV against the committed one, within declared tolerances.

Every figure script declares, at module level, the tolerance of each column of each CSV it
writes::

    from optnoise.reproduce.compare import SOLVER

    #: Per-column tolerances of the CSV comparison (``optnoise figures check``).
    TOLERANCES = {"fig7a_exact": {"delta": SOLVER, "distortion": SOLVER}}

A CSV of a script must appear as a key (its stem), with an empty mapping when every column keeps
the default. A column not listed is compared under :data:`EXACT`: text cells (labels, integers
written as such, empty cells) must be equal, numeric cells equal up to one unit in the last of
the :data:`~optnoise.reproduce.figures.CSV_DIGITS` written digits. Columns where a solver or a
search decides the number are declared with its proven or stated accuracy (:data:`SOLVER`,
:data:`ROUNDOFF` or an explicit :class:`Tol` that says why).

:func:`check_figures` (``optnoise figures check``, the last step of ``make reproduce``) compares
the CSVs under ``figures/`` with those of a git revision (default ``HEAD``, so it works in a
fresh clone after the regeneration overwrote the work tree) or of a reference folder, and reports
every file, column and row that differs by more than its tolerance, every missing or extra file,
column and row, and every CSV no script declares.
"""

from __future__ import annotations

import csv
import io
import math
import os
import runpy
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from optnoise.engine.tolerance import FEASIBILITY_TOL, OPTIMAL_GAP
from optnoise.reproduce.figures import CSV_DIGITS, PAPERS, find_experiments_root, list_scripts

__all__ = [
    "EXACT",
    "ROUNDOFF",
    "SOLVER",
    "Tol",
    "ColumnTol",
    "Report",
    "check_figures",
    "committed_csvs",
    "compare_csv",
    "declared_tolerances",
]

#: Run name under which :func:`declared_tolerances` loads a script: its ``main`` does not run.
_LOAD_NAME = "optnoise_figure_tolerances"
#: Differences listed per column before the rest are only counted.
_SHOWN_PER_COLUMN = 5


@dataclass(frozen=True)
class Tol:
    """How far a regenerated number may be from the committed one: ``|a - b| <= atol + rtol max(|a|, |b|)``.

    Parameters
    ----------
    rtol, atol : float
        Relative and absolute tolerance (finite, >= 0). NaN matches NaN only, an infinity the
        same infinity only.
    why : str
        What the tolerance rests on (a proof, a solver's stated accuracy), shown in reports.
    where : tuple of (column, value) pairs
        Rows it applies to (every pair must match the committed row's text); empty: every row.
        Set with :meth:`only`, for long-format CSVs whose rows mix exact and solved numbers.
    """

    rtol: float = 0.0
    atol: float = 0.0
    why: str = ""
    where: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0; got {value!r}")

    def only(self, **where: object) -> Tol:
        """This tolerance for the rows whose ``column`` holds ``value`` (as written in the CSV) only."""
        pairs = tuple((c, v if isinstance(v, str) else str(v)) for c, v in where.items())
        return Tol(self.rtol, self.atol, self.why, self.where + pairs)

    def applies(self, row: Mapping[str, str]) -> bool:
        """Whether this tolerance governs ``row`` (a committed row, column -> text)."""
        return all(row.get(c) == v for c, v in self.where)

    def accepts(self, a: float, b: float) -> bool:
        """Whether ``a`` and ``b`` agree within this tolerance."""
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        # the factor absorbs the binary representation of two decimal strings one unit apart
        return abs(a - b) <= (self.atol + self.rtol * max(abs(a), abs(b))) * (1 + 1e-6)

    def __str__(self) -> str:
        parts = [f"rtol {self.rtol:g}"] + ([f"atol {self.atol:g}"] if self.atol else [])
        rows = " where " + ", ".join(f"{c}={v}" for c, v in self.where) if self.where else ""
        return ", ".join(parts) + rows + (f" ({self.why})" if self.why else "")


#: What a script may declare for one column: one tolerance, or several for different rows
#: (:meth:`Tol.only`; the first that applies to a row governs it, :data:`EXACT` when none does).
ColumnTol = Tol | tuple[Tol, ...]


#: One unit in the last of the CSV_DIGITS significant digits a figure CSV writes.
_DIGITS_RTOL = 10.0 ** (1 - CSV_DIGITS)

#: The default: an exact computation, written with ``CSV_DIGITS`` significant digits, so two
#: reproductions may differ by one unit in the last digit (a last-bit difference can round either way).
EXACT = Tol(rtol=_DIGITS_RTOL, why="exact computation, one unit in the last written digit")
#: A probability or privacy loss summed in floating point from terms of order one: values below
#: about 1e-15 are rounding noise (e.g. a delta of 1e-18 is 0 to double precision).
ROUNDOFF = Tol(rtol=_DIGITS_RTOL, atol=1e-15, why="float sums of O(1) terms: absolute rounding 1e-15")
#: A number an LP/MILP solver decides (an optimum, a solution entry, a quantity re-verified from
#: it): the status "optimal" proves the objective within OPTIMAL_GAP (relative) of a lower bound, and
#: constraints hold to FEASIBILITY_TOL; another machine's solver may stop anywhere in that window.
SOLVER = Tol(rtol=OPTIMAL_GAP, atol=FEASIBILITY_TOL, why="solver: proven gap 1e-6, feasibility 1e-9")


@dataclass
class Report:
    """The outcome of a comparison: ``problems`` lists every difference beyond tolerance, one line each."""

    compared: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def extend(self, other: Report) -> None:
        self.compared += other.compared
        self.problems += other.problems

    def __str__(self) -> str:
        if self.ok:
            return f"{self.compared} CSV file(s) match the reference within their declared tolerances"
        return "\n".join([*self.problems, f"{len(self.problems)} difference(s) beyond tolerance"])


def _parse(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:
        return None


def compare_csv(
    reference: str,
    regenerated: str,
    tolerances: Mapping[str, ColumnTol] | None = None,
    *,
    name: str = "csv",
) -> Report:
    """Compare two CSV texts cell by cell (rows in order); ``tolerances`` maps a column to its :class:`Tol`.

    A column may map to several tolerances restricted to some rows (:meth:`Tol.only`); columns
    not in ``tolerances``, and rows none of a column's tolerances applies to, use :data:`EXACT`.
    A cell is compared as a number when both sides parse as one, else as text. Missing or extra
    columns and rows are reported, and the common ones still compared.
    """
    tolerances = dict(tolerances or {})
    ref_rows = list(csv.reader(io.StringIO(reference)))
    new_rows = list(csv.reader(io.StringIO(regenerated)))
    report = Report(compared=1)
    if not ref_rows or not new_rows:
        report.problems.append(f"{name}: {'reference' if not ref_rows else 'regenerated'} file is empty")
        return report
    ref_head, new_head = ref_rows[0], new_rows[0]
    missing = [c for c in ref_head if c not in new_head]
    extra = [c for c in new_head if c not in ref_head]
    if missing:
        report.problems.append(f"{name}: missing column(s) {', '.join(missing)}")
    if extra:
        report.problems.append(f"{name}: extra column(s) {', '.join(extra)} (not in the reference)")
    ref_data, new_data = ref_rows[1:], new_rows[1:]
    if len(new_data) < len(ref_data):
        report.problems.append(
            f"{name}: missing row(s) {len(new_data) + 1}..{len(ref_data)} "
            f"({len(ref_data)} in the reference, {len(new_data)} regenerated)"
        )
    elif len(new_data) > len(ref_data):
        report.problems.append(
            f"{name}: extra row(s) {len(ref_data) + 1}..{len(new_data)} "
            f"({len(ref_data)} in the reference, {len(new_data)} regenerated)"
        )
    for col in (c for c in ref_head if c in new_head):
        i, j = ref_head.index(col), new_head.index(col)
        declared = tolerances.get(col, ())
        tols = declared if isinstance(declared, tuple) else (declared,)
        bad: list[str] = []
        for row, (r, n) in enumerate(zip(ref_data, new_data, strict=False), start=1):
            a = r[i] if i < len(r) else ""
            b = n[j] if j < len(n) else ""
            if a == b:
                continue
            tol = next((t for t in tols if t.applies(dict(zip(ref_head, r, strict=False)))), EXACT)
            x, y = _parse(a), _parse(b)
            if x is not None and y is not None:
                if tol.accepts(x, y):
                    continue
                diff = abs(x - y)
                rel = diff / max(abs(x), abs(y)) if max(abs(x), abs(y)) > 0 else math.inf
                bad.append(f"row {row}: {a} -> {b} (|diff| {diff:.3g}, relative {rel:.3g}; allowed {tol})")
            else:
                bad.append(f"row {row}: {a!r} -> {b!r} (text must match)")
        if bad:
            more = f"; and {len(bad) - _SHOWN_PER_COLUMN} more row(s)" if len(bad) > _SHOWN_PER_COLUMN else ""
            report.problems.append(f"{name}: column {col}: " + "; ".join(bad[:_SHOWN_PER_COLUMN]) + more)
    return report


def declared_tolerances(experiments: Path) -> tuple[dict[str, dict[str, ColumnTol]], list[str]]:
    """The ``TOLERANCES`` every figure script declares, keyed by ``<paper>/<csv stem>``.

    Returns the tolerances and the problems found: a script without a declaration, a malformed
    one, or two scripts declaring the same CSV. Scripts are loaded without running their ``main``.
    """
    declared: dict[str, dict[str, ColumnTol]] = {}
    owner: dict[str, str] = {}
    problems: list[str] = []
    for paper in (p for p in PAPERS if (experiments / p).is_dir()):
        for script in list_scripts(paper, experiments):
            where = f"{paper}/{script.name}"
            try:
                tols = runpy.run_path(str(script), run_name=_LOAD_NAME).get("TOLERANCES")
            except Exception as exc:  # a broken script is reported with the others, not a traceback
                problems.append(f"{where}: could not be loaded ({type(exc).__name__}: {exc})")
                continue
            if not isinstance(tols, Mapping) or not tols:
                problems.append(f"{where}: declares no TOLERANCES (a mapping of each CSV it writes to its columns)")
                continue
            for stem, cols in tols.items():
                key = f"{paper}/{stem}"
                if not isinstance(cols, Mapping) or not all(
                    isinstance(c, str) and _is_column_tol(t) for c, t in cols.items()
                ):
                    problems.append(f"{where}: TOLERANCES[{stem!r}] must map column names to a Tol or a tuple of Tol")
                    continue
                if key in owner:
                    problems.append(f"{where}: {stem}.csv is also declared by {owner[key]}")
                    continue
                owner[key] = where
                declared[key] = dict(cols)
    return declared, problems


def _is_column_tol(t: object) -> bool:
    return isinstance(t, Tol) or (isinstance(t, tuple) and bool(t) and all(isinstance(x, Tol) for x in t))


def _git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    try:
        out = subprocess.run(["git", "-C", str(root), *args], input=stdin, capture_output=True, check=False)
    except OSError as exc:
        raise ValueError(f"reference: git is not available ({exc}); pass a reference folder instead") from None
    if out.returncode != 0:
        msg = out.stderr.decode(errors="replace").strip().splitlines()
        raise ValueError(f"reference: git {' '.join(args[:2])} failed: {msg[-1] if msg else out.returncode}")
    return out.stdout


def committed_csvs(root: Path, rev: str = "HEAD", folder: str = "figures") -> dict[str, str]:
    """Every CSV under ``folder`` at git revision ``rev`` of the repository at ``root``: path -> text.

    Paths are relative to ``folder`` (``<paper>/<name>.csv``). Read in one ``git cat-file`` call.
    """
    if not isinstance(rev, str) or not rev or rev.startswith("-") or any(c.isspace() for c in rev):
        raise ValueError(f"against must be a git revision (a commit, branch or tag); got {rev!r}")
    names = [
        n
        for n in _git(root, "ls-tree", "-r", "--name-only", rev, "--", folder).decode().splitlines()
        if n.endswith(".csv")
    ]
    if not names:
        raise ValueError(f"reference: no CSV under {folder}/ at git revision {rev!r}")
    blob = _git(root, "cat-file", "--batch", stdin="".join(f"{rev}:{n}\n" for n in names).encode())
    out: dict[str, str] = {}
    pos = 0
    for n in names:
        eol = blob.index(b"\n", pos)
        size = int(blob[pos:eol].split()[2])
        out[n[len(folder) + 1 :]] = blob[eol + 1 : eol + 1 + size].decode()
        pos = eol + 1 + size + 1
    return out


def _folder_csvs(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.glob("*/*.csv"))}


def check_figures(
    figures: str | os.PathLike | None = None,
    *,
    rev: str = "HEAD",
    reference: str | os.PathLike | None = None,
    papers: Sequence[str] | None = None,
) -> Report:
    """Compare every CSV under ``figures`` (default the repository's ``figures/``) with a reference.

    The reference is the git revision ``rev`` of the repository (default ``HEAD``: the committed
    figures), or the folder ``reference`` laid out like ``figures/``. ``papers`` restricts the
    check to some paper folders. Tolerances are those the figure scripts declare
    (:func:`declared_tolerances`); a CSV no script declares is reported.
    """
    experiments = find_experiments_root()
    figures = Path(figures) if figures is not None else experiments.parent / "figures"
    if not figures.is_dir():
        raise ValueError(f"figures folder {str(figures)!r} does not exist")
    if reference is not None and not Path(reference).is_dir():
        raise ValueError(f"reference folder {str(reference)!r} does not exist")
    ref = _folder_csvs(Path(reference)) if reference is not None else committed_csvs(experiments.parent, rev)
    new = _folder_csvs(figures)
    if papers is not None:
        ref = {k: v for k, v in ref.items() if k.split("/")[0] in papers}
        new = {k: v for k, v in new.items() if k.split("/")[0] in papers}
    declared, problems = declared_tolerances(experiments)
    report = Report(problems=list(problems))
    for path in sorted(set(ref) | set(new)):
        if path not in new:
            report.problems.append(f"{path}: missing (in the reference, not regenerated)")
            continue
        if path not in ref:
            report.problems.append(f"{path}: extra (regenerated, not in the reference)")
            continue
        key = path[: -len(".csv")]
        if key not in declared:
            report.problems.append(f"{path}: no figure script declares its tolerances")
        report.extend(compare_csv(ref[path], new[path], declared.get(key), name=path))
    return report
