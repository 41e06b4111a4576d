"""A small, self-contained opspec workspace (opset, proposals, site) for tests that write."""
from __future__ import annotations

import re
import shutil
import subprocess
import textwrap
from pathlib import Path

from packaging.version import Version

from opspec.spec import load, resources, yamlio

ROOT = Path(__file__).resolve().parents[1]
# The torch the newest bundled opset version was validated against (versions.yaml says which).
TESTED_TORCH = load.load_versions()[-1].torch


def on_tested_torch() -> bool:
    """Whether the installed torch is that release (any patch level)."""
    import torch

    return Version(torch.__version__).release[:2] == Version(TESTED_TORCH).release[:2]

SCHEMAS = {
    "aten::abs": "aten::abs(Tensor self) -> Tensor",
    "aten::add.Tensor": "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::amax": "aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
    "aten::mean.dim": "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "aten::mul.Tensor": "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor",
    "aten::pow.Tensor_Scalar": "aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
    "aten::sum.dim_IntList": "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "aten::var.correction": "aten::var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
}
CATEGORY = {"aten::abs": "pointwise-unary", "aten::add.Tensor": "pointwise-binary", "aten::mul.Tensor": "pointwise-binary",
            "aten::pow.Tensor_Scalar": "pointwise-binary"}

PROCESS_BODY = """
# {title}

## Summary

A short summary of the proposal.

## Motivation

Why it is needed.

## Specification

What changes.

## Compatibility

Nothing breaks.

## Alternatives

None considered.

## Unresolved questions

None.
"""


def write_opset(opset: Path, released: bool = True) -> None:
    shutil.copytree(resources.schema_dir(), opset / "schema")
    shutil.copy(resources.opset_root() / "compatibility.yaml", opset / "compatibility.yaml")
    ops = [
        {"name": name, "schema": schema, "category": CATEGORY.get(name, "reduction"), "status": "active",
         "since": "2026.11", "proposals": [1], "rationale": f"{name} is a building block every backend has."}
        for name, schema in sorted(SCHEMAS.items())
    ]
    rules = [{
        "op": "aten::var_mean.correction", "kind": "default", "targets": ["aten::mean.dim", "aten::var.correction"],
        "formula": "(var(x), mean(x))", "rationale": "Two reductions over the same input, both core.",
        "implementation": "opspec.decompositions.reductions:var_mean_correction", "origin": "review",
        "since": "2026.11", "proposals": [1],
    }]
    (opset / "2026.11").mkdir(parents=True)
    (opset / "2026.11" / "core_ops.yaml").write_text(
        yamlio.dump({"opset": "2026.11", "ops": ops}, header="# yaml-language-server: $schema=../schema/core_ops.schema.json\n"))
    (opset / "2026.11" / "decompositions.yaml").write_text(yamlio.dump({"opset": "2026.11", "rules": rules}))
    entry = {"version": "2026.11", "status": "draft", "torch": TESTED_TORCH}
    if released:
        entry.update(status="released", released="2026-11-01", digest=load.version_digest(opset, "2026.11"))
    (opset / "versions.yaml").write_text(yamlio.dump({"versions": [entry]}, header="# The version index.\n"))


def proposal_text(front: str, title: str = "A proposal title", body: str | None = None) -> str:
    front = textwrap.dedent(front).strip("\n")
    return f"---\n{front}\n---\n" + (PROCESS_BODY.format(title=title) if body is None else body)


# The decision record a decided status (accepted, rejected, implemented, superseded) needs.
DECISION = """\
decision:
  date: '2026-11-03'
  reviewers: [Ada Lovelace, Charles Babbage]
  reasons:
    - The reviewers agreed after reading the measurements.
"""
DECIDED = ("accepted", "rejected", "implemented", "superseded")


def evidence(*entries: tuple[str, str]) -> str:
    """``evidence`` front matter: one passing entry per (check, op)."""
    lines = ["evidence:"]
    for check, op in entries:
        lines += [f"  - check: {check}", f"    op: {op}", "    result: pass", "    torch: 2.13.0", "    date: '2026-11-03'",
                  "    command: opspec proposal measure 2", "    detail: measured in the test fixture"]
    return "\n".join(lines) + "\n"


