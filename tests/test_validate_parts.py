"""`opspec validate` keeps its result in parts: after an edit it re-runs the parts the edit touched, and prints what a
run without the cache prints."""
from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from opspec_fixtures import reopen_newest

from opspec.checks import beside, formulas, kept_formulas, part_cache, result_cache, special_cases
from opspec.checks import validate as validate_module
from opspec.checks.torch_facts import TorchFacts
from opspec.cli import main
from opspec.cli import validate as cli_validate
from opspec.spec import file_memo, load, resources
from opspec.spec import special_cases as spec_cases

SUMMARY_TIME = re.compile(r"; \d+\.\d+s(, unchanged since the last run)?\)$")
ABS_ROW = "      expect: ['+0.0', '+0.0']"  # pointwise-unary.yaml: abs of -0.0 and +0.0


pytestmark = pytest.mark.usefixtures("steady_source")  # opspec's source held still (conftest.py)


@pytest.fixture
def work(monkeypatch) -> dict[str, list]:
    """What each run computed afresh: files parsed, ops whose rows ran, formulas checked, torch measured."""
    done: dict[str, list] = {"parsed": [], "rows": [], "formulas": [], "torch": []}

    def recording(module, name, what, record):
        original = getattr(module, name)

        def wrapper(*args, **kwargs):
            done[what].append(record(*args))
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    recording(load, "_read", "parsed", lambda path, *_: Path(path).name)
    recording(spec_cases, "_read_file", "parsed", lambda path: Path(path).name)
    recording(special_cases, "run_cases", "rows", lambda cases, *_: sorted(cases))
    recording(formulas, "drawn_verdict", "formulas", lambda formula, *_: (formula.op, "drawn"))
    recording(formulas, "rows_verdict", "formulas", lambda formula, *_: (formula.op, "rows"))
    measure = TorchFacts.measure
    monkeypatch.setattr(TorchFacts, "measure", staticmethod(lambda: done["torch"].append(1) or measure()))
    # What a forked child computes is out of this process's sight: the formulas are checked here
    # (test_formulas_checked_beside_are_what_this_process_finds_and_are_kept covers the child).
    monkeypatch.setattr(validate_module, "can_fork", lambda: False)
    return done


def run(capsys, root: Path, *argv: str) -> tuple[int, list[str]]:
    """(exit code, the lines printed with the summary's time left out)."""
    code = main(["validate", "--opset-dir", str(root), *argv])
    captured = capsys.readouterr()
    return code, [SUMMARY_TIME.sub(")", line) for line in (captured.out + captured.err).splitlines()]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def fresh(work: dict[str, list]) -> dict[str, list]:
    """What was computed since the last call, and forget it."""
    found = {name: list(done) for name, done in work.items()}
    for done in work.values():
        done.clear()
    return found


def test_an_edit_re_reads_only_its_file_and_prints_what_a_full_run_prints(opset_copy, capsys, work):
    run(capsys, opset_copy, "--no-torch")
    assert len(fresh(work)["parsed"]) > 15  # every data file, once
    edits = [
        ("errata.yaml", "      - row: pointwise-unary.yaml#sign-nan", "      - row: pointwise-unary.yaml#sign-nan-edited"),
        ("descriptions.yaml", "Absolute value of each element;", "The absolute value of each element;"),
        ("special_cases/pointwise-unary.yaml", "ops:\n", "ops:\n  # lines below move down\n"),
        ("2026.12/core_ops.yaml", "Absolute value is a single instruction", "The absolute value is a single instruction"),
    ]
    for name, old, new in edits:
        edit(opset_copy / name, old, new)
        incremental = run(capsys, opset_copy, "--no-torch")
        assert fresh(work)["parsed"] == [Path(name).name], name
        assert incremental == run(capsys, opset_copy, "--no-torch", "--no-cache"), name
        fresh(work)


