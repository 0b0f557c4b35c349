"""The rule fixes made after round 1 of the blind check of datasets/legal_types (results/legal_types/confirmed):
each test runs a rule on the text of variants the readers rejected (the original answer, from the ContractNLI
contracts or the legal QA sample) and checks that the rule now makes no edit there, or makes it under the type the
readers gave it; and that the edits the readers confirmed are still made."""

from __future__ import annotations

import random

from groundjudge.perturb.rules_facts import factual_candidates
from groundjudge.perturb.rules_parties import misattribution_candidates
from groundjudge.perturb.rules_terms import (contextual_candidates, procedural_candidates, reasoning_candidates,
                                             terminological_candidates)

RULES = (factual_candidates, contextual_candidates, procedural_candidates, reasoning_candidates,
         misattribution_candidates, terminological_candidates)


def made(answer: str, context: str | None = None) -> set[tuple[str, str, str]]:
    """Every (before, after, rule) any type's rules make of ``answer`` (its context: itself, unless given)."""
    out = set()
    for rule in RULES:
        for candidate in rule(answer, (context or answer,), random.Random(0)):
            out.add((candidate.edit.before.strip(), candidate.edit.after.strip(), candidate.rule))
    return out


def rules_for(answer: str, word: str, context: str | None = None) -> set[str]:
    """The rules that edit a span holding ``word``."""
    return {rule for before, _, rule in made(answer, context) if word in before}


# --- Contextual: exceptions and qualifiers that were no error ------------------------------------------------------

def test_an_exception_that_is_a_lead_in_a_list_or_a_complement_is_not_dropped():
    assert rules_for("3. The receiving party will receive all confidential information which is disclosed in "
                     "connection with this Agreement subject to the following conditions:", "subject to") == set()
    assert rules_for("Information is not subject to the terms of this Agreement if it is: (d) received by the "
                     "Recipient from a third party who is not subject to obligations similar to the obligations "
                     "contained in this Agreement.", "subject to") == set()
    assert rules_for("All information (collectively, the \"Confidential Information\") shall be subject to the "
                     "terms of this Agreement.", "subject to") == set()
    assert rules_for("The receiving party agrees to return all copies of any Confidential Information in its "
                     "possession or subject to its control to the disclosing party upon the first to occur of the "
                     "following: termination or expiration of this Agreement; or completion of the purpose.",
                     "subject to") == set()


def test_a_proviso_is_not_dropped_but_an_exception_still_is():
    assert rules_for("Recipient may disclose CI as necessary to respond to a valid order by a court, provided that "
                     "Recipient promptly notifies Discloser upon receipt of the disclosure order.", "provided") == set()
    assert rules_for("She may move on the proposed date, unless a court order says otherwise.", "unless") == \
        {"contextual.exception"}
    assert rules_for("Recipient shall not use the other party's Confidential Information except for the Purpose.",
                     "except") == {"contextual.exception"}


def test_an_exception_after_a_clause_number_drops_the_exception_not_the_sentence():
    answer = ("2. Except as set forth in this Section 2, all Confidential Information shall be in tangible form "
              "and shall be marked as Confidential.")
    dropped = {before for before, _, rule in made(answer) if rule == "contextual.exception"}
    assert dropped == {"Except as set forth in this Section 2,"}


def test_qualifiers_without_force_are_not_dropped():
    assert rules_for("to facilitate seeking a protective order from the proper authority.", "proper") == set()
    assert rules_for("the fact that the Evaluation Material has been made available to you.", "Material") == set()
    assert rules_for("Vapotherm agrees to disclose the Confidential Information only for the following specific "
                     "purpose.", "specific") == set()
    assert rules_for("Generally she cannot go straight to court.", "Generally") == set()
    # confirmed by the readers: still made
    assert rules_for("The receiving party shall take reasonable steps to assist.", "reasonable") == \
        {"contextual.qualifier"}
    assert rules_for("there are no proper reasons for the non-use", "proper") == {"contextual.qualifier"}


# --- retyped: scope, condition as fact, order, institution --------------------------------------------------------

def test_including_to_excluding_is_a_change_of_scope():
    answer = "the undersigned shall return all Information together with personal notes including written materials."
    assert rules_for(answer, "including") == {"contextual.scope"}


def test_a_condition_stated_as_a_fact_is_contextual():
    answer = ("If the Confidential Information is disclosed orally, it shall be identified as such at the time of "
              "disclosure.")
    assert rules_for(answer, "If") == {"contextual.conditional_as_fact"}


def test_before_after_is_typed_by_what_it_anchors():
    # the anchor of a period: Factual (the readers: 4 of 4)
    assert rules_for("All obligations shall survive and continue for five (5) years after the date of the last "
                     "disclosure.", "after") == {"factual.period_anchor"}
    assert rules_for("it will not, for a period of 24 months after the Signature Date, directly or indirectly "
                     "solicit any employee.", "after") == {"factual.period_anchor"}
    assert rules_for("which shall be both during and after their current employment or engagement.", "after") == \
        {"factual.period_anchor"}
    # another time in a condition that is kept: Factual by the taxonomy's ruling (round 2's readers, 3 of 4; it was
    # Contextual before the ruling)
    assert rules_for("such source is not, to the knowledge of the Receiving Party following reasonable inquiry, "
                     "under any obligation.", "following") == {"factual.order"}
    assert rules_for("8. All products remaining after the tests are completed shall be returned.", "after") == \
        {"factual.order"}
    # a deadline's or a step's side of its event: Procedural until round 3, whose readers typed all 7 Factual by
    # the ruling's "before for after" (test_perturb_rules.py, round 3); not a period's anchor either
    assert rules_for("it had to notify the Revenue Agency within 30 days after the end of March.", "after") == \
        {"factual.order"}
    assert rules_for("Company gives the AOC prompt written notice of such requirement before making such "
                     "disclosure.", "before") == {"factual.order"}


