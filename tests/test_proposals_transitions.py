"""Status moves: every forbidden move is caught against a git base, and set-status edits one line."""
from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from opspec_fixtures import git, init_repo, process_proposal, write_workspace

from opspec.cli import main
from opspec.proposals import check as checking
from opspec.proposals.model import STATUSES
from opspec.proposals.transitions import ALLOWED, RELEASE_ONLY

# Fields that make every status valid on its own, so only the move itself can be wrong.
FULL = {
    "accepted": "resolution: Accepted at the review.\ntarget_version: '2026.12'\n",
    "implemented": "resolution: Accepted at the review.\ntarget_version: '2026.11'\nreleased_in: '2026.11'\n",
    "superseded": "resolution: Accepted at the review.\ntarget_version: '2026.11'\nreleased_in: '2026.11'\nsuperseded_by: 1\n",
    "rejected": "resolution: Rejected at the review.\n",
    "withdrawn": "resolution: Withdrawn by the authors.\n",
    "deferred": "resolution: Deferred to a later review.\n",
}
PAIRS = [(a, b) for a, b in itertools.permutations(STATUSES, 2)]
FORBIDDEN = [(a, b) for a, b in PAIRS if b not in ALLOWED[a] or (a, b) in RELEASE_ONLY]
ALLOWED_PAIRS = [(a, b) for a, b in PAIRS if (a, b) not in FORBIDDEN]


def text(number: int, status: str) -> str:
    return process_proposal(number, status, FULL.get(status, ""))


@pytest.fixture(scope="module")
def moved(tmp_path_factory) -> tuple[Path, dict[tuple[str, str], list[str]]]:
    """One repository holding a proposal for every ordered pair of statuses, moved after the base commit."""
    root = write_workspace(tmp_path_factory.mktemp("moves") / "repo")
    # 0001 is the successor named by superseded_by; it must list the moved ones in `replaces`.
    numbers = {pair: 10 + i for i, pair in enumerate(PAIRS)}
    (root / "proposals" / "0001-initial-op-set.md").write_text(text(1, "implemented").replace(
        "changes: []", f"replaces: {sorted(numbers.values())}\nchanges: []"))
    for pair, number in numbers.items():
        (root / "proposals" / f"{number:04d}-move.md").write_text(text(number, pair[0]))
    init_repo(root)
    for pair, number in numbers.items():
        (root / "proposals" / f"{number:04d}-move.md").write_text(text(number, pair[1]))
    result = checking.check(root / "proposals", root / "opset", base="main", use_torch=False)
    by_file: dict[tuple[str, str], list[str]] = {}
    for pair, number in numbers.items():
        by_file[pair] = [str(f) for f in result.findings if f.mark.path.endswith(f"{number:04d}-move.md")]
    return root, by_file


@pytest.mark.parametrize("old,new", FORBIDDEN, ids=[f"{a}->{b}" for a, b in FORBIDDEN])
def test_forbidden_moves_are_findings(moved, old, new):
    _, by_file = moved
    lines = by_file[(old, new)]
    assert len(lines) == 1, lines
    assert ":7:1: " in lines[0] and f"(was {old} at main)" in lines[0]


@pytest.mark.parametrize("old,new", ALLOWED_PAIRS, ids=[f"{a}->{b}" for a, b in ALLOWED_PAIRS])
def test_allowed_moves_pass(moved, old, new):
    assert moved[1][(old, new)] == []


def test_cli_reports_moves_and_bad_base(moved, capsys):
    root, _ = moved
    assert main(["proposal", "--root", str(root), "check", "--no-torch", "--base", "main"]) == 1
    out, _ = capsys.readouterr()
    assert "status cannot move from draft to accepted" in out
    assert main(["proposal", "--root", str(root), "check", "--base", "no-such-ref"]) == 2
    assert "not a commit" in capsys.readouterr().err


