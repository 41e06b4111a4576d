"""The site: generated pages from the data, a strict mkdocs build, and untrusted text made inert."""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import markupsafe
import pytest
from opspec_fixtures import payload_proposal, write_workspace

from opspec.cli import main
from opspec.reports.site import sanitize
from opspec.reports.site.build import BuildError, build
from opspec.reports.site.generate import generate, op_slugs, spellings
from opspec.reports.site.results import read as read_results
from opspec.spec.load import load_opset, load_versions
from opspec.spec.workspace import Workspace

pytest.importorskip("mkdocs")
pytest.importorskip("material")
pytestmark = pytest.mark.xdist_group("site")  # one worker runs them all: each module fixture's build is made once

@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, Path, float]:
    root = write_workspace(tmp_path_factory.mktemp("site") / "repo")
    (root / "proposals" / "0002-payload.md").write_text(payload_proposal())
    started = time.perf_counter()
    result = build(Workspace(root))
    return root, result.out, time.perf_counter() - started


def test_build_is_strict_and_clean(site):
    """How fast it builds is measured in benchmarks/site_build.py, not asserted here (a shared machine's load decides)."""
    root, out, _ = site
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
    assert "<script" not in board and "| pass | Total |" in board and '<span class="opspec-id">1 (100.0%)</span> | 1 |' in board
    # the results table is HTML, its links written as mkdocs serves the pages (ops/aten-abs/ -> reports/demo/)
    assert 'demo&lt;script&gt;: <a href="../../reports/demo/#case-demo-aten-abs-float32"><span class="opspec-id">pass</span></a>' in pages["ops/aten-abs.md"]
    assert 'id="case-demo-aten-abs-float32"' in pages["reports/demo.md"]


def test_scoreboard_counts_the_declared_dtypes_each_report_covers(tmp_path, monkeypatch):
    """Dtype coverage is cells with a result over the op x dtype cells the newest opset declares; the heat map
    marks an op with some declared dtypes not run."""
    from opspec.conform import cases
    from opspec.reports.site.scoreboard import declared_cells

    declares = cases.dtypes_for  # the fixture's ops declare float32 only: give abs a second dtype
    monkeypatch.setattr(cases, "dtypes_for", lambda op, wanted: ["float32", "float64"] if op.name == "aten::abs"
                        else declares(op, wanted))
    root = write_workspace(tmp_path / "repo")
    newest = load_opset(load_versions(root / "opset")[-1].version, root / "opset")
    declared = declared_cells(newest)
    op, dtypes = next((name, d) for name, d in sorted(declared.items()) if len(d) > 1)
    total = sum(len(d) for d in declared.values())
    folder = root / "conformance" / "results"
    folder.mkdir(parents=True)
    records = [{"op": op, "dtype": d, "device": "cpu", "status": "pass"} for d in dtypes]
    (folder / "full.json").write_text(json.dumps({"backend": "full", "opset": newest.version, "results": records}))
    (folder / "one.json").write_text(json.dumps({"backend": "one", "opset": newest.version, "results": records[:1]}))
    (folder / "old.json").write_text(json.dumps({"backend": "old", "opset": "1999.01", "results": records[:1]}))
    pages = generate(Workspace(root)).pages
    board = pages["scoreboard.md"]
    assert "**By dtype**" in pages["reports/full.md"] and "**By dtype**" not in pages["reports/one.md"]
    assert '| <span class="opspec-id">float64</span> | 1 | 1 |' in pages["reports/full.md"]
    assert f"{len(dtypes)} of {total} (" in board and f"1 of {total} (" in board and "— (opset 1999.01)" in board
    partial = re.findall(r'class="hm hm-pass hm-partial"[^>]*title="([^"]*)"', board)
    assert partial and all(f"1 of {len(dtypes)} declared dtypes run" in t for t in partial)
    assert f"{len(dtypes)} of {len(dtypes)} declared dtypes run" in board


