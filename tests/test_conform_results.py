"""The committed conformance reports (conformance/results/*.json): valid, judged, and their repros replay their verdicts.

Which repros replay: those of reports whose backend is installed here (one skipped case names each missing extra).
The full sweep (``make sweep``, marker ``sweep``) replays every repro of an op's first dtype (float32 where the op
has it: the cases of a float32 run), every one that failed, and a stable quarter of the rest, picked by a hash of
the case; an every-dtype report has 1,722 repros, and for a compiling backend each replay is a compile, so all of
them would take this suite past an hour. The default run replays a stable sample of that set: a few records of
each outcome of each report, so every kind of verdict each installed backend recorded is replayed on every run.
"""
from __future__ import annotations

import functools
import json
import zlib
from pathlib import Path

import pytest
import torch
from test_conform import validate

from opspec.conform import backends, evidence, replay
from opspec.conform.backends import registry
from opspec.results.model import Case, expanded
from opspec.spec.gc_paused import gc_paused

ROOT = Path(__file__).resolve().parents[1]
REPORTS = sorted((ROOT / "conformance" / "results").glob("*.json"))


@functools.lru_cache(maxsize=None)  # read once a process (the parametrizations ask seven times); read-only after
def committed() -> list[tuple[str, dict]]:
    with gc_paused():  # 30 MB of JSON: no garbage among it to look for
        return [(path.stem, expanded(json.loads(path.read_text()))) for path in REPORTS]


FAILED = ("fail", "compile-error", "run-error")
SAMPLED = 4  # one in SAMPLED of the other repros replays in the sweep
PER_OUTCOME = 2  # records of each outcome of each report that the default run replays


def replayed(records: list[dict]) -> list[dict]:
    """The records whose repro the suite replays (see the module's docstring)."""
    first: dict[str, str] = {}  # records are in the plan's order: an op's first record is its first dtype
    for record in records:
        first.setdefault(record["op"], record["dtype"])
    first.update({r["op"]: "float32" for r in records if r["dtype"] == "float32"})
    return [r for r in records if r.get("repro") and (
        r["dtype"] == first[r["op"]] or r.get("outcome") in FAILED
        or zlib.crc32(f"{r['op']} {r['dtype']} {r['device']}".encode()) % SAMPLED == 0)]


# Verdicts the repro's one program does not give alone: a repro replays that program in a fresh process, so these
# replay by running their whole case (op, dtype, the report's settings) instead, and must give the recorded outcome
UNZEROED = ("ExecuTorch's portable max_pool2d_with_indices_backward adds into an output it never zeroes: alone, in a "
            "fresh process's zeroed memory, the failing program passes; after the case's earlier programs it does not")
XNNPACK_FLOAT16 = ("XNNPACK picks its float16 kernels by instruction set: the input that failed on the Intel Xeon that "
                   "recorded the case passes on an AMD EPYC, where others of the case's inputs fail (measured 2026-12-06)")
OPENVINO_STATE = ("OpenVINO keeps state across the compiles of one process (it numbers shape symbols after what ran "
                  "before): after the case's earlier programs it fails; the failing program alone falls back or "
                  "fails otherwise (measured 2026-11-28 and 2026-12-06)")
XLA_FALLBACK = ("the case fell back (an op ran in PyTorch) in programs other than the repro's, or after them; the "
                "repro's program alone runs whole in XLA (measured 2026-12-06)")
XLA_AFTER = ("PyTorch/XLA fails the case only after its earlier programs in the process (openxla's copy: \"Execution "
             "supplied 5 buffers but compiled program expected 3\"); the repro's program alone passes (measured 2026-12-06)")
