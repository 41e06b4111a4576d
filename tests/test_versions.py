"""Torch versions in the data: ranges on ops, rules and expectations, and what an absent entry costs.

A decomposition the installed torch lacks is simulated by taking it out of torch's
tables (and, for recorded ranges, by pretending another torch is installed): it
must cost exactly one finding or note and one skipped test, and nothing else.
"""
from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from opspec_fixtures import reopen_newest

from opspec.bridge import decomp_table, torch_ops, versions
from opspec.checks import drift
from opspec.checks.validate import validate
from opspec.cli import main
from opspec.conform import expectations
from opspec.conform.cases import Case
from opspec.results.model import CaseRecord
from opspec.spec import load, resources
from opspec.spec.load import OpsetError
from opspec.spec.model import TorchRange, torch_specifier

VERSION = [info.version for info in load.load_versions(resources.opset_root())][-1]  # the newest


@pytest.fixture
def opset_copy(opset_copy):
    """The bundled opset, copied, with its newest version reopened as a draft that tests may break."""
    reopen_newest(opset_copy)
    return opset_copy
MISSING = "aten::hann_window.periodic"
ROOT = Path(__file__).resolve().parents[1]
RANGE = "    torch:\n      versions: '>=2.12'\n"


@pytest.fixture
def without_hann_decomposition(monkeypatch):
    """The installed torch as torch 2.11 is: no decomposition registered for hann_window.periodic."""
    for table in ("core_decomposition_table", "registered_decompositions"):
        full = getattr(torch_ops, table)()
        monkeypatch.setattr(torch_ops, table, lambda full=full: {k: v for k, v in full.items() if k != MISSING})


def rules_file(opset_root: Path) -> Path:
    return opset_root / VERSION / "decompositions.yaml"


def without_range(opset_root: Path) -> Path:
    """The opset copy as it would be had nobody recorded that hann_window.periodic needs torch 2.12."""
    rules = rules_file(opset_root)
    text = rules.read_text()
    start = text.index(RANGE)
    end = text.index("\n", text.index("reason:", start)) + 1
    rules.write_text(text[:start] + text[end:])
    assert "torch:" not in rules.read_text()
    return rules


def test_specifiers_parse_and_ignore_local_labels():
    torch_range = TorchRange(torch_specifier(">=2.12,<2.16"), "a reason long enough to keep")
    assert torch_range.holds_for("2.13.0+cpu") and torch_range.holds_for("2.15.0")
    assert torch_range.holds_for("2.14.0.dev20261101")  # nightlies of a version inside count
    assert not torch_range.holds_for("2.11.0") and not torch_range.holds_for("2.16.0")
    for bad in ("", "2.12", ">=two", ">= 2.12;"):
        with pytest.raises(ValueError, match="is not a version specifier"):
            torch_specifier(bad)


def test_a_bad_range_is_one_line_with_file_and_line(opset_copy, capsys):
    rules = rules_file(opset_copy)
    rules.write_text(rules.read_text().replace("versions: '>=2.12'", "versions: '>=2.x'"))
    code = main(["validate", "--opset-dir", str(opset_copy), "--no-torch"])
    out = capsys.readouterr().out
    line = next(n for n, text in enumerate(rules.read_text().splitlines(), 1) if ">=2.x" in text)
    assert code == 1
    [finding] = [text for text in out.splitlines() if str(rules) in text]
    assert finding.startswith(f"{rules}:{line}:") and f"{MISSING}: torch: '>=2.x' is not a version specifier" in finding
    with pytest.raises(OpsetError, match=rf"{line}:.*is not a version specifier"):
        load.load_opset(VERSION, opset_copy)


def test_a_missing_decomposition_is_one_finding_and_the_table_stays_usable(opset_copy, without_hann_decomposition):
    without_range(opset_copy)
    report = validate(opset_copy)
    assert [f.message for f in report.findings] == [
        f"{MISSING}: absent in torch {versions.installed()}: torch registers no decomposition for it; give a "
        "module:function, or record the torch versions that have it (torch.versions)"]
    opset = load.load_opset(VERSION, opset_copy)
    table = decomp_table.table_by_name(opset)  # built entry by entry: one missing rule does not poison it
    assert MISSING not in table and "aten::hardswish" in table
    sample = tuple(opset.rules_by_op[name] for name in (MISSING, "aten::hardswish"))
    drifted = [r for r in drift.compute(dataclasses.replace(opset, rules=sample)).rules if r.drifted]
    assert [(r.op, r.problem) for r in drifted] == [(MISSING, f"absent in torch {versions.installed()}: torch registers no decomposition for {MISSING}")]


