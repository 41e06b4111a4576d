"""One truth about lowering: manifests placed by the execution evidence of the committed reports.

Every committed (manifest, report) pair is checked: no op is lowered in one and fallback in
the other, the report's lowering section is what the manifest says, and regenerating the
manifests from the reports changes nothing.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from opspec.conform import lowering, lowering_evidence
from opspec.results.model import CaseRecord, Report, expanded
from opspec.spec import manifests, yamlio
from opspec.spec.manifests import LIBRARY, BackendManifest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "conformance" / "results"
BACKENDS = ROOT / "conformance" / "backends"


def _pairs() -> list[tuple[Path, Path]]:
    found = []
    for path in sorted(BACKENDS.glob("*.yaml")):
        data = yamlio.load_file(path)
        found += [(path, report) for report in lowering_evidence.reports_for(data["backend"], data["opset"], RESULTS)]
    return found


PAIRS = _pairs()


def test_the_backends_with_reports_have_their_pairs_checked():
    assert {(m.stem, r.stem) for m, r in PAIRS} >= {
        ("inductor", "inductor-cpu"), ("onnxruntime", "onnxruntime-cpu"), ("aot_eager", "aot_eager-cpu")}


@pytest.mark.parametrize(("manifest_path", "report_path"), PAIRS, ids=[r.stem for _, r in PAIRS])
def test_manifest_and_report_agree_on_every_op(manifest_path, report_path):
    manifest = manifests.load_manifest(manifest_path)
    report = expanded(json.loads(report_path.read_text(encoding="utf-8")))
    assert lowering_evidence.disagreements(manifest, Report.from_dict(report)) == []
    assert report_path.relative_to(ROOT).as_posix() in manifest.evidence
    # no case is fallback in the report while its op is lowered in the manifest, or the reverse
    for record in report["results"]:
        status, _ = manifest.status(record["op"], record["device"], dtype=record["dtype"])
        case = f"{record['op']} {record['dtype']}"
        if record["status"] == "fallback":
            # a case whose only kernels outside the generated code are the library kernels the backend's lowering
            # calls is lowered (a library call) for the manifest, which counts it apart
            library = all(op in manifest.library_kernels for op in record["evidence"].get("pytorch_ops", ["?"]))
            assert status == ("library" if library else "fallback"), case
        if record.get("executed") in ("target", "backend") and record["status"] == "pass":
            # lowered in its dtype, at least for calls at its default arguments (a drawn call may set those that fall back)
            assert manifest.status(record["op"], record["device"], frozenset(), record["dtype"])[0] == "lowered", case
    # the report's lowering section is the manifest's word, op by op
    # (an op over the dtypes it ran in: a fallback where one of them falls back), and each record's is its dtype's
    section, dtypes = report["lowering"], lowering.dtypes_of(Report.from_dict(report).records)
    for op, entry in section["ops"].items():
        assert entry["status"] == manifest.status_over(op, report["device"], dtypes[op])[0], op
    for record in report["results"]:
        assert record["lowering"] == manifest.status(record["op"], report["device"], dtype=record["dtype"])[0], \
            f"{record['op']} {record['dtype']}"


def test_regenerating_the_manifests_from_the_reports_changes_nothing(monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("lowering_from_reports", ROOT / "tools" / "lowering_from_reports.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    monkeypatch.setattr("sys.argv", ["lowering_from_reports.py", "--check"])
    assert tool.main() == 0, capsys.readouterr().out


def test_inductor_library_calls_are_lowered_and_its_fallbacks_are_not():
    manifest = manifests.load_manifest(BACKENDS / "inductor.yaml")
    assert {"aten::mm", "aten::addmm", "aten::bmm", "aten::convolution"} <= set(manifest.library_kernels)
    for op, kernel in (("aten::mm", "extern_kernels.mm"), ("aten::addmm", "extern_kernels.addmm"),
                       ("aten::convolution", "extern_kernels.convolution")):
        # its GEMM and convolution lowerings call ATen's kernels in float32 on both devices: lowered, shown apart
        for device in ("cpu", "cuda"):
            status, note = manifest.status(op, device, dtype="float32")
            # (in float32 where some dtypes did otherwise; no dtype named where every one called it)
            assert status == "library" and note.removesuffix(" in float32") == f"on {device}: {LIBRARY[0]}: {kernel} ({op})", note
    # the ops it hands back (make_fallback: aten.cumsum in the wrapper) stay fallbacks, named for the dtype asked
    assert manifest.status("aten::cumsum", "cpu", dtype="float32") == (
        "fallback", "on cpu: ATen kernel: aten::cumsum ran instead in float32")
    assert manifest.status("aten::bucketize.Tensor", "cpu", dtype="float32")[0] == "fallback"
    # a note speaks of the dtypes asked about only: addmm falls back in complex on cpu, which float32 never sees
    assert "complex" not in "".join(manifest.status("aten::addmm", "cpu", dtype="float32"))
    assert manifest.status("aten::permute", "cpu", dtype="float32") == ("lowered", "")
    # what ran instead is named for every fallback the evidence decided
    data = yamlio.load_file(BACKENDS / "inductor.yaml")
    decided = [e for e in data["fallback"] if isinstance(e, dict) and "kind" in e]
    assert decided and all(e.get("ran_instead") and "ran in" in e["reason"] or "ran instead" in e["reason"] for e in decided)


# ---- the rules, on small reports ----

def record(op, executed, dtype="float32", outcome="pass", pytorch_ops=(), source="generated-code", status=None):
    evidence = {"executed": executed, "source": source, **({"pytorch_ops": list(pytorch_ops)} if pytorch_ops else {})}
    status = status or ("fallback" if executed in ("pytorch", "partial") else outcome)
    return {"op": op, "dtype": dtype, "device": "cpu", "status": status, "outcome": outcome, "executed": executed,
            "evidence": evidence}


def with_records(*records: dict) -> Report:
    """A report of the toy backend holding these records."""
    return REPORT.with_records(CaseRecord.from_dict(r) for r in records)


REPORT = Report.from_dict({"backend": {"name": "toy", "version": "1"}, "device": "cpu", "opset": "2026.11", "results": [
    record("aten::abs", "target"),
    record("aten::mm", "pytorch", pytorch_ops=["aten::mm"]),
    record("aten::topk", "pytorch", pytorch_ops=["aten::topk"]),
    record("aten::scatter_add", "partial", pytorch_ops=["aten::scatter_reduce_.two"]),
    record("aten::sin", "pytorch", source="partition", pytorch_ops=["aten::sin"]),
    record("aten::cos", "backend", outcome="compile-error", status="xfail"),  # failed before running: no evidence
    record("aten::neg", "unknown"),
    record("aten::exp", "runtime", outcome="fail", status="xfail"),  # wrong, but the backend's runtime computed it
    record("aten::add.Tensor", "backend", dtype="float32"),
    record("aten::add.Tensor", "pytorch", dtype="int64", pytorch_ops=["aten::add.Tensor"]),
]})


LIBRARY_KERNELS = {"aten::mm": "extern_kernels.mm"}


def test_each_case_is_judged_by_who_ran_it():
    found = lowering_evidence.verdicts(REPORT, LIBRARY_KERNELS)
    cpu = {op: v["cpu"] for op, v in found.items()}
    assert set(cpu) == {"aten::abs", "aten::mm", "aten::topk", "aten::scatter_add", "aten::sin", "aten::exp", "aten::add.Tensor"}
    assert cpu["aten::abs"].status == cpu["aten::exp"].status == "lowered"
    # only a library kernel its lowering calls ran outside the generated code: lowered, as a library call
    assert (cpu["aten::mm"].status, cpu["aten::mm"].library) == ("library", ("extern_kernels.mm (aten::mm)",))
    assert cpu["aten::mm"].library_reason() == "library call: extern_kernels.mm (aten::mm)"
    assert cpu["aten::topk"].kind == "aten-kernel"
    assert cpu["aten::scatter_add"].kind == "partial" and cpu["aten::scatter_add"].ran_instead == ("aten::scatter_reduce_.two",)
    assert cpu["aten::sin"].kind == "partition"
    assert cpu["aten::add.Tensor"].status == "fallback" and cpu["aten::add.Tensor"].dtypes == ("int64",)
    assert cpu["aten::add.Tensor"].reason() == "ATen kernel: aten::add.Tensor ran instead in int64"



def test_a_tie_between_classes_is_settled_the_same_in_every_process():
    """Two dtypes fell back one way and two the other: the class must not follow the set's hash order
    (it did, and the manifest regenerated differently from one process to the next)."""
    import subprocess
    import sys

    code = """
