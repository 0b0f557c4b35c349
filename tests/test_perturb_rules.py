"""The rule generators of ``groundjudge perturb`` on hand-written legal sentences: each edit is where it should be
(offsets right), of its type, and changes the answer; and the cases where a rule must not fire. Then the checks
(fluency, lexical) and the rule paraphrases."""

from __future__ import annotations

import asyncio
import random

import pytest

from groundjudge.judges.error_types import load_taxonomy
from groundjudge.perturb import ERROR_TYPES, RULES, SLUGS, parse_types, perturb
from groundjudge.perturb.checks import LexicalCheck, differs, fluency_problem
from groundjudge.perturb.paraphrase import paraphrase_candidates
from groundjudge.perturb.rules_facts import factual_candidates
from groundjudge.perturb.rules_parties import misattribution_candidates
from groundjudge.perturb.rules_terms import (contextual_candidates, procedural_candidates, reasoning_candidates,
                                             terminological_candidates)
from groundjudge.perturb.spans import context_sentence, replace
from groundjudge.types import Example

NDA = ("The Receiving Party shall return all Confidential Information within 30 days after termination, unless "
       "the Disclosing Party agrees otherwise in writing. "
       "The Disclosing Party may terminate this Agreement on 45 days' notice given in writing. "
       "Any dispute shall be settled by arbitration in Port Aster.")
LEASE = ("Section 12 (Deposits). (1) The Landlord shall return the deposit within 21 days after the tenancy ends. "
         "(2) The Tenant may object before the Tribunal within 14 days.")


def edits(rule, answer: str, context: str = NDA, seed: int = 0):
    found = rule(answer, (context,), random.Random(seed))
    for candidate in found:
        edit = candidate.edit
        assert answer[edit.before_start:edit.before_end] == edit.before, candidate
        assert candidate.text[edit.after_start:edit.after_end] == edit.after, candidate
        assert candidate.text == answer[:edit.before_start] + edit.after + answer[edit.before_end:]
        assert differs(answer, candidate.text), candidate
    return found


def by_rule(found, rule: str):
    return [c for c in found if c.rule == rule]


def test_the_six_types_are_the_legal_taxonomy():
    assert list(ERROR_TYPES.values()) == [t.name for t in load_taxonomy(None)]
    assert set(RULES) == set(SLUGS)
    assert parse_types("misattribution, factual") == ("factual", "misattribution")
    assert parse_types("Terminological Errors") == ("terminological",)
    with pytest.raises(ValueError, match="unknown error type 'facts'"):
        parse_types("facts")


# --- Factual Inaccuracies ------------------------------------------------------------------------------------------

def test_factual_changes_a_duration_to_a_value_the_context_does_not_state():
    answer = "The Receiving Party must return the information within 30 days after termination."
    for seed in range(8):
        (candidate,) = by_rule(edits(factual_candidates, answer, seed=seed), "factual.duration")
        assert candidate.rule == "factual.duration" and candidate.edit.before == "30"
        assert candidate.edit.after not in ("30", "45") and candidate.edit.after.isdigit()
        assert candidate.text.endswith(" days after termination.")


def test_factual_amounts_keep_their_format_and_dates_move():
    (amount,) = edits(factual_candidates, "The fee is capped at $5,000 per claim.", "The fee is capped at $5,000.")
    assert amount.rule == "factual.amount" and amount.edit.before == "5,000" and "," in amount.edit.after
    words = edits(factual_candidates, "She has five years to sue.", "The period is five years.")
    assert words[0].edit.before == "five" and words[0].edit.after.isalpha()
    dated = edits(factual_candidates, "The lease ends on 1 May 2024.", "The lease ends on 1 May 2024.")
    assert {c.rule for c in dated} == {"factual.date", "factual.year"}
    month = by_rule(dated, "factual.date")[0]
    assert month.edit.before == "May" and month.edit.after in ("March", "April", "June", "July")