@pytest.mark.sweep  # a whole validate as on another torch (every row and formula again): `make sweep`
def test_the_recorded_range_makes_it_a_note_and_drift_lists_it(without_hann_decomposition, monkeypatch, capsys):
    monkeypatch.setattr(versions, "installed", lambda: "2.11.0")
    code = main(["validate"])
    out = capsys.readouterr().out
    assert code == 0
    [note] = [line for line in out.splitlines() if "note:" in line and MISSING in line]  # not the special-case notes
    assert f"note: {MISSING}: absent in torch 2.11.0 (holds for torch >=2.12)" in note
    opset = load.load_opset(VERSION)
    sample = tuple(opset.rules_by_op[name] for name in (MISSING, "aten::hardswish"))
    report = drift.compute(dataclasses.replace(opset, rules=sample))
    assert [a["op"] for a in report.absent] == [MISSING] and not report.drifted
    assert [r.op for r in report.rules] == ["aten::hardswish"]
    assert f"{MISSING}: absent in torch 2.11.0" in drift.render_text(report)


def test_a_range_that_excludes_a_torch_which_has_the_entry_is_stale(monkeypatch, capsys):
    monkeypatch.setattr(versions, "installed", lambda: "2.11.0")
    assert main(["validate"]) == 1
    out = capsys.readouterr().out
    assert f"{MISSING}: recorded as absent in torch 2.11.0 (holds for torch >=2.12), but torch 2.11.0 provides it" in out


PLUGIN = textwrap.dedent(f"""
    from opspec.bridge import torch_ops
    for name in ("core_decomposition_table", "registered_decompositions"):
        full = getattr(torch_ops, name)()
        setattr(torch_ops, name, lambda full=full: {{k: v for k, v in full.items() if k != "{MISSING}"}})
""")


@pytest.mark.sweep  # the decomposition suite run again in a process of its own, as on another torch: `make sweep`
def test_the_decomposition_suite_skips_a_rule_torch_lacks_and_runs_the_rest(tmp_path):
    (tmp_path / "no_hann.py").write_text(PLUGIN)
    env = {**os.environ, "CI": "1", "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "pytest", str(ROOT / "conformance" / "test_decompositions.py"), "-p", "no_hann",
               "-p", "no:cacheprovider", "-q", "-rs", "-k", "hann_window or hardswish-float32-cpu", "-n", "0"]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    skipped = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED") and "absent in torch" in line]
    [line] = skipped  # one case per test (values, closure), each with the reason
    assert line.startswith("SKIPPED [2] ") and "torch registers no decomposition for aten::hann_window.periodic" in line
    # hardswish runs its values and closure cases, plus one per special-case table it has
    last = result.stdout.splitlines()[-1]
    assert "error" not in last and "failed" not in last and re.search(r"\b[23] passed", last), last


# ---- expectations: devices, torch versions, stale detection ----

def write_expectations(tmp_path: Path, entries: str) -> Path:
    path = tmp_path / "backend.yaml"
    path.write_text("backend: somebackend\nexpectations:\n" + textwrap.dedent(entries))
    return path


def test_expectations_apply_by_device_and_torch_version(tmp_path):
    path = write_expectations(tmp_path, """\
      - op: aten::_native_batch_norm_legit
        devices: [cpu]
        status: xfail
        reason: the meta kernel rejects one value per channel on CPU
      - op: aten::split.Tensor
        dtypes: ['int*']
        torch: "<2.12"
        status: xfail
        reason: torch 2.11's decomposition raises IndexError for integer dtypes
    """)
    opset = load.load_opset(VERSION)
    on_211 = expectations.read(path, opset, torch_version="2.11.0")
    on_213 = expectations.read(path, opset, torch_version="2.13.0+cpu")
    split_int = Case("aten::split.Tensor", "int64", "cpu")
    assert on_211.lookup(split_int).reason.startswith("torch 2.11") and on_213.lookup(split_int) is None
    assert on_211.lookup(Case("aten::split.Tensor", "float32", "cpu")) is None
    assert on_213.lookup(Case("aten::_native_batch_norm_legit", "float32", "cpu")) is not None
    assert on_213.lookup(Case("aten::_native_batch_norm_legit", "float32", "cuda")) is None
    assert on_211.lookup(split_int).as_record().torch == "<2.12"


