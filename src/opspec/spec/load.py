"""Read the opset data from disk into the model, reporting every problem with its place.

Two layers of checking live here because they need nothing but the files: YAML
syntax and the JSON Schemas in ``opset/schema``. Semantic checks that need torch
are in :mod:`opspec.checks.validate`.
"""
from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

import jsonschema
import jsonschema_rs
from referencing import Registry, Resource

from opspec.spec import file_memo, resources, yamlio
from opspec.spec.errors import Finding, OpsetError
from opspec.spec.model import (
    BookkeepingOp,
    CoreOp,
    DecompositionRule,
    OpDescription,
    Opset,
    OutOfScopeOp,
    VersionInfo,
    torch_specifier,
    version_key,
)
from opspec.spec.yamlio import DataError, Mark

INDEX = "versions.yaml"
VERSION_FILES = ("core_ops.yaml", "decompositions.yaml")
# Optional per version: the policy for assertion and bookkeeping ops. Sealed into a
# released version's digest only when present, so versions without it keep theirs.
BOOKKEEPING_FILE = "bookkeeping_ops.yaml"
BOOKKEEPING_SCHEMA = "bookkeeping_ops.schema.json"
# Optional per version: the ops it declares out of scope by decision (a family proposal's third answer).
OUT_OF_SCOPE_FILE = "out_of_scope.yaml"
OUT_OF_SCOPE_SCHEMA = "out_of_scope.schema.json"
OPTIONAL_FILES = {BOOKKEEPING_FILE: BOOKKEEPING_SCHEMA, OUT_OF_SCOPE_FILE: OUT_OF_SCOPE_SCHEMA}
# Schema keywords whose findings also state the size written and the limit it missed.
LENGTH_LIMITS = ("minLength", "maxLength", "minItems", "maxItems")


@dataclass
class LoadedFile:
    path: Path
    data: Any
    findings: list[Finding] = field(default_factory=list)


SCHEMA_BASE = "https://opspec.dev/schema/"


@functools.lru_cache(maxsize=None)
def _schemas(schema_dir: Path) -> dict[str, Any]:
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in schema_dir.glob("*.schema.json")}


@functools.lru_cache(maxsize=None)
def _validator(schema_dir: Path, name: str) -> jsonschema.protocols.Validator:
    """The validator that explains: every error, with the path and schema keyword a finding is made of."""
    schemas = _schemas(schema_dir)
    registry = Registry().with_resources(
        (f"{SCHEMA_BASE}{file}", Resource.from_contents(contents)) for file, contents in schemas.items()
    )
    schema = schemas[name]
    cls = _resolving_once(jsonschema.validators.validator_for(schema))
    return cls(schema, registry=registry)


@functools.lru_cache(maxsize=None)
def _compiled(schema_dir: Path, name: str) -> Any:
    """The same schema compiled (jsonschema-rs, about a hundred times faster): it answers only whether a file is
    valid, which almost every file is; the explaining validator runs where it is not."""
    schemas = _schemas(schema_dir)
    registry = jsonschema_rs.Registry([(f"{SCHEMA_BASE}{file}", contents) for file, contents in schemas.items()])
    return jsonschema_rs.validator_for(schemas[name], registry=registry)


def _surely_valid(data: Any, schema_dir: Path, name: str) -> bool:
    """Whether the compiled schema accepts ``data``; False also where it cannot judge a value (one YAML gave a
    type JSON has not): the explaining validator then decides."""
    try:
        return _compiled(schema_dir, name).is_valid(data)
    except Exception:  # noqa: BLE001 - any refusal only sends the data the slow way
        return False


def _resolving_once(cls: type) -> type:
    """``cls`` resolving each ``$ref`` once rather than at every value it checks (a third of the rows' schema check).

    A resolution depends only on the schema holding the ``$ref`` and the resource it sits in: the opset's schemas
    have one ``$id`` each and no ``$dynamicRef``, whose scope is the one thing a later resolution could differ in."""
    resolved: dict[int, Any] = {}  # id of the schema holding the $ref (kept alive by the validator) -> resolution

    def ref(validator, ref: str, instance: Any, schema: dict):
        found = resolved.get(id(schema))
        if found is None:
            found = resolved[id(schema)] = validator._resolver.lookup(ref)
        yield from validator.descend(instance, found.contents, resolver=found.resolver)

    return jsonschema.validators.extend(cls, {"$ref": ref})


