"""`opspec validate` keeps a clean result and reuses it while nothing it reads has changed: the same lines either way."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from opspec.checks import result_cache
from opspec.cli import main
from opspec.cli import validate as validate_cli

SUMMARY_TIME = re.compile(r"; \d+\.\d+s(, unchanged since the last run)?\)$")


# A test that changes opspec's source holds it still first (steady_source, conftest.py); the others start from the
# parts a validate of the bundled opset kept (warm_validate_parts): the whole result is what they are about.


def run(capsys, *argv: str) -> tuple[int, list[str], bool]:
    """(exit code, the lines printed with the summary's time left out, whether the result was reused)."""
    code = main(["validate", *argv])
    captured = capsys.readouterr()
    lines = (captured.out + captured.err).splitlines()
    return code, [SUMMARY_TIME.sub(")", line) for line in lines], "unchanged since the last run" in lines[-1]


def stored(cache: Path) -> list[Path]:
    return sorted((cache / "validate").glob("*.json")) if (cache / "validate").is_dir() else []


@pytest.mark.usefixtures("warm_validate_parts")
def test_the_opset_reused_prints_what_a_full_run_prints(opset_copy, capsys):
    fresh = run(capsys, "--opset-dir", str(opset_copy))
    assert fresh[0] == 0 and not fresh[2]
    again = run(capsys, "--opset-dir", str(opset_copy))
    assert again[2] and again[:2] == fresh[:2]


def test_a_clean_result_is_reused_until_an_input_changes_and_findings_are_never_kept(opset_copy, capsys, monkeypatch,
                                                                                      steady_source):
    cache = Path(result_cache.folder())
    clean = run(capsys, "--opset-dir", str(opset_copy), "--no-torch")
    assert clean[0] == 0 and not clean[2] and len(stored(cache)) == 1
    assert run(capsys, "--opset-dir", str(opset_copy), "--no-torch") == (*clean[:2], True)

    errata = opset_copy / "errata.yaml"
    text = errata.read_text(encoding="utf-8")
    errata.write_text(text.replace("errata:", "errata:\n  - wrong: entry", 1), encoding="utf-8")
    broken = run(capsys, "--opset-dir", str(opset_copy), "--no-torch")
    assert broken[0] != 0 and not broken[2] and any(str(errata) in line for line in broken[1])
    assert run(capsys, "--opset-dir", str(opset_copy), "--no-torch")[2] is False  # a result with findings is not kept

    errata.write_text(text, encoding="utf-8")
    assert run(capsys, "--opset-dir", str(opset_copy), "--no-torch") == (*clean[:2], True)
    (steady_source / "module.py").write_text("VALUE = 2\n")  # opspec's code changed: another key
    assert run(capsys, "--opset-dir", str(opset_copy), "--no-torch") == (*clean[:2], False)
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")  # steers the kernels: another key
    assert run(capsys, "--opset-dir", str(opset_copy), "--no-torch") == (*clean[:2], False)


@pytest.mark.usefixtures("warm_validate_parts")
def test_a_corrupt_or_unwritable_cache_changes_nothing(opset_copy, capsys, tmp_path, monkeypatch):
    expected = run(capsys, "--opset-dir", str(opset_copy), "--no-torch", "--no-cache")
    cache = Path(result_cache.folder())
    assert stored(cache) == []
    run(capsys, "--opset-dir", str(opset_copy), "--no-torch")
    [slot] = stored(cache)
    kept_key = json.loads(slot.read_text())["key"]
    for damaged in ("", "{not json", "[]", '{"key": 1}', json.dumps({"key": kept_key, "result": {"findings": 3}})):
        slot.write_text(damaged)
        assert run(capsys, "--opset-dir", str(opset_copy), "--no-torch") == (*expected[:2], False), damaged

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be")
    monkeypatch.setenv(result_cache.CACHE_ENV, str(blocker))
    assert run(capsys, "--opset-dir", str(opset_copy), "--no-torch") == (*expected[:2], False)


def test_rules_implemented_outside_opspec_are_not_cached(tmp_path):
    version = tmp_path / "2030.01"
    version.mkdir()
    rules = version / "decompositions.yaml"
    rules.write_text("rules:\n  - op: aten::a\n    implementation: torch\n"
                     "  - op: aten::b\n    implementation: opspec.decompositions.elementwise:lerp\n")
    assert validate_cli._cacheable(tmp_path)
    rules.write_text(rules.read_text() + "  - {op: aten::c, implementation: 'mine.rules:c'}\n")
    assert not validate_cli._cacheable(tmp_path)


def test_row_statuses_come_from_the_parts_validate_kept_and_match_a_fresh_run():
    """The site shows each row's status on the installed torch: it reads the verdicts validate kept per op (the
    same store, opened where validate keeps it) and runs only what is not there."""
    from opspec.checks import kept_rows, part_cache, special_cases as check
    from opspec.spec import load
    from opspec.spec.special_cases import load_special_cases

    newest = load.load_opset()
    cases = {op: rows for op, rows in load_special_cases().items() if op in ("aten::sign", "aten::ceil")}
    fresh = check.run_cases(cases, newest).status
    store = part_cache.PartStore()
    kept_rows.findings(cases, check._hints(newest), "cpu", store, lambda pending: check.run_cases(pending, newest))

    def nothing_runs(pending):
        raise AssertionError(f"ran again: {sorted(pending)}")

    assert kept_rows.statuses(cases, check._hints(newest), "cpu", store, nothing_runs) == fresh
    assert set(fresh.values()) >= {"holds"} and len(fresh) == sum(map(len, cases.values()))


def test_a_file_rewritten_within_the_clocks_tick_changes_the_key(tmp_path, monkeypatch):
    """A file's digest is reused while its stamp (change time, size, inode) holds, except for a file changed in the
    last seconds: a second write of the same size within one tick of the clock keeps the stamp."""
    data = tmp_path / "data"
    data.mkdir()
    kept = data / "a.yaml"

    def rewrite(text: str, stamp: int) -> None:
        kept.write_text(text)
        os.utime(kept, ns=(stamp, stamp))  # the same stamp, as a write within the tick leaves it

    kept.write_text("a: 1\n")
    stamp = kept.stat().st_mtime_ns
    first = result_cache.key([data], [])
    rewrite("a: 2\n", stamp)
    second = result_cache.key([data], [])
    assert second != first  # changed just now: read again whatever its stamp says

    monkeypatch.setattr(result_cache, "RACY_S", -1)  # as if the file were older than the clock's tick
    assert result_cache.key([data], []) == second
    rewrite("a: 3\n", stamp)
    assert result_cache.key([data], []) == second  # an old stamp held: the digest kept is used, bytes unread
    rewrite("a: 3\n", stamp + 1)
    assert result_cache.key([data], []) not in (first, second)  # a new stamp is read again
