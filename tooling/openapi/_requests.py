"""A call's arguments to an HTTP request that can reach only the operation's own URL.

The safety rules, each enforced here:

* The origin (scheme, host, port) and the base path come from the base URL alone; the
  operation's path template is the spec's. A path value is serialized (``style``) and then
  percent-encoded whole, ``/``, ``?``, ``#``, ``%`` and ``.`` included, so ``../admin``,
  ``a/b``, ``?x=1``, ``%2e%2e`` or ``https://elsewhere`` stay one segment's value.
* After the URL is built it is checked again: same origin as the base URL, path under
  the base path. Query values go through the HTTP client's encoder, never into the path.
* Header and cookie values may not hold line breaks (no header injection); credentials
  are applied after the arguments, so no argument can replace them.

Query parameters are serialized as their ``style``/``explode`` say (``form`` exploded by
default; ``spaceDelimited``, ``pipeDelimited``, ``deepObject``); path and header values use
``simple`` (or ``label``/``matrix`` for a path).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from .._errors import ToolError
from ._operations import Argument, OperationPlan

__all__: list[str] = []


@dataclass
class RequestParts:
    """What a request is made of, before credentials are added."""

    method: str
    url: str
    query: list[tuple[str, str]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    cookies: dict[str, str] = field(default_factory=dict)
    content: bytes | None = None
    #: Multipart fields, as the HTTP client takes them (``(name, (None, text))``).
    files: list[tuple[str, tuple[None, str]]] | None = None
    #: Query parameters that carry a credential (sent again after a redirect).
    auth_query: list[tuple[str, str]] = field(default_factory=list)


def _scalar(value: Any) -> str:
    """A primitive as it appears in a URL or header: ``true``, ``3``, ``2.5``, text."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return ""
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _pairs(value: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(str(k), _scalar(v)) for k, v in value.items() if v is not None]


def _simple(value: Any, explode: bool) -> str:
    """The ``simple`` style: ``a,b,c``; an object ``k,v,k2,v2`` (``k=v,k2=v2`` exploded)."""
    if isinstance(value, Mapping):
        if explode:
            return ",".join(f"{k}={v}" for k, v in _pairs(value))
        return ",".join(f"{k},{v}" for k, v in _pairs(value))
    if isinstance(value, list | tuple):
        return ",".join(_scalar(v) for v in value)
    return _scalar(value)


def _encode_path_value(text: str) -> str:
    """Percent-encode every reserved character, and dots, so that the value is one path
    segment's content whatever it holds (``..`` cannot become a dot segment)."""
    return quote(text, safe="").replace(".", "%2E")