def test_factual_does_not_fire_without_a_quantity_nor_on_references():
    assert edits(factual_candidates, "The Receiving Party must keep the information confidential.") == []
    assert edits(factual_candidates, "Under Section 12(3) and clause 14.2, see Form T-22.", LEASE) == []
    assert edits(factual_candidates, "The term is twelve (12) months.") == []


# --- Misattributions -----------------------------------------------------------------------------------------------

def test_misattribution_swaps_the_party_for_the_other_one_the_document_names():
    (candidate,) = edits(misattribution_candidates, "The Receiving Party must return the information.")
    assert candidate.rule == "misattribution.role"
    assert (candidate.edit.before, candidate.edit.after) == ("Receiving", "Disclosing")
    assert candidate.text == "The Disclosing Party must return the information."
    lease = edits(misattribution_candidates, "The landlord must return the deposit.", LEASE)
    assert [c.text for c in by_rule(lease, "misattribution.role")] == ["The tenant must return the deposit."]


def test_misattribution_does_not_fire_without_a_second_party_in_the_document():
    context = "The Receiving Party shall keep all Confidential Information secret."
    assert edits(misattribution_candidates, "The Receiving Party must keep it secret.", context) == []


def test_misattribution_swaps_sections_courts_and_named_parties():
    sections = by_rule(edits(misattribution_candidates, "Under Section 12(1), the deposit is returned.", LEASE),
                       "misattribution.section")
    assert [c.edit.after for c in sections] == ["12(2)"] and sections[0].text.startswith("Under Section 12(2),")
    context = ("The claim may be filed with the High Court of Norland. An appeal lies to the Court of Appeal. "
               "This agreement is between Calder Systems Ltd. (the 'Supplier') and Brightwater Utility "
               "(the 'Customer').")
    courts = edits(misattribution_candidates, "The High Court of Norland held that the claim fails.", context)
    assert [(c.edit.after, c.rule) for c in courts] == [("Court of Appeal", "misattribution.institution")]
    # the body one files with is a procedural matter (round 1's readers typed it so), not a misattribution
    assert edits(misattribution_candidates, "She may file with the High Court of Norland.", context) == []
    filed = edits(procedural_candidates, "She may file with the High Court of Norland.", context)
    assert ("Court of Appeal", "procedure.institution") in [(c.edit.after, c.rule) for c in filed]
    named = edits(misattribution_candidates, "The Supplier must pay the fee, and the Customer may object.", context)
    assert {c.text for c in named} == {"The Customer must pay the fee, and the Customer may object.",
                                       "The Supplier must pay the fee, and the Supplier may object."}
    assert {c.rule for c in named} == {"misattribution.defined", "misattribution.role"}
    # "the Supplier must notify the Supplier" is nonsense, not a misattribution
    assert edits(misattribution_candidates, "The Supplier must notify the Customer.", context) == []


# --- Terminological, Procedural ------------------------------------------------------------------------------------

def test_terminological_swaps_modals_and_terms_of_art():
    found = edits(terminological_candidates, "The Receiving Party shall indemnify the Disclosing Party, and the "
                                             "contract is void.")
    assert {(c.edit.before, c.edit.after) for c in found} == {("shall", "may"), ("indemnify", "reimburse"),
                                                              ("void", "voidable")}
    assert all(c.rule.startswith("terms.") for c in found)


def test_terminological_leaves_the_month_and_the_verb_alone():
    assert edits(terminological_candidates, "Rent rose on 1 May 2024.") == []
    assert edits(terminological_candidates, "She can void it by paying the arrears.") == []


def test_procedural_swaps_notice_form_order_and_forum():
    found = edits(procedural_candidates, "Notice must be given in writing no later than the hearing, and disputes go "
                                         "to arbitration.")
    assert {(c.edit.before, c.edit.after) for c in found} == {("in writing", "orally"),
                                                              ("later", "earlier"),
                                                              ("arbitration", "litigation")}
    assert edits(procedural_candidates, "He must be brought before a District Court judge.") == []
    assert edits(procedural_candidates, "Receiving Party shall not disclose it.") == []     # a defined term


