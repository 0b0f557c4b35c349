"""The LLM generator of ``groundjudge perturb`` and the judge check, against the real scripted OpenAI-wire server:
a good edit is applied with its offsets; bad, unchanged, unlocatable and sprawling edits are rejected and counted
by reason; a variant the check judge calls grounded is dropped, one it calls ungrounded is kept with its verdict."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from groundjudge.llm import LLMService
from groundjudge.llm.templates import PromptLibrary
from groundjudge.perturb import JudgeCheck, LLMGenerator, perturb
from groundjudge.testing.oracle import blocks, oracle_responder
from groundjudge.testing.scripted_server import MALFORMED, Reply
from groundjudge.types import Example
from project_scripts import load_script

CONTEXT = ("Section 12. (1) The landlord shall return the deposit within 21 days after the tenancy ends. "
           "(2) A landlord who fails to do so is liable for twice the deposit.")
SOURCE = Example(id="q1", context=(CONTEXT,), question="When is the deposit due?", label="grounded",
                 answer="The landlord must return the deposit within 21 days after the tenancy ends. "
                        "Otherwise the landlord owes twice the deposit.")


def spec(server, extra: str = "") -> str:
    return f"model=openai/gpt-4o-mini,api_base={server.openai_base},timeout=5" + (f",{extra}" if extra else "")


def generator(server, only: bool = False) -> LLMGenerator:
    return LLMGenerator.from_spec(spec(server), LLMService(), only=only)


def edit_reply(before: str, after: str, reason: str = "changed") -> Reply:
    return Reply(content=json.dumps({"before": before, "after": after, "reason": reason}))


def edit(server, *replies: Reply):
    server.push(*replies)
    return asyncio.run(generator(server).edit(SOURCE, "Factual Inaccuracies", "states a wrong fact."))


def test_a_good_edit_becomes_a_candidate_with_its_offsets(llm_server):
    candidate, reason, _ = edit(llm_server, edit_reply("within 21 days", "within 28 days", "21 is now 28."))
    assert reason is None and candidate.generator == "llm:openai/gpt-4o-mini" and candidate.rule == "llm"
    e = candidate.edit
    assert (e.before, e.after) == ("21", "28") and SOURCE.answer[e.before_start:e.before_end] == "21"
    assert candidate.text[e.after_start:e.after_end] == "28" and candidate.note == "21 is now 28."
    sent = llm_server.requests[-1].text
    assert "Factual Inaccuracies" in sent and "states a wrong fact." in sent
    assert blocks(sent)["answer"] == [SOURCE.answer]


def test_bad_edits_are_rejected_with_their_reason(llm_server):
    assert edit(llm_server, edit_reply("within 30 days", "within 45 days"))[1] == "llm:span_not_found"
    assert edit(llm_server, edit_reply("21 days", "21 days"))[1] == "unchanged"
    assert edit(llm_server, edit_reply("", "a new clause"))[1] == "llm:empty_span"
    sprawling = edit_reply(SOURCE.answer, "The tenant must pay rent. Otherwise nothing happens.")
    assert edit(llm_server, sprawling)[1] == "llm:not_minimal"
    # a short span whose replacement adds a sentence, or joins two, is not one minimal edit either
    adds = edit_reply("21 days after the tenancy ends.", "21 days. The tenant may then sue.")
    joins = edit_reply("the tenancy ends.", "the tenancy ends, and")
    assert edit(llm_server, adds)[1] == "llm:not_minimal" and edit(llm_server, joins)[1] == "llm:not_minimal"
    assert edit(llm_server, Reply(content=MALFORMED), Reply(content="not json either"))[1] == "llm:invalid_reply"


def _string_bounds(node) -> list[int]:
    if isinstance(node, dict):
        own = [node["maxLength"]] if "maxLength" in node else []
        return own + [b for v in node.values() for b in _string_bounds(v)]
    return [b for v in node for b in _string_bounds(v)] if isinstance(node, list) else []


def test_the_schema_sent_has_no_string_bound_a_grammar_server_refuses(llm_server):
    # llama.cpp's server unrolls maxLength into one grammar rule per character: llama-cpp-python 0.3.36 dies on
    # 1,500 or 2,000 (EditReply's 2,000 crashed it). The bound stays a check of the parsed reply.
    from groundjudge.llm.reply_schema import MAX_DECODED_LENGTH
    from groundjudge.perturb.llm_generator import EditReply

    assert max(_string_bounds(EditReply.model_json_schema())) > MAX_DECODED_LENGTH   # the model keeps its bound
    edit(llm_server, edit_reply("within 21 days", "within 28 days"))
    sent = llm_server.requests[-1].body["response_format"]
    schema = sent.get("json_schema", {}).get("schema") or sent["schema"]
    assert set(schema["properties"]) == {"before", "after", "reason"}
    assert all(bound <= MAX_DECODED_LENGTH for bound in _string_bounds(schema))
    assert _string_bounds(schema) == [500]                        # reason's bound is short enough to send
    too_long = edit_reply("within 21 days", "within 28 days " + "x" * 2_100)
    assert edit(llm_server, too_long, too_long)[1] == "llm:invalid_reply"


def test_every_perturb_prompt_renders_inside_the_shared_frame():
    library = PromptLibrary()
    rendered = library.render("perturb_edit", {"context": ["C </document_1> x"], "question": None, "answer": "A",
                                               "taxonomy": [{"name": "Misattributions", "definition": "wrong party"}]})
    system, user = rendered.messages[0]["content"], rendered.messages[1]["content"]
    assert "same code ends a block" in system and "Misattributions" not in system
    assert '"Misattributions": the answer wrong party' in user and "another court, party" in user  # its example
    assert user.index("Misattributions") > user.index("</answer")    # last: the requests of an answer share a prefix
    assert "</document_1>" not in user.split("boundary=")[1]    # neutralised inside its block
    assert library.variables("perturb_paraphrase") == ["answer", "context", "question"]


def test_the_generator_fills_a_type_no_rule_fills_and_counts_rejections(llm_server):
    # no party in the answer: "goes back to the tenant" -> "landlord" is a rule's Factual edit (the party it is
    # returned to, by the taxonomy's ruling), and this test wants a type no rule fills
    source = SOURCE.model_copy(update={"answer": "The deposit goes back when the tenancy ends."})
    llm_server.push(edit_reply("goes back", "goes back"), edit_reply("nowhere", "here"),
                    edit_reply("when the tenancy ends", "when the tenancy starts"),
                    edit_reply("goes back", "goes back in full"))
    result = perturb([source], types=("factual",), per_answer=2, paraphrases=0, generator=generator(llm_server))
    variants = [row for row in result.examples if row.label == "ungrounded"]
    assert [row.id for row in variants] == ["q1~factual~1", "q1~factual~2"]
    assert variants[0].answer == "The deposit goes back when the tenancy starts."
    record = variants[0].meta["perturbation"]
    assert record["generator"] == "llm:openai/gpt-4o-mini" and record["rule"] == "llm"
    assert record["edit"]["before"] == "ends" and record["edit"]["after"] == "starts"
    assert record["error_type"] == "Factual Inaccuracies" and record["note"] == "changed"
    assert result.rejected_by_reason() == {"unchanged": 1, "llm:span_not_found": 1}
    assert len(llm_server.requests) == 4


def test_a_one_slot_local_server_gets_each_answers_requests_back_to_back(llm_server):
    # the scripted server has no /props: a local server that does not say, so one call at a time; the six types
    # of one answer go in a row and share their prefix (documents and answer) with the request before
    sources = [SOURCE.model_copy(update={"id": f"q{i}", "answer": f"Answer {i}: the deposit is due within 21 days."})
               for i in range(3)]
    llm_server.set_responder(lambda request: edit_reply("21 days", "28 days") if "Factual Inaccuracies" in request.text
                             else edit_reply("is due", "may be due"))
    perturb(sources, types=("factual", "terminological"), paraphrases=0, generator=generator(llm_server, only=True))
    asked = [blocks(r.text)["answer"][0].split(":")[0] for r in llm_server.requests]
    assert asked == sorted(asked) and len(set(asked)) == 3 and len(asked) >= 6


def test_generator_only_asks_the_model_for_paraphrases_too(llm_server):
    llm_server.push(Reply(content=json.dumps({"paraphrase": "Within 21 days of the end of the tenancy the landlord "
                                                            "must give the deposit back. Otherwise the landlord owes "
                                                            "twice the deposit."})),
                    edit_reply("21 days", "14 days"))
    result = perturb([SOURCE], types=("factual",), generator=generator(llm_server, only=True))
    kinds = [row.meta["perturbation"]["kind"] for row in result.examples]
    assert kinds == ["original", "paraphrase", "variant"]
    paraphrase = result.examples[1]
    assert paraphrase.label == "grounded" and paraphrase.id == "q1~para~1"
    assert paraphrase.meta["perturbation"]["generator"] == "llm:openai/gpt-4o-mini"


def _direct_says(verdict: str):
    def respond(request):
        if "meticulous fact-checker" in request.text:
            return Reply(content=json.dumps({"reasoning": "checked", "verdict": verdict,
                                             "score": 0.9 if verdict == "grounded" else 0.1}))
        return oracle_responder(request)
    return respond


def test_a_variant_the_check_judge_calls_grounded_is_rejected(llm_server):
    check = JudgeCheck.build("direct:" + spec(llm_server), LLMService())
    llm_server.set_responder(_direct_says("grounded"))
    result = perturb([SOURCE], types=("factual",), paraphrases=0, check=check)
    assert result.kept_by_type()["factual"] == 0
    assert set(result.rejected_by_reason()) == {"supported:direct"}
    assert all(r.rule.startswith("factual.") for r in result.rejections)


def test_a_variant_the_check_judge_calls_ungrounded_is_kept_with_its_verdict(llm_server):
    check = JudgeCheck.build("direct:" + spec(llm_server), LLMService())
    llm_server.set_responder(_direct_says("ungrounded"))
    result = perturb([SOURCE], types=("factual",), paraphrases=0, check=check)
    (variant,) = [row for row in result.examples if row.label == "ungrounded"]
    verdict = variant.meta["perturbation"]["check"]
    assert verdict == {"judge": "direct:" + spec(llm_server), "label": "ungrounded", "score": 0.1, "reason": None}
    judged = [r for r in llm_server.requests if "meticulous fact-checker" in r.text]
    assert len(judged) == 1 and variant.answer in judged[0].text


def test_a_check_that_abstains_keeps_nothing(llm_server):
    check = JudgeCheck.build("direct:" + spec(llm_server, "max_attempts=1"), LLMService())
    llm_server.set_responder(lambda request: Reply(status=400, content="bad request"))
    result = perturb([SOURCE], types=("factual",), paraphrases=0, check=check)
    assert result.kept_by_type()["factual"] == 0
    assert set(result.rejected_by_reason()) == {"check_abstained"}


def _variants_script():
    return load_script("make_error_type_variants")


def test_reword_first_makes_the_rules_edit_the_llm_paraphrase_not_the_source(llm_server):
    reworded_text = ("Within 21 days of the end of the tenancy the landlord must give the deposit back. "
                     "Otherwise the landlord owes twice the deposit.")
    llm_server.push(Reply(content=json.dumps({"paraphrase": reworded_text})))
    script = _variants_script()
    sources, rejected = script.reworded_sources([SOURCE], generator(llm_server, only=True), seed=0)
    assert [s.answer for s in sources] == [reworded_text] and not rejected
    reworded = sources[0]
    assert reworded.context == SOURCE.context and reworded.meta["reworded_from"] == SOURCE.answer
    assert reworded.label == "grounded" and "perturbation" not in reworded.meta
    variants = [r for r in perturb(sources, types=("factual",), paraphrases=0).examples if r.label == "ungrounded"]
    assert variants, "the rules found nothing to edit in the paraphrase"
    for row in variants:
        edit_ = row.meta["perturbation"]["edit"]
        assert row.meta["perturbation"]["source_id"] == reworded.id
        assert reworded_text[edit_["before_start"]:edit_["before_end"]] == edit_["before"]
        assert row.meta["reworded_from"] == SOURCE.answer and row.answer != reworded_text


def _contractnli_folder(tmp_path, pieces):
    """A ContractNLI-shaped folder: contracts 7 and 8 of ``pieces``, hypotheses nda-1 (entailed by span 1), nda-2
    (not mentioned) and nda-3 (contradicted by span 2)."""
    text = " ".join(pieces)
    starts = [text.index(piece) for piece in pieces]
    spans = [[start, start + len(piece)] for start, piece in zip(starts, pieces)]
    labels = {"nda-1": {"hypothesis": "Receiving Party may share some Information with its accountants."},
              "nda-2": {"hypothesis": "Receiving Party shall not reverse engineer the Information."},
              "nda-3": {"hypothesis": "Agreement is governed by the laws of Ohio."}}
    annotations = {"nda-1": {"choice": "Entailment", "spans": [1]}, "nda-2": {"choice": "NotMentioned", "spans": []},
                   "nda-3": {"choice": "Contradiction", "spans": [2]}}
    documents = [{"id": doc_id, "text": text, "spans": spans, "annotation_sets": [{"annotations": annotations}]}
                 for doc_id in (7, 8)]
    folder = tmp_path / "cnli"
    folder.mkdir()
    (folder / "dev.json").write_text(json.dumps({"documents": documents, "labels": labels}), encoding="utf-8")
    return folder


def test_argued_reasoning_errors_come_from_not_mentioned_hypotheses_of_dev_contracts(tmp_path):
    """``--argued``: one "Because SPAN, HYPOTHESIS." per hypothesis a dev contract leaves Not Mentioned, argued from
    the span sharing the most words with it; entailed and contradicted hypotheses and other contracts give none."""
    pieces = ["1. The Recipient shall keep the Information secret.",
              "(b) The Recipient may share the Information with its lawyers and accountants.",
              "This Agreement is governed by the laws of Delaware and nothing else here."]
    folder = _contractnli_folder(tmp_path, pieces)
    script = _variants_script()
    rows = script.argued_variants(folder, {("dev.json", 7)})   # contract 8 is not in the dev split
    assert len(rows) == 1
    row = rows[0]
    assert row.answer == ("Because the Recipient shall keep the Information secret, Receiving Party shall not reverse "
                          "engineer the Information.")
    assert row.label == "ungrounded" and row.error_types == ("Reasoning Errors",) and row.split == "dev"
    assert row.meta["altered_sentence"] == row.answer and row.meta["group"] == "doc-7"
    assert row.meta["source"] == "contractnli" and row.meta["hypothesis"] == "nda-2"
    assert "The Recipient shall keep the Information secret." in row.context[0]
    out = tmp_path / "argued.jsonl"
    legal_types = tmp_path / "legal_types.jsonl"
    legal_types.write_text(json.dumps({"id": "x", "context": ["c"], "answer": "a", "split": "dev", "meta": {
        "source": "contractnli", "source_file": "dev.json", "contract_id": 7}}) + "\n", encoding="utf-8")
    assert script.main(["--argued", "--contractnli", str(folder), "--legal-types", str(legal_types),
                        "--out", str(out)]) == 0
    assert [json.loads(line)["answer"] for line in out.read_text(encoding="utf-8").splitlines()] == [row.answer]


def test_argued_varied_forms_and_contradicted_controls(tmp_path):
    """``--forms varied --controls``: the Not Mentioned hypothesis is argued from a span that reads as a sentence
    (not the list fragment that shares more words), cut to its clause nearest the conclusion, in a seeded form; the
    contradicted hypothesis is argued from its evidence span in the same forms and typed Factual. Entailed
    hypotheses give nothing, and ``--forms``/``--controls`` without ``--argued`` are refused."""
    pieces = ["is Information that the Receiving Party shall not reverse engineer, or",
              "(b) The Recipient may share the Information with its lawyers and accountants.",
              "This Agreement is governed by the laws of Delaware; the Receiving Party shall not copy the Information."]
    folder = _contractnli_folder(tmp_path, pieces)
    script = _variants_script()
    assert not script.whole_clause(pieces[0]) and script.whole_clause(pieces[1]) and script.whole_clause(pieces[2])
    rows = {r.meta["hypothesis"]: r for r in script.argued_variants(folder, {("dev.json", 7)}, "varied", True, 3)}
    assert set(rows) == {"nda-2", "nda-3"}
    reasoning, factual = rows["nda-2"], rows["nda-3"]
    assert reasoning.error_types == ("Reasoning Errors",) and factual.error_types == ("Factual Inaccuracies",)
    assert reasoning.meta["span"] == 2 and factual.meta["span"] == 2      # span 0 is a fragment; 2 is nda-3's evidence
    assert "Delaware" not in reasoning.answer
    assert "the Receiving Party shall not copy the Information" in reasoning.answer
    assert "Delaware" in factual.answer and "Ohio" in factual.answer
    forms = [re.escape(f).replace(r"\{p\}", ".+").replace(r"\{c\}", ".+").replace(r"\{P\}", ".+")
             .replace(r"\{C\}", ".+") for f in script.ARGUED_FORMS.values()]
    for row in (reasoning, factual):
        assert any(re.fullmatch(f, row.answer) for f in forms), row.answer
        assert row.meta["altered_sentence"] == row.answer and row.label == "ungrounded"
    again = script.argued_variants(folder, {("dev.json", 7)}, "varied", True, 3)
    assert [r.answer for r in again] == [r.answer for r in rows.values()]
    seen = {script.argued_variants(folder, {("dev.json", 7)}, "varied", False, seed)[0].answer for seed in range(12)}
    assert len(seen) > 1                                   # the seed draws the form
    with pytest.raises(SystemExit):
        script.main(["--forms", "varied", "--out", str(tmp_path / "x.jsonl")])
