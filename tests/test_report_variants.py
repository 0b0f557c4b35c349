"""The report's "Prompt variants" and "Verdict stability" sections, on a run written record by record.

Two ``direct`` judges differ only in their prompts (the system template's text differs); the second one judged
every answer three times (``repeats``). No model is called: the records are written as a run would write them.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from test_report import HOSTILE
from test_report_browser import browser  # noqa: F401  (the headless-browser fixture)

from groundjudge.cli import main
from groundjudge.report.compare import compare
from groundjudge.report.variants import (
    delta_text,
    disagreements,
    shorten,
    stability_rows,
    template_diffs,
    variant_rows,
    verdict_reason,
)
from groundjudge.runs.records import RecordWriter, read_records
from groundjudge.runs.stability import fleiss_kappa
from groundjudge.runs.summary import summarize
from groundjudge.types import (
    Claim,
    ClaimVerdict,
    DatasetInfo,
    Example,
    JudgeResult,
    JudgeSpec,
    LLMCall,
    PromptTemplate,
    ResultRecord,
    RunHeader,
    Verdict,
)

BASE, STRICT = "direct:model=openai/m,prompts=base", "direct:model=openai/m,prompts=strict"
USER = "<answer>{{ answer }}</answer>\n"
SYSTEM_BASE = "You check answers against documents.\nBe fair to the answer.\nReply in JSON.\n"
SYSTEM_STRICT = "You check answers against documents.\nFlag any detail that differs.\nReply in JSON.\n"
LONG_ANSWER = "Rent of 150 crowns is due on day 1 of each month. " + "The tenant also agrees to many things. " * 12
IDS = [f"e{i:02d}" for i in range(12)]
GOLD = {i: "grounded" if n % 2 == 0 else "ungrounded" for n, i in enumerate(IDS)}
# A errs on e01 and e03 and abstains on e06; B errs on e08: they disagree on e01, e03, e06 and e08
PRED_A = {**GOLD, "e01": "grounded", "e03": "grounded", "e06": "abstain"}
PRED_B = {**GOLD, "e08": "ungrounded"}
# B's three repeats: they flip on e02, e05 and e08
REPEATS_B = {i: [PRED_B[i]] * 3 for i in IDS}
REPEATS_B.update({"e02": ["grounded", "ungrounded", "grounded"], "e05": ["ungrounded", "ungrounded", "grounded"],
                  "e08": ["ungrounded", "grounded", "ungrounded"]})


def _spec(spec: str, prompts: str, system: str, extra: dict[str, str] | None = None) -> JudgeSpec:
    files = {"direct.system.j2": system, "direct.user.j2": USER, **(extra or {})}
    origin = {"direct.system.j2": f"prompts/{prompts}", "direct.user.j2": "built-in",
              **{name: f"prompts/{prompts}" for name in extra or {}}}
    return JudgeSpec(spec=spec, name="direct", settings={"model": "openai/m", "prompts": prompts},
                     templates={"direct": PromptTemplate(hash=f"hash-{prompts}", files=files, origin=origin)})


def _example(i: str) -> Example:
    answer = {"e01": LONG_ANSWER, "e03": HOSTILE}.get(i, f"Answer {i}: rent is due on day 1.")
    return Example(id=i, question=f"When is rent due ({i})?", answer=answer, label=GOLD[i],
                   context=("Rent of 100 crowns is due on day 1 of each month.",))


def _call(parsed: dict | None, repeat: int = 0) -> LLMCall:
    return LLMCall(model="openai/m", template="direct", template_hash="h", prompt_hash="p", messages=(),
                   parsed=parsed, input_tokens=100, output_tokens=20, latency_s=0.5, repeat=repeat)


def _result_a(i: str) -> JudgeResult:
    label = PRED_A[i]
    if label == "abstain":
        return JudgeResult(verdict=Verdict(example_id=i, label="abstain", abstain_reason="provider_error: timeout",
                                           path="llm:openai/m"), latency_s=1.0)
    reasoning = {"e03": {"REASONING": ["The court is named.", "It hears disputes."]}}.get(
        i, {"reasoning": f"All of {i} matches the lease.", "verdict": label})
    return JudgeResult(verdict=Verdict(example_id=i, label=label, score=0.9 if label == "grounded" else 0.1,
                                       path="llm:openai/m"), calls=(_call(reasoning),), latency_s=0.5)


def _result_b(i: str) -> JudgeResult:
    label = PRED_B[i]
    claims = (ClaimVerdict(claim=Claim(text="rent"), label="supported", reason="stated in clause 1"),)
    if label == "ungrounded":
        claims += (ClaimVerdict(claim=Claim(text="amount"), label="contradicted", reason=f"{i}: the amount differs"),)
    repeats = tuple(Verdict(example_id=i, label=lab, path="llm:openai/m") for lab in REPEATS_B[i])
    return JudgeResult(verdict=Verdict(example_id=i, label=label, score=0.8 if label == "grounded" else 0.2,
                                       claims=claims, path="llm:openai/m"),
                       calls=tuple(_call({"reasoning": "checked"}, r) for r in range(3)), latency_s=1.5,
                       repeats=repeats)


def write_run(run_dir) -> None:
    """records.jsonl of a run: header, then A's and B's result on every example."""
    header = RunHeader(run_id="variants-test", started_at="2026-01-01T00:00:00Z",
                       judges=(_spec(BASE, "base", SYSTEM_BASE),
                               _spec(STRICT, "strict", SYSTEM_STRICT, {"_checklist.j2": "- amounts\n- dates\n"})),
                       dataset=DatasetInfo(files=("rent.jsonl",), formats=("native",), n=len(IDS), hash="0" * 64))
    with RecordWriter(run_dir / "records.jsonl") as writer:
        writer.write(header)
        for spec, result in ((BASE, _result_a), (STRICT, _result_b)):
            for i in IDS:
                writer.write(ResultRecord(judge=spec, example=_example(i), result=result(i)))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The run, its report (report.md, report.html) and the comparison behind it."""
    root = tmp_path_factory.mktemp("variants")
    run, out = root / "run", root / "report"
    write_run(run)
    assert main(["report", str(run), "--out", str(out)]) == 0
    return run, out, compare([run])


