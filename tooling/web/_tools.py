"""The Tools part of the inspector: the catalogue, each provider's view, and try-it calls.

``GET /api/tools`` lists the tools (description, flags, how ``AUTO`` schedules each (as
``tooling inspect`` says it),
the JSON Schema the try-it form is built from); ``GET /api/tools/{name}?provider=P`` is
the same JSON ``tooling inspect --json --provider P`` prints for that tool (diagnostics
included, as a fresh process would find them); ``POST /api/tools/{name}/call`` runs the
tool through a :class:`~tooling.Scheduler` exactly as ``tooling call`` does, streaming
progress, intermediate responses and the final response as server-sent events.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import warnings
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

from pydantic_core import to_jsonable_python

from .._base import BaseTool, BaseToolset
from .._cli.discovery import PROVIDERS, FoundTool, describe_exception, inspect_tool, tool_flags
from .._scheduling.planning import scheduling_of
from .._scheduling.scheduler import Scheduler
from .._types import Blob, Confirmation, FileRef, ToolCall, ToolProgress, ToolResponse
from ._server import EventStream, HttpError, Reply, Request, WebServer

__all__ = ["ToolCatalogue", "add_tool_routes"]

CALL_ID = "web-1"


def _fresh(tool: BaseTool) -> BaseTool:
    """A shallow copy without cached exports: its diagnostics are those of a fresh process."""
    clone = copy.copy(tool)
    clone.__dict__.pop("_exports", None)
    clone.__dict__.pop("_export_diagnostics", None)
    return clone


class ToolCatalogue:
    """The tools of one app, as the inspector shows them."""

    def __init__(
        self,
        found: Iterable[FoundTool | BaseTool],
        *,
        timeout: float | None = None,
        toolsets: Sequence[BaseToolset] = (),
    ) -> None:
        self.entries: list[FoundTool] = [
            item if isinstance(item, FoundTool) else FoundTool(item.name, "", item)
            for item in found
        ]
        self.timeout = timeout
        self.toolsets = list(toolsets)
        self._reports: dict[tuple[str, str], dict[str, Any]] = {}

    def entry(self, name: str) -> FoundTool:
        """The entry named ``name`` (a 404 when there is none)."""
        for entry in self.entries:
            if entry.name == name:
                return entry
        raise HttpError(404, f"no tool named {name!r}")

    def summary(self) -> list[dict[str, Any]]:
        """One dict per tool: what the list and the detail header show."""
        out: list[dict[str, Any]] = []
        for entry in self.entries:
            item: dict[str, Any] = {"name": entry.name, "origin": entry.origin}
            tool = entry.tool
            if tool is None:
                item["error"] = entry.error
                out.append(item)
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    item.update(
                        description=tool.description,
                        flags=tool_flags(tool),
                        schedule=scheduling_of(tool),
                        parameters=tool.parameters_json_schema,
                    )
            except Exception as exc:
                item["error"] = describe_exception(exc)
            out.append(item)
        return out

    def report(self, name: str, provider: str) -> dict[str, Any]:
        """What ``tooling inspect --json --provider`` prints for this tool."""
        if provider not in PROVIDERS:
            raise HttpError(400, f"unknown provider {provider!r}; choose from {PROVIDERS}")
        entry = self.entry(name)
        key = (name, provider)
        if key not in self._reports:
            fresh = (
                FoundTool(entry.name, entry.origin, _fresh(entry.tool), entry.error)
                if (entry.tool is not None)
                else entry
            )
            self._reports[key] = inspect_tool(fresh, provider)
        return self._reports[key]

    async def call(self, name: str, body: Mapping[str, Any]) -> AsyncIterator[tuple[str, Any]]:
        """Run the tool once through a scheduler; yield what happens as SSE items."""
        tool = self.entry(name).tool
        if tool is None:
            raise HttpError(409, f"tool {name!r} cannot be built")
        args, confirmations, scopes = _call_request(body)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scheduler = Scheduler([tool], timeout=self.timeout)
        call = ToolCall(id=CALL_ID, name=tool.name, args=args)
        try:
            async with scheduler.stream(
                [call], confirmations=confirmations, granted_scopes=scopes
            ) as items:
                async for item in items:
                    if isinstance(item, ToolProgress):
                        yield (
                            "progress",
                            {
                                "stream": item.stream,
                                "chunk": item.chunk,
                                "dropped": item.dropped,
                            },
                        )
                    elif not item.final:
                        yield "partial", {"response": item.response}
                    else:
                        yield "response", _final(item)
        finally:
            scheduler.close()

    async def aclose(self) -> None:
        """Close the toolsets the tools came from."""
        for toolset in self.toolsets:
            with contextlib.suppress(Exception):  # closing is best effort
                await toolset.close()


def _call_request(
    body: Any,
) -> tuple[dict[str, Any], dict[str, Confirmation], frozenset[str]]:
    if not isinstance(body, dict):
        raise HttpError(400, "the body must be a JSON object")
    args = body.get("args", {})
    if not isinstance(args, dict):
        raise HttpError(400, "args must be a JSON object")
    scopes = body.get("scopes", [])
    if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
        raise HttpError(400, "scopes must be a list of strings")
    confirm = body.get("confirm")
    confirmations: dict[str, Confirmation] = {}
    if confirm is not None:
        if not isinstance(confirm, str):
            raise HttpError(400, "confirm must be the fingerprint the confirmation showed")
        confirmed = body.get("confirmed", True)
        if not isinstance(confirmed, bool):
            raise HttpError(400, "confirmed must be true or false")
        confirmations[CALL_ID] = Confirmation(confirmed, confirm)
    return args, confirmations, frozenset(scopes)


def _part(part: Blob | FileRef) -> dict[str, Any]:
    if isinstance(part, Blob):
        encoded = base64.b64encode(part.data).decode("ascii")
        return {
            "mime_type": part.mime_type,
            "size": len(part.data),
            "data_url": f"data:{part.mime_type};base64,{encoded}",
        }
    return {"mime_type": part.mime_type, "uri": part.uri}


def _final(item: ToolResponse) -> dict[str, Any]:
    return {
        "response": item.response,
        "error_code": item.error.code if item.error is not None else None,
        "duration_s": item.duration_s,
        "parts": [_part(p) for p in item.parts],
        "artifact": _artifact(item.artifact),
    }


def _artifact(artifact: Any) -> Any:
    """A call's artifact as JSON for the page (the text of what is not JSON)."""
    if artifact is None:
        return None
    try:
        return to_jsonable_python(artifact, bytes_mode="base64", inf_nan_mode="null")
    except Exception:  # not JSON: the page shows its repr
        return repr(artifact)[:2000]