def test_scoreboard_is_generic_over_statuses_and_fields(tmp_path):
    """Statuses and identity fields a report carries appear, in the usual order; missing ones read 'not recorded'."""
    root = write_workspace(tmp_path / "repo")
    folder = root / "conformance" / "results"
    folder.mkdir(parents=True)
    (folder / "vendor-cuda.json").write_text(json.dumps({
        "backend": {"name": "vendor", "version": "2.0", "package": "vendorpkg"}, "device": "cuda", "torch": "2.15.0",
        "opspec": "0.2.0", "date": "2026-12-01T10:00:00Z", "device_name": "Example GPU",
        "blame": {"frontend": 1, "backend": 0, "opspec": 0}, "results": [
            {"op": "aten::abs", "dtype": "float32", "status": "fallback"},
            {"op": "aten::abs", "dtype": "float16", "status": "weird-new-status", "message": "m"},
            {"op": "aten::add.Tensor", "dtype": "float32", "status": "xfail", "blame": "frontend", "blame_stage": "dynamo",
             "expectation": {"reason": "a known frontend bug"}, "repro": "import torch\nprint(1)\n```\n<script>"},
            {"op": "aten::mul.Tensor", "dtype": "float32", "status": "pass"}]}))
    (folder / "bare.json").write_text(json.dumps({"results": [{"op": "aten::abs", "status": "pass"}]}))
    pages = generate(Workspace(root)).pages
    board = pages["scoreboard.md"]
    assert "| pass | fallback | xfail | weird-new-status | Total |" in board
    rows = {line.split("](")[0]: re.sub(r"<[^>]+>", "", line) for line in board.splitlines() if line.startswith("| [")}
    vendor, bare = rows['| [<span class="opspec-id">vendor</span>'], rows['| [<span class="opspec-id">bare</span>']
    assert "| vendorpkg 2.0 | cuda | 2.15.0 | 0.2.0 |  | 2026-12-01 |" in vendor
    assert "| 1 (25.0%) | 1 (25.0%) | 1 (25.0%) | 1 (25.0%) | 4 |" in vendor
    assert "| not recorded | any | not recorded | not recorded |" in bare
    assert board.count('class="hm hm-') >= 2 * 8 and "hm-weird-new-status" in board
    assert "No CUDA report is committed yet" not in board
    report = pages["reports/vendor-cuda.md"]
    assert "Expectation's reason: a known frontend bug" in report and "Put on the <strong>frontend (dynamo)</strong>." in report
    # the repro is a file beside the page, served as it is, never rendered: the page only links to it (as mkdocs
    # serves them: the page at reports/vendor-cuda/, the file in that folder)
    repro = "vendor-cuda/case-vendor-cuda-aten-add-tensor-float32.py"
    assert "<script" not in report and '<a href="case-vendor-cuda-aten-add-tensor-float32.py">Repro</a>' in report
    assert pages[f"reports/{repro}"] == "import torch\nprint(1)\n```\n<script>\n"
    assert "| cuda \\(Example GPU\\) |" in report or "| cuda (Example GPU) |" in report
    assert "**Not passing, by who failed:** 1 frontend, 0 backend, 0 opspec." in report
    page = pages["ops/aten-abs.md"]
    assert 'vendor: <a href="../../reports/vendor-cuda/#case-vendor-cuda-aten-abs-float32"><span class="opspec-id">fallback</span></a>' in page
    assert "weird-new-status</span></a>" in page


def test_scoreboard_shows_lowering_meaning(tmp_path):
    root = write_workspace(tmp_path / "repo")
    folder = root / "conformance" / "results"
    folder.mkdir(parents=True)
    lowering = {"manifest": "conformance/backends/demo.yaml", "lowered": 1, "ops_run": 2, "coverage_percent": 50.0}
    for backend in ("demo", "aot_eager"):
        (folder / f"{backend}.json").write_text(json.dumps({"backend": backend, "lowering": lowering, "results": [
            {"op": "aten::abs", "dtype": "float32", "device": "cpu", "status": "pass", "lowering": "lowered"},
            {"op": "aten::neg", "dtype": "float32", "device": "cpu", "status": "pass", "lowering": "fallback"}]}))
    pages = generate(Workspace(root)).pages
    board = pages["scoreboard.md"]
    assert '| <span class="opspec-id">demo</span> | 1 of 2 ops (50.0%) |' in board
    assert 'aot\\_eager</span> | no figure | AOT autograd traces' in board and "tautology" in board
    assert ">lowered</span></td>" in pages["reports/demo.md"] and ">fallback</span></td>" in pages["reports/demo.md"]


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



