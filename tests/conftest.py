"""Shared test setup: no real API keys, and a hypothesis profile a slow machine can't break."""

from __future__ import annotations

import os
import urllib.parse
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

for _key in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
    os.environ.pop(_key, None)

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

_ADAPTERS = Path(__file__).resolve().parent / "adapters"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``tests/adapters`` needs the other frameworks, installed in an environment of its
    own (``.ci/run``'s adapters step runs ``pytest tests/adapters`` there): collected only
    when the run names it, never by the main suite."""
    if collection_path == _ADAPTERS or _ADAPTERS in collection_path.parents:
        asked = [Path(arg.split("::")[0]).resolve() for arg in config.args]
        named = any(path == _ADAPTERS or _ADAPTERS in path.parents for path in asked)
        return None if named else True
    return None


# -- PostgreSQL: a real server (see _pg_server.py) ----------------------------------------


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The DSN of a PostgreSQL server: ``AGENT_CORE_TEST_POSTGRES`` (what ``.ci/run``
    exports), else a throwaway one started here when the binaries are on the machine.
    Without either the test is skipped, or fails when ``CI`` is set."""
    dsn = os.environ.get("AGENT_CORE_TEST_POSTGRES")
    if dsn:
        yield dsn
        return
    from _pg_server import PgServer, find_bindir

    why = ""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        why = "psycopg is not installed (pip install -e '.[dev]')"
    if not why and find_bindir() is None:
        why = "AGENT_CORE_TEST_POSTGRES is not set and no PostgreSQL binaries were found"
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL tests cannot run in CI: {why}")
        pytest.skip(why)
    server = PgServer.start()
    try:
        yield server.dsn
    finally:
        server.stop()


@pytest.fixture
def postgres_dsn(postgres_server: str) -> Iterator[str]:
    """A DSN whose tables live in a fresh schema of their own, dropped afterwards."""
    import psycopg

    schema = f"test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield with_search_path(postgres_server, schema)
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def with_search_path(dsn: str, schema: str) -> str:
    """``dsn`` with ``search_path`` set to ``schema`` (URL or key=value form kept)."""
    option = f"-csearch_path={schema}"
    if dsn.startswith(("postgresql://", "postgres://")):
        parts = urllib.parse.urlsplit(dsn)
        query = urllib.parse.parse_qsl(parts.query)
        query = [(k, v) for k, v in query if k != "options"] + [("options", option)]
        return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))
    from psycopg.conninfo import make_conninfo

    return make_conninfo(dsn, options=option)
