"""The pytest plugin (issue 36): pass, fail with its message, repeats and pass rate, the table under -n 2, record
then replay with the network off, and a session that never judges loading neither torch nor litellm.

Sessions run through ``pytester`` as subprocesses: in process, pytester drops the modules a session imported
first, and a C extension so dropped (numpy's, once the dev extras pull more of it in) refuses to load again.
LLM judges talk to the real scripted server on 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap

import pytest

import groundjudge.judges.claims  # noqa: F401  (imported before pytester's snapshot: inline sessions reuse them)
import groundjudge.judges.direct  # noqa: F401
import groundjudge.judges.quip  # noqa: F401
import groundjudge.runs.execute  # noqa: F401
import groundjudge.runs.live_records  # noqa: F401
import groundjudge.runs.runner  # noqa: F401
import groundjudge.testing.assertions  # noqa: F401
import groundjudge.testing.gate_record  # noqa: F401
from conftest import ROOT

from groundjudge.runs.records import read_records
from groundjudge.testing.oracle import oracle_responder
from groundjudge.testing.scripted_server import Reply, ScriptedLLMServer

pytest_plugins = ["pytester"]

CONTEXT = ("Clause 4. Rent of 104 crowns is due on day 5 of each month. "
           "A late fee of 6 percent applies after day 9.")
GROUNDED = "Rent of 104 crowns is due on day 5 of each month."
UNGROUNDED = "Tenants may withhold rent whenever the landlord delays repairs for 7 weeks."


def llm_spec(server, kind: str = "claims", extra: str = "threshold=1.0") -> str:
    """A spec for an LLM judge that talks to the scripted server."""
    return f"{kind}:model=openai/gpt-4o-mini,api_base={server.openai_base},timeout=5" + (f",{extra}" if extra else "")


def gate_file(pytester: pytest.Pytester, body: str, name: str = "test_gate") -> None:
    """A test file using the gate, with CONTEXT, GROUNDED and UNGROUNDED defined."""
    header = f"import pytest\nfrom groundjudge.testing import assert_grounded\n\nCONTEXT = {CONTEXT!r}\n" \
             f"GROUNDED = {GROUNDED!r}\nUNGROUNDED = {UNGROUNDED!r}\n"
    pytester.makepyfile(**{name: header + textwrap.dedent(body)})


def table(lines: list[str]) -> dict[str, list[str]]:
    """The groundjudge table of a session's output: test id -> its rows ("gate verdict score threshold repeats
    judge"), every row kept, in order."""
    start = next(i for i, line in enumerate(lines) if "groundjudge verdicts" in line)
    assert lines[start + 1].split() == ["gate", "verdict", "score", "threshold", "repeats", "test", "judge"]
    rows: dict[str, list[str]] = {}
    for line in lines[start + 2:]:
        if not line.strip() or line.startswith(("=", "recorded")) or re.match(r"^\d+ verdicts:", line):
            break
        cells = line.split()
        rows.setdefault(cells[5], []).append(" ".join(cells[:5] + cells[6:]))
    return rows


