"""Retrieval: ``retriever_tool`` over any ``search(query, k)``, and what the stores share.

A retriever is any object with ``async search(query, k) -> list[Document]``. The tool it
becomes is ``read_only`` and ``concurrency_safe`` (AUTO runs several searches side by
side); the model sees each hit's id, title (``metadata["title"]``, when there is one), a
snippet and the score; the full documents are the response's artifact, for the
application, never sent to the model.

Query text is searched as words: characters a full-text engine reads as syntax (quotes,
``*``, ``NEAR``, parentheses, ``:``, ``-``) are never passed to it as such.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .._errors import ToolError
from .._function.tool import FunctionTool

__all__ = ["Document", "Retriever", "retriever_tool"]

#: Characters of text shown to the model per hit.
SNIPPET_CHARS = 300

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(slots=True)
class Document:
    """One document of a corpus: ``id``, ``text``, optional ``metadata`` (a JSON object;
    ``"title"`` is shown to the model) and, in search results, its ``score`` (higher is
    better)."""

    id: str
    text: str
    metadata: dict[str, Any] | None = None
    score: float | None = None
    #: The part of ``text`` that matched, when the store computes one.
    snippet: str | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The document as a JSON object (what the artifact holds)."""
        out: dict[str, Any] = {"id": self.id, "text": self.text}
        if self.metadata is not None:
            out["metadata"] = self.metadata
        if self.score is not None:
            out["score"] = self.score
        return out


@runtime_checkable
class Retriever(Protocol):
    """What ``retriever_tool`` needs: an async search giving at most ``k`` documents."""

    async def search(self, query: str, k: int) -> list[Document]:
        """At most ``k`` documents about ``query``, best first."""
        ...


def query_words(query: str, *, limit: int = 64) -> list[str]:
    """The words of ``query`` (letters and digits), in order, without duplicates: what a
    store searches for, whatever syntax characters the query held."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query):
        seen.setdefault(word.lower(), None)
        if len(seen) >= limit:
            break
    return list(seen)


def _hit(doc: Document) -> dict[str, Any]:
    hit: dict[str, Any] = {"id": doc.id}
    title = (doc.metadata or {}).get("title")
    if isinstance(title, str) and title:
        hit["title"] = title
    snippet = doc.snippet if doc.snippet else doc.text
    if len(snippet) > SNIPPET_CHARS:
        snippet = snippet[:SNIPPET_CHARS].rstrip() + "…"
    hit["snippet"] = snippet
    if doc.score is not None:
        hit["score"] = round(doc.score, 4)
    return hit


def retriever_tool(
    retriever: Retriever,
    *,
    name: str = "search_documents",
    description: str | None = None,
    k: int = 5,
) -> FunctionTool[..., Any]:
    """A ``read_only``, ``concurrency_safe`` tool ``name(query)`` over ``retriever``.

    It answers ``{"hits": [{"id", "title", "snippet", "score"}, ...]}`` (at most ``k``)
    and keeps the full documents as the response's artifact.
    """
    if not callable(getattr(retriever, "search", None)):
        raise TypeError(f"{retriever!r} has no search(query, k) method")
    if k < 1:
        raise ValueError("k must be at least 1")
    from .. import ToolResult, tool

    async def search(query: str) -> Any:
        if not query.strip():
            raise ToolError("the query is empty: say what to look for", code="tool.bad_query")
        found: Sequence[Document] = await retriever.search(query, k)
        docs = list(found)[:k]
        return ToolResult({"hits": [_hit(d) for d in docs]}, artifact=[d.to_json() for d in docs])

    search.__doc__ = (
        f"{description or 'Search the document collection for passages about a topic.'}\n\n"
        "Args:\n    query: What to look for, in plain words.\n"
    )
    made: FunctionTool[..., Any] = tool(
        name=name, read_only=True, concurrency_safe=True, idempotent=True
    )(search)
    return made
