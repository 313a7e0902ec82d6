"""The inspector's jobs API over HTTP: jobs a real Runner made in a real SQLite database,
listed, shown, cancelled and resolved, and bad requests answered in our words."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from test_web_api import _started, request

from agent_core import (
    Agent,
    JobStatus,
    Runner,
    ScriptedModel,
    SqliteJobStore,
    SqliteSessionService,
)
from agent_core.jobs.base import JobCall
from agent_core.web import serve
from tooling import JobOptions, tool
from tooling.web import WebServer


@tool(durable=True)
def make_report(topic: str):  # type: ignore[no-untyped-def]
    """Write a report, in two parts.

    Args:
        topic: What the report is about.
    """
    yield {"written": 1, "of": 2}
    yield {"written": 2, "of": 2}
    return {"report": f"all about {topic}"}


@tool(durable=JobOptions(lease=0.2))
async def charge(amount: int) -> dict[str, Any]:
    """Charge a card (pretend).

    Args:
        amount: How much.
    """
    return {"charged": amount}


def _call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    call = {"name": name, "args": args, "id": call_id}
    return {"role": "model", "parts": [{"functionCall": call}]}


@dataclass
class Filled:
    runner: Runner
    server: WebServer
    done: str  # SUCCEEDED
    doubt: str  # IN_DOUBT
    pending: str  # PENDING


async def _fill(runner: Runner) -> tuple[str, str, str]:
    async def say(text: str, session: str) -> None:
        async for _ in runner.run_async(user_id="ann", session_id=session, new_message=text):
            pass

    await say("charge 5", "pay")
    # A holder that claimed the charge, committed its started marker, and died.
    held = await runner.job_store.claim(["charge"], "a-worker-that-died")
    assert held is not None
    assert await runner.job_store.mark_started(held.id, "a-worker-that-died")
    await say("report on tides", "reports")
    await runner.run_jobs(until_idle=True)  # runs the report; the charge is still held
    await asyncio.sleep(0.3)  # the dead holder's lease lapses
    await runner.run_jobs(until_idle=True)  # settles the charge in doubt, delivers it
    await say("report on seas", "reports")  # nobody runs it: pending
    jobs = {(j.tool, j.args.get("topic")): j for j in await runner.list_jobs()}
    return (
        jobs["make_report", "tides"].id,
        jobs["charge", None].id,
        jobs["make_report", "seas"].id,
    )


@contextmanager
def filled_app(tmp_path: Path, run: Callable[[Any], Any] = asyncio.run) -> Iterator[Filled]:
    """An app with one job of each kind, served; ``run`` runs a coroutine to its end."""
    model = ScriptedModel(
        [
            _call("charge", {"amount": 5}, "c-charge"),
            "Charging.",
            _call("make_report", {"topic": "tides"}, "c-tides"),
            "Writing.",
            _call("make_report", {"topic": "seas"}, "c-seas"),
            "Writing again.",
        ]
    )
    service = SqliteSessionService(tmp_path / "app.db")
    agent = Agent(name="writer", model=model, tools=[make_report, charge])
    runner = Runner(agent, app_name="app", session_service=service, job_resume="append")
    done, doubt, pending = run(_fill(runner))
    with runner, serve(runner) as server:
        yield Filled(runner, server, done, doubt, pending)
    run(runner.job_store.close())
    service.close()


@pytest.fixture
def filled(tmp_path: Path) -> Iterator[Filled]:
    with filled_app(tmp_path) as made:
        yield made


def test_the_jobs_page_is_offered_and_lists_every_job_of_the_app(filled: Filled) -> None:
    _, info = request(filled.server, "GET", "/api/info")
    assert info["pages"] == ["tools", "sessions", "jobs"]
    assert info["apps"][0]["jobs"] is True
    status, body = request(filled.server, "GET", "/api/jobs")
    assert status == 200
    by_id = {j["id"]: j for j in body["jobs"]}
    assert {k: by_id[k]["status"] for k in by_id} == {
        filled.done: "SUCCEEDED",
        filled.doubt: "IN_DOUBT",
        filled.pending: "PENDING",
    }
    assert body["jobs"][0]["id"] == filled.pending  # newest first
    tides = by_id[filled.done]
    assert tides["tool"] == "make_report" and tides["session_id"] == "reports"
    assert tides["user_id"] == "ann" and tides["attempt"] == 1
    assert tides["progress"] == {"written": 2, "of": 2}  # the latest the tool reported
    assert tides["finished_at"] >= tides["created_at"] > 0
    _, only = request(filled.server, "GET", "/api/jobs?status=in_doubt")
    assert [j["id"] for j in only["jobs"]] == [filled.doubt]
    _, of_session = request(filled.server, "GET", "/api/jobs?session=pay")
    assert [j["id"] for j in of_session["jobs"]] == [filled.doubt]


def test_one_job_shows_its_arguments_and_outcome(filled: Filled) -> None:
    _, done = request(filled.server, "GET", f"/api/jobs/{filled.done}")
    assert done["args"] == {"topic": "tides"}
    assert done["response"] == {"report": "all about tides"}
    assert done["call_ids"] == ["c-tides"] and done["delivered_at"] is not None
    assert not done["can_cancel"] and not done["can_resolve"]
    _, doubt = request(filled.server, "GET", f"/api/jobs/{filled.doubt}")
    assert doubt["error_code"] == "tool.in_doubt" and doubt["can_resolve"]
    assert "was not run again" in doubt["error_message"]


def test_bad_requests_are_answered_in_our_words(filled: Filled) -> None:
    server = filled.server
    status, body = request(server, "GET", "/api/jobs/job_nope")
    assert status == 404 and body["error"] == "there is no job 'job_nope' in app 'app'"
    assert request(server, "POST", "/api/jobs/job_nope/cancel")[0] == 404
    assert request(server, "POST", "/api/jobs/job_nope/resolve", {"rerun": True})[0] == 404
    status, body = request(server, "GET", "/api/jobs?status=DONE")
    assert status == 400 and "status must be one of PENDING" in body["error"]
    status, body = request(server, "POST", f"/api/jobs/{filled.done}/cancel")
    assert status == 409
    assert body["error"] == (
        f"job {filled.done} is SUCCEEDED: only a pending or running job is cancelled"
    )
    status, body = request(server, "POST", f"/api/jobs/{filled.pending}/resolve", {"rerun": True})
    assert status == 409 and "only a job in doubt or failed is resolved" in body["error"]
    resolve = f"/api/jobs/{filled.doubt}/resolve"
    for sent, words in [
        ({}, "give exactly one of"),
        ({"rerun": True, "error": "x"}, "give exactly one of"),
        ({"response": [1, 2]}, "response must be a JSON object"),
        ({"error": "  "}, "error must be a message"),
        ({"rerun": "yes"}, "rerun must be true"),
        ([], "the body must be a JSON object"),
    ]:
        status, body = request(server, "POST", resolve, sent)
        assert (status, words in body["error"]) == (400, True), (sent, body)
    status, body = request(
        server, "POST", resolve, None, headers={"Content-Type": "application/json"}
    )
    assert status == 400  # an empty body is {}: nothing given
    conn_status, conn_body = _raw_post(server, resolve, b'{"response": {')
    assert conn_status == 400 and "the body is not valid JSON" in conn_body["error"]
    # Without the token: refused before anything is read.
    assert request(server, "GET", "/api/jobs", token=None)[0] == 403
    assert request(server, "POST", f"/api/jobs/{filled.pending}/cancel", token="wrong")[0] == 403
    # None of that changed a job.
    statuses = {j.id: j.status for j in asyncio.run(filled.runner.list_jobs())}
    assert statuses[filled.pending] is JobStatus.PENDING
    assert statuses[filled.doubt] is JobStatus.IN_DOUBT


def _raw_post(server: WebServer, path: str, data: bytes) -> tuple[int, Any]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request(
        "POST",
        path,
        body=data,
        headers={
            "Host": f"127.0.0.1:{server.port}",
            "X-Inspector-Token": server.token,
            "Content-Type": "application/json",
        },
    )
    response = conn.getresponse()
    body = json.loads(response.read())
    conn.close()
    return response.status, body


def test_a_pending_job_is_cancelled_and_its_session_told(filled: Filled) -> None:
    status, body = request(filled.server, "POST", f"/api/jobs/{filled.pending}/cancel")
    assert status == 200
    assert body["status"] == "CANCELLED" and body["error_code"] == "job.cancelled"
    assert not body["can_cancel"]
    asyncio.run(filled.runner.run_jobs(until_idle=True))
    answer = asyncio.run(_final_answer(filled.runner, "reports", "c-seas"))
    assert answer["error"]["code"] == "job.cancelled"


def test_an_in_doubt_job_resolved_with_a_response_keeps_it(filled: Filled) -> None:
    path = f"/api/jobs/{filled.doubt}/resolve"
    status, body = request(filled.server, "POST", path, {"response": {"charged": 5, "by": "ops"}})
    assert status == 200 and body["status"] == "SUCCEEDED"
    assert body["response"] == {"charged": 5, "by": "ops"}
    _, shown = request(filled.server, "GET", f"/api/jobs/{filled.doubt}")
    assert shown["response"] == {"charged": 5, "by": "ops"} and shown["error_code"] is None
    # Settled: a second resolve is refused.
    assert request(filled.server, "POST", path, {"rerun": True})[0] == 409


def test_an_in_doubt_job_is_failed_with_a_message_or_run_again(filled: Filled) -> None:
    path = f"/api/jobs/{filled.doubt}/resolve"
    status, body = request(filled.server, "POST", path, {"error": "the bank says no charge"})
    assert status == 200 and body["status"] == "FAILED"
    assert body["error_message"] == "the bank says no charge" and body["can_resolve"]
    # A failed job may be run again: it is pending, and a worker runs it once more.
    status, body = request(filled.server, "POST", path, {"rerun": True})
    assert status == 200 and body["status"] == "PENDING" and body["can_cancel"]
    asyncio.run(filled.runner.run_jobs(until_idle=True))
    _, ran = request(filled.server, "GET", f"/api/jobs/{filled.doubt}")
    assert ran["status"] == "SUCCEEDED" and ran["response"] == {"charged": 5}


def test_a_job_of_another_app_in_the_same_store_is_not_found(filled: Filled) -> None:
    async def other() -> str:
        job, _ = await filled.runner.job_store.submit(
            key=None,
            app_name="someone-else",
            call=JobCall("c9", "bob", "s9", "x"),
            tool="make_report",
            args={"topic": "secrets"},
            fingerprint="f",
            max_attempts=1,
            idempotent=False,
            lease=10.0,
        )
        return job.id

    foreign = asyncio.run(other())
    assert request(filled.server, "GET", f"/api/jobs/{foreign}")[0] == 404
    assert request(filled.server, "POST", f"/api/jobs/{foreign}/cancel")[0] == 404
    _, body = request(filled.server, "GET", "/api/jobs")
    assert foreign not in {j["id"] for j in body["jobs"]}


async def _final_answer(runner: Runner, session_id: str, call_id: str) -> Any:
    session = await runner.session_service.get_session(
        app_name="app", user_id="ann", session_id=session_id
    )
    assert session is not None
    answers = [
        r.response
        for e in session.events
        for r in e.get_function_responses()
        if r.id == call_id and r.response.get("status") != "pending"
    ]
    return answers[-1]


ROOT = Path(__file__).resolve().parent.parent


def test_agent_core_web_reads_the_jobs_of_job_db(tmp_path: Path) -> None:
    async def one_job() -> str:
        store = SqliteJobStore(tmp_path / "jobs.db")
        job, _ = await store.submit(
            key=None,
            app_name="durable_report",
            call=JobCall("c1", "ann", "s1", "writer"),
            tool="make_report",
            args={"topic": "tides"},
            fingerprint="f",
            max_attempts=1,
            idempotent=False,
            lease=10.0,
        )
        await store.close()
        return job.id

    job_id = asyncio.run(one_job())
    command = [sys.executable, "-m", "agent_core.cli", "web", str(ROOT / "examples/durable_report")]
    where = ["--session-db", str(tmp_path / "s.db"), "--job-db", str(tmp_path / "jobs.db")]
    process = subprocess.Popen(
        [*command, *where, "--port", "0", "--no-browser"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = _started(process)
        base, token = url.split("/?token=")
        headers = {"X-Inspector-Token": token}
        req = urllib.request.Request(base + "/api/jobs", headers=headers)
        [listed] = json.load(urllib.request.urlopen(req, timeout=10))["jobs"]
        assert listed["id"] == job_id and listed["status"] == "PENDING"
        req = urllib.request.Request(f"{base}/api/jobs/{job_id}/cancel", headers=headers, data=b"")
        assert json.load(urllib.request.urlopen(req, timeout=10))["status"] == "CANCELLED"
    finally:
        process.terminate()
        process.wait(10)
    bad = subprocess.run(
        [*command, "--job-db", "nosuch://x", "--port", "0", "--no-browser"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "cannot open job database nosuch://x" in bad.stderr
