"""``opspec validate``: every check of the opset data, as ``path:line:col: message`` findings.

Layers, each run only where the one before it left usable data:
1. YAML syntax and JSON Schema (no torch) — :mod:`opspec.spec.load`;
2. consistency inside the data (duplicates, lifecycle, closure, released digests, errata
   against the sealed text and the rows they cite);
3. facts about the installed torch (the op exists, its schema, functional-ness,
   implementations importable). An entry whose ``torch`` range excludes the
   installed torch is not checked against it: it gets one note saying it is absent.

Given a part store (:mod:`opspec.checks.part_cache`), the costly parts are kept there
under keys of their own inputs: each file as parsed and schema-checked, what torch
answers (:mod:`opspec.checks.torch_facts`), each op's special-case rows run, each formula
checked. An edit re-runs the parts it changed; the checks across files always run.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from opspec.bridge import versions
from opspec.checks import accuracy, compatibility, kept_formulas, prose_claims, special_cases, torch_facts
from opspec.checks.beside import Beside, BesideFailed, Claims, can_fork
from opspec.checks.part_cache import PartStore, part_key
from opspec.checks.torch_facts import TorchFacts
from opspec.spec import compatibility as compatibility_policy
from opspec.spec import formulas
from opspec.spec import errata, file_memo, load, manifests, references, released, yamlio
from opspec.spec import special_cases as spec_cases
from opspec.spec.load import Finding, LoadedFile
from opspec.spec.model import (
    BookkeepingOp,
    CoreOp,
    DecompositionRule,
    Interval,
    Opset,
    OutOfScopeOp,
    VersionInfo,
    version_key,
)
from opspec.spec.yamlio import Mark


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    notes: list[Finding] = field(default_factory=list)  # entries absent in the installed torch, as recorded
    missing: list[Finding] = field(default_factory=list)  # ops without special cases, per file (not yet findings)
    unusable: bool = False  # some file could not be parsed at all
    checked_versions: list[str] = field(default_factory=list)
    opsets: dict[str, Opset] = field(default_factory=dict, repr=False)  # the clean versions, for the checks after
    torch: TorchFacts | None = field(default=None, repr=False)  # what torch answered, for the checks after

    @property
    def exit_code(self) -> int:
        if self.unusable:
            return 2
        return 1 if self.findings else 0

    def to_json(self) -> dict[str, Any]:
        lists = {name: [[f.mark.path, f.mark.line, f.mark.col, f.message] for f in getattr(self, name)]
                 for name in ("findings", "notes", "missing")}
        return {**lists, "unusable": self.unusable, "checked_versions": self.checked_versions}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Report":
        """The report :meth:`to_json` wrote; ValueError for anything else."""
        try:
            lists = {name: [Finding(Mark(str(path), int(line), int(col)), str(message))
                            for path, line, col, message in data[name]] for name in ("findings", "notes", "missing")}
            return cls(**lists, unusable=bool(data["unusable"]), checked_versions=[str(v) for v in data["checked_versions"]])
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"not a validate report: {err}") from None


def _at(node: Any, key: Any, fallback: Mark) -> Mark:
    return yamlio.mark_of(node, key, default=fallback)


def validate(root: Path, *, use_torch: bool = True, parts: PartStore | None = None) -> Report:
    """Every check of the opset at ``root``; ``parts``: where parts of the result are kept between runs (None:
    every part is computed)."""
    parts = parts if parts is not None else PartStore(keeping=False)
    with file_memo.kept_in(parts if parts.keeping else None):
        return _validate(root, use_torch, parts)


def _validate(root: Path, use_torch: bool, parts: PartStore) -> Report:
    report = Report()
    index = load.read_index(root)
    report.findings += index.findings
    if index.data is None:
        report.unusable = True
        return report
    if index.findings:
        return report
    infos = [VersionInfo.from_dict(v) for v in index.data["versions"]]
    report.findings += _check_index(root, index, infos)
    # A released version that a newer one follows is history, sealed by its digest and validated against the
    # torch its entry names; only the newest version and drafts must agree with the installed torch.
    newest = max((info.version for info in infos), key=version_key, default=None)
    report.torch = facts = torch_facts.recall(parts) if use_torch else None
    clean_ops: dict[str, LoadedFile] = {}  # the versions whose op files load cleanly, for the policy check
    read: dict[str, tuple] = {}  # version -> (info, ops, rules, bookkeeping, out of scope) as read, to build the model from once
    for position, info in enumerate(infos):
        if not (root / info.version).is_dir():
            continue
        ops_file, rules_file = load.read_version(root, info.version)
        report.checked_versions.append(info.version)
        for loaded in (ops_file, rules_file):
            report.findings += loaded.findings
            if loaded.data is None:
                report.unusable = True
        if ops_file.findings or rules_file.findings:
            continue
        clean_ops[info.version] = ops_file
        entry_mark = yamlio.mark_of(index.data["versions"], position)
        against_torch = facts if info.version == newest or info.status != "released" else None
        findings, notes = _check_version(root, info, entry_mark, ops_file, rules_file, against_torch, parts)
        report.findings += findings
        report.notes += notes
        bookkeeping = load.read_bookkeeping(root, info.version)
        if bookkeeping is not None:
            report.findings += bookkeeping.findings
            report.unusable |= bookkeeping.data is None
            if not bookkeeping.findings:
                report.findings += _check_bookkeeping(bookkeeping, info.version, ops_file, against_torch)
        out_of_scope = load.read_out_of_scope(root, info.version)
        if out_of_scope is not None:
            report.findings += out_of_scope.findings
            report.unusable |= out_of_scope.data is None
            if not out_of_scope.findings:
                report.findings += _check_out_of_scope(out_of_scope, info.version, ops_file, rules_file, against_torch)
        read[info.version] = (info, ops_file, rules_file, bookkeeping, out_of_scope)
    report.findings += _check_policy(root, infos, clean_ops, parts if use_torch else None)
    opsets = _clean_opsets(report, read)
    report.opsets = {opset.version: opset for opset in opsets}
    rows = spec_cases.read(root=root)  # read once: the row check, the errata and the formulas all use them
    written = formulas.syntax_findings(root)  # the formulas, read once too
    formula_check = _formulas_beside(written, opsets, rows, parts) if use_torch and opsets else None
    findings, missing = special_cases.validate_findings(root, opsets, use_torch, rows, parts=parts, facts=facts)
    report.findings += findings
    report.missing += missing
    report.findings += _check_errata(root, opsets, report, rows)
    if not rows[1]:  # citations are judged on clean rows; the rows' own findings are reported already
        report.findings += prose_claims.findings(root, rows[0])
    report.findings += accuracy.validate_findings(root, opsets[-1] if opsets else None,
                                                  facts.pointwise if facts is not None else None)
    if use_torch and opsets:
        report.findings += _formula_findings(written, opsets, rows, parts, formula_check)
    else:
        report.findings += written[1]
    return report


def _formula_cases(rows: tuple[dict, list[Finding]]) -> dict:
    """The rows the formulas run on: with their ops' testing hints, only on clean data, as the rows themselves."""
    cases, case_problems = rows
    return {} if case_problems else cases


