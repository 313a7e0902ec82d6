"""Tool and argument names from an OpenAPI document: the ``operationId`` in snake_case
(else the method and the path's words), within the tool name rule, duplicates numbered."""

from __future__ import annotations

import re
from typing import Final

__all__: list[str] = []

_ARGUMENT_NAME: Final = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def snake_case(text: str) -> str:
    """``listPets`` -> ``list_pets``; ``getHTTPResponse`` -> ``get_http_response``;
    characters outside ``[A-Za-z0-9_]`` become ``_``."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text)
    text = re.sub(r"[^A-Za-z0-9]+", "_", text)
    return re.sub(r"_+", "_", text).strip("_").lower()


def tool_name(operation_id: str | None, method: str, path: str) -> str:
    """The tool's name before duplicates are numbered (at most 64 characters)."""
    name = snake_case(operation_id) if operation_id else ""
    if not name:
        name = snake_case(f"{method} {path}") or method
    if not (name[0].isalpha() or name[0] == "_"):
        name = f"op_{name}"
    return name[:64].rstrip("_") or method


def number_duplicates(names: list[str]) -> list[str]:
    """``["a", "a", "b"]`` -> ``["a", "a_2", "b"]`` (each result unique, ≤ 64 chars)."""
    out: list[str] = []
    taken: set[str] = set()
    for name in names:
        candidate, number = name, 2
        while candidate in taken:
            suffix = f"_{number}"
            candidate = name[: 64 - len(suffix)] + suffix
            number += 1
        taken.add(candidate)
        out.append(candidate)
    return out


def argument_name(name: str) -> str:
    if _ARGUMENT_NAME.fullmatch(name):
        return name
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:64] or "_"
