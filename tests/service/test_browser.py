"""The web page in a real headless Chromium (Debian's ``chromium`` + ``chromium-driver``,
driven by Selenium): ask the demo question, see the steps, the answer and the SPARQL; take
a screenshot (``$NAVQA_TEST_ARTIFACTS/serve-page.png``)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait
from serve_harness import DEMO_ANSWER, DEMO_QUESTION, Served

pytestmark = [pytest.mark.postgres, pytest.mark.ontop, pytest.mark.slow]


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    binary = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    assert binary and driver, ("Debian's chromium and chromium-driver are needed "
                               "(scripts/bootstrap.sh installs them)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1280,1600", "--disable-gpu"):
        opts.add_argument(arg)
    b = webdriver.Chrome(service=Service(executable_path=driver), options=opts)
    try:
        yield b
    finally:
        b.quit()


def test_ask_on_the_page(served: Served, browser: webdriver.Chrome,
                         artifacts_dir: Path) -> None:
    browser.get(served.url + "/")
    assert browser.title == "navqa"
    box = browser.find_element(By.ID, "question")
    box.send_keys(DEMO_QUESTION)
    browser.find_element(By.ID, "ask").click()
    wait = WebDriverWait(browser, 300)
    wait.until(ec.text_to_be_present_in_element((By.ID, "answer"), DEMO_ANSWER))
    sparql = browser.find_element(By.ID, "sparql").text
    assert "rail:operatedBy" in sparql and "SELECT" in sparql
    steps = [li.get_attribute("data-type")
             for li in browser.find_elements(By.CSS_SELECTOR, "#steps > li")]
    assert steps[0] == "MentionsExtracted" and "QueryExecuted" in steps
    assert steps.index("Linked") < steps.index("SubgraphsReranked") < steps.index(
        "QuerySynthesized") < steps.index("QueryExecuted")
    chosen = browser.find_element(By.CSS_SELECTOR, "#steps li[data-type=SubgraphsReranked]")
    assert "Company" in chosen.text and "operatedBy" in chosen.find_element(
        By.CSS_SELECTOR, "pre.subgraph").text
    cells = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "#result td")]
    assert DEMO_ANSWER in cells
    assert "high" in browser.find_element(By.ID, "confidence").text
    link = browser.find_element(By.ID, "query-link").get_attribute("href")
    assert link and "/query?" in link
    shot = artifacts_dir / "serve-page.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    # the query in `navqa sparql` form, run from its own page
    browser.get(link)
    assert "navqa sparql --vkg demo" in browser.find_element(By.ID, "command").text
    browser.find_element(By.ID, "run").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "result"), DEMO_ANSWER))


def test_empty_answer_shows_its_triage(served: Served, browser: webdriver.Chrome) -> None:
    browser.get(served.url + "/")
    browser.find_element(By.ID, "question").send_keys(
        "Which company currently operates the Zebra Moon Line?")
    browser.find_element(By.ID, "ask").click()
    wait = WebDriverWait(browser, 300)
    wait.until(ec.visibility_of_element_located((By.ID, "triage-box")))
    assert "Zebra Moon Line" in browser.find_element(By.ID, "triage").text
    assert "returned nothing" in browser.find_element(By.ID, "answer").text


def test_lint_findings_are_marked_in_the_sparql(served: Served,
                                                browser: webdriver.Chrome) -> None:
    q = ("PREFIX rail: <http://example.org/navqa/rail#>\n"
         "SELECT ?l WHERE { ?o rail:operatesLine ?l }")
    browser.get(served.url + "/query?" + urlencode({"query": q}))
    WebDriverWait(browser, 120).until(
        ec.presence_of_element_located((By.CSS_SELECTOR, "#sparql mark.lint-error")))
    mark = browser.find_element(By.CSS_SELECTOR, "#sparql mark.lint-error")
    assert mark.text == "rail:operatesLine"
    assert "unmapped-term" in (mark.get_attribute("title") or "")
    assert "rail:runsOnLine" in browser.find_element(By.ID, "lint").text


def test_audit_page(served: Served, browser: webdriver.Chrome) -> None:
    browser.get(served.url + "/audit")
    assert "Coverage" in browser.find_element(By.ID, "coverage").text
    assert "rail:operatesLine" in browser.find_element(By.ID, "unmapped").text