def process_proposal(number: int, status: str = "review", extra: str = "") -> str:
    extra = textwrap.dedent(extra)
    if status in DECIDED and "decision:" not in extra:
        extra += DECISION
    return proposal_text(textwrap.dedent(f"""
        id: {number}
        title: Process proposal number {number}
        authors:
          - Ada Lovelace
        type: process
        status: {status}
        created: '2026-11-02'
        updated: '2026-11-03'
        changes: []
        """) + extra)


def write_workspace(root: Path, released: bool = True) -> Path:
    """opset/ (one version, 8 ops, 1 rule), proposals/ with 0001 implemented, site/ from the repository."""
    write_opset(root / "opset", released=released)
    (root / "proposals").mkdir(parents=True)
    (root / "proposals" / "0001-initial-op-set.md").write_text(process_proposal(1, "implemented", """
        resolution: Accepted at the founding review of the op set.
        target_version: '2026.11'
        released_in: '2026.11'
        """))
    if (ROOT / "site" / "mkdocs.yml").is_file():
        shutil.copytree(ROOT / "site", root / "site", ignore=shutil.ignore_patterns("build", "generated"))
    return root


def git(root: Path, *args: str) -> str:
    result = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True,
                            env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
                                 "GIT_COMMITTER_EMAIL": "t@example.org", "HOME": str(root), "PATH": "/usr/bin:/bin"})
    return result.stdout


def init_repo(root: Path) -> None:
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")


# A proposal whose every field tries to run script on the site; the site must show it as text.
PAYLOAD_BODY = """
# Title <script>window.__pwned = 1</script>

## Summary

Hello <script>window.__pwned = 1</script> and <img src=x onerror="window.__pwned = 2">.
A [click me](javascript:window.__pwned=3) link, an [entity one](&#106;avascript:window.__pwned=4),
<a href="javascript:window.__pwned=5">raw anchor</a>, and `<b>inline code</b>` that stays text.
A normal [https link](https://pytorch.org/docs/) still works.

```html
<script>window.__pwned = 6</script>
```

## Motivation

<iframe src="javascript:window.__pwned=7"></iframe>
<svg onload="window.__pwned=8"></svg>

## Specification

{: onclick="window.__pwned=9" }

## Compatibility

None.

## Alternatives

None.

## Unresolved questions

None.
"""


def payload_proposal() -> str:
    return proposal_text("""
        id: 2
        title: Payload <script>window.__pwned = 10</script> proposal
        authors:
          - <img src=x onerror=alert(1)>
        type: process
        status: review
        created: '2026-11-02'
        updated: '2026-11-03'
        resolution: null
        changes: []
        """, body=PAYLOAD_BODY)




def reopen_newest(opset_root: Path) -> str:
    """Turn the newest version of a copied opset back into a draft, so a test may edit its files.

    Released versions are sealed (an edit is a digest mismatch); tests that break the data on
    purpose work on the version a contributor would be editing: the next draft.
    """
    index = opset_root / "versions.yaml"
    text = index.read_text()
    newest = re.findall(r"^  - version: '([^']+)'", text, flags=re.M)[-1]
    start = text.index(f"  - version: '{newest}'")
    entry = text[start:]
    entry = re.sub(r"^    status: \w+$", "    status: draft", entry, count=1, flags=re.M)
    entry = re.sub(r"^    (released|digest): .*\n", "", entry, flags=re.M)
    index.write_text(text[:start] + entry)
    return newest


# Per-case fields of a conformance record that depend on when and where the case ran, not on its verdict.
RUN_FIELDS = ("duration_s", "repro_file", "log")  # a passing case's log size depends on what its worker printed before


def verdicts(report: dict) -> dict[tuple[str, str, str], dict]:
    """Each case of a conformance report -> its record less the run's timing and paths: status, message,
    evidence, blame, errors and repro, which runs of the same cases must agree on."""
    return {(r["op"], r["dtype"], r["device"]): {k: v for k, v in r.items() if k not in RUN_FIELDS}
            for r in report["results"]}
