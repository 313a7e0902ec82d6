"""The Runs page in a real browser: a waterfall drawn from spans another process stored.

Three runs of ``agent-core run --trace-db`` (three processes appending to one file, side
by side) play one turn each: ``[read a, read b, write c, read d]`` under AUTO and under
PARALLEL, and ``[save x, save y, save x]`` with a ``conflict_key``. Each tool sleeps
100 ms. The page must show what the stored spans say, bar for bar (0 mismatches), and
the stored spans must show the overlaps the strategy promises.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from _browser import browser_fixture, page_fixture, ready, screenshot  # noqa: F401

from agent_core import Agent, Runner, ScriptedModel
from agent_core.trace_db import find_trace, read_trace
from agent_core.web import serve

AGENT = '''
"""Files, for the waterfall tests: each tool takes 100 ms."""
import os
import time

from agent_core import Agent
from tooling import ExecutionStrategy, tool


@tool(read_only=True, concurrency_safe=True)
def read(path: str) -> str:
    """Read a file.

    Args:
        path: Which file.
    """
    time.sleep(0.1)
    return f"contents of {path}"


@tool
def write(path: str) -> str:
    """Write a file.

    Args:
        path: Which file.
    """
    time.sleep(0.1)
    return f"wrote {path}"


@tool(conflict_key="path")
def save(path: str) -> str:
    """Save a file; saves of different files may overlap.

    Args:
        path: Which file.
    """
    time.sleep(0.1)
    return f"saved {path}"


root_agent = Agent(
    name="files",
    model="gemini-2.5-flash",
    tools=[read, write, save],
    tool_strategy=ExecutionStrategy(os.environ.get("FILES_STRATEGY", "auto")),
)
'''


def _call(name: str, path: str) -> dict[str, Any]:
    return {"functionCall": {"name": name, "args": {"path": path}}}


TURNS = {
    "auto": [_call("read", "a"), _call("read", "b"), _call("write", "c"), _call("read", "d")],
    "parallel": [_call("read", "a"), _call("read", "b"), _call("write", "c"), _call("read", "d")],
    "keyed": [_call("save", "x"), _call("save", "y"), _call("save", "x")],
}


def _replay(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "prompts": ["go"],
        "turns": [{"role": "model", "parts": parts}, {"role": "model", "parts": [{"text": "ok"}]}],
    }


@pytest.fixture(scope="module")
def traced(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """The span database after the three runs, and each run's session id."""
    root = tmp_path_factory.mktemp("runs")
    (root / "files").mkdir()
    (root / "files" / "agent.py").write_text(textwrap.dedent(AGENT))
    db = root / "traces.db"
    running = {}
    for name, parts in TURNS.items():
        replay = root / f"{name}.json"
        replay.write_text(json.dumps(_replay(parts)))
        strategy = "parallel" if name == "parallel" else "auto"
        running[name] = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agent_core.cli",
                "run",
                str(root / "files"),
                "--replay",
                str(replay),
                "--trace-db",
                str(db),
                "--session",
                f"run-{name}",
            ],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "FILES_STRATEGY": strategy},
        )
    for name, process in running.items():
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, (name, out, err)
    return db, {name: f"run-{name}" for name in TURNS}


