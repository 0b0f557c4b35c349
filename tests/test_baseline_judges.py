"""The three local baselines on inputs whose answers are known."""

from __future__ import annotations

import asyncio

import pytest

from groundjudge.judges import SpecError, build_judge, describe_judges, parse_spec
from groundjudge.judges.quip import ngram_overlap
from groundjudge.judges.span import find_span
from groundjudge.types import Example

CONTEXT = ("The Tenancy Board of Norland hears disputes about deposits. "
           "A landlord must return the deposit within 30 days after the lease ends.")


def example(answer: str, **kw) -> Example:
    return Example(id="x", context=[CONTEXT], answer=answer, **kw)


def judge(spec: str, answer: str):
    j, _ = build_judge(spec)
    return asyncio.run(j.judge(example(answer))).verdict


def test_ngram_overlap_by_hand():
    # "abcd" vs context "abxd": 2-grams ab, bc, cd -> only "ab" is in the context
    assert ngram_overlap("abcd", "abxd", 2) == pytest.approx(1 / 3)
    assert ngram_overlap("Hello  World", "hello world!", 3) == 1.0   # case and whitespace folded
    assert ngram_overlap("short", "a short one", 21) == 1.0          # shorter than n: whole-string match
    assert ngram_overlap("other", "a short one", 21) == 0.0


def test_quip_scores_quotes_high_and_paraphrase_low():
    quoted = judge("quip:n=21,threshold=0.5", "A landlord must return the deposit within 30 days after the lease ends.")
    changed = judge("quip:n=21,threshold=0.5", "A tenant may keep the deposit for 90 days after the lease ends.")
    assert quoted.score == 1.0 and quoted.label == "grounded"
    assert changed.score < 0.3 and changed.label == "ungrounded"
    assert [c.claim.text for c in quoted.claims] == [quoted.claims[0].claim.text]


def test_span_match_normalised_and_exact():
    assert find_span("the Tenancy Board", "tenancy board, of Norland", "normalized")
    assert not find_span("Tenancy Boar", "the Tenancy Board", "normalized")   # token boundaries
    assert not find_span("tenancy board", "the Tenancy Board", "exact")
    v = judge("span", "30 days")
    assert v.label == "grounded" and v.claims[0].evidence.text == "30 days"
    assert judge("span", "60 days").label == "ungrounded"
    long = judge("span:max_tokens=3", "within thirty days after the lease")
    assert long.label == "abstain" and long.abstain_reason == "answer_too_long"


@pytest.mark.slow
def test_cosine_on_the_packaged_minilm():
    supported = judge("cosine:threshold=0.6", "Deposits must be returned by the landlord within 30 days of the lease ending.")
    unrelated = judge("cosine:threshold=0.6", "The court awarded punitive damages for trademark infringement.")
    assert supported.score > 0.75 > unrelated.score
    assert supported.label == "grounded" and unrelated.label == "ungrounded"
    assert supported.claims[0].evidence.text.startswith("A landlord must return")
    assert "all-MiniLM-L6-v2" in supported.path


def test_specs_are_validated():
    assert parse_spec("quip:n=21, agg=min") == ("quip", {"n": "21", "agg": "min"})
    j, spec = build_judge("quip:n=7")
    assert j.n == 7 and spec.settings["n"] == 7
    for bad in ("nosuch", "quip:size=3", "quip:n=abc", "quip:agg=median", "quip:n"):
        with pytest.raises(SpecError):
            build_judge(bad)
    names = {row["name"] for row in describe_judges()}
    assert {"quip", "cosine", "span"} <= names