def page_data(out) -> dict:
    page = (out / "report.html").read_text(encoding="utf-8")
    return json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.DOTALL)[1])


def section(markdown: str, heading: str) -> str:
    return markdown.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_the_summary_finds_the_pair(report):
    run, _, comparison = report
    (entry,) = summarize(read_records(run / "records.jsonl"))["variants"]
    assert (entry["a"], entry["b"], entry["differs"]) == (BASE, STRICT, ["prompts"])
    assert entry["disagree"] == ["e01", "e03", "e06", "e08"]
    (row,) = variant_rows(comparison)
    assert (row["a"], row["b"], row["n"], row["n_disagree"]) == (BASE, STRICT, 12, 4)
    assert row["metrics"]["balanced_accuracy"]["delta"] == pytest.approx(11 / 12 - 0.75)
    assert row["cells"][4] == delta_text(entry["metrics"]["balanced_accuracy"])
    assert row["cells"][4].startswith("+0.167 [")
    # B made three calls of 100 + 20 tokens per answer, A one (none when it abstained)
    assert row["cells"][7:9] == [f"+{300 - 100 * 11 / 12:.0f}", f"+{60 - 20 * 11 / 12:.0f}"]


def test_markdown_shows_the_variants_diff_disagreements_and_stability(report):
    _, out, _ = report
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert markdown.index("## McNemar") < markdown.index("## Prompt variants") < markdown.index("## Verdict stability")
    variants = section(markdown, "Prompt variants")
    row = next(line for line in variants.splitlines() if line.startswith(f"| {BASE} | {STRICT} |"))
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells[2:4] == ["prompts", "12"] and cells[4].startswith("+0.167 [") and cells[-1] == "4"
    # the template diff, in a fenced diff block inside the pair's <details>
    assert "<details><summary>" in variants and "2 template files differ, 4 disagreements" in variants
    assert "```diff" in variants
    assert "+Flag any detail that differs." in variants.splitlines()
    assert "-Be fair to the answer." in variants.splitlines()
    assert f"--- {BASE}: prompts/base/direct.system.j2" in variants
    assert "+- amounts" in variants.splitlines()            # the partial only B has
    # the disagreements, with both verdicts and reasons; untrusted text escaped, long answers shortened
    lines = {line.split(" | ")[0].strip("| "): line for line in variants.splitlines() if re.match(r"\| e\d\d ", line)}
    assert set(lines) == {"e01", "e03", "e06", "e08"}
    assert "provider_error: timeout" in lines["e06"] and "e08: the amount differs" in lines["e08"]
    assert "e01: the amount differs" in lines["e01"] and "All of e01 matches the lease." in lines["e01"]
    assert "The court is named. It hears disputes." in lines["e03"]
    assert "&lt;img src=x" in lines["e03"] and "<img" not in markdown and "</script>" not in markdown
    assert LONG_ANSWER not in markdown and shorten(LONG_ANSWER, 160) in lines["e01"]
    # stability: B's repeats flip on 3 of 12 answers
    stability = section(markdown, "Verdict stability")
    kappa = fleiss_kappa([REPEATS_B[i] for i in IDS])
    assert f"| {STRICT} | 3 | 12 | 0.250 | 3 | {kappa:.3f} |" in stability
    assert BASE not in stability


