"""report.html in a real headless browser: Debian's chromium + chromedriver, driven by selenium.

Skipped only when chromium or chromedriver is not installed (.ci/run installs both).
"""

from __future__ import annotations

import json

import pytest
from browser import CHROMEDRIVER, CHROMIUM, chromium
from conftest import ROOT, cli, write_jsonl
from test_report import HOSTILE, hostile_rows

from groundjudge.runs.records import read_records
from groundjudge.report.compare import example_key

pytestmark = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER),
                                reason="needs Debian's chromium and chromium-driver (.ci/run installs them)")


@pytest.fixture
def browser():
    with chromium() as driver:
        yield driver


@pytest.fixture
def report(tmp_path, llm_server):
    """A run with two local judges and an LLM judge (scripted server) on QA data with a hostile answer."""
    data = write_jsonl(tmp_path / "qa.jsonl", hostile_rows())
    run = tmp_path / "run"
    spec = f"claims:model=openai/gpt-4o-mini,api_base={llm_server.openai_base},threshold=1.0"
    cli("run", str(data), "--judge", "quip:n=8", "--judge", "span", "--judge", spec, "--out", str(run), "--quiet")
    cli("report", str(run))
    return run, spec


def expected_counts(run) -> dict[str, int]:
    """How many examples each filter should show, from the records."""
    verdicts: dict[str, dict[str, str]] = {}
    gold: dict[str, str] = {}
    for record in read_records(run / "records.jsonl").results:
        key = example_key(record.example)
        verdicts.setdefault(key, {})[record.judge] = record.result.verdict.label
        gold[key] = record.example.label
    disagree = {k for k, v in verdicts.items() if len(set(v.values())) > 1}
    wrong = {k for k, v in verdicts.items() if any(label != gold[k] for label in v.values())}
    abstain = {k for k, v in verdicts.items() if "abstain" in v.values()}
    return {"all": len(verdicts), "disagree": len(disagree), "disagree+wrong": len(disagree & wrong),
            "wrong": len(wrong), "abstain": len(abstain)}


@pytest.mark.slow
def test_report_page_in_a_browser(browser, report, artifacts):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    run, spec = report
    browser.get((run / "report" / "report.html").as_uri())
    find, find_all = browser.find_element, browser.find_elements

    def shown() -> int:
        return len(find_all(By.CSS_SELECTOR, "#list .item"))

    # the page loads nothing: no console error, no resource fetched from anywhere
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    resources = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert all(name.startswith("data:") for name in resources), resources

    # the leaderboard shows every judge of summary.json with its balanced accuracy
    summary = json.loads((run / "summary.json").read_text())
    rows = find_all(By.CSS_SELECTOR, "#leaderboard tbody tr")
    assert [r.get_attribute("data-judge") for r in rows] and \
        {r.get_attribute("data-judge") for r in rows} == set(summary["judges"])
    for row in rows:
        stats = summary["judges"][row.get_attribute("data-judge")]
        cell = row.find_element(By.CSS_SELECTOR, "td[data-metric=balanced_accuracy]")
        assert float(cell.get_attribute("data-value")) == stats["balanced_accuracy"]
        assert cell.text.startswith(f"{stats['balanced_accuracy']:.3f}")
        assert row.find_element(By.CSS_SELECTOR, "td[data-metric=n_abstained]").text == str(stats["n_abstained"])
    names = [r.find_element(By.CSS_SELECTOR, "td[data-metric=judge]").text for r in rows]
    assert any("claims:model=openai/gpt-4o-mini" in n and "api_base" not in n for n in names)

    # filters: disagreements by default; each toggle shows what the records say it should
    counts = expected_counts(run)
    assert 0 < counts["disagree"] < counts["all"]
    assert find(By.ID, "f-disagree").is_selected()
    assert shown() == counts["disagree"]
    assert find(By.ID, "count").text.startswith(f"{counts['disagree']} of {counts['all']}")
    find(By.ID, "f-wrong").click()
    assert shown() == counts["disagree+wrong"]
    find(By.ID, "f-disagree").click()
    assert shown() == counts["wrong"]
    find(By.ID, "f-wrong").click()
    assert shown() == counts["all"]
    find(By.ID, "f-abstain").click()
    assert shown() == counts["abstain"]
    find(By.ID, "f-abstain").click()
    Select(find(By.ID, "f-type")).select_by_value("Misattributions")
    assert shown() == sum("-u" in item.get_attribute("data-id") for item in find_all(By.CSS_SELECTOR, "#list .item"))
    assert 0 < shown() < counts["all"]
    Select(find(By.ID, "f-type")).select_by_value("")
    Select(find(By.ID, "f-judge")).select_by_value(spec)
    find(By.ID, "f-abstain").click()            # the LLM judge never abstains here
    assert shown() == 0 and "No example" in find(By.ID, "list").text
    find(By.ID, "f-abstain").click()
    Select(find(By.ID, "f-judge")).select_by_value("")
    assert shown() == counts["all"]

    # an example in detail: evidence marked in its context, claims coloured by label, LLM calls
    item = next(i for i in find_all(By.CSS_SELECTOR, "#list .item") if i.get_attribute("data-id") == "q5-g")
    item.click()
    detail = find(By.ID, "detail")
    assert detail.find_element(By.TAG_NAME, "h3").text == "q5-g"
    context = detail.find_element(By.CSS_SELECTOR, ".text.doc")
    evidence = context.find_elements(By.CSS_SELECTOR, "mark.ev")
    assert evidence and all(m.get_attribute("class").split()[1].startswith("j") for m in evidence)
    claims = detail.find_elements(By.CSS_SELECTOR, ".verdict mark.claim.supported, .verdict mark.claim.contradicted, "
                                                   ".verdict mark.claim.unverifiable")
    assert claims
    colour = browser.execute_script("return getComputedStyle(arguments[0]).backgroundColor", claims[0])
    assert colour not in ("rgba(0, 0, 0, 0)", "transparent")
    calls = detail.find_elements(By.CSS_SELECTOR, "details.call")
    assert calls and "claims_extract" in calls[0].find_element(By.TAG_NAME, "summary").text
    calls[0].find_element(By.TAG_NAME, "summary").click()
    assert calls[0].get_attribute("open") is not None
    assert "RAW RESPONSE" in calls[0].text.upper()
    browser.execute_script("document.getElementById('explorer-section').scrollIntoView()")
    browser.save_screenshot(str(artifacts / "report_example.png"))

    # the hostile answer is text on the page, not markup: no <img> is created, its handler never runs
    find(By.ID, "f-search").send_keys("onerror")
    assert shown() == 1
    find(By.CSS_SELECTOR, "#list .item").click()
    texts = [e.text for e in find_all(By.CSS_SELECTOR, "#detail .text")]
    assert HOSTILE in texts
    assert not find_all(By.CSS_SELECTOR, "#detail img, #detail b, #list img, #list b")
    assert browser.execute_script("return window.__xss === undefined")

    browser.execute_script("window.scrollTo(0, 0)")
    browser.save_screenshot(str(artifacts / "report.png"))
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


