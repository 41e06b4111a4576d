"""The site: generated pages from the data, a strict mkdocs build, and untrusted text made inert."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from opspec_fixtures import payload_proposal, write_workspace

from opspec.cli import main
from opspec.reports.site import sanitize
from opspec.reports.site.build import BuildError, build
from opspec.reports.site.generate import generate
from opspec.reports.site.results import read as read_results
from opspec.spec.workspace import Workspace

pytest.importorskip("mkdocs")
pytest.importorskip("material")

@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, Path, float]:
    root = write_workspace(tmp_path_factory.mktemp("site") / "repo")
    (root / "proposals" / "0002-payload.md").write_text(payload_proposal())
    started = time.perf_counter()
    result = build(Workspace(root))
    return root, result.out, time.perf_counter() - started


def test_build_is_strict_clean_and_fast(site):
    root, out, seconds = site
    assert seconds < 60
    assert (out / "index.html").is_file()
    assert (out / "generated" / "ops" / "aten-var_mean.correction" / "index.html").is_file()
    assert (root / "site" / "docs" / "generated" / "ops" / "index.md").is_file()
    assert not list(out.parent.glob(".opspec-site-*"))  # scratch folders are gone


def test_pages_cover_ops_rules_changelog_proposals(site):
    root, out, _ = site
    pages = generate(Workspace(root)).pages
    assert {"ops/index.md", "decompositions.md", "changelog.md", "proposals/index.md", "proposals/0001.md",
            "proposals/0002.md", "scoreboard.md"} <= set(pages)
    op_page = pages["ops/aten-var_mean.correction.md"]
    assert "## Decomposition" in op_page and "aten-mean.dim.md" in op_page and "## History" in op_page
    assert "| aten::abs" not in pages["ops/index.md"]  # names are code, not loose text
    assert "No results published yet" in pages["scoreboard.md"]
    assert "## 2026.11 (first version)" in pages["changelog.md"]
    index = pages["proposals/index.md"]
    assert index.index("## Review") < index.index("## Implemented")


def test_proposal_payload_is_inert(site):
    _, out, _ = site
    html = (out / "generated" / "proposals" / "0002" / "index.html").read_text()
    assert sanitize.unsafe_html(html) == []
    article = html[html.index("<article"): html.index("</article>")]
    for tag in ("<script", "<img", "<iframe", "<svg", "<a href=\"javascript"):
        assert tag not in article
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in article  # shown as text
    assert 'href="https://pytorch.org/docs/"' in article
    assert "javascript:" not in article.replace("javascript\u200b:", "")


@pytest.mark.parametrize("text", [
    "<script>x()</script>", "<img src=x onerror=y()>", "[a](javascript:y())", "[a](JaVaScRiPt:y())",
    "[a](  javascript:y())", "[a](&#106;avascript:y())", "<a href='vbscript:y'>a</a>", "[a](data:text/html,<script>)",
    "`</code><script>y()</script>`", "\\`<script>y()</script>\\`", "java\tscript:y()",
])
def test_sanitizer_leaves_no_markup(text):
    out = sanitize.markdown_body(text)
    assert "<script" not in out and "<img" not in out and "<a " not in out
    assert "javascript:" not in out.lower() and "vbscript:" not in out.lower() and "data:" not in out.lower()


def test_scanner_finds_active_content():
    page = "<html><script>ok()</script><article><a href=' javascript:x'>a</a><p onclick='y'>b</p><script></script></article></html>"
    assert len(sanitize.unsafe_html(page)) == 3


def test_results_are_read_defensively(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "good.json").write_text(json.dumps({"backend": "cpu-ref", "device": "cpu", "results": [
        {"op": "aten::abs", "dtype": "float32", "status": "pass"},
        {"op": "aten::abs", "dtype": "float16", "status": "mismatch"},
        {"dtype": "float16"},
    ]}))
    (folder / "broken.json").write_text("{not json")
    (folder / "list.json").write_text("[]")
    (folder / "other.json").write_text(json.dumps({"backend": "x"}))
    results = read_results(folder)
    assert [(r.backend, r.op, r.dtype, r.device, r.status) for r in results.records] == [
        ("cpu-ref", "aten::abs", "float32", "cpu", "pass"), ("cpu-ref", "aten::abs", "float16", "cpu", "mismatch")]
    assert len(results.notes) == 4


def test_scoreboard_with_results(tmp_path):
    root = write_workspace(tmp_path / "repo")
    folder = root / "conformance" / "results"
    folder.mkdir(parents=True)
    (folder / "demo.json").write_text(json.dumps({"backend": "demo<script>", "results": [
        {"op": "aten::abs", "dtype": "float32", "device": "cpu", "status": "pass"}]}))
    pages = generate(Workspace(root)).pages
    board = pages["scoreboard.md"]
    assert "float32 @ cpu" in board and "<script" not in board and "pass" in board
    assert "| demo" in pages["ops/aten-abs.md"]


def test_scoreboard_shows_lowering_coverage(tmp_path):
    root = write_workspace(tmp_path / "repo")
    folder = root / "conformance" / "results"
    folder.mkdir(parents=True)
    lowering = {"manifest": "conformance/backends/demo.yaml", "lowered": 1, "ops_run": 2, "coverage_percent": 50.0}
    (folder / "demo.json").write_text(json.dumps({"backend": "demo", "lowering": lowering, "results": [
        {"op": "aten::abs", "dtype": "float32", "device": "cpu", "status": "pass", "lowering": "lowered"},
        {"op": "aten::neg", "dtype": "float32", "device": "cpu", "status": "pass", "lowering": "fallback"}]}))
    board = generate(Workspace(root)).pages["scoreboard.md"]
    assert "1 of 2 ops run are lowered natively\n(50.0%)" in board
    assert "| float32 @ cpu | lowering |" in board
    assert "| pass | fallback |" in board


def test_scoreboard_shows_the_functionalization_section(tmp_path):
    root = write_workspace(tmp_path / "repo")
    folder = root / "conformance" / "results"
    folder.mkdir(parents=True)
    section = {"summary": {"programs": 2, "variants": 1, "ops": 1, "pass": 1, "xfail": 1}, "results": [
        {"variant": "aten::add_.Tensor", "target": "input", "view": "slice", "status": "pass", "message": ""},
        {"variant": "aten::add_.Tensor", "target": "input", "view": "diagonal", "status": "xfail",
         "message": "the graph calls diagonal_scatter", "finding": {"reason": "diagonal_scatter is outside"}}]}
    (folder / "export.json").write_text(json.dumps({"backend": "export", "functionalization": section, "results": [
        {"op": "aten::add.Tensor", "dtype": "float32", "device": "cpu", "status": "pass"}]}))
    board = generate(Workspace(root)).pages["scoreboard.md"]
    assert "## Functionalization (export report)" in board
    assert "2 programs of 1 variants of\n1 ops: 1 pass, 1 xfail.\n\n| Status | Why | Programs |" in board
    assert "| xfail | diagonal\\_scatter is outside | 1: aten::add\\_.Tensor input/diagonal |" in board
    assert "input/slice" not in board


def test_cli_build_and_broken_config(tmp_path, capsys):
    root = write_workspace(tmp_path / "repo")
    out = tmp_path / "html"
    assert main(["site", "--root", str(root), "build", "--out", str(out)]) == 0
    assert (out / "generated" / "changelog" / "index.html").is_file()
    first = (out / "index.html").read_bytes()
    (root / "site" / "docs" / "index.md").write_text("# Home\n\n[broken](nowhere.md)\n")
    assert main(["site", "--root", str(root), "build", "--out", str(out)]) == 1
    assert "nowhere.md" in capsys.readouterr().err
    assert (out / "index.html").read_bytes() == first  # the last good site stays
    (root / "site" / "mkdocs.yml").unlink()
    with pytest.raises(BuildError):
        build(Workspace(root), out)