# --- Contextual, Reasoning -----------------------------------------------------------------------------------------

def test_contextual_drops_the_exception_and_the_qualifier():
    answer = "She may move on the proposed date, unless a court order says otherwise."
    (candidate,) = edits(contextual_candidates, answer)
    assert candidate.rule == "contextual.exception" and candidate.text == "She may move on the proposed date."
    assert candidate.edit.before == ", unless a court order says otherwise" and candidate.edit.after == ""
    only = edits(contextual_candidates, "An assignment is effective only if it is in writing.")
    assert only[0].text == "An assignment is effective if it is in writing."
    (qualifier,) = edits(contextual_candidates, "He has a reasonable opportunity to call a lawyer.")
    assert qualifier.text == "He has an opportunity to call a lawyer."     # a/an agreement fixed
    assert qualifier.edit.before == "a reasonable " and qualifier.edit.after == "an "
    (leading,) = edits(contextual_candidates, "Unless the court orders otherwise, the tenant may stay.")
    assert leading.text == "The tenant may stay."                          # the sentence start stays capitalised


def test_contextual_does_not_break_a_predicative_qualifier():
    assert edits(contextual_candidates, "The contract was reasonable and fair.") == []


def test_reasoning_negates_the_consequence_or_states_the_condition_as_fact():
    found = edits(reasoning_candidates, "Because the claim is unliquidated, the registrar cannot sign judgment.")
    assert [(c.rule, c.edit.before, c.edit.after) for c in found] == [("reasoning.negated_consequence", "cannot",
                                                                       "can")]
    # "If X, Y" -> "Because X, Y" applies the rule outside its condition: Contextual (round 1's readers, 8 of 10)
    conditional = edits(reasoning_candidates, "If she files a complaint, she cannot also sue.")
    assert by_rule(conditional, "reasoning.conditional_as_fact") == []
    conditional = edits(contextual_candidates, "If she files a complaint, she cannot also sue.")
    assert by_rule(conditional, "contextual.conditional_as_fact")[0].text == \
        "Because she files a complaint, she cannot also sue."
    so = edits(reasoning_candidates, "The notice came late, so the claim is barred.")
    assert so[0].text == "The notice came late, so the claim is not barred."
    # the taxonomy's rulings: "the earlier of" two dates starts a period (Procedural), "the lesser of" two values
    # the documents name is the opposite of what they state (Factual); neither is a Reasoning Error
    earlier = "She must sue by March, the earlier of the two dates."
    assert edits(reasoning_candidates, earlier) == []
    found = edits(procedural_candidates, earlier)
    assert [(c.rule, c.edit.before, c.edit.after) for c in found] == [("procedure.trigger", "earlier", "later")]
    lesser = edits(factual_candidates, "The cap is the lesser of the fees paid and 10,000 dollars.")
    assert by_rule(lesser, "factual.comparison")[0].edit.after == "greater"


def test_a_negated_point_the_documents_state_is_factual_one_the_answer_drew_is_reasoning():
    context = "The tenant gave notice late. Because notice came late, the claim is barred."
    answer = "Because notice came late, the claim is barred."
    assert edits(reasoning_candidates, answer, context) == []
    assert [c.rule for c in edits(factual_candidates, answer, context) if c.rule == "factual.negated"] == \
        ["factual.negated"]
    drawn = edits(reasoning_candidates, answer, "The tenant gave notice on 3 May. Claims need notice by 1 May.")
    assert [c.rule for c in drawn] == ["reasoning.negated_consequence"]