async def _final_only(items: AsyncIterator[tuple[str, Any]]) -> Any:
    """The ``response`` item of a call's stream (progress and partial results dropped)."""
    final: Any = None
    async for kind, data in items:
        if kind == "response":
            final = data
    return final


def add_tool_routes(server: WebServer, catalogues: Mapping[str, ToolCatalogue]) -> None:
    """Serve the tools API for ``catalogues`` (by app name; ``?app=`` picks one, the first
    by default)."""

    def pick(request: Request) -> ToolCatalogue:
        app = request.query.get("app")
        if not app:
            return next(iter(catalogues.values()))
        if app not in catalogues:
            raise HttpError(404, f"no app named {app!r}")
        return catalogues[app]

    def list_tools(request: Request) -> Reply:
        return Reply({"tools": pick(request).summary(), "providers": list(PROVIDERS)})

    def one_tool(request: Request) -> Reply:
        provider = request.query.get("provider") or "gemini"
        return Reply(pick(request).report(request.params["name"], provider))

    def call_tool(request: Request) -> EventStream | Reply:
        catalogue = pick(request)
        name = request.params["name"]
        body = request.json()
        tool = catalogue.entry(name).tool
        if tool is None:
            raise HttpError(409, f"tool {name!r} cannot be built")
        _call_request(body)  # a malformed request is a 400 before the stream starts
        if request.wants_json:  # one JSON object: the final response, as the stream's last
            return Reply(server.run(_final_only(catalogue.call(name, body))))
        return server.stream(lambda: catalogue.call(name, body))

    server.route("GET", "/api/tools", list_tools)
    server.route("GET", r"/api/tools/(?P<name>[^/]+)", one_tool)
    server.route("POST", r"/api/tools/(?P<name>[^/]+)/call", call_tool)

    def close() -> None:
        for catalogue in catalogues.values():
            with contextlib.suppress(Exception):
                server.run(catalogue.aclose(), timeout=10)

    server.add_close_hook(close)