@pytest.mark.slow
def test_pass_and_fail_with_the_verdict_score_threshold_and_unsupported_claims(pytester):
    gate_file(pytester, """
        def test_grounded():
            verdict = assert_grounded(GROUNDED, [CONTEXT], judge="quip")
            assert verdict.label == "grounded" and verdict.passed

        @pytest.mark.groundjudge(judge="quip:threshold=0.75")
        def test_ungrounded(groundjudge):
            groundjudge.assert_grounded(GROUNDED + " " + UNGROUNDED, CONTEXT, question="When is rent due?")

        @pytest.mark.groundjudge(judge="quip", min_score=0.9)
        def test_min_score_is_the_threshold():
            assert_grounded(GROUNDED + " " + UNGROUNDED, CONTEXT)

        def test_default_judge_from_ini_and_a_look_without_asserting(groundjudge):
            seen = groundjudge.judge(UNGROUNDED, CONTEXT)
            assert seen.label == "ungrounded" and not seen.passed and seen.judge == "quip:n=11"
            assert_grounded(GROUNDED, CONTEXT)

        def test_not_judging():
            assert True
    """)
    pytester.makeini("[pytest]\ngroundjudge_judge = quip:n=11\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=2)
    out = result.stdout.str()
    message = out[out.index("_ test_ungrounded _"):out.index("_ test_min_score_is_the_threshold _")]
    assert "answer not grounded (judge quip:threshold=0.75): verdict ungrounded, score 0.500, threshold 0.750" \
        in message
    assert "repeats: 0 of 1 passed (label grounded); pass rate needed 0.8, got 0.00" in message
    assert "unsupported claims (1 of 2):" in message
    assert f"'{UNGROUNDED}' (unverifiable, score 0.000)" in message and "evidence: none found" in message
    assert "path: local:quip(n=21)" in message
    assert "verdict grounded, score 0.500, threshold 0.900" in out      # min_score decides, and is shown
    assert "repeats: 0 of 1 passed (score >= 0.9)" in out
    rows = table(result.stdout.lines)
    assert rows == {
        "test_gate.py::test_grounded": ["PASS grounded 1.000 0.500 1/1 quip"],
        "test_gate.py::test_ungrounded": ["FAIL ungrounded 0.500 0.750 0/1 quip:threshold=0.75"],
        "test_gate.py::test_min_score_is_the_threshold": ["FAIL grounded 0.500 0.900 0/1 quip"],
        "test_gate.py::test_default_judge_from_ini_and_a_look_without_asserting": [
            "(fail) ungrounded 0.000 0.500 0/1 quip:n=11"],
        "test_gate.py::test_default_judge_from_ini_and_a_look_without_asserting#2": [
            "PASS grounded 1.000 0.500 1/1 quip:n=11"],
    }
    assert "5 verdicts: 2 passed, 2 failed, 1 not asserted" in out


@pytest.mark.slow
def test_a_judge_that_is_not_deterministic_gets_a_verdict_from_repeats_and_pass_rate(pytester):
    def reply(label: str) -> Reply:
        return Reply(content=json.dumps({"reasoning": "checked", "verdict": label, "score": 0.9 if label == "grounded"
                                         else 0.2}))

    with ScriptedLLMServer(oracle_responder) as server:
        for label in ["grounded"] * 4 + ["ungrounded"]:          # test_four_of_five: 0.8 >= 0.8
            server.push(reply(label))
        for label in ["grounded", "ungrounded", "grounded", "ungrounded", "grounded"]:   # 0.6 < 0.8
            server.push(reply(label))
        gate_file(pytester, f"""
            pytestmark = pytest.mark.groundjudge(judge={llm_spec(server, "direct", "")!r}, repeats=5)

            def test_four_of_five():
                verdict = assert_grounded(GROUNDED, CONTEXT)
                assert (verdict.passing, verdict.repeats, verdict.passed) == (4, 5, True)

            @pytest.mark.groundjudge(pass_rate=0.8)
            def test_three_of_five(groundjudge):
                groundjudge.assert_grounded(GROUNDED, CONTEXT, question="When is rent due?")

            @pytest.mark.groundjudge(judge="quip", repeats=3, pass_rate=1.0)
            def test_a_local_judge_repeated():
                assert_grounded(GROUNDED, CONTEXT)
        """)
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
        assert len(server.requests) == 10      # one call per repeat: each repeat its own cache key
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    # the majority of test_three_of_five's repeats is grounded, yet 3 of 5 is under the pass rate
    assert "verdict grounded, score 0.620" in out
    assert "repeats: 3 of 5 passed (label grounded); pass rate needed 0.8, got 0.60" in out
    assert "repeat verdicts: grounded 0.900, ungrounded 0.200, grounded 0.900, ungrounded 0.200, grounded 0.900" in out
    rows = table(result.stdout.lines)
    assert [r.split()[:5] for r in rows["test_gate.py::test_four_of_five"]] == [
        ["PASS", "grounded", "0.760", "-", "4/5"]]
    assert [r.split()[:5] for r in rows["test_gate.py::test_three_of_five"]] == [
        ["FAIL", "grounded", "0.620", "-", "3/5"]]
    assert rows["test_gate.py::test_a_local_judge_repeated"] == ["PASS grounded 1.000 0.500 3/3 quip"]


@pytest.mark.slow
def test_under_xdist_the_controller_prints_every_verdict_once_and_alone_records_them(pytester, tmp_path):
    pytest.importorskip("xdist")
    body = "".join(f"""
        @pytest.mark.groundjudge(judge="quip")
        def test_{i}(groundjudge):
            groundjudge.assert_grounded(GROUNDED, CONTEXT)
            groundjudge.judge(UNGROUNDED, CONTEXT)
    """ for i in range(6)) + """
        def test_fails():
            assert_grounded(UNGROUNDED, CONTEXT, judge="quip")
    """
    gate_file(pytester, body)
    record = tmp_path / "gate-run"
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "--groundjudge-record", str(record))
    result.assert_outcomes(passed=6, failed=1)
    assert "2 workers" in result.stdout.str()
    rows = table(result.stdout.lines)
    expected = {f"test_gate.py::test_{i}": ["PASS grounded 1.000 0.500 1/1 quip"] for i in range(6)}
    expected |= {f"test_gate.py::test_{i}#2": ["(fail) ungrounded 0.000 0.500 0/1 quip"] for i in range(6)}
    expected["test_gate.py::test_fails"] = ["FAIL ungrounded 0.000 0.500 0/1 quip"]
    assert rows == expected
    result.stdout.fnmatch_lines(["13 verdicts: 6 passed, 1 failed, 6 not asserted",
                                 f"recorded 13 verdicts in {record / 'records.jsonl'}"])
    records = read_records(record / "records.jsonl")
    assert sorted(r.example.id for r in records.results) == sorted(expected)
    assert records.header.dataset.files == ("pytest",) and [s.spec for s in records.header.judges] == ["quip"]
    summary = json.loads((record / "summary.json").read_text())
    assert summary["judges"]["quip"]["n_judged"] == 13
    assert not list(record.glob("*.lock"))


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2", "--dist", "loadfile"]], ids=["plain", "xdist"])
def test_a_session_that_only_looks_is_tallied_as_such_and_one_without_verdicts_prints_no_table(pytester, workers):
    if workers:
        pytest.importorskip("xdist")
    gate_file(pytester, """
        def test_look(groundjudge):
            assert not groundjudge.judge(UNGROUNDED, CONTEXT, judge="quip").passed

        def test_another_look(groundjudge):
            assert groundjudge.judge(GROUNDED, CONTEXT, judge="quip").passed
    """, name="test_looks")
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = pytester.runpytest_subprocess(*workers, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    assert set(table(result.stdout.lines)) == {"test_looks.py::test_look", "test_looks.py::test_another_look"}
    result.stdout.fnmatch_lines(["2 verdicts: none asserted"])
    assert "0 passed, 0 failed" not in result.stdout.str()
    plain = pytester.runpytest_subprocess(*workers, "-p", "no:cacheprovider", "test_plain.py")
    plain.assert_outcomes(passed=1)
    assert "groundjudge verdicts" not in plain.stdout.str() and "verdicts:" not in plain.stdout.str()


@pytest.mark.slow
def test_record_then_replay_with_the_server_stopped(pytester, tmp_path, monkeypatch):
    server = ScriptedLLMServer(oracle_responder).start()
    spec = llm_spec(server)
    gate_file(pytester, f"""
        pytestmark = pytest.mark.groundjudge(judge={spec!r})

        def test_llm_grounded():
            assert_grounded(GROUNDED, CONTEXT, question="When is rent due?")

        def test_llm_ungrounded():
            assert_grounded(GROUNDED + " " + UNGROUNDED, CONTEXT, question="When is rent due?")

        @pytest.mark.groundjudge(judge="quip", repeats=2)
        def test_local():
            assert_grounded(GROUNDED, CONTEXT)
    """)
    first, second = tmp_path / "recorded", tmp_path / "replayed"
    try:
        recorded = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--groundjudge-record", str(first))
    finally:
        server.stop()
    calls = len(server.requests)
    recorded.assert_outcomes(passed=2, failed=1)
    message = recorded.stdout.str()
    assert f"answer not grounded (judge {spec}): verdict ungrounded, score 0.500, threshold 1.000" in message
    assert f"'{UNGROUNDED}' (contradicted, score 0.000)" in message and "reason: not in evidence" in message

    monkeypatch.setenv("GROUNDJUDGE_CACHE_DIR", str(tmp_path / "empty-cache"))   # only the records answer
    gate_file(pytester, f"""
        pytestmark = pytest.mark.groundjudge(judge={spec!r})

        def test_llm_grounded():
            assert_grounded(GROUNDED, CONTEXT, question="When is rent due?")

        def test_llm_ungrounded():
            assert_grounded(GROUNDED + " " + UNGROUNDED, CONTEXT, question="When is rent due?")

        @pytest.mark.groundjudge(judge="quip", repeats=2)
        def test_local():
            assert_grounded(GROUNDED, CONTEXT)

        def test_not_recorded():
            assert_grounded("The late fee is 6 percent after day 9.", CONTEXT, question="What is the fee?")
    """)
    replayed = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--groundjudge-replay={first}",
                                  f"--groundjudge-record={second}")
    replayed.assert_outcomes(passed=2, failed=2)
    assert len(server.requests) == calls                 # no request reached the (stopped) server
    assert f"groundjudge verdicts (replayed from {first})" in replayed.stdout.str()
    # an answer the recording never judged finds no reply: the network is off, and the message says so
    assert "reason: offline: no recorded reply for a 'claims_extract' call and the network is off" \
        in replayed.stdout.str()

    before = {r.example.id: r.result for r in read_records(first / "records.jsonl").results}
    after = {r.example.id: r.result for r in read_records(second / "records.jsonl").results}
    assert set(after) == set(before) | {"test_gate.py::test_not_recorded"}
    for test, result in before.items():
        assert (after[test].verdict.label, after[test].verdict.score) == (result.verdict.label, result.verdict.score)
        assert len(after[test].calls) == len(result.calls)
        assert all(call.cached for call in after[test].calls)
    assert before["test_gate.py::test_llm_grounded"].calls      # the LLM judge's calls were recorded, and replayed
    assert after["test_gate.py::test_not_recorded"].verdict.label == "abstain"


