"""The labelling page of ``groundjudge label RUN``: the real server in a subprocess, driven by headless Chromium
(Debian's chromium + chromedriver, as in test_report_browser.py) and by httpx.

The browser test labels five items with the keyboard (one with an error type and a span), SIGKILLs the server
after the third and restarts it: the three labels are kept and the page goes on at the fourth. A hostile answer
and document show as text and run nothing. The API tests cover the 422s (nothing written), the token, the Host
check, one server per run folder, and two labellers with ``--overlap``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from browser import chromium
from conftest import ROOT, cli, rent_rows, write_jsonl

from groundjudge.labels.queue import queue_for_run, read_queue, write_queue
from groundjudge.labels.store import read_labels
from groundjudge.runs.records import read_records

HOSTILE = 'Rent is due <img src=x onerror="window.__xss=1"> monthly.<script>window.__xss=2</script>'
HOSTILE_DOC = ('Clause 9. <b>Rent</b> is due monthly. <img src=y onerror="window.__xss=3">'
               '<script>window.__xss=4</script>')
TOKEN = "s3cret-label-token"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabelServer:
    """``groundjudge label RUN --port P ...`` in a subprocess, its output in files beside the run."""

    def __init__(self, run: Path, *args: str, env: dict[str, str] | None = None, port: int | None = None):
        self.run, self.args, self.port = run, list(args), port or free_port()
        self.env = {**os.environ, "COLUMNS": "200", **(env or {})}
        self.proc: subprocess.Popen | None = None
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = run.parent / f"server-{self.port}.log"

    def start(self, token: str | None = None) -> LabelServer:
        command = [sys.executable, "-m", "groundjudge.cli", "label", str(self.run), "--port", str(self.port),
                   *self.args]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"the server exited ({self.proc.returncode}):\n{self.log.read_text()}")
            try:
                if httpx.get(f"{self.base}/api/config", headers=headers, timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise AssertionError(f"the server did not answer within 90 s:\n{self.log.read_text()}")

    def kill(self) -> None:
        """SIGKILL, and reap it (a zombie would still look alive to the run folder's lock)."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=20)


@pytest.fixture(scope="module")
def run_template(tmp_path_factory) -> Path:
    """A run of two quip judges on rent answers, one answer and document hostile markup."""
    folder = tmp_path_factory.mktemp("label-run")
    rows = rent_rows(4)
    rows.append({"id": "hostile", "question": "When is <i>rent</i> due?", "context": [HOSTILE_DOC],
                 "answer": HOSTILE, "label": None})
    data = write_jsonl(folder / "data.jsonl", rows)
    cli("run", str(data), "--judge", "quip:n=21,threshold=0.5", "--judge", "quip:n=8,threshold=0.7",
        "--out", str(folder / "run"), "--quiet", "--dev-fraction", "0")
    return folder / "run"


@pytest.fixture
def run(run_template, tmp_path) -> Path:
    """A fresh copy of the run, with its queue: the hostile answer first, then the stratified order."""
    target = tmp_path / "run"
    shutil.copytree(run_template, target)
    queue = queue_for_run(read_records(target / "records.jsonl"))
    write_queue(sorted(queue, key=lambda item: item.id != "hostile"), target)
    return target


def answers(run: Path) -> dict[str, str]:
    """Example id -> answer text."""
    return {r.example.id: r.example.answer for r in read_records(run / "records.jsonl").results}


# --- the browser ---------------------------------------------------------------------------------------------

@pytest.fixture
def browser():
    with chromium() as driver:
        yield driver


@pytest.mark.slow
def test_label_five_items_with_the_keyboard_across_a_killed_server(browser, run, artifacts):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    queue = [item.id for item in read_queue(run)]
    texts = answers(run)
    labels_file = run / "labels.jsonl"
    server = LabelServer(run, "--labeller", "alice")
    find, find_all = browser.find_element, browser.find_elements

    def press(key: str) -> None:
        ActionChains(browser).send_keys(key).perform()

    def wait_for(item_id: str) -> None:   # shown, and the server's fresh copy of it in place
        WebDriverWait(browser, 20).until(lambda b: b.find_element(By.ID, "item-id").text == item_id)
        WebDriverWait(browser, 20).until(
            lambda b: b.find_element(By.TAG_NAME, "body").get_attribute("data-loaded") == item_id)
        WebDriverWait(browser, 20).until(lambda b: b.find_element(By.ID, "answer").text.strip())

    def label(key: str, expect_next: str) -> None:
        press(key)
        wait_for(expect_next)

    def severe() -> list:
        return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]

    try:
        server.start()
        browser.get(f"{server.base}/?labeller=alice")
        WebDriverWait(browser, 30).until(lambda b: b.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
        wait_for(queue[0])
        assert find(By.ID, "progress").text.startswith(f"0 / {len(queue)}")
        assert find(By.ID, "labeller").text == "alice"
        # the hostile answer and document are text: no element made of them, no handler run
        assert find(By.ID, "answer").text == HOSTILE
        assert HOSTILE_DOC in [e.text for e in find_all(By.CSS_SELECTOR, "#documents .doc")]
        assert find(By.ID, "question").text == "When is <i>rent</i> due?"
        assert not find_all(By.CSS_SELECTOR, ", ".join(f"{box} {tag}" for box in ("#question", "#answer", "#documents")
                                                     for tag in ("img", "script", "b", "i")))
        assert browser.execute_script("return window.__xss === undefined")
        # the judges stay hidden until the item is labelled
        assert "Hidden until you label" in find(By.ID, "judges").text
        assert not find_all(By.CSS_SELECTOR, "#judges .verdict")
        label("g", queue[1])

        # the second: an error type (key 2) and a span selected in the answer (key m), then ungrounded
        answer = texts[queue[1]]
        word = answer.split()[2]
        start = answer.index(word)
        browser.execute_script(
            "const t = document.getElementById('answer').firstChild; const r = document.createRange();"
            "r.setStart(t, arguments[0]); r.setEnd(t, arguments[1]);"
            "const s = window.getSelection(); s.removeAllRanges(); s.addRange(r);", start, start + len(word))
        press("m")
        assert [m.text for m in find_all(By.CSS_SELECTOR, "#answer mark.span")] == [word]
        assert find(By.ID, "answer").text == answer           # marking keeps the text as it is
        press("2")
        boxes = find_all(By.CSS_SELECTOR, "#types input")
        assert len(boxes) == 6 and boxes[1].is_selected() and not boxes[0].is_selected()
        label("u", queue[2])
        label("n", queue[3])                                  # unsure
        # back to the third: now labelled, its verdicts show
        label(Keys.ARROW_LEFT, queue[2])
        WebDriverWait(browser, 10).until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#judges .verdict")) == 2)
        assert find(By.ID, "item-state").text == "unsure"
        label(Keys.ARROW_RIGHT, queue[3])
        assert find(By.ID, "progress").text.startswith(f"3 / {len(queue)}")
        assert not severe()
        browser.save_screenshot(str(artifacts / "label_page.png"))

        # killed without warning: every label the page saw saved is on disk
        server.kill()
        assert [r.id for r in read_labels(labels_file)] == queue[:3]
        server.start()
        browser.get(f"{server.base}/?labeller=alice")
        wait_for(queue[3])                                    # goes on at the fourth
        assert find(By.ID, "progress").text.startswith(f"3 / {len(queue)}")
        label("g", queue[4])
        label("u", queue[5])
        label("s", queue[6])                                  # skip: nothing written
        assert find(By.ID, "progress").text.startswith(f"5 / {len(queue)}")
        WebDriverWait(browser, 10).until(                    # the panel: 4 decided labels, 1 unsure
            lambda b: "4 labelled (1 unsure left out)" in b.find_element(By.ID, "estimates").text)
        assert not severe()
    finally:
        server.stop()

    records = read_labels(labels_file)
    assert [(r.id, r.label) for r in records] == list(zip(queue[:5], ["grounded", "ungrounded", "unsure",
                                                                      "grounded", "ungrounded"]))
    assert {r.labeller for r in records} == {"alice"}
    typed = records[1]
    assert typed.error_types == ["Contextual Misinterpretations"]
    assert [(s.start, s.end, s.text) for s in typed.spans] == [(start, start + len(word), word)]
    assert all(not r.error_types and not r.spans for r in records if r is not typed)


# --- the API -----------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_bad_labels_are_refused_with_the_reason_and_nothing_written(run):
    labels_file = run / "labels.jsonl"
    queue = [item.id for item in read_queue(run)]
    answer = answers(run)[queue[1]]
    server = LabelServer(run, "--labeller", "alice", "--token-env", "GJ_LABEL_TOKEN",
                         env={"GJ_LABEL_TOKEN": TOKEN}).start(token=TOKEN)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        with httpx.Client(base_url=server.base, timeout=10) as http:
            # the token: required on the page and the API, by header or ?token=; the static files are open
            assert http.get("/api/items").status_code == 401
            assert http.get("/api/items", headers={"Authorization": "Bearer wrong"}).status_code == 401
            assert http.get("/").status_code == 401
            assert http.post("/api/labels", json={"id": queue[0], "label": "grounded"}).status_code == 401
            page = http.get("/", params={"token": TOKEN})
            assert page.status_code == 200 and "label.js" in page.text
            assert "script-src 'self'" in page.headers["content-security-policy"]
            assert http.get("/assets/label.js").status_code == 200
            # another Host (DNS rebinding) is refused
            assert http.get("/api/items", headers={**auth, "Host": "evil.example"}).status_code == 400

            items = http.get("/api/items", headers=auth).json()["items"]
            assert [i["id"] for i in items] == queue
            assert all(i["judges"] is None and i["stratum"] is None for i in items)
            assert items[0]["answer"] == HOSTILE

            def refused(body: dict, reason: str, status: int = 422, **kwargs) -> None:
                response = http.post("/api/labels", json=body, headers=auth, **kwargs)
                assert response.status_code == status, response.text
                assert reason in json.dumps(response.json()["detail"]), response.text
                assert not labels_file.exists()

            refused({"id": queue[0], "label": "maybe"}, "'grounded', 'ungrounded' or 'unsure'")
            refused({"id": "no-such-id", "label": "grounded"}, "unknown id 'no-such-id'")
            refused({"id": queue[0], "label": "ungrounded", "error_types": ["Typos"]}, "unknown error type 'Typos'")
            refused({"id": queue[1], "label": "ungrounded", "spans": [{"start": 3, "end": 999}]},
                    "not a span of the answer")
            refused({"id": queue[1], "label": "ungrounded", "spans": [{"start": 0, "end": 4, "text": "nope"}]},
                    "is not the answer's text")
            refused({"id": queue[0], "label": "grounded", "score": 1}, "Extra inputs are not permitted")
            refused({"id": queue[0], "label": "grounded", "labeller": "<b>x</b>"}, "should match pattern")
            response = http.post("/api/labels", content=json.dumps({"id": queue[0], "label": "grounded"}),
                                 headers={**auth, "Content-Type": "text/plain"})
            assert response.status_code == 415 and not labels_file.exists()

            good = {"id": queue[1], "label": "ungrounded", "error_types": ["Misattributions"],
                    "spans": [{"start": 0, "end": 4}], "note": "<script>alert(1)</script>"}
            out = http.post("/api/labels", json=good, headers=auth).json()
            assert out["label"]["spans"] == [{"start": 0, "end": 4, "text": answer[:4]}]
            assert len(out["item"]["judges"]) == 2 and out["item"]["stratum"]   # shown once labelled
            assert out["progress"]["labelled"] == 1 and out["progress"]["next"] == queue[0]
            relabel = http.post("/api/labels", json={"id": queue[1], "label": "grounded"}, headers=auth).json()
            assert relabel["progress"]["labelled"] == 1
            estimates = http.get("/api/estimates", headers=auth).json()
            assert estimates["n_labelled"] == 1 and len(estimates["judges"]) == 2
        # one server per run folder: a second one stops at once, naming the first
        second = subprocess.run([sys.executable, "-m", "groundjudge.cli", "label", str(run), "--port",
                                 str(free_port())], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert second.returncode == 2 and "one labelling server per run folder" in second.stderr
    finally:
        server.stop()
    lines = read_labels(labels_file)
    assert [(r.id, r.label, r.labeller) for r in lines] == [(queue[1], "ungrounded", "alice"),
                                                            (queue[1], "grounded", "alice")]
    assert lines[0].note == "<script>alert(1)</script>"
    assert not (run / ".groundjudge.lock").exists()          # a stopped server leaves the folder unlocked


@pytest.mark.slow
def test_two_labellers_share_the_overlap_and_split_the_rest(run):
    queue = [item.id for item in read_queue(run)]
    # an earlier label, its line without a newline (edited by hand): the next append still starts a line
    (run / "labels.jsonl").write_text(json.dumps({"id": queue[0], "label": "grounded", "labeller": "dora"}))
    server = LabelServer(run, "--labeller", "alice", "--overlap", "2").start()
    try:
        with httpx.Client(base_url=server.base, timeout=10) as http:
            def order(name: str) -> list[str]:
                return http.get("/api/progress", params={"labeller": name}).json()["order"]

            def post(name: str, item_id: str, value: str = "grounded") -> dict:
                response = http.post("/api/labels", params={"labeller": name}, json={"id": item_id, "label": value})
                assert response.status_code == 200, response.text
                return response.json()

            assert order("alice") == order("bob") == queue
            assert http.get("/api/config").json()["labeller"] == "alice"
            assert http.get("/api/config", params={"labeller": "bob"}).json()["labeller"] == "bob"
            # past the overlap, an item opened by one leaves the other's queue, and is theirs once labelled
            assert http.get(f"/api/items/{queue[2]}", params={"labeller": "alice"}).status_code == 200
            assert queue[2] not in order("bob") and queue[2] in order("alice")
            post("alice", queue[2])
            assert http.get(f"/api/items/{queue[3]}", params={"labeller": "bob"}).status_code == 200
            post("bob", queue[3], "ungrounded")
            assert order("alice") == [q for q in queue if q != queue[3]]
            assert order("bob") == [q for q in queue if q != queue[2]]
            # the overlap goes to both; each sees the judges only after their own label
            post("alice", queue[0])
            assert http.get(f"/api/items/{queue[0]}", params={"labeller": "bob"}).json()["judges"] is None
            assert post("bob", queue[0], "unsure")["item"]["judges"]
            carol = http.post("/api/labels", json={"id": queue[1], "label": "grounded", "labeller": "carol"})
            assert carol.json()["label"]["labeller"] == "carol"
            bob = http.get("/api/progress", params={"labeller": "bob"}).json()
            assert (bob["labelled"], bob["queue_size"], bob["next"]) == (2, len(queue) - 1, queue[1])
            assert bob["labelled_by_anyone"] == 4
            assert http.get("/api/items", params={"labeller": "x<y"}).status_code == 422
            assert http.get("/api/items/no-such-id").status_code == 404
    finally:
        server.stop()
    lines = [(r.id, r.labeller, r.label) for r in read_labels(run / "labels.jsonl")]
    assert lines == [(queue[0], "dora", "grounded"), (queue[2], "alice", "grounded"), (queue[3], "bob", "ungrounded"),
                     (queue[0], "alice", "grounded"), (queue[0], "bob", "unsure"), (queue[1], "carol", "grounded")]


def test_show_judges_reveals_verdicts_before_labelling(run):
    from fastapi.testclient import TestClient

    from groundjudge.serve.label_app import label_app

    hidden = TestClient(label_app(run, "alice"), base_url="http://127.0.0.1")
    shown = TestClient(label_app(run, "alice", show_judges=True), base_url="http://127.0.0.1")
    first = read_queue(run)[0].id
    assert hidden.get(f"/api/items/{first}").json()["judges"] is None
    verdicts = shown.get(f"/api/items/{first}").json()["judges"]
    assert [v["judge"] for v in verdicts] == ["quip:n=21,threshold=0.5", "quip:n=8,threshold=0.7"]
    with pytest.raises(ValueError, match="labeller"):
        label_app(run, "bad\nname")