def test_markdown_lists_at_most_twenty_disagreements(tmp_path):
    many = [f"m{i:02d}" for i in range(30)]
    run = tmp_path / "run"
    header = RunHeader(run_id="many", started_at="2026-01-01T00:00:00Z",
                       judges=(_spec(BASE, "base", SYSTEM_BASE), _spec(STRICT, "strict", SYSTEM_STRICT)),
                       dataset=DatasetInfo(files=("x.jsonl",), formats=("native",), n=30, hash="1" * 64))
    with RecordWriter(run / "records.jsonl") as writer:
        writer.write(header)
        for spec, label in ((BASE, "grounded"), (STRICT, "ungrounded")):
            for i in many:
                verdict = Verdict(example_id=i, label=label, path="llm:openai/m")
                writer.write(ResultRecord(judge=spec, example=Example(id=i, answer="a", context=("c",),
                                                                      label="grounded"),
                                          result=JudgeResult(verdict=verdict)))
    assert main(["report", str(run), "--out", str(tmp_path / "out")]) == 0
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert sum(line.startswith("| m") for line in markdown.splitlines()) == 20
    assert "… and 10 more (report.html lists them all)." in markdown
    assert "## Verdict stability" not in markdown
    assert len(page_data(tmp_path / "out")["variants"]["pairs"][0]["disagree"]) == 30


def test_html_embeds_the_pairs_and_every_disagreement(report):
    _, out, _ = report
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="variants-section"' in page and "<img src=x" not in page and "</script><b>" not in page
    data = page_data(out)
    (pair,) = data["variants"]["pairs"]
    strings = data["strings"]
    assert (pair["a"], pair["b"]) == (BASE, STRICT) and pair["cells"][-1] == "4"
    assert [d["file"] for d in pair["diffs"]] == ["_checklist.j2", "direct.system.j2"]
    assert "+Flag any detail that differs.\n" in pair["diffs"][1]["text"]
    rows = {d["id"]: d for d in pair["disagree"]}
    assert list(rows) == ["e01", "e03", "e06", "e08"]
    assert strings[rows["e01"]["answer"]] == LONG_ANSWER                 # in full on the page
    assert strings[rows["e03"]["answer"]] == HOSTILE
    assert (rows["e06"]["a"]["label"], strings[rows["e06"]["a"]["reason"]]) == ("abstain", "provider_error: timeout")
    assert rows["e08"]["b"] == {"label": "ungrounded", "score": 0.2, "reason": rows["e08"]["b"]["reason"],
                                "right": False}
    assert strings[rows["e08"]["b"]["reason"]] == "e08: the amount differs"
    stability = next(t for t in data["tables"] if t["id"] == "stability")
    assert stability["keys"] == [STRICT] and stability["rows"][0][1:5] == ["3", "12", "0.250", "3"]