def test_going_back_to_an_earlier_edit_re_runs_nothing(opset_copy, capsys, work):
    errata = opset_copy / "errata.yaml"
    claim = "      - row: pointwise-unary.yaml#sign-nan"
    edit(errata, claim, "      - row: pointwise-unary.yaml#first-edit")
    first = run(capsys, opset_copy, "--no-torch")
    edit(errata, "      - row: pointwise-unary.yaml#first-edit", "      - row: pointwise-unary.yaml#second-edit")
    run(capsys, opset_copy, "--no-torch")
    fresh(work)
    edit(errata, "      - row: pointwise-unary.yaml#second-edit", "      - row: pointwise-unary.yaml#first-edit")
    assert run(capsys, opset_copy, "--no-torch") == first
    assert fresh(work)["parsed"] == []


@pytest.mark.sweep  # two whole validates with torch (an empty cache, then --no-cache) around the edits, each a run
# checked against a full one: `make sweep`. make test: the same without torch (above), and with torch the reused
# opset against a full run (test_validate_cache.py) and the formulas beside the rows (below)
def test_with_torch_an_edit_re_runs_only_what_it_changed(opset_copy, capsys, work):
    """One op's rows after its row changed (lines moved too), one formula after its text changed, nothing of torch's
    after a prose edit: each time the lines a full run prints."""
    reopen_newest(opset_copy)
    run(capsys, opset_copy)
    first = fresh(work)
    assert first["torch"] == [1] and len(first["formulas"]) > 100 and len(first["rows"][0]) > 250

    rows = opset_copy / "special_cases" / "pointwise-unary.yaml"
    edit(rows, ABS_ROW, "      expect: ['-0.0', '+0.0']")
    edit(rows, "ops:\n", "ops:\n  # lines below move down\n")
    code, lines = run(capsys, opset_copy)
    assert fresh(work) == {"parsed": ["pointwise-unary.yaml"], "rows": [["aten::abs"]], "formulas": [], "torch": []}
    assert code == 1 and any(f"{rows}:13:7: aten::abs row" in line for line in lines)

    descriptions = opset_copy / "descriptions.yaml"
    edit(descriptions, "formula_check: 'torch.where(self > 0, 1.0, torch.where(self < 0, -1.0, 0.0))'",
         "formula_check: 'torch.where(self >= 0, 1.0, -1.0)'")
    code, lines = run(capsys, opset_copy)
    assert fresh(work) == {"parsed": ["descriptions.yaml"], "rows": [],
                           "formulas": [("aten::sign", "drawn"), ("aten::sign", "rows")], "torch": []}
    assert any("aten::sign: formula_check disagrees with the kernel" in line for line in lines)
    assert any(f"{rows}:13:7: aten::abs row" in line for line in lines)  # the kept row verdict, placed again
    assert (code, lines) == run(capsys, opset_copy, "--no-cache")  # both edits: what a full run prints
    fresh(work)

    edit(descriptions, "Absolute value of each element;", "The absolute value of each element;")
    assert run(capsys, opset_copy) == (code, lines)
    assert fresh(work) == {"parsed": ["descriptions.yaml"], "rows": [], "formulas": [], "torch": []}

    edit(descriptions, "The absolute value of each element;", "Absolute value of each element;")
    assert "imported: []" in imported_by_a_run(opset_copy, result_cache.SOURCE)
    edit(rows, "says: The absolute value of -0.0 is +0.0.", "says: The absolute value of -0.0 is +0.0 (a claim edited).")
    assert "imported: ['torch']" in imported_by_a_run(opset_copy, result_cache.SOURCE)  # rows run without hypothesis


def imported_by_a_run(root: Path, source: Path) -> str:
    """Which of torch and hypothesis a validate run in a fresh process imports (opspec's source as the keys see it
    held at ``source``)."""
    script = ("import sys; from pathlib import Path; from opspec.checks import result_cache; "
              "result_cache.SOURCE = Path(sys.argv[2]); from opspec.cli import main; main(['validate', '--opset-dir', sys.argv[1]]); "
              "print('imported:', sorted({'torch', 'hypothesis'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", script, str(root), str(source)], capture_output=True, text=True)
    return done.stdout + done.stderr


