"""One OpenAPI operation to one tool's plan: its name, description, flags, arguments
(where each goes on the wire), parameters schema and response schema.

Read top to bottom: :func:`plan_operations` walks ``paths``; for each operation
:class:`_OperationBuilder` gathers the parameters (path-level ones overridden by the
operation's), the JSON request body (an object body's properties become arguments, any
other body one ``body`` argument), the first 2xx JSON response, and the security
requirements. Required-ness is kept exactly: a required parameter, a required property
of a required object body, a required non-object body; nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from .._types import Diagnostic
from ._document import Document, SpecError, pointer
from ._media import (
    BodyKind,
    answer_schema,
    choose_body,
    is_binary_schema,
    is_json_media_type,
    object_properties,
)
from ._naming import argument_name, number_duplicates, tool_name
from ._schemas import JSONSchema, RefGraph, SchemaConverter

__all__: list[str] = []

METHODS: Final = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_SAFE_METHODS: Final = frozenset({"get", "head", "options"})
# Header parameters OpenAPI says are ignored (the request sets them itself).
_IGNORED_HEADERS: Final = frozenset({"accept", "content-type", "authorization"})

Location = Literal["path", "query", "header", "cookie", "body", "body_property"]


@dataclass(frozen=True, slots=True)
class Argument:
    """One argument of the tool and where its value goes."""

    name: str  # what the model sends
    location: Location
    wire_name: str  # the parameter's (or body property's) name in the request
    style: str = "form"
    explode: bool = True
    as_json: bool = False  # a parameter described by ``content`` (sent as JSON text)


@dataclass(frozen=True, slots=True)
class Flags:
    read_only: bool
    concurrency_safe: bool
    idempotent: bool
    destructive: bool


def flags_for(method: str) -> Flags:
    """GET, HEAD, OPTIONS are safe reads; PUT and DELETE are idempotent; DELETE is
    destructive; POST and PATCH (and TRACE) are none of these."""
    if method in _SAFE_METHODS:
        return Flags(True, True, True, False)
    return Flags(False, False, method in ("put", "delete"), method == "delete")


@dataclass
class OperationPlan:
    """Everything a ``RestApiTool`` needs, read once from the document."""

    name: str
    method: str  # lower case
    path: str
    pointer: str
    operation_id: str | None
    description: str
    arguments: tuple[Argument, ...]
    parameters_schema: JSONSchema
    response_schema: JSONSchema | None
    flags: Flags
    body_kind: BodyKind | None = None
    body_media_type: str | None = None
    body_required: bool = False
    #: The operation's security requirements (``None``: none apply); each alternative
    #: maps scheme names to the scopes it needs.
    security: list[dict[str, list[str]]] | None = None
    #: Media types the 2xx answers are described with (JSON is expected when all are).
    answer_media_types: frozenset[str] = frozenset()
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.method.upper()} {self.path}"


# -- the plan of every operation -----------------------------------------------------------


def plan_operations(document: Document) -> tuple[list[OperationPlan], list[Diagnostic]]:
    """One plan per operation under ``paths``, named and numbered; and what was noticed
    about operations that could not become tools (left out, each with a diagnostic)."""
    graph = RefGraph(document)
    paths = document.root.get("paths")
    if paths is None:
        paths = {}
    if not isinstance(paths, Mapping):
        raise SpecError("the spec's 'paths' (at #/paths) is not an object")
    plans: list[OperationPlan] = []
    left_out: list[Diagnostic] = []
    for path, item_node in paths.items():
        if not isinstance(path, str) or not path.startswith("/"):
            raise SpecError(f"path {path!r} at {pointer('paths', str(path))} must start with '/'")
        item, item_at = document.deref(item_node, pointer("paths", path))
        if not isinstance(item, Mapping):
            raise SpecError(f"the path item at {item_at} is not an object")
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            at = pointer("paths", path, method)
            if not isinstance(operation, Mapping):
                raise SpecError(f"the operation at {at} is not an object")
            builder = _OperationBuilder(document, graph, path, method, item, operation, at)
            plan = builder.build()
            if plan is None:
                left_out.extend(builder.diagnostics)
            else:
                plans.append(plan)
    _name_plans(plans)
    return plans, left_out


def _name_plans(plans: list[OperationPlan]) -> None:
    ids: dict[str, int] = {}
    for plan in plans:
        if plan.operation_id:
            ids[plan.operation_id] = ids.get(plan.operation_id, 0) + 1
    for plan, name in zip(plans, number_duplicates([p.name for p in plans]), strict=True):
        if plan.operation_id and ids[plan.operation_id] > 1:
            plan.diagnostics.append(
                Diagnostic(
                    "warning",
                    "openapi.duplicate_operation_id",
                    f"operationId {plan.operation_id!r} is used by {ids[plan.operation_id]} "
                    f"operations; {plan.label} ({plan.pointer}) is the tool {name!r}",
                )
            )
        plan.name = name


class _OperationBuilder:
    def __init__(
        self,
        document: Document,
        graph: RefGraph,
        path: str,
        method: str,
        item: Mapping[str, Any],
        operation: Mapping[str, Any],
        at: str,
    ) -> None:
        self.document = document
        self.path = path
        self.method = method
        self.item = item
        self.operation = operation
        self.at = at
        raw_id = operation.get("operationId")
        self.operation_id = raw_id if isinstance(raw_id, str) and raw_id else None
        label = f"{method.upper()} {path}"
        self.owner = f"operation {self.operation_id} ({label})" if self.operation_id else label
        self.converter = SchemaConverter(document, graph, owner=self.owner)
        self.diagnostics: list[Diagnostic] = []
        self.properties: dict[str, Any] = {}
        self.required: list[str] = []
        self.arguments: list[Argument] = []

    def build(self) -> OperationPlan | None:
        self._parameters()
        body = self._body()
        if body is False:
            return None
        parameters: JSONSchema = {
            "type": "object",
            "properties": self.properties,
            "required": self.required,
            "additionalProperties": False,
        }
        if not self.required:
            del parameters["required"]
        if self.converter.defs:
            parameters["$defs"] = self.converter.defs
        response, media_types = self._response()
        summary = self.operation.get("summary")
        details = self.operation.get("description")
        text = "\n\n".join(
            t.strip() for t in (summary, details) if isinstance(t, str) and t.strip()
        )
        security = self.operation.get("security", self.document.root.get("security"))
        plan = OperationPlan(
            name=tool_name(self.operation_id, self.method, self.path),
            method=self.method,
            path=self.path,
            pointer=self.at,
            operation_id=self.operation_id,
            description=text,
            arguments=tuple(self.arguments),
            parameters_schema=parameters,
            response_schema=response,
            flags=flags_for(self.method),
            security=_security(security, self.at) if security else None,
            answer_media_types=media_types,
            diagnostics=[*self.diagnostics, *self.converter.diagnostics],
        )
        if body is not None:
            plan.body_kind, plan.body_media_type, plan.body_required = body
        return plan

    # -- parameters ----------------------------------------------------------------------

    def _parameters(self) -> None:
        merged: dict[tuple[str, str], tuple[Mapping[str, Any], str]] = {}
        for owner, base in ((self.item, self.at.rsplit("/", 1)[0]), (self.operation, self.at)):
            listed = owner.get("parameters") or []
            if not isinstance(listed, list):
                raise SpecError(f"{self.owner}: 'parameters' at {base}/parameters is not a list")
            for i, node in enumerate(listed):
                param, where = self.document.deref(node, f"{base}/parameters/{i}")
                if not isinstance(param, Mapping):
                    raise SpecError(f"{self.owner}: the parameter at {where} is not an object")
                name, place = param.get("name"), param.get("in")
                if not isinstance(name, str) or place not in ("path", "query", "header", "cookie"):
                    raise SpecError(
                        f"{self.owner}: the parameter at {where} needs a 'name' and an 'in' of "
                        "path, query, header or cookie"
                    )
                merged[(name, place)] = (param, where)
        for (name, place), (param, where) in merged.items():
            if place == "header" and name.lower() in _IGNORED_HEADERS:
                continue
            self._parameter(name, place, param, where)
        for name in re.findall(r"{([^}]+)}", self.path):
            if (name, "path") not in merged:
                raise SpecError(
                    f"{self.owner}: the path names {{{name}}} but no path parameter "
                    f"{name!r} is declared ({self.at})"
                )

    def _parameter(self, name: str, place: str, param: Mapping[str, Any], where: str) -> None:
        as_json = False
        if "schema" in param:
            schema = self.converter.convert(param["schema"], f"{where}/schema", name)
        elif isinstance(param.get("content"), Mapping) and param["content"]:
            media_type, media = next(iter(param["content"].items()))
            as_json = is_json_media_type(str(media_type))
            node = media.get("schema", {}) if isinstance(media, Mapping) else {}
            at = f"{where}/content/{pointer(str(media_type))[2:]}/schema"
            schema = self.converter.convert(node, at, name)
        else:
            schema = {}
        if isinstance(schema, dict):
            description = param.get("description")
            if isinstance(description, str) and description.strip():
                schema = {**schema, "description": description.strip()}
            if param.get("deprecated") is True:
                schema = {**schema, "deprecated": True}
        default_style = {"query": "form", "cookie": "form", "path": "simple", "header": "simple"}
        style = param.get("style", default_style[place])
        explode = param.get("explode", style == "form")
        argument = self._unique(argument_name(name), place)
        self.properties[argument] = schema
        if place == "path" or param.get("required") is True:
            self.required.append(argument)
        self.arguments.append(
            Argument(argument, place, name, str(style), bool(explode), as_json)  # type: ignore[arg-type]
        )

    def _unique(self, name: str, prefix: str) -> str:
        candidate = name
        if candidate in self.properties:
            candidate = f"{prefix}_{name}"[:64]
        number = 2
        while candidate in self.properties:
            candidate = f"{prefix}_{name}"[:60] + f"_{number}"
            number += 1
        return candidate

    # -- the request body ----------------------------------------------------------------

    def _body(self) -> tuple[BodyKind, str, bool] | Literal[False] | None:
        node = self.operation.get("requestBody")
        if node is None:
            return None
        body, where = self.document.deref(node, f"{self.at}/requestBody")
        if not isinstance(body, Mapping) or not isinstance(body.get("content"), Mapping):
            raise SpecError(f"{self.owner}: the request body at {where} has no 'content' map")
        required = body.get("required") is True
        content: Mapping[str, Any] = body["content"]
        chosen = choose_body(content)
        if chosen is not None and chosen[0] == "multipart":
            chosen = self._multipart(chosen[1], content, where, required)
        if chosen is None:
            kinds = ", ".join(map(str, content)) or "none"
            message = (
                f"{self.owner}: the request body ({where}) is {kinds}, which a tool cannot "
                "send (JSON, form, multipart fields or text bodies only)"
            )
            if required:
                self.diagnostics.append(
                    Diagnostic("warning", "openapi.unsupported_body", message + "; left out")
                )
                return False
            self.diagnostics.append(
                Diagnostic(
                    "warning",
                    "openapi.unsupported_body",
                    message + "; the tool sends no body",
                )
            )
            return None
        kind, media_type = chosen
        media = content[media_type]
        at = f"{where}/content/{pointer(media_type)[2:]}/schema"
        raw = media.get("schema", {}) if isinstance(media, Mapping) else {}
        if kind == "text":
            schema: Any = {"type": "string"}
            if isinstance(raw, Mapping) and isinstance(raw.get("description"), str):
                schema["description"] = raw["description"]
        else:
            schema = self.converter.convert(raw, at, "body")
        description = body.get("description")
        flattened = object_properties(schema, self.converter) if kind != "text" else None
        if flattened is None or (kind == "json" and not flattened[0]):
            name = self._unique("body", "body")
            if isinstance(schema, dict) and isinstance(description, str) and description.strip():
                schema = {**schema, "description": description.strip()}
            self.properties[name] = schema
            if required:
                self.required.append(name)
            self.arguments.append(Argument(name, "body", "body"))
            return kind, media_type, required
        properties, names_required = flattened
        for prop, sub in properties.items():
            if kind == "multipart" and is_binary_schema(sub):
                self.diagnostics.append(
                    Diagnostic(
                        "warning",
                        "openapi.unsupported_body",
                        f"{self.owner}: the file field {prop!r} of the multipart body ({where}) "
                        "cannot be sent by a model; it is left out",
                    )
                )
                continue
            name = self._unique(argument_name(prop), "body")
            self.properties[name] = sub
            if required and prop in names_required:
                self.required.append(name)
            self.arguments.append(Argument(name, "body_property", prop))
        return kind, media_type, required

    def _multipart(
        self, media_type: str, content: Mapping[str, Any], where: str, required: bool
    ) -> tuple[BodyKind, str] | None:
        """A multipart body the tool can send: an object whose required fields are not
        files (else None: the body is not supported)."""
        media = content[media_type]
        raw = media.get("schema", {}) if isinstance(media, Mapping) else {}
        at = f"{where}/content/{pointer(media_type)[2:]}/schema"
        probe = SchemaConverter(self.document, self.converter.graph, owner=self.owner)
        flattened = object_properties(probe.convert(raw, at, "body"), probe)
        if flattened is None:
            return None
        properties, names_required = flattened
        files = [n for n, s in properties.items() if is_binary_schema(s)]
        if required and any(n in names_required for n in files):
            return None
        return "multipart", media_type

    # -- the answer ----------------------------------------------------------------------

    def _response(self) -> tuple[JSONSchema | None, frozenset[str]]:
        responses = self.operation.get("responses") or {}
        if not isinstance(responses, Mapping):
            raise SpecError(f"{self.owner}: 'responses' at {self.at}/responses is not an object")
        media_types: set[str] = set()
        schema: JSONSchema | None = None
        for status, node in responses.items():
            code = str(status).upper()
            if not re.fullmatch(r"2(\d\d|XX)", code):
                continue
            response, where = self.document.deref(node, f"{self.at}/responses/{code}")
            content = response.get("content") if isinstance(response, Mapping) else None
            if not isinstance(content, Mapping):
                continue
            media_types.update(str(m) for m in content)
            if schema is not None:
                continue
            for media_type, media in content.items():
                if is_json_media_type(str(media_type)) and isinstance(media, Mapping):
                    if "schema" not in media:
                        continue
                    converter = SchemaConverter(
                        self.document, self.converter.graph, owner=self.owner
                    )
                    at = f"{where}/content/{pointer(str(media_type))[2:]}/schema"
                    found = converter.convert(media["schema"], at)
                    schema = answer_schema(found, converter.defs)
                    break
        return schema, frozenset(media_types)


def _security(value: Any, at: str) -> list[dict[str, list[str]]] | None:
    if not isinstance(value, list):
        raise SpecError(f"'security' for the operation at {at} is not a list")
    out: list[dict[str, list[str]]] = []
    for requirement in value:
        if not isinstance(requirement, Mapping):
            raise SpecError(f"a security requirement of the operation at {at} is not an object")
        out.append({str(k): [str(s) for s in (v or [])] for k, v in requirement.items()})
    return out
