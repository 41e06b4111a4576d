"""``opspec conform -j N``: cases in a pool of worker processes, with the verdicts of one worker, case for case."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from opspec_fixtures import verdicts

from opspec.cli import main
from opspec.conform import pool

HERE = Path(__file__).parent
FAST = ["--max-examples", "2", "--max-compiles", "1"]


@pytest.fixture(autouse=True)
def importable_faults(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))  # workers inherit sys.path


def conform(path: Path, *args: str) -> tuple[int, dict | None]:
    code = main(["conform", "--report", str(path), *FAST, *args])
    return code, json.loads(path.read_text()) if path.exists() else None


@pytest.mark.sweep  # two whole runs, one worker and two, compared: `make sweep`
def test_two_workers_give_the_verdicts_of_one(tmp_path, capsys):
    args = ["--backend", "aot_eager", "--ops", "abs,add.Tensor,amax,cumsum,sort,where.self",
            "--dtypes", "float32", "int64", "bfloat16", "--isolate"]
    code_one, one = conform(tmp_path / "one.json", *args, "-j", "1")
    code_two, two = conform(tmp_path / "two.json", *args, "-j", "2")
    assert code_one == code_two
    assert len(one["results"]) >= 12 and verdicts(two) == verdicts(one)
    assert [r["op"] for r in two["results"]] == [r["op"] for r in one["results"]]  # the plan's order
    assert (one["jobs"], two["jobs"]) == (1, 2)
    progress = [line for line in capsys.readouterr().out.splitlines() if re.match(r"\[\s*\d+/\d+\] ", line)]
    assert len(progress) == 2 * len(one["results"])  # one line per case, in each run


@pytest.mark.sweep  # a worker pool crashed, hung, poisoned or flooded on purpose: minutes, in `make sweep`
def test_a_crash_and_a_hang_cost_their_own_cases_only(tmp_path):
    # cases of two workers share the cores: a timeout that leaves room for that, and still ends the hang
    args = ["--backend", "conform_faults:faulty", "--ops", "relu,sin,ceil,cos,neg,trunc,floor", "--isolate",
            "--timeout", "15", "--no-expectations"]
    _, one = conform(tmp_path / "one.json", *args, "-j", "1")
    code, two = conform(tmp_path / "two.json", *args, "-j", "3")
    assert code == 1
    assert {r["op"]: r["status"] for r in two["results"]} == {
        "aten::relu": "pass", "aten::sin": "crash", "aten::ceil": "pass", "aten::cos": "timeout",
        "aten::neg": "fail", "aten::trunc": "pass", "aten::floor": "compile-error"}
    assert verdicts(two) == verdicts(one)


@pytest.mark.sweep  # a worker pool crashed, hung, poisoned or flooded on purpose: minutes, in `make sweep`
def test_a_case_that_only_ran_out_of_time_once_is_not_a_hang(tmp_path):
    # the first compile of cos stalls past the limit (as under other workers' load); run again in a fresh worker
    # it passes, and the record keeps the timeout as its first run. A real hang stays a timeout (above).
    import shutil

    from conform_faults import STALL_FOLDER

    shutil.rmtree(STALL_FOLDER, ignore_errors=True)
    os.makedirs(STALL_FOLDER)
    open(os.path.join(STALL_FOLDER, "armed"), "w").close()
    try:
        code, run = conform(tmp_path / "run.json", "--backend", "conform_faults:stalled_once", "--ops", "cos,relu",
                            "--isolate", "--timeout", "10", "--no-expectations")
        assert os.path.exists(os.path.join(STALL_FOLDER, "stalled"))
    finally:
        shutil.rmtree(STALL_FOLDER, ignore_errors=True)
    cos = next(r for r in run["results"] if r["op"] == "aten::cos")
    assert code == 0
    assert cos["status"] == "pass" and cos["first_run"]["status"] == "timeout"
    assert "no result within 10s" in cos["first_run"]["message"] and cos["duration_s"] >= 10
    assert "first_run" not in next(r for r in run["results"] if r["op"] == "aten::relu")


@pytest.mark.sweep  # a worker pool crashed, hung, poisoned or flooded on purpose: minutes, in `make sweep`
def test_a_backend_that_poisons_its_process_fails_only_its_own_case(tmp_path):
    # after floor fails, every call in that process fails: the worker is replaced, so no other case inherits it,
    # whatever the order, the number of workers or --isolate
    args = ["--backend", "conform_faults:poisoning", "--ops", "abs,ceil,floor,neg,relu,trunc", "--no-expectations"]
    runs = {name: conform(tmp_path / f"{name}.json", *args, *extra)[1]
            for name, extra in {"one": ["-j", "1"], "two": ["-j", "2"], "shuffled": ["-j", "1", "--shuffle", "3"],
                                "isolated": ["-j", "1", "--isolate"]}.items()}
    statuses = {r["op"]: r["status"] for r in runs["one"]["results"]}
    assert statuses == {"aten::abs": "pass", "aten::ceil": "pass", "aten::floor": "run-error", "aten::neg": "pass",
                        "aten::relu": "pass", "aten::trunc": "pass"}
    for name, run in runs.items():
        differing = {(case, key) for case, record in verdicts(run).items() for key in record
                     if record[key] != verdicts(runs["one"])[case].get(key)}
        assert not differing, name
    assert [c["count"] for c in runs["one"]["root_causes"]] == [1]
    # its own diagnostic, printed to stderr, is in the record and the repro, not only in the log
    floor = next(r for r in runs["two"]["results"] if r["op"] == "aten::floor")
    assert "kernel launch failed. See diagnostics." in floor["message"]
    assert any("no kernel for this rounding mode" in line for line in floor["diagnostic"])
    assert floor["diagnostic"][0].strip() == "floor.cu:3: rounding mode not supported"  # the error's second line
    assert "no kernel for this rounding mode" in Path(floor["repro_file"]).read_text()


@pytest.mark.sweep  # a worker pool crashed, hung, poisoned or flooded on purpose: minutes, in `make sweep`
def test_a_backend_that_prints_a_megabyte_per_compile_leaves_a_bounded_log(tmp_path):
    from opspec.conform import torch_logs

    code, report = conform(tmp_path / "r.json", "--backend", "conform_faults:loud", "--ops", "abs,neg,relu",
                           "-j", "2", "--no-expectations")
    printed = sum(r["log"]["bytes"] for r in report["results"])
    assert code == 0 and printed > 3 * 2**20  # a megabyte per compile, every case compiled
    assert all(r["log"]["cut_bytes"] and r["log"]["repeated_lines"] >= 8191 for r in report["results"])
    log = (tmp_path / "r.log").stat().st_size
    assert log < 3 * torch_logs.CASE_CAP + 64 * 1024, log
    assert not (tmp_path / "r.log.parts").exists() or not any((tmp_path / "r.log.parts").iterdir())


@pytest.mark.sweep  # a worker pool crashed on purpose, then resumed isolated: `make sweep` (make test: test_conform.py's
# crash without isolation, one worker)
def test_without_isolate_a_crash_stops_the_pool_and_keeps_what_finished(tmp_path, capsys):
    path = tmp_path / "r.json"
    code, _ = conform(path, "--backend", "conform_faults:faulty", "--ops", "relu,sin,ceil,trunc,neg", "-j", "2",
                      "--no-expectations")
    assert code == 1 and not path.exists()
    err = capsys.readouterr().err.strip()
    assert err.startswith("opspec conform: error: aten::sin float32 cpu: crash: worker died: killed by SIGSEGV")
    assert len(err.splitlines()) == 1
    kept = [json.loads(line) for line in path.with_suffix(".jsonl").read_text().splitlines()[1:]]
    ops = [r["op"] for r in kept]
    assert "aten::relu" in ops and "aten::sin" not in ops  # relu ran beside sin and was journaled
    code, resumed = conform(path, "--backend", "conform_faults:faulty", "--ops", "relu,sin,ceil,trunc,neg", "-j", "2",
                            "--no-expectations", "--isolate", "--resume", str(path.with_suffix(".jsonl")))
    assert code == 1 and {r["op"]: r["status"] for r in resumed["results"]}["aten::sin"] == "crash"
    assert len(resumed["results"]) == 5


def test_jobs_must_be_positive(tmp_path, capsys):
    assert main(["conform", "--backend", "eager", "--ops", "abs", "-j", "0", "--report", str(tmp_path / "r.json")]) == 2
    assert "-j/--jobs must be at least 1" in capsys.readouterr().err


def test_the_default_is_the_cores_this_process_may_use():
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no affinity masks on this OS")
    assert pool.default_jobs() == len(os.sched_getaffinity(0))


@pytest.mark.parametrize("flag", ["--keep", "--out"])
def test_the_parallel_benchmark_refuses_a_bad_path_before_it_runs(tmp_path, flag):
    import subprocess
    import sys

    a_file = tmp_path / "a-file"
    a_file.write_text("")
    target = a_file if flag == "--keep" else a_file / "result.json"
    done = subprocess.run([sys.executable, str(HERE.parent / "benchmarks" / "conform_parallel.py"), flag, str(target)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    why = f"{a_file}: is a file, not a folder" if flag == "--keep" else f"{target}: {a_file} is a file, not a folder"
    assert done.stderr == f"conform_parallel: {why}\n"