def test_damaged_parts_are_computed_again(opset_copy, capsys):
    run(capsys, opset_copy, "--no-torch")
    [slot] = (result_cache.folder() / "validate-parts").glob("*.pickle")
    stored = pickle.loads(slot.read_bytes())
    expected = run(capsys, opset_copy, "--no-torch", "--no-cache")
    missing_class = pickle.dumps(part_cache.PartStore()).replace(b"PartStore", b"NoSuchOne")
    for damaged in (b"garbage", pickle.dumps({**stored, "parts": {1: 2}}),
                    pickle.dumps({**stored, "parts": {key: (g, b"not a pickle") for key, (g, _) in stored["parts"].items()}}),
                    pickle.dumps({**stored, "parts": {key: (g, missing_class) for key, (g, _) in stored["parts"].items()}})):
        slot.write_bytes(damaged)
        for kept in (result_cache.folder() / "validate").glob("*.json"):
            kept.unlink()  # the whole report kept would answer first
        assert run(capsys, opset_copy, "--no-torch") == expected


def test_a_file_that_changes_while_it_is_read_is_not_kept(tmp_path):
    path = tmp_path / "data.yaml"
    path.write_text("a: 1\n")
    store = part_cache.PartStore()

    def read_and_edit():
        path.write_text("a: 2\n")
        return "as read"

    with file_memo.kept_in(store):
        assert file_memo.recall(path, "reading", read_and_edit) == "as read"
        assert file_memo.recall(path, "reading", lambda: "read again") == "read again"
        assert file_memo.recall(path, "reading", lambda: "not read") == "read again"
    assert file_memo.recall(path, "reading", lambda: "no store: read") == "no store: read"


def test_a_copy_elsewhere_reuses_the_parts_and_names_its_own_files(opset_copy, tmp_path, capsys, work):
    """Parts are kept by what they read, not where it lies: a copy of the opset in another folder (a worktree, a
    release being staged) parses nothing, runs no row and no formula again, and its findings name the copy."""
    run(capsys, opset_copy, "--no-torch")
    other = tmp_path / "elsewhere" / "opset"
    other.parent.mkdir()
    opset_copy.rename(other)
    fresh(work)
    edit(other / "descriptions.yaml", "Absolute value of each element;", "Absolute value of each element;;")
    code, lines = run(capsys, other, "--no-torch")
    assert fresh(work)["parsed"] == ["descriptions.yaml"]
    assert code == 0 and f"in {other} (versions: " in lines[-1]
    assert str(opset_copy) not in "\n".join(lines)
    # a finding in the copy names the copy's file, at its line
    edit(other / "errata.yaml", "      - row: pointwise-unary.yaml#sign-nan", "      - row: pointwise-unary.yaml#sign-nan-x")
    code, lines = run(capsys, other, "--no-torch")
    assert code == 1 and any(line.startswith(f"{other / 'errata.yaml'}:") for line in lines), lines
    assert fresh(work)["parsed"] == ["errata.yaml"]


