"""``opspec conform`` against purpose-built faulty backends (tests/conform_faults.py).

Each fault must land on its own case with the right status, every other case
must be unaffected, and the report must stay valid against its schema, also
after a run is killed and resumed.
"""
from __future__ import annotations

import datetime
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
from referencing import Registry, Resource

from opspec.cli import main
from opspec.spec import resources

HERE = Path(__file__).parent
FAULTY = "conform_faults:faulty"
FAST = ["--max-examples", "2", "--max-compiles", "1", "-j", "1"]  # one worker: the timeouts assume cases run alone
EXPECTED = {
    "aten::sin": "crash",
    "aten::cos": "timeout",
    "aten::neg": "fail",
    "aten::abs": "fail",
    "aten::exp": "fail",
    "aten::floor": "compile-error",
    "aten::relu": "pass",
    "aten::ceil": "pass",
}


@pytest.fixture(autouse=True)
def importable_faults(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))  # workers inherit sys.path


def validate(report: dict) -> None:
    folder = resources.schema_dir()
    schemas = {p.name: json.loads(p.read_text()) for p in folder.glob("*.schema.json")}
    registry = Registry().with_resources(
        (f"https://opspec.dev/schema/{name}", Resource.from_contents(s)) for name, s in schemas.items())
    jsonschema.Draft202012Validator(schemas["conformance_report.schema.json"], registry=registry).validate(report)


def statuses(report: dict) -> dict[str, str]:
    return {r["op"]: r["status"] for r in report["results"]}


def conform(tmp_path: Path, *args: str) -> tuple[int, Path]:
    report = tmp_path / "report.json"
    code = main(["conform", "--backend", FAULTY, "--report", str(report), *FAST, *args])
    return code, report