WHOLE_CASE = {
    **{(stem, op, dtype): XLA_FALLBACK for stem in ("xla-cpu", "openxla-cpu") for op, dtype in (
        ("aten::index_put", "float32"), ("aten::_adaptive_avg_pool2d", "bfloat16"),
        ("aten::_adaptive_avg_pool2d_backward", "float32"), ("aten::avg_pool2d_backward", "float32"))},
    ("xla-cpu", "aten::index.Tensor", "float32"): XLA_FALLBACK,
    ("openxla-cpu", "aten::native_group_norm_backward", "float32"): XLA_FALLBACK,
    **{(stem, "aten::acos", "float16"): XLA_AFTER for stem in ("xla-cpu", "openxla-cpu")},
    **{("openxla-cpu", "aten::copy", dtype): XLA_AFTER for dtype in ("float64", "float32", "float16", "bfloat16")},
    ("openxla-cpu", "aten::bitwise_xor.Scalar", "bool"): XLA_AFTER,
    ("openxla-cpu", "aten::logical_xor", "float32"): XLA_AFTER,
    ("openvino-cpu", "aten::index_put", "float64"): OPENVINO_STATE,
    ("openvino-cpu", "aten::bmm", "int64"): OPENVINO_STATE,
    ("openvino-cpu", "aten::bmm", "complex128"): OPENVINO_STATE,
    ("openvino-cpu", "aten::avg_pool1d", "float16"): OPENVINO_STATE,
    ("openvino-cpu", "aten::avg_pool3d", "float32"): OPENVINO_STATE,
    ("openvino-cpu", "aten::avg_pool3d", "int64"): OPENVINO_STATE,
    ("executorch-cpu", "aten::max_pool2d_with_indices_backward", "float64"): UNZEROED,
    ("executorch-xnnpack-cpu", "aten::max_pool2d_with_indices_backward", "float64"): UNZEROED,
    **{("executorch-xnnpack-cpu", op, "float16"): XNNPACK_FLOAT16
       for op in ("aten::bmm", "aten::cos", "aten::log", "aten::sin")},
}


@functools.lru_cache(maxsize=None)
def header(stem: str) -> dict:
    return json.loads((ROOT / "conformance" / "results" / f"{stem}.json").read_text())


@functools.lru_cache(maxsize=None)
def expectations_on(path: str, opset: str, torch_version: str, machine: str):
    """An expectations file as a report run on ``machine`` is judged by it."""
    from opspec.conform import expectations
    from opspec.conform.runner import cached_opset

    return expectations.read(ROOT / path, cached_opset(opset), torch_version, machine)


def elsewhere_only(stem: str, record: dict) -> str | None:
    """Why a record cannot be replayed here: the expectation that judged it holds only on the hardware it ran on
    (``hardware:``), and this machine is other hardware, where the case's verdict is another."""
    from opspec.conform import hardware

    where = (record.get("expectation") or {}).get("where")
    if not where:
        return None
    head = header(stem)
    path, case = where.rsplit(":", 1)[0], Case(record["op"], record["dtype"], record["device"])
    recorded_on = record.get("device_name") or head.get("device_name") or ""
    entry = expectations_on(path, head["opset"], head["torch"], recorded_on).lookup(case)
    if entry is None or not entry.hardware:
        return None
    here = hardware.name(record["device"])
    if expectations_on(path, head["opset"], head["torch"], here).lookup(case) == entry:
        return None
    return f"recorded on {recorded_on}, which {entry.where} limits its expectation to; this machine is {here}"


def replays_whole_case(stem: str, record: dict) -> replay.Verdict:
    from opspec.conform.runner import CaseRunner, Settings

    head = header(stem)
    settings = Settings(backend=head["backend"]["name"], opset=head["opset"], max_examples=head["max_examples"],
                        max_compiles=head["max_compiles"], seed=head["seed"], dynamic=head["dynamic"])
    result = CaseRunner(settings).run(Case(record["op"], record["dtype"], record["device"]))
    return replay.Verdict(result["status"], result["message"], result["executed"])


@pytest.mark.parametrize("stem, report", committed(), ids=[stem for stem, _ in committed()])
def test_committed_reports_carry_their_repros_and_name_no_repro_file(stem, report):
    """A published report's records carry their repros: none names a file on the machine that ran it."""
    named = [r["repro_file"] for r in report["results"] if "repro_file" in r]
    assert not named, (f"{len(named)} records name a repro file, e.g. {named[0]}: publish the report with "
                       f"`opspec report publish conformance/results/{stem}.json`")


def case_hash(record: dict) -> int:
    return zlib.crc32(f"{record['op']} {record['dtype']} {record['device']}".encode())


def sample(stem: str, records: list[dict]) -> set[int]:
    """The records (by id) the default run replays: PER_OUTCOME of each outcome, picked by a hash of the case,
    and every one that replays by running its whole case (its own mechanism)."""
    picked: set[int] = {id(r) for r in records if (stem, r["op"], r["dtype"]) in WHOLE_CASE}
    by_outcome: dict[str, list[dict]] = {}
    for record in sorted(records, key=case_hash):
        by_outcome.setdefault(record.get("outcome", record["status"]), []).append(record)
    for group in by_outcome.values():
        picked.update(id(r) for r in group[:PER_OUTCOME])
    return picked