def test_a_reading_kept_at_one_path_is_placed_at_the_path_read_now(tmp_path):
    from opspec.spec.errors import Finding
    from opspec.spec.yamlio import Mark

    first, second = tmp_path / "a" / "data.yaml", tmp_path / "b" / "data.yaml"
    for path in (first, second):
        path.parent.mkdir()
        path.write_text("a: 1\n")
    store = part_cache.PartStore()

    def reading(path: Path):
        return (path, str(path), Finding(Mark(str(path), 1, 2), "as read"), Mark("other.yaml", 3, 4))

    with file_memo.kept_in(store):
        assert file_memo.recall(first, "reading", lambda: reading(first)) == reading(first)
        assert file_memo.recall(second, "reading", lambda: "read again") == reading(second)
        # a reading that names its path inside a message is kept at that path only
        message = lambda path: Finding(Mark(str(path), 1, 1), f"see {path}")  # noqa: E731
        (first.parent / "c.yaml").write_text("c: 1\n")
        (second.parent / "c.yaml").write_text("c: 1\n")
        assert file_memo.recall(first.parent / "c.yaml", "named", lambda: message(first.parent / "c.yaml")) \
            == message(first.parent / "c.yaml")
        assert file_memo.recall(second.parent / "c.yaml", "named", lambda: "read again") == "read again"


def test_a_reading_is_read_back_as_kept_where_it_was_read_and_placed_again_elsewhere(tmp_path):
    """Read again at its own path, a reading is unpickled as kept (no token to put back); a copy elsewhere still
    gets it re-placed, and a damaged copy as read falls back to the re-placing one, then to a fresh read."""
    from opspec.spec.yamlio import Mark

    first, second = tmp_path / "a" / "data.yaml", tmp_path / "b" / "data.yaml"
    for path in (first, second):
        path.parent.mkdir()
        path.write_text("a: 1\n")
    store = part_cache.PartStore()
    reading = lambda path: (str(path), Mark(str(path), 1, 2))  # noqa: E731

    class Counting(file_memo._Placing):
        loads = 0

        def load(self):
            Counting.loads += 1
            return super().load()

    with file_memo.kept_in(store), mock.patch.object(file_memo, "_Placing", Counting):
        file_memo.recall(first, "reading", lambda: reading(first))
        assert file_memo.recall(first, "reading", lambda: "read again") == reading(first)
        assert Counting.loads == 0  # as kept, path and all
        assert file_memo.recall(second, "reading", lambda: "read again") == reading(second)
        assert Counting.loads == 1  # placed at the copy's path
        assert file_memo.recall(second, "reading", lambda: "read again") == reading(second)
        assert Counting.loads == 1  # and kept there as read from then on
        digest = hashlib.sha256(first.read_bytes()).hexdigest()
        store.put(f"reading\0{first}\0{digest}\0as read", b"not a pickle")
        assert file_memo.recall(first, "reading", lambda: "read again") == reading(first)
        assert Counting.loads == 2


def test_formulas_checked_beside_are_what_this_process_finds_and_are_kept():
    """Formulas checked in a forked child while the rows run: the same findings as checked here, and the verdicts
    it computed are kept in this process's store."""
    from opspec.spec.formulas import syntax_findings

    root = resources.opset_root()
    chosen, _ = syntax_findings(root)
    chosen = [f for f in chosen if f.op in ("aten::abs", "aten::sign")]
    wrong = dataclasses.replace(chosen[0], expression="self + 1")  # a finding to carry back
    written = ([*chosen, wrong], [])
    opsets, rows = [load.load_opset()], spec_cases.read(root=root)
    store = part_cache.PartStore()
    started = validate_module._formulas_beside(written, opsets, rows, store)
    assert isinstance(started.child, beside.Beside)
    found = validate_module._formula_findings(written, opsets, rows, store, started)
    assert [f.message.startswith(f"{wrong.op}: formula_check disagrees") for f in found] == [True]
    assert found == kept_formulas.findings(written, opsets[0], rows[0], part_cache.PartStore(keeping=False))
    assert not kept_formulas.pending(written, opsets[0], store)  # taken into this store
    assert validate_module._formulas_beside(written, opsets, rows, store) is None  # nothing left to compute


