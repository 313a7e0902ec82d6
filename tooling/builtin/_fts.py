"""Full-text retrievers: SQLite FTS5 (BM25) and PostgreSQL full-text search (``ts_rank``).

Both keep documents in a table of their own (``id`` unique, ``text``, ``metadata`` as
JSON), ``add`` replaces a document with the same id, ``delete`` removes by id, and
``search`` finds documents holding any of the query's words, best first. The query's
words are bound as values, each quoted for the engine: no text a model sends is read as
FTS syntax, so ``"``, ``*``, ``NEAR`` or an unbalanced parenthesis is searched for as text
(or ignored when it is no word at all), never an error from the database.

SQLite work runs on a worker thread (the event loop never waits on the file);
PostgreSQL uses psycopg's async connections (extra ``[postgres]``), imported on first use.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ._retrieval import Document, query_words

__all__ = ["PostgresFtsRetriever", "SqliteFtsRetriever"]

_TABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def _table_name(table: str) -> str:
    if not _TABLE.fullmatch(table):
        raise ValueError(f"table name {table!r} must be letters, digits and '_'")
    return table


def _metadata(raw: str | None) -> dict[str, Any] | None:
    return None if raw is None else json.loads(raw)


def _checked(documents: Iterable[Document]) -> list[Document]:
    docs = list(documents)
    for doc in docs:
        if not isinstance(doc, Document):
            raise TypeError(f"expected Document, got {type(doc).__name__}")
    return docs


class SqliteFtsRetriever:
    """Documents in a SQLite file, searched with FTS5 and ranked by BM25.

    ``path`` is a file (created when missing) or ``":memory:"``; ``table`` names the FTS
    table (default ``documents``).
    """

    def __init__(self, path: str | Path, *, table: str = "documents") -> None:
        self.path = str(path)
        self.table = _table_name(table)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False)
        with self._lock, self._conn:
            # A plain table keeps the ids unique; the FTS5 table indexes its text.
            self._conn.execute(
                f"CREATE TABLE IF NOT EXISTS {self.table}_docs ("
                " rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL,"
                " text TEXT NOT NULL, metadata TEXT)"
            )
            self._conn.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {self.table} USING fts5("
                f" text, content='{self.table}_docs', content_rowid='rowid',"
                " tokenize='unicode61 remove_diacritics 2')"
            )
            # Keep the index in step with the table (FTS5's external-content triggers).
            self._conn.executescript(
                f"""
                CREATE TRIGGER IF NOT EXISTS {self.table}_ai AFTER INSERT ON {self.table}_docs
                BEGIN INSERT INTO {self.table}(rowid, text) VALUES (new.rowid, new.text); END;
                CREATE TRIGGER IF NOT EXISTS {self.table}_ad AFTER DELETE ON {self.table}_docs
                BEGIN INSERT INTO {self.table}({self.table}, rowid, text)
                      VALUES ('delete', old.rowid, old.text); END;
                """
            )

    async def add(self, documents: Iterable[Document]) -> None:
        """Store ``documents`` (one with an id already stored replaces it)."""
        docs = _checked(documents)
        await asyncio.to_thread(self._add, docs)

    def _add(self, docs: Sequence[Document]) -> None:
        with self._lock, self._conn:
            for doc in docs:
                self._conn.execute(f"DELETE FROM {self.table}_docs WHERE id = ?", (doc.id,))
                self._conn.execute(
                    f"INSERT INTO {self.table}_docs (id, text, metadata) VALUES (?, ?, ?)",
                    (
                        doc.id,
                        doc.text,
                        None if doc.metadata is None else json.dumps(doc.metadata),
                    ),
                )

    async def delete(self, ids: Iterable[str]) -> None:
        """Remove the documents with these ids (unknown ids are ignored)."""
        wanted = [str(i) for i in ids]
        await asyncio.to_thread(self._delete, wanted)

    def _delete(self, ids: Sequence[str]) -> None:
        with self._lock, self._conn:
            self._conn.executemany(
                f"DELETE FROM {self.table}_docs WHERE id = ?", [(i,) for i in ids]
            )

    async def search(self, query: str, k: int) -> list[Document]:
        """At most ``k`` documents holding any word of ``query``, best BM25 first."""
        words = query_words(query)
        if not words or k < 1:
            return []
        return await asyncio.to_thread(self._search, words, k)

    def _search(self, words: Sequence[str], k: int) -> list[Document]:
        # Each word is an FTS5 string ("..." with quotes doubled), joined with OR.
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        with self._lock:
            rows = self._conn.execute(
                f"SELECT d.id, d.text, d.metadata, bm25({self.table}) AS rank,"
                f" snippet({self.table}, 0, '', '', '…', 32)"
                f" FROM {self.table} JOIN {self.table}_docs d ON d.rowid = {self.table}.rowid"
                f" WHERE {self.table} MATCH ? ORDER BY rank, d.id LIMIT ?",
                (match, k),
            ).fetchall()
        # bm25() is lower-is-better; scores here are higher-is-better.
        return [
            Document(id=r[0], text=r[1], metadata=_metadata(r[2]), score=-r[3], snippet=r[4])
            for r in rows
        ]

    def close(self) -> None:
        """Close the database file."""
        with self._lock:
            self._conn.close()

    def __repr__(self) -> str:
        return f"SqliteFtsRetriever({self.path!r})"


class PostgresFtsRetriever:
    """Documents in a PostgreSQL table, searched with full-text search, ranked by
    ``ts_rank``.

    ``dsn`` is a ``postgresql://`` URL or a libpq string; ``config`` the text-search
    configuration (default ``english``); ``table`` the table (created when missing, with a
    generated ``tsvector`` column and a GIN index).
    """

    def __init__(self, dsn: str, *, table: str = "documents", config: str = "english") -> None:
        self.dsn = dsn
        self.table = _table_name(table)
        if not re.fullmatch(r"[a-z_]+", config):
            raise ValueError(f"text-search configuration {config!r} is not a plain name")
        self.config = config
        self._pool: Any = None
        self._ready = asyncio.Lock()

    async def _connection_pool(self) -> Any:
        async with self._ready:
            if self._pool is None:
                from psycopg_pool import AsyncConnectionPool

                pool = AsyncConnectionPool(self.dsn, min_size=1, max_size=4, open=False)
                await pool.open(wait=True)
                async with pool.connection() as conn:
                    await conn.execute(
                        f"CREATE TABLE IF NOT EXISTS {self.table} ("
                        " id TEXT PRIMARY KEY, text TEXT NOT NULL, metadata JSONB,"
                        f" tsv tsvector GENERATED ALWAYS AS"
                        f" (to_tsvector('{self.config}', text)) STORED)"
                    )
                    await conn.execute(
                        f"CREATE INDEX IF NOT EXISTS {self.table}_tsv"
                        f" ON {self.table} USING GIN (tsv)"
                    )
                self._pool = pool
            return self._pool

    async def add(self, documents: Iterable[Document]) -> None:
        """Store ``documents`` (one with an id already stored replaces it)."""
        docs = _checked(documents)
        pool = await self._connection_pool()
        async with pool.connection() as conn, conn.cursor() as cur:
            await cur.executemany(
                f"INSERT INTO {self.table} (id, text, metadata) VALUES (%s, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET text = EXCLUDED.text,"
                " metadata = EXCLUDED.metadata",
                [
                    (d.id, d.text, None if d.metadata is None else json.dumps(d.metadata))
                    for d in docs
                ],
            )

    async def delete(self, ids: Iterable[str]) -> None:
        """Remove the documents with these ids (unknown ids are ignored)."""
        wanted = [str(i) for i in ids]
        pool = await self._connection_pool()
        async with pool.connection() as conn:
            await conn.execute(f"DELETE FROM {self.table} WHERE id = ANY(%s)", (wanted,))

    async def search(self, query: str, k: int) -> list[Document]:
        """At most ``k`` documents holding any word of ``query``, best ``ts_rank`` first."""
        words = query_words(query)
        if not words or k < 1:
            return []
        pool = await self._connection_pool()
        # One plainto_tsquery per word (a value, never syntax), OR-ed together; a word
        # that is a stop word gives an empty query, which the OR leaves out.
        terms = " || ".join(f"plainto_tsquery('{self.config}', %s)" for _ in words)
        sql = (
            f"WITH q AS (SELECT ({terms}) AS query)"
            f" SELECT id, text, metadata, ts_rank(tsv, q.query) AS rank,"
            f" ts_headline('{self.config}', text, q.query,"
            ' \'StartSel="", StopSel="", MaxWords=35, MinWords=15\')'
            f" FROM {self.table}, q WHERE tsv @@ q.query ORDER BY rank DESC, id LIMIT %s"
        )
        async with pool.connection() as conn:
            cursor = await conn.execute(sql, (*words, k))
            rows = await cursor.fetchall()
        return [
            Document(id=r[0], text=r[1], metadata=r[2], score=float(r[3]), snippet=r[4])
            for r in rows
        ]

    async def close(self) -> None:
        """Close the connection pool."""
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    def __repr__(self) -> str:
        return f"PostgresFtsRetriever(table={self.table!r})"
