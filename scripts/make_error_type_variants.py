"""Typed one-error variants of ContractNLI contract text, to train the local error-type head (issue 44, item 5).

Sources: the contracts that `datasets/legal_types` puts in its **dev** split (its ContractNLI test contracts and
every legal QA item are left out). Each ContractNLI span of 8-60 words is one grounded "answer"; its context is
the span with up to two spans either side. `groundjudge perturb`'s engine (rules only, lexical check, seed given)
makes at most one variant per type per span. Writes native JSON lines (meta.source = contractnli, split = dev).

``--generator SPEC`` adds `perturb`'s LLM generator for the types no rule fills (with ``--generator-only``: for
every type asked), e.g. Reasoning Errors, which today's rules never make; ``--types`` and ``--per-contract`` keep
the number of LLM calls in hand. The calls go through the call cache (``--cache-dir``), so a rerun makes none.

``--argued`` writes Reasoning Errors from ContractNLI's own annotations instead, with no LLM: for every hypothesis
that a dev contract leaves Not Mentioned, the answer "Because SPAN, HYPOTHESIS." argues the hypothesis from the
contract span that shares the most content words with it. The premise is the contract's own text and the
conclusion is neither stated nor contradicted by it (that would be a Factual Inaccuracy by the taxonomy's ruling):
a conclusion the premise does not give. Contract clauses draw no conclusions, so neither the rules nor the 1.5B
LLM generator make this type from them (results/legal_types/reasoning_llm: 0 of 36 LLM variants asked for it were).
With ``--forms varied`` the argument takes one of several forms ("P, so C.", "C, because P.", ...) from a premise cut
to its clause nearest the conclusion; ``--controls`` adds the contradicted hypotheses argued from their evidence,
typed Factual (results/legal_types/argued/README.md: together they take the Reasoning gain away).

``--reword-first`` (with ``--generator``) has the LLM paraphrase each span before the rules edit it, so a training
claim is worded apart from its context as a hand-written answer is, and its edit is the only change of meaning;
the rules then edit the paraphrase (the LLM edits nothing in that mode). Each row keeps the span it reworded in
``meta.reworded_from``.

    .venv/bin/python scripts/make_error_type_variants.py --out /tmp/cnli_variants.jsonl
    .venv/bin/python scripts/make_error_type_variants.py --types reasoning --per-contract 6 --generator-only \
        --generator "model=openai/qwen,api_base=http://127.0.0.1:8765/v1" --out /tmp/cnli_reasoning_llm.jsonl
    .venv/bin/python scripts/make_error_type_variants.py --argued --out /tmp/cnli_argued.jsonl
    .venv/bin/python scripts/make_error_type_variants.py --argued --forms varied --controls --out /tmp/varied.jsonl
    .venv/bin/python scripts/make_error_type_variants.py --per-contract 12 --reword-first \
        --generator "model=openai/qwen,api_base=http://127.0.0.1:8765/v1" --out /tmp/cnli_reworded.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from rich.progress import Progress

from groundjudge.llm.service_options import LLMOptions, make_service
from groundjudge.local_nli.error_type_data import overlap
from groundjudge.perturb import SLUGS, LLMGenerator, parse_types, perturb
from groundjudge.types import Example

MIN_WORDS, MAX_WORDS, NEIGHBOURS = 8, 60, 2


def dev_contracts(legal_types: Path) -> set[tuple[str, int]]:
    """(source file, contract id) of the ContractNLI contracts in the legal_types dev split."""
    found = set()
    for line in legal_types.open(encoding="utf-8"):
        row = json.loads(line)
        meta = row.get("meta") or {}
        if meta.get("source") == "contractnli" and row.get("split") == "dev":
            found.add((meta["source_file"], int(meta["contract_id"])))
    return found


def wanted_contracts(folder: Path, wanted: set[tuple[str, int]]) -> Iterator[tuple[str, dict, dict, list[str]]]:
    """(file name, its data, one wanted contract, the contract's spans as single-spaced texts), file by file."""
    for name in sorted({f for f, _ in wanted}):
        data = json.loads((folder / name).read_text(encoding="utf-8"))
        for doc in data["documents"]:
            if (name, int(doc["id"])) in wanted:
                yield name, data, doc, [" ".join(doc["text"][s:e].split()) for s, e in doc["spans"]]


def usable_spans(pieces: list[str]) -> list[int]:
    """The positions of the spans of MIN_WORDS to MAX_WORDS words."""
    return [i for i, p in enumerate(pieces) if MIN_WORDS <= len(p.split()) <= MAX_WORDS]


def window_of(pieces: list[str], i: int) -> tuple[str]:
    """Span ``i`` with up to NEIGHBOURS spans either side, as one context document."""
    return ("\n".join(p for p in pieces[max(0, i - NEIGHBOURS):i + NEIGHBOURS + 1] if p),)


def span_sources(folder: Path, wanted: set[tuple[str, int]], per_contract: int, seed: int) -> list[Example]:
    """One grounded example per kept span (a seeded draw of ``per_contract`` per contract; 0: all)."""
    out = []
    for name, _, doc, pieces in wanted_contracts(folder, wanted):
        usable = usable_spans(pieces)
        if per_contract and len(usable) > per_contract:
            usable = sorted(random.Random(f"{seed}-{name}-{doc['id']}").sample(usable, per_contract))
        for i in usable:
            out.append(Example(id=f"cnlispan-{doc['id']}-{i}", question="What does the agreement say?",
                               context=window_of(pieces, i), answer=pieces[i], label="grounded", split="dev",
                               meta={"group": f"doc-{doc['id']}", "source": "contractnli",
                                     "source_file": name, "contract_id": int(doc["id"]), "span": i}))
    return out


_FUNCTION_WORDS = frozenset("The A An Any Each All No In If At Upon Such This These That Those Notwithstanding For "
                            "Except Nothing Neither Either It Its Both Following Unless When Where Without To On "
                            "Subject Collectively Nor Whether As By From With Under Some".split())


def _lower_first(text: str) -> str:
    """``text`` with its first letter lowercased when its first word is a function word (``The`` becomes ``the``;
    a name such as ``Receiving Party`` keeps its capital)."""
    first = text.split(" ", 1)[0].rstrip(",;:")
    return text[:1].lower() + text[1:] if first in _FUNCTION_WORDS else text


# How a person argues a conclusion from a premise (``--forms varied``): the hand-written Reasoning Errors of the
# legal QA sample use "Because P, C", "P, so C", "C because P", "therefore" and "since".
ARGUED_FORMS = {
    "because": "Because {p}, {c}.",
    "since": "Since {p}, {c}.",
    "as": "As {p}, it follows that {c}.",
    "so": "{P}, so {c}.",
    "therefore": "{P}; therefore, {c}.",
    "after": "{C}, because {p}.",
}
_CLAUSE_CUT = re.compile(r"\s*[;:]\s+|,\s+(?:but|provided that|provided|unless|except that|in which case)\s+")
_LIST_MARKER = re.compile(r"^(?:\(?(?:[0-9]{1,2}(?:\.[0-9]{1,2})*|[a-z]|[ivx]{1,4})[.)]\s+)+")


def whole_clause(piece: str) -> bool:
    """Whether a span reads as a sentence of its own: a capital first letter after any list marker, and no trailing
    conjunction or comma (ContractNLI cuts list items into spans such as "is disclosed by a third party, or")."""
    text = _LIST_MARKER.sub("", piece).rstrip(". ")
    return text[:1].isupper() and not re.search(r"(?:,|;|:|\b(?:and|or|nor))$", text)


def short_premise(premise: str, conclusion: str, min_words: int = 6) -> str:
    """The clause of ``premise`` (cut at semicolons, colons and ", but", ", provided", ", unless", ...) sharing the most
    content words with ``conclusion``, when it has ``min_words`` words or more; else the whole premise."""
    clauses = [c for c in _CLAUSE_CUT.split(premise) if len(c.split()) >= min_words]
    if len(clauses) < 2:
        return premise
    return _LIST_MARKER.sub("", max(clauses, key=lambda c: overlap(conclusion, c)))


def argued_claim(premise: str, conclusion: str, form: str) -> str:
    """``conclusion`` argued from ``premise`` in one of ARGUED_FORMS."""
    p, c = _lower_first(premise.rstrip(".;:, ")), _lower_first(conclusion.rstrip(". "))
    return ARGUED_FORMS[form].format(p=p, c=c, P=p[:1].upper() + p[1:], C=c[:1].upper() + c[1:])


def argued_variants(folder: Path, wanted: set[tuple[str, int]], forms: str = "because", controls: bool = False,
                    seed: int = 0) -> list[Example]:
    """One Reasoning Error per (dev contract, Not Mentioned hypothesis): the hypothesis argued from SPAN, the contract
    span of 8-60 words sharing the most content words with it; its window is the context.

    ``forms="because"`` writes every claim as "Because SPAN, HYPOTHESIS."; ``"varied"`` argues from spans that
    read as whole sentences where the contract has one (:func:`whole_clause`), cuts the premise to its clause
    nearest the conclusion (:func:`short_premise`) and draws a form of ARGUED_FORMS per claim (seeded), as a
    person's premises are short and their connectives vary. ``controls`` adds, in the same forms, each hypothesis a
    dev contract **contradicts**, argued from its evidence span: the same connective with a conclusion the contract
    states the opposite of, which the taxonomy's ruling makes a Factual Inaccuracy, so that a connective alone does
    not mean Reasoning.
    """
    out = []
    for name, data, doc, pieces in wanted_contracts(folder, wanted):
        usable = usable_spans(pieces)
        for key, annotation in sorted(doc["annotation_sets"][0]["annotations"].items()):
            choice = annotation["choice"]
            if choice == "NotMentioned":
                candidates, kind, rule = usable, "Reasoning Errors", "reasoning.argued_not_mentioned"
            elif choice == "Contradiction" and controls:
                candidates = [j for j in usable if j in set(annotation["spans"])]
                kind, rule = "Factual Inaccuracies", "factual.argued_contradicted"
            else:
                continue
            if not candidates:
                continue
            hypothesis = data["labels"][key]["hypothesis"].rstrip(". ")
            if forms == "varied":
                candidates = [j for j in candidates if whole_clause(pieces[j])] or candidates
            i = max(candidates, key=lambda j: (overlap(hypothesis, pieces[j]), -j))
            premise = _LIST_MARKER.sub("", pieces[i])
            form = "because"
            if forms == "varied":
                draw = random.Random(f"{seed}-{name}-{doc['id']}-{key}")
                form = draw.choice(sorted(ARGUED_FORMS))
                premise = short_premise(premise, hypothesis)
            claim = argued_claim(premise, hypothesis, form)
            out.append(Example(
                id=f"cnliargued-{doc['id']}-{key}", question="What follows from the agreement?",
                context=window_of(pieces, i), answer=claim, label="ungrounded", split="dev",
                error_types=(kind,),
                meta={"group": f"doc-{doc['id']}", "source": "contractnli", "source_file": name,
                      "contract_id": int(doc["id"]), "span": i, "hypothesis": key, "altered_sentence": claim,
                      "rule": rule}))
    return out


def reworded_sources(sources: list[Example], generator: LLMGenerator, seed: int) -> tuple[list[Example], Counter]:
    """Each span's kept LLM paraphrase as a grounded source of its own (same context), and why the others failed.

    The model sees the span alone as its document: rewording needs nothing else, and a prompt of a few hundred
    tokens less halves a CPU-served model's time per call. The paraphrase then gets the span's whole window back.
    """
    alone = [s.model_copy(update={"context": (s.answer,)}) for s in sources]
    with Progress(transient=True) as progress:
        task = progress.add_task("rewording", total=len(sources))
        result = perturb(alone, types=(), per_answer=1, seed=seed, paraphrases=1, generator=generator,
                         progress=lambda: progress.advance(task))
    by_id = {s.id: s for s in sources}
    out = []
    for row in result.examples:
        record = row.meta["perturbation"]
        if record["kind"] != "paraphrase":
            continue
        source = by_id[record["source_id"]]
        meta = {k: v for k, v in row.meta.items() if k != "perturbation"}
        out.append(row.model_copy(update={"context": source.context, "meta": {**meta, "reworded_from": source.answer}}))
    return out, result.rejected_by_reason()


def write_rows(path: Path, rows: list[Example]) -> None:
    """The rows as native JSON lines."""
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row.model_dump(mode="json"), ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Write the variants and print the counts per type."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contractnli", type=Path, default=Path("../shared/datasets/contractnli"))
    parser.add_argument("--legal-types", type=Path, default=Path("datasets/legal_types/legal_types.jsonl"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--per-contract", type=int, default=0, help="spans drawn per contract (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--types", metavar="A,B,...", help=f"error types to make (default all: {','.join(SLUGS)})")
    parser.add_argument("--generator", metavar="SPEC", help="perturb's LLM generator (an LLM setting spec)")
    parser.add_argument("--generator-only", action="store_true", help="every variant from the LLM, no rule's")
    parser.add_argument("--cache-dir", metavar="DIR", help="LLM call cache (default: groundjudge's)")
    parser.add_argument("--reword-first", action="store_true",
                        help="the LLM paraphrases each span, then the rules edit the paraphrase (needs --generator)")
    parser.add_argument("--argued", action="store_true",
                        help="Reasoning Errors from the Not Mentioned hypotheses, argued from a span (no LLM)")
    parser.add_argument("--forms", choices=("because", "varied"), default="because",
                        help="with --argued: every claim 'Because P, C.' or a seeded draw of forms and short premises")
    parser.add_argument("--controls", action="store_true",
                        help="with --argued: also the contradicted hypotheses argued from their evidence (Factual)")
    args = parser.parse_args(argv)
    if args.argued:
        if args.generator or args.reword_first or args.types or args.per_contract:
            parser.error("--argued takes none of --generator, --reword-first, --types, --per-contract")
        argued = argued_variants(args.contractnli, dev_contracts(args.legal_types), args.forms, args.controls,
                                 args.seed)
        write_rows(args.out, argued)
        print(json.dumps({"variants": len(argued), "contracts": len({r.meta["group"] for r in argued}),
                          "per_type": dict(Counter(r.error_types[0] for r in argued))}))
        return 0
    if args.forms != "because" or args.controls:
        parser.error("--forms and --controls go with --argued")
    if args.reword_first and not args.generator:
        parser.error("--reword-first needs --generator (the LLM that paraphrases)")
    sources = span_sources(args.contractnli, dev_contracts(args.legal_types), args.per_contract, args.seed)
    generator = None
    if args.generator:
        service = make_service(LLMOptions(cache_dir=args.cache_dir))
        generator = LLMGenerator.from_spec(args.generator, service, only=args.generator_only or args.reword_first)
    reworded: Counter = Counter()
    if args.reword_first:
        spans = len(sources)
        sources, reworded = reworded_sources(sources, generator, args.seed)
        reworded["kept"], reworded["spans"] = len(sources), spans
    result = perturb(sources, types=parse_types(args.types), per_answer=1, seed=args.seed, paraphrases=0,
                     generator=None if args.reword_first else generator)
    variants = [r for r in result.examples if r.label == "ungrounded"]
    write_rows(args.out, variants)
    counts = Counter(r.error_types[0] for r in variants)
    print(json.dumps({"sources": len(sources), "contracts": len({s.meta["group"] for s in sources}),
                      "variants": len(variants), "per_type": dict(sorted(counts.items())),
                      "rejected": result.rejected_by_reason(), "reworded": dict(reworded),
                      "llm_calls": len(generator.calls) if generator else 0}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
