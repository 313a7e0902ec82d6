"""Behaviour of State, ReadonlyContext, ToolContext and SimpleToolContext."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tooling import (
    Blob,
    MemoryHit,
    ReadonlyContext,
    SimpleToolContext,
    ToolActions,
    ToolContext,
    ToolProgress,
)
from tooling._context import (
    MAX_PROGRESS_CHUNK_BYTES,
    PROGRESS_TRUNCATED,
    artifact_blob,
    auth_config_key,
    cut_utf8,
)
from tooling._state import State

# -- State ---------------------------------------------------------------------------------


def test_state_reads_base_overlaid_with_delta():
    base = {"a": 1, "b": 2}
    state = State(base)
    assert state["a"] == 1
    state["a"] = 10
    state["c"] = 3
    assert state["a"] == 10
    assert state["c"] == 3
    assert state.get("missing") is None
    assert state.get("missing", "d") == "d"
    assert "c" in state and "b" in state and "zz" not in state
    assert state.to_dict() == {"a": 10, "b": 2, "c": 3}
    assert sorted(state) == ["a", "b", "c"]
    assert len(state) == 3
    assert dict(state.items()) == {"a": 10, "b": 2, "c": 3}
    # writes go only into the delta; the base is untouched
    assert state.delta == {"a": 10, "c": 3}
    assert base == {"a": 1, "b": 2}
    with pytest.raises(KeyError):
        state["missing"]


def test_state_is_a_mutable_mapping_and_compares_like_one():
    state = State({"x": 1})
    assert isinstance(state, MutableMapping)
    assert state == {"x": 1}
    state.update({"y": 2}, z=3)
    state.update([("w", 4)])
    assert state == {"x": 1, "y": 2, "z": 3, "w": 4}
    assert state.setdefault("x", 99) == 1
    assert state.setdefault("new", 5) == 5
    assert state.delta == {"y": 2, "z": 3, "w": 4, "new": 5}
    assert "State(" in repr(state)


def test_state_delta_is_the_given_dict_and_has_delta():
    delta: dict[str, Any] = {}
    state = State({"k": "v"}, delta=delta)
    assert state.delta is delta
    assert not state.has_delta()
    state["k"] = None  # None is a value, not a deletion
    assert state.has_delta()
    assert delta == {"k": None}
    assert state["k"] is None
    assert "k" in state


def test_state_prefixes_are_plain_keys():
    state = State({"app:theme": "dark", "user:name": "ada"})
    state["temp:scratch"] = [1, 2]
    state["session_key"] = "s"
    state["custom:thing"] = True
    assert state["app:theme"] == "dark"
    assert state["user:name"] == "ada"
    assert state.delta == {"temp:scratch": [1, 2], "session_key": "s", "custom:thing": True}
    assert (State.APP_PREFIX, State.USER_PREFIX, State.TEMP_PREFIX) == ("app:", "user:", "temp:")


def test_state_requires_str_keys():
    state = State()
    with pytest.raises(TypeError, match="str"):
        state[1] = "x"  # type: ignore[index]
    with pytest.raises(TypeError, match="str"):
        state.setdefault(2, "x")  # type: ignore[arg-type]


def test_state_refuses_deletion_and_suggests_none():
    state = State({"a": 1})
    state["b"] = 2
    attempts: list[Callable[[], object]] = [
        lambda: state.__delitem__("a"),
        lambda: state.pop("b"),
        lambda: state.popitem(),
        lambda: state.clear(),
    ]
    for attempt in attempts:
        with pytest.raises(TypeError, match="None"):
            attempt()
    with pytest.raises(TypeError, match="assign None"):
        del state["b"]
    assert state.to_dict() == {"a": 1, "b": 2}


def test_state_many_threads_writing_distinct_keys_all_land():
    state = State({"base": 0})
    threads_n, per_thread = 16, 500
    barrier = threading.Barrier(threads_n)

    def worker(t: int) -> None:
        barrier.wait()
        for i in range(per_thread):
            state[f"t{t}:{i}"] = i
            # concurrent reads and iteration must not fail while others write
            if i % 50 == 0:
                list(state)
                state.to_dict()

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(threads_n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(state.delta) == threads_n * per_thread
    assert len(state) == threads_n * per_thread + 1
    assert all(state[f"t{t}:{i}"] == i for t in range(threads_n) for i in range(per_thread))


def test_state_setdefault_is_atomic_across_threads():
    state = State()
    winners: list[Any] = []
    barrier = threading.Barrier(8)

    def worker(t: int) -> None:
        barrier.wait()
        winners.append(state.setdefault("owner", t))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(set(winners)) == 1
    assert state["owner"] == winners[0]


# -- ReadonlyContext -------------------------------------------------------------------------


def test_readonly_context_fields_and_read_only_state():
    session_state = {"user:name": "ada", "count": 1}
    ctx = ReadonlyContext(
        invocation_id="inv-1",
        agent_name="helper",
        user_id="u1",
        session_id="s1",
        state=session_state,
    )
    assert (ctx.invocation_id, ctx.agent_name, ctx.user_id, ctx.session_id) == (
        "inv-1",
        "helper",
        "u1",
        "s1",
    )
    assert isinstance(ctx.state, Mapping)
    assert not isinstance(ctx.state, MutableMapping)
    assert ctx.state["user:name"] == "ada"
    with pytest.raises(TypeError):
        ctx.state["count"] = 2  # type: ignore[index]
    with pytest.raises(TypeError):
        del ctx.state["count"]  # type: ignore[attr-defined]
    assert session_state == {"user:name": "ada", "count": 1}


def test_readonly_context_defaults():
    ctx = ReadonlyContext()
    assert (ctx.invocation_id, ctx.agent_name, ctx.user_id, ctx.session_id) == ("", "", "", "")
    assert dict(ctx.state) == {}
    with pytest.raises(TypeError):
        ReadonlyContext("positional")  # type: ignore[call-arg]


# -- ToolContext / SimpleToolContext basics ---------------------------------------------------


def test_tool_context_is_abstract():
    with pytest.raises(TypeError):
        ToolContext()  # type: ignore[abstract]


def test_simple_context_identity_fields():
    ctx = SimpleToolContext(
        "planner", function_call_id="call-1", invocation_id="inv", session_id="sess"
    )
    assert isinstance(ctx, ToolContext) and isinstance(ctx, ReadonlyContext)
    assert ctx.agent_name == "planner"
    assert ctx.user_id == "anonymous"
    assert ctx.function_call_id == "call-1"
    assert ctx.invocation_id == "inv"
    assert ctx.session_id == "sess"
    assert ctx.tool_name == ""
    ctx.tool_name = "lookup"
    assert ctx.tool_name == "lookup"
    assert SimpleToolContext().agent_name == "user"


def test_tool_context_state_records_writes_in_actions():
    base = {"app:limit": 5, "counter": 1}
    ctx = SimpleToolContext(state=base)
    assert isinstance(ctx.state, State)
    assert ctx.state["counter"] == 1
    ctx.state["counter"] = ctx.state["counter"] + 1
    ctx.state["temp:note"] = "hi"
    assert ctx.state["counter"] == 2
    assert ctx.actions.state_delta == {"counter": 2, "temp:note": "hi"}
    assert ctx.state.delta is ctx.actions.state_delta
    assert base == {"app:limit": 5, "counter": 1}  # not mutated


def test_tool_actions_defaults():
    actions = ToolActions()
    assert actions.skip_summarization is False
    assert actions.transfer_to_agent is None
    assert actions.escalate is False
    assert actions.state_delta == {} and actions.artifact_delta == {}
    assert actions.requested_confirmation is None
    assert actions.requested_credential is None
    assert ToolActions().state_delta is not actions.state_delta
    ctx = SimpleToolContext()
    ctx.actions.skip_summarization = True
    ctx.actions.transfer_to_agent = "billing"
    ctx.actions.escalate = True
    assert ctx.actions == ToolActions(
        skip_summarization=True, transfer_to_agent="billing", escalate=True
    )


# -- artifacts and memory ---------------------------------------------------------------------


async def test_artifacts_versions_mime_defaults_and_delta():
    ctx = SimpleToolContext()
    assert await ctx.list_artifacts() == []
    assert await ctx.load_artifact("report.txt") is None

    assert await ctx.save_artifact("report.txt", "héllo") == 0
    assert await ctx.save_artifact("report.txt", "v2", mime_type="text/markdown") == 1
    assert await ctx.save_artifact("image.png", b"\x89PNG", mime_type="image/png") == 0
    assert await ctx.save_artifact("blob.bin", b"\x00\x01") == 0
    assert await ctx.save_artifact("a.json", Blob("application/json", b"{}")) == 0
    assert await ctx.save_artifact("a.json", Blob("application/json", b"[]"), "text/plain") == 1

    assert await ctx.load_artifact("report.txt", 0) == Blob("text/plain", "héllo".encode())
    assert await ctx.load_artifact("report.txt") == Blob("text/markdown", b"v2")
    assert await ctx.load_artifact("report.txt", 1) == Blob("text/markdown", b"v2")
    assert await ctx.load_artifact("report.txt", 2) is None
    assert await ctx.load_artifact("report.txt", -1) is None
    assert await ctx.load_artifact("image.png") == Blob("image/png", b"\x89PNG")
    assert await ctx.load_artifact("blob.bin") == Blob("application/octet-stream", b"\x00\x01")
    assert await ctx.load_artifact("a.json", 0) == Blob("application/json", b"{}")
    assert await ctx.load_artifact("a.json") == Blob("text/plain", b"[]")
    assert await ctx.load_artifact("nope", 0) is None

    assert await ctx.list_artifacts() == ["a.json", "blob.bin", "image.png", "report.txt"]
    assert ctx.actions.artifact_delta == {
        "report.txt": 1,
        "image.png": 0,
        "blob.bin": 0,
        "a.json": 1,
    }


async def test_artifact_blobs_are_not_shared_with_the_caller():
    ctx = SimpleToolContext()
    original = Blob("text/plain", b"x")
    await ctx.save_artifact("f", original)
    original.mime_type = "changed"
    loaded = await ctx.load_artifact("f")
    assert loaded == Blob("text/plain", b"x")
    assert loaded is not None
    loaded.mime_type = "mutated"
    assert await ctx.load_artifact("f") == Blob("text/plain", b"x")


async def test_artifact_bad_input():
    ctx = SimpleToolContext()
    with pytest.raises(TypeError):
        await ctx.save_artifact("x", 123)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        await ctx.save_artifact("", b"x")
    # A name no store can hold is refused here as in an agent run, on every service.
    with pytest.raises(ValueError, match="UTF-8"):
        await ctx.save_artifact("bad\ud800", b"x")
    assert ctx.actions.artifact_delta == {}


async def test_artifact_saves_from_many_tasks_get_distinct_versions():
    ctx = SimpleToolContext()
    versions = await asyncio.gather(*(ctx.save_artifact("log", str(i)) for i in range(50)))
    assert sorted(versions) == list(range(50))
    assert ctx.actions.artifact_delta == {"log": 49}


def test_artifact_blob_helper():
    assert artifact_blob("é") == Blob("text/plain", "é".encode())
    assert artifact_blob(bytearray(b"ab")) == Blob("application/octet-stream", b"ab")
    blob = Blob("image/png", b"p")
    assert artifact_blob(blob) == blob and artifact_blob(blob) is not blob


async def test_memory_is_empty():
    ctx = SimpleToolContext()
    hits: list[MemoryHit] = await ctx.search_memory("anything")
    assert hits == []


# -- progress ----------------------------------------------------------------------------------


def test_progress_goes_to_callback_on_emitting_thread():
    received: list[tuple[ToolProgress, int]] = []

    def on_progress(item: ToolProgress) -> None:
        received.append((item, threading.get_ident()))

    ctx = SimpleToolContext(on_progress=on_progress, function_call_id="call-7")
    ctx.tool_name = "build"
    ctx.emit_progress("stdout", "main thread")

    worker_ident: list[int] = []

    def worker() -> None:
        worker_ident.append(threading.get_ident())
        ctx.emit_progress("stderr", "from worker")

    th = threading.Thread(target=worker)
    th.start()
    th.join()

    assert [item for item, _ in received] == [
        ToolProgress(id="call-7", name="build", stream="stdout", chunk="main thread"),
        ToolProgress(id="call-7", name="build", stream="stderr", chunk="from worker"),
    ]
    assert received[0][1] == threading.get_ident()
    assert received[1][1] == worker_ident[0]
    assert ctx.progress == []  # the callback took everything


def test_progress_kept_in_list_without_callback():
    ctx = SimpleToolContext(function_call_id="c1")
    ctx.tool_name = "t"
    ctx.emit_progress("stdout", "a")
    ctx.emit_progress("stderr", "b")
    assert ctx.progress == [
        ToolProgress(id="c1", name="t", stream="stdout", chunk="a"),
        ToolProgress(id="c1", name="t", stream="stderr", chunk="b"),
    ]


def test_progress_list_is_bounded_with_a_growing_marker():
    ctx = SimpleToolContext(function_call_id="c")
    ctx.tool_name = "flood"
    limit = 1000
    for i in range(limit):
        ctx.emit_progress("stdout", str(i))
    assert len(ctx.progress) == limit
    assert ctx.progress[-1].chunk == str(limit - 1)  # exactly full: nothing lost yet
    assert all(p.dropped == 0 for p in ctx.progress)

    ctx.emit_progress("stdout", "one more")
    assert len(ctx.progress) == limit
    assert ctx.progress[-1] == ToolProgress(
        id="c", name="flood", stream="stdout", chunk=PROGRESS_TRUNCATED, dropped=2
    )
    for i in range(limit + 1, 10_000):
        ctx.emit_progress("stdout", str(i))
        assert len(ctx.progress) == limit

    total = 10_000
    kept = limit - 1
    assert [p.chunk for p in ctx.progress[:kept]] == [str(i) for i in range(kept)]
    marker = ctx.progress[-1]
    assert marker.chunk == PROGRESS_TRUNCATED
    assert marker.dropped == total - kept == 9001
    assert (marker.id, marker.name, marker.stream) == ("c", "flood", "stdout")
    # the kept items plus the dropped count account for every chunk
    assert kept + marker.dropped == total


def test_progress_list_bound_holds_under_threads():
    ctx = SimpleToolContext()
    threads_n, per_thread = 8, 500

    def worker() -> None:
        for i in range(per_thread):
            ctx.emit_progress("stdout", str(i))

    threads = [threading.Thread(target=worker) for _ in range(threads_n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(ctx.progress) == 1000
    assert all(p.dropped == 0 for p in ctx.progress[:-1])
    assert ctx.progress[-1].dropped == threads_n * per_thread - 999


def test_progress_rejects_non_str():
    ctx = SimpleToolContext()
    with pytest.raises(TypeError):
        ctx.emit_progress("stdout", b"bytes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ctx.emit_progress(1, "x")  # type: ignore[arg-type]


def test_progress_chunk_cut_at_8_kib_on_character_boundary():
    ctx = SimpleToolContext()
    assert MAX_PROGRESS_CHUNK_BYTES == 8192
    # "€" is 3 bytes: 8192 is not a multiple of 3, so a byte cut would split a character
    text = "€" * 5000
    ctx.emit_progress("stdout", text)
    chunk = ctx.progress[0].chunk
    assert chunk == "€" * (8192 // 3)
    assert len(chunk.encode()) == 8190
    # 4-byte characters after one ASCII byte
    text = "a" + "😀" * 3000
    ctx.emit_progress("stdout", text)
    chunk = ctx.progress[1].chunk
    assert chunk == "a" + "😀" * 2047
    assert len(chunk.encode()) == 8189
    # exactly 8192 bytes is kept whole
    exact = "é" * 4096
    ctx.emit_progress("stdout", exact)
    assert ctx.progress[2].chunk == exact


def test_progress_cut_applies_before_callback():
    got: list[ToolProgress] = []
    ctx = SimpleToolContext(on_progress=got.append)
    ctx.emit_progress("s", "x" * 100_000)
    assert got[0].chunk == "x" * 8192


def _check_cut(text: str, limit: int) -> None:
    cut = cut_utf8(text, limit)
    assert text.startswith(cut)
    assert len(cut.encode("utf-8", "surrogatepass")) <= limit
    if cut != text:  # maximal: one more character would not fit
        longer = text[: len(cut) + 1]
        assert len(longer.encode("utf-8", "surrogatepass")) > limit


@given(st.text(max_size=12_000))
def test_cut_utf8_property_default_limit(text: str) -> None:
    _check_cut(text, MAX_PROGRESS_CHUNK_BYTES)


@given(
    st.text(
        alphabet=st.sampled_from(["a", "é", "€", "😀", "\u0800", "\U0010ffff"]),
        min_size=2000,
        max_size=9000,
    )
)
def test_cut_utf8_property_multibyte_near_limit(text: str) -> None:
    _check_cut(text, MAX_PROGRESS_CHUNK_BYTES)
    ctx = SimpleToolContext()
    ctx.emit_progress("stdout", text)
    assert ctx.progress[0].chunk == cut_utf8(text)


@given(st.text(max_size=40), st.integers(min_value=0, max_value=50))
def test_cut_utf8_property_small_limits(text: str, limit: int) -> None:
    _check_cut(text, limit)


def test_cut_utf8_surrogates_and_bad_limit():
    text = "\ud800" * 5000
    _check_cut(text, 8192)
    with pytest.raises(ValueError):
        cut_utf8("x", -1)


def test_base_tool_context_drops_progress_unless_routed():
    class Minimal(ToolContext):
        async def save_artifact(
            self, name: str, data: Blob | bytes | str, mime_type: str | None = None
        ) -> int:
            return 0

        async def load_artifact(self, name: str, version: int | None = None) -> Blob | None:
            return None

        async def list_artifacts(self) -> list[str]:
            return []

        async def search_memory(self, query: str) -> list[MemoryHit]:
            return []

    ctx = Minimal(function_call_id="id", tool_name="t")
    ctx.emit_progress("stdout", "dropped silently")
    routed: list[ToolProgress] = []

    class Routing(Minimal):
        def _deliver_progress(self, item: ToolProgress) -> None:
            routed.append(item)

    Routing(function_call_id="id", tool_name="t").emit_progress("stdout", "x")
    assert routed == [ToolProgress(id="id", name="t", stream="stdout", chunk="x")]


# -- confirmation and credentials ----------------------------------------------------------


def test_request_confirmation_records_hint_and_payload():
    ctx = SimpleToolContext()
    ctx.request_confirmation("Delete 3 files?", payload={"files": ["a", "b", "c"]})
    assert ctx.actions.requested_confirmation == {
        "hint": "Delete 3 files?",
        "payload": {"files": ["a", "b", "c"]},
    }
    other = SimpleToolContext()
    other.request_confirmation("Proceed?")
    assert other.actions.requested_confirmation == {"hint": "Proceed?", "payload": None}


def test_request_credential_records_auth_config():
    ctx = SimpleToolContext()
    config = {"type": "oauth2", "scopes": ["read"]}
    ctx.request_credential(config)
    assert ctx.actions.requested_credential == config
    with pytest.raises(TypeError):
        ctx.request_credential("not a mapping")  # type: ignore[arg-type]


def test_auth_config_key_is_canonical():
    a = {"type": "oauth2", "client": {"id": "x", "scopes": ["r", "w"]}}
    b = {"client": {"scopes": ["r", "w"], "id": "x"}, "type": "oauth2"}
    assert auth_config_key(a) == auth_config_key(b)
    assert auth_config_key(a) != auth_config_key({"type": "api_key"})
    assert auth_config_key(a).startswith("sha256:")
    assert "oauth2" not in auth_config_key(a)
    with pytest.raises(TypeError):
        auth_config_key({"x": object()})


def test_get_auth_response_finds_credentials_supplied_on_resume():
    config = {"type": "oauth2", "scopes": ["read"]}
    credential = {"access_token": "tok"}
    ctx = SimpleToolContext(auth_responses={auth_config_key(config): credential})
    assert ctx.get_auth_response({"scopes": ["read"], "type": "oauth2"}) == credential
    assert ctx.get_auth_response({"type": "api_key"}) is None
    found = ctx.get_auth_response(config)
    assert found is not None
    found["access_token"] = "changed"
    assert ctx.get_auth_response(config) == {"access_token": "tok"}
    assert SimpleToolContext().get_auth_response(config) is None


def test_progress_sink_hook_overrides_delivery():
    ctx = SimpleToolContext(function_call_id="c")
    ctx.tool_name = "t"
    routed: list[ToolProgress] = []
    ctx._progress_sink = routed.append
    ctx.emit_progress("stdout", "x")
    assert routed == [ToolProgress(id="c", name="t", stream="stdout", chunk="x")]
    assert ctx.progress == []
    ctx._progress_sink = None
    ctx.emit_progress("stdout", "y")
    assert [p.chunk for p in ctx.progress] == ["y"]
