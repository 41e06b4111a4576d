"""The governance loop end to end, in a scratch copy of the repository.

For each kind of proposal (add-op, deprecate-op, decompose-op, schema-change, testing-change) it walks
what a contributor and the maintainers do: `proposal new`, write it, commit it as a
draft, move it to review, `proposal measure`, accept it with a decision, commit, and
`release`. After every release the repository's own checks pass: `validate` (with
torch), `drift` (the change is an opset decision, not drift), `proposal check` against
the commit before the release, and `diff` names the proposal; the site builds at the end.
The schema change needs a torch that prints a new schema: the bridge is patched to one.
"""
from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import pytest
from opspec_fixtures import ROOT, git, init_repo

from opspec.bridge import torch_ops
from opspec.checks import drift
from opspec.cli import main
from opspec.proposals import edit
from opspec.spec import load, model, resources

NEW_ABS = "aten::abs(Tensor self, *, bool exact=False) -> Tensor"
# kind -> (op, title, the changes as written by the author, what `diff` calls the change)
KINDS = {
    "add-op": ("aten::nextafter", "Add nextafter to the core set", [{
        "action": "add-op", "op": "aten::nextafter", "schema": "aten::nextafter(Tensor self, Tensor other) -> Tensor",
        "category": "pointwise-binary", "rationale": "The next representable float has no exact decomposition into core ops.",
        "testing": {"dtypes": ["float32", "float64"]},
    }], "Added ops"),
    "deprecate-op": ("aten::mul.Scalar", "Deprecate mul.Scalar", [{
        "action": "deprecate-op", "op": "aten::mul.Scalar", "replacement": "aten::mul.Tensor",
        "rationale": "A scalar operand is a 0-dim tensor to mul.Tensor; one overload is enough.",
        "upgrader": {"op": "aten::mul.Tensor", "arguments": {"self": "self", "other": "other"}},
    }], "Deprecated ops"),
    "decompose-op": ("aten::deg2rad", "Decompose deg2rad in the default table", [{
        "action": "add-rule", "rule": {
            "op": "aten::deg2rad", "kind": "default", "targets": ["aten::_to_copy", "aten::mul.Tensor"],
            "formula": "x * (pi / 180)", "rationale": "One multiplication by a constant, exact to rounding.",
            "implementation": "torch", "origin": "opspec",
        },
    }], "Decomposition rules added"),
    "schema-change": ("aten::abs", "Follow torch's new schema of abs", [{
        "action": "change-schema", "op": "aten::abs", "schema": NEW_ABS,
        "rationale": "torch added a keyword-only flag with a default; existing calls keep their meaning.",
        "upgrader": {"op": "aten::abs", "arguments": {"self": "self", "exact": {"value": False}}},
    }], "Schema changes"),
    "testing-change": ("aten::randperm", "Keep randperm's n within what int8 holds", [{
        "action": "change-testing", "op": "aten::randperm",
        "testing": {"dtypes": ["float32", "int64", "int8"], "domain": {"n": "[0, 128]"}, "choices": {"n": [0, 1, 5, 128]},
                    "notes": "torch refuses an int8 randperm of more than 128 elements."},
        "rationale": "The old domain drew n up to 1000, which int8 cannot hold; torch refuses those calls.",
    }], "Testing hints changed"),
}


def next_version(version: str) -> str:
    year, month = map(int, version.split("."))
    return f"{year + month // 12}.{month % 12 + 1:02d}"


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    """A scratch copy of the repository's data under git; commands that read the bundled opset (drift) read it."""
    root = tmp_path / "repo"
    for part in ("opset", "proposals", "site", "conformance/backends", "conformance/results"):
        shutil.copytree(ROOT / part, root / part, ignore=shutil.ignore_patterns("build", "generated"))
    init_repo(root)
    monkeypatch.setattr(resources, "opset_root", lambda: root / "opset")
    return root


def newer_torch(monkeypatch, cache: Path) -> None:
    """A torch whose abs gained a keyword-only flag; validate keeps what it learns of a torch by its version, which
    the patch leaves as it was, so the patched torch gets a cache of its own (as another install would)."""
    monkeypatch.setenv("OPSPEC_CACHE_DIR", str(cache))
    schemas = dict(torch_ops.all_aten_schemas(), **{"aten::abs": NEW_ABS})
    tagged = dict(torch_ops.core_tagged(), **{"aten::abs": NEW_ABS})
    monkeypatch.setattr(torch_ops, "all_aten_schemas", lambda: schemas)
    monkeypatch.setattr(torch_ops, "core_tagged", lambda: tagged)


def commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def write_out(path: Path, changes: list[dict]) -> None:
    """What the author writes: the changes, and every section in place of the template's text."""
    text = edit.set_fields(path.read_text(), str(path), {"changes": changes})
    front, body = text.split("\n---\n", 1)
    body = re.sub(r"(## [^\n]+\n\n)(?:(?!## ).*\n?)*", lambda m: m.group(1) + "Written by the author, with measurements.\n\n", body)
    path.write_text(front + "\n---\n" + body)


def describe(root: Path, op: str, entry: str) -> None:
    """What the author of an add-op writes besides the proposal: the op's entry in descriptions.yaml, in name order."""
    path = root / "opset" / "descriptions.yaml"
    lines = path.read_text().splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if line.startswith("  aten::") and line.strip().rstrip(":") > op)
    lines[at:at] = [textwrap.indent(textwrap.dedent(entry).lstrip("\n"), "  ")]
    path.write_text("".join(lines))


NEXTAFTER = """
aten::nextafter:
  description: The next representable value after self in the direction of other, element by element.
  example: |
    torch.ops.aten.nextafter.default(torch.tensor([1.0]), torch.tensor([2.0]))
"""


def _sorted_place(text: str, op: str) -> int:
    """Where ``op``'s entry goes among a data file's op entries (two spaces in), which are sorted by name."""
    at = 0
    for line in text.splitlines(keepends=True):
        if line.startswith("  aten::") and line.strip().rstrip(":") > op:
            return at
        at += len(line)
    return at


def specify_nextafter(root: Path) -> None:
    """nextafter's special-case row and its accuracy, written with the release that makes it core (validate
    refuses rows for an op no version holds): its result is a value of the dtype, so the error model is exactness."""
    rows = root / "opset" / "special_cases" / "pointwise-binary.yaml"
    text = rows.read_text()
    at = _sorted_place(text, "aten::nextafter")
    rows.write_text(text[:at] + textwrap.indent(textwrap.dedent("""\
          aten::nextafter:
            - id: nextafter-nan
              says: NaN in either input gives NaN.
              class: nan
              inputs: {self: [nan, 1.0], other: [1.0, nan]}
              dtypes: [float32, float64]
              expect: [nan, nan]
        """), "  ") + text[at:])
    accuracy = root / "opset" / "accuracy.yaml"
    text = accuracy.read_text()
    at = _sorted_place(text, "aten::nextafter")
    accuracy.write_text(text[:at] + textwrap.indent(textwrap.dedent("""\
          aten::nextafter:
            error_model:
              dtypes: [float64, float32]
              bound: '|out - exact| = 0, exact = the next value of the dtype after self towards other'
              symbols:
                exact: the value of the dtype next to self in the direction of other (other itself where they are equal)
              reason: 'The result is a value of the dtype by definition, so it is exact.'
        """), "  ") + text[at:])


# every date the loop writes is fixed, so its files do not depend on the day the test runs: a proposal drafted and
# decided before the release that takes it
def _newest_proposal_date() -> str:
    """The latest date the repository's proposals carry: a loop dated before it would retarget an open proposal
    to a day before the proposal was written."""
    found = re.findall(r"^(?:created|updated): '?(\d{4}-\d{2}-\d{2})", "\n".join(
        path.read_text() for path in (ROOT / "proposals").glob("[0-9]*.md")), flags=re.M)
    return max(found, default="2026-12-01")


DRAFTED = RELEASED = _newest_proposal_date()


def cli(root: Path, *args: str) -> int:
    return main([args[0], "--root", str(root), *args[1:]])


def start_version(root: Path) -> str:
    """The version after the newest one."""
    return next_version(load.load_versions(root / "opset")[-1].version)