def _path_value(argument: Argument, value: Any) -> str:
    style, explode = argument.style, argument.explode
    if argument.as_json:
        return _encode_path_value(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    if style == "label":
        joiner = "." if explode else ","
        if isinstance(value, list | tuple):
            return "." + joiner.join(_encode_path_value(_scalar(v)) for v in value)
        return "." + _encode_path_value(_simple(value, explode))
    if style == "matrix":
        name = _encode_path_value(argument.wire_name)
        if isinstance(value, list | tuple) and explode:
            return "".join(f";{name}={_encode_path_value(_scalar(v))}" for v in value)
        if isinstance(value, Mapping) and explode:
            return "".join(
                f";{_encode_path_value(k)}={_encode_path_value(v)}" for k, v in _pairs(value)
            )
        return f";{name}={_encode_path_value(_simple(value, False))}"
    if isinstance(value, list | tuple):
        return ",".join(_encode_path_value(_scalar(v)) for v in value)
    if isinstance(value, Mapping):
        sep = "=" if explode else ","
        return ",".join(
            f"{_encode_path_value(k)}{sep}{_encode_path_value(v)}" for k, v in _pairs(value)
        )
    return _encode_path_value(_scalar(value))


def _query_pairs(argument: Argument, value: Any) -> list[tuple[str, str]]:
    name, style, explode = argument.wire_name, argument.style, argument.explode
    if argument.as_json:
        return [(name, json.dumps(value, ensure_ascii=False, separators=(",", ":")))]
    if isinstance(value, Mapping):
        if style == "deepObject":
            return [(f"{name}[{k}]", v) for k, v in _pairs(value)]
        if explode:
            return _pairs(value)
        return [(name, ",".join(f"{k},{v}" for k, v in _pairs(value)))]
    if isinstance(value, list | tuple):
        items = [_scalar(v) for v in value]
        if style == "spaceDelimited" and not explode:
            return [(name, " ".join(items))]
        if style == "pipeDelimited" and not explode:
            return [(name, "|".join(items))]
        if explode:
            return [(name, item) for item in items]
        return [(name, ",".join(items))]
    return [(name, _scalar(value))]


def _no_line_breaks(argument: Argument, text: str) -> str:
    if "\r" in text or "\n" in text or "\x00" in text:
        raise ToolError(
            f"argument {argument.name!r} cannot hold a line break: it is sent in a "
            f"{argument.location}",
            code="tool.invalid_arguments",
            details=[
                {
                    "loc": [argument.name],
                    "msg": "Value must not contain line breaks",
                    "type": "value_error",
                    "input": text[:200],
                }
            ],
        )
    return text


def _cookie_value(text: str) -> str:
    return quote(text, safe="!#$&'()*+-./:<=>?@[]^_`{|}~")


@dataclass(frozen=True)
class BaseUrl:
    """The base URL a toolset's requests go to, split once."""

    url: str
    scheme: str
    netloc: str
    path: str  # without a trailing slash

    @classmethod
    def parse(cls, url: str) -> BaseUrl:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base URL {url!r} is not an absolute http(s) URL")
        if parts.query or parts.fragment:
            raise ValueError(f"base URL {url!r} must not have a query or a fragment")
        return cls(url, parts.scheme, parts.netloc.lower(), parts.path.rstrip("/"))

    def same_origin(self, url: str) -> bool:
        parts = urlsplit(url)
        return parts.scheme == self.scheme and parts.netloc.lower() == self.netloc

    def covers(self, url: str) -> bool:
        """Same origin, and a path under the base path."""
        if not self.same_origin(url):
            return False
        path = urlsplit(url).path
        return path == self.path or path.startswith(self.path + "/") or not self.path


def build_request(plan: OperationPlan, base: BaseUrl, values: Mapping[str, Any]) -> RequestParts:
    """The request for ``values`` (arguments already checked against the schema)."""
    path = plan.path
    query: list[tuple[str, str]] = []
    headers: dict[str, str] = {}
    cookies: dict[str, str] = {}
    body: dict[str, Any] = {}
    whole_body: Any = None
    has_whole_body = False
    for argument in plan.arguments:
        if argument.name not in values:
            continue
        value = values[argument.name]
        location = argument.location
        if location == "path":
            path = path.replace("{" + argument.wire_name + "}", _path_value(argument, value))
        elif value is None and location != "body":
            continue  # a null for an optional parameter: leave it out
        elif location == "query":
            query.extend(_query_pairs(argument, value))
        elif location == "header":
            text = json.dumps(value) if argument.as_json else _simple(value, argument.explode)
            headers[argument.wire_name] = _no_line_breaks(argument, text)
        elif location == "cookie":
            text = json.dumps(value) if argument.as_json else _simple(value, False)
            cookies[argument.wire_name] = _cookie_value(_no_line_breaks(argument, text))
        elif location == "body_property":
            body[argument.wire_name] = value
        else:
            whole_body, has_whole_body = value, True
    url = base.url.rstrip("/") + path
    if not base.covers(url):  # the path template itself is the spec's: a last check
        raise ToolError(
            f"the request for {plan.label} would leave the base URL {base.url}", code="tool.failed"
        )
    parts = RequestParts(plan.method.upper(), url, query, headers, cookies)
    if plan.body_kind is not None and (has_whole_body or body or plan.body_required):
        payload = whole_body if has_whole_body else body
        media_type = plan.body_media_type or "application/json"
        if plan.body_kind == "json":
            parts.content = json.dumps(
                payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False
            ).encode()
        elif plan.body_kind == "multipart":
            fields: list[tuple[str, tuple[None, str]]] = []
            for key, value in payload.items() if isinstance(payload, Mapping) else []:
                entries = value if isinstance(value, list) else [value]
                fields.extend((key, (None, _scalar(e))) for e in entries if e is not None)
            parts.files = fields
            return parts  # the client writes the boundary into Content-Type
        elif plan.body_kind == "form":
            from urllib.parse import urlencode

            items: list[tuple[str, Any]] = (
                list(payload.items()) if isinstance(payload, Mapping) else []
            )
            parts.content = urlencode(
                [(k, _simple(v, False)) for k, v in items if v is not None]
            ).encode()
        else:
            parts.content = ("" if payload is None else _scalar(payload)).encode()
        parts.headers["Content-Type"] = media_type
    return parts


def cookie_header(cookies: Mapping[str, str]) -> str:
    return "; ".join(f"{name}={value}" for name, value in cookies.items())


def query_names(arguments: Sequence[Argument]) -> frozenset[str]:
    return frozenset(a.wire_name for a in arguments if a.location == "query")