def schema_findings(data: Any, schema_name: str, path: str, schema_dir: Path | None = None) -> list[Finding]:
    """JSON Schema errors, each pinned to the line of the offending node."""
    schema_dir = schema_dir or resources.schema_dir()
    if _surely_valid(data, schema_dir, schema_name):
        return []
    validator = _validator(schema_dir, schema_name)
    findings = []
    for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        node, parent, key = data, None, None
        for step in error.absolute_path:
            parent, key = node, step
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                break
        mark = yamlio.mark_of(parent, key) if parent is not None else yamlio.mark_of(data)
        if error.validator == "additionalProperties" and isinstance(node, dict):
            extra = [k for k in node if k not in error.schema.get("properties", {})]
            if extra:
                mark = yamlio.mark_of(node, extra[0])
        if mark.path == "<unknown>":
            mark = Mark(path, 1, 1)
        findings.append(Finding(mark, _describe(error)))
    return findings


def _describe(error: jsonschema.ValidationError, path: Iterable[Any] | None = None) -> str:
    where = "/".join(str(p) for p in (error.absolute_path if path is None else path))
    prefix = f"{where}: " if where else ""
    if error.validator == "additionalProperties":
        extra = [k for k in error.instance if k not in error.schema.get("properties", {})]
        return f"{prefix}unknown key{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))}"
    if error.validator == "enum":
        return f"{prefix}{error.instance!r} is not one of {', '.join(map(repr, error.validator_value))}"
    if error.validator in ("oneOf", "anyOf") and error.context and isinstance(error.instance, dict):
        # Say why each allowed form does not fit, not only that none does.
        reasons: dict[int, str] = {}
        for sub in sorted(error.context, key=lambda e: len(e.path)):
            reasons.setdefault(sub.schema_path[0], _describe(sub, sub.path))
        return f"{prefix}fits none of its forms ({'; '.join(f'{_form_name(error, i)}: {r}' for i, r in sorted(reasons.items()))})"
    if error.validator in LENGTH_LIMITS and isinstance(error.instance, (str, list)):
        return f"{prefix}{error.message} ({_size_against_limit(error)})"
    return f"{prefix}{error.message}"


def _size_against_limit(error: jsonschema.ValidationError) -> str:
    """'12 characters, at least 20': what was written against the limit, so the author knows how far off it is."""
    size = len(error.instance)
    unit = "character" if isinstance(error.instance, str) else "item"
    bound = "at least" if error.validator.startswith("min") else "at most"
    return f"{size} {unit}{'' if size == 1 else 's'}, {bound} {error.validator_value}"


def _form_name(error: jsonschema.ValidationError, index: int) -> str:
    """A oneOf/anyOf branch by the definition it refers to (``#/$defs/row`` -> row), else by its place."""
    ref = error.validator_value[index].get("$ref", "") if isinstance(error.validator_value[index], dict) else ""
    name = ref.rsplit("/", 1)[-1]
    return f"as {'an' if name[:1] in 'aeiou' else 'a'} {name}" if ref else f"form {index + 1}"


def read(path: Path, schema_name: str, *, prose: bool = False) -> LoadedFile:
    """Parse and schema-check one data file; a file that cannot be parsed has data None. ``prose``: the spec's own
    text (ops, rules, descriptions, errata), where a comment after a plain value on its line is refused, since it
    may have cut the value; other files (a backend's expectations) keep YAML's trailing comments. Inside
    :func:`file_memo.kept_in` a file read before with the same bytes is not parsed again."""
    return file_memo.recall(path, f"load.read {schema_name} prose={prose}", lambda: _read(path, schema_name, prose))


