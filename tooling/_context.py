"""What a tool sees of the agent and session it runs for: ``ToolContext`` and friends."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from ._jsonsafe import unencodable
from ._state import State
from ._types import Blob, Confirmation, MemoryHit, ToolProgress

if TYPE_CHECKING:
    from ._jobs import JobInfo
    from .auth._credentials import AccessToken, ApiKey, BasicCredentials, BearerToken
    from .auth._service import CredentialService

__all__ = [
    "ReadonlyContext",
    "SimpleToolContext",
    "ToolActions",
    "ToolContext",
    "artifact_blob",
    "auth_config_key",
    "pick_version",
]

#: A progress chunk longer than this many bytes of UTF-8 is cut to fit.
MAX_PROGRESS_CHUNK_BYTES = 8192

#: The ``chunk`` of the marker that stands for progress chunks that were dropped.
PROGRESS_TRUNCATED = "[tool progress truncated]"

#: How many items ``SimpleToolContext.progress`` holds at most (the marker included).
DEFAULT_PROGRESS_LIMIT = 1000


def cut_utf8(text: str, max_bytes: int = MAX_PROGRESS_CHUNK_BYTES) -> str:
    """The longest prefix of ``text`` whose UTF-8 encoding fits in ``max_bytes``.

    Never splits a character. ``text`` itself is returned when it already fits. Lone
    surrogates count as the three bytes ``surrogatepass`` gives them.
    """
    if max_bytes < 0:
        raise ValueError("max_bytes must not be negative")
    if len(text) * 4 <= max_bytes:  # at most 4 bytes a character: fits for sure
        return text
    # Only the first max_bytes + 1 characters can matter: they are more than max_bytes bytes.
    head = text[: max_bytes + 1].encode("utf-8", "surrogatepass")
    if len(head) <= max_bytes:
        return text
    end = max_bytes
    while end > 0 and (head[end] & 0xC0) == 0x80:  # a continuation byte: not a boundary
        end -= 1
    return head[:end].decode("utf-8", "surrogatepass")


_V = TypeVar("_V")

#: What ``save_artifact`` takes: a ``Blob``, bytes, text, or a google-genai ``Part``
#: carrying ``inline_data`` (duck-typed: google-genai is not imported).
ArtifactData: TypeAlias = Blob | bytes | bytearray | memoryview | str | Any


def _one(name: str, value: _V | None, alias: str, aliased: _V | None) -> _V:
    """The argument given under one of its two names (never both)."""
    if value is not None and aliased is not None:
        raise TypeError(f"give {name} or {alias}, not both")
    found = value if value is not None else aliased
    if found is None:
        raise TypeError(f"missing the {name} argument")
    return found


def artifact_blob(data: ArtifactData, mime_type: str | None = None) -> Blob:
    """The ``Blob`` that ``save_artifact(name, data, mime_type)`` stores.

    ``str`` data is encoded as UTF-8 and typed ``text/plain`` unless ``mime_type`` says
    otherwise; ``bytes`` are typed ``mime_type`` or ``application/octet-stream``; a
    ``Blob`` keeps its type unless ``mime_type`` is given. Always a new ``Blob``.
    """
    if isinstance(data, Blob):
        return Blob(mime_type or data.mime_type, data.data)
    if isinstance(data, str):
        return Blob(mime_type or "text/plain", data.encode("utf-8"))
    if isinstance(data, bytes | bytearray | memoryview):
        return Blob(mime_type or "application/octet-stream", bytes(data))
    inline: Any = getattr(data, "inline_data", None)  # a google-genai Part (google-adk's)
    if inline is not None and isinstance(getattr(inline, "data", None), bytes):
        kind = mime_type or getattr(inline, "mime_type", None) or "application/octet-stream"
        return Blob(kind, inline.data)
    raise TypeError(
        "artifact data must be a Blob, bytes, str or a Part with inline_data, not "
        f"{type(data).__name__}"
    )


def pick_version(versions: list[Blob] | None, version: int | None) -> Blob | None:
    """A copy of ``versions[version]`` (the latest when ``version`` is None), or None."""
    if not versions:
        return None
    if version is None:
        blob = versions[-1]
    elif 0 <= version < len(versions):
        blob = versions[version]
    else:
        return None
    return Blob(blob.mime_type, blob.data)


def auth_config_key(auth_config: Mapping[str, Any]) -> str:
    """The canonical key under which a credential for ``auth_config`` is supplied.

    ``"sha256:"`` and the SHA-256 of ``auth_config`` as compact JSON with sorted keys, so
    equal configs give equal keys whatever their key order, and the key reveals nothing
    of what the config holds. ``auth_config`` must be JSON-serializable.
    """
    if not isinstance(auth_config, Mapping):
        raise TypeError(f"auth_config must be a mapping, not {type(auth_config).__name__}")
    import hashlib
    import json

    try:
        text = json.dumps(
            auth_config,
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
        )
    except (TypeError, ValueError) as exc:
        raise TypeError(f"auth_config must be JSON-serializable: {exc}") from exc
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ReadonlyContext:
    """What toolset filters and instruction providers may read about an invocation.

    ``state`` is a read-only mapping (a live view of the mapping given, not a copy).
    """

    def __init__(
        self,
        *,
        invocation_id: str = "",
        agent_name: str = "",
        user_id: str = "",
        session_id: str = "",
        state: Mapping[str, Any] | None = None,
    ) -> None:
        """Describe one invocation; every field defaults to empty."""
        self._invocation_id = invocation_id
        self._agent_name = agent_name
        self._user_id = user_id
        self._session_id = session_id
        self._base_state: Mapping[str, Any] = state if state is not None else {}
        self._state_view: Mapping[str, Any] = MappingProxyType(self._base_state)

    @property
    def invocation_id(self) -> str:
        """The id of the invocation (one user message and everything it causes)."""
        return self._invocation_id

    @property
    def agent_name(self) -> str:
        """The name of the agent running."""
        return self._agent_name

    @property
    def user_id(self) -> str:
        """The id of the user the session belongs to."""
        return self._user_id

    @property
    def session_id(self) -> str:
        """The id of the session."""
        return self._session_id

    @property
    def state(self) -> Mapping[str, Any]:
        """The session state, read-only."""
        return self._state_view

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(agent_name={self._agent_name!r}, "
            f"invocation_id={self._invocation_id!r}, session_id={self._session_id!r})"
        )


@dataclass
class ToolActions:
    """What a tool asks the framework to do once its call ends.

    ``skip_summarization``: give the tool's response to the user as is, without another
    model turn. ``transfer_to_agent``: hand the conversation to the named agent.
    ``escalate``: end the current agent's turn and return control upward.
    ``state_delta``: the call's state writes (the same dict as ``ctx.state.delta``).
    ``artifact_delta``: artifact name -> version saved by this call.
    ``requested_confirmation``: ``{"hint", "payload"}`` when the tool asked for
    confirmation. ``requested_credential``: the auth config the tool needs a credential for.
    """

    skip_summarization: bool = False
    transfer_to_agent: str | None = None
    escalate: bool = False
    state_delta: dict[str, Any] = field(default_factory=dict)
    artifact_delta: dict[str, int] = field(default_factory=dict)
    requested_confirmation: dict[str, Any] | None = None
    requested_credential: dict[str, Any] | None = None


class ToolContext(ReadonlyContext, ABC):
    """Everything a tool may use of its call: state, actions, artifacts, memory, progress.

    A tool receives it by declaring a parameter annotated ``ToolContext`` (or named
    ``tool_context``); the model never sees that parameter. Subclasses provide artifact
    and memory storage (:meth:`save_artifact`, :meth:`load_artifact`,
    :meth:`list_artifacts`, :meth:`search_memory`) and may override
    :meth:`_deliver_progress` to route progress somewhere.

    ``state``, ``actions`` and :meth:`emit_progress` are safe to use from a tool's worker
    thread.
    """

    def __init__(
        self,
        *,
        invocation_id: str = "",
        agent_name: str = "",
        user_id: str = "",
        session_id: str = "",
        state: Mapping[str, Any] | None = None,
        function_call_id: str = "",
        tool_name: str = "",
        actions: ToolActions | None = None,
        auth_responses: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """Set up one call's context over the session ``state`` (read, never modified).

        ``actions`` defaults to a fresh :class:`ToolActions`; the call's state writes go
        into its ``state_delta``. ``auth_responses`` are credentials supplied on resume,
        keyed by :func:`auth_config_key` of the auth config each answers.
        """
        super().__init__(
            invocation_id=invocation_id,
            agent_name=agent_name,
            user_id=user_id,
            session_id=session_id,
            state=state,
        )
        self._actions = actions if actions is not None else ToolActions()
        self._tool_state = State(self._base_state, delta=self._actions.state_delta)
        self.function_call_id: str = function_call_id
        """The id of the function call this context serves (labels progress)."""
        self.tool_name: str = tool_name
        """The name of the tool running (set by the tool before it calls; labels progress)."""
        self._auth_responses: dict[str, dict[str, Any]] = {
            key: dict(value) for key, value in (auth_responses or {}).items()
        }
        self.tool_confirmation: Confirmation | None = None
        """The user's confirmation of this call, when it was resumed with one."""
        self.credential: AccessToken | ApiKey | BearerToken | BasicCredentials | None = None
        """The credential obtained for the tool's ``auth=`` before this call (else None)."""
        self.credential_service: CredentialService | None = None
        self.job: JobInfo | None = None
        """The job this call runs as, for a durable tool's call run by a job loop (else None)."""
        """Where this call's credentials are stored; None: the scheduler's."""
        # Framework hook: when set (e.g. by a scheduler streaming a dispatch), progress goes
        # here instead of to _deliver_progress, whatever the context's class.
        self._progress_sink: Callable[[ToolProgress], None] | None = None
        self._cancelled = False

    @property
    def cancelled(self) -> bool:
        """True once the call was given up on (a timeout, a cancelled dispatch or run).

        A sync tool's thread cannot be stopped from outside: a cooperative tool polls this
        flag in its loop and returns early. Async tools are cancelled and process tools
        killed instead, so they never need it.
        """
        return self._cancelled

    def _cancel(self) -> None:
        """Framework hook: the call this context serves was given up on."""
        self._cancelled = True

    @property
    def state(self) -> State:
        """The session state with this call's writes; writes go to ``actions.state_delta``."""
        return self._tool_state

    @property
    def actions(self) -> ToolActions:
        """What the tool asks the framework to do when the call ends."""
        return self._actions

    # -- progress ------------------------------------------------------------------------

    def emit_progress(self, stream: str, chunk: str) -> None:
        """Report progress text on ``stream`` (e.g. ``"stdout"``) while the tool runs.

        A plain method: call it from sync or async tools and from any thread. A chunk over
        8 KiB of UTF-8 is cut to its longest prefix that fits (never inside a character).
        The item carries this context's ``function_call_id`` and ``tool_name``. Where it
        goes, and what happens when a consumer cannot keep up, depends on the context.
        """
        if not isinstance(stream, str):
            raise TypeError(f"progress stream must be a str, not {type(stream).__name__}")
        if not isinstance(chunk, str):
            raise TypeError(f"progress chunk must be a str, not {type(chunk).__name__}")
        sink = self._progress_sink
        skip = getattr(sink, "skip", None)
        if skip is not None and skip():  # counted as dropped without building the item
            return
        item = ToolProgress(
            id=self.function_call_id,
            name=self.tool_name,
            stream=stream,
            chunk=cut_utf8(chunk, MAX_PROGRESS_CHUNK_BYTES),
        )
        if sink is not None:
            sink(item)
        else:
            self._deliver_progress(item)

    def _deliver_progress(self, item: ToolProgress) -> None:
        """Hand one progress item on, on the emitting thread. The default drops it.

        Subclasses override this to route progress; it must be thread-safe.
        """

    # -- artifacts and memory ------------------------------------------------------------

    async def save_artifact(
        self,
        name: str | None = None,
        data: ArtifactData | None = None,
        mime_type: str | None = None,
        *,
        filename: str | None = None,
        artifact: ArtifactData | None = None,
    ) -> int:
        """Save a new version of artifact ``name``; return its version (from 0).

        ``data`` is stored as :func:`artifact_blob` gives it (``str`` as UTF-8
        ``text/plain``, ``bytes`` as ``application/octet-stream``, unless ``mime_type``
        says otherwise; a google-genai ``Part`` with ``inline_data`` as its blob).
        google-adk's keywords work too: ``save_artifact(filename=..., artifact=...)``.
        Records ``actions.artifact_delta[name] = version``.
        """
        given = _one("name", name, "filename", filename)
        content = _one("data", data, "artifact", artifact)
        return await self._save_artifact(given, artifact_blob(content, mime_type))

    async def load_artifact(
        self, name: str | None = None, version: int | None = None, *, filename: str | None = None
    ) -> Blob | None:
        """Artifact ``name`` at ``version`` (the latest when None), or None if there is none.

        ``load_artifact(filename=..., version=...)`` (google-adk's keyword) works too."""
        return await self._load_artifact(_one("name", name, "filename", filename), version)

    async def _save_artifact(self, name: str, blob: Blob) -> int:
        """Store ``blob`` (a new ``Blob``, the context's own) as the next version of
        ``name``, record it, and return the version: what a context implements."""
        raise NotImplementedError(f"{type(self).__name__} does not save artifacts")

    async def _load_artifact(self, name: str, version: int | None) -> Blob | None:
        """That version of ``name`` (the latest when None), or None."""
        raise NotImplementedError(f"{type(self).__name__} does not load artifacts")

    @abstractmethod
    async def list_artifacts(self) -> list[str]:
        """The names of the saved artifacts, sorted."""

    @abstractmethod
    async def search_memory(self, query: str) -> list[MemoryHit]:
        """What the memory service finds for ``query``, best first."""

    def _record_artifact(self, name: str, version: int) -> None:
        """Note in ``actions.artifact_delta`` that this call saved ``name`` at ``version``."""
        self._actions.artifact_delta[name] = version

    # -- confirmation and credentials ----------------------------------------------------

    def request_confirmation(self, hint: str | None = None, payload: Any = None) -> None:
        """Ask the user to confirm before the call goes on.

        The call ends as if the tool required confirmation: the model is told that
        confirmation is required, with ``hint`` (empty when None, as google-adk's
        ``request_confirmation(*, hint=None, payload=None)`` allows) and ``payload``; on
        resume with a confirmation the tool runs again. Records
        ``actions.requested_confirmation``.
        """
        if hint is None:
            hint = ""
        if not isinstance(hint, str):
            raise TypeError(f"confirmation hint must be a str, not {type(hint).__name__}")
        self._actions.requested_confirmation = {"hint": hint, "payload": payload}

    def request_credential(self, auth_config: Mapping[str, Any]) -> None:
        """Ask the user for a credential described by ``auth_config``.

        The call ends with status ``credential_required``; on resume the credential the
        user supplied is available from :meth:`get_auth_response`. Records
        ``actions.requested_credential``.
        """
        if not isinstance(auth_config, Mapping):
            raise TypeError(f"auth_config must be a mapping, not {type(auth_config).__name__}")
        self._actions.requested_credential = dict(auth_config)

    def get_auth_response(self, auth_config: Mapping[str, Any]) -> dict[str, Any] | None:
        """The credential supplied on resume for ``auth_config`` (a copy), or None."""
        found = self._auth_responses.get(auth_config_key(auth_config))
        return dict(found) if found is not None else None

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(agent_name={self.agent_name!r}, "
            f"function_call_id={self.function_call_id!r}, tool_name={self.tool_name!r})"
        )