def test_a_party_swap_is_a_misattribution_only_where_the_party_holds_owes_does_or_says_the_thing():
    actor = edits(misattribution_candidates, "The Receiving Party and its Representatives may retain one copy.")
    assert [(c.rule, c.text.split(" and ")[0]) for c in actor] == [("misattribution.role", "The Disclosing Party")]
    assert [c.rule for c in edits(factual_candidates, "The Receiving Party and its Representatives may retain "
                                                      "one copy.") if c.rule.endswith(".party")] == []
    for answer in ("All copies shall be returned to the Disclosing Party.",
                   "Information received from the Disclosing Party is covered.",
                   "It covers all Confidential Information in the Receiving Party's possession."):
        assert [c.rule for c in edits(misattribution_candidates, answer) if c.rule.endswith(".role")] == [], answer
        assert [c.rule for c in edits(factual_candidates, answer)] == ["factual.party"], answer
    for answer in ("The Disclosing Party's obligations survive termination.",
                   "It survives, along with the Disclosing Party’s rights to the information.",
                   "Nothing is disclosed without written authorization from the Disclosing Party."):
        assert [c.rule for c in edits(misattribution_candidates, answer)] == ["misattribution.role"], answer


def test_a_changed_form_of_notice_or_consent_is_procedural_the_form_of_what_is_covered_is_factual():
    for answer in ("The Recipient shall not disclose it without the prior written consent of the Discloser.",
                   "Information counts if designated in writing by the Disclosing Party."):
        found = edits(procedural_candidates, answer)
        assert [c.rule for c in found] == ["procedure.notice_form"], answer
        assert [c for c in edits(factual_candidates, answer) if c.rule == "factual.form"] == []
    covered = "It covers all conduct of, or oral statements made by, the Discloser."
    assert [c for c in edits(procedural_candidates, covered) if c.rule.endswith("notice_form")] == []
    assert [(c.rule, c.edit.after) for c in edits(factual_candidates, covered)] == [("factual.form", "written")]
    assert edits(factual_candidates, "Notices go to the address first written above.") == []


def test_a_deadline_trigger_is_procedural_received_or_sent_naming_the_information_is_factual():
    trigger = edits(procedural_candidates, "Upon receipt of a request, the Recipient shall return the documents.")
    assert [(c.rule, c.edit.after) for c in trigger] == [("procedure.trigger", "dispatch")]
    days = edits(procedural_candidates, "The controller must answer within 30 working days.", "within 30 working days")
    assert [c.rule for c in days] == ["procedure.trigger"]
    which = "The Recipient shall not use the received Confidential Information for any other purpose."
    assert [c for c in edits(procedural_candidates, which) if c.rule == "procedure.trigger"] == []
    assert [(c.rule, c.edit.after) for c in edits(factual_candidates, which)] == [("factual.direction", "sent")]


def test_reasoning_does_not_fire_without_a_conclusion():
    assert edits(reasoning_candidates, "The tenant pays rent monthly to the landlord.") == []


# --- checks --------------------------------------------------------------------------------------------------------

def test_fluency_rejects_doubled_words_articles_capitals_brackets_and_length():
    original = "The defendant must serve and file a defence (in writing) within 20 days."
    assert fluency_problem(original, original.replace("serve", "file")) == "fluency:doubled_word"
    assert fluency_problem(original, original.replace("a defence", "a answer")) == "fluency:article"
    assert fluency_problem("It ends. The tenant pays.", "It ends. the tenant pays.") == "fluency:capitalisation"
    assert fluency_problem(original, original.replace("(in writing)", "(in writing")) == "fluency:brackets"
    assert fluency_problem(original, original[:20] + ".") == "fluency:length"
    assert fluency_problem(original, original.replace("20", "30")) is None


def test_the_lexical_check_calls_wording_found_in_the_context_grounded():
    context = "Notice must be given in writing. Rent is due within 45 days."
    source = Example(id="s", context=(context,), answer="Rent is due within 30 days.", label="grounded")
    same = replace(source.answer, 19, 21, "45", "factual.duration")
    verdict = asyncio.run(LexicalCheck().verdict(source, same))
    assert verdict.label == "grounded" and verdict.score == 1.0 and "45" in verdict.reason
    other = replace(source.answer, 19, 21, "60", "factual.duration")
    assert asyncio.run(LexicalCheck().verdict(source, other)).label == "ungrounded"


