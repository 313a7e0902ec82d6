"""Helpers for testing agents built on ``agent_core``.

- :func:`deterministic_ids`: within a ``with`` block, event ids, invocation ids and
  generated function-call ids are counters (``e-1``, ``inv-1``, ``call-1``...) and
  timestamps advance by a fixed step, so whole runs can be compared exactly.
- :func:`normalize_events`: the events' wire dicts with every id and timestamp replaced
  by a stable placeholder, for comparing runs made without :func:`deterministic_ids`.
- :func:`run_script`: run an agent over a list of prompts from sync test code and get
  every event it yielded.

A typical test::

    model = ScriptedModel([[Part.from_function_call("add", {"a": 1, "b": 2})], "3"])
    events = run_script(Agent("calc", model, tools=[add]), ["what is 1 + 2?"])
    assert normalize_events(events)[-1]["content"]["parts"] == [{"text": "3"}]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ._agent import Agent
from ._content import Content
from ._events import Event
from ._ids import deterministic_ids
from ._runner import RunConfig, Runner, user_message
from .sessions.base import BaseSessionService

__all__ = ["deterministic_ids", "normalize_events", "run_script"]

# Ids the framework makes (``new_id``): a prefix and a uuid4 hex, or a counter under
# ``deterministic_ids``. Function calls the loop numbers itself are ``call-...``; the
# confirmation and credential requests it makes are ``req-...``; durable jobs are
# ``job_...``, and the invocation that delivers one is ``job:job_...``.
_GENERATED = re.compile(r"^(call|req)-(?:[0-9a-f]{32}|\d+)$|^(job)_[0-9a-f]{32}$")
_TOP_IDS = ("id", "invocationId")


class _Placeholders:
    """Stable names for ids, numbered per kind in order of first appearance."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}
        self._counts: dict[str, int] = {}

    def name(self, value: str, kind: str) -> str:
        found = self._names.get(value)
        if found is None:
            self._counts[kind] = self._counts.get(kind, 0) + 1
            found = self._names[value] = f"<{kind}-{self._counts[kind]}>"
        return found

    def known(self, value: str) -> str | None:
        return self._names.get(value)

    def replace(self, value: Any) -> Any:
        """``value`` (a JSON-like tree) with known or generated ids replaced, keys included."""
        if isinstance(value, str):
            known = self.known(value)
            if known is not None:
                return known
            match = _GENERATED.match(value)
            if match is not None:
                return self.name(value, match.group(1) or match.group(2))
            if value.startswith("job:"):
                return f"job:{self.replace(value[4:])}"
            return value
        if isinstance(value, dict):
            return {self.replace(k): self.replace(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.replace(v) for v in value]
        return value


def normalize_events(events: Iterable[Event]) -> list[dict[str, Any]]:
    """The events' ``to_dict()`` with ids and timestamps made stable, for comparisons.

    In order of first appearance, event ids become ``"<id-1>"``, ``"<id-2>"``...,
    invocation ids ``"<inv-1>"``..., function-call ids the loop generated (calls that
    came without one) ``"<call-1>"``... and the ids of confirmation and credential
    requests ``"<req-1>"``...; each occurrence of such an id anywhere in an event (a
    function response pairing with its call, ``longRunningToolIds``, the keys of
    ``requestedToolConfirmations``, a request's ``originalFunctionCall``, progress) gets
    the same placeholder; durable job ids become ``"<job-1>"``.... Every ``timestamp``
    becomes ``0.0``. Ids the model gave its
    calls are kept as they are.
    """
    names = _Placeholders()
    out: list[dict[str, Any]] = []
    for event in events:
        data = event.to_dict()
        data["id"] = names.name(data["id"], "id")
        if data.get("invocationId"):
            data["invocationId"] = names.name(data["invocationId"], "inv")
        data["timestamp"] = 0.0
        out.append({k: v if k in _TOP_IDS else names.replace(v) for k, v in data.items()})
    return out


def run_script(
    agent: Agent,
    prompts: str | Content | Sequence[str | Content],
    *,
    session_service: BaseSessionService | None = None,
    run_config: RunConfig | None = None,
    app_name: str = "test_app",
    user_id: str = "test_user",
    session_id: str = "test_session",
) -> list[Event]:
    """Run ``agent`` on each prompt in turn, in one session; return every event yielded.

    A sync convenience over :meth:`Runner.run` (so it works in sync tests and inside a
    running event loop alike). ``prompts`` is one message or a list of them (strings or
    ``Content``s, e.g. a function response resuming a paused run). The session is
    ``app_name``/``user_id``/``session_id`` of ``session_service`` (a fresh
    ``InMemorySessionService`` when None): pass one to inspect the session afterwards. The
    runner is closed at the end, which closes the agent's toolsets. The user's messages
    are stored in the session, not returned.
    """
    messages: list[Any] = list(prompts) if isinstance(prompts, list | tuple) else [prompts]
    for message in messages:  # every one checked before anything runs
        user_message(message)
    events: list[Event] = []
    with Runner(agent, app_name=app_name, session_service=session_service) as runner:
        for message in messages:
            events.extend(
                runner.run(
                    user_id=user_id,
                    session_id=session_id,
                    new_message=message,
                    run_config=run_config,
                )
            )
    return events