def test_a_list_of_both_orders_and_the_adjective_are_not_swapped():
    assert rules_for("whether those discussions occur prior to, concurrent with, or following disclosure of the "
                     "information.", "following") == set()
    assert not any(rule.endswith("order") or rule.endswith("anchor") for rule in rules_for(
        "The Vendor may disclose it to the following persons: its officers.", "following"))


def test_the_body_one_notifies_is_procedural_the_court_that_held_a_misattribution():
    context = "Section 5. A person must notify the Revenue Agency. Appeals go to the Tax Tribunal."
    assert rules_for("it had to notify the Revenue Agency within 30 days.", "Revenue Agency", context) == \
        {"procedure.institution"}
    context = "The Court of Appeal held so. The High Court of Norland heard it first."
    assert rules_for("The High Court of Norland held that the claim fails.", "High Court", context) == \
        {"misattribution.institution"}


# --- Procedural: swaps that said the same or made nonsense --------------------------------------------------------

def test_a_form_of_notice_in_a_list_of_forms_is_not_swapped():
    assert rules_for("disclosed whether in writing, verbally or by any other means.", "writing") == set()
    assert rules_for("without the prior written consent of the AOC", "written") == {"procedure.notice_form"}


def test_steps_that_are_both_required_or_nouns_are_not_swapped():
    assert rules_for("the defendant had 20 days to serve and file a statement of defence, or could have filed a "
                     "notice of intent to defend.", "filed") == set()
    assert rules_for("shall be destroyed and files deleted from all of the Bidder's web sites.", "files") == set()


def test_triggers_that_name_a_party_or_the_same_thing_are_not_swapped():
    assert rules_for("The party receiving the Confidential Information (the \"Receiving Party\") may also "
                     "disclose it.", "receiving") == set()
    assert rules_for("The Recipient may disclose Confidential Information received hereunder to its Affiliates.",
                     "received") == set()
    assert rules_for("the case was sent back to the Employment Division.", "sent") == set()


# --- Terminological, Factual, Misattribution, Reasoning ------------------------------------------------------------

def test_shall_to_may_is_not_made_where_the_restriction_stays():
    assert rules_for("The Receiving Party shall only use the Confidential Information for the Disclosure Purpose.",
                     "shall") == set()
    assert rules_for("Each party agrees that it shall disclose Confidential Information only to those of its "
                     "employees who need to know it.", "shall") == set()
    assert rules_for("with the prior written consent of the other Party, neither Party shall make any "
                     "disclosure.", "shall") == set()
    assert rules_for("The undersigned shall under no circumstances contact any of the residents.", "shall") == set()
    assert rules_for("nor shall this Agreement grant any Party any proprietary rights.", "shall") == set()
    assert rules_for("Confidential Information shall be kept confidential.", "shall") == {"terms.modal"}


def test_express_the_verb_is_not_a_term_of_art():
    assert rules_for("whether the Investor desires to express any further interest in the Property.",
                     "express") == set()


def test_a_bare_clause_pointer_is_not_a_quantity():
    assert rules_for("the confidentiality undertakings (and in particular 4) shall survive termination.", "4") == \
        set()
    assert rules_for("The undertakings set out in 4 shall not apply to such information.", "4") == set()


def test_a_role_swap_that_doubles_a_list_item_is_not_made():
    answer = ("documents prepared by or for the Recipient or affiliates, directors, officers, managers, employees, "
              "shareholders, members or other equity holders.")
    assert rules_for(answer, "shareholders", answer + " The directors and shareholders of the Recipient.") == set()


def test_a_negated_duty_or_permission_is_not_a_reasoning_error():
    assert not any(rule == "reasoning.negated_consequence" for rule in rules_for(
        "Because the request is complex, the bank may extend that period by up to two further months.", "may"))
    assert "reasoning.negated_consequence" in rules_for(
        "Because the claim is unliquidated, the registrar cannot sign judgment.", "cannot",
        "The claim is for unliquidated damages. Judgment in default needs a sum certain.")


def test_rebuild_review_cases():
    """Cases read in the rebuilt file before it was committed."""
    assert rules_for("shall not file for any intellectual property right protection", "file") == set()
    assert rules_for("communications between the parties will not serve to impair the right of each party",
                     "serve") == set()
    assert rules_for("The officers must then file a report of the items seized with the issuing justice.",
                     "file") == {"procedure.step"}
    assert rules_for("to use at least the same measures to protect the same as that party uses for its own.",
                     "least") == {"contextual.order"}
    assert rules_for("she must give the board at least 28 days' written notice of her intention.", "least") == \
        {"procedure.order"}
    assert rules_for("the senior executives must then negotiate in good faith for 30 days, after which either "
                     "party may refer an unresolved claim to arbitration.", "after") == {"factual.order"}
    assert rules_for("sets a termination date at least 14 days after the notice is given.", "after") == \
        {"factual.order"}
    assert rules_for("She must apply for reconsideration within 30 days after receiving the written reasons.",
                     "after") == {"factual.order"}
    assert rules_for("to use the same degree of care as for its own, and in no event less than reasonable care.",
                     "reasonable") == set()