def test_a_bad_torch_specifier_in_expectations_is_one_line(tmp_path):
    path = write_expectations(tmp_path, """\
      - op: aten::abs
        status: xfail
        torch: "before 2.14"
        reason: a reason that is long enough
    """)
    with pytest.raises(OpsetError) as caught:
        expectations.read(path, load.load_opset(VERSION))
    assert str(caught.value) == f"{path}:5:3: expectation 'aten::abs': torch: 'before 2.14' is not a version specifier (PEP 440, e.g. '>=2.12' or '>=2.11,<2.14')"


def record(op: str, device: str, outcome: str, where: str = "backend.yaml:3") -> CaseRecord:
    entry = expectations.Expectation(op=op, status="xfail", reason="a known failure", where=where)
    return expectations.apply(CaseRecord(op=op, dtype="float32", device=device, status=outcome), entry)


def test_stale_expectations_are_found_per_device():
    records = [record("aten::a", "cpu", "fail"), record("aten::a", "cuda", "pass"),
               record("aten::b", "cpu", "pass", "backend.yaml:7"), record("aten::b", "cpu", "fail", "backend.yaml:7")]
    assert records[1].status == "xpass" and records[1].message.endswith("passes on cuda")
    assert expectations.stale(records) == [
        "backend.yaml:3: stale expectation on cuda: all 1 of its cases pass; it still fails on cpu: limit it with devices",
        "backend.yaml:7: stale expectation on cpu: 1 of 2 of its cases pass",
    ]
    assert expectations.stale([record("aten::a", "cpu", "fail")]) == []


# ---- the version matrix on the site ----

def test_the_site_shows_the_version_matrix_and_survives_a_broken_file(tmp_path):
    from opspec_fixtures import write_workspace

    from opspec.reports.site.generate import generate
    from opspec.spec.workspace import Workspace

    root = write_workspace(tmp_path / "repo")
    assert "No version matrix published yet." in generate(Workspace(root)).pages["torch-versions.md"]
    matrix = root / "benchmarks" / "results" / "version_matrix.json"
    matrix.parent.mkdir(parents=True)
    matrix.write_text('{"versions": {"2.11.0": {"torch": "2.11.0+cu130", "total_s": 600, '
                      '"validate": {"ok": true, "summary": "exit 0, 0 finding(s), 1 note(s)", '
                      '"notes": ["aten::hann_window.periodic: absent in torch 2.11.0"]}, '
                      '"drift": {"ok": false, "summary": "exit 1", "drifted_rules": [{"op": "aten::frac", "problem": "x|y"}]}}}}')
    page = generate(Workspace(root)).pages["torch-versions.md"]
    row = next(line for line in page.splitlines() if line.startswith("| 2.11.0"))
    assert "ok: exit 0, 0 finding" in row and "differs: exit 1" in row and "not run" in row and row.endswith(" 10 |")
    assert "- validate: aten::hann" in page and "periodic: absent in torch 2.11.0" in page  # Markdown-escaped
    assert "- drift: aten::frac: x" in page
    matrix.write_text("{not json")
    assert "No version matrix published yet." in generate(Workspace(root)).pages["torch-versions.md"]


def test_targets_recorded_for_some_torch_versions_count_only_there(monkeypatch):
    frac = load.load_opset(VERSION).rules_by_op["aten::frac"]
    monkeypatch.setattr(versions, "installed", lambda: "2.11.0")
    assert set(versions.targets(frac)) == {*frac.targets, "aten::abs", "aten::floor", "aten::mul.Tensor", "aten::sign"}
    monkeypatch.setattr(versions, "installed", lambda: "2.13.0")
    assert versions.targets(frac) == frac.targets
