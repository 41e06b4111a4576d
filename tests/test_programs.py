"""check-program, upgrade and golden on exported programs: real models, the committed golden programs, bad files."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from opspec_fixtures import ROOT, on_tested_torch

from opspec.bridge import decomp_table
from opspec.checks import golden
from opspec.checks import program as programs
from opspec.checks.models import load_model
from opspec.cli import main
from opspec.examples import zoo
from opspec.spec import load, resources
from opspec.testing import compare

GOLDEN = ROOT / "conformance" / "golden"
WAV2VEC2_2026_11 = GOLDEN / "2026.11" / "model-transformers-wav2vec2.pt2"


class Normalize(torch.nn.Module):
    """F.normalize: the export carries linalg_vector_norm, which 2026.12 decomposes and 2026.11 does not cover."""

    def forward(self, x):
        return torch.nn.functional.normalize(x, dim=-1) * 2


def export_to(path: Path, module, args, version: str) -> Path:
    table = decomp_table.decomposition_table(load.load_opset(version))
    torch.export.save(torch.export.export(module, args, strict=False).run_decompositions(table), str(path))
    return path


@pytest.fixture
def normalize_program(tmp_path) -> Path:
    return export_to(tmp_path / "normalize.pt2", Normalize(), (torch.randn(3, 5),), "2026.11")


def cli(*args) -> int:
    return main([str(a) for a in args])


@pytest.mark.parametrize("model", ["opspec.examples.models:mlp", "opspec.examples.models:small_cnn",
                                   "opspec.examples.models:transformer_block"])
def test_check_program_passes_a_model_exported_with_the_opset_table(model, tmp_path, capsys):
    example = load_model(model, zoo.ZOO)
    newest = load.latest_version()
    path = export_to(tmp_path / "model.pt2", example.model, example.args, newest)
    assert cli("check-program", path, "--format", "json") == 0  # against the newest version
    report = json.loads(capsys.readouterr().out)
    assert report["opset"] == newest and report["exit_code"] == 0
    assert {op["kind"] for op in report["ops"]} <= {"core", "bookkeeping"} and report["counts"]["core"] >= 4


def test_check_program_and_upgrade_through_a_version_that_decomposes_an_op(normalize_program, tmp_path, capsys):
    assert cli("check-program", normalize_program, "--opset", "2026.11") == 1
    out = capsys.readouterr().out
    assert ("aten::linalg_vector_norm (1 call): closure-gap: torch emits it and 2026.11 has no rule for it, nor makes "
            "it core (a closure gap of 2026.11); 2026.12 decomposes it (proposal 0002): `opspec upgrade --to 2026.12`") in out
    assert cli("check-program", normalize_program, "--opset", "2026.12") == 1
    out = capsys.readouterr().out
    assert "aten::linalg_vector_norm (1 call): decomposable: 2026.12 decomposes it (rule of proposal 0002)" in out

    upgraded = tmp_path / "out" / "normalize-2026.12.pt2"
    assert cli("upgrade", normalize_program, "--to", "2026.12", "--out", upgraded) == 0
    out = capsys.readouterr().out
    assert "applied: aten::linalg_vector_norm decomposed by 2026.12's table" in out and f"wrote {upgraded}" in out
    assert cli("check-program", upgraded, "--opset", "2026.12") == 0
    capsys.readouterr()
    # the written program matches the original on the inputs it recorded, checked here independently of upgrade
    original, result = programs.load_program(normalize_program), programs.load_program(upgraded)
    args, kwargs = result.inputs()
    compare.assert_matches(result.exported.module()(*args, **kwargs), original.exported.module()(*args, **kwargs))
    assert "linalg_vector_norm" not in str(result.exported.graph)

    # nothing 2026.11 decided covers the op: refused, nothing written
    refused = tmp_path / "normalize-2026.11.pt2"
    assert cli("upgrade", normalize_program, "--to", "2026.11", "--out", refused) == 1
    assert "nothing 2026.11 decided rewrites what is left: aten::linalg_vector_norm" in capsys.readouterr().err
    assert not refused.exists()


@pytest.mark.skipif(not WAV2VEC2_2026_11.is_file(), reason="the golden programs are not in this checkout")
def test_upgrade_a_real_zoo_model_from_its_golden_program(tmp_path, capsys):
    """transformers' wav2vec2, exported with 2026.11's table: its weight-normed positional convolution calls
    linalg_vector_norm, which 2026.11 does not cover and 2026.12 decomposes."""
    program = shutil.copy(WAV2VEC2_2026_11, tmp_path / "wav2vec2.pt2")
    assert cli("check-program", program, "--opset", "2026.12") == 1
    assert "aten::linalg_vector_norm" in capsys.readouterr().out
    assert cli("upgrade", program, "--to", "2026.12") == 0, capsys.readouterr().err
    upgraded = tmp_path / "wav2vec2.2026.12.pt2"
    assert cli("check-program", upgraded, "--opset", "2026.12") == 0
    recorded = programs.load_program(Path(program)).recorded
    replayed = programs.load_program(upgraded).exported.module()(*recorded["args"], **recorded["kwargs"])
    compare.assert_matches(golden.plain(replayed), recorded["outputs"])


def test_bad_program_files_are_one_line_and_exit_2(tmp_path, capsys):
    corrupt = tmp_path / "corrupt.pt2"
    corrupt.write_bytes(b"not a zip archive")
    for command in (["check-program", corrupt], ["upgrade", corrupt, "--to", "2026.12"]):
        assert cli(*command) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "corrupt.pt2: not a program torch.export can load" in err[0], err
    assert cli("check-program", tmp_path / "missing.pt2") == 2
    assert "missing.pt2" in capsys.readouterr().err
    assert not (tmp_path / "corrupt.2026.12.pt2").exists()


def test_upgrade_refuses_an_unwritable_output_before_work(normalize_program, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert cli("upgrade", normalize_program, "--to", "2026.12", "--out", blocker / "out.pt2") == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_a_deprecation_upgrader_rewrites_calls_to_the_replacement(tmp_path, capsys, monkeypatch):
    """A released version deprecates mul.Scalar with an upgrader to mul.Tensor; upgrade applies the proposal's data."""
    root = tmp_path / "repo"
    for part in ("opset", "proposals"):
        shutil.copytree(ROOT / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))
    proposal = (ROOT / "proposals" / "0003-add-bitwise-shifts-to-the-core-set.md").read_text()
    front, _, body = proposal.partition("\n---\n")
    (root / "proposals" / "0015-deprecate-mul-scalar.md").write_text("""---
id: 15
title: Deprecate mul.Scalar in favour of mul.Tensor
authors: [Ada Lovelace]
type: deprecate-op
status: accepted
created: '2026-12-01'
updated: '2026-12-02'
discussion: null
resolution: Accepted at the review of the test.
target_version: '2027.03'
decision:
  date: '2026-12-02'
  reviewers: [Ada Lovelace]
  reasons: [A scalar operand is a 0-dim tensor to mul.Tensor.]
changes:
  - action: deprecate-op
    op: aten::mul.Scalar
    replacement: aten::mul.Tensor
    rationale: A scalar operand is a 0-dim tensor to mul.Tensor; one overload is enough.
    upgrader:
      op: aten::mul.Tensor
      arguments: {self: self, other: other}
---
""" + body)
    assert cli("release", "2027.03", "--root", root, "--date", "2026-12-02", "--retarget", "2027.04") == 0, capsys.readouterr().err
    monkeypatch.setattr(resources, "opset_root", lambda: root / "opset")

    class Scale(torch.nn.Module):
        def forward(self, x):
            return torch.ops.aten.mul.Scalar(x, 3.0) + 1

    program = export_to(tmp_path / "scale.pt2", Scale(), (torch.randn(4),), "2026.12")
    capsys.readouterr()
    assert cli("check-program", program, "--opset", "2027.03") == 0
    out = capsys.readouterr().out
    assert "aten::mul.Scalar (1 call): deprecated: deprecated in 2027.03; removed in 2027.09 at the earliest" in out
    assert cli("upgrade", program, "--to", "2027.03", "--proposals", root / "proposals") == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "applied: aten::mul.Scalar -> aten::mul.Tensor (upgrader of proposal 0015 (2027.03))" in out
    assert cli("check-program", tmp_path / "scale.2027.03.pt2", "--opset", "2027.03", "--format", "json") == 0
    kinds = {op["op"]: op["kind"] for op in json.loads(capsys.readouterr().out)["ops"]}
    assert "aten::mul.Scalar" not in kinds and kinds["aten::mul.Tensor"] == "core"


