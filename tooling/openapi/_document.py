"""Reading an OpenAPI document: from a dict, JSON or YAML text, or a path; its version;
JSON pointers and ``$ref`` resolution.

Every problem is a :class:`SpecError` (a ``ValueError``) whose message names where in the
document it is, as a JSON pointer (``#/paths/~1pets/get/...``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

__all__: list[str] = []


class SpecError(ValueError):
    """An OpenAPI document that cannot be turned into tools, with where and why."""


def pointer(*parts: str | int) -> str:
    """The JSON pointer (as a URI fragment) to ``parts``: ``pointer("paths", "/pets")``
    gives ``"#/paths/~1pets"``."""
    escaped = (str(p).replace("~", "~0").replace("/", "~1") for p in parts)
    return "#/" + "/".join(quote(p, safe="~!$&'()*+,;=:@{}") for p in escaped) if parts else "#"


def _load_text(text: str, origin: str) -> Any:
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise SpecError(f"{origin} is not valid JSON: {exc}") from None
    try:
        import yaml
    except ImportError:
        raise SpecError(
            f"{origin} looks like YAML, which needs PyYAML: pip install 'agent-tooling[openapi]'"
        ) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SpecError(f"{origin} is not valid YAML: {' '.join(str(exc).split())}") from None


def load(spec: Mapping[str, Any] | str | os.PathLike[str]) -> tuple[dict[str, Any], Path | None]:
    """The document as a dict, and the file it was read from (if any).

    ``spec`` is a mapping, JSON or YAML text, or a path (``pathlib.Path``; a ``str`` is
    always text). Raises :class:`SpecError` when it is not an OpenAPI 3.0 or 3.1 document
    (Swagger 2.0 is refused by name).
    """
    source: Path | None = None
    if isinstance(spec, Mapping):
        document: Any = spec
        origin = "the spec"
    elif isinstance(spec, os.PathLike):
        source = Path(spec).resolve()
        try:
            text = source.read_text(encoding="utf-8")
        except OSError as exc:
            raise SpecError(f"cannot read the spec {os.fspath(spec)}: {exc.strerror}") from None
        origin = os.fspath(spec)
        document = _load_text(text, origin)
    elif isinstance(spec, str):
        origin = "the spec text"
        document = _load_text(spec, origin)
    else:
        raise TypeError(
            f"spec must be a dict, JSON or YAML text, or a pathlib.Path, not {type(spec).__name__}"
        )
    if not isinstance(document, Mapping):
        hint = ""
        if isinstance(spec, str) and spec.strip().lower().endswith((".json", ".yaml", ".yml")):
            hint = f": to read the file {spec.strip()!r}, pass pathlib.Path({spec.strip()!r})"
        raise SpecError(f"{origin} is not an OpenAPI document (not a mapping at the top){hint}")
    check_version(document, origin)
    return dict(document), source


def check_version(document: Mapping[str, Any], origin: str = "the spec") -> str:
    """``"3.0"`` or ``"3.1"``; a :class:`SpecError` for anything else."""
    if "swagger" in document:
        raise SpecError(
            f"{origin} is Swagger {document.get('swagger')} (OpenAPI 2.0), which is not "
            "supported: convert it to OpenAPI 3 first (for example with swagger2openapi)"
        )
    version = document.get("openapi")
    if not isinstance(version, str):
        raise SpecError(f"{origin} has no 'openapi' version field: not an OpenAPI 3 document")
    if version.startswith("3.0"):
        return "3.0"
    if version.startswith("3.1"):
        return "3.1"
    raise SpecError(f"{origin} is OpenAPI {version}: only 3.0 and 3.1 are supported")


@dataclass
class Document:
    """An OpenAPI document with its version, and ``$ref`` resolution within it.

    ``external`` caches other files a ``$ref`` names (relative to the spec's own file).
    """

    root: dict[str, Any]
    version: str
    source: Path | None = None
    external: dict[Path, Any] = field(default_factory=dict)

    def resolve(self, ref: str, where: str) -> tuple[Any, str]:
        """The node ``ref`` points at and its location.

        A location is a JSON pointer fragment (``#/components/schemas/Pet``), prefixed by
        the file's path for a node of another file: ``where`` (the location of the
        ``$ref`` itself) is the base a relative reference is resolved against, and goes
        into the error when the reference leads nowhere.
        """
        target, _, fragment = ref.partition("#")
        base = where.partition("#")[0]
        if target:
            root, file = self._external(target, base, ref, where)
        elif base:
            root, file = self.external[Path(base)], base
        else:
            root, file = self.root, ""
        node: Any = root
        if fragment and fragment != "/":
            if not fragment.startswith("/"):
                raise SpecError(
                    f"$ref {ref!r} at {where} is not a JSON pointer (anchors are not supported)"
                )
            for raw in fragment[1:].split("/"):
                key = unquote(raw).replace("~1", "/").replace("~0", "~")
                if isinstance(node, Mapping) and key in node:
                    node = node[key]
                elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                    node = node[int(key)]
                else:
                    raise SpecError(f"$ref {ref!r} at {where} does not resolve: no {key!r}")
        return node, f"{file}#{fragment}"

    def _external(self, target: str, base: str, ref: str, where: str) -> tuple[Any, str]:
        if "://" in target:
            raise SpecError(
                f"$ref {ref!r} at {where} points at a remote document, which is never fetched"
            )
        start = Path(base).parent if base else (self.source.parent if self.source else None)
        if start is None:
            raise SpecError(
                f"$ref {ref!r} at {where} names another file, but the spec was not read from "
                "a file: give the spec as a pathlib.Path so the reference has a base"
            )
        path = (start / unquote(target)).resolve()
        if path not in self.external:
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise SpecError(
                    f"$ref {ref!r} at {where}: cannot read {path}: {exc.strerror}"
                ) from None
            self.external[path] = _load_text(text, os.fspath(path))
        return self.external[path], os.fspath(path)

    def deref(self, node: Any, where: str) -> tuple[Any, str]:
        """Follow ``$ref`` chains from ``node`` (a parameter, a body, a response...) to a
        node that is not a bare reference; a loop of references is a :class:`SpecError`."""
        seen: list[str] = []
        while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
            node, at = self.resolve(node["$ref"], where)
            if at in seen:
                chain = " -> ".join([*seen, at])
                raise SpecError(f"circular $ref at {where}: {chain}")
            seen.append(at)
            where = at
        return node, where
