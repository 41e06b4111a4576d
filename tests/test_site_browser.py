"""The built site in headless Chromium: search finds an op, its page opens, a hostile proposal stays inert."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from opspec_fixtures import payload_proposal, write_workspace

from opspec.reports.site.build import build, serve_in_thread
from opspec.spec.workspace import Workspace

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = "/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
pytest.importorskip("material", reason="mkdocs-material is not installed")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="chromium and chromium-driver are not installed")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = write_workspace(tmp_path_factory.mktemp("browser") / "repo")
    (root / "proposals" / "0002-payload.md").write_text(payload_proposal())
    result = build(Workspace(root))
    httpd, url = serve_in_thread(result.out)
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
                 "--disable-dev-shm-usage", "--window-size=1280,900", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def test_search_finds_an_op_and_its_page_opens(served, browser, tmp_path_factory):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 30)
    browser.get(served)
    box = wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, "input.md-search__input")))
    box.click()
    box.send_keys("var_mean")
    link = wait.until(ec.element_to_be_clickable(
        (By.CSS_SELECTOR, ".md-search-result__item a[href*='aten-var_mean.correction']")))
    link.click()
    heading = wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "article h1")))
    assert heading.text.strip().startswith("aten::var_mean.correction")
    article = browser.find_element(By.CSS_SELECTOR, "article").text
    assert "Decomposition" in article and "aten::mean.dim" in article and "History" in article
    shots = Path(os.environ.get("OPSPEC_ARTIFACTS") or tmp_path_factory.mktemp("screenshots"))
    shots.mkdir(parents=True, exist_ok=True)
    shot = shots / "op-page.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 1000
    print(f"screenshot: {shot}")


def test_hostile_proposal_renders_inert(served, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(served + "generated/proposals/0002/")
    article = WebDriverWait(browser, 30).until(ec.presence_of_element_located((By.CSS_SELECTOR, "article")))
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