import json, sys
from opspec.conform import lowering_evidence
from opspec.results.model import Report
record = lambda dtype, executed: {"op": "aten::scatter.src", "device": "cuda", "dtype": dtype, "status": "fallback",
                                  "executed": executed, "outcome": "pass",
                                  "evidence": {"executed": executed, "source": "hook", "pytorch_ops": ["aten::scatter_.src"]}}
report = {"backend": "toy", "device": "cuda", "results": [record("bool", "partial"), record("int64", "partial"),
                                                          record("complex64", "pytorch"), record("complex128", "pytorch")]}
print(lowering_evidence.verdicts(Report.from_dict(report))["aten::scatter.src"]["cuda"].kind)
"""
    kinds = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={**__import__("os").environ, "PYTHONHASHSEED": str(seed)}).stdout.strip()
             for seed in range(6)}
    assert kinds == {"aten-kernel"}

STATIC = {"opset": "2026.11", "backend": "toy", "measured_with": "torch 2.13.0, by hand",
          "lowered": ["aten::abs", "aten::mm", {"op": "aten::cos", "note": "a lowering"}],
          "fallback": [{"op": "aten::exp", "reason": "no exp unit"}, {"op": "aten::topk", "reason": "make_fallback"}]}


def test_the_evidence_places_the_ops_it_saw_and_keeps_the_rest():
    data, moved = lowering_evidence.apply(STATIC, lowering_evidence.verdicts(REPORT, LIBRARY_KERNELS), ["r.json"])
    manifest = BackendManifest.from_dict(data)
    assert data["evidence"] == ["r.json"] and list(data).index("evidence") < list(data).index("lowered")
    # measured lowered, seen falling back on cpu: fallback on cpu only, the manifest now listing the device
    assert manifest.status("aten::mm", "cpu")[0] == "library" and manifest.status("aten::mm", "cuda")[0] == "lowered"
    assert data["devices"] == ["cpu"]
    assert manifest.status("aten::exp", "cpu")[0] == "lowered"  # the backend computed it, if wrongly
    assert "static rule has it fallback" in manifest.status("aten::exp")[1]
    assert manifest.status("aten::cos")[1] == "a lowering"  # no evidence: as measured
    assert manifest.status("aten::topk")[1] == "ATen kernel: aten::topk ran instead; make_fallback"  # the rule's why kept
    # one dtype fell back: the op falls back on that device, its reason and entry naming the dtype
    assert manifest.status("aten::add.Tensor", "cpu") == ("fallback", "ATen kernel: aten::add.Tensor ran instead in int64")
    assert next(e for e in data["fallback"] if e["op"] == "aten::add.Tensor")["dtypes"] == ["int64"]
    # ... and a case in a dtype that did not fall back is lowered by the manifest's word, as the report saw
    assert manifest.status("aten::add.Tensor", "cpu", dtype="float32")[0] == "lowered"
    assert manifest.status("aten::add.Tensor", "cpu", dtype="int64")[0] == "fallback"
    assert "aten::mm: lowered -> lowered; calls a library kernel on cpu" in moved and not [m for m in moved if m.startswith("aten::cos")]
    assert lowering_evidence.disagreements(manifest, REPORT, LIBRARY_KERNELS) == []
    again, moved_again = lowering_evidence.apply(data, lowering_evidence.verdicts(REPORT, LIBRARY_KERNELS), ["r.json"])
    assert (again, moved_again) == (data, [])  # applying the same evidence twice changes nothing


def test_an_op_lowered_at_its_defaults_keeps_its_entry_whatever_the_drawn_calls_showed():
    entry = {"op": "aten::mm", "note": "lowered at its default arguments; falls back when a call sets beta",
             "fallback_args": ["beta"]}
    data, moved = lowering_evidence.apply({**STATIC, "lowered": ["aten::abs", entry]},
                                          lowering_evidence.verdicts(REPORT, LIBRARY_KERNELS), ["r.json"])
    assert entry in data["lowered"] and "aten::mm" not in [e if isinstance(e, str) else e["op"] for e in data["fallback"]]
    assert not [m for m in moved if m.startswith("aten::mm")]
    manifest = BackendManifest.from_dict(data)
    assert manifest.fallback_args == {"aten::mm": ("beta",)}
    # a drawn call (any arguments) falls back, as the report saw; a model's call at the defaults is lowered
    assert manifest.status("aten::mm", "cpu") == ("fallback", f"when a call sets beta: {entry['note']}")
    assert manifest.status("aten::mm", "cpu", frozenset()) == ("lowered", entry["note"])
    assert manifest.status("aten::mm", "cpu", {"alpha"})[0] == "lowered"
    assert manifest.status("aten::mm", "cpu", {"alpha", "beta"})[0] == "fallback"
    assert lowering_evidence.disagreements(manifest, REPORT, LIBRARY_KERNELS) == []


def test_a_lowered_op_falling_back_in_some_dtypes_names_them_per_device():
    report = with_records(record("aten::abs", "target"),
                          record("aten::abs", "pytorch", dtype="complex64", pytorch_ops=["aten::view_as_real"]))
    data, moved = lowering_evidence.apply(STATIC, lowering_evidence.verdicts(report), ["r.json"])
    entry = next(e for e in data["lowered"] if isinstance(e, dict) and e["op"] == "aten::abs")
    assert entry["fallback_dtypes"] == {"cpu": ["complex64"]} and "in complex64" in entry["fallback_on"]["cpu"]
    manifest = BackendManifest.from_dict(data)
    assert manifest.status("aten::abs", "cpu", dtype="float32") == ("lowered", "")  # says nothing of complex64
    assert manifest.status("aten::abs", "cpu", dtype="complex64")[0] == "fallback"
    assert manifest.status("aten::abs", "cpu")[0] == "fallback"  # calls of any dtype: some fall back
    assert manifest.status("aten::abs", "cuda", dtype="complex64")[0] == "lowered"  # not seen there
    assert lowering_evidence.disagreements(manifest, report) == []
    # every dtype falling back later drops the dtype list: the whole device falls back
    everywhere = with_records(record("aten::abs", "pytorch", pytorch_ops=["aten::abs"]),
                              record("aten::abs", "pytorch", dtype="complex64", pytorch_ops=["aten::abs"]))
    data, _ = lowering_evidence.apply(data, lowering_evidence.verdicts(everywhere), ["r.json"])
    assert not any(isinstance(e, dict) and e.get("fallback_dtypes") for e in data["lowered"])


def test_one_op_can_be_generated_code_a_library_call_and_a_fallback_in_different_dtypes():
    report = with_records(
        record("aten::mm", "target", dtype="int64"),
        record("aten::mm", "pytorch", dtype="float32", pytorch_ops=["aten::mm"]),
        record("aten::mm", "pytorch", dtype="complex64", pytorch_ops=["aten::mm", "aten::mul.Tensor"]))
    data, _ = lowering_evidence.apply(STATIC, lowering_evidence.verdicts(report, LIBRARY_KERNELS), ["r.json"])
    entry = next(e for e in data["lowered"] if isinstance(e, dict) and e["op"] == "aten::mm")
    assert entry["library_dtypes"] == {"cpu": ["float32"]} and entry["fallback_dtypes"] == {"cpu": ["complex64"]}
    # the complex64 case ran an ATen kernel beside the library one: a fallback, the garbled mix of both gone
    assert entry["fallback_on"]["cpu"] == "ATen kernel: extern_kernels.mm (aten::mm), aten::mul.Tensor ran instead in complex64"
    manifest = BackendManifest.from_dict(data)
    assert manifest.status("aten::mm", "cpu", dtype="int64") == ("lowered", "")
    assert manifest.status("aten::mm", "cpu", dtype="float32") == (
        "library", "on cpu: library call: extern_kernels.mm (aten::mm) in float32")
    assert manifest.status("aten::mm", "cpu", dtype="complex64")[0] == "fallback"
    # calls in several dtypes: the farthest status, naming only the dtypes asked about
    assert manifest.status_over("aten::mm", "cpu", {"int64", "float32"})[0] == "library"
    assert manifest.status_over("aten::mm", "cpu", {"float32", "complex64"}) == (
        "fallback", "on cpu: ATen kernel: extern_kernels.mm (aten::mm), aten::mul.Tensor ran instead in complex64")
    assert lowering_evidence.disagreements(manifest, report, LIBRARY_KERNELS) == []
    section = lowering.section(manifest, "toy.yaml", ["aten::mm"], "cpu", {"aten::mm": {"float32", "int64"}})
    assert (section.library, section.lowered, section.coverage_percent) == (1, 0, 100.0)
    assert "library calls: mm" in "\n".join(lowering.summary_lines(REPORT.replace(lowering=section)))


def test_a_disagreement_is_found_both_ways():
    manifest = BackendManifest.from_dict(STATIC)
    problems = lowering_evidence.disagreements(manifest, REPORT, LIBRARY_KERNELS)
    assert "aten::mm on cpu: lowered in toy, library by the report's evidence" in problems
    assert "aten::exp on cpu: fallback in toy, lowered by the report's evidence" in problems


def test_the_report_section_uses_the_device(tmp_path):
    manifest = BackendManifest.from_dict({**STATIC, "devices": ["cpu", "cuda"], "lowered": [
        {"op": "aten::abs", "fallback_on": {"cpu": "the cpu backend has no abs"}}]})
    assert lowering.section(manifest, "toy.yaml", ["aten::abs"], "cpu").ops["aten::abs"].status == "fallback"
    assert lowering.section(manifest, "toy.yaml", ["aten::abs"], "cuda").ops["aten::abs"].status == "lowered"


def test_unsupported_ops_are_neither_lowered_nor_fallback():
    manifest = BackendManifest.from_dict({**STATIC, "unsupported": [{"op": "aten::randperm", "reason": "the export fails"}]})
    assert manifest.status("aten::randperm") == ("unsupported", "the export fails")
    section = lowering.section(manifest, "toy.yaml", ["aten::randperm", "aten::abs"])
    assert (section.unsupported, section.lowered, section.fallback) == (1, 1, 0)
    assert "1 unsupported" in lowering.summary_lines(REPORT.replace(lowering=section))[0]


def test_a_run_in_dtypes_that_lower_is_not_counted_a_fallback_for_one_that_does_not():
    manifest = BackendManifest.from_dict({**STATIC, "devices": ["cpu"], "lowered": [
        {"op": "aten::abs", "fallback_on": {"cpu": "ATen kernel: aten::abs ran instead in complex64"},
         "fallback_dtypes": {"cpu": ["complex64"]}}]})
    float_run = lowering.section(manifest, "toy.yaml", ["aten::abs"], "cpu", {"aten::abs": {"float32"}})
    assert float_run.ops["aten::abs"].status == "lowered" and float_run.fallback == 0
    assert "by_dtype" not in float_run.ops["aten::abs"].to_dict()
    every = lowering.section(manifest, "toy.yaml", ["aten::abs"], "cpu", {"aten::abs": {"float32", "complex64"}})
    assert every.ops["aten::abs"].status == "fallback"
    assert every.ops["aten::abs"].by_dtype == {"complex64": "fallback", "float32": "lowered"}
    records = [CaseRecord(op="aten::abs", dtype=dtype, device="cpu", status="pass") for dtype in ("float32", "complex64")]
    assert [lowering.marked(r, every).lowering for r in records] == ["lowered", "fallback"]