def test_the_context_sentence_is_the_one_the_edited_words_came_from():
    answer = "The Landlord must return the deposit within 21 days after the tenancy ends."
    candidate = replace(answer, 44, 46, "28", "factual.duration")
    found = context_sentence((LEASE,), answer, candidate.edit)
    assert found.text.startswith("(1) The Landlord shall return the deposit within 21 days")
    assert LEASE[found.start:found.end] == found.text and found.doc_index == 0


def test_rule_paraphrases_keep_the_meaning():
    found = paraphrase_candidates("She must object within 21 days after receiving notice, and has five years.")
    texts = {c.text for c in found}
    assert "She must object no later than 21 days after receiving notice, and has five years." in texts
    assert "She must object within twenty-one days after receiving notice, and has five years." in texts
    assert "She must object within 21 days after receiving notice, and has 5 years." in texts
    dated = paraphrase_candidates("The lease ends on 1 May 2024.")
    assert [c.text for c in dated] == ["The lease ends on May 1, 2024."]
    assert paraphrase_candidates("The tenant must pay rent.") == []


# --- the API -------------------------------------------------------------------------------------------------------

def test_perturb_makes_controls_and_one_error_variants_reproducibly():
    source = Example(id="nda-1", context=(NDA,), label="grounded", split="dev", meta={"group": "doc-1"},
                     answer="The Receiving Party shall return all Confidential Information within 30 days after "
                            "termination, unless the Disclosing Party agrees otherwise in writing.")
    result = perturb([source], seed=3)
    assert perturb([source], seed=3).examples == result.examples
    rows = {row.id: row for row in result.examples}
    assert rows["nda-1~orig"].answer == source.answer and rows["nda-1~orig"].label == "grounded"
    assert rows["nda-1~para~1"].meta["perturbation"]["kind"] == "paraphrase"
    for slug in ("factual", "misattribution", "terminological", "procedural", "contextual"):
        row = rows[f"nda-1~{slug}~1"]
        record = row.meta["perturbation"]
        assert row.label == "ungrounded" and row.error_types == (ERROR_TYPES[slug],)
        assert record["source_id"] == "nda-1" and record["check"]["judge"] == "lexical"
        assert record["check"]["label"] == "ungrounded"
        assert source.answer[record["edit"]["before_start"]:record["edit"]["before_end"]] == record["edit"]["before"]
        assert record["context_sentence"]["text"] in NDA
    assert {row.meta["group"] for row in result.examples} == {"doc-1"}
    assert {row.split for row in result.examples} == {"dev"}
    assert result.kept_by_type()["reasoning"] == 0      # no rule applies and no generator was given


# --- what building the ContractNLI benchmark taught the rules (scripts/build_legal_types.py) --------------------------

def test_clause_numbers_and_citations_are_not_quantities():
    answer = "2. Upon receipt the Receiving Party shall comply with 20 U.S.C. § 1232g and Sections 1 and 2."
    befores = [c.edit.before for c in edits(factual_candidates, answer)]
    assert "2." not in befores and "1232" not in " ".join(befores) and "1" not in befores


def test_definitions_and_boilerplate_are_not_term_swaps():
    answer = ('"Confidential Information" shall mean all data, including without limitation drawings, received from '
              "the Disclosing Party.")
    befores = {c.edit.before.lower() for c in edits(terminological_candidates, answer)}
    assert "shall" not in befores and "including" not in befores and "received" not in befores


def test_a_word_repeated_in_a_list_is_not_fluent():
    assert fluency_problem("Information disclosed orally.", "Information disclosed written, written or oral.")
    assert fluency_problem("oral and/or written", "oral and/or oral")


# --- Round 3 of the blind check (results/legal_types/confirmed/round3/README.md): the rejected rows' sentences -----

