"""Links inside the HTML blocks of generated pages: written as mkdocs serves the pages, each target checked."""
from __future__ import annotations

from pathlib import Path

import pytest

from opspec.reports.site.raw_html import Links, text


@pytest.mark.parametrize("directory_urls, page, link, expected", [
    (True, "ops/aten-abs.md", "../reports/inductor-cpu.md#case-x", "../../reports/inductor-cpu/#case-x"),
    (True, "reports/inductor-cpu.md", "inductor-cpu/case-x.py", "case-x.py"),  # a file beside the page's folder
    (True, "reports/inductor-cpu.md", "../scoreboard.md#what-ran-instead", "../../scoreboard/#what-ran-instead"),
    (True, "2026.11/ops/aten-abs.md", "../../proposals/0001.md", "../../../proposals/0001/"),
    (True, "ops/index.md", "aten-abs.md", "aten-abs/"),
    (True, "reports/x.md", "../../own-backend.md#evidence", "../../../own-backend/#evidence"),
    (False, "ops/aten-abs.md", "../reports/inductor-cpu.md#case-x", "../reports/inductor-cpu.html#case-x"),
    (True, "ops/aten-abs.md", "#row", "#row"),
])
def test_a_link_is_the_url_mkdocs_writes_for_it(directory_urls, page, link, expected):
    assert Links(directory_urls).href(page, link) == expected


def test_a_link_to_no_page_or_file_of_the_site_is_a_problem(tmp_path: Path):
    docs = tmp_path / "docs"
    (docs / "generated").mkdir(parents=True)
    (docs / "own-backend.md").write_text("# Own backend\n")
    links = Links()
    links.href("reports/x.md", "../ops/aten-abs.md#case")
    links.href("reports/x.md", "../../own-backend.md")
    links.href("reports/x.md", "x/case.py")
    links.href("ops/aten-abs.md", "../ops/aten-gone.md")
    pages = {"reports/x.md": "", "ops/aten-abs.md": "", "reports/x/case.py": ""}
    assert links.problems(pages, docs) == [
        "generated/ops/aten-abs.md: a link to generated/ops/aten-gone.md, which is not a page or file of the site"]


def test_text_from_a_result_file_is_inert_in_html():
    assert str(text('<script>alert("x")</script> javascript:go')) == (
        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; javascript\u200b:go")
