"""``ToolSearch``: a large catalog offered through one ``search_tools`` tool.

The model is offered the ``always`` tools and ``search_tools(query)``. A search ranks
the other tools by BM25 over their names and descriptions and reveals the best
``max_results``: they are offered from the next model turn on and stay revealed for the
session (the names are kept in the session state under :data:`REVEALED_KEY`). The tools
offered keep the catalog's order whatever was revealed when, so a provider's prompt
cache over the tool list holds from turn to turn.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tooling import BaseTool, FunctionTool, ToolContext

__all__ = ["ToolSearch"]

#: The session state key holding the names a search revealed (a JSON list).
REVEALED_KEY = "tool_search_revealed"

SEARCH_TOOL_NAME = "search_tools"

_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+")


def words(text: str) -> list[str]:
    """Lowercase words of a name or a description (``get_userEmail`` -> get, user, email)."""
    return [w.lower() for w in _WORD.findall(text)]


class _Index:
    """BM25 (k1 = 1.2, b = 0.75) over each tool's name (twice: it says most) and
    description."""

    def __init__(self, tools: Sequence[BaseTool]) -> None:
        self.names = [t.name for t in tools]
        self.docs = [Counter(words(t.name) * 2 + words(t.description or "")) for t in tools]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.average = (sum(self.lengths) / len(self.docs)) if self.docs else 0.0
        frequency: Counter[str] = Counter()
        for doc in self.docs:
            frequency.update(doc.keys())
        n = len(self.docs)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in frequency.items()}

    def search(self, query: str, limit: int) -> list[str]:
        terms = [w for w in words(query) if w in self.idf]
        if not terms:
            return []
        scored: list[tuple[float, int]] = []
        for i, doc in enumerate(self.docs):
            score = 0.0
            norm = 1.2 * (0.25 + 0.75 * self.lengths[i] / (self.average or 1.0))
            for term in terms:
                tf = doc.get(term, 0)
                if tf:
                    score += self.idf[term] * tf * 2.2 / (tf + norm)
            if score > 0:
                scored.append((-score, i))
        scored.sort()
        return [self.names[i] for _, i in scored[:limit]]


class ToolSearch:
    """Offer a large catalog through search: ``Agent(tools=..., tool_search=ToolSearch())``.

    ``always`` names the tools offered from the start (besides ``search_tools``);
    ``max_results`` is how many tools one search reveals.
    """

    def __init__(self, always: Iterable[str] = (), *, max_results: int = 5) -> None:
        if max_results < 1:
            raise ValueError("max_results must be at least 1")
        self.always = tuple(always)
        self.max_results = max_results
        self._tools: dict[tuple[str, ...], BaseTool] = {}

    def check(self, names: Iterable[str], *, where: str) -> None:
        """Raise ``ValueError`` if ``always`` names a tool that is not in ``names``."""
        known = set(names)
        missing = [n for n in self.always if n not in known]
        if missing:
            raise ValueError(f"{where}ToolSearch(always=...) names unknown tools: {missing}")

    def offered(
        self, tools: Mapping[str, BaseTool], state: Mapping[str, Any]
    ) -> dict[str, BaseTool]:
        """The tools a model is offered now: ``always``, the revealed ones, then
        ``search_tools``, in the catalog's order."""
        revealed = state.get(REVEALED_KEY)
        shown = set(self.always)
        if isinstance(revealed, list):
            shown.update(n for n in revealed if isinstance(n, str))
        offered = {name: t for name, t in tools.items() if name in shown}
        offered[SEARCH_TOOL_NAME] = self.search_tool(tools)
        return offered

    def search_tool(self, tools: Mapping[str, BaseTool]) -> BaseTool:
        """The ``search_tools`` tool over ``tools`` (those not always offered)."""
        hidden = [t for name, t in tools.items() if name not in self.always]
        key = tuple(t.name for t in hidden)
        made = self._tools.get(key)
        if made is None:
            made = self._tools[key] = self._make_tool(hidden)
        return made

    def _make_tool(self, hidden: list[BaseTool]) -> BaseTool:
        index = _Index(hidden)
        by_name = {t.name: t for t in hidden}
        limit = self.max_results

        def search_tools(query: str, tool_context: ToolContext) -> dict[str, Any]:
            """Find tools for a task and make them available from your next step on.

            Args:
                query: What you need to do, in a few words (e.g. "create a calendar event").
            """
            found = index.search(query, limit)
            before = tool_context.state.get(REVEALED_KEY)
            known = [n for n in before if isinstance(n, str)] if isinstance(before, list) else []
            if any(n not in known for n in found):
                tool_context.state[REVEALED_KEY] = [*known, *(n for n in found if n not in known)]
            return {
                "tools": [{"name": n, "description": by_name[n].description} for n in found],
                "note": "these tools can be called from your next step on"
                if found
                else "no tool matches; try other words",
            }

        return FunctionTool(search_tools, read_only=True, concurrency_safe=True)
