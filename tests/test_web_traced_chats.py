"""``agent-core web FOLDER --trace-db PATH``: a chat sent from the page is traced into the
same span database the Runs page reads, so it appears there (the real command, in a
subprocess, on 127.0.0.1)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("opentelemetry.sdk", reason="the Runs page needs opentelemetry-sdk")


def call(base: str, token: str, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        base + path,
        data=data,
        method=method,
        headers={"X-Inspector-Token": token, "Accept": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


def test_a_chat_from_the_page_appears_in_runs(tmp_path: Path) -> None:
    traces = tmp_path / "traces.db"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agent_core.cli",
            "web",
            "examples/function_tools",
            "--trace-db",
            str(traces),
            "--port",
            "0",
            "--no-browser",
            "--session-db",
            str(tmp_path / "s.db"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = ""
        for _ in range(5):
            found = re.search(r"(http://\S+)", process.stdout.readline())
            if found:
                url = found.group(1)
                break
        assert url, "agent-core web printed no URL"
        base, token = url.split("/?token=")
        answer = call(base, token, "POST", "/api/sessions/ana/s1/messages", {"text": "hi"})
        invocation = answer["events"][0]["invocationId"]
        seen: list[str] = []
        for _ in range(50):  # the spans are written in batches: look again a few times
            seen = [i["id"] for i in call(base, token, "GET", "/api/invocations")["invocations"]]
            if invocation in seen:
                break
            time.sleep(0.2)
        assert invocation in seen
        spans = call(base, token, "GET", f"/api/invocations/{invocation}/spans")
        assert spans["spans"]
    finally:
        process.terminate()
        process.wait(10)
