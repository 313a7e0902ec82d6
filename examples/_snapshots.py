"""Snapshot tests for the examples: replay offline, normalize, compare.

Each example's ``tests/test_<name>.py`` calls :func:`check_snapshot`, which replays the
example through the ``Runner`` (no network, no key) and compares the normalized events
with ``tests/snapshot.json``. What varies from run to run is made stable:

- event, invocation and generated call ids become ``<id-1>``, ``<inv-1>``, ``<call-1>``...
  (the same placeholder wherever the same id appears) and timestamps are dropped;
- time estimates (``time_left_s``, ``elapsed_s``, ``duration_s``) become ``"<seconds>"``;
- a run of progress events becomes one entry listing each call's chunks per stream
  (``stdout`` and ``stderr`` are read concurrently, so only their order within a stream
  is fixed);
- inline data becomes its MIME type and, for PNGs, its width and height
  (compressed bytes differ between zlib builds).

Regenerate the snapshots with ``UPDATE_SNAPSHOTS=1 python -m pytest examples``, then read
the diff before committing it.
"""

from __future__ import annotations

import asyncio
import json
import os
import struct
from pathlib import Path
from typing import Any

from agent_core import ScriptedModel
from agent_core.testing import normalize_events

from ._replay import Exchange, Replay, play

__all__ = ["check_snapshot", "normalized_replay", "replay_offline", "unused_turns"]

TIME_KEYS = frozenset({"time_left_s", "elapsed_s", "duration_s"})


def replay_offline(agent_dir: str | os.PathLike[str], **services: Any) -> Replay:
    """The example's replay, run offline: the module, each prompt with its events, and
    the final session.

    ``services`` (``session_service``, ``artifact_service``, ``memory_service``) go to
    the runner, for tests that look into them afterwards."""
    return asyncio.run(play(agent_dir, live=False, **services))


def normalized_replay(exchanges: list[Exchange]) -> list[dict[str, Any]]:
    """``[{"prompt": ..., "events": [...]}]`` with everything run-dependent made stable."""
    flat = normalize_events(e for x in exchanges for e in x.events)
    out: list[dict[str, Any]] = []
    position = 0
    for exchange in exchanges:
        events = flat[position : position + len(exchange.events)]
        position += len(exchange.events)
        out.append({"prompt": exchange.prompt, "events": _group_progress(_stable(events))})
    return out


def check_snapshot(agent_dir: str | os.PathLike[str], **services: Any) -> Replay:
    """Replay the example and compare with ``tests/snapshot.json`` (``UPDATE_SNAPSHOTS=1``
    rewrites it instead). Returns the replay for further checks; ``services`` go to the
    runner as in :func:`replay_offline`."""
    folder = Path(agent_dir)
    replay = replay_offline(folder, **services)
    unused = unused_turns(replay)
    assert not unused, f"{folder.name}: replay.json has turns no prompt used: {unused}"
    actual = normalized_replay(replay.exchanges)
    path = folder / "tests" / "snapshot.json"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return replay
    assert path.is_file(), f"no snapshot at {path}: run with UPDATE_SNAPSHOTS=1 to create it"
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert actual == expected, (
        f"{folder.name}: the replay's events differ from {path}; if the change is intended, "
        "regenerate with UPDATE_SNAPSHOTS=1 and review the diff"
    )
    return replay


def unused_turns(replay: Replay) -> dict[str, int]:
    """How many scripted turns each agent left unplayed (none, in a consistent replay)."""
    model = replay.module.root_agent.model
    assert isinstance(model, ScriptedModel)
    names = [a.name for a in replay.module.root_agent.reachable()] if model.multi_agent else [""]
    left = {name or "all agents": model.remaining(name) for name in names}
    return {name: n for name, n in left.items() if n}


# -- normalizing -----------------------------------------------------------------------------


def _stable(value: Any) -> Any:
    if isinstance(value, list):
        return [_stable(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "timestamp":
            continue
        if key in TIME_KEYS and isinstance(item, int | float):
            out[key] = "<seconds>"
        elif key == "inlineData" and isinstance(item, dict):
            out[key] = _describe_data(item)
        else:
            out[key] = _stable(item)
    return out


def _describe_data(inline: dict[str, Any]) -> dict[str, Any]:
    import base64

    data = base64.b64decode(inline.get("data", ""))
    described: dict[str, Any] = {"mimeType": inline.get("mimeType")}
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        described["png"] = f"{width}x{height}"
    return described


def _group_progress(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fold each run of progress events into ``{"progress": {call: {stream: [chunks]}}}``."""
    out: list[dict[str, Any]] = []
    group: dict[str, Any] | None = None
    for event in events:
        progress = event.get("progress")
        if progress is None:
            group = None
            out.append(event)
            continue
        if group is None:
            group = {"author": event.get("author"), "progress": {}}
            out.append(group)
        streams = group["progress"].setdefault(f"{progress['name']} {progress['id']}", {})
        streams.setdefault(progress["stream"], []).append(progress["chunk"])
    for item in out:  # streams in a fixed order, whichever spoke first
        calls = item.get("progress")
        if calls is not None:
            for call, streams in calls.items():
                calls[call] = dict(sorted(streams.items()))
    return out