def _read(path: Path, schema_name: str, prose: bool) -> LoadedFile:
    try:
        data = yamlio.load_file(path, comments_after_values=not prose)
    except DataError as err:
        return LoadedFile(path, None, [Finding(err.mark, err.message)])
    findings = schema_findings(data, schema_name, str(path))
    return LoadedFile(path, data, findings)


def read_checked(path: Path, schema_name: str, kind: str, *, prose: bool = False) -> Any:
    """The data of a file that must exist and pass its schema; OpsetError (file:line: message) otherwise."""
    if not path.is_file():
        raise OpsetError([Finding(yamlio.Mark(str(path), 1, 1), f"no such {kind} file")])
    loaded = read(path, schema_name, prose=prose)
    if loaded.findings:
        raise OpsetError(loaded.findings)
    return loaded.data


def versions_path(root: Path) -> Path:
    return root / INDEX


def read_index(root: Path) -> LoadedFile:
    """``versions.yaml``, parsed and schema-checked: the one reader of the version index."""
    return read(versions_path(root), "versions.schema.json")


def index_statuses(data: Any) -> dict[str, str]:
    """version -> status ('draft' | 'released') from the index's data, oldest first.

    Lenient: entries without a version are skipped, so proposal checks still work
    while the index has schema findings of its own (those are ``opspec validate``'s).
    """
    found = {}
    entries = data.get("versions") if isinstance(data, dict) else None
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and isinstance(entry.get("version"), str):
            found[entry["version"]] = str(entry.get("status"))
    return dict(sorted(found.items(), key=lambda item: version_key(item[0])))


def read_version(root: Path, version: str) -> tuple[LoadedFile, LoadedFile]:
    folder = root / version
    ops_file = read(folder / "core_ops.yaml", "core_ops.schema.json", prose=True)
    rules_file = read(folder / "decompositions.yaml", "decompositions.schema.json", prose=True)
    for loaded, key, name_key in ((ops_file, "ops", "name"), (rules_file, "rules", "op")):
        if not loaded.findings:
            loaded.findings += torch_range_findings(loaded, key, name_key)
    return ops_file, rules_file


def torch_range_findings(loaded: LoadedFile, key: str, name_key: str) -> list[Finding]:
    """A ``torch.versions`` that is no version specifier, at its line (the schema sees only a string)."""
    findings = []
    for _, entry in iter_entries(loaded, key):
        blocks = [entry.get("torch"), *(entry.get("torch_targets") or ())]
        for block in blocks:
            if not isinstance(block, dict) or not isinstance(block.get("versions"), str):
                continue
            try:
                torch_specifier(block["versions"])
            except ValueError as err:
                findings.append(Finding(yamlio.mark_of(block, "versions", default=entry.mark), f"{entry.get(name_key)}: {err}"))
    return findings


def read_bookkeeping(root: Path, version: str) -> LoadedFile | None:
    """The version's bookkeeping-op policy, or None when the version has none."""
    path = root / version / BOOKKEEPING_FILE
    return read(path, BOOKKEEPING_SCHEMA) if path.is_file() else None


def read_out_of_scope(root: Path, version: str) -> LoadedFile | None:
    """The ops the version declares out of scope, or None when it declares none."""
    path = root / version / OUT_OF_SCOPE_FILE
    return read(path, OUT_OF_SCOPE_SCHEMA) if path.is_file() else None


def version_digest(root: Path, version: str) -> str:
    """sha256 over the version's files (name and bytes), the seal of a released version.

    An optional file counts only where it exists, so adding a kind of optional file leaves
    the seals of versions without one as they were."""
    digest = hashlib.sha256()
    optional = [name for name in OPTIONAL_FILES if (root / version / name).is_file()]
    for name in [*VERSION_FILES, *optional]:
        path = root / version / name
        digest.update(name.encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"<missing>")
        digest.update(b"\0")
    return f"sha256:{digest.hexdigest()}"


def _require_clean(*files: LoadedFile) -> None:
    findings = [f for loaded in files for f in loaded.findings]
    if findings:
        raise OpsetError(findings)