# ---- golden programs ----

@pytest.mark.parametrize("version", ["2026.11", "2026.12", "2027.01"])
def test_golden_programs_cover_every_core_op_or_say_why(version):
    folder = GOLDEN / version
    if not (folder / golden.INDEX).is_file():
        pytest.skip(f"no golden programs for {version} in this checkout")
    index = golden.read_index(folder)
    active = {op.name for op in load.load_opset(version).active_ops()}
    covered = {op for entry in index["programs"] if entry["kind"] == "ops" for op in entry["ops"]}
    uncovered = {entry["op"] for entry in index["uncovered"]}
    assert covered | uncovered == active and not covered & uncovered
    assert len(covered) >= len(active) - 10  # only ops export cannot keep as themselves are left out
    assert any(entry["kind"] == "model" for entry in index["programs"])
    assert sum(p.stat().st_size for p in folder.glob("*.pt2")) < 3_000_000


@pytest.mark.skipif(not on_tested_torch(), reason="golden programs are replayed on other torch versions by benchmarks/golden_matrix.py")
def test_golden_programs_load_run_and_match(capsys):
    if not GOLDEN.is_dir():
        pytest.skip("no golden programs in this checkout")
    assert cli("golden", "--format", "json") == 0, capsys.readouterr().out
    replayed = json.loads(capsys.readouterr().out)
    assert {folder["opset"] for folder in replayed} >= {"2026.11", "2026.12"}
    assert all(p["loads"] and p["runs"] and p["matches"] for folder in replayed for p in folder["programs"])


