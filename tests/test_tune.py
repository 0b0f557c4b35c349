"""``groundjudge tune`` against the scripted LLM server: group splits, the budget kept to the call, successive
halving keeping the better candidate, resuming without a repeated call, the dry run, and bad tune files.

The server answers the yes/no prompt of the direct judge by the oracle (word overlap: right) only when the system
prompt carries ``GOOD-MARKER`` (the prompt folder ``good``); every other prompt gets a coin flip (P(yes) from a hash
of the request), so the ``good`` folder is clearly the better candidate.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pytest

from conftest import qa_rows, rent_rows, write_jsonl
from groundjudge.cli import main
from groundjudge.llm.templates import PACKAGE_PROMPTS
from groundjudge.testing.oracle import oracle_responder
from groundjudge.testing.scripted_server import Reply, ScriptedLLMServer
from groundjudge.tune.parts import group_of, split_parts
from groundjudge.types import Example


def coin_or_oracle(request) -> Reply:
    """The oracle for prompts with GOOD-MARKER (and the proposer), a hashed coin flip for the rest."""
    if "improve the instructions" in request.text:
        return Reply(content=json.dumps({"guidance": "GOOD-MARKER: check every number and party of the answer "
                                                     "against the documents."}))
    if "GOOD-MARKER" in request.text:
        return oracle_responder(request)
    p = 0.3 + 0.4 * int(hashlib.sha256(request.text.encode()).hexdigest()[:6], 16) / 0xFFFFFF
    return Reply(content="Yes" if p >= 0.5 else "No", top_logprobs={"Yes": math.log(p), "No": math.log(1 - p)})


@pytest.fixture
def server():
    with ScriptedLLMServer(coin_or_oracle) as srv:
        yield srv


def good_prompts(folder: Path) -> Path:
    """A prompt folder whose yes/no system prompt carries GOOD-MARKER (the server answers it right)."""
    good = folder / "prompts" / "good"
    good.mkdir(parents=True)
    source = (PACKAGE_PROMPTS / "direct_yesno.system.j2").read_text(encoding="utf-8")
    (good / "direct_yesno.system.j2").write_text(source + "\nGOOD-MARKER\n", encoding="utf-8")
    return good


def tune_file(folder: Path, server, tune: str, rows: list[dict] | None = None) -> Path:
    """data.jsonl (30 rent groups), prompts/good and tune.toml with the given [tune] body."""
    write_jsonl(folder / "data.jsonl", rows if rows is not None else rent_rows(30))
    if not (folder / "prompts" / "good").exists():
        good_prompts(folder)
    text = f"""
[data]
files = ["data.jsonl"]

[judges.direct]
kind = "direct"
model = "openai/scripted"
api_base = "{server.openai_base}"
score = "logprobs"

[tune]
judge = "direct"
{tune.strip()}
"""
    path = folder / "tune.toml"
    path.write_text(text.lstrip(), encoding="utf-8")
    return path


SEARCH = """
seed = 1
max_calls = 400
parts = { optimise = 0.3, select = 0.4, test = 0.3 }
first_rung = 4
fit_examples = 6

[tune.calibration]
methods = ["threshold", "batch"]