@dataclass
class _FormulasBeside:
    """The formulas checked in a forked child, which this process joins once its rows are run."""
    child: Beside
    claims: Claims


def _formulas_beside(written: kept_formulas.Written, opsets: list[Opset], rows: tuple,
                     parts: PartStore) -> _FormulasBeside | None:
    """The formulas checked in a forked child while this process runs the rows, where some verdict must be
    computed: both halves of an empty-cache run at once on two cores."""
    if not can_fork() or not kept_formulas.pending(written, opsets[-1], parts):
        return None
    known, claims = parts.used_keys(), Claims()
    return _FormulasBeside(Beside(lambda: (kept_formulas.claimed(written, opsets[-1], _formula_cases(rows), parts, claims),
                                           parts.used_since(known))), claims)


def _formula_findings(written: kept_formulas.Written, opsets: list[Opset], rows: tuple, parts: PartStore,
                      beside: _FormulasBeside | None) -> list[Finding]:
    """The formulas' findings: this process takes the formulas the child has not claimed yet, then the child's
    are taken into this store; a formula neither answered (no child was started, or it died) is computed here."""
    done: dict = {}
    if beside is not None:
        done = kept_formulas.claimed(written, opsets[-1], _formula_cases(rows), parts, beside.claims)
        try:
            theirs, (used, computed) = beside.child.result()
        except BesideFailed:
            pass
        else:
            parts.take(used, computed)
            done.update(theirs)
    return kept_formulas.findings(written, opsets[-1], _formula_cases(rows), parts, done)


