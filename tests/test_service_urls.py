"""``session_service_from_url`` / ``artifact_service_from_url``, and what importing costs."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_core import (
    InMemoryArtifactService,
    InMemorySessionService,
    PostgresArtifactService,
    PostgresSessionService,
    SqliteArtifactService,
    SqliteSessionService,
    artifact_service_from_url,
    session_service_from_url,
)


def test_memory_urls() -> None:
    assert isinstance(session_service_from_url("memory://"), InMemorySessionService)
    assert isinstance(artifact_service_from_url("memory://"), InMemoryArtifactService)


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:///sessions.db", "sessions.db"),  # relative to the working directory
        ("sqlite:///./data/s.db", "./data/s.db"),
        ("sqlite:////var/tmp/s.db", "/var/tmp/s.db"),  # absolute
        ("sqlite://", ":memory:"),
        ("sqlite:///:memory:", ":memory:"),
        ("SQLite:///x.db", "x.db"),
    ],
)
def test_sqlite_urls_read_as_sqlalchemy_does(url: str, path: str) -> None:
    sessions = session_service_from_url(url)
    artifacts = artifact_service_from_url(url)
    try:
        assert isinstance(sessions, SqliteSessionService) and sessions.path == path
        assert isinstance(artifacts, SqliteArtifactService) and artifacts.path == path
    finally:
        sessions.close()
        artifacts.close()


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u@localhost:5999/db",
        "postgres://u@localhost:5999/db",
        "postgresql+psycopg://u@localhost:5999/db",
    ],
)
def test_postgres_urls_build_without_connecting(url: str) -> None:
    sessions = session_service_from_url(url)
    artifacts = artifact_service_from_url(url)
    try:
        assert isinstance(sessions, PostgresSessionService)
        assert isinstance(artifacts, PostgresArtifactService)
        assert sessions.dsn == artifacts.dsn == "postgresql://u@localhost:5999/db"
    finally:
        sessions.close()
        artifacts.close()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sessions.db", "not a service URL"),
        ("mongodb://x/y", "unknown scheme 'mongodb'"),
        ("sqlite://host/x.db", "no host"),
    ],
)
def test_bad_urls_say_what_is_accepted(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        session_service_from_url(url)
    with pytest.raises(ValueError, match=message):
        artifact_service_from_url(url)


async def test_a_url_service_round_trips(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    for url in (f"sqlite:///{tmp_path / 's.db'}", request.getfixturevalue("postgres_dsn")):
        service: Any = session_service_from_url(url)
        async with service:
            await service.create_session(app_name="a", user_id="u", session_id="s", state={"k": 1})
            got = await service.get_session(app_name="a", user_id="u", session_id="s")
            assert got is not None and got.state == {"k": 1}


def test_import_agent_core_does_not_import_psycopg() -> None:
    code = (
        "import sys, agent_core\n"
        "agent_core.PostgresSessionService, agent_core.session_service_from_url\n"
        "assert 'psycopg' not in sys.modules and 'psycopg_pool' not in sys.modules\n"
        "agent_core.session_service_from_url('postgresql://u@localhost:5999/db').close()\n"
        "assert 'psycopg' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_postgres_url_sizes_the_pool_and_psycopg_never_sees_the_options() -> None:
    url = "postgresql://u@localhost:5999/db?sslmode=disable&max_size=3&min_size=2&timeout=4.5"
    sessions = session_service_from_url(url)
    artifacts = artifact_service_from_url(url)
    try:
        for service in (sessions, artifacts):
            assert service.max_size == 3  # type: ignore[attr-defined]
            assert service.dsn == "postgresql://u@localhost:5999/db?sslmode=disable"  # type: ignore[attr-defined]
    finally:
        sessions.close()  # type: ignore[attr-defined]
        artifacts.close()  # type: ignore[attr-defined]
    for bad in ("max_size=0", "max_size=many", "min_size=5&max_size=2"):
        with pytest.raises(ValueError):
            session_service_from_url(f"postgresql://u@localhost:5999/db?{bad}")


async def test_a_pool_sized_by_url_serves_runs_on_a_real_server(postgres_dsn: str) -> None:
    from agent_core import Agent, Runner, ScriptedModel

    service = session_service_from_url(postgres_dsn + "&max_size=2")
    try:
        assert service.max_size == 2  # type: ignore[attr-defined]
        runner = Runner(
            Agent("echo", ScriptedModel(["One.", "Two.", "Three."])),
            app_name="app",
            session_service=service,
        )

        async def run(session_id: str) -> str:
            events = [
                e
                async for e in runner.run_async(
                    user_id="u", session_id=session_id, new_message="hi"
                )
            ]
            text = events[-1].content.text if events[-1].content is not None else None
            return text or ""

        # Three runs at once on two connections: each holds one while it runs, so the
        # third waits for a free one and still completes.
        said = await asyncio.gather(run("a"), run("b"), run("c"))
        assert sorted(said) == ["One.", "Three.", "Two."]
    finally:
        await service.aclose()  # type: ignore[attr-defined]
