"""Grounded claims made from a document alone: its sentences, fusions of two or three nearby sentences that share
a content word (so that the support of one claim is spread over several sentences), and rule paraphrases of them
(perturb's meaning-preserving rewrites, and a fusion told in the other order)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from groundjudge.perturb.paraphrase import paraphrase_candidates
from groundjudge.perturb.types import Candidate

MAX_CLAIM_WORDS = 60
"""A sentence longer than this is not a claim (it is kept as evidence)."""

MAX_PART_WORDS = 35
"""A sentence fused with others has at most this many words."""

FUSION_REACH = 3
"""A sentence is fused only with sentences at most this many places after it."""

_CONTENT = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")
_STOP = frozenset("""this that these those with from into upon such shall will would could should have been being
their there they them which where when what other than then also each under only more most must made make any all
about after before between during without within including include includes herein hereof hereto thereof party
parties agreement information""".split())
_LOWER_STARTS = frozenset("""the a an this that these those it its each any all such no neither either both some
if in on at for to by as upon after before when while where there however further moreover notwithstanding
during he she they we it its his her their our you""".split())


@dataclass(frozen=True)
class Claim:
    """A grounded claim: its text, what made it, and the sentences (indices into the document) that support it."""

    text: str
    kind: str
    """'sentence', 'fusion2', 'fusion3', 'paraphrase:rule' or 'paraphrase:llm'."""
    support: tuple[int, ...]
    parts: tuple[str, ...] = ()
    """For a fusion: the text of each supporting sentence, in the order of ``support``."""
    rule: str | None = None


def word_count(text: str) -> int:
    """Words of a text (split on whitespace)."""
    return len(text.split())


def content_words(text: str) -> set[str]:
    """Lower-cased words of four letters or more that are not function words."""
    return {w.lower() for w in _CONTENT.findall(text)} - _STOP


def claim_like(sentence: str) -> bool:
    """Whether a sentence can be a claim: it starts with a letter, a digit or a quote (not a bracket or a list
    mark) and has at most :data:`MAX_CLAIM_WORDS` words."""
    return (sentence[:1].isalnum() or sentence[:1] in "\"“'‘") and word_count(sentence) <= MAX_CLAIM_WORDS


def sentence_claims(sentences: tuple[str, ...]) -> list[Claim]:
    """Every claim-like sentence (:func:`claim_like`), as a claim supported by itself."""
    return [Claim(text=s, kind="sentence", support=(i,)) for i, s in enumerate(sentences) if claim_like(s)]


def _stem(sentence: str) -> str:
    return sentence.rstrip().rstrip(".;:!?").rstrip()


def _continued(sentence: str) -> str:
    """A sentence as the continuation of another: its first word lower-cased when it is a function word."""
    first = sentence.split(" ", 1)[0]
    plain = first.lower() in _LOWER_STARTS and (len(first) == 1 or first[1:].islower())
    return sentence[:1].lower() + sentence[1:] if plain else sentence


def fuse(parts: tuple[str, ...]) -> str:
    """One sentence of two or three: 'A, and b.' or 'A; b; and c.'."""
    if len(parts) == 2:
        return f"{_stem(parts[0])}, and {_continued(_stem(parts[1]))}."
    return "; ".join([_stem(parts[0])] + [_continued(_stem(p)) for p in parts[1:-1]]) \
        + f"; and {_continued(_stem(parts[-1]))}."


def _linked(sentences: tuple[str, ...], i: int, words: list[set[str]]) -> list[int]:
    return [j for j in range(i + 1, min(i + 1 + FUSION_REACH, len(sentences)))
            if _fusable(sentences[j]) and words[i] & words[j]]


def _fusable(sentence: str) -> bool:
    return claim_like(sentence) and word_count(sentence) <= MAX_PART_WORDS and sentence.rstrip()[-1:] in ".!?;:"


def fusion_claims(sentences: tuple[str, ...], rng: random.Random) -> list[Claim]:
    """Fusions of a short sentence with one or two later sentences (within :data:`FUSION_REACH`) that share a
    content word with it: about one fusion of two and one of three for every four sentences."""
    words = [content_words(s) for s in sentences]
    starts = [i for i, s in enumerate(sentences) if _fusable(s)]
    rng.shuffle(starts)
    out: list[Claim] = []
    want = {2: max(1, len(sentences) // 4), 3: max(1, len(sentences) // 4)}
    for size in (2, 3):
        made = 0
        for i in starts:
            if made >= want[size]:
                break
            linked = _linked(sentences, i, words)
            if len(linked) < size - 1:
                continue
            chosen = (i, *sorted(rng.sample(linked, size - 1)))
            parts = tuple(sentences[j] for j in chosen)
            out.append(Claim(text=fuse(parts), kind=f"fusion{size}", support=chosen, parts=parts))
            made += 1
    return out


def reordered(claim: Claim) -> Claim | None:
    """A fusion of two told in the other order (the same facts): 'B, and a.'."""
    if claim.kind != "fusion2":
        return None
    parts = claim.parts[::-1]
    first = parts[0][:1].upper() + parts[0][1:]
    return Claim(text=fuse((first, parts[1])), kind="paraphrase:rule", support=claim.support[::-1],
                 parts=parts, rule="paraphrase.fusion_order")


def rule_paraphrases(claim: Claim, rng: random.Random) -> list[Candidate]:
    """perturb's meaning-preserving rewrites of the claim (number form, deadline, date format, spelling),
    in a seeded order."""
    found = paraphrase_candidates(claim.text)
    rng.shuffle(found)
    return found