def _check_policy(root: Path, infos: list[VersionInfo], clean_ops: dict[str, LoadedFile],
                  parts: PartStore | None) -> list[Finding]:
    """The compatibility policy's file, and each version against the one before it (schemas judged with torch,
    each pair kept in ``parts``; None: without torch)."""
    policy, findings = compatibility_policy.read_policy(root)
    if policy is None:
        return findings
    ordered = sorted((info.version for info in infos), key=version_key)
    for older, newer in zip(ordered, ordered[1:]):
        if older not in clean_ops or newer not in clean_ops:
            continue
        old = {entry["name"]: entry for _, entry in load.iter_entries(clean_ops[older], "ops")}
        new = {entry["name"]: entry for _, entry in load.iter_entries(clean_ops[newer], "ops")}
        differences = _kept_differences(parts) if parts is not None else None
        for violation in compatibility.transition(policy, older, old, newer, new, differences):
            entry = new.get(violation.op)
            mark = _at(entry, "status", entry.mark) if entry is not None else Mark(str(clean_ops[newer].path), 1, 1)
            findings.append(Finding(mark, str(violation)))
    return findings


def _kept_differences(parts: PartStore):
    """How two schemas differ, judged with torch once per pair: torch is imported only for a pair never judged."""
    def differences(old: str, new: str) -> list:
        return parts.recall(part_key("schema differences", old, new),
                            lambda: compatibility.schema_differences()(old, new))

    return differences


def _check_errata(root: Path, opsets: list[Opset], report: Report, rows: tuple[dict, list[Finding]]) -> list[Finding]:
    """The errata against the sealed versions, the special-case rows (``rows``: as read, with their problems) and
    the bundled lowering manifests they cite (judged only on clean data)."""
    found, problems, usable = errata.read(root)
    report.unusable |= not usable
    if problems or not opsets:
        return problems
    cases, case_problems = rows
    if case_problems:
        return []  # the rows' own findings are reported already; citations are judged on clean rows
    return errata.findings(found, {opset.version: opset for opset in opsets}, cases, manifests.load_bundled())


def _clean_opsets(report: Report, read: dict[str, tuple]) -> list[Opset]:
    """Every version, oldest first, when all of them are clean (from the files as read): special cases are judged
    against these."""
    if report.findings:
        return []
    return [load.opset_from(*read[version]) for version in sorted(read, key=version_key)]


def _folder_version(loaded: LoadedFile, version: str) -> list[Finding]:
    """A version file names the version of the folder it lives in."""
    if loaded.data["opset"] == version:
        return []
    return [Finding(_at(loaded.data, "opset", Mark(str(loaded.path), 1, 1)),
                    f"file says opset {loaded.data['opset']!r} but lives in folder {version}/")]


def _check_bookkeeping(loaded: LoadedFile, version: str, ops_file: LoadedFile, facts: TorchFacts | None) -> list[Finding]:
    """Bookkeeping ops: named by their folder's version, sorted, unique, not core, and (with torch's ``facts``) as
    torch prints them."""
    findings = _folder_version(loaded, version)
    ops, problems = _index_entries(loaded, "ops", BookkeepingOp.from_dict, lambda op: op.name, "bookkeeping op")
    findings += problems
    core = {entry["name"] for _, entry in load.iter_entries(ops_file, "ops")}
    for name, (_, entry) in ops.items():
        if name in core:
            findings.append(Finding(_at(entry, "name", entry.mark), f"{name} is a core op of {version}; a bookkeeping op cannot be core"))
    if facts is not None:
        live = facts.schemas
        for name, (op, entry) in ops.items():
            if name not in live:
                findings.append(Finding(_at(entry, "name", entry.mark), f"unknown op {name} in torch {facts.version}{_did_you_mean(name, live)}"))
            elif op.schema != live[name]:
                findings.append(Finding(_at(entry, "schema", entry.mark), f"{name}: schema differs from torch, which prints: {live[name]}"))
    return findings


def _check_out_of_scope(loaded: LoadedFile, version: str, ops_file: LoadedFile, rules_file: LoadedFile,
                        facts: TorchFacts | None) -> list[Finding]:
    """Ops out of scope by decision: named by their folder's version, sorted, unique, neither core nor decomposed by a
    default rule (a decision is one answer), and (with torch's ``facts``) ops torch has."""
    findings = _folder_version(loaded, version)
    ops, problems = _index_entries(loaded, "ops", OutOfScopeOp.from_dict, lambda op: op.name, "out-of-scope op")
    findings += problems
    core = {entry["name"] for _, entry in load.iter_entries(ops_file, "ops") if entry.get("status") != "removed"}
    decomposed = {entry["op"] for _, entry in load.iter_entries(rules_file, "rules") if entry.get("kind") == "default"}
    for name, (_, entry) in ops.items():
        if name in core:
            findings.append(Finding(_at(entry, "name", entry.mark), f"{name} is a core op of {version}; it cannot be out of scope too"))
        elif name in decomposed:
            findings.append(Finding(_at(entry, "name", entry.mark),
                                    f"{name} has a default rule in {version}; it cannot be out of scope too"))
        if facts is not None and name not in facts.schemas:
            findings.append(Finding(_at(entry, "name", entry.mark), f"unknown op {name} in torch {facts.version}{_did_you_mean(name, facts.schemas)}"))
    return findings