def test_golden_replay_catches_a_changed_output_and_a_broken_file(tmp_path, capsys):
    folder = GOLDEN / "2026.12"
    if not (folder / golden.INDEX).is_file():
        pytest.skip("no golden programs in this checkout")
    copy = tmp_path / "golden"
    shutil.copytree(folder, copy)
    index = golden.read_index(copy)
    entry = next(e for e in index["programs"] if e["kind"] == "ops" and "aten::abs" in e["ops"])
    # record a wrong output for abs: the replay must name the op
    path = copy / entry["file"]
    loaded = programs.load_program(path)
    recorded = dict(loaded.recorded)
    position = recorded["ops"].index("aten::abs")
    recorded["outputs"] = list(recorded["outputs"])
    recorded["outputs"][position] = recorded["outputs"][position] + 1
    torch.export.save(loaded.exported, str(path), extra_files={programs.RECORDED: programs.recorded_text(recorded)})
    outcome = golden.replay_one(copy, {**entry, "sha256": __import__("hashlib").sha256(path.read_bytes()).hexdigest()})
    assert outcome.loads and outcome.runs and not outcome.matches and outcome.failed_ops == ["aten::abs"]
    # the index's digest no longer matches the rewritten file
    assert cli("golden", "--dir", copy) == 1
    assert f"{entry['file']}: FAILS: the file differs from the digest its index records" in capsys.readouterr().out
    (copy / golden.INDEX).write_text((copy / golden.INDEX).read_text().replace(entry["file"], "gone.pt2", 1))
    assert cli("golden", "--dir", copy) == 2
    assert "gone.pt2: no such program" in capsys.readouterr().err


