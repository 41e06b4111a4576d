"""The built site in headless Chromium, used as a reader would: search, op pages, the scoreboard.

The repository's own site is built into a scratch folder (so search ranks among all the
real pages); a small workspace with one hostile proposal checks that it stays inert.
With OPSPEC_SCREENSHOTS=DIR the op page and the scoreboard are saved there as PNGs
(`make screenshots` writes the ones the docs show).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from opspec_fixtures import payload_proposal, write_workspace

from opspec.reports.site.build import build, serve_in_thread
from opspec.spec import load
from opspec.spec.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = "/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
pytest.importorskip("material", reason="mkdocs-material is not installed")
pytestmark = [pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="chromium and chromium-driver are not installed"),
              pytest.mark.xdist_group("site_browser"),  # one worker runs them all: the site is built once
              pytest.mark.sweep]  # a site build and a browser: over a minute, in `make sweep` (and `make screenshots`)

SPELLINGS = ("add.Tensor", "aten::add.Tensor", "aten.add.Tensor", "torch.ops.aten.add.Tensor")


BUILT: dict[str, Path] = {}  # served URL -> the folder it serves, so a test can say what the page on disk holds


def _serve(root: Path, out: Path):
    result = build(Workspace(root), out, write_generated=False)
    httpd, url = serve_in_thread(result.out)
    BUILT[url] = result.out
    return httpd, url


@pytest.fixture(scope="session")
def served(tmp_path_factory):
    """The repository's own site, built into a scratch folder, so search ranks among all the real pages (once per
    worker: the scheduler may run another module's tests between these, which would end a module's fixture)."""
    httpd, url = _serve(ROOT, tmp_path_factory.mktemp("site") / "html")
    yield url
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def served_hostile(tmp_path_factory):
    """A small workspace with a proposal whose every field tries to run script."""
    root = write_workspace(tmp_path_factory.mktemp("hostile") / "repo")
    (root / "proposals" / "0002-payload.md").write_text(payload_proposal())
    httpd, url = _serve(root, root / "site" / "build")
    yield url
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="opspec-chromium-")
    options = Options()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1280,900", "--hide-scrollbars", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _wait():
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait


def search(browser, url: str, query: str) -> list[str]:
    """The result links for ``query``, once the list has stopped changing (search runs in a worker)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    if not browser.current_url.startswith(url):
        browser.get(url)
    box = _wait()(browser, 60).until(ec.element_to_be_clickable((By.CSS_SELECTOR, "input.md-search__input")))
    box.click()
    box.clear()
    box.send_keys(query)
    last, stable, deadline = None, 0, time.monotonic() + 60
    while time.monotonic() < deadline and stable < 4:
        time.sleep(0.25)
        links = browser.execute_script(
            "return Array.from(document.querySelectorAll('.md-search-result__item > a')).map(a => a.getAttribute('href'))")
        stable = stable + 1 if links and links == last else 0
        last = links
    return [link.split("?")[0] for link in last or []]


