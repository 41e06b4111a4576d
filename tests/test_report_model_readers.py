"""Every reader and writer of a conformance report goes through the report model (``opspec.results``).

Outside ``src/opspec/results/``, no module of ``src/`` or ``tools/`` reads or writes a key the model owns (a
report's sections, a case record's verdict) by subscript or ``.get`` on a plain dict: it reads the model's
attributes, and a writer builds the model and writes its ``to_dict``. What shares those words without being a
report (an opset entry's ``status``, the worker's result before it is a record) is allowed below, by the
function that reads it, each with what it reads.
"""
from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from opspec.results.model import CaseRecord, Report

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("src", "tools")
THE_MODEL = "src/opspec/results/"

# the keys that say what a case's verdict was, and a report's computed sections; a record's identity and measurements
# (op, dtype, message, duration_s, ...) are everyday words of other data, and are not scanned
VERDICT_KEYS = ("status", "outcome", "executed", "evidence", "blame", "blame_stage", "blame_reason", "expectation",
                "first_run", "special_case", "special_cases", "lowering", "log", "repro_file", "handed_ops",
                "delegated_ops", "accuracy", "decided_by")
KEYS = frozenset((*Report.SECTIONS, *VERDICT_KEYS))
READS = ("get", "pop", "setdefault")

_WORKER = "the worker's result: a case's fields before expectations make it a CaseRecord (conform.suite)"
_FAILURE = "a failure as the run's judges return it, which becomes part of the worker's result"
_CASE = "a repro's CASE description (op, backend, the special-case row it replays), not a record"
_OPSET = "an opset entry's status (active, deprecated, removed) or a version's (released), in the spec's YAML"
_PROPOSAL = "a proposal's status in its front matter"

# (file, function) -> what it reads that is not a report
ALLOWED: dict[tuple[str, str], str] = {
    ("src/opspec/conform/runner.py", "CaseRunner.run"): _WORKER,
    ("src/opspec/conform/runner.py", "CaseRunner._run"): _WORKER,
    ("src/opspec/conform/runner.py", "CaseRunner._accuracy"): _WORKER,
    ("src/opspec/conform/runner.py", "CaseRunner._blame"): _WORKER,
    ("src/opspec/conform/runner.py", "CaseRunner._blame.reproduces"): _FAILURE,
    ("src/opspec/conform/isolation.py", "with_log"): _WORKER,
    ("src/opspec/conform/isolation.py", "Isolated.run"): _WORKER,
    ("src/opspec/conform/isolation.py", "Isolated._run"): _WORKER,
    ("src/opspec/conform/isolation.py", "Isolated._lost"): _WORKER,
    ("src/opspec/conform/isolation.py", "Isolated._attribute"): _WORKER,
    ("src/opspec/conform/isolation.py", "decided_by"): _CASE,
    ("src/opspec/conform/case_accuracy.py", "reproduces"): _FAILURE,
    ("src/opspec/conform/replay.py", "Verdict.failed"): _FAILURE,
    ("src/opspec/conform/replay.py", "source"): _CASE,
    ("src/opspec/conform/replay.py", "verdict"): _CASE,
    ("src/opspec/conform/expectations.py", "read"): "an entry of an expectation file (conformance/expectations)",
    ("src/opspec/reports/site/findings.py", "_finding"): "an entry of an expectation file (conformance/expectations)",
    ("src/opspec/cli/accuracy.py", "_report"): "a measurement of an accuracy table (conformance/accuracy)",
    ("src/opspec/reports/site/accuracy_page.py", "context"): "a measurement of an accuracy table (conformance/accuracy)",
    ("src/opspec/conform/functionalization.py", "read_findings"): "an entry of the functionalization findings file",
    ("src/opspec/spec/model.py", "CoreOp.from_dict"): _OPSET,
    ("src/opspec/spec/model.py", "VersionInfo.from_dict"): _OPSET,
    ("src/opspec/spec/load.py", "index_statuses"): _OPSET,
    ("src/opspec/checks/validate.py", "_check_out_of_scope"): _OPSET,
    ("src/opspec/checks/compatibility.py", "transition"): _OPSET,
    ("src/opspec/proposals/changes.py", "Draft.is_core"): _OPSET,
    ("src/opspec/proposals/changes.py", "_problems"): _OPSET,
    ("src/opspec/proposals/opsetview.py", "OpsetView.is_core"): _OPSET,
    ("src/opspec/proposals/release.py", "plan"): _OPSET,
    ("tools/measure_lowering.py", "core_ops"): _OPSET,
    ("src/opspec/proposals/model.py", "Proposal.from_meta"): _PROPOSAL,
    ("src/opspec/proposals/check.py", "transition_findings"): _PROPOSAL,
    ("src/opspec/cli/proposal.py", "run_list"): "a row of `opspec proposal list` (a proposal's status)",
    ("src/opspec/spec/manifests.py", "BackendManifest.from_dict"): "a backend manifest's evidence and eager-op entries",
    ("tools/measure_eager_ops.py", "main"): "an eager op measured for a backend manifest",
    ("src/opspec/spec/errata.py", "_evidence"): "an erratum's evidence: a backend manifest's lowering of an op",
    ("src/opspec/checks/special_cases.py", "run_isolated"): "a special-case row's line from a child process",
    ("src/opspec/spec/accuracy.py", "SubnormalPolicy.from_dict"): "an accuracy contract's subnormal latitude",
    ("src/opspec/cli/accuracy.py", "_json_text"): "an `opspec accuracy` measurement, not a conformance report",
    ("src/opspec/reports/site/accuracy_page.py", "read_tables"): "an `opspec accuracy` measurement table",
    ("src/opspec/reports/site/version_matrix.py", "read"): "the version matrix's steps (benchmarks)",
    ("src/opspec/reports/site/version_matrix.py", "_step"): "the version matrix's steps (benchmarks)",
    ("src/opspec/reports/site/special_cases.py", "matrix_versions"): "the version matrix's special-case step",
    ("src/opspec/reports/site/models_page.py", "pages"): "the model zoo's results (benchmarks/model_zoo.json)",
}


