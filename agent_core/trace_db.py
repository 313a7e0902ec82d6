"""Spans kept in a SQLite file, for the inspector's Runs page and for later reading.

:class:`SqliteSpanExporter` is an OpenTelemetry ``SpanExporter`` that appends finished
spans to a SQLite database; any number of processes may append to one file at once (WAL
mode, each export one short transaction). ``agent-core run --trace-db PATH`` installs it
(:func:`install`); ``agent-core web --trace-db PATH`` reads it (:func:`list_traces`,
:func:`read_trace`).

Needs ``opentelemetry-sdk`` (extra ``[otel]``) to write; reading needs only the standard
library. Nothing here is imported by ``import agent_core``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExportResult

__all__ = [
    "SqliteSpanExporter",
    "StoredSpan",
    "find_trace",
    "install",
    "list_traces",
    "read_trace",
]

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS spans (
        trace_id TEXT NOT NULL,
        span_id TEXT NOT NULL,
        parent_id TEXT,
        name TEXT NOT NULL,
        start_ns INTEGER NOT NULL,
        end_ns INTEGER NOT NULL,
        status TEXT NOT NULL,
        attributes TEXT NOT NULL,
        pid INTEGER NOT NULL,
        PRIMARY KEY (trace_id, span_id)
    )""",
    "CREATE INDEX IF NOT EXISTS spans_by_start ON spans (start_ns)",
)
_BUSY_TIMEOUT_S = 30.0

StoredSpan = dict[str, Any]
"""A stored span: ``trace_id``, ``span_id``, ``parent_id``, ``name``, ``start_ns``,
``end_ns``, ``status`` (``UNSET``, ``OK`` or ``ERROR``), ``attributes`` (a dict)."""


def _connect(path: str) -> sqlite3.Connection:
    # Exports come from the batch processor's thread: the lock in the exporter serializes.
    conn = sqlite3.connect(
        path, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
    )
    conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
    return conn


def _create(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _attribute(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _row(span: ReadableSpan) -> tuple[Any, ...]:
    context = span.get_span_context()
    assert context is not None
    parent = span.parent
    attributes = {k: _attribute(v) for k, v in (span.attributes or {}).items()}
    start = span.start_time or 0
    return (
        format(context.trace_id, "032x"),
        format(context.span_id, "016x"),
        format(parent.span_id, "016x") if parent is not None else None,
        span.name,
        start,
        span.end_time or start,
        span.status.status_code.name,
        json.dumps(attributes, ensure_ascii=False, default=str),
        os.getpid(),
    )


class SqliteSpanExporter:
    """An OpenTelemetry span exporter appending finished spans to a SQLite file.

    Use it with a ``SimpleSpanProcessor`` or ``BatchSpanProcessor``. Several processes
    may export to one file: each export is one ``BEGIN IMMEDIATE`` transaction that waits
    for the others.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = _connect(self.path)
        _create(self._conn)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Append ``spans``; FAILURE when the file cannot be written."""
        from opentelemetry.sdk.trace.export import SpanExportResult

        rows = [_row(span) for span in spans]
        with self._lock:
            if self._conn is None:
                return SpanExportResult.FAILURE
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.executemany(
                    "INSERT OR REPLACE INTO spans VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
                )
                self._conn.execute("COMMIT")
            except sqlite3.Error:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Close the file."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered here: always True."""
        return True


def install(path: str | os.PathLike[str]) -> TracerProvider:
    """Make a tracer provider exporting to ``path`` the global one, and return it.

    Call ``shutdown()`` on it at the end (it flushes what is buffered).
    """
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "agent-core"}))
    provider.add_span_processor(
        BatchSpanProcessor(SqliteSpanExporter(path), schedule_delay_millis=200)  # type: ignore[arg-type]
    )
    trace.set_tracer_provider(provider)
    return provider


@contextmanager
def _reader(path: str) -> Iterator[sqlite3.Connection | None]:
    if not os.path.exists(path):
        yield None
        return
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=_BUSY_TIMEOUT_S)
    try:
        yield conn
    finally:
        conn.close()


def _decode(row: tuple[Any, ...]) -> StoredSpan:
    trace_id, span_id, parent_id, name, start, end, status, attributes = row
    return {
        "trace_id": trace_id,
        "span_id": span_id,
        "parent_id": parent_id,
        "name": name,
        "start_ns": int(start),
        "end_ns": int(end),
        "status": status,
        "attributes": json.loads(attributes),
    }


_COLUMNS = "trace_id, span_id, parent_id, name, start_ns, end_ns, status, attributes"


def list_traces(path: str | os.PathLike[str], limit: int = 500) -> list[list[StoredSpan]]:
    """The root spans of the most recent traces: per trace, the spans without a parent
    in it (usually one ``invoke_agent`` span), newest trace first."""
    with _reader(os.fspath(path)) as conn:
        if conn is None:
            return []
        try:
            rows = conn.execute(
                f"""SELECT {_COLUMNS} FROM spans s WHERE trace_id IN (
                    SELECT trace_id FROM spans GROUP BY trace_id
                    ORDER BY MIN(start_ns) DESC LIMIT ?)
                AND (parent_id IS NULL OR NOT EXISTS (
                    SELECT 1 FROM spans p WHERE p.trace_id = s.trace_id
                    AND p.span_id = s.parent_id))
                ORDER BY start_ns""",
                (limit,),
            ).fetchall()
        except sqlite3.OperationalError:  # no table yet
            return []
    by_trace: dict[str, list[StoredSpan]] = {}
    for row in rows:
        span = _decode(row)
        by_trace.setdefault(span["trace_id"], []).append(span)
    return sorted(by_trace.values(), key=lambda spans: -spans[0]["start_ns"])


def read_trace(path: str | os.PathLike[str], trace_id: str) -> list[StoredSpan]:
    """Every stored span of one trace, by start time."""
    with _reader(os.fspath(path)) as conn:
        if conn is None:
            return []
        try:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM spans WHERE trace_id = ? ORDER BY start_ns, span_id",
                (trace_id,),
            ).fetchall()
        except sqlite3.OperationalError:
            return []
    return [_decode(row) for row in rows]


def find_trace(path: str | os.PathLike[str], invocation_id: str) -> str | None:
    """The trace holding the invocation ``invocation_id`` (an id the agent loop recorded
    on its span), or None; a trace id is accepted as is."""
    with _reader(os.fspath(path)) as conn:
        if conn is None:
            return None
        try:
            if conn.execute(
                "SELECT 1 FROM spans WHERE trace_id = ? LIMIT 1", (invocation_id,)
            ).fetchone():
                return invocation_id
            needle = json.dumps(invocation_id)
            for trace_id, attributes in conn.execute(
                "SELECT trace_id, attributes FROM spans WHERE instr(attributes, ?) > 0",
                (needle,),
            ):
                values = json.loads(attributes)
                if any(
                    key.endswith("invocation.id") and value == invocation_id
                    for key, value in values.items()
                ):
                    return str(trace_id)
        except sqlite3.OperationalError:
            return None
    return None
