"""Report history: archived runs, their comparison, the archive command and the import from git."""
from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

from opspec.cli import main
from opspec.reports import history
from opspec.spec import load

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "conformance" / "results"
HISTORY = RESULTS / "history"


def report(cases: dict[str, str], duration: float = 1.0, opset: str = "2026.11", backend: str = "toy") -> dict:
    return {"backend": {"name": backend, "version": "1"}, "device": "cpu", "opset": opset, "torch": "2.13.0+cpu",
            "opspec": "0.1.0", "dtypes": ["float32"], "duration_s": duration,
            "results": [{"op": op, "dtype": "float32", "device": "cpu", "status": status} for op, status in cases.items()]}


# ---- the committed history ----

ENTRIES = sorted(HISTORY.glob("*/*.json"))


@pytest.mark.parametrize("path", ENTRIES, ids=[f"{p.parent.name}/{p.name}" for p in ENTRIES])
def test_every_archived_run_is_valid_and_named_for_what_it_holds(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    assert load.schema_findings(data, history.SCHEMA, str(path)) == []
    run = history.Run.from_dict(data)
    assert path.parent.name == run.key and path.name == run.file_name()
    assert data["summary"] == run.summary() and sum(data["summary"].values()) == run.total


ONCE: set[str] = set()  # every published backend has at least two dated runs


def test_every_published_report_is_archived_and_its_newest_run_is_the_report():
    runs, notes = history.read_all(HISTORY)
    assert notes == []
    for path in sorted(RESULTS.glob("*.json")):
        entries = runs.get(path.stem, [])
        assert entries, f"{path.name}: not archived"
        # one run only where the backend was published once (a backend new in this opset's reports)
        assert len(entries) >= 2 or path.stem in ONCE, f"{path.name}: {len(entries)} archived run(s)"
        assert len({r.date for r in entries}) == len(entries)
        current = history.from_report(json.loads(path.read_text(encoding="utf-8")), path.name, entries[-1].date)
        assert entries[-1].cases == current.cases, f"{path.name}: the newest archived run is not the published report"
        assert (entries[-1].opset, entries[-1].torch) == (current.opset, current.torch)


# ---- comparing runs ----

def test_changes_between_two_runs_sort_every_case():
    older = history.from_report(report({"aten::abs": "pass", "aten::neg": "fail", "aten::sin": "fail", "aten::cos": "pass",
                                        "aten::tan": "xfail"}), "a", "2026-11-21T00:00:00Z")
    newer = history.from_report(report({"aten::abs": "pass", "aten::neg": "pass", "aten::sin": "xfail",
                                        "aten::cos": "fallback", "aten::exp": "pass"}), "b", "2026-11-22T00:00:00Z")
    change = history.changes(older, newer)
    assert change.fixed == [("aten::neg float32 cpu", "fail", "pass")]
    assert change.new_failures == [("aten::cos float32 cpu", "pass", "fallback")]  # PyTorch ran it now: not a pass
    assert change.changed == [("aten::sin float32 cpu", "fail", "xfail")]
    assert change.added == [("aten::exp float32 cpu", "pass")]
    assert change.removed == [("aten::tan float32 cpu", "xfail")]
    assert (older.pass_rate, newer.pass_rate) == (40.0, 60.0)
    lines = history.describe(change)
    assert "40.0% pass" in lines[0] and "  fixed: aten::neg float32 cpu: fail -> pass" in lines
    assert history.describe(history.changes(older, older))[-1] == "  no case changed"


def test_a_report_that_cannot_be_archived_says_why():
    with pytest.raises(history.HistoryError, match="r.json: not a conformance report"):
        history.from_report({"results": "no"}, "r.json", "2026-11-21T00:00:00Z")
    with pytest.raises(history.HistoryError, match="header lacks opset, torch"):
        history.from_report({"backend": "x", "device": "cpu", "results": []}, "r.json", "2026-11-21T00:00:00Z")
    twice = report({"aten::abs": "pass"})
    twice["results"] *= 2
    with pytest.raises(history.HistoryError, match=r"results\[1\] repeats the case aten::abs float32 cpu"):
        history.from_report(twice, "r.json", "2026-11-21T00:00:00Z")


# ---- opspec history ----

def test_archive_then_archive_again_then_a_clash(tmp_path, capsys):
    path = tmp_path / "toy-cpu.json"
    path.write_text(json.dumps(report({"aten::abs": "pass", "aten::neg": "fail"})))
    into = tmp_path / "history"
    assert main(["history", "archive", str(path), "--into", str(into), "--date", "2026-11-21T10:00:00Z"]) == 0
    written = into / "toy-cpu" / "2026-11-21T100000Z_2026.11_torch-2.13.0-cpu.json"
    assert written.is_file() and str(written) in capsys.readouterr().out
    entry = json.loads(written.read_text())
    assert entry["cases"] == {"aten::abs float32 cpu": "pass", "aten::neg float32 cpu": "fail"}
    assert entry["summary"] == {"fail": 1, "pass": 1} and entry["date"] == "2026-11-21T10:00:00Z"
    assert entry["source"] == {"report": "toy-cpu.json"}  # outside the cwd: its name, not the scratch folder's path
    assert main(["history", "archive", str(path), "--into", str(into), "--date", "2026-11-21T10:00:00Z"]) == 0
    path.write_text(json.dumps(report({"aten::abs": "pass", "aten::neg": "pass"})))  # another run, the same stamp
    assert main(["history", "archive", str(path), "--into", str(into), "--date", "2026-11-21T10:00:00Z"]) == 2
    assert "another run is archived under this date" in capsys.readouterr().err
    assert json.loads(written.read_text()) == entry


def test_archive_refuses_bad_input_with_one_line_and_writes_nothing(tmp_path, capsys):
    good, bad = tmp_path / "toy-cpu.json", tmp_path / "bad.json"
    good.write_text(json.dumps(report({"aten::abs": "pass"})))
    bad.write_text('{"results": [')
    into = tmp_path / "history"
    assert main(["history", "archive", str(good), str(bad), "--into", str(into)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("opspec history: error:") and f"{bad}:1:" in err and "\n" not in err
    assert not into.exists()  # the good report was not archived either
    assert main(["history", "archive", str(good), "--into", str(into), "--date", "last tuesday"]) == 2
    assert "not an ISO date" in capsys.readouterr().err
    assert main(["history", "archive", str(tmp_path / "missing.json"), "--into", str(into)]) == 2


def test_changes_compares_reports_and_archived_runs(tmp_path, capsys):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(report({"aten::abs": "fail", "aten::neg": "pass"})))
    new.write_text(json.dumps(report({"aten::abs": "pass", "aten::neg": "crash"})))
    assert main(["history", "changes", str(old), str(new)]) == 0
    out = capsys.readouterr().out
    assert "fixed: aten::abs float32 cpu: fail -> pass" in out and "new failures: aten::neg float32 cpu: pass -> crash" in out
    entries = sorted((HISTORY / "inductor-cpu").glob("*.json"))
    assert main(["history", "changes", str(entries[-2]), str(entries[-1])]) == 0
    assert "inductor-cpu:" in capsys.readouterr().out


# ---- the import from git ----

def _tool():
    spec = importlib.util.spec_from_file_location("import_report_history", ROOT / "tools" / "import_report_history.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_import_groups_commits_into_runs_dated_by_first_publication(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "conformance" / "results").mkdir(parents=True)
    path = repo / "conformance" / "results" / "toy-cpu.json"

    def commit(data: dict, date: str) -> None:
        path.write_text(json.dumps(data))
        env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": "2026-12-01T00:00:00Z", "HOME": str(tmp_path)}
        for args in (["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "r"]):
            subprocess.run(["git", *args], cwd=repo, check=True, env={**env, "PATH": "/usr/bin:/bin"})

    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    commit(report({"aten::abs": "fail"}, duration=5.0), "2026-11-21T10:00:00Z")
    commit(report({"aten::abs": "xfail"}, duration=5.0), "2026-11-21T11:00:00Z")  # the same run, triaged
    commit(report({"aten::abs": "pass"}, duration=7.0), "2026-11-22T09:30:00Z")  # a new run
    commit(report({"aten::abs": "pass"}, duration=7.0, backend="other"), "2026-11-23T09:30:00Z")  # wrong file
    tool = _tool()
    monkeypatch.setattr(tool, "ROOT", repo)
    runs, notes = tool.runs_of(path)
    assert [(r.date, r.cases["aten::abs float32 cpu"]) for r in runs] == [
        ("2026-11-21T10:00:00Z", "xfail"), ("2026-11-22T09:30:00Z", "pass")]  # author dates, not the rebase's
    assert runs[0].source["first_commit"] != runs[0].source["commit"]
    assert len(notes) == 1 and "names other-cpu, not toy-cpu" in notes[0]


def test_a_run_judged_again_updates_its_entry_and_keeps_its_date(tmp_path):
    first = history.from_report(report({"aten::abs": "pass"}, duration=3.0), "r", "2026-11-21T10:00:00Z")
    path = history.record(first, tmp_path)
    rejudged = history.from_report(report({"aten::abs": "unverified"}, duration=3.0), "r", "2026-11-26T10:00:00Z",
                                   {"report": "r.json"})
    assert history.record(rejudged, tmp_path) == path  # the same run: same entry, same date
    entry = json.loads(path.read_text())
    assert entry["date"] == "2026-11-21T10:00:00Z" and entry["cases"] == {"aten::abs float32 cpu": "unverified"}
    another = history.from_report(report({"aten::abs": "pass"}, duration=4.0), "r", "2026-11-26T10:00:00Z")
    assert history.record(another, tmp_path) != path and len(list((tmp_path / "toy-cpu").glob("*.json"))) == 2