def test_verdict_reason_prefers_abstention_then_claims_then_reasoning():
    def result(label, claims=(), calls=(), reason=None):
        return JudgeResult(verdict=Verdict(example_id="x", label=label, claims=claims, abstain_reason=reason,
                                           path="p"), calls=calls)

    def claim(label, why):
        return ClaimVerdict(claim=Claim(text="c"), label=label, reason=why)

    assert verdict_reason(result("abstain", reason="too_long: 9000 tokens")) == "too_long: 9000 tokens"
    both = (claim("supported", "fine"), claim("contradicted", "wrong year"), claim("unverifiable", "not stated"))
    assert verdict_reason(result("ungrounded", both, (_call({"reasoning": "ignored"}),))) == "wrong year; not stated"
    calls = (_call({"reasoning": "first"}), _call({"reasoning": "last one"}))
    assert verdict_reason(result("grounded", (claim("supported", "fine"),), calls)) == "last one"
    assert verdict_reason(result("grounded", calls=(_call({"REASONING": ["a.", "b."]}),))) == "a. b."
    assert verdict_reason(result("grounded", calls=(_call({"verdict": "grounded"}),))) == ""
    assert verdict_reason(result("grounded", calls=(_call(None),))) == ""
    assert verdict_reason(result("grounded")) == ""


def test_template_diffs_name_each_judge_and_origin(report):
    _, _, comparison = report
    diffs = dict(template_diffs(comparison, BASE, STRICT))
    assert list(diffs) == ["_checklist.j2", "direct.system.j2"]        # direct.user.j2 is the same for both
    system = diffs["direct.system.j2"].splitlines()
    assert system[:2] == [f"--- {BASE}: prompts/base/direct.system.j2",
                          f"+++ {STRICT}: prompts/strict/direct.system.j2"]
    assert "-Be fair to the answer." in system and "+Flag any detail that differs." in system
    assert " You check answers against documents." in system
    assert diffs["_checklist.j2"].splitlines()[:2] == [f"--- {BASE}: (no _checklist.j2)",
                                                       f"+++ {STRICT}: prompts/strict/_checklist.j2"]
    assert template_diffs(comparison, BASE, BASE) == []
    assert [d["id"] for d in disagreements(comparison, STRICT, BASE)] == ["e01", "e03", "e06", "e08"]
    assert [r["key"] for r in stability_rows(comparison)] == [STRICT]


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(not (CHROMIUM and shutil.which("chromedriver")), reason="needs chromium and chromedriver")
def test_the_page_filters_the_disagreements(report, browser):  # noqa: F811  (the imported fixture)
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    _, out, _ = report
    browser.get((out / "report.html").as_uri())
    find = browser.find_element

    def shown() -> list[str]:
        return [tr.get_attribute("data-id") for tr in browser.find_elements(By.CSS_SELECTOR,
                                                                            "#variant-disagreements tbody tr")
                if tr.is_displayed()]

    assert shown() == ["e01", "e03", "e06", "e08"]
    assert find(By.ID, "variant-pairs").find_elements(By.CSS_SELECTOR, "tbody tr")
    assert browser.find_elements(By.CSS_SELECTOR, "#variants details.diff pre .diff-add")
    find(By.ID, "variants-search").send_keys("ONERROR")                 # the hostile answer, as text
    assert shown() == ["e03"] and find(By.ID, "variants-count").text.startswith("1 of 4")
    find(By.ID, "variants-search").clear()
    find(By.ID, "variants-search").send_keys("amount differs")          # B's reasons
    assert shown() == ["e01", "e03", "e08"] and find(By.ID, "variants-count").text.startswith("3 of 4")
    Select(find(By.ID, "variants-gold")).select_by_value("grounded")
    assert shown() == ["e08"]
    find(By.ID, "variants-search").clear()
    find(By.ID, "variants-search").send_keys(" ")                   # fires input: the text filter is off again
    assert shown() == ["e06", "e08"]
    Select(find(By.ID, "variants-pair")).select_by_value("0")
    assert shown() == ["e06", "e08"] and "A: " + BASE in find(By.ID, "variant-disagreements").text
    assert not browser.find_elements(By.CSS_SELECTOR, "#variants img, #variants b")
    assert browser.execute_script("return window.__xss === undefined")
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