def load_versions(root: Path | None = None) -> list[VersionInfo]:
    """The version index, oldest first."""
    root = root or resources.opset_root()
    index = read_index(root)
    _require_clean(index)
    return sorted((VersionInfo.from_dict(v) for v in index.data["versions"]), key=lambda v: version_key(v.version))


def latest_version(root: Path | None = None) -> str:
    return load_versions(root)[-1].version


def _signature(*paths: Path) -> tuple:
    """What identifies a file's contents cheaply: size and modification time."""
    stats = []
    for path in paths:
        try:
            stat = path.stat()
            stats.append((str(path), stat.st_size, stat.st_mtime_ns))
        except OSError:
            stats.append((str(path), None, None))
    return tuple(stats)


_OPSET_CACHE: dict[tuple, Opset] = {}


def load_opset(version: str | None = None, root: Path | None = None) -> Opset:
    """Load one version (the newest when ``version`` is None). Raises OpsetError on bad data.

    Loaded versions are kept per process and reused while their files are unchanged:
    schema validation dominates the cost, and runners load the same version often.
    """
    root = Path(root or resources.opset_root())
    version = version or latest_version(root)
    key = (version, _signature(versions_path(root), *(root / version / name for name in (*VERSION_FILES, *OPTIONAL_FILES))))
    if key not in _OPSET_CACHE:
        _OPSET_CACHE[key] = _load_opset(version, root)
    return _OPSET_CACHE[key]


def _load_opset(version: str, root: Path) -> Opset:
    infos = {info.version: info for info in load_versions(root)}
    if version not in infos:
        known = ", ".join(sorted(infos, key=version_key))
        raise OpsetError([Finding(Mark(str(versions_path(root)), 1, 1), f"unknown opset version {version!r} (known: {known})")])
    ops_file, rules_file = read_version(root, version)
    bookkeeping_file = read_bookkeeping(root, version)
    out_of_scope_file = read_out_of_scope(root, version)
    _require_clean(ops_file, rules_file, *(f for f in (bookkeeping_file, out_of_scope_file) if f))
    return opset_from(infos[version], ops_file, rules_file, bookkeeping_file, out_of_scope_file)


def opset_from(info: VersionInfo, ops_file: LoadedFile, rules_file: LoadedFile, bookkeeping_file: LoadedFile | None,
               out_of_scope_file: LoadedFile | None = None) -> Opset:
    """The version whose files were read already (:func:`read_version`, :func:`read_bookkeeping`,
    :func:`read_out_of_scope`) and are clean."""
    return Opset(
        version=info.version,
        info=info,
        ops=tuple(CoreOp.from_dict(entry) for entry in ops_file.data["ops"]),
        rules=tuple(DecompositionRule.from_dict(entry) for entry in rules_file.data["rules"]),
        bookkeeping=tuple(BookkeepingOp.from_dict(e) for e in bookkeeping_file.data["ops"]) if bookkeeping_file else (),
        out_of_scope=tuple(OutOfScopeOp.from_dict(e) for e in out_of_scope_file.data["ops"]) if out_of_scope_file else (),
    )


DESCRIPTIONS = "descriptions.yaml"


def load_descriptions(root: Path | None = None) -> dict[str, OpDescription]:
    """What each op computes (``opset/descriptions.yaml``, shared by every version); empty when the file is absent."""
    path = Path(root or resources.opset_root()) / DESCRIPTIONS
    if not path.is_file():
        return {}
    data = read_checked(path, "descriptions.schema.json", "descriptions", prose=True)
    return {op: OpDescription.from_dict(op, entry) for op, entry in data["ops"].items()}


def iter_entries(loaded: LoadedFile, key: str) -> Iterator[tuple[int, Any]]:
    """(index, entry) for each list item under ``key`` that is a mapping."""
    if isinstance(loaded.data, dict) and isinstance(loaded.data.get(key), list):
        for index, entry in enumerate(loaded.data[key]):
            if isinstance(entry, dict):
                yield index, entry