def _check_index(root: Path, index: LoadedFile, infos: list[VersionInfo]) -> list[Finding]:
    findings = []
    seen: set[str] = set()
    entries = index.data["versions"]
    for position, info in enumerate(infos):
        mark = yamlio.mark_of(entries, position)
        if info.version in seen:
            findings.append(Finding(mark, f"version {info.version} is listed twice"))
        seen.add(info.version)
        if not (root / info.version).is_dir():
            findings.append(Finding(mark, f"version {info.version} has no folder {root / info.version}"))
        elif info.status == "released" and info.digest != load.version_digest(root, info.version):
            findings += _broken_seal(root, info, _at(entries[position], "digest", mark))
    order = [info.version for info in infos]
    if order != sorted(order, key=version_key):
        findings.append(Finding(index.data["versions"].mark, "versions must be listed oldest first"))
    for folder in sorted(p.name for p in root.iterdir() if p.is_dir() and p.name[:1].isdigit()):
        if folder not in seen:
            findings.append(Finding(Mark(str(load.versions_path(root)), 1, 1), f"folder {folder}/ is not listed in versions.yaml"))
    return findings


def _broken_seal(root: Path, info: VersionInfo, mark: Mark) -> list[Finding]:
    """The digest no longer matches: name the changed file(s) and line where git history can tell."""
    rule = "released versions are immutable: put the change in a new version"
    names = [*load.VERSION_FILES, *load.OPTIONAL_FILES]
    changed = released.changes(root, info.version, info.digest, names)
    if not changed:
        where = "" if changed is not None else "; without the release's git history the changed file cannot be named"
        return [Finding(mark, f"released version {info.version} has changed since its release (digest mismatch){where}; "
                              f"{rule}")]
    named = ", ".join(f"{path.name} (from line {line})" for path, line in changed)
    return [Finding(mark, f"released version {info.version} has changed since its release (digest mismatch): "
                          f"{named}; {rule}")] + [
        Finding(Mark(str(path), line, 1), f"released version {info.version} has changed since its release: this file "
                                          f"differs from the release from line {line} on; {rule}")
        for path, line in changed]


def _check_version(
    root: Path,
    info: VersionInfo,
    index_mark: Mark,
    ops_file: LoadedFile,
    rules_file: LoadedFile,
    facts: TorchFacts | None,
    parts: PartStore,
) -> tuple[list[Finding], list[Finding]]:
    """The version's own files checked, and against torch's ``facts`` where given."""
    findings: list[Finding] = []
    for loaded in (ops_file, rules_file):
        if loaded.data["opset"] != info.version:
            findings.append(
                Finding(
                    _at(loaded.data, "opset", Mark(str(loaded.path), 1, 1)),
                    f"file says opset {loaded.data['opset']!r} but lives in folder {info.version}/",
                )
            )

    ops, problems = _index_entries(ops_file, "ops", CoreOp.from_dict, lambda op: op.name, "op")
    findings += problems
    for op, entry in ops.values():
        findings += _check_lifecycle(op, entry, info.version)

    core = {name for name, (op, _) in ops.items() if op.status != "removed"}
    rules, problems = _index_entries(rules_file, "rules", DecompositionRule.from_dict, lambda rule: rule.op, "rule for")
    findings += problems
    for rule, entry in rules.values():
        findings += _check_rule_closure(rule, entry, ops, core)

    notes: list[Finding] = []
    if facts is not None:
        ops, rules, absent_findings, notes = _set_aside_absent(ops, rules, facts)
        findings += absent_findings
        findings += _check_against_torch(ops, rules, facts, parts)
    return findings, notes