def test_two_mkdocs_processes_build_what_one_builds(tmp_path, monkeypatch):
    """The largest pages out of search may render in a second mkdocs: the site is the same, byte for byte."""
    from opspec.reports.site import mkdocs_run

    root = write_workspace(tmp_path / "repo")
    folder = root / "conformance" / "results"
    folder.mkdir(parents=True)
    (folder / "demo.json").write_text(json.dumps({"backend": "demo", "results": [
        {"op": "aten::abs", "dtype": "float32", "device": "cpu", "status": "pass"},
        {"op": "aten::abs", "dtype": "float16", "device": "cpu", "status": "mismatch", "message": "off by *2*",
         "repro": "import torch\nprint(torch.ops.aten.abs.default(torch.tensor([-1.0])))"}]}))
    monkeypatch.setattr(mkdocs_run, "SIDE_MINIMUM", 10**12)
    one = build(Workspace(root), tmp_path / "one").out
    chosen = []
    monkeypatch.setattr(mkdocs_run, "SIDE_MINIMUM", 0)
    monkeypatch.setattr(mkdocs_run, "_cores", lambda: 2)
    side_pages = mkdocs_run._side_pages
    monkeypatch.setattr(mkdocs_run, "_side_pages", lambda *args: chosen.extend(side_pages(*args)) or set(chosen))
    two = build(Workspace(root), tmp_path / "two").out
    assert chosen == ["generated/reports/demo.md"]
    files = sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(two) for p in two.rglob("*") if p.is_file())
    assert [f for f in files if (one / f).read_bytes() != (two / f).read_bytes()] == []
    assert [f.suffix for f in files if f.parts[:2] == ("generated", "reports") and f.suffix != ".html"] == [".py"]
    assert "off by" in (two / "generated" / "reports" / "demo" / "index.html").read_text()
    assert "## Every case" in (root / "site" / "docs" / "generated" / "reports" / "demo.md").read_text()  # not a stub
    (root / "opset" / "descriptions.yaml").write_text(json.dumps({"ops": {  # fails after the second mkdocs started
        "aten::abs": {"description": "Absolute value of each element.", "example": "torch.ops.aten.abs.default(1)"}}}))
    with pytest.raises(BuildError, match="the example of aten::abs fails"):
        build(Workspace(root), tmp_path / "two")
    assert not list(tmp_path.glob(".opspec-site-*")) and (two / "index.html").is_file()

# --- The repository's own data: every core op page specifies the op ---------------------------

ROOT = Path(__file__).resolve().parents[1]
PARTS = {
    "description": "## What it computes\n\n",
    "argument table": "<th>Argument</th><th>Type</th><th>Default</th><th>Values</th>",
    "dtype x device table": "<th>dtype</th><th>cpu</th><th>cuda</th>",
    "build-time example": "## Example",
}


def incomplete(pages: dict[str, str], opset, page_of) -> list[str]:
    """'op: missing part' for every core op of ``opset`` whose page lacks a part of its specification."""
    missing = []
    for op in opset.ops:
        page = pages.get(page_of(op.name), "")
        for part, marker in PARTS.items():
            if marker not in page:
                missing.append(f"{op.name}: {part}")
        if "No description recorded yet" in page:
            missing.append(f"{op.name}: description")
        example = page.partition("## Example")[2].partition("## ")[0]
        if "```python" not in example or "```text" not in example:
            missing.append(f"{op.name}: build-time example")
    return missing


@pytest.fixture(scope="module")
def repo_pages():
    from opspec.spec import load

    ws = Workspace(ROOT)
    generated = generate(ws)
    opsets = [load.load_opset(info.version, ws.opset) for info in load.load_versions(ws.opset)]
    return generated, opsets