ROUND3_RULES = (factual_candidates, contextual_candidates, procedural_candidates, reasoning_candidates,
                misattribution_candidates, terminological_candidates)


def rules_at(answer: str, word: str, context: str | None = None, occurrence: int = 0) -> set[str]:
    """The rules that any type makes of the ``occurrence``-th place of ``word`` in ``answer`` (an edit starting
    there, or holding it)."""
    at = -1
    for _ in range(occurrence + 1):
        at = answer.index(word, at + 1)
    out = set()
    for rule in ROUND3_RULES:
        for candidate in rule(answer, (context or answer,), random.Random(0)):
            edit = candidate.edit
            if edit.before_start <= at < edit.before_end or edit.before_start == at:
                out.add(candidate.rule)
    return out


def test_round3_before_after_is_factual_even_at_a_deadline_or_a_step():
    # the Factual ruling names "before for after"; readers typed all 7 procedure.order swaps Factual
    assert rules_at("if disclosed orally, confirmed in writing by the disclosing party as such within fifteen (15) "
                    "days after its disclosure], which it may acquire", "after") == {"factual.order"}
    assert rules_at("(i) to promptly notify the other party prior to any such disclosure to the extent practicable "
                    "and legally permissible and", "prior to") == {"factual.order"}
    assert rules_at("who need to know the CI to further the Purpose and are bound by confidentiality obligations at "
                    "least as restrictive as this NDA before having access to the CI.", "before") == {"factual.order"}
    # "has no reason to disbelieve after due inquiry" is no deadline
    assert rules_at("from a source which has represented to the Receiving Party (which the Receiving Party has no "
                    "reason to disbelieve after due inquiry) that it is entitled to disclose it", "after") == \
        {"factual.order"}
    # no later/earlier than, at least N days: still deadline mechanics
    assert rules_at("she must give the board at least 28 days' written notice.", "least") == {"procedure.order"}


def test_round3_the_party_who_does_decides_or_says_is_a_misattribution():
    context = "The contractor and any subcontractor are bound. The VA provides access."
    answer = ("The contractor, the contractor's employees, and any subcontractor and subcontractor's employees will "
              "access the VA information.")
    assert rules_at(answer, "contractor", context, occurrence=1) == {"misattribution.role"}
    context = "Receiving Party and Disclosing Party agree."
    assert rules_at("If Receiving Party or any of its Representatives are requested pursuant to, or required by, "
                    "applicable law to disclose any Proprietary Information", "Receiving", context) == \
        {"misattribution.role"}
    assert rules_at("not disclose it unless, in the reasonable opinion of the Receiving Party’s legal counsel, "
                    "disclosure is required by legal process", "Receiving", context) == {"misattribution.role"}
    context = "The employer objected. The employee asked for accommodation."
    assert rules_at("Business inconvenience is not relevant, so neither of the employer's objections justifies "
                    "refusing.", "employer", context) == {"misattribution.role"}
    # whose information or possession it is: still Factual
    assert rules_at("The Disclosing Party's information is kept in confidence.", "Disclosing", context=NDA) == \
        {"factual.party"}
    assert rules_at("The Disclosing Party's files, notes and copies are returned.", "Disclosing", context=NDA) == \
        {"factual.party"}


def test_round3_the_date_of_receipt_starts_the_period():
    assert rules_at("the receiving party agrees to retain it in confidence for a period of three (3) years from the "
                    "date of receipt of the “Confidential Information”.", "receipt") == {"procedure.trigger"}


def test_round3_the_form_of_a_document_a_party_must_give_or_obtain_is_procedural():
    assert rules_at("return to the other party all documents and certify in writing to the other party that it has "
                    "complied with the requirements of this sub-clause;", "in writing") == {"procedure.notice_form"}
    assert rules_at("any Information which it is required to retain pursuant to law, as determined by the "
                    "reasonably supported written opinion of its legal counsel, an original of which legal opinion "
                    "shall be delivered to the Delivering Party.", "written") == {"procedure.notice_form"}


