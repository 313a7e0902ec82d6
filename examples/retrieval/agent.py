"""Answers from a document set shipped with the example, searched with SQLite FTS5.

``retriever_tool`` turns any object with ``async search(query, k)`` into a read-only
tool; here the store is a :class:`~tooling.builtin.SqliteFtsRetriever` (BM25 ranking)
filled from ``documents.json`` on first use. The model sees each hit's id, title and a
snippet; the full documents are kept as the response's artifact, never sent to it.

Try it with:

- "How long do I have to return something?";
- "My kettle arrived broken, what do I do?"
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agent_core import Agent
from tooling.builtin import Document, SqliteFtsRetriever, retriever_tool

DOCUMENTS = Path(__file__).with_name("documents.json")


class ShippedDocuments:
    """The example's documents in an in-memory FTS5 index, built on the first search."""

    def __init__(self) -> None:
        self.store = SqliteFtsRetriever(":memory:")
        self._loaded = asyncio.Lock()
        self._filled = False

    async def search(self, query: str, k: int) -> list[Document]:
        async with self._loaded:
            if not self._filled:
                rows = json.loads(DOCUMENTS.read_text(encoding="utf-8"))
                await self.store.add(
                    Document(r["id"], r["text"], {"title": r["title"]}) for r in rows
                )
                self._filled = True
        return await self.store.search(query, k)


search_policies = retriever_tool(
    ShippedDocuments(),
    name="search_policies",
    description="Search the shop's policy documents (returns, shipping, warranty, ...).",
    k=3,
)

root_agent = Agent(
    name="retrieval",
    model="gemini-2.5-flash",
    description="Answers customers' questions from the shop's policy documents.",
    instruction=(
        "Answer questions about the shop from its policy documents only: call "
        "search_policies with the question's key words, then answer in one or two "
        "sentences naming the document you used. If nothing relevant comes back, say so."
    ),
    tools=[search_policies],
)
