"""``InMemoryMemoryService``: keyword search over the text of past sessions."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from tooling import MemoryHit

from ..sessions.base import Session
from .base import BaseMemoryService

__all__ = ["InMemoryMemoryService"]

_WORD = re.compile(r"\w+")


def _words(text: str) -> frozenset[str]:
    """The distinct lowercased words (runs of letters, digits and ``_``) of ``text``."""
    return frozenset(_WORD.findall(text.lower()))


@dataclass(frozen=True, slots=True)
class _Entry:
    hit: MemoryHit
    words: frozenset[str]


class InMemoryMemoryService(BaseMemoryService):
    """Remembers the text of sessions' events; finds them by keyword.

    :meth:`add_session_to_memory` keeps, for each non-partial event with text, that text
    with its author, session id and timestamp (adding a session again replaces what was
    kept of it). :meth:`search_memory` lowercases the query and the texts and splits
    them into words: an event is a hit when any query word is among its words. Hits
    come best first: more distinct matching words, then more recent. Memory is per user
    of an app. Safe to share between tasks and threads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (app_name, user_id) -> session id -> its entries in event order.
        self._entries: dict[tuple[str, str], dict[str, list[_Entry]]] = {}

    async def add_session_to_memory(self, session: Session) -> None:
        """Remember the text of ``session``'s non-partial events (replacing an earlier add)."""
        entries = []
        for event in session.events:
            if event.partial or event.content is None:
                continue
            text = event.content.text
            if not text.strip():
                continue
            hit = MemoryHit(
                text=text, author=event.author, session_id=session.id, timestamp=event.timestamp
            )
            entries.append(_Entry(hit, _words(text)))
        with self._lock:
            self._entries.setdefault((session.app_name, session.user_id), {})[session.id] = entries

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> list[MemoryHit]:
        """The remembered texts sharing a word with ``query``, best first (none for no words)."""
        wanted = _words(query)
        if not wanted:
            return []
        with self._lock:
            sessions = list(self._entries.get((app_name, user_id), {}).values())
        scored = [
            (len(wanted & entry.words), entry.hit)
            for entries in sessions
            for entry in entries
            if not wanted.isdisjoint(entry.words)
        ]
        scored.sort(key=lambda item: (-item[0], -item[1].timestamp))
        return [hit for _, hit in scored]