@pytest.mark.slow
def test_suspected_injections_are_marked_in_a_browser(browser, tmp_path, artifacts):
    """Findings of an attack battery: the spans marked in question, document and answer (as text), the badges,
    the filter, and the injection tables."""
    from selenium.webdriver.common.by import By
    from test_injection_report import HOSTILE_NOTE, JUDGE, hostile_battery, write_run

    run = write_run(tmp_path / "battery", hostile_battery())
    cli("report", str(run))
    browser.get((run / "report" / "report.html").as_uri())
    find, find_all = browser.find_element, browser.find_elements
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert find_all(By.ID, "table-injection-flags") and find_all(By.ID, "table-injection-attacks")

    assert len(find_all(By.CSS_SELECTOR, "#list .item")) == 2
    find(By.ID, "f-inj").click()                   # only the flagged example is left
    items = find_all(By.CSS_SELECTOR, "#list .item")
    assert [i.get_attribute("data-id") for i in items] == ["s0~rubric_claim"]
    assert items[0].find_element(By.CSS_SELECTOR, ".inj-badge").text == "⚠"
    items[0].click()
    detail = find(By.ID, "detail")
    assert detail.find_element(By.CSS_SELECTOR, ".ex-head .inj-badge").text == "⚠ injection suspected (strip)"
    answer = detail.find_element(By.CSS_SELECTOR, ".answer-text")
    marks = {m.text: m.get_attribute("title") for m in answer.find_elements(By.CSS_SELECTOR, "mark.inj")}
    assert marks[HOSTILE_NOTE] == "rubric_claim · rules:rubric_claim"
    encoded = "encoded_instruction · rules:encoded_instruction\ndecoded: ignore"
    assert any(t.startswith(encoded) for t in marks.values())
    question = detail.find_element(By.CSS_SELECTOR, ".text.question mark.inj")
    assert question.text == "Ignore!" and question.get_attribute("title").startswith("addresses_judge · ")
    assert detail.find_element(By.CSS_SELECTOR, ".text.doc mark.inj").text == "Clause"
    colour = browser.execute_script("return getComputedStyle(arguments[0]).backgroundColor", question)
    assert colour not in ("rgba(0, 0, 0, 0)", "transparent")
    verdict = detail.find_element(By.CSS_SELECTOR, f'.verdict[data-judge="{JUDGE}"]')
    assert "⚠ injection suspected (strip)" in verdict.text and len(verdict.find_elements(By.CSS_SELECTOR,
                                                                                           ".inj-list li")) == 4
    # the flagged span is an HTML injection attempt: it stays text
    assert not find_all(By.CSS_SELECTOR, "#detail img, #list img")
    assert browser.execute_script("return window.__inj === undefined")
    browser.execute_script("document.getElementById('explorer-section').scrollIntoView()")
    browser.save_screenshot(str(artifacts / "report_injection.png"))
