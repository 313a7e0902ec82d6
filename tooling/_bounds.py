"""Limits on the arguments a model may send: 1 MiB of JSON, 64 levels of nesting."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._errors import ToolError

__all__: list[str] = []

MAX_ARGS_BYTES = 1024 * 1024
#: The arguments object itself is depth 1.
MAX_ARGS_DEPTH = 64

_SCALARS = frozenset({str, int, float, bool, type(None)})
_TEXT_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_BYTES_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def _too_large(size: int) -> ToolError:
    return ToolError(
        f"the arguments are {size} bytes of JSON; the limit is {MAX_ARGS_BYTES}",
        code="tool.invalid_arguments",
        details=[
            {"loc": [], "msg": f"Arguments exceed {MAX_ARGS_BYTES} bytes", "type": "too_large"}
        ],
    )


def _too_deep() -> ToolError:
    return ToolError(
        f"the arguments nest deeper than {MAX_ARGS_DEPTH} levels",
        code="tool.invalid_arguments",
        details=[
            {"loc": [], "msg": f"Arguments nest deeper than {MAX_ARGS_DEPTH}", "type": "too_deep"}
        ],
    )


def check_text_bounds(text: str | bytes) -> None:
    """Raise ``ToolError`` if JSON ``text`` is over the size or nesting limit."""
    if isinstance(text, str):
        if len(text) * 4 > MAX_ARGS_BYTES:
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > MAX_ARGS_BYTES:
                raise _too_large(size)
        openers = text.count("{") + text.count("[")
        tokens = _TEXT_TOKENS
    else:
        if len(text) > MAX_ARGS_BYTES:
            raise _too_large(len(text))
        openers = text.count(b"{") + text.count(b"[")
        tokens = _BYTES_TOKENS  # type: ignore[assignment]
    if openers <= MAX_ARGS_DEPTH:
        return
    depth = 0
    for match in tokens.finditer(text):  # type: ignore[arg-type]
        token = match.group()
        if token in ("{", "[", b"{", b"["):
            depth += 1
            if depth > MAX_ARGS_DEPTH:
                raise _too_deep()
        elif token in ("}", "]", b"}", b"]"):
            depth -= 1


def check_dict_bounds(args: Mapping[str, Any]) -> None:
    """Raise ``ToolError`` if ``args`` (already parsed) is over the size or nesting limit."""
    size = 0
    nested = False
    for key, value in args.items():
        kind = type(value)
        if kind is str:
            size += len(value)
        elif kind not in _SCALARS:
            nested = True
            break
        size += len(key) if type(key) is str else 8
    if not nested and size * 4 <= MAX_ARGS_BYTES:
        return

    size = 0
    # Containers only go on the stack; scalars are counted where they are found.
    stack: list[tuple[Any, int]] = [(args, 1)]
    while stack:
        container, depth = stack.pop()
        if depth > MAX_ARGS_DEPTH:
            raise _too_deep()
        if type(container) is dict or isinstance(container, Mapping):
            size += 2
            for key in container:
                size += len(key) + 4 if type(key) is str else 8
            items: Any = container.values()
        else:
            size += 2
            items = container
        for item in items:
            kind = type(item)
            if kind is str:
                size += len(item) + 2
            elif kind is dict or kind is list:
                stack.append((item, depth + 1))
            elif kind in _SCALARS:
                size += 8
            elif isinstance(item, Mapping | list | tuple | set | frozenset):
                stack.append((item, depth + 1))
            else:
                size += 8
    if size * 4 > MAX_ARGS_BYTES:
        import json

        exact = len(
            json.dumps(args, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")
        )
        if exact > MAX_ARGS_BYTES:
            raise _too_large(exact)