def _set_aside_absent(ops: dict[str, tuple[CoreOp, Any]], rules: dict[str, tuple[DecompositionRule, Any]],
                      facts: TorchFacts):
    """Entries whose torch range excludes the installed torch: a note each, and no further checks.

    A range that excludes a torch which does provide the entry is stale: a finding."""
    findings, notes = [], []
    live = facts.schemas
    version = facts.installed
    kept_ops, kept_rules = {}, {}
    for name, (op, entry) in ops.items():
        absence = versions.recorded_absence(op.name, op.torch, version)
        if absence is None:
            kept_ops[name] = (op, entry)
        elif live.get(name) == op.schema:
            findings.append(Finding(_at(entry["torch"], "versions", entry.mark), f"{name}: recorded as absent in torch {version} (holds for torch {op.torch}), but torch {version} has it with this schema; widen torch.versions"))
        else:
            notes.append(Finding(_at(entry, "torch", entry.mark), f"note: {absence}"))
    for name, (rule, entry) in rules.items():
        absence = versions.recorded_absence(rule.op, rule.torch, version)
        if absence is None:
            kept_rules[name] = (rule, entry)
            continue
        provided = name in live and (not rule.uses_torch or name in facts.registered or name in facts.core_table)
        if provided:
            findings.append(Finding(_at(entry["torch"], "versions", entry.mark), f"{name}: recorded as absent in torch {version} (holds for torch {rule.torch}), but torch {version} provides it; widen torch.versions"))
        else:
            notes.append(Finding(_at(entry, "torch", entry.mark), f"note: {absence}"))
    return kept_ops, kept_rules, findings, notes


def _index_entries(loaded: LoadedFile, key: str, build, name_of, what: str) -> tuple[dict[str, tuple[Any, Any]], list[Finding]]:
    """Entries of one list by name, with a finding for each duplicate and for unsorted order."""
    indexed: dict[str, tuple[Any, Any]] = {}
    findings = []
    for _, entry in load.iter_entries(loaded, key):
        item = build(entry)
        name = name_of(item)
        if name in indexed:
            first = indexed[name][1].mark
            findings.append(Finding(entry.mark, f"duplicate {what} {name} (first listed at line {first.line})"))
            continue
        indexed[name] = (item, entry)
    if list(indexed) != sorted(indexed):
        findings.append(Finding(loaded.data[key].mark, f"{key} must be sorted (keeps diffs reviewable)"))
    return indexed, findings


def _check_lifecycle(op: CoreOp, entry: Any, version: str) -> list[Finding]:
    findings = []
    later = lambda a, b: version_key(a) > version_key(b)  # noqa: E731
    if later(op.since, version):
        findings.append(Finding(_at(entry, "since", entry.mark), f"{op.name}: since {op.since} is after this version {version}"))
    if op.deprecated and later(op.since, op.deprecated):
        findings.append(Finding(_at(entry, "deprecated", entry.mark), f"{op.name}: deprecated {op.deprecated} before it was added ({op.since})"))
    if op.removed and op.deprecated and later(op.deprecated, op.removed):
        findings.append(Finding(_at(entry, "removed", entry.mark), f"{op.name}: removed {op.removed} before it was deprecated ({op.deprecated})"))
    if op.status == "active" and (op.deprecated or op.removed):
        findings.append(Finding(_at(entry, "status", entry.mark), f"{op.name}: status is active but the entry carries a deprecated/removed version"))
    return findings


def _check_rule_closure(rule: DecompositionRule, entry: Any, ops: dict[str, tuple[CoreOp, Any]], core: set[str]) -> list[Finding]:
    findings = []
    if rule.kind == "default" and rule.op in core and not ops[rule.op][0].has_exception("also-decomposed"):
        findings.append(
            Finding(
                _at(entry, "op", entry.mark),
                f"{rule.op} is core in this version, so a default rule would remove it; "
                "make the rule optional or record an also-decomposed exception on the op",
            )
        )
    if rule.kind == "optional" and rule.op not in core:
        findings.append(Finding(_at(entry, "kind", entry.mark), f"optional rule for {rule.op}, which is not core in this version"))
    for block, extra in zip(rule.torch_targets, entry.get("torch_targets", ())):
        for position, target in enumerate(block.targets):
            if target not in core:
                findings.append(Finding(_line_of_item(extra["targets"], position),
                                        f"{rule.op}: target {target} (torch {block.specifier}) is not a core op of this version (closure){_did_you_mean(target, core)}"))
    targets = entry["targets"]
    for position, target in enumerate(rule.targets):
        if target not in core:
            hint = _did_you_mean(target, core)
            findings.append(
                Finding(
                    _line_of_item(targets, position),
                    f"{rule.op}: target {target} is not a core op of this version (closure){hint}",
                )
            )
        if target == rule.op:
            findings.append(Finding(_line_of_item(targets, position), f"{rule.op}: a rule cannot target its own op"))
    return findings