def test_a_formula_the_child_claimed_and_never_answered_is_checked_here():
    """The child takes the first formula and dies: this process takes the rest as they come, then checks the one
    the child left unanswered, and finds what a run without a child finds."""
    from opspec.spec.formulas import syntax_findings

    root = resources.opset_root()
    chosen, _ = syntax_findings(root)
    chosen = [f for f in chosen if f.op in ("aten::abs", "aten::sign")]
    wrong = dataclasses.replace(chosen[0], expression="self + 1")  # the one the child claims: its finding must stay
    written = ([wrong, *chosen], [])
    opsets, rows = [load.load_opset()], spec_cases.read(root=root)
    claims = beside.Claims()
    assert claims.take() == 0  # as the child would have, before it died
    dying = beside.Beside(lambda: os._exit(3))
    found = validate_module._formula_findings(written, opsets, rows, part_cache.PartStore(),
                                              validate_module._FormulasBeside(dying, claims))
    assert found == kept_formulas.findings(written, opsets[0], rows[0], part_cache.PartStore(keeping=False))
    assert [f.message.startswith(f"{wrong.op}: formula_check disagrees") for f in found] == [True]


def test_work_beside_answers_its_value_and_a_child_that_fails_is_said():
    assert beside.Beside(lambda: {"value": [1, 2]}).result() == {"value": [1, 2]}
    with pytest.raises(beside.BesideFailed, match="ZeroDivisionError"):
        beside.Beside(lambda: 1 / 0).result()
    with pytest.raises(beside.BesideFailed, match="no answer"):
        beside.Beside(lambda: os._exit(3)).result()


@pytest.fixture
def reading_beside(monkeypatch) -> None:
    """validate as from a process without torch, so the data is read in a child beside torch's import; no row or
    formula is run (what these tests look at is the reading; the kernels' checks cost seconds a run)."""
    monkeypatch.setattr(cli_validate, "_torch_imported", lambda: False)
    monkeypatch.setattr(special_cases, "validate_findings", lambda *args, **kwargs: ([], []))
    monkeypatch.setattr(validate_module, "_formulas_beside", lambda *args: None)
    monkeypatch.setattr(validate_module, "_formula_findings", lambda *args: [])


def test_a_first_run_reads_the_data_in_a_child_while_torch_is_asked(opset_copy, capsys, work, reading_beside):
    """With nothing kept, a child forked before torch is imported reads and schema-checks every file; this process
    takes its readings and parses none itself, and prints what a run without the cache prints."""
    expected = run(capsys, opset_copy, "--no-cache")
    fresh(work)
    assert run(capsys, opset_copy) == expected
    done = fresh(work)
    assert done["parsed"] == [] and done["torch"] == [1]  # the child's parses are out of sight; torch asked here


def test_a_reading_child_that_dies_leaves_the_reading_here(opset_copy, capsys, work, reading_beside, monkeypatch):
    monkeypatch.setattr(cli_validate, "_checked", dying_in_a_child(cli_validate._checked))
    expected = run(capsys, opset_copy, "--no-cache")
    fresh(work)
    assert run(capsys, opset_copy) == expected
    assert "versions.yaml" in fresh(work)["parsed"]  # read here after all


def dying_in_a_child(checked):
    """``checked`` as it is, except in a forked child, which it ends at once."""
    parent = os.getpid()

    def wrapper(*args, **kwargs):
        if os.getpid() != parent:
            os._exit(3)
        return checked(*args, **kwargs)

    return wrapper


def test_work_beside_runs_parallel_kernels_after_this_process_ran_them():
    """A child forked after this process ran a kernel on OpenMP threads has none of them: a parallel kernel in the
    child waited for them forever (drift's rules in a pytest worker), unless the child runs kernels on one thread."""
    program = (
        "import torch\n"
        "from opspec.checks.beside import Beside\n"
        "torch.set_num_threads(2)\n"
        "pad = lambda: float(torch.nn.functional.pad(torch.ones(1, 8, 256, 256), (2, 2, 2, 2), mode='reflect').sum())\n"
        "pad()\n"
        "print(Beside(pad).result() == pad())\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "True"), done.stderr[-2000:]