def test_round3_express_or_implied_permission_is_the_form_of_a_step():
    assert rules_at("(ii) without the express permission of the Participating Entity providing such information, "
                    "not to disclose such information to third parties", "express") == {"procedure.notice_form"}
    assert rules_at("that are made known by another Party hereto, without the express written permission (not to be "
                    "unreasonably withheld) of the Party who made the source(s) known.", "express") == \
        {"procedure.notice_form"}
    assert rules_at("This Agreement gives no express warranty of accuracy.", "express") == {"terms.scope"}


def test_round3_a_section_is_swapped_only_where_the_answer_says_it_holds_the_rule():
    context = "Section 3 sets the term. Section 9 says when the agreement terminates."
    assert rules_at("During the period commencing on the date of this agreement and ending on the date of "
                    "termination in section 9, the Recipient will take all commercially reasonable measures.",
                    "9", context) == set()
    for answer in ("Under section 9, the Recipient must return all copies.",
                   "The Recipient must return all copies, as section 9 requires.",
                   "Section 9 provides that the Recipient must return all copies."):
        assert rules_at(answer, "9", context) == {"misattribution.section"}, answer


def test_round3_may_to_must_before_only_is_not_made():
    assert rules_at("The policy also says the employer may ask only for information reasonably necessary to assess "
                    "his needs.", "may") == set()
    assert rules_at("The policy also says the employer may ask for medical information.", "may") == {"terms.modal"}


def test_round3_an_exception_where_the_excerpt_ends_is_not_dropped():
    answer = ("Neither party shall disclose or announce the Purpose to another person without the prior written "
              "consent of the other party (such consent not to be unreasonably withheld or delayed) except to the "
              "extent that such disclosure or announcement is required as specified in Clause 9.2")
    assert "contextual.exception" not in rules_at(answer, "except")
    assert "contextual.exception" in rules_at(answer + ".", "except")    # a sentence that ends: still dropped


def test_round3_rulings_cover_the_gaps_readers_hit():
    definitions = {t.name: t.definition for t in load_taxonomy(None)}
    assert "'because' or 'since' for 'if'" in definitions["Contextual Misinterpretations"]
    assert "a certificate, an opinion, a confirmation" in definitions["Procedural Errors"]
    assert "or a Terminological Error" in definitions["Procedural Errors"]
    assert "a changed pointer to where something is found" in definitions["Factual Inaccuracies"]
    assert "before for after" in definitions["Factual Inaccuracies"]


def test_a_conclusion_negated_with_do_is_a_reasoning_error_and_the_verb_is_inflected():
    # round 3 had no Reasoning row a reader had not seen: a conclusion with "does not" (after a longer subject) is
    # now negated too, as the rule does with "is not" / "cannot"
    answer = ("She was let go for budget reasons. The misconduct exception in Section 41(4) does not help the "
              "employer, since she was let go for budget reasons.")
    context = "Section 41(4). Subsection (2) does not apply to an employee dismissed for wilful misconduct."
    found = by_rule(edits(reasoning_candidates, answer, context), "reasoning.negated_consequence")
    assert [(c.edit.before, c.edit.after) for c in found] == [("does not help", "helps")]
    found = edits(reasoning_candidates, "She does not need to prove carelessness, because the producer is liable "
                                        "whether or not it was negligent.", "The producer is liable.")
    assert [(c.edit.before, c.edit.after) for c in found] == [("does not need", "needs")]
    found = edits(reasoning_candidates, "Since he has them less than 40 per cent of the time, the shared-parenting "
                                        "rule in Section 9 does not apply.", "Section 9 applies at 40 per cent.")
    assert [(c.edit.before, c.edit.after) for c in found] == [("does not apply", "applies")]
    # "did not": the past of an irregular verb is not made by rule
    assert edits(reasoning_candidates, "Because he was told, he did not know it.", "He was told.") == []