def test_every_core_op_page_specifies_the_op(repo_pages):
    generated, opsets = repo_pages
    assert generated.problems == []
    slugs = op_slugs({n: None for o in opsets for n in [*o.ops_by_name, *o.rules_by_op]})
    for opset in opsets:  # each op's own page (its newest version's) specifies it in full
        assert incomplete(generated.pages, opset, lambda n: f"ops/{slugs[n]}.md") == [], opset.version
        for op in opset.ops if opset is not opsets[-1] else ():  # an older version's page: its entry
            page = generated.pages[f"{opset.version}/ops/{slugs[op.name]}.md"]
            assert str(markupsafe.escape(op.schema)) in page and "<th>Argument</th><th>Type</th><th>Default</th><th>Values</th>" in page


def test_op_pages_state_their_accuracy_contracts(repo_pages):
    """Each contract of opset/accuracy.yaml on its op's page, with what eager measured beside it."""
    from opspec.spec import accuracy

    generated, _ = repo_pages
    contracts, _ = accuracy.read()
    exp = generated.pages["ops/aten-exp.md"].split("## Accuracy", 1)[1].split("\n## ", 1)[0]
    for contract in (c for c in contracts.ulp if c.op == "aten::exp"):
        assert f"| {contract.dtype} | {contract.max_ulp:g} |" in exp
    assert "(every value, torch " in exp
    assert "Error model (" in generated.pages["ops/aten-mm.md"].split("## Accuracy", 1)[1]


def test_the_completeness_check_finds_what_is_missing(tmp_path):
    from opspec.spec import load

    root = write_workspace(tmp_path / "repo")  # no descriptions file: no description, no example
    pages = generate(Workspace(root)).pages
    missing = incomplete(pages, load.load_opset(None, root / "opset"), lambda n: f"ops/{op_slugs([n])[n]}.md")
    assert "aten::abs: description" in missing and "aten::abs: build-time example" in missing
    assert not [m for m in missing if "argument table" in m or "dtype x device" in m]


def test_op_page_content_from_the_data(repo_pages):
    generated, _ = repo_pages
    conv = generated.pages["ops/aten-convolution.md"]
    schema = ("aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
              "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -&gt; Tensor")
    assert f'<pre class="opspec-schema"><code>{schema}</code></pre>' in conv  # whole, never cut
    arguments = conv.partition("<th>Argument</th>")[2].partition("</tbody>")[0]
    assert re.findall(r"<tr><td>(.*?)</td>", arguments) == [f"<code>{a}</code>" for a in (
        "input", "weight", "bias", "stride", "padding", "dilation", "transposed", "output_padding", "groups")]
    assert "tensor([[[[ 8., 12.],\n          [20., 24.]]]])" in conv  # computed by torch at build time
    randperm = generated.pages["ops/aten-randperm.md"]
    assert "<tr><td><code>dtype</code> (keyword)</td><td><code>ScalarType?</code></td><td><code>torch.int64</code></td>" in randperm
    add = generated.pages["ops/aten-add.Tensor.md"]
    for spelling in ("add.Tensor", "aten.add.Tensor", "torch.ops.aten.add.Tensor"):
        assert f"<code>{spelling}</code>" in add
    published = json.loads((ROOT / "conformance" / "results" / "inductor-cpu.json").read_text())
    status = next(r["status"] for r in published["results"] if r["op"] == "aten::add.Tensor" and r["dtype"] == "float32")
    assert f'inductor: <a href="../../reports/inductor-cpu/#case-inductor-cpu-aten-add-tensor-float32"><span class="opspec-id">{status}</span></a>' in add
    assert '!!! note "Caveats"' in generated.pages["ops/aten-_adaptive_avg_pool2d.md"]
    assert "Rules of opset" in add and "[<code>aten::addcmul</code>](../ops/aten-addcmul.md)" in add
    decomposed = generated.pages["ops/aten-addcmul.md"]
    assert "Decomposed by a **default** rule" in decomposed