class SimpleToolContext(ToolContext):
    """A self-contained ``ToolContext`` for tests, scripts and the default scheduler.

    ``agent_name`` is ``caller`` and ``user_id`` is ``"anonymous"`` unless given. State is
    in memory: ``state`` is the base (read, never modified) and writes land in
    ``actions.state_delta``. Artifacts are kept in memory as versioned ``Blob``s;
    memory search finds nothing.

    ``credentials``: the credential service a scheduler uses for this context's calls
    (a test's pre-filled ``InMemoryCredentialService``, say); credentials are stored
    under ``app_name`` and ``user_id``.

    Progress goes to ``on_progress(item)`` when given, called on the emitting thread (so
    it must be thread-safe and quick). Otherwise it is kept in :attr:`progress`, which
    holds at most 1000 items: once full, the first 999 stay and the last is a
    ``ToolProgress`` marker with chunk ``"[tool progress truncated]"`` whose ``dropped``
    counts the chunks lost so far.
    """

    def __init__(
        self,
        caller: str = "user",
        state: Mapping[str, Any] | None = None,
        on_progress: Callable[[ToolProgress], None] | None = None,
        *,
        function_call_id: str = "",
        invocation_id: str = "",
        session_id: str = "",
        auth_responses: Mapping[str, Mapping[str, Any]] | None = None,
        credentials: CredentialService | None = None,
        user_id: str = "anonymous",
        app_name: str = "",
    ) -> None:
        """Make a context for agent ``caller`` over ``state``; see the class docs."""
        super().__init__(
            invocation_id=invocation_id,
            agent_name=caller,
            user_id=user_id,
            session_id=session_id,
            state=state,
            function_call_id=function_call_id,
            auth_responses=auth_responses,
        )
        self.credential_service = credentials
        self.app_name = app_name
        """The app credentials are stored under (with ``user_id``)."""
        self._on_progress = on_progress
        self._progress_limit = DEFAULT_PROGRESS_LIMIT
        self._progress_lock = threading.Lock()
        self._dropped = 0
        self.progress: list[ToolProgress] = []
        """Progress items kept when there is no ``on_progress`` (at most 1000)."""
        self._artifacts: dict[str, list[Blob]] = {}
        self._artifact_lock = threading.Lock()

    def _deliver_progress(self, item: ToolProgress) -> None:
        if self._on_progress is not None:
            self._on_progress(item)
            return
        with self._progress_lock:
            kept = self.progress
            if len(kept) < self._progress_limit:
                kept.append(item)
                self._dropped = 0
                return
            if self._dropped == 0:
                # The list just filled up: the last kept item gives way to the marker.
                first_lost = kept[-1]
                self._dropped = first_lost.dropped or 1
                marker = ToolProgress(
                    id=first_lost.id,
                    name=first_lost.name,
                    stream=first_lost.stream,
                    chunk=PROGRESS_TRUNCATED,
                )
            else:
                marker = kept[-1]
            self._dropped += item.dropped or 1
            kept[-1] = ToolProgress(
                id=marker.id,
                name=marker.name,
                stream=marker.stream,
                chunk=PROGRESS_TRUNCATED,
                dropped=self._dropped,
            )

    async def _save_artifact(self, name: str, blob: Blob) -> int:
        """A new version of artifact ``name``, in memory."""
        if not isinstance(name, str) or not name or unencodable(name) is not None:
            raise ValueError(f"an artifact name must be non-empty UTF-8 text, not {name!r:.80}")
        with self._artifact_lock:
            versions = self._artifacts.setdefault(name, [])
            version = len(versions)
            versions.append(blob)
            self._record_artifact(name, version)
        return version

    async def _load_artifact(self, name: str, version: int | None) -> Blob | None:
        with self._artifact_lock:
            return pick_version(self._artifacts.get(name), version)

    async def list_artifacts(self) -> list[str]:
        """The names of the saved artifacts, sorted."""
        with self._artifact_lock:
            return sorted(self._artifacts)

    async def search_memory(self, query: str) -> list[MemoryHit]:
        """Always empty: a ``SimpleToolContext`` has no memory."""
        return []


# -- framework hooks (a scheduler's side of a context) ---------------------------------


def route_progress(ctx: ToolContext, sink: Callable[[ToolProgress], None] | None) -> None:
    """Send ``ctx``'s progress to ``sink`` instead of its ``_deliver_progress`` (None: back)."""
    ctx._progress_sink = sink


def progress_is_read(ctx: ToolContext) -> bool:
    """Whether anyone reads ``ctx``'s progress (a dispatch that drops it says no)."""
    skip = getattr(ctx._progress_sink, "skip", None)
    return not (skip is not None and skip())


def give_up(ctx: ToolContext) -> None:
    """The call ``ctx`` serves was given up on: ``ctx.cancelled`` turns true."""
    ctx._cancel()
