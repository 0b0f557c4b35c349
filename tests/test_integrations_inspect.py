"""Inspect: ``inspect_ai.eval`` scores a task with the ``groundjudge/grounded`` scorer, and ``inspect score`` rescores
its log by the scorer's registered name (found through the ``inspect_ai`` entry point).

The model is Inspect's own ``mockllm/model`` answering from a fixed table, the judge the local ``quip`` judge: no
network (tiktoken reads the encodings litellm bundles).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai import Task, eval as inspect_eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import generate  # noqa: E402
from inspect_ai.tool import ToolCall  # noqa: E402

from groundjudge.integrations.inspect import grounded  # noqa: E402

LEASE = ("Section 4 of the Leases Act. A landlord must return a deposit within 21 days after the lease ends. "
         "The Tenancy Board hears disputes about deposits.")
ANSWERS = {
    "When must a deposit be returned?": "A landlord must return a deposit within 21 days after the lease ends.",
    "Who hears deposit disputes?": "Disputes about deposits go to the county court, which also sets the rent cap.",
    "What does the retrieved clause say about deposits?": "The Tenancy Board hears disputes about deposits.",
    "Is there a notice period?": "Yes, three months.",
}
"""The mock model's answer to each question: grounded, ungrounded, grounded (in the tool's output), no documents."""


def _tiktoken_offline(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment with TIKTOKEN_CACHE_DIR at litellm's bundled encodings (Inspect counts tokens with them)."""
    import litellm

    folder = Path(litellm.__file__).parent / "litellm_core_utils" / "tokenizers"
    return {**(env or os.environ), "TIKTOKEN_CACHE_DIR": str(folder)}


def _samples() -> list[Sample]:
    """Two samples with documents in their metadata, one with them in a retrieval tool's output, one with none."""
    questions = list(ANSWERS)
    call = ToolCall(id="call-1", function="retrieve", arguments={"query": "deposits"})
    retrieval = [ChatMessageUser(content=questions[2]), ChatMessageAssistant(content="", tool_calls=[call]),
                 ChatMessageTool(content=LEASE, tool_call_id="call-1", function="retrieve")]
    return [Sample(id="grounded", input=questions[0], metadata={"context": [LEASE]}),
            Sample(id="ungrounded", input=questions[1], metadata={"context": LEASE}),
            Sample(id="from-tool", input=retrieval),
            Sample(id="no-context", input=questions[3])]


def _mock_answer(messages, tools, tool_choice, config) -> ModelOutput:
    """The table's answer to the conversation's first user question."""
    question = next(m.text for m in messages if m.role == "user")
    return ModelOutput.from_content(model="mockllm/model", content=ANSWERS[question])


@pytest.fixture(scope="module")
def eval_log(tmp_path_factory) -> Path:
    """A finished ``inspect_ai.eval`` of the four samples, scored by groundjudge/grounded with quip."""
    log_dir = tmp_path_factory.mktemp("inspect-logs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", _tiktoken_offline()["TIKTOKEN_CACHE_DIR"])
        patch.setenv("INSPECT_LOG_DIR", str(log_dir))
        task = Task(dataset=_samples(), solver=generate(), scorer=grounded(judge="quip"))
        model = get_model("mockllm/model", custom_outputs=_mock_answer)
        [log] = inspect_eval(task, model=model, log_dir=str(log_dir), display="none", log_format="eval")
    assert log.status == "success", log.error
    return Path(log.location.removeprefix("file://"))


def _scores(log_path: Path, name: str) -> dict[str, object]:
    """Sample id -> the score named ``name`` in a log file."""
    log = read_eval_log(str(log_path))
    return {str(sample.id): sample.scores[name] for sample in log.samples}


def test_eval_scores_every_sample_with_the_groundjudge_verdict(eval_log: Path) -> None:
    scores = _scores(eval_log, "grounded")
    assert scores["grounded"].value == 1.0 and scores["grounded"].metadata["label"] == "grounded"
    assert scores["grounded"].answer == ANSWERS["When must a deposit be returned?"]
    assert scores["ungrounded"].value == 0.0
    assert scores["ungrounded"].metadata["judge"] == "quip"
    assert scores["ungrounded"].metadata["path"].startswith("local:quip")
    assert scores["ungrounded"].explanation.startswith("ungrounded (score ")
    assert scores["from-tool"].value == 1.0   # the documents came from the retrieve tool's message
    assert math.isnan(scores["no-context"].value) and scores["no-context"].reason == "no_context"


def test_eval_metrics_leave_the_unscored_sample_out(eval_log: Path) -> None:
    log = read_eval_log(str(eval_log), header_only=True)
    [result] = log.results.scores
    assert result.name == "grounded" and result.scored_samples == 3
    assert result.metrics["mean"].value == pytest.approx(2 / 3)


@pytest.mark.slow
def test_inspect_score_cli_finds_the_scorer_by_its_registered_name(eval_log: Path, tmp_path: Path) -> None:
    rescored = tmp_path / "rescored.eval"
    cli = Path(sys.executable).with_name("inspect")
    result = subprocess.run([str(cli), "score", str(eval_log), "--scorer", "groundjudge/grounded",
                             "-S", "judge=quip:n=11", "-S", "tool=retrieve", "--action", "overwrite",
                             "--output-file", str(rescored), "--display", "none"],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path,
                            env={**_tiktoken_offline(), "INSPECT_LOG_DIR": str(tmp_path / "logs")})   # not ./logs
    assert result.returncode == 0, result.stderr[-3000:]
    scores = _scores(rescored, "grounded")
    assert {sample: score.metadata and score.metadata.get("judge") for sample, score in scores.items()} == \
        {"grounded": "quip:n=11", "ungrounded": "quip:n=11", "from-tool": "quip:n=11", "no-context": None}
    assert scores["grounded"].value == 1.0 and scores["ungrounded"].value == 0.0