def test_rules_index_and_scoreboard_from_the_data(repo_pages):
    generated, _ = repo_pages
    rules = generated.pages["decompositions.md"]
    rows = [line for line in rules.splitlines() if line.startswith("| [")]
    assert rows and all(re.search(r"\| <span class=\"opspec-id\">\d{4}\.\d{2}</span> \|$", line) for line in rows)  # Since
    board = generated.pages["scoreboard.md"]
    for report in sorted((ROOT / "conformance" / "results").glob("*.json")):
        data = json.loads(report.read_text())
        row = next(re.sub(r"<[^>]+>", "", line) for line in board.splitlines()
                   if line.startswith(f"| [{sanitize.ident(data['backend']['name'])}](reports/{report.stem}.md)"))
        assert f"| {sanitize.cell(data['torch'])} | {sanitize.cell(data['opspec'])} |" in row
        assert re.search(r"\| \d{4}-\d{2}-\d{2}", row)  # the date
        assert f"reports/{report.stem}/#case-" in board  # its heat-map row
        assert f"reports/{report.stem}.md" in generated.pages
        if data["backend"].get("build"):  # a build unlike a plain run is said on the report's page
            assert f"| Built | {sanitize.cell(data['backend']['build'])} |" in generated.pages[f"reports/{report.stem}.md"]
        for splice in data.get("spliced", ()):  # each later re-run spliced in is named on the report's page
            page = generated.pages[f"reports/{report.stem}.md"]
            line = next(line for line in page.splitlines() if line.startswith("| Run again later and spliced in |"))
            assert sanitize.cell(f"{splice['cases']} cases of {splice['ops'][0].removeprefix('aten::')}") in line
    assert "no figure" in board and "tautology" in board  # aot_eager's 100% is explained, not shown


def test_spellings():
    assert spellings("aten::add.Tensor") == ["add.Tensor", "aten::add.Tensor", "aten.add.Tensor", "torch.ops.aten.add.Tensor"]
    assert "torch.ops.aten.abs.default" in spellings("aten::abs")


@pytest.mark.parametrize("code, problem", [
    ("import os\nos", "Import is not allowed"),
    ("open('x')", "name open is not allowed"),
    ("torch.__class__", "attribute __class__"),
    ("x = 1", "last statement must be an expression"),
    ("torch.ops.aten.abs.default(", "not Python"),
])
def test_examples_refuse_code_outside_the_subset(code, problem):
    from opspec.reports.site import examples

    assert problem in examples.check(code)


def test_a_failing_or_unrelated_example_fails_the_build(tmp_path):
    root = write_workspace(tmp_path / "repo")
    descriptions = {"ops": {
        "aten::abs": {"description": "Absolute value of each element.", "example": "torch.ops.aten.neg.default(torch.ones(2))"},
        "aten::amax": {"description": "Maximum over the given dimensions.", "example": "torch.ops.aten.amax.default(torch.ones(2), [5])"},
    }}
    (root / "opset" / "descriptions.yaml").write_text(json.dumps(descriptions))
    with pytest.raises(BuildError) as err:
        build(Workspace(root), tmp_path / "html")
    lines = str(err.value).splitlines()
    assert any("descriptions.yaml: the example of aten::abs it does not call aten::abs" in l for l in lines)
    assert any("descriptions.yaml: the example of aten::amax fails: IndexError" in l for l in lines)
    assert not (tmp_path / "html").exists()


def test_every_version_has_its_own_pages(tmp_path):
    from opspec.spec import yamlio

    root = write_workspace(tmp_path / "repo")
    opset = root / "opset"
    newer = opset / "2026.12"
    newer.mkdir()
    for name in ("core_ops.yaml", "decompositions.yaml"):
        (newer / name).write_text((opset / "2026.11" / name).read_text().replace("opset: '2026.11'", "opset: '2026.12'"))
    index = yamlio.load_file(opset / "versions.yaml")
    index["versions"].append({"version": "2026.12", "status": "draft", "torch": "2.13.0"})
    (opset / "versions.yaml").write_text(yamlio.dump(index))
    result = build(Workspace(root), tmp_path / "html")
    pages = generate(Workspace(root)).pages
    old = pages["2026.11/ops/aten-abs.md"]
    assert yamlio.load_text(old.split("---")[1], "front matter")["search"] == {"exclude": True}
    assert "this is an older version's page" in old
    assert "<th>Argument</th>" in old and "## Example" not in old and "[its page for the newest version](../../ops/aten-abs.md)" in old
    assert "[2026.12](../../ops/aten-abs.md)" in old and "**2026.11**" in old
    assert "[2026.11](../2026.11/ops/aten-abs.md)" in pages["ops/aten-abs.md"]
    assert "[2026.11](2026.11/ops/index.md)" in pages["opsets.md"]
    assert (result.out / "generated" / "2026.11" / "ops" / "aten-abs" / "index.html").is_file()