@pytest.mark.parametrize("version", ["2026.11", "2026.12"])
def test_golden_programs_pass_check_program_for_their_version(version):
    folder = GOLDEN / version
    if not (folder / golden.INDEX).is_file():
        pytest.skip(f"no golden programs for {version} in this checkout")
    opset = load.load_opset(version)
    table = set(decomp_table.table_by_name(opset))
    for entry in golden.read_index(folder)["programs"]:
        report = programs.check(programs.load_program(folder / entry["file"]).exported, opset, table)
        outside = sorted(f.op for f in report.ops if f.fails)
        assert outside == entry.get("outside", []), entry["file"]


def test_a_golden_program_runs_through_a_torch_compile_backend():
    folder = GOLDEN / "2026.12"
    if not (folder / golden.INDEX).is_file():
        pytest.skip("no golden programs in this checkout")
    entry = next(e for e in golden.read_index(folder)["programs"] if e["file"] == "model-mlp.pt2")
    outcome = golden.replay_one(folder, entry, backend="eager")
    assert (outcome.loads, outcome.runs, outcome.matches) == (True, True, True), outcome.detail


def test_a_schema_change_upgrader_writes_its_fixed_values_into_each_call(tmp_path):
    """The same-op form of an upgrader (a schema change): each call states the value that keeps the old meaning."""
    from opspec.proposals import upgrade, upgraders

    class Total(torch.nn.Module):
        def forward(self, x):
            return torch.ops.aten.sum.dim_IntList(x, [0]) * 2

    path = export_to(tmp_path / "total.pt2", Total(), (torch.randn(3, 4),), "2026.12")
    program = programs.load_program(path)
    fixed = upgraders.Upgrader("aten::sum.dim_IntList", "aten::sum.dim_IntList",
                               {"self": "self", "dim": "dim", "keepdim": {"value": False}}, 9, "2027.01")
    result = upgrade.upgrade(program, load.load_opset("2026.12"), [fixed])
    assert "aten::sum.dim_IntList: 1 call(s) given keepdim=False (upgrader of proposal 0009 (2027.01))" in result.applied
    assert result.comparison.ok and result.report.exit_code == 0
    # an upgrader whose fixed value changes the meaning is caught by the comparison with the original
    wrong = upgraders.Upgrader("aten::sum.dim_IntList", "aten::sum.dim_IntList",
                               {"self": "self", "dim": "dim", "keepdim": {"value": True}}, 9, "2027.01")
    with pytest.raises(upgrade.UpgradeError, match="outputs differ from the original's"):
        upgrade.upgrade(programs.load_program(path), load.load_opset("2026.12"), [wrong])


class NonzeroStatic(torch.nn.Module):
    """torch.nonzero_static, which 2027.01 leaves open (torch 2.15 emits it for combinations) and 2027.02 decomposes."""

    def forward(self, x):
        return torch.nonzero_static(x > 0, size=4)


def test_a_closure_gap_names_the_release_that_closed_it_and_upgrade_reaches_it(tmp_path, capsys):
    program = export_to(tmp_path / "nonzero.pt2", NonzeroStatic(), (torch.randn(3, 5),), "2027.01")
    assert cli("check-program", program, "--opset", "2027.01") == 1
    out = capsys.readouterr().out
    assert "aten::nonzero_static (1 call): closure-gap" in out and "2027.02 decomposes it (proposal 0014)" in out
    assert cli("upgrade", program, "--to", "2027.02") == 0, capsys.readouterr().err
    assert "outputs match the original on the recorded inputs (largest error 0)" in capsys.readouterr().out
    assert cli("check-program", tmp_path / "nonzero.2027.02.pt2", "--opset", "2027.02") == 0
