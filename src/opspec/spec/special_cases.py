"""Special cases as data: what an op returns where its semantics branch (``opset/special_cases/``).

One row is an input condition and the exact result (``opset/special_cases/README.md``).
This module only reads and checks the files (YAML with marks, the JSON Schema, the
rules a schema cannot say); running a row against torch is :mod:`opspec.testing.special_cases`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from opspec.spec import file_memo, load, resources, yamlio
from opspec.spec.errors import Finding
from opspec.spec.model import torch_specifier
from opspec.spec.yamlio import DataError, Mark

FOLDER = "special_cases"
SCHEMA = "special_cases.schema.json"
RESULT_KEYS = ("expect", "expect_each", "raises", "undefined")
OUT_OF_CONTRACT = "out-of-contract"  # inputs the opset does not define: the row states an error or ``undefined``
SPECIAL_NAMES = ("nan", "inf", "-inf", "-0.0", "+0.0", "max", "-max", "min", "tiny", "-tiny",
                 "subnormal", "-subnormal", "eps")


@dataclass(frozen=True)
class Latitude:
    """Other results a backend may return for a row, and why the opset allows them."""

    allowed: tuple
    reason: str
    torch_too: bool = False  # torch's own result depends on the build or CPU, so it may be an allowed one too
    policy: str | None = None  # "subnormals": allowed only in the dtypes the opset's subnormal policy lets flush


@dataclass(frozen=True)
class StatedShape:
    """The kernel paths (``long``, ``broadcast``: :mod:`opspec.testing.row_paths`) where torch answers otherwise."""

    paths: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class SpecialCase:
    op: str
    says: str
    klass: str  # the YAML ``class``
    inputs: dict
    dtypes: tuple[str, ...] = ()  # empty: the floating dtypes among the op's testing dtypes
    expect: Any = None
    expect_each: tuple | None = None
    raises: str | None = None
    undefined: str | None = None  # out of contract: what torch does instead of raising; any outcome conforms
    match: str | None = None
    rtol: float | None = None
    latitude: Latitude | None = None
    stated_shape: StatedShape | None = None
    torch: str | None = None
    devices: tuple[str, ...] = ()  # empty: every device
    reason: str | None = None
    mark: Mark = Mark("<unknown>", 1, 1)
    has_expect: bool = False  # ``expect: null`` is not a row (the schema refuses it); this tells 0-d None apart
    id: str = ""  # stable within its file; a citation is ``FILE#id`` (see :mod:`opspec.spec.row_refs`)

    @classmethod
    def from_dict(cls, op: str, data: dict, mark: Mark) -> "SpecialCase":
        latitude = data.get("latitude")
        stated = data.get("stated_shape")
        return cls(
            op=op,
            says=data["says"],
            klass=data["class"],
            inputs=plain(data["inputs"]),
            dtypes=tuple(data.get("dtypes", ())),
            expect=plain(data.get("expect")),
            expect_each=tuple(plain(data["expect_each"])) if "expect_each" in data else None,
            raises=data.get("raises"),
            undefined=data.get("undefined"),
            match=data.get("match"),
            rtol=data.get("rtol"),
            latitude=Latitude(tuple(plain(latitude["allowed"])), latitude["reason"],
                              bool(latitude.get("torch_too")), latitude.get("policy")) if latitude else None,
            stated_shape=StatedShape(tuple(stated["paths"]), stated["reason"]) if stated else None,
            torch=data.get("torch"),
            devices=tuple(data.get("devices", ())),
            reason=data.get("reason"),
            mark=mark,
            has_expect="expect" in data,
            id=data.get("id", ""),
        )

    def __hash__(self) -> int:  # inputs is a dict; a row is identified by where it stands
        return hash((self.op, self.mark))

    @property
    def where(self) -> str:
        """``path:line`` of the row: where an editor finds it now (findings); citations use :attr:`cite`."""
        return f"{self.mark.path}:{self.mark.line}"

    @property
    def file(self) -> str:
        return Path(self.mark.path).name

    @property
    def cite(self) -> str:
        """``opset/special_cases/FILE#id``: how reports, expectations and prose name the row (lines move, ids do not)."""
        return f"opset/{FOLDER}/{self.file}#{self.id}"


def row_key(case: SpecialCase) -> str:
    """How a row is named across runs (its line moves as rows are added; its op and claim do not)."""
    return f"{case.op}: {case.says}"


