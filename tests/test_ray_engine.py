"""``--engine ray`` on a real multi-node Ray cluster started in this process (a head and two worker nodes).

The same runs in process and in Ray give the same records (order included) and summary; a worker node removed
mid-run loses no example and writes none twice; a driver killed mid-run resumes; the rate limit and the budget
hold across actors. Those tests are marked ``ray`` (deselect with ``-m "not ray"``) and skipped when Ray is not
installed (pip install -e '.[ray]'); the options, the ordered writer and the bucket arithmetic are checked without
Ray.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import ROOT, qa_rows, rent_rows, write_jsonl

import groundjudge
from groundjudge.errors import UsageError
from groundjudge.experiment import load_experiment
from groundjudge.llm.shared_limits import RateBuckets
from groundjudge.runs import engine_options
from groundjudge.runs.ray_cluster import ClusterShape, default_actors
from groundjudge.runs.ray_engine import OrderedCommit
from groundjudge.runs.records import read_records
from groundjudge.testing.oracle import oracle_responder

NODE = {"num_cpus": 1, "object_store_memory": 100 * 1024 * 1024}
TIME_KEYS = ("latency", "queue", "wall", "_s", "started", "finished", "run_id")


@pytest.fixture(scope="module")
def cluster():
    """A head node and two worker nodes (one CPU each), joined by this process."""
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[ray]'")
    from ray.cluster_utils import Cluster

    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    cluster = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False})
    for _ in range(2):
        cluster.add_node(**NODE)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address)
    yield cluster
    ray.shutdown()
    cluster.shutdown()
    for sig, handler in handlers.items():   # ray.init installs its own; later tests expect the defaults
        signal.signal(sig, handler)


def _slowed(server, delay: float = 0.15, log: list | None = None, hold: tuple | None = None):
    """The oracle, each reply delayed (and its arrival time logged); ``hold`` = (started, done) events: a request
    that arrives after ``started`` is set waits until ``done`` is (at most 30 s, half the client's timeout)."""
    def respond(request):
        if log is not None:
            log.append(time.monotonic())
        if hold is not None and hold[0].is_set():
            hold[1].wait(30)
        reply = oracle_responder(request)
        reply.delay = delay
        return reply

    server.set_responder(respond)


def _results(out: Path) -> list:
    return read_records(out / "records.jsonl").results


def _verdicts(out: Path) -> list[tuple[str, str, dict]]:
    """The verdicts in file order (the Ray engine writes the data's order, as an in-process run with
    concurrency 1 does)."""
    return [(r.judge, r.example.id, r.result.verdict.model_dump()) for r in _results(out)]


def _stable(value):
    """A summary without run ids and timings (which differ between any two runs)."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if not any(t in k for t in TIME_KEYS)}
    if isinstance(value, list):   # notes on queueing and latency are timings too
        return [_stable(v) for v in value if not (isinstance(v, str) and "latency" in v)]
    return value


def _summary(out: Path) -> dict:
    return _stable(json.loads((out / "summary.json").read_text()))


def _once_each(out: Path, reference: Path) -> None:
    """Every (judge, example) pair of the reference run is in ``out``'s records exactly once."""
    pairs = Counter((r.judge, r.example.id) for r in _results(out))
    assert all(count == 1 for count in pairs.values()), [p for p, c in pairs.items() if c > 1]
    assert set(pairs) == {(r.judge, r.example.id) for r in _results(reference)}


def _when_written(path: Path, at_least: int, then, timeout: float = 120.0) -> threading.Thread:
    """A thread that calls ``then()`` once ``path`` holds ``at_least`` results."""
    def watch():
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if path.exists() and path.read_text(encoding="utf-8").count("\n") > at_least:
                then()
                return
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def one_thread(monkeypatch):
    """Torch on one thread here, as in the one-CPU actors: a float sum over another number of threads can differ
    in its last bit (cosine scores by ~1e-7), in process as on Ray."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    monkeypatch.setenv("GROUNDJUDGE_THREADS", "1")
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.slow
@pytest.mark.ray
def test_ray_gives_the_in_process_records_and_summary(cluster, llm_server, tmp_path, one_thread):
    data = write_jsonl(tmp_path / "qa.jsonl", qa_rows(6))
    claims = f"claims:model=openai/gpt-4o-mini,api_base={llm_server.openai_base},against=context"
    judges = ["quip", "cosine:threshold=0.5", claims]
    local = groundjudge.evaluate(str(data), judges=judges, out=tmp_path / "local", concurrency=1, no_cache=True)
    calls_in_process = len(llm_server.requests)
    distributed = groundjudge.evaluate(str(data), judges=judges, out=tmp_path / "ray", engine="ray", ray_batch=2,
                                       ray_actors=2, no_cache=True)
    assert _verdicts(local.path) == _verdicts(distributed.path)   # same verdicts, scores and order
    assert _summary(local.path) == _summary(distributed.path)
    sizes = {r.result.batch_size for r in _results(distributed.path) if r.judge == "cosine:threshold=0.5"}
    assert sizes == {2}   # the actors judged their batches of 2 in one chunk, as a run does
    assert len(llm_server.requests) == 2 * calls_in_process     # the same calls, made once each
    _once_each(distributed.path, local.path)


@pytest.mark.slow
@pytest.mark.ray
def test_a_worker_node_dying_mid_run_loses_and_repeats_nothing(cluster, llm_server, tmp_path):
    # 40 answers: on a host loaded past its cores (a clean-clone CI run beside a local LLM), the run's 20 answers
    # once came in too late a burst for the node to go while it lasted
    data = write_jsonl(tmp_path / "rent.jsonl", rent_rows(20))
    spec = f"claims:model=openai/gpt-4o-mini,api_base={llm_server.openai_base},against=context"
    options = {"dev_fraction": 0, "no_cache": True}
    reference = groundjudge.evaluate(str(data), judges=[spec], out=tmp_path / "local", concurrency=1, **options)
    calls_in_process = len(llm_server.requests)
    llm_server.requests.clear()
    removing, removed = threading.Event(), threading.Event()
    _slowed(llm_server, delay=0.3, hold=(removing, removed))   # no reply while the node is being removed

    def remove():   # a worker node on which a judge actor runs
        from ray._private.state import actors

        removing.set()
        busy = {a["Address"]["NodeID"] for a in actors().values()
                if a["ActorClassName"] == "LLMJudgeWorker" and a["State"] == "ALIVE"}
        cluster.remove_node(next(node for node in cluster.worker_nodes if node.node_id in busy))
        removed.set()

    out = tmp_path / "ray"
    watcher = _when_written(out / "records.jsonl", 2, remove)
    try:
        # one answer at a time per actor: the run lasts seconds after its first records, and the replies wait while
        # the node goes (under load, removing a node took longer than the rest of the run); at the default
        # concurrency every batch would be in flight at once and the records would come in one burst at the end
        groundjudge.evaluate(str(data), judges=[spec], out=out, engine="ray", ray_batch=2, concurrency=1, **options)
        watcher.join(timeout=60)
        assert removed.is_set(), "the run ended before the node was removed"
        _once_each(out, reference.path)
        assert _verdicts(out) == _verdicts(reference.path)
        assert _summary(out) == _summary(reference.path)
        # a batch in flight on the lost node is judged again (more calls than in process); none is lost either way
        # (the node may have been between batches when it was removed, under load)
        assert len(llm_server.requests) >= calls_in_process, (len(llm_server.requests), calls_in_process)
    finally:
        cluster.add_node(**NODE)   # the next tests get three nodes again
        cluster.wait_for_nodes()


@pytest.mark.slow
@pytest.mark.ray
def test_a_killed_driver_resumes_with_every_example_once(cluster, llm_server, tmp_path):
    data = write_jsonl(tmp_path / "rent.jsonl", rent_rows(6))
    spec = f"claims:model=openai/gpt-4o-mini,api_base={llm_server.openai_base},against=context"
    reference = groundjudge.evaluate(str(data), judges=[spec], out=tmp_path / "local", dev_fraction=0, no_cache=True,
                                     concurrency=1)
    _slowed(llm_server)
    out = tmp_path / "ray"
    command = [sys.executable, "-m", "groundjudge.cli", "run", str(data), "--judge", spec, "--out", str(out),
               "--dev-fraction", "0", "--no-cache", "--quiet", "--engine", "ray", "--ray-batch", "2", "--ray-actors", "1",
               "--concurrency", "1"]   # one answer at a time: the run outlasts its first records, for the kill
    env = {**os.environ, "RAY_ADDRESS": cluster.address}
    driver = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    records = out / "records.jsonl"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and driver.poll() is None:
        if records.exists() and records.read_text(encoding="utf-8").count("\n") > 3:
            break
        time.sleep(0.05)
    assert driver.poll() is None, driver.stderr.read().decode()[-2000:]
    driver.send_signal(signal.SIGKILL)
    driver.wait(timeout=30)
    kept = len(_results(out))
    assert 0 < kept < 12
    resumed = subprocess.run([*command, "--resume"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"{kept} result(s) kept" in resumed.stderr
    _once_each(out, reference.path)
    assert _verdicts(out) == _verdicts(reference.path)
    assert _summary(out) == _summary(reference.path)


@pytest.mark.slow
@pytest.mark.ray
def test_two_actors_share_one_rate_limit(cluster, llm_server, tmp_path):
    data = write_jsonl(tmp_path / "rent.jsonl", rent_rows(3))
    rpm = 240   # one request every 0.25 s over the whole cluster
    spec = f"claims:model=openai/gpt-4o-mini,api_base={llm_server.openai_base},against=context,rpm={rpm}"
    arrivals: list[float] = []
    _slowed(llm_server, delay=0.0, log=arrivals)
    groundjudge.evaluate(str(data), judges=[spec], out=tmp_path / "ray", engine="ray", ray_actors=2, ray_batch=1,
                         dev_fraction=0, no_cache=True)
    assert len(arrivals) >= 8
    # the bucket's bound: in any stretch of time t at most 1 + t * rpm / 60 requests (the first one may overtake
    # by its connection set-up); two actors with a limiter each would send twice as many
    rate = rpm / 60
    for i, start in enumerate(arrivals):
        for j in range(i + 1, len(arrivals)):
            assert j - i <= 1.2 + (arrivals[j] - start) * rate, (i, j, [b - a for a, b in zip(arrivals, arrivals[1:])])


@pytest.mark.slow
@pytest.mark.ray
def test_the_budget_is_shared_by_every_actor(cluster, llm_server, tmp_path):
    data = write_jsonl(tmp_path / "rent.jsonl", rent_rows(10))
    spec = (f"claims:model=openai/gpt-4o-mini,api_base={llm_server.openai_base},against=context,"
            "input_cost_per_mtok=40,output_cost_per_mtok=0,concurrency=1")
    _slowed(llm_server, delay=0.05)
    out = tmp_path / "ray"
    groundjudge.evaluate(str(data), judges=[spec], out=out, engine="ray", ray_actors=2, ray_batch=2, dev_fraction=0,
                         no_cache=True, max_cost=0.05, concurrency=1)   # one answer, one call in flight per actor
    results = _results(out)
    costs = [c.cost_usd for r in results for c in r.result.calls if c.cost_usd]
    reasons = Counter((r.result.verdict.abstain_reason or "").split(":")[0] for r in results)
    assert reasons["budget"] > 0 and costs
    # new calls stop cluster-wide once 0.05 is spent (checked before each call, as in process): past it, only the
    # calls already in flight (one per actor) are paid
    assert sum(costs) < 0.05 + 2 * max(costs)
    assert sum(costs) < 0.05 * 2   # two separate per-actor budgets would have let each actor spend 0.05


@pytest.mark.slow
@pytest.mark.ray
def test_a_fatal_judge_error_in_an_actor_stops_the_run_as_in_process(cluster, tmp_path):
    from groundjudge.local_nli.model import ModelUnavailable

    data = write_jsonl(tmp_path / "rent.jsonl", rent_rows(2))
    with pytest.raises(ModelUnavailable, match="no-such-model"):
        groundjudge.evaluate(str(data), judges=["cosine:model=no-such-model,threshold=0.5"], out=tmp_path / "ray",
                             engine="ray", ray_actors=1, dev_fraction=0)


# --- without Ray: the options, the ordered writer, the buckets' arithmetic


def test_engine_ray_without_ray_installed_says_how_to_install_it(monkeypatch):
    from groundjudge.runs.execute import RunOptions

    monkeypatch.setattr(engine_options, "ray_installed", lambda: False)
    with pytest.raises(UsageError, match=r"pip install -e '\.\[ray\]'"):
        RunOptions.model_validate({"data": ["x"], "judges": [{"name": "quip", "kind": "quip"}], "engine": "ray"})


def test_engine_ray_refuses_provider_batches(monkeypatch):
    from groundjudge.runs.execute import RunOptions

    monkeypatch.setattr(engine_options, "ray_installed", lambda: True)
    with pytest.raises(UsageError, match="--batch"):
        RunOptions.model_validate({"data": ["x"], "judges": [{"name": "quip", "kind": "quip"}], "engine": "ray",
                                   "batch": True})


def test_an_llm_actor_builds_its_judge_without_the_local_path_s_libraries():
    """An LLM judge's actor (and a served LLM judge) imports neither torch nor scikit-learn: on a one-CPU node each
    costs seconds per actor start. litellm is imported on the first call, not when the judge is built."""
    code = ("import sys\n"
            "from groundjudge.runs.ray_actors import WorkerSpec\n"
            "from groundjudge.judges.config import JudgeConfig\n"
            "for spec in ('claims:model=openai/m,against=context', 'direct:model=openai/m',\n"
            "             'error_types:model=openai/m'):\n"
            "    WorkerSpec(spec=spec, config=JudgeConfig.from_spec(spec), concurrency=1).build()\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'sklearn', 'scipy', 'litellm', "
            "'transformers'}))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", done.stdout


def test_the_experiment_file_and_the_flags_set_the_engine(tmp_path, monkeypatch):
    from groundjudge.cli import build_parser
    from groundjudge.cli.run import options_from_args

    monkeypatch.setattr(engine_options, "ray_installed", lambda: True)
    write_jsonl(tmp_path / "data.jsonl", rent_rows(2))
    experiment = tmp_path / "exp.toml"
    experiment.write_text('[data]\nfiles = ["data.jsonl"]\n\n[run]\nengine = "ray"\nray_batch = 4\n'
                          'ray_num_gpus = 1\n\n[judges.quip]\nkind = "quip"\n', encoding="utf-8")
    assert load_experiment(experiment).run.engine == "ray"
    args = build_parser().parse_args(["run", str(experiment), "--ray-actors", "3"])
    options = options_from_args(args)
    assert (options.engine, options.ray_batch, options.ray_num_gpus, options.ray_actors) == ("ray", 4, 1.0, 3)
    local = options_from_args(build_parser().parse_args(["run", str(experiment), "--engine", "local"]))
    runner = engine_options.runner_for(local)   # run_judges bound to the run's chunk size
    assert local.engine == "local" and runner.func.__name__ == "run_judges"
    assert runner.keywords == {"local_chunk": local.local_chunk}


@pytest.mark.parametrize("flag, value, allowed", [("--ray-batch", "0", ">= 1"), ("--ray-actors", "-2", ">= 1"),
                                                   ("--ray-num-cpus", "-1", ">= 0"), ("--ray-num-gpus", "-0.5", ">= 0")])
def test_a_ray_setting_out_of_range_is_one_line_naming_the_flag(tmp_path, capsys, flag, value, allowed):
    from groundjudge.cli import main

    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(2))
    out = tmp_path / "run"
    code = main(["run", str(data), "--judge", "quip", "--engine", "ray", flag, value, "--out", str(out)])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1, lines
    assert flag in lines[0] and allowed in lines[0] and f"got {float(value) if 'num' in flag else int(value)!r}" \
        in lines[0]
    assert not out.exists()
    with pytest.raises(UsageError, match=r"--ray-batch .*>= 1"):
        groundjudge.evaluate(str(data), judges=["quip"], out=tmp_path / "api", ray_batch=0)


@pytest.mark.slow
def test_an_actor_judges_its_batch_in_chunks_as_a_run_does(one_thread):
    from groundjudge.judges.config import JudgeConfig
    from groundjudge.runs.ray_actors import LocalJudgeWorker, WorkerSpec
    from groundjudge.types import Example

    rows = rent_rows(2)
    first, second = rows[0]["context"], rows[2]["context"]
    answers = [(first, "Rent of 100 crowns is due on day 1."), (second, "Rent of 101 crowns is due on day 2."),
               (first, "A late fee of 2 percent applies."), (second, "Tenants may withhold rent."),
               (first, "Rent is due in gold.")]
    batch = [Example(id=f"x{i}", context=context, answer=answer) for i, (context, answer) in enumerate(answers)]
    spec = "cosine:threshold=0.5"
    worker = LocalJudgeWorker(WorkerSpec(spec=spec, config=JudgeConfig.from_spec(spec), concurrency=1, local_chunk=2))
    results = worker.judge_batch(batch)
    # by document: x0 x2 | x4 x1 | x3 -- each chunk one call, its answers' latency its share; back in batch order
    assert [r.verdict.example_id for r in results] == [e.id for e in batch]
    assert [r.batch_size for r in results] == [2, 2, 2, 1, 2]
    assert results[0].started_at == results[2].started_at and results[4].started_at == results[1].started_at
    assert all(r.latency_s == pytest.approx(r.timings["chunk_s"] / r.batch_size) for r in results)
    alone = JudgeConfig.from_spec(spec).build()
    for example, result in zip(batch, results):
        own = asyncio.run(alone.judge(example)).verdict
        assert result.verdict.label == own.label and result.verdict.score == pytest.approx(own.score, abs=1e-6)
    quip = LocalJudgeWorker(WorkerSpec(spec="quip", config=JudgeConfig.from_spec("quip"), concurrency=1))
    assert {r.batch_size for r in quip.judge_batch(batch)} == {None}   # no batch path: one by one, as in a run


def test_the_ordered_writer_writes_in_order_and_once():
    written: list[int] = []
    commit = OrderedCommit(lambda position, result: written.append(position))
    assert commit.accept(2, "c") and commit.accept(1, "b") and written == []
    assert commit.accept(0, "a") and written == [0, 1, 2]
    assert not commit.accept(1, "b again") and not commit.accept(2, "c again")   # a batch judged twice
    assert commit.accept(4, "e") and not commit.accept(4, "e again") and written == [0, 1, 2]
    assert commit.accept(3, "d") and written == [0, 1, 2, 3, 4]


def test_the_rate_buckets_space_requests_like_the_in_process_limiter(monkeypatch):
    now = [100.0]
    monkeypatch.setattr("groundjudge.llm.shared_limits.time.monotonic", lambda: now[0])
    buckets = RateBuckets()
    waits = [buckets.reserve("m|rpm", 1, 1, 2.0) for _ in range(4)]   # 120 rpm: one request per 0.5 s
    assert waits == [0.0, 0.5, 1.0, 1.5]
    now[0] += 10
    assert buckets.reserve("m|rpm", 1, 1, 2.0) == 0.0   # drained meanwhile
    assert buckets.reserve("m|tpm", 600, 1000, 100.0) == 0.0 and buckets.reserve("m|tpm", 600, 1000, 100.0) == 2.0


def test_default_actors_fill_the_cluster_for_local_judges_and_one_node_each_for_llm_judges():
    shape = ClusterShape(cpus=8, gpus=2, nodes_with_cpus=3)
    assert default_actors(False, shape, 1, 0) == 8
    assert default_actors(False, shape, 2, 0) == 4
    assert default_actors(False, shape, 1, 1) == 2      # as many as the GPUs hold
    assert default_actors(True, shape, 1, 0) == 3
    assert default_actors(False, ClusterShape(cpus=0.5, gpus=0, nodes_with_cpus=0), 1, 0) == 1