@dataclasses.dataclass(frozen=True)
class Read:
    path: str
    line: int
    function: str
    key: str
    code: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.code} (key {self.key!r}, in {self.function})"


def report_key_reads(path: Path, root: Path = ROOT) -> list[Read]:
    """Each subscript, ``.get``, ``.pop`` or ``.setdefault`` of a report key with a constant in ``path``."""
    relative = path.relative_to(root).as_posix()
    found: list[Read] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = function
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{function}.{child.name}" if function else child.name
            key = _key_of(child)
            if key is not None:
                found.append(Read(relative, child.lineno, function or "<module>", key, ast.unparse(child)[:100]))
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def _key_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Subscript):
        key = node.slice
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in READS and node.args:
        key = node.args[0]
    else:
        return None
    return key.value if isinstance(key, ast.Constant) and key.value in KEYS else None


def every_read(root: Path = ROOT) -> list[Read]:
    return [read for folder in SCANNED for path in sorted((root / folder).rglob("*.py"))
            if not path.relative_to(root).as_posix().startswith(THE_MODEL) for read in report_key_reads(path, root)]


def test_no_report_is_read_or_written_by_key_outside_the_model():
    unallowed = [str(read) for read in every_read() if (read.path, read.function) not in ALLOWED]
    assert not unallowed, ("reports are read through opspec.results (Report.load or from_dict, CaseRecord's "
                           "attributes), not by key; if it is not a report, allow the function in ALLOWED and say "
                           "what it reads:\n" + "\n".join(unallowed))


def test_every_allowance_still_reads_what_it_says():
    used = {(read.path, read.function) for read in every_read()}
    assert [place for place in ALLOWED if place not in used] == []


def test_the_scanned_keys_are_the_models():
    fields = {field.name for field in dataclasses.fields(CaseRecord)}
    assert set(VERDICT_KEYS) <= fields and "results" in KEYS


def test_a_read_put_back_is_found_with_its_file_and_line(tmp_path):
    module = tmp_path / "src" / "opspec" / "conform" / "reader.py"
    module.parent.mkdir(parents=True)
    module.write_text("def summary(report, record):\n"
                      "    passed = [r for r in report['results'] if r.get('status') == 'pass']\n"
                      "    record['outcome'] = 'fail'\n"
                      "    return passed, record.get('message'), report.header.opset\n")
    (tmp_path / "tools").mkdir()
    assert [str(read) for read in every_read(tmp_path)] == [
        "src/opspec/conform/reader.py:2: report['results'] (key 'results', in summary)",
        "src/opspec/conform/reader.py:2: r.get('status') (key 'status', in summary)",
        "src/opspec/conform/reader.py:3: record['outcome'] (key 'outcome', in summary)",
    ]