def plain(value: Any) -> Any:
    """The value without marks: plain dicts and lists, so a row compares and prints like its YAML."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def folder(root: Path | None = None) -> Path:
    return Path(root or resources.opset_root()) / FOLDER


def data_files(root: Path | None = None) -> list[Path]:
    """The special-case files of the opset, in a stable order."""
    where = folder(root)
    return sorted(where.glob("*.yaml")) if where.is_dir() else []


_ANY_OF = re.compile(r"^(?P<prefix>.*?)(?P<value>'[^']*'|\S+) is not valid under any of the given schemas$")


def _row_findings(op: str, row: Any, mark: Mark) -> list[Finding]:
    """What the schema cannot say in one clear line: exactly one result key, a parsable torch range."""
    findings = []
    if not isinstance(row, dict):
        return findings
    present = [key for key in RESULT_KEYS if key in row]
    if len(present) != 1:
        what = "none of" if not present else "more than one of"
        findings.append(Finding(mark, f"{op}: a row states exactly one of expect, expect_each, raises, undefined ({what} them here)"))
    if "undefined" in row and row.get("class") != OUT_OF_CONTRACT:
        findings.append(Finding(yamlio.mark_of(row, "undefined", default=mark),
                                f"{op}: only a row of class {OUT_OF_CONTRACT} may leave its outcome undefined"))
    for key in ("expect", "expect_each"):
        for leaf in _string_leaves(row.get(key)):
            if leaf not in SPECIAL_NAMES:
                findings.append(Finding(yamlio.mark_of(row, key, default=mark),
                                        f"{op}: {key}: {leaf!r} is not a special name ({', '.join(SPECIAL_NAMES)})"))
    if isinstance(row.get("torch"), str):
        try:
            torch_specifier(row["torch"])
        except ValueError as err:
            findings.append(Finding(yamlio.mark_of(row, "torch", default=mark), f"{op}: {err}"))
    return findings


def _string_leaves(literal: Any) -> Iterable[str]:
    if isinstance(literal, str):
        yield literal
    elif isinstance(literal, list):
        for item in literal:
            yield from _string_leaves(item)
    elif isinstance(literal, dict) and "values" in literal:
        yield from _string_leaves(literal["values"])


_ROW_PATH = re.compile(r"^ops/(?P<op>[^/]+)/(?P<index>\d+)(/|:)")


def read_file(path: Path) -> tuple[list[SpecialCase], list[Finding]]:
    """The rows of one file and every problem with its data, each at its line."""
    return file_memo.recall(path, "special_cases.read_file", lambda: _read_file(path))


def _read_file(path: Path) -> tuple[list[SpecialCase], list[Finding]]:
    try:
        data = yamlio.load_file(path, comments_after_values=False)
    except DataError as err:
        return [], [Finding(err.mark, err.message)]
    findings = []
    ops = data.get("ops") if isinstance(data, dict) else None
    rows_with_own_findings: set[tuple[str, int]] = set()
    ids: dict[str, Mark] = {}
    if isinstance(ops, dict):
        for op, rows in ops.items():
            for index, row in enumerate(rows if isinstance(rows, list) else ()):
                own = _row_findings(op, row, yamlio.mark_of(rows, index))
                if own:
                    rows_with_own_findings.add((op, index))
                findings += own
                row_id = row.get("id") if isinstance(row, dict) else None
                if isinstance(row_id, str):
                    at = yamlio.mark_of(row, "id", default=yamlio.mark_of(rows, index))
                    if row_id in ids:
                        findings.append(Finding(at, f"{op}: id {row_id!r} is already the id of the row at line "
                                                    f"{ids[row_id].line}; a row's id is unique in its file"))
                    ids.setdefault(row_id, at)
    for finding in load.schema_findings(data, SCHEMA, str(path)):
        row_path = _ROW_PATH.match(finding.message)
        # anyOf/oneOf failures print the whole value; the row's own finding says it in one line.
        if row_path and (row_path["op"], int(row_path["index"])) in rows_with_own_findings and "valid under" in finding.message:
            continue
        findings.append(Finding(finding.mark, _readable(finding.message)))
    if findings or not isinstance(ops, dict):
        return [], sorted(findings, key=lambda f: (f.mark.line, f.mark.col))
    cases = [
        SpecialCase.from_dict(op, row, yamlio.mark_of(rows, index))
        for op, rows in ops.items()
        for index, row in enumerate(rows)
    ]
    return cases, []


def _readable(message: str) -> str:
    match = _ANY_OF.match(message)
    if match:
        names = ", ".join(SPECIAL_NAMES)
        return f"{match['prefix']}{match['value']} is not a number, a bool, a list or a special name ({names})"
    return message


def read(paths: Iterable[Path] | None = None, root: Path | None = None) -> tuple[dict[str, tuple[SpecialCase, ...]], list[Finding]]:
    """Every row of ``paths`` (default: the opset's files) by op, and every problem found.

    An op belongs to one file: a second file naming it is a finding at its key.
    """
    cases: dict[str, list[SpecialCase]] = {}
    owner: dict[str, Path] = {}
    findings: list[Finding] = []
    for path in (data_files(root) if paths is None else [Path(p) for p in paths]):
        rows, problems = read_file(path)
        findings += problems
        for case in rows:
            if case.op in owner and owner[case.op] != path:
                findings.append(Finding(case.mark, f"{case.op} already has rows in {owner[case.op]}; an op's rows live in one file"))
                continue
            owner[case.op] = path
            cases.setdefault(case.op, []).append(case)
    return {op: tuple(rows) for op, rows in cases.items()}, findings


def find_row(cases: dict[str, tuple[SpecialCase, ...]], file: str, says: str, op: str | None = None) -> SpecialCase | None:
    """The row of ``file`` (a name in ``opset/special_cases/``) that ``says`` this, among ``op``'s rows where given:
    a row is cited by its file and claim, which survive edits that move its line."""
    rows = cases.get(op, ()) if op is not None else [row for found in cases.values() for row in found]
    return next((row for row in rows if row.says == says and Path(row.mark.path).name == file), None)


def load_special_cases(root: Path | None = None, paths: Iterable[Path] | None = None) -> dict[str, tuple[SpecialCase, ...]]:
    """op -> its rows, schema-checked; DataError naming file:line (and how many more problems) on bad data."""
    cases, findings = read(paths, root)
    if findings:
        first = findings[0]
        more = f" (and {len(findings) - 1} more problem{'s' if len(findings) > 2 else ''})" if len(findings) > 1 else ""
        raise DataError(first.mark, first.message + more)
    return cases