# Every fault in one run, each case in a worker of its own (the hang costs its timeout twice: a timeout is confirmed
# in a fresh worker): `make sweep`, with the pools' other faults. `make test` checks isolation on one crash at a time
# (test_conform_verdicts.py, test_device_faults.py).
@pytest.mark.sweep
@pytest.mark.parametrize("hang", [False, True], ids=["no-hang", "hang"])
def test_every_fault_lands_on_its_own_case(tmp_path, capsys, hang):
    expected = {op: status for op, status in EXPECTED.items() if hang or status != "timeout"}
    code, path = conform(tmp_path, "--ops", ",".join(op.removeprefix("aten::") for op in expected),
                         "--isolate", "--timeout", "10", "--no-expectations")
    assert code == 1
    report = json.loads(path.read_text())
    validate(report)
    started = datetime.datetime.strptime(report["date"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    assert datetime.timedelta(0) <= datetime.datetime.now(datetime.timezone.utc) - started < datetime.timedelta(hours=1)
    assert statuses(report) == expected
    by_op = {r["op"]: r for r in report["results"]}
    assert "SIGSEGV" in by_op["aten::sin"]["message"]
    assert "dtype" in by_op["aten::neg"]["message"]
    assert "shape" in by_op["aten::abs"]["message"]
    assert by_op["aten::exp"]["max_abs_error"] == pytest.approx(1.0)
    assert "torch.ops.aten.exp.default" in by_op["aten::exp"]["repro"]
    assert "no lowering for aten::floor" in by_op["aten::floor"]["message"]
    assert by_op["aten::relu"]["handed_ops"] == ["aten::relu"]
    assert not path.with_suffix(".jsonl").exists()  # the journal goes once the report is written
    out = capsys.readouterr().out
    assert "crash" in out and "not passing and not expected" in out


def test_expectations_turn_failures_into_xfail_and_flag_stale_ones(tmp_path, capsys):
    expectations = tmp_path / "faulty.yaml"
    expectations.write_text(
        "backend: conform_faults:faulty\n"
        "expectations:\n"
        "  - op: exp\n    status: xfail\n    reason: adds one to everything, on purpose\n"
        "  - op: aten::ceil\n    status: xfail\n    reason: passes, so this entry is stale\n"
        "  - op: 'sin*'\n    status: skip\n    reason: segfaults the process\n"
        "  - op: aten::no_such_op*\n    dtypes: [float32]\n    status: xfail\n    reason: matches nothing at all\n")
    code, path = conform(tmp_path, "--ops", "exp,ceil,sin,relu", "--expectations", str(expectations))
    report = json.loads(path.read_text())
    validate(report)
    assert statuses(report) == {"aten::exp": "xfail", "aten::ceil": "xpass", "aten::sin": "skip", "aten::relu": "pass"}
    assert code == 1  # a stale expectation is not clean
    by_op = {r["op"]: r for r in report["results"]}
    assert by_op["aten::exp"]["outcome"] == "fail"
    assert by_op["aten::ceil"]["message"].startswith("stale expectation at ")
    assert by_op["aten::sin"]["expectation"]["where"].endswith("faulty.yaml:9")
    err = capsys.readouterr().err
    assert "faulty.yaml:12:5: expectation 'aten::no_such_op*' matches no op" in err
    assert report["warnings"]


@pytest.mark.sweep  # a run killed on purpose, then resumed: `make sweep`
def test_a_killed_run_resumes_to_a_valid_report(tmp_path):
    report = tmp_path / "report.json"
    journal = report.with_suffix(".jsonl")
    ops = "relu,ceil,neg,abs,exp,floor,trunc,sign"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "opspec", "conform", "--backend", FAULTY, "--ops", ops, "--report", str(report),
               "--isolate", *FAST]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        deadline = time.time() + 240  # a loaded machine: the worker imports torch before the first case
        while time.time() < deadline and (not journal.exists() or len(journal.read_text().splitlines()) < 4):
            time.sleep(0.1)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    lines = journal.read_text().splitlines()
    assert 4 <= len(lines) < 9 and not report.exists()  # header + 3+ cases kept, no final report
    code = main(["conform", "--backend", FAULTY, "--ops", ops, "--report", str(report), "--isolate",
                 "--resume", str(journal), *FAST])
    assert code == 1
    final = json.loads(report.read_text())
    validate(final)
    assert sorted(r["op"] for r in final["results"]) == sorted(f"aten::{op}" for op in ops.split(","))
    assert statuses(final)["aten::floor"] == "compile-error" and statuses(final)["aten::trunc"] == "pass"


@pytest.mark.parametrize("args, message", [
    (["--backend", "inductr"], "unknown backend 'inductr' (did you mean inductor?)"),
    (["--backend", "no_such_module:fn"], "cannot import no_such_module"),
    (["--backend", FAULTY, "--ops", "nothing_like_this*"], "--ops 'nothing_like_this*' matches no op"),
    (["--backend", FAULTY, "--dtypes", "float33"], "--dtypes float33: not a torch dtype"),
    (["--backend", FAULTY, "--ops", "relu", "--resume", "/nonexistent/report.json"], "/nonexistent/report.json: no such file"),
])
def test_usage_errors_are_one_line(tmp_path, capsys, args, message):
    assert main(["conform", "--report", str(tmp_path / "r.json"), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "r.json").exists()


def test_bad_expectations_name_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("backend: x\nexpectations:\n  - op: relu\n    status: maybe\n    reason: not a status we know\n")
    code, path = conform(tmp_path, "--ops", "relu", "--expectations", str(bad))
    assert code == 2 and not path.exists()
    err = capsys.readouterr().err.strip()
    assert f"{bad}:4:" in err and "'maybe' is not one of" in err and len(err.splitlines()) == 1


def test_resume_rejects_a_garbled_journal_and_another_backend(tmp_path, capsys):
    garbled = tmp_path / "garbled.jsonl"
    garbled.write_text('{"header": {}}\nnot json\n{"op": "aten::relu"}\n')
    code, _ = conform(tmp_path, "--ops", "relu", "--resume", str(garbled))
    assert code == 2 and f"{garbled}:2: not a JSON line" in capsys.readouterr().err
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"header": {"backend": {"name": "inductor"}, "device": "cpu"}}) + "\n")
    code, _ = conform(tmp_path, "--ops", "relu", "--resume", str(other))
    assert code == 2 and "recorded with backend 'inductor'" in capsys.readouterr().err


def test_a_crash_without_isolation_stops_with_one_line(tmp_path, capsys):
    code, path = conform(tmp_path, "--ops", "relu,sin,trunc", "--no-expectations")
    assert code == 1 and not path.exists()
    err = capsys.readouterr().err.strip()
    assert err.startswith("opspec conform: error: aten::sin float32 cpu: crash: worker died: killed by SIGSEGV")
    assert len(err.splitlines()) == 1
    kept = path.with_suffix(".jsonl").read_text().splitlines()
    assert len(kept) == 2 and '"aten::relu"' in kept[1]  # header and the case finished before the crash