[tune.instructions]
prompts = ["prompts/good"]
"""


def run_cli(*args: str) -> int:
    return main(["tune", *args])


def read_result(out: Path) -> dict:
    return json.loads((out / "tune.json").read_text(encoding="utf-8"))


def test_parts_keep_every_group_in_one_part():
    examples = [Example.model_validate(r) for r in rent_rows(30) + qa_rows(12)]
    for seed in range(5):
        parts = split_parts(examples, 0.4, 0.3, 0.3, seed, with_pool=True)
        names = ("pool", "fit", "select", "test")
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                assert not parts.groups(a) & parts.groups(b), (seed, a, b)
        assert sum(len(getattr(parts, n)) for n in names) == len(examples)
        assert all(getattr(parts, n) for n in names)
    assert split_parts(examples, 0.4, 0.3, 0.3, 3) == split_parts(examples, 0.4, 0.3, 0.3, 3)   # seeded
    assert group_of(examples[0]) == group_of(examples[1])   # one rent group: the grounded and the altered answer


@pytest.mark.slow
def test_successive_halving_keeps_the_better_prompt_and_the_winner_runs_as_it_is(tmp_path, server, capsys):
    path = tune_file(tmp_path, server, SEARCH)
    out = tmp_path / "tuned"
    assert run_cli(str(path), "--out", str(out)) == 0
    result = read_result(out)
    winner = next(c for c in result["candidates"] if c["id"] == result["winner"])
    assert winner["levers"]["prompts"] == "good"
    assert len(result["candidates"]) == 4    # (as given, good) x (threshold, batch)
    first, *later = result["rungs"]
    assert len(first["candidates"]) == 4 and len(first["kept"]) == 2
    assert all(c.split(":")[0] == winner["id"].split(":")[0] for c in first["kept"])   # both good ones go on
    assert result["calls"] == len(server.requests) <= result["max_calls"]
    assert result["test"]["balanced_accuracy"]["delta"] > 0.2
    assert result["test"]["mcnemar_p"] < 0.05
    assert "## Tuning" in (out / "tune.md").read_text(encoding="utf-8")
    before = len(server.requests)
    assert main(["run", str(out / "winner.toml"), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    (judge,) = summary["judges"].values() if isinstance(summary["judges"], dict) else summary["judges"]
    assert len(server.requests) - before <= len(rent_rows(30))   # cached calls answer the tuned answers


class _Memory:
    """A tune state kept in memory (what the Evaluator reads and adds)."""

    def __init__(self):
        self.entries = {}
        self.calls_by_config = {}

    def get(self, *key):
        return self.entries.get(key)

    def add(self, entry):
        if entry.complete:
            self.entries[(entry.config, entry.part, entry.example)] = entry


@pytest.mark.slow
def test_the_budget_is_kept_to_the_call(tmp_path, server):
    path = tune_file(tmp_path, server, SEARCH.replace("max_calls = 400", "max_calls = 58"))
    out = tmp_path / "tuned"
    assert run_cli(str(path), "--out", str(out)) == 0
    result = read_result(out)
    assert len(server.requests) <= 58
    assert result["calls"] == len(server.requests)
    assert result["stopped"].startswith("budget")


def test_the_call_budget_refuses_the_call_past_max_calls(server):
    from groundjudge.judges.config import JudgeConfig
    from groundjudge.llm import LLMService
    from groundjudge.tune.budget import CallBudget
    from groundjudge.tune.evaluate import Evaluator

    budget = CallBudget(max_calls=3)
    config = JudgeConfig.create("direct", model="openai/scripted", api_base=server.openai_base, score="logprobs")
    examples = [Example.model_validate(r) for r in rent_rows(4)]
    results = Evaluator(LLMService(budget=budget), _Memory(), concurrency=4).judge(config, "select", examples)
    assert len(server.requests) == 3 and budget.calls == 3 and budget.refused == 5
    assert sum(r.abstain_reason == "budget" for r in results.values()) == 5


def test_one_documents_answers_are_judged_in_a_row(server):
    """Interleaved documents (a select part drawn at random) are judged document by document, so a local server
    reuses the prompt prefix (the document) its answers share; each answer still gets its own result."""
    from groundjudge.judges.config import JudgeConfig
    from groundjudge.llm import LLMService
    from groundjudge.tune.evaluate import Evaluator

    rows = rent_rows(3)
    interleaved = [Example.model_validate(rows[i]) for i in (0, 2, 4, 1, 3, 5)]   # c0 c1 c2 c0 c1 c2
    config = JudgeConfig.create("direct", model="openai/scripted", api_base=server.openai_base, score="logprobs")
    results = Evaluator(LLMService(), _Memory(), concurrency=1).judge(config, "select", interleaved)
    sent = [next(g for g in range(3) if f"Clause {g}." in r.text) for r in server.requests]
    assert sent == [0, 0, 1, 1, 2, 2]
    assert set(results) == {ex.id for ex in interleaved} and all(r.label != "abstain" for r in results.values())


@pytest.mark.slow
def test_a_resumed_tune_repeats_no_call(tmp_path, server):
    path = tune_file(tmp_path, server, SEARCH.replace("max_calls = 400", "max_calls = 58"))
    out = tmp_path / "tuned"
    assert run_cli(str(path), "--out", str(out)) == 0
    first = [r.text for r in server.requests]
    path.write_text(path.read_text(encoding="utf-8").replace("max_calls = 58", "max_calls = 400"), encoding="utf-8")
    assert run_cli(str(path), "--out", str(out), "--resume") == 0
    second = [r.text for r in server.requests[len(first):]]
    assert second and not set(second) & set(first)
    assert len(set(second)) == len(second)
    assert read_result(out)["calls"] == len(server.requests) <= 400
    assert run_cli(str(path), "--out", str(out), "--resume") == 0
    assert len(server.requests) == len(first) + len(second)   # a finished tune resumed: no call at all


def test_dry_run_makes_no_call(tmp_path, server, capsys):
    path = tune_file(tmp_path, server, SEARCH)
    assert run_cli(str(path), "--out", str(tmp_path / "tuned"), "--dry-run") == 0
    printed = capsys.readouterr().out
    assert "rung 0: 4 candidates" in printed and "test: start and winner" in printed
    assert server.requests == []
    assert not (tmp_path / "tuned" / "tune_state.jsonl").exists()


@pytest.mark.slow
def test_the_proposer_writes_an_instruction_candidate(tmp_path, server):
    tune = SEARCH.replace('prompts = ["prompts/good"]', 'proposer = "openai/scripted"\nproposals = 1\n'
                          f'proposer_api_base = "{server.openai_base}"')
    path = tune_file(tmp_path, server, tune)
    out = tmp_path / "tuned"
    assert run_cli(str(path), "--out", str(out)) == 0
    result = read_result(out)
    winner = next(c for c in result["candidates"] if c["id"] == result["winner"])
    assert winner["levers"].get("proposal") == "p1"
    assert "GOOD-MARKER" in (out / "proposals" / "p1" / "direct_yesno.system.j2").read_text(encoding="utf-8")
    assert result["calls"] == len(server.requests) <= result["max_calls"]


BAD = [
    ("unknown lever", SEARCH + "\n[tune.temperature]\nvalues = [0.0]\n", "tune.temperature", "unknown lever"),
    ("budget below one candidate", SEARCH.replace("max_calls = 400", "max_calls = 5"), "max_calls",
     "cannot cover one candidate"),
    ("empty test part", SEARCH.replace("test = 0.3", "test = 0.0"), "parts", "test part is empty"),
    ("no labels", SEARCH, "files", "no labelled answer"),
    ("unknown ranking metric", SEARCH.replace("seed = 1", 'seed = 1\nselect_by = "f1"'), "select_by",
     "balanced_accuracy"),
]


def test_select_by_roc_auc_ranks_by_the_score():
    """The default ranks by balanced accuracy (then ROC AUC); select_by = "roc_auc" the other way round."""
    from groundjudge.tune.scoring import Scored, rank_key

    def scored(bacc, auc):
        return Scored(verdicts=[], scores=[], threshold=None, balanced_accuracy=bacc, roc_auc=auc, input_tokens=0,
                      output_tokens=0, cost_usd=0)

    decides, ranks = scored(0.8, 0.7), scored(0.7, 0.9)
    assert sorted([ranks, decides], key=lambda s: rank_key(s, 0)) == [decides, ranks]
    assert sorted([decides, ranks], key=lambda s: rank_key(s, 0, "roc_auc")) == [ranks, decides]


@pytest.mark.parametrize("what, tune, key, message", BAD, ids=[b[0] for b in BAD])
def test_a_bad_tune_file_is_one_line_naming_its_line(tmp_path, server, capsys, what, tune, key, message):
    rows = [{k: v for k, v in r.items() if k != "label"} for r in rent_rows(30)] if what == "no labels" else None
    path = tune_file(tmp_path, server, tune, rows)
    assert run_cli(str(path), "--out", str(tmp_path / "tuned")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    lines = path.read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(lines, start=1)
                if text.startswith(key) or text.startswith(f"[{key}]"))
    assert err.startswith(f"error: {path}:{line}:"), err
    assert server.requests == []


@pytest.mark.slow
def test_a_provider_that_stops_answering_stops_the_tune_and_resume_goes_on(tmp_path, capsys):
    """A server that goes down mid-tune (503 on every call) stops the tune with one line, records none of the
    failed answers as judged (candidates are never compared on the provider's abstentions), and --resume goes on."""
    answering = {"until": 25}

    def flaky(request) -> Reply:
        answering["until"] -= 1
        return coin_or_oracle(request) if answering["until"] >= 0 else Reply(status=503, content="overloaded")

    with ScriptedLLMServer(flaky) as srv:
        path = tune_file(tmp_path, srv, SEARCH)
        path.write_text(path.read_text(encoding="utf-8").replace('score = "logprobs"',
                                                                 'score = "logprobs"\nmax_attempts = 1'),
                        encoding="utf-8")
        out = tmp_path / "tuned"
        assert run_cli(str(path), "--out", str(out)) == 2
        error = capsys.readouterr().err
        assert "got no answer from the provider" in error and "--resume" in error
        state = (out / "tune_state.jsonl").read_text(encoding="utf-8")
        assert "retries_exhausted" not in state and "provider_error" not in state
        assert not (out / "tune.json").exists()
        answering["until"] = 10**9
        assert run_cli(str(path), "--out", str(out), "--resume") == 0
        lines = [json.loads(line) for line in (out / "tune_state.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip()]
        judged_lines = [line for line in lines if "label" in line]
        assert judged_lines and all(line["label"] != "abstain" for line in judged_lines)
        assert read_result(out)["test"]["n"] > 0