def _line_of_item(sequence: Any, position: int) -> Mark:
    return yamlio.mark_of(sequence, position)


def _did_you_mean(name: str, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _check_against_torch(ops: dict[str, tuple[CoreOp, Any]], rules: dict[str, tuple[DecompositionRule, Any]],
                         facts: TorchFacts, parts: PartStore) -> list[Finding]:
    live = facts.schemas
    findings = []

    for name, (op, entry) in ops.items():
        if name not in live:
            findings.append(Finding(_at(entry, "name", entry.mark), f"unknown op {name} in torch {facts.version}{_did_you_mean(name, live)}"))
            continue
        if op.schema != live[name]:
            findings.append(Finding(_at(entry, "schema", entry.mark), f"{name}: schema differs from torch {facts.version}, which prints: {live[name]}"))
            continue
        schema = facts.parsed[name]  # op.schema is the string torch prints, parsed once
        if schema.name != name:
            findings.append(Finding(_at(entry, "schema", entry.mark), f"{name}: schema string names a different op ({schema.name})"))
        if not schema.functional and not op.has_exception("not-functional"):
            findings.append(Finding(_at(entry, "name", entry.mark), f"{name} is an in-place or out= variant; core ops must be functional unless a not-functional exception says why"))
        if op.has_exception("also-decomposed") and name not in facts.core_table:
            findings.append(Finding(_at(entry, "exceptions", entry.mark), f"{name}: recorded as also-decomposed, but torch's core decomposition table has no entry for it"))
        if op.has_exception("symbolic") and not schema.symbolic:
            findings.append(Finding(_at(entry, "exceptions", entry.mark), f"{name}: recorded as symbolic but returns tensors"))
        findings += _check_hint_names(name, schema.arguments, op.raw.get("testing"), entry)

    for name, (rule, entry) in rules.items():
        if name not in live:
            findings.append(Finding(_at(entry, "op", entry.mark), f"unknown op {name} in torch {facts.version}{_did_you_mean(name, live)}"))
            continue
        for position, target in enumerate(rule.targets):
            if target not in live:
                findings.append(Finding(_line_of_item(entry["targets"], position), f"{name}: unknown target op {target}{_did_you_mean(target, live)}"))
        if rule.uses_torch:
            if name not in facts.registered and name not in facts.core_table:
                findings.append(Finding(_at(entry, "implementation", entry.mark), f"{name}: absent in torch {facts.installed}: torch registers no decomposition for it; give a module:function, or record the torch versions that have it (torch.versions)"))
        else:
            problem = _import_problem(rule.implementation, parts)
            if problem:
                findings.append(Finding(_at(entry, "implementation", entry.mark), f"{name}: {problem}"))
        findings += _check_hint_names(name, facts.parsed[name].arguments, rule.raw.get("testing"), entry)
    return findings


def _check_hint_names(name: str, schema_arguments: tuple[str, ...], testing: Any, entry: Any) -> list[Finding]:
    if not testing:
        return []
    arguments = set(schema_arguments)
    findings = []
    for section in ("domain", "shapes", "ranks", "choices"):
        block = testing.get(section) or {}
        for arg in block:
            if arg not in arguments:
                hint = _did_you_mean(arg, arguments)
                findings.append(Finding(_at(block, arg, testing.mark), f"{name}: testing.{section} names {arg!r}, which is not an argument of the schema{hint}"))
        if section == "domain":
            for arg, text in block.items():
                try:
                    Interval.parse(text)
                except ValueError as err:
                    findings.append(Finding(_at(block, arg, testing.mark), f"{name}: {err}"))
    return findings


def _import_problem(reference: str, parts: PartStore) -> str | None:
    """Why a rule's implementation cannot be used. Kept for opspec's own modules (the part store's key covers their
    source); any other module is code no key covers, imported afresh on every run."""
    if reference.startswith("opspec."):
        return parts.recall(part_key("implementation", reference), lambda: _import_problem_now(reference))
    return _import_problem_now(reference)


def _import_problem_now(reference: str) -> str | None:
    try:
        references.load_callable(reference)
    except references.ImplementationError as err:  # an implementation that fails to import is a finding
        return str(err)
    return None