@pytest.mark.sweep  # five proposals to five releases and a site, minutes: `make sweep` (CI)
def test_the_loop_for_each_kind_keeps_the_repository_green(repo, capsys, monkeypatch):
    for info in load.load_versions(repo / "opset"):  # a draft version is sealed first, as it stands
        if info.status == "draft":
            assert cli(repo, "release", info.version, "--date", "2026-11-23", "--retarget", next_version(info.version)) == 0
    commit(repo, "seal")
    for kind in KINDS:
        if kind == "schema-change":
            newer_torch(monkeypatch, repo.parent / "newer-torch-cache")
        walk(repo, kind, capsys)
    out = repo / "site-out"
    assert cli(repo, "site", "build", "--out", str(out)) == 0, capsys.readouterr()
    newest = load.load_versions(repo / "opset")[-1].version
    assert newest in (out / "generated" / "changelog" / "index.html").read_text()


def walk(root: Path, kind: str, capsys) -> None:
    op, title, changes, section = KINDS[kind]
    version = start_version(root)
    previous = load.load_versions(root / "opset")[-1].version

    assert cli(root, "proposal", "new", "--type", kind, "--title", title, "--op", op, "--author", "Ada Lovelace",
               "--date", DRAFTED) == 0
    path = root / "proposals" / Path(capsys.readouterr().out.strip()).name
    number = int(path.name[:4])
    assert cli(root, "proposal", "check", str(path)) == 1  # the scaffold is refused until it is written
    write_out(path, changes)
    if kind == "add-op":  # a new core op is described before it is accepted
        describe(root, op, NEXTAFTER)
    assert cli(root, "proposal", "check", str(path)) == 0, capsys.readouterr().out
    born = commit(root, f"{kind}: draft")
    assert cli(root, "proposal", "check", "--base", born + "~1") == 0

    assert cli(root, "proposal", "set-status", str(number), "review", "--target-version", version,
               "--date", DRAFTED) == 0
    assert cli(root, "proposal", "measure", str(number), "--max-examples", "10", "--date", DRAFTED) == 0, \
        capsys.readouterr().err[-1500:]
    reviewed = commit(root, f"{kind}: in review, measured")
    assert cli(root, "proposal", "check", "--base", born) == 0, capsys.readouterr().out
    # accepting without the decision record is refused, and leaves the file as it was
    assert cli(root, "proposal", "set-status", str(number), "accepted", "--resolution", "Accepted at the monthly review.",
               "--date", DRAFTED) == 1
    assert "needs a `decision` record" in capsys.readouterr().err
    assert cli(root, "proposal", "set-status", str(number), "accepted", "--resolution", "Accepted at the monthly review.",
               "--reviewer", "Ada Lovelace", "--reviewer", "Charles Babbage",
               "--reason", "The measurements recorded in the proposal support the change.", "--date", DRAFTED) == 0
    accepted = commit(root, f"{kind}: accepted")
    assert cli(root, "proposal", "check", "--base", reviewed) == 0, capsys.readouterr().out

    # proposals of the repository still open for this version move on to the next one
    assert cli(root, "release", version, "--date", RELEASED, "--retarget", next_version(version)) == 0
    out = capsys.readouterr().out
    assert f"proposal {number:04d}" in out and f"released opset {version}" in out
    # the manifests describe an older version now, and the release says which to re-measure
    assert "conformance/backends/inductor.yaml describes opset " in out and f"--opset {version}" in out
    if kind == "add-op":  # its rows and accuracy come with the release that makes it core
        specify_nextafter(root)
    commit(root, f"release {version}")

    # the repository is green after the release
    assert main(["validate", "--opset-dir", str(root / "opset"), "--backends", str(root / "conformance" / "backends")]) == 0, \
        capsys.readouterr().out
    assert cli(root, "proposal", "check", "--base", accepted) == 0, capsys.readouterr().out
    opset = load.load_opset(version, root / "opset")
    touched = [r for r in opset.rules if r.op == op]
    report = drift.compute(type(opset)(opset.version, opset.info, opset.ops, tuple(touched)))
    assert not report.drifted, drift.render_text(report)
    if kind == "add-op":
        assert {"op": op, "decision": "core", "since": version, "proposals": [number]} in report.decisions
    if kind == "testing-change":  # the new version's op draws from the proposal's hints
        assert opset.ops_by_name[op].testing == model.TestingHints.from_dict(changes[0]["testing"])
        assert number in opset.ops_by_name[op].proposals
    assert cli(root, "diff", previous, version) == 0
    log = capsys.readouterr().out
    assert f"### {section}" in log and f"`{op}`" in log and f"proposal {number:04d}" in log
    assert load.load_versions(root / "opset")[-1].digest == load.version_digest(root / "opset", version)