def test_docs_workflow_deploys_what_site_build_builds():
    import yaml

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "docs.yml").read_text())
    triggers = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads `on` as True
    assert "release" in triggers and workflow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    steps = workflow["jobs"]["build"]["steps"]
    build_step = next(s["run"] for s in steps if "opspec site build" in s.get("run", ""))
    out = re.search(r"opspec site build --out (\S+)", build_step).group(1)
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == out  # exactly what the local command builds
    assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in workflow["jobs"]["deploy"]["steps"])
    assert workflow["jobs"]["deploy"]["needs"] == "build"


def test_scoreboard_shows_the_torch_version_matrix_when_present(tmp_path):
    root = write_workspace(tmp_path / "repo")
    assert "## torch versions" not in generate(Workspace(root)).pages["scoreboard.md"]
    folder = root / "benchmarks" / "results"
    folder.mkdir(parents=True)
    (folder / "version_matrix.json").write_text(json.dumps({"versions": {
        "2.11.0": {"torch": "2.11.0", "validate": {"ok": False, "summary": "1 note"}, "drift": {"ok": True}, "total_s": 60},
        "2.15.0": {"torch": "2.15.0", "validate": {"ok": True}, "drift": {"ok": True}}}}))
    board = generate(Workspace(root)).pages["scoreboard.md"]
    assert "| torch | validate | drift | total\\_s |" in board
    assert "| 2.11.0 | differs | ok | 60 |" in board and "| 2.15.0 | ok | ok | — |" in board


@pytest.mark.sweep  # the whole published site, about a minute: `make sweep` (CI); the pages are checked above
def test_the_repository_site_builds_strict(tmp_path):
    """Every page the repository's data produces links only to pages that exist (mkdocs --strict)."""
    result = build(Workspace(ROOT), tmp_path / "html", write_generated=False)
    assert (result.out / "generated" / "scoreboard" / "index.html").is_file()


@pytest.mark.parametrize("fields", [
    {"title": "aten::abs (2026.11)", "search": {"exclude": True}},
    {"title": "A: title - with [brackets], {braces} and # a hash", "tags": ["accepted", "add-op"]},
    {"title": 'Quotes " and \\ a backslash'},
    {"title": "Caf\u00e9 \u2028 after a line separator"},
    {"title": "yes", "hide": ["navigation", "toc"], "search": {"boost": 5}},
])
def test_front_matter_reads_back_as_the_fields_it_was_given(fields):
    """Written as JSON where that is what YAML reads back, else by PyYAML; either way mkdocs gets the same values."""
    import yaml

    assert yaml.safe_load(sanitize.front_matter(fields)) == fields


def test_the_files_for_download_are_excluded_by_patterns_that_match_no_page(tmp_path):
    """A folder named like a file (a version, 2026.11) is no suffix to exclude; a file without a suffix is named."""
    import pathspec
    from opspec.reports.site import mkdocs_run

    docs = tmp_path / "docs"
    for path in ("generated/2026.11/ops/aten-abs.md", "generated/reports/demo/case-abs-float16.py",
                 "generated/reports/demo/LICENSE", "generated/reports/demo.md", "index.md"):
        (docs / path).parent.mkdir(parents=True, exist_ok=True)
        (docs / path).write_text("x")
    downloads = mkdocs_run._downloads(docs, "generated")
    assert downloads == ["generated/reports/demo/LICENSE", "generated/reports/demo/case-abs-float16.py"]
    spec = pathspec.GitIgnoreSpec.from_lines("/" + glob for glob in mkdocs_run._download_globs(downloads))
    every = sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*") if p.is_file())
    assert [path for path in every if spec.match_file(path)] == downloads
