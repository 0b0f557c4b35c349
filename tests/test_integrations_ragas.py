"""RAGAS: ``ragas.evaluate`` runs groundjudge's ``Groundedness`` metric beside RAGAS's own ``faithfulness``.

The local judge (quip) needs no model. RAGAS's faithfulness needs an LLM: it talks to the scripted OpenAI server
(``llm_server``), which answers RAGAS's two prompts (statements, then their verdicts against the context) from the
oracle's word overlap, and groundjudge's own prompts (an LLM ``claims`` judge in the same evaluate) as usual.
Runs where the ``[ragas]`` extra is installed (the integrations environment, installed with
constraints/integrations.txt: see docs/integrations/environment.md).
"""

from __future__ import annotations

import json
import math
import re

import pytest

pytest.importorskip("ragas")

from groundjudge.integrations.ragas import Groundedness, metric_value  # noqa: E402
from groundjudge.integrations.verdicts import VerdictView  # noqa: E402
from groundjudge.testing.faults import Reply, Request  # noqa: E402
from groundjudge.testing.oracle import oracle_responder, supported  # noqa: E402

LEASE = ("A landlord must return a deposit within 21 days after the lease ends. "
         "The Tenancy Board hears disputes about deposits.")
ROWS = [
    {"user_input": "When must a deposit be returned?", "retrieved_contexts": [LEASE],
     "response": "A landlord must return a deposit within 21 days after the lease ends."},
    {"user_input": "Who hears deposit disputes?", "retrieved_contexts": [LEASE],
     "response": "The county court hears disputes about deposits and sets the rent cap for every flat."},
    {"user_input": "Who hears deposit disputes?", "retrieved_contexts": [LEASE],
     "response": "The Tenancy Board hears disputes about deposits."},
]


def _last_input(text: str) -> dict:
    """The JSON object after the last ``input:`` of a RAGAS prompt (the row it asks about)."""
    start = text.rindex("input:") + len("input:")
    return json.JSONDecoder().raw_decode(text[start:].lstrip())[0]


def ragas_responder(request: Request) -> Reply:
    """RAGAS's faithfulness prompts answered from word overlap; anything else by groundjudge's oracle."""
    text = request.text
    if "analyze the complexity of each sentence" in text:   # StatementGeneratorPrompt
        answer = _last_input(text)["answer"]
        statements = [s for s in re.split(r"(?<=\.)\s+", answer) if s]
        return Reply(content=json.dumps({"statements": statements}))
    if "judge the faithfulness of a series of statements" in text:   # NLIStatementPrompt
        row = _last_input(text)
        verdicts = [{"statement": s, "reason": "word overlap", "verdict": int(supported(s, row["context"]))}
                    for s in row["statements"]]
        return Reply(content=json.dumps({"statements": verdicts}))
    return oracle_responder(request)


@pytest.fixture
def ragas_env(monkeypatch):
    """No RAGAS usage analytics (a network call), and a dummy key for the scripted server."""
    monkeypatch.setenv("RAGAS_DO_NOT_TRACK", "true")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-scripted")


def test_groundedness_beside_faithfulness_in_one_evaluate(llm_server, ragas_env) -> None:
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, evaluate
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import Faithfulness

    llm_server.set_responder(ragas_responder)
    llm = LangchainLLMWrapper(ChatOpenAI(model="gpt-4o-mini", base_url=llm_server.openai_base, max_retries=0))
    llm_judge = f"claims:model=openai/gpt-4o-mini,api_base={llm_server.openai_base},timeout=5"
    metrics = [Faithfulness(llm=llm), Groundedness(judge="quip"),
               Groundedness(name="claims_grounded", judge=llm_judge, report="label")]
    result = evaluate(EvaluationDataset.from_list(ROWS), metrics=metrics, show_progress=False,
                      raise_exceptions=True)
    table = result.to_pandas()
    assert list(table["faithfulness"]) == [1.0, 0.0, 1.0]
    grounded = list(table["groundedness"])   # quip's score: the share of the answer's n-grams found in the context
    assert grounded[0] == grounded[2] == 1.0 and grounded[1] < 0.3
    assert list(table["claims_grounded"]) == [1.0, 0.0, 1.0]
    assert any("judge the faithfulness" in r.text for r in llm_server.requests)


def test_a_row_without_documents_is_nan_and_left_out_of_the_mean(ragas_env) -> None:
    from ragas import EvaluationDataset, evaluate

    rows = [ROWS[0], {**ROWS[1], "retrieved_contexts": []}, ROWS[1]]
    result = evaluate(EvaluationDataset.from_list(rows), metrics=[Groundedness(judge="quip", report="label")],
                      show_progress=False, raise_exceptions=True)
    values = list(result.to_pandas()["groundedness"])
    assert values[0] == 1.0 and math.isnan(values[1]) and values[2] == 0.0
    assert str(result) == "{'groundedness': 0.5000}"   # the mean over the two rows judged


def test_the_value_follows_the_report_setting() -> None:
    view = VerdictView(example_id="a", judge="cosine", kind="cosine", label="grounded", score=0.62, path="local")
    assert metric_value(view) == 0.62 and metric_value(view, "label") == 1.0
    assert math.isnan(metric_value(view.model_copy(update={"label": "abstain", "abstain_reason": "x"})))
    with pytest.raises(ValueError, match="report='both'"):
        Groundedness(report="both")
