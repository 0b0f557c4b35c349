"""A responder for the scripted server that answers groundjudge's built-in prompts, deterministically.

It plays a judge model that decides by normalised text overlap: a claim or
sentence is "supported" when most of its content words occur in the evidence.
That is enough to exercise every chain end to end (claims, facts, verdicts,
triplets, samples, error types) over real HTTP, with answers whose
correctness tests can predict. It is not a grounding method.
"""

from __future__ import annotations

import json
import math
import re

from groundjudge.testing.scripted_server import Reply, Request
from groundjudge.text import normalize, sentences

_BLOCK = re.compile(r'<(?P<tag>[a-z_0-9]+)(?P<code> boundary="[A-Z2-7]+")?>\n(?P<body>.*?)\n</(?P=tag)(?P=code)>',
                    re.DOTALL)
_STOP = frozenset("a an the of to in on and or is are was were be by for with that this it as at from".split())


def blocks(text: str) -> dict[str, list[str]]:
    """The tagged blocks of a rendered prompt, by tag (a tag may repeat, e.g. documents)."""
    found: dict[str, list[str]] = {}
    for match in _BLOCK.finditer(text):
        tag = re.sub(r"_\d+$", "", match.group("tag"))
        found.setdefault(tag, []).append(match.group("body"))
    return found


def numbered(body: str) -> list[str]:
    """The items of a numbered list block ("1. ...")."""
    return [re.sub(r"^\d+\.\s*", "", line).strip() for line in body.splitlines() if re.match(r"^\d+\.", line)]


def overlap(claim: str, evidence: str) -> float:
    """The share of the claim's content words that occur in the evidence (0 for a claim without any)."""
    words = [w for w in normalize(claim).split() if w not in _STOP]
    pool = set(normalize(evidence).split())
    return sum(w in pool for w in words) / len(words) if words else 0.0


def supported(claim: str, evidence: str, share: float = 0.8) -> bool:
    """Whether most of the claim's content words occur in the evidence."""
    return overlap(claim, evidence) >= share


def best_quote(claim: str, evidence: str) -> str:
    """The sentence of the evidence that shares most words with the claim: the quote a careful judge gives."""
    return max(sentences(evidence) or [evidence], key=lambda s: overlap(claim, s))


def _content(request: Request) -> str:
    messages = request.body.get("messages") or []
    return "\n".join(m.get("content", "") if isinstance(m.get("content"), str) else "" for m in messages)


def answer(request: Request) -> dict:
    """The JSON object a sensible judge would reply to one of groundjudge's prompts."""
    text = request.text
    found = blocks(text)
    documents = "\n".join(found.get("document", []))
    if "atomic claims" in text:
        return {"claims": sentences(found["answer"][0])}
    if "facts stated in source documents" in text:
        return {"facts": [s for doc in found.get("document", []) for s in sentences(doc)]}
    if "You verify claims against evidence" in text:
        evidence = "\n".join(found.get("evidence", [])) or documents
        verdicts = []
        for index, claim in enumerate(numbered(found["claims"][0]), start=1):
            ok = supported(claim, evidence)
            verdicts.append({"claim": index, "verdict": "supported" if ok else "contradicted",
                             "evidence": best_quote(claim, evidence) if ok else "",
                             "reason": "overlap" if ok else "not in evidence"})
        return {"verdicts": verdicts}
    if "meticulous fact-checker" in text:
        ok = all(supported(s, documents) for s in sentences(found["answer"][0]))
        return {"reasoning": "all sentences found" if ok else "a sentence is not in the documents",
                "verdict": "grounded" if ok else "ungrounded", "score": 0.9 if ok else 0.1}
    if "faithful to the document" in text:
        ok = all(supported(s, documents) for s in sentences(found["answer"][0]))
        return {"REASONING": ["checked every sentence"], "SCORE": "PASS" if ok else "FAIL"}
    if "extract knowledge triplets" in text:
        triplets = []
        for s in sentences(found["answer"][0]):
            words = s.rstrip(".").split()
            triplets.append([" ".join(words[:2]), " ".join(words[2:3]), " ".join(words[3:]) or "-"])
        return {"triplets": triplets}
    if "check statements against reference documents" in text:
        checks = []
        for index, line in enumerate(numbered(found["statements"][0]), start=1):
            claim = line.strip("()").replace(" | ", " ")
            ok = supported(claim, documents)
            checks.append({"statement": index, "verdict": "supported" if ok else "contradicted",
                           "evidence": best_quote(claim, documents) if ok else ""})
        return {"checks": checks}
    if "answer questions using only the documents" in text:
        return {"answer": " ".join(sentences(documents)[:3])}
    if "compare numbered sentences" in text:
        sample = found["passage"][0]
        return {"results": [{"sentence": i, "consistent": supported(s, sample)}
                             for i, s in enumerate(numbered(found["sentences"][0]), start=1)]}
    if "classify errors in answers" in text:
        return {"labels": [{"claim": i, "error_type": "Factual Inaccuracies", "reason": "differs from the text"}
                           for i, _ in enumerate(numbered(found["unsupported_claims"][0]), start=1)]}
    raise ValueError(f"the oracle does not know this prompt: {text[:200]!r}")


def yes_probability(request: Request) -> float | None:
    """For a yes/no prompt (``direct_yesno``, ``claim_yesno``): P(yes), graded by word overlap (the weakest
    sentence's), squeezed into [0.02, 0.98]; None for any other prompt."""
    text = request.text
    if "Answer with one word: yes" not in text:
        return None
    found = blocks(text)
    evidence = "\n".join(found.get("evidence", []) + found.get("document", []))
    items = found["claim"] if "claim" in found else (sentences(found["answer"][0]) or found["answer"])
    share = min(overlap(item, evidence) for item in items)
    return 0.02 + 0.96 * share ** 2


def oracle_responder(request: Request) -> Reply:
    """Reply to a groundjudge prompt with the oracle's JSON, or, to a yes/no prompt, with yes or no and the first
    token's log-probabilities (P(yes) graded by overlap)."""
    p_yes = yes_probability(request)
    if p_yes is not None:
        return Reply(content="Yes" if p_yes >= 0.5 else "No",
                     top_logprobs={"Yes": math.log(p_yes * 0.9), " yes": math.log(p_yes * 0.1),
                                   "No": math.log((1 - p_yes) * 0.9), "no": math.log((1 - p_yes) * 0.1),
                                   "The": math.log(1e-4)})
    return Reply(content=json.dumps(answer(request)))