def test_deleted_proposal_and_new_proposal(tmp_path):
    root = write_workspace(tmp_path / "repo")
    (root / "proposals" / "0002-gone.md").write_text(text(2, "draft"))
    init_repo(root)
    (root / "proposals" / "0002-gone.md").unlink()
    (root / "proposals" / "0003-new.md").write_text(text(3, "draft"))
    result = checking.check(root / "proposals", root / "opset", base="main", use_torch=False)
    assert [f.message for f in result.findings] == [
        "proposal deleted since main; proposals stay on record (withdraw it instead)"
    ]


@pytest.mark.parametrize("status", ["review", "accepted", "rejected"])
def test_a_new_proposal_is_born_draft(tmp_path, capsys, status):
    """A file that first appears as anything but a draft skipped its review: one line naming the file."""
    root = write_workspace(tmp_path / "repo")
    init_repo(root)
    (root / "proposals" / "0002-born.md").write_text(text(2, status))
    assert main(["proposal", "--root", str(root), "check", "--no-torch", "--base", "main"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [f"{root / 'proposals' / '0002-born.md'}:7:1: a new proposal starts as draft, not {status} (not in main)"]


@pytest.fixture
def repo(tmp_path) -> Path:
    """A workspace under git whose proposal 0002 is committed in review."""
    root = write_workspace(tmp_path / "repo")
    (root / "proposals" / "0002-second.md").write_text(text(2, "review"))
    init_repo(root)
    return root


def set_status(root: Path, *args: str) -> int:
    return main(["proposal", "--root", str(root), "set-status", *args])


def test_set_status_edits_only_its_lines(repo, capsys):
    path = repo / "proposals" / "0002-second.md"
    before = path.read_text()
    assert set_status(repo, "2", "accepted", "--resolution", "Accepted at the review on 2026-11-20.",
                      "--target-version", "2026.12", "--date", "2026-11-21", "--reviewer", "Ada Lovelace",
                      "--reason", "The measurements show the change is safe.") == 0
    after = path.read_text()
    removed = set(before.splitlines()) - set(after.splitlines())
    added = set(after.splitlines()) - set(before.splitlines())
    assert removed == {"status: review", "updated: '2026-11-03'"}
    assert added == {"status: accepted", "updated: '2026-11-21'", "resolution: Accepted at the review on 2026-11-20.",
                     "target_version: '2026.12'", "decision:", "  date: '2026-11-21'", "  reviewers:", "    - Ada Lovelace",
                     "  reasons:", "    - The measurements show the change is safe."}
    assert before.split("---\n", 2)[2] == after.split("---\n", 2)[2]  # body byte-identical
    assert checking.check(repo / "proposals", repo / "opset", use_torch=False).findings == []


@pytest.mark.parametrize("status,args,fragment", [
    ("draft", (), "cannot move from review to draft"),  # allowed, see below
    ("implemented", (), "set only by `opspec release`"),
    ("superseded", (), "cannot move from review to superseded"),
    ("accepted", (), "needs `resolution`"),
    ("accepted", ("--resolution", "Accepted at the review.", "--target-version", "2026.12"), "needs a `decision` record"),
    ("rejected", ("--resolution", "Rejected at the review."), "needs a `decision` record"),
])
def test_set_status_refuses_and_writes_nothing(repo, capsys, status, args, fragment):
    path = repo / "proposals" / "0002-second.md"
    before = path.read_bytes()
    code = set_status(repo, "2", status, *args)
    err = capsys.readouterr().err
    if status == "draft":
        assert code == 0
        return
    assert code == 1 and fragment in err and "Traceback" not in err
    assert err.splitlines()[0].split(":")[1:3] == ["7", "1"]
    assert path.read_bytes() == before


def test_set_status_usage_errors(repo, capsys):
    assert set_status(repo, "9", "review") == 2
    assert "no proposal 0009" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        set_status(repo, "2", "pending")
    assert exit_info.value.code == 2
    (repo / "proposals" / "0002-second.md").write_text("---\nid: [\n---\n")
    assert set_status(repo, "2", "draft") == 2
    assert "invalid YAML" in capsys.readouterr().err


def test_set_status_refuses_an_untracked_proposal(repo, capsys):
    path = repo / "proposals" / "0003-new.md"
    path.write_text(text(3, "draft"))
    assert set_status(repo, "3", "review") == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{path}: not committed; commit it as a draft before moving its status (`opspec proposal check --base` refuses "
        "a proposal whose first commit is not a draft)"]
    assert path.read_text() == text(3, "draft")


def test_set_status_refuses_outside_a_repository(tmp_path, capsys):
    root = write_workspace(tmp_path / "repo")
    path = root / "proposals" / "0002-second.md"
    path.write_text(text(2, "draft"))
    assert set_status(root, "2", "review") == 1
    assert capsys.readouterr().err.startswith(f"{path}: not committed;")
    assert path.read_text() == text(2, "draft")


def test_set_status_refuses_uncommitted_changes(repo, capsys):
    path = repo / "proposals" / "0002-second.md"
    path.write_text(path.read_text().replace("Why it is needed.", "Why it is needed, now."))
    before = path.read_text()
    assert set_status(repo, "2", "draft") == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{path}: has uncommitted changes; commit them before moving its status (`opspec proposal check --base` "
        "judges each move against the committed file, one move per commit)"]
    assert path.read_text() == before
    git(repo, "commit", "-qam", "edit")
    assert set_status(repo, "2", "draft", "--date", "2026-11-04") == 0


def test_new_scaffold_is_refused_until_its_placeholders_are_written(repo, capsys):
    assert main(["proposal", "--root", str(repo), "new", "--type", "add-op", "--title", "Add bucketize to the core set",
                 "--op", "aten::bucketize.Tensor", "--author", "Ada Lovelace"]) == 0
    path = repo / "proposals" / Path(capsys.readouterr().out.strip()).name
    assert path.name == "0003-add-bucketize-to-the-core-set.md"
    text = path.read_text()
    assert "schema: aten::bucketize.Tensor(Tensor self, Tensor boundaries" in text  # filled in from torch
    assert main(["proposal", "--root", str(repo), "check", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    todo = [(n, line.index("TODO") + 1) for n, line in enumerate(text.splitlines(), 1) if "TODO" in line]
    assert [line.split(": ", 1)[0] for line in lines if "placeholder `TODO`" in line] == [
        f"{path}:{n}:{col}" for n, col in todo]
    assert "    category: misc  # TODO choose one of pointwise-unary, pointwise-binary, reduction" in text
    assert f"{path}:{todo[-1][0]}:16: placeholder `TODO`: write the real text before the proposal is checked in" in lines
    assert any(line.startswith(f"{path}:") and "'## Summary' still holds the template's text" in line for line in lines)
    assert all(line.startswith(f"{path}:") for line in lines)
    # written out, the same file passes
    written = text.replace("TODO say why backends should implement this op directly.",
                           "A sorted lookup that no core op expresses.")
    written = re.sub(r"category: misc  # TODO.*", "category: indexing", written)
    for section, answer in (("One paragraph: what changes in the op set, for whom.", "Bucketize becomes core."),):
        written = written.replace(section, answer)
    for heading in ("Motivation", "Specification", "Compatibility", "Alternatives"):
        head, _, rest = written.partition(f"## {heading}\n\n")
        written = head + f"## {heading}\n\nWritten by the author.\n\n" + rest.split("\n\n", 1)[1]
    path.write_text(written)
    assert checking.check(repo / "proposals", repo / "opset", files=[path]).findings == []
    assert main(["proposal", "--root", str(repo), "new", "--type", "add-op", "--title", "x"]) == 2
    assert main(["proposal", "--root", str(repo), "new", "--type", "add-op", "--title", "Something long", "--op", "bad op"]) == 2