def _expected_bars(spans: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """What the page must show for each span, computed here from the stored spans."""

    def queued(span: dict[str, Any]) -> int | None:
        wait = span["attributes"].get("tooling.call.queue_wait_s")
        return span["start_ns"] - round(wait * 1e9) if wait else None

    origin = min(min(s["start_ns"], queued(s) or s["start_ns"]) for s in spans)
    out = {}
    for span in spans:
        attributes = span["attributes"]
        wait = queued(span)
        out[span["span_id"]] = {
            "startNs": str(span["start_ns"] - origin),
            "endNs": str(span["end_ns"] - origin),
            "waitStartNs": "" if wait is None else str(wait - origin),
            "waitedFor": ",".join(attributes.get("tooling.call.waited_for") or []),
            "waitReason": attributes.get("tooling.call.wait_reason") or "",
            "callId": attributes.get("gen_ai.tool.call.id") or "",
            "conflictKey": attributes.get("tooling.call.conflict_key") or "",
        }
    return out


BARS = "els => els.map(e => ({...e.dataset}))"


def _tools_by_index(bars: list[dict[str, str]]) -> dict[int, dict[str, Any]]:
    tools = [b for b in bars if b["kind"] == "tool"]
    return {
        int(b["callIndex"]): {**b, "start": int(b["startNs"]), "end": int(b["endNs"])}
        for b in tools
    }


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a["start"] < b["end"] and b["start"] < a["end"]


def test_the_waterfall_shows_the_stored_spans_and_who_waited_for_whom(page, traced) -> None:
    db, sessions = traced
    agent = Agent(name="viewer", model=ScriptedModel(["-"]))
    with Runner(agent, app_name="viewer") as runner, serve(runner, trace_db=db) as server:
        ready(page, server.url + "#runs")
        page.wait_for_selector('[data-invocation-list][data-count="3"]')
        rows = page.eval_on_selector_all(
            "[data-invocation-row]", "els => els.map(e => e.dataset.invocationId)"
        )
        mismatches: list[Any] = []
        shown: dict[str, dict[int, dict[str, Any]]] = {}
        for invocation in rows:
            page.click(f'[data-invocation-row][data-invocation-id="{invocation}"]')
            page.wait_for_selector(f'[data-waterfall="{invocation}"]')
            bars = page.eval_on_selector_all(f'[data-waterfall="{invocation}"] [data-bar]', BARS)
            trace_id = find_trace(db, invocation)
            assert trace_id is not None
            stored = read_trace(db, trace_id)
            expected = _expected_bars(stored)
            assert sorted(b["spanId"] for b in bars) == sorted(expected)
            for bar in bars:
                want = expected[bar["spanId"]]
                for key, value in want.items():
                    if bar[key] != value:
                        mismatches.append((invocation, bar["name"], key, bar[key], value))
            assert any(b["kind"] == "model" for b in bars)
            session = next(
                s["attributes"]["gen_ai.conversation.id"]
                for s in stored
                if "gen_ai.conversation.id" in s["attributes"]
            )
            shown[session] = _tools_by_index(bars)
            if session == sessions["auto"]:
                screenshot(page, "runs")
        assert mismatches == []
        assert sorted(shown) == sorted(sessions.values())

        auto = shown[sessions["auto"]]
        a, b, c, d = (auto[i] for i in range(4))
        assert _overlap(a, b)  # two safe reads together
        assert c["start"] >= max(a["end"], b["end"])  # the write after both
        assert d["start"] >= c["end"]  # and the read after the write
        assert c["waitedFor"].split(",") == [a["callId"], b["callId"]]
        assert c["waitReason"] == "barrier" and d["waitedFor"] == c["callId"]
        assert a["waitedFor"] == "" and b["waitedFor"] == ""

        parallel = shown[sessions["parallel"]]
        for i in range(4):
            for j in range(i + 1, 4):
                assert _overlap(parallel[i], parallel[j]), (i, j)
            assert parallel[i]["waitedFor"] == ""

        keyed = shown[sessions["keyed"]]
        x1, y, x2 = (keyed[i] for i in range(3))
        assert _overlap(x1, y)  # two paths overlap
        assert x2["start"] >= x1["end"] and not _overlap(x1, x2)  # one path does not
        assert x2["waitedFor"] == x1["callId"] and x2["waitReason"] == "conflict_key"
        assert x1["conflictKey"] == x2["conflictKey"] != y["conflictKey"]
        # Each wait says what it waited for, and why.
        for invocation in rows:
            page.click(f'[data-invocation-row][data-invocation-id="{invocation}"]')
            page.wait_for_selector(f'[data-waterfall="{invocation}"]')
            for why in page.locator("[data-why]").all_inner_texts():
                assert "waited" in why and "(" in why
