"""scripts/eval_error_types_local.py's end-to-end reading of a run: each answer typed by its least-supported typed
claim, and where the detector looked for the error against the sentence the error altered."""

from __future__ import annotations

import json

from groundjudge.types import Claim, ClaimVerdict, Example, JudgeResult, ResultRecord, Verdict
from project_scripts import load_script

FI, TE = "Factual Inaccuracies", "Terminological Errors"
JUDGE = "error_types:backend=local,model=m"


def _script():
    return load_script("eval_error_types_local")


def _claim(text: str, score: float | None, kind: str | None = None) -> ClaimVerdict:
    return ClaimVerdict(claim=Claim(text=text), score=score, error_type=kind,
                        label="unverifiable" if kind else "supported")


def _record(answer: str, label: str, claims: tuple[ClaimVerdict, ...]) -> str:
    example = Example(id=answer, context=["The deposit is returned within 21 days."], answer="x",
                      label="ungrounded", error_types=(TE,))
    verdict = Verdict(example_id=answer, label=label, score=0.1, claims=claims, path="local")
    return ResultRecord(judge=JUDGE, example=example, result=JudgeResult(verdict=verdict)).model_dump_json()


def test_end_to_end_types_by_the_weakest_typed_sentence_and_counts_where_it_looked(tmp_path):
    records = tmp_path / "records.jsonl"
    lines = [json.dumps({"kind": "header"}),
             # a: the weakest sentence is the altered one and is typed TE (the first typed one says FI)
             _record("a", "ungrounded", (_claim("It is returned in 21 days.", 0.3, FI),
                                         _claim("The  landlord may keep it.", 0.1, TE))),
             # b: typed elsewhere; the altered sentence is the weakest but above the threshold, so untyped
             _record("b", "ungrounded", (_claim("Rent is due monthly.", 0.2, FI), _claim("It is returned.", 0.1))),
             # c: called grounded, nothing typed; a claim without a score: no threshold-free ranking
             _record("c", "grounded", (_claim("It is returned.", None),)),
             _record("other", "ungrounded", (_claim("Not in gold.", 0.0, FI),))]
    records.write_text("\n".join(lines) + "\n", encoding="utf-8")
    gold = {"a": TE, "b": TE, "c": TE}
    altered = {"a": "The landlord may keep it.", "b": "It is returned.", "c": "It is returned."}
    (figures,) = _script().end_to_end(records, gold, altered, n_boot=20, seed=0)
    assert figures["judge"] == JUDGE and figures["n"] == 3 and figures["called_ungrounded"] == 2
    assert figures["accuracy"] == 1 / 3 and figures["n_none"] == 1
    assert figures["localisation"] == {"lowest_scored": {"altered": 2, "of": 2}, "lead_typed": {"altered": 1, "of": 2}}
    assert _script().is_sentence("It is  returned", "It is returned.") and not _script().is_sentence("", "x")
