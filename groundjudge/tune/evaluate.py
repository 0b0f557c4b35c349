"""Judging during a tune: each judge config over a part's answers, each answer once (the state file), each request
once (the call cache), every call counted against the tune's budget. A local judge with a batch path is handed
the answers in chunks, as ``groundjudge run`` hands them (:mod:`groundjudge.runs.local_chunks`)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from groundjudge.errors import ProviderUnreachable
from groundjudge.judges.config import JudgeConfig
from groundjudge.llm.errors import FALLBACK_REASONS, reason_kind
from groundjudge.runs.chunk_option import DEFAULT_LOCAL_CHUNK
from groundjudge.runs.local_chunks import batch_scorer, chunks, judge_chunk
from groundjudge.runs.runner import judge_one
from groundjudge.tune.candidates import config_id
from groundjudge.tune.estimate import Ledger, Request, requests_for
from groundjudge.tune.parts import group_of
from groundjudge.tune.state import STATE_FILE, Judged, TuneState, judged
from groundjudge.types import Example, JudgeResult

UNREACHABLE = FALLBACK_REASONS - {"budget", "context_too_long"}
"""Abstain reasons that say the provider did not answer (not the answer's fault): such an answer is not recorded
as judged, so candidates are never compared on abstentions the provider caused."""


def unreachable(reason: str | None) -> bool:
    """True when an abstain reason (``kind: message``) is one of :data:`UNREACHABLE`."""
    return reason_kind(reason) in UNREACHABLE


@dataclass
class Evaluator:
    """Judges answers with judge configs through one LLM service, recording each in the tune state."""

    service: Any
    state: TuneState
    concurrency: int = 8
    local_chunk: int = DEFAULT_LOCAL_CHUNK
    """Answers handed at once to a local judge with a batch path (``--local-chunk``)."""
    ledger: Ledger = field(default_factory=Ledger)
    _judges: dict[str, Any] = field(default_factory=dict)

    def judge_of(self, config: JudgeConfig) -> Any:
        """The judge of a config, built once."""
        cid = config_id(config)
        if cid not in self._judges:
            self._judges[cid] = config.build(service=self.service)
        return self._judges[cid]

    def todo(self, config: JudgeConfig, part: str, examples: Sequence[Example]) -> list[Example]:
        """The answers of ``examples`` this config has not judged completely yet."""
        cid = config_id(config)
        return [ex for ex in examples if self.state.get(cid, part, ex.id) is None]

    def requests(self, config: JudgeConfig, part: str, examples: Sequence[Example]) -> list[Request]:
        """The requests judging the answers still to do would send (before removing those already sent)."""
        judge = self.judge_of(config)
        return [r for ex in self.todo(config, part, examples) for r in requests_for(judge, ex, self.service.prompts)]

    def mark_done(self, config: JudgeConfig, part: str, examples: Sequence[Example]) -> None:
        """Count the requests of answers already judged as sent (a resumed tune)."""
        judge = self.judge_of(config)
        cid = config_id(config)
        done = [ex for ex in examples if self.state.get(cid, part, ex.id) is not None]
        self.ledger.new((r for ex in done for r in requests_for(judge, ex, self.service.prompts)), commit=True)

    def judge(self, config: JudgeConfig, part: str, examples: Sequence[Example]) -> dict[str, Judged]:
        """Judge the answers not judged yet; return every answer's result (from the state when done before)."""
        cid = config_id(config)
        todo = sorted(self.todo(config, part, examples), key=group_of)   # one document's answers in a row
        if todo:
            self.ledger.new(self.requests(config, part, todo), commit=True)
            judge = self.judge_of(config)
            failed = []
            for example, result in zip(todo, self._results(judge, todo)):
                if unreachable(result.verdict.abstain_reason):
                    failed.append(result.verdict.abstain_reason)
                else:
                    self.state.add(judged(cid, part, example.id, result))
            if failed:
                raise ProviderUnreachable(
                    f"the tune stopped: {len(failed)} of {len(todo)} answers of {cid} on the {part} part got no "
                    f"answer from the provider ({failed[0]}); what was judged is kept in {STATE_FILE}: "
                    "run the same command again with --resume once the provider answers")
        results = {}
        for example in examples:
            found = self.state.get(cid, part, example.id)
            results[example.id] = found if found is not None else Judged(
                config=cid, part=part, example=example.id, label="abstain", abstain_reason="budget")
        return results

    def _results(self, judge: Any, examples: Sequence[Example]) -> list[JudgeResult]:
        """Each example's result, in order: a local judge with a batch path scores them in chunks of
        ``local_chunk`` (grouped by document; an answer that raises abstains alone), any other judge one by one."""
        scorer = batch_scorer(judge)
        if scorer is None:
            return asyncio.run(self._judge_all(judge, examples))
        found: dict[int, JudgeResult] = {}
        for chunk in chunks(examples, self.local_chunk):
            found.update((id(example), result) for example, result in zip(chunk, judge_chunk(judge, scorer, chunk)))
        return [found[id(example)] for example in examples]

    async def _judge_all(self, judge: Any, examples: Sequence[Example]) -> list:
        """Judge in the given order: with one request at a time, a local server (llama.cpp, vLLM) reuses the
        prompt prefix the answers of one document share, so a document is read once, not once per answer."""
        limit = asyncio.Semaphore(max(1, min(self.concurrency, judge.max_concurrency or self.concurrency)))

        async def one(example: Example):
            async with limit:
                return await judge_one(judge, example)

        return await asyncio.gather(*(one(ex) for ex in examples))
