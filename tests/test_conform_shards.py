"""``opspec conform --shard K/N`` and ``opspec report merge``: split a run, join the parts, get the unsharded run."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from opspec_fixtures import verdicts

from opspec.cli import main
from opspec.conform import shards
from opspec.conform.cases import Case
from opspec.conform.runner import cached_opset
from opspec.spec import load

pytestmark = pytest.mark.xdist_group("conform_shards")  # one worker runs them all: the module's shared runs are made once

OPS = "abs,add.Tensor,amax,bmm,cat,cumsum,exp,relu,sort,where.self,sum.dim_IntList,clamp"
SMALL_OPS = "abs,add.Tensor,exp,relu,cat,sort"  # each of the three shards gets some


def newest_cases(dtypes=("float32",)) -> list[Case]:
    return [Case(op.name, dtype, "cpu") for op in cached_opset(None).active_ops() for dtype in dtypes]


# ---- the split ----

@pytest.mark.parametrize("text, message", [("3/2", "K must be between 1 and N"), ("0/3", "K must be between 1 and N"),
                                           ("1-3", "expected K/N"), ("a/b", "expected K/N")])
def test_a_bad_shard_is_refused(text, message):
    with pytest.raises(ValueError, match=message):
        shards.Shard.parse(text)


@pytest.mark.parametrize("backend", ["inductor", "aot_eager", "a.third_party:backend"])
@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_the_shards_partition_the_cases_by_cost(backend, count):
    cases = newest_cases(("float32", "int64"))
    costs = shards.costs_for(backend)
    parts = [shards.Shard(k, count).select(cases, costs) for k in range(1, count + 1)]
    joined = [c for part in parts for c in part]
    assert len(joined) == len(cases) and set(joined) == set(cases)  # every case once
    assert all(part == [c for c in cases if c in set(part)] for part in parts)  # each in the plan's order
    # ops the table has not measured yet (added by a newer opset than the published runs) ride with a measured
    # neighbour and weigh nothing in the cut
    per_op = {c.op: 0.0 for c in cases if costs.of(c.op) is not None}
    for case in cases:
        per_op[case.op] = per_op.get(case.op, 0.0) + (costs.of(case.op) or 0.0)
    loads = [sum(costs.of(c.op) or 0.0 for c in part) for part in parts]
    # contiguous cuts at the middle of each op's cost: no shard exceeds its share by more than one op
    assert max(loads) <= sum(loads) / count + max(per_op.values())


def test_a_new_op_moves_no_other_op():
    cases = newest_cases()
    costs = shards.costs_for("inductor")
    before = shards.assign(cases, costs, 4)
    added = [*cases, Case("aten::zz_new_op", "float32", "cpu"), Case("aten::another_new_op.Tensor", "float32", "cpu")]
    after = shards.assign(added, costs, 4)
    assert {op: after[op] for op in before} == before
    assert {after["aten::zz_new_op"], after["aten::another_new_op.Tensor"]} <= {1, 2, 3, 4}
    # and removing ops the table does not know moves nothing either
    assert shards.assign(cases, costs, 4) == before


def test_the_split_is_the_same_in_any_process_and_order():
    cases = newest_cases()
    costs = shards.costs_for("aot_eager")
    here = shards.assign(cases, costs, 3)
    assert shards.assign(list(reversed(cases)), costs, 3) == here
    # another process with another string-hash salt cuts the same split
    code = ("import json; from opspec.conform import shards; from opspec.conform.cases import Case; "
            "from opspec.conform.runner import cached_opset; "
            "cases = [Case(op.name, 'float32', 'cpu') for op in cached_opset(None).active_ops()]; "
            "print(json.dumps(shards.assign(cases, shards.costs_for('aot_eager'), 3)))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": os.pathsep.join(sys.path)})
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == here


def test_the_cost_table_is_valid_and_covers_the_opset_the_reports_ran():
    """Every op of the published runs' opset has a cost; an op a newer opset adds is placed beside a measured
    neighbour until a published run measures it (test_a_new_op_moves_no_other_op)."""
    path = shards.table_path()
    assert not load.read(path, shards.SCHEMA).findings
    data = load.read_checked(path, shards.SCHEMA, "cost table")
    results = Path(__file__).resolve().parents[1].joinpath("conformance", "results")
    ran = {json.loads(report.read_text())["opset"] for report in results.glob("*.json")}
    for version in ran:
        active = {op.name for op in cached_opset(version).active_ops()}
        assert active <= set(data["relative"]), f"{version}: unmeasured {sorted(active - set(data['relative']))[:5]}"
    for report in Path(__file__).resolve().parents[1].joinpath("conformance", "results").glob("*.json"):
        backend = json.loads(report.read_text())["backend"]["name"]
        assert backend in data["backends"], f"{report.name}: no column for {backend} (python tools/measure_costs.py)"


def test_the_cost_table_is_what_the_published_reports_say():
    """A report re-published without re-measuring the table leaves the cuts where older costs put them: Inductor's
    three shards of the every-dtype run held 2,256, 2,913 and 1,442 s of cases with a stale table, 2,211, 2,216 and
    2,185 s with a fresh one."""
    done = subprocess.run([sys.executable, str(Path(__file__).resolve().parents[1] / "tools" / "measure_costs.py"),
                           "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


# ---- split runs, merged ----

def split(folder: Path, *args: str) -> tuple[Path, dict]:
    """An unsharded aot_eager run and its three shards, into ``folder``; the exit codes by part."""
    common = ["conform", "--backend", "aot_eager", *args, "--max-examples", "2", "--max-compiles", "1", "-j", "1"]
    codes = {"whole": main([*common, "--report", str(folder / "whole.json")])}
    for k in (1, 2, 3):
        codes[k] = main([*common, "--shard", f"{k}/3", "--report", str(folder / f"part{k}.json")])
    return folder, codes


@pytest.fixture(scope="module")
def split_run(tmp_path_factory):
    """Six ops in one dtype, split three ways: the parts the merge is asked to refuse, or to name."""
    return split(tmp_path_factory.mktemp("split"), "--ops", SMALL_OPS, "--dtypes", "float32")


def read(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.mark.sweep  # four runs, each case in a worker of its own, compared: `make sweep`
def test_three_shards_merged_equal_the_unsharded_run(tmp_path, capsys):
    """A dozen ops in two dtypes, each case isolated as a fleet runs them: the merged parts are the unsharded run."""
    folder, codes = split(tmp_path, "--ops", OPS, "--dtypes", "float32", "int64", "--isolate")
    whole = read(folder / "whole.json")
    parts = [read(folder / f"part{k}.json") for k in (1, 2, 3)]
    assert all(part["results"] for part in parts)  # the split gives each shard some of these ops
    assert [p["shard"]["index"] for p in parts] == [1, 2, 3] and {p["shard"]["count"] for p in parts} == {3}
    assert sum(p["shard"]["cases"] for p in parts) == len(whole["results"]) >= 20
    code = main(["report", "merge", *(str(folder / f"part{k}.json") for k in (3, 1, 2)), "--out", str(folder / "merged.json")])
    merged = read(folder / "merged.json")
    for report in (*parts, merged):
        assert not load.schema_findings(report, "conformance_report.schema.json", "report")
    assert code == codes["whole"]
    assert verdicts(merged) == verdicts(whole)
    assert [(r["op"], r["dtype"]) for r in merged["results"]] == [(r["op"], r["dtype"]) for r in whole["results"]]
    for key in ("summary", "executed", "blame", "root_causes", "lowering"):
        assert merged.get(key) == whole.get(key), key
    assert "shard" not in merged and [p["shard"] for p in merged["parts"]] == ["3/3", "1/3", "2/3"]
    assert not any("device_name" in r for r in merged["results"])  # one machine: the header names it
    assert merged["duration_s"] == pytest.approx(sum(p["duration_s"] for p in parts), abs=0.3)
    for record in merged["results"]:  # repros travel with the merged report
        if record.get("repro_file"):
            assert Path(record["repro_file"]).read_text() == record["repro"]
            assert Path(record["repro_file"]).parent == folder / "merged.repros"
    assert "merged 3 parts" in capsys.readouterr().out


def edited(folder: Path, name: str, change) -> Path:
    data = read(folder / name)
    change(data)
    target = folder / f"edited-{name}"
    target.write_text(json.dumps(data))
    return target


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(device="cuda"), "differ in device: 'cuda' vs 'cpu'"),
    (lambda d: d.update(torch="2.14.0"), "differ in torch: '2.14.0'"),
    (lambda d: d["backend"].update(version="torch 9.9"), "differ in backend"),
    (lambda d: d.update(opset="2026.11"), "differ in opset"),
    (lambda d: d.update(max_examples=9), "differ in max_examples"),
    (lambda d: d.update(dtypes=["all"]), "differ in dtypes"),
    (lambda d: d["shard"].update(costs="0" * 16), "split differently: cost table"),
    (lambda d: d["shard"].update(count=4), "split differently: shard count 4 vs 3"),
    (lambda d: d["results"].pop(), "planned"),
])
def test_merge_refuses_parts_that_disagree(split_run, capsys, change, message):
    folder, _ = split_run
    bad = edited(folder, "part2.json", change)
    out = folder / "refused.json"
    assert main(["report", "merge", str(folder / "part1.json"), str(bad), str(folder / "part3.json"), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not out.exists() and not out.with_suffix(".repros").exists()


def test_merge_names_missing_and_duplicate_cases(split_run, capsys):
    folder, _ = split_run
    part = [str(folder / f"part{k}.json") for k in (1, 2, 3)]
    out = str(folder / "refused.json")
    assert main(["report", "merge", part[0], part[2], "--out", out]) == 2
    assert "missing shard 2/3: its cases are in none of the 2 parts" in capsys.readouterr().err
    copy = folder / "copy-part1.json"
    shutil.copy(part[0], copy)
    assert main(["report", "merge", part[0], str(copy), part[1], part[2], "--out", out]) == 2
    assert f"shard 1/3 is given twice: {part[0]} and {copy}" in capsys.readouterr().err
    first = read(folder / "part1.json")["results"][0]
    stray = edited(folder, "part3.json", lambda d: (d["results"].append(first), d["shard"].update(cases=d["shard"]["cases"] + 1)))
    assert main(["report", "merge", part[0], part[1], str(stray), "--out", out]) == 2
    assert f"{first['op']} {first['dtype']} cpu is in both {part[0]} and {stray}" in capsys.readouterr().err
    assert main(["report", "merge", str(folder / "whole.json"), part[0], "--out", out]) == 2
    assert "whole.json: not a part of a split run" in capsys.readouterr().err


def test_merge_refuses_a_journal_and_its_own_output(split_run, capsys):
    folder, _ = split_run
    journal = folder / "part1.jsonl"
    data = read(folder / "part1.json")
    head = {k: v for k, v in data.items() if k not in ("results", "summary", "duration_s")}
    journal.write_text(json.dumps({"header": head}) + "\n" + "\n".join(json.dumps(r) for r in data["results"]) + "\n")
    out = str(folder / "refused.json")
    assert main(["report", "merge", str(journal), str(folder / "part2.json"), "--out", out]) == 2
    assert "a journal, not a final report" in capsys.readouterr().err
    part = str(folder / "part1.json")
    assert main(["report", "merge", part, str(folder / "part2.json"), "--out", part]) == 2
    assert "is one of the parts" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--shard", "4/3"], "--shard '4/3': K must be between 1 and N"),
    (["--shard", "1/2", "--functionalization"], "--shard splits the op cases only"),
])
def test_conform_refuses_a_bad_shard(tmp_path, capsys, args, message):
    path = tmp_path / "r.json"
    assert main(["conform", "--backend", "eager", "--ops", "abs", "--report", str(path), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and not path.exists()


def test_merge_says_when_parts_ran_on_other_cpus_and_refuses_other_gpus(split_run, capsys):
    folder, _ = split_run
    other = edited(folder, "part2.json", lambda d: d.update(device_name="Another CPU"))
    out = folder / "machines.json"
    assert main(["report", "merge", str(folder / "part1.json"), str(other), str(folder / "part3.json"),
                 "--out", str(out)]) in (0, 1)
    merged = read(out)
    assert any(w.startswith("the parts ran on different device names: ") for w in merged["warnings"])
    assert "Another CPU | " in merged["device_name"] or " | Another CPU" in merged["device_name"]
    assert not load.schema_findings(merged, "conformance_report.schema.json", "report")
    # each case names the machine its part ran on, so expectations limited by hardware judge it there
    machine_of = {(r["op"], r["dtype"]): read(path)["device_name"]
                  for path in (folder / "part1.json", other, folder / "part3.json") for r in read(path)["results"]}
    assert all(r["device_name"] == machine_of[(r["op"], r["dtype"])] for r in merged["results"])
    gpus = [edited(folder, f"part{k}.json", lambda d, k=k: d.update(device="cuda", device_name=f"GPU {k % 2}"))
            for k in (1, 2, 3)]
    capsys.readouterr()
    assert main(["report", "merge", *map(str, gpus), "--out", str(folder / "gpus.json")]) == 2
    assert "the parts ran on different GPUs: GPU 0; GPU 1" in capsys.readouterr().err