def test_a_session_that_never_judges_loads_neither_torch_nor_litellm_and_opens_no_connection(pytester):
    pytester.makepyfile(test_unrelated="""
        import sys

        def test_something_else(request):
            assert request.config.pluginmanager.has_plugin("groundjudge")     # the plugin is loaded
            assert "torch" not in sys.modules and "litellm" not in sys.modules
    """)
    script = textwrap.dedent("""
        import socket, sys
        connections = []
        real_connect = socket.socket.connect
        def connect(self, address):
            connections.append(address)
            return real_connect(self, address)
        socket.socket.connect = connect
        import pytest
        code = pytest.main(["-q", "-p", "no:cacheprovider", "test_unrelated.py"])
        heavy = [m for m in ("torch", "litellm", "transformers", "sentence_transformers") if m in sys.modules]
        print("GATE", int(code), "heavy=" + ",".join(heavy), "connections=" + str(len(connections)))
    """)
    result = pytester.run(sys.executable, "-c", script)
    result.stdout.fnmatch_lines(["*1 passed*", "GATE 0 heavy= connections=0"])
    assert "groundjudge verdicts" not in result.stdout.str()


@pytest.mark.slow
def test_the_docs_test_files_run_as_shown(pytester, llm_server):
    doc = (ROOT / "docs" / "pytest.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(\w+)\n(.*?)```", doc, re.DOTALL)
    python = [body for lang, body in blocks if lang == "python"]
    ini = next(body for lang, body in blocks if lang == "ini")
    pytester.makepyfile(test_answers=python[0])
    pytester.makefile(".ini", pytest=ini)
    marker_doc = python[1].replace("claims:model=openai/gpt-4o-mini", llm_spec(llm_server, "claims", ""))
    pytester.makepyfile(test_marker=marker_doc)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=5)
    rows = table(result.stdout.lines)
    assert rows["test_marker.py::test_refund_policy_answer"][0].startswith("PASS grounded 1.000 1.000 5/5 claims:")
    assert sum("atomic claims" in r.text for r in llm_server.requests) == 5    # each repeat its own calls