def screenshot(browser, name: str, tmp_path_factory, full_height: int | None = None) -> Path:
    folder = Path(os.environ.get("OPSPEC_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    if full_height:
        browser.set_window_size(1280, full_height)
    shot = folder / f"{name}.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    browser.set_window_size(1280, 900)
    return shot


@pytest.mark.parametrize("query", SPELLINGS)
def test_search_ranks_the_op_page_first_for_every_spelling(served, browser, query):
    results = search(browser, served, query)
    assert results, f"no results for {query}"
    assert results[0].endswith("generated/ops/aten-add.Tensor/"), (query, results[:5])


def test_search_finds_an_op_by_part_of_its_name_and_its_page_opens(served, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    results = search(browser, served, "var_mean")
    assert results[0].endswith("generated/ops/aten-var_mean.correction/")
    browser.find_element(By.CSS_SELECTOR, ".md-search-result__item > a").click()
    heading = _wait()(browser, 30).until(ec.presence_of_element_located((By.CSS_SELECTOR, "article h1")))
    assert heading.text.strip() == "aten::var_mean.correction"
    article = browser.find_element(By.CSS_SELECTOR, "article").text
    assert "Decomposition" in article and "aten::mean.dim" in article and "History" in article


def _broken_identifiers(browser) -> list[str]:
    """Names in tables that the browser laid out on more than one line: code, marked names, one-word cells."""
    return browser.execute_script("""
        const lines = el => {
            const range = document.createRange();
            range.selectNodeContents(el);
            const boxes = Array.from(range.getClientRects()).filter(r => r.width > 0 && r.height > 0);
            if (!boxes.length) return 0;
            const top = Math.min(...boxes.map(r => r.top)), bottom = Math.max(...boxes.map(r => r.bottom));
            const tallest = Math.max(...boxes.map(r => r.height));
            return bottom - top > 1.5 * tallest ? 2 : 1;  // taller than one line: it wrapped
        };
        const broken = [];
        document.querySelectorAll('article table code, article table .opspec-id').forEach(el => {
            if (lines(el) > 1) broken.push(el.textContent);
        });
        document.querySelectorAll('article td').forEach(td => {
            const text = td.textContent.trim();
            if (text && !/\\s/.test(text) && lines(td) > 1) broken.push(text);
        });
        return broken;""")


def test_op_page_shows_whole_schema_unbroken_names_and_the_example(served, browser, tmp_path_factory):
    from selenium.webdriver.common.by import By

    browser.get(served + "generated/ops/aten-convolution/")
    schema = browser.find_element(By.CSS_SELECTOR, "pre.opspec-schema code")
    assert schema.text.replace("\n", " ").endswith("SymInt[] output_padding, SymInt groups) -> Tensor")
    assert browser.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth + 1", schema)
    assert _broken_identifiers(browser) == []
    article = browser.find_element(By.CSS_SELECTOR, "article").text
    for heading in ("What it computes", "Arguments", "Dtypes and devices", "Example", "Decompositions", "Equivalents"):
        assert heading in article
    assert "[[[[ 8., 12.]," in article  # the output torch computed when the site was built
    browser.get(served + "generated/ops/aten-add.Tensor/")
    assert _broken_identifiers(browser) == []
    screenshot(browser, "op-page", tmp_path_factory, full_height=2000)


def test_an_erratum_shows_the_corrected_text_strikes_the_sealed_text_and_links_its_row(served, browser):
    from selenium.webdriver.common.by import By

    # 2027.01 was sealed with the mistake; the newest version was released with the corrected text
    browser.get(served + "generated/2027.01/ops/aten-pow.Tensor_Tensor/")
    [note] = [n for n in browser.find_elements(By.CSS_SELECTOR, "article .opspec-erratum")
              if "integer dtypes reject negative exponents" in n.text]
    struck = note.find_element(By.TAG_NAME, "del")
    assert struck.text == "integer dtypes reject negative exponents"
    assert browser.execute_script("return getComputedStyle(arguments[0]).textDecorationLine", struck) == "line-through"
    assert any("without raising" in ins.text for ins in browser.find_elements(By.CSS_SELECTOR, "article ins"))
    link = note.find_element(By.CSS_SELECTOR, "a")
    href = link.get_attribute("href")
    assert "/generated/ops/aten-pow.Tensor_Tensor/#" in href  # the rows are on the op's newest page
    browser.get(href)
    row = browser.find_element(By.ID, href.split("#", 1)[1])  # the row's anchor, in the special-case table
    assert "Integer tensors to negative integer powers" in row.find_element(By.XPATH, "./ancestor::tr").text


def test_op_index_filters_by_category_and_status(served, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(served + "generated/ops/")
    table = browser.find_element(By.CSS_SELECTOR, "article table")  # the core ops
    total = len([r for r in table.find_elements(By.CSS_SELECTOR, "tbody tr") if r.is_displayed()])
    assert total == len(load.load_opset().ops)  # every core op of the newest version
    Select(browser.find_element(By.CSS_SELECTOR, ".opspec-filter select[aria-label=Category]")).select_by_value("reduction")
    shown = [r for r in table.find_elements(By.CSS_SELECTOR, "tbody tr") if r.is_displayed()]
    assert 0 < len(shown) < total
    assert all(r.find_elements(By.CSS_SELECTOR, "td")[1].text == "reduction" for r in shown)
    Select(browser.find_element(By.CSS_SELECTOR, ".opspec-filter select[aria-label=Status]")).select_by_value("active")
    both = [r for r in table.find_elements(By.CSS_SELECTOR, "tbody tr") if r.is_displayed()]
    assert [r.text for r in both] == [r.text for r in shown if r.find_elements(By.CSS_SELECTOR, "td")[2].text == "active"]
    assert _broken_identifiers(browser) == []
    # The check sees a break: a name without the site's styling, in a cell too narrow for it.
    browser.execute_script("""
        const table = document.createElement('table'); table.id = 'probe';
        table.innerHTML = '<tbody><tr><td style="width: 3em; max-width: 3em">convolution-pooling</td></tr></tbody>';
        document.querySelector('article').appendChild(table);""")
    assert _broken_identifiers(browser) == ["convolution-pooling"]


def test_scoreboard_heat_map_renders_and_links_to_the_case(served, browser, tmp_path_factory):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    browser.get(served + "generated/scoreboard/")
    reports = sorted((ROOT / "conformance" / "results").glob("*.json"))
    summary = browser.find_element(By.CSS_SELECTOR, "article table").text
    for report in reports:
        assert report.stem.split("-")[0] in summary
    cells = browser.find_elements(By.CSS_SELECTOR, ".opspec-heatmap a.hm")
    assert len(cells) >= 193 * len(reports)
    sizes = browser.execute_script("return arguments[0].map(c => [c.offsetWidth, c.offsetHeight])", cells[:50])
    assert all(w >= 8 and h >= 8 for w, h in sizes)  # drawn, not collapsed
    colours = set(browser.execute_script("return arguments[0].map(c => getComputedStyle(c).backgroundColor)", cells))
    assert len(colours) >= 2  # pass and xfail at least
    assert _broken_identifiers(browser) == []
    screenshot(browser, "scoreboard", tmp_path_factory, full_height=1700)
    xfail = browser.find_element(By.CSS_SELECTOR, ".opspec-heatmap a.hm-xfail")
    title = xfail.get_attribute("title")
    assert ": worst xfail (" in title and " — " in title  # the worst status, its dtype and the expectation's reason
    assert "declared dtypes run" in title  # and how many of the op's dtypes the report covers
    browser.get(xfail.get_attribute("href"))
    target = browser.current_url.split("#")[1]
    heading = _wait()(browser, 30).until(ec.presence_of_element_located((By.ID, target)))
    section = heading.find_element(By.XPATH, "./ancestor-or-self::p").text  # the case's paragraph: op, dtype, status
    assert "xfail" in section
    assert "Expectation's reason:" in browser.find_element(By.CSS_SELECTOR, "article").text
    assert _broken_identifiers(browser) == []  # the report page's table
    browser.get(served + "generated/decompositions/")
    assert _broken_identifiers(browser) == []


def test_hostile_proposal_renders_inert(served_hostile, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    browser.get(served_hostile + "generated/proposals/0002/")
    article = _wait()(browser, 30).until(ec.presence_of_element_located((By.CSS_SELECTOR, "article")))
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    text = article.text
    assert "<script>window.__pwned = 1</script>" in text  # shown, not run
    assert article.find_elements(By.CSS_SELECTOR, "script, iframe, img, svg") == []
    hrefs = [a.get_attribute("href") or "" for a in article.find_elements(By.CSS_SELECTOR, "a")]
    assert not [h for h in hrefs if not h.startswith(("http://", "https://"))]
    for a in article.find_elements(By.TAG_NAME, "a"):
        if "click me" in a.text:
            pytest.fail("the javascript: link survived")
    assert browser.execute_script("return typeof window.__pwned") == "undefined"


def test_real_models_table_fits_its_columns_at_1400_px(served, browser):
    from selenium.webdriver.common.by import By

    browser.set_window_size(1400, 900)
    try:
        browser.get(served + "generated/models/")
        table = browser.find_element(By.CSS_SELECTOR, "article table")
        assert len(table.find_elements(By.CSS_SELECTOR, "thead th")) == 7
        # every column on screen: the box Material wraps tables in does not scroll, and every header ends inside it
        # (the page's earlier layout showed 4 of the 7 here, the rest behind a horizontal scroll)
        box = "const w = arguments[0].closest('.md-typeset__scrollwrap') || arguments[0].parentElement;"
        assert browser.execute_script(box + "return w.scrollWidth <= w.clientWidth + 1", table)
        hidden = browser.execute_script(box + """const edge = w.getBoundingClientRect().right;
            return Array.from(arguments[0].querySelectorAll('thead th'))
                .filter(th => th.getBoundingClientRect().right > edge + 1).map(th => th.textContent.trim());""", table)
        assert hidden == []
        assert _broken_identifiers(browser) == []
    finally:
        browser.set_window_size(1280, 900)


def test_scoreboard_history_and_the_op_index_worst_result(served, browser):
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    history = ROOT / "conformance" / "results" / "history"
    runs = {folder.name: len(list(folder.glob("*.json"))) for folder in history.iterdir() if folder.is_dir()}
    browser.get(served + "generated/scoreboard/")
    # the history table closes a page of some 800 kB: wait until the browser holds every row of it, as a reader
    # scrolling down would, and if it never does, say what the page in the browser and the page on disk hold
    sparks = "svg.opspec-spark"

    def every_row(b) -> bool:
        return len(b.find_elements(By.CSS_SELECTOR, sparks)) >= len(runs)
    try:
        _wait()(browser, 60).until(every_row)
    except TimeoutException:
        browser.refresh()  # once more from the server; then the failure says what each side holds
        with contextlib.suppress(TimeoutException):
            _wait()(browser, 60).until(every_row)
    if not every_row(browser):
        on_disk = (BUILT[served] / "generated" / "scoreboard" / "index.html").read_text(encoding="utf-8")
        pytest.fail(f"{browser.current_url} ({browser.title!r}): {len(browser.find_elements(By.CSS_SELECTOR, sparks))} "
                    f"sparklines in the browser, {browser.page_source.count('opspec-spark')} in its source, "
                    f"{on_disk.count('opspec-spark')} in the built page; {len(runs)} backends have history")
    drawn = browser.execute_script("""
        return Array.from(document.querySelectorAll('svg.opspec-spark')).map(svg => {
            const row = svg.closest('tr');
            return [row.querySelector('td a').textContent.trim(), svg.querySelectorAll('circle').length];
        });""")
    assert dict(drawn) == runs  # one sparkline per backend and device, one point per archived run
    link = browser.find_element(By.CSS_SELECTOR, "a[href*='history/inductor-cpu']")
    browser.get(link.get_attribute("href"))
    article = browser.find_element(By.CSS_SELECTOR, "article").text
    assert "inductor-cpu: history" in article and "new failure" in article
    browser.get(served + "generated/ops/")
    from selenium.webdriver.support import expected_conditions as ec

    # the filters are built by the page's script once the table is there: wait for them, as a reader does
    select = Select(_wait()(browser, 60).until(ec.presence_of_element_located(
        (By.CSS_SELECTOR, ".opspec-filter select[aria-label='Worst result']"))))
    options = [o.text for o in select.options]
    statuses = [o for o in options if o != "all"]
    assert statuses and not [o for o in statuses if " " in o.strip() and o != "not run"]  # statuses only
    status = next((o for o in ("fallback", "xfail") if o in statuses), statuses[0])  # whichever the reports give
    select.select_by_value(status)
    table = browser.find_element(By.CSS_SELECTOR, "article table")
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    shown = [r for r in rows if r.is_displayed()]
    assert shown and len(shown) < len(rows)
    assert all(r.find_elements(By.CSS_SELECTOR, "td")[4].text.startswith(f"{status} ") for r in shown)