def unavailable(stem: str, report: dict) -> str | None:
    """Why none of a report's repros can replay on this machine: its backend's extra or its device is missing."""
    if report["device"] == "cuda" and not torch.cuda.is_available():
        return "a CUDA report replays only where CUDA is available"
    declared = registry.lookup(report["backend"]["name"])
    try:
        declared.check_extra()
    except backends.MissingExtra as err:
        return str(err)
    return None


def repros() -> list:
    params = []
    for stem, report in committed():
        why = unavailable(stem, report)
        if why:
            params.append(pytest.param(stem, None, id=f"{stem}:not-here", marks=pytest.mark.skip(reason=why)))
            continue
        records = replayed(report["results"])
        default = sample(stem, records)
        params += [pytest.param(stem, record, id=f"{stem}:{record['op']}-{record['dtype']}",
                                marks=() if id(record) in default else pytest.mark.sweep) for record in records]
    return params


@pytest.mark.parametrize("stem, report", committed(), ids=[stem for stem, _ in committed()])
def test_committed_reports_carry_evidence_and_blame(stem, report):
    validate(report)
    assert report["backend"].get("package") and report.get("device_name")
    for record in report["results"]:
        if record.get("outcome") == "skip":  # not run (an expectation says why): nothing executed, nobody failed
            assert record["message"], record["op"]
            continue
        assert record["executed"] in ("target", "runtime", "pytorch", "partial", "unknown"), record["op"]
        if record.get("outcome", record["status"]) != "pass":
            assert record.get("blame") in ("frontend", "backend", "opspec"), record["op"]
    assert sum(report["executed"].values()) == sum(1 for r in report["results"] if r.get("outcome") != "skip")


@pytest.mark.parametrize("stem, record", repros())
def test_every_committed_repro_replays_its_verdict(tmp_path, stem, record):
    if record["outcome"] in ("crash", "timeout"):
        pytest.skip("a crash or hang is not replayed in the test process")
    elsewhere = elsewhere_only(stem, record)
    if elsewhere:
        pytest.skip(elsewhere)
    path = tmp_path / "repro.py"
    path.write_text(record["repro"])
    loaded = replay.load_repro(str(path))
    try:
        if (stem, record["op"], record["dtype"]) in WHOLE_CASE:
            got = replays_whole_case(stem, record)
        else:
            got = replay.verdict(loaded["CASE"], loaded["program"], loaded["args"], loaded["kwargs"])
    except backends.MissingExtra as err:
        pytest.skip(str(err))
    if record["outcome"] == "unverified":  # nothing told who computed it: one program's replay may tell more
        assert got.status in ("unverified", *evidence.PASSING_STATUS.values()), got.message
        return
    if record["outcome"] == "run-error" and "special_case" in record and "decided_by" not in record:
        # recorded before a row that fails to compile at its first call was told apart from one that fails to run
        assert got.status in ("run-error", "compile-error"), got.message
        return
    assert got.status == record["outcome"], got.message


@pytest.mark.parametrize("stem, report", committed(), ids=[stem for stem, _ in committed()])
def test_every_committed_status_follows_who_computed_the_op(stem, report):
    """A pass is the backend's target's work; a right answer from its runtime, PyTorch or nobody known is not."""
    declared = registry.lookup(report["backend"]["name"])
    for record in report["results"]:
        outcome, where = record.get("outcome", record["status"]), f"{stem}: {record['op']} {record['dtype']}"
        if outcome in evidence.PASSING_STATUS.values():
            assert outcome == evidence.PASSING_STATUS[record["executed"]], f"{where}: {outcome} computed by {record['executed']}"
        if record["status"] == "pass":
            assert record["executed"] == "target", where
        if record.get("executed") == "unknown" and outcome == "unverified":  # only where nothing can tell, or said why
            assert declared.evidence == "none" or record["message"].startswith("right answer, unverified: "), where


def test_the_xnnpack_report_credits_the_delegate_only_with_what_it_computed():
    report = expanded(json.loads((ROOT / "conformance" / "results" / "executorch-xnnpack-cpu.json").read_text()))
    assert report["backend"]["target"] == "the XNNPACK delegate"
    for record in report["results"]:
        if record["status"] == "pass":  # the delegate ran the op: it is among the ops it was handed
            assert record["evidence"]["target_ops"], record["op"]
        if record["status"] == "undelegated":
            assert record["evidence"]["runtime_ops"], record["op"]
    assert report["summary"]["undelegated"] > report["summary"]["pass"] > 0
