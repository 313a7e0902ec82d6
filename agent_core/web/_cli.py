"""``agent-core web FOLDER``: the inspector for an agent folder or a folder of them."""

from __future__ import annotations

import argparse
import os
import sqlite3
from pathlib import Path

from tooling.cli import CliError, load_agent_dir
from tooling.web import wait_until_interrupted

from .._runner import Runner
from ..cli import _has_api_key, _read_replay, _root_agent
from ..services.artifacts import SqliteArtifactService
from ..services.memory import InMemoryMemoryService
from ..sessions.base import BaseSessionService
from ..sessions.memory import InMemorySessionService
from ..sessions.sqlite import SqliteSessionService
from . import InspectedApp, serve_apps

__all__ = ["cmd_web", "open_session_service"]


def open_session_service(url: str | None) -> BaseSessionService:
    """Sessions from ``--session-db``: ``memory://``, ``sqlite:///path``, a plain path, or
    any URL ``agent_core.session_service_from_url`` takes when it exists."""
    if url is None or url == "memory://":
        return InMemorySessionService()
    path = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else url
    if "://" in path:
        import agent_core

        from_url = getattr(agent_core, "session_service_from_url", None)
        if from_url is None:
            raise CliError(f"unsupported session database URL: {url}")
        service: BaseSessionService = from_url(url)
        return service
    try:
        return SqliteSessionService(path)
    except (sqlite3.Error, OSError) as exc:
        raise CliError(f"cannot open session database {url}: {exc}") from exc


def _agent_folders(folder: Path) -> list[Path]:
    if (folder / "agent.py").is_file():
        return [folder]
    found = sorted(p for p in folder.iterdir() if (p / "agent.py").is_file())
    if not found:
        raise CliError(f"{folder} has no agent.py, and no folder in it has one")
    return found


def _app(
    folder: Path, service: BaseSessionService, artifacts: SqliteArtifactService | None
) -> InspectedApp:
    module = load_agent_dir(folder)
    root = _root_agent(module, folder)
    replay = folder / "replay.json"
    replayed: str | None = None
    if not _has_api_key() and replay.is_file():
        scripted, _ = _read_replay(replay)
        for agent in root.reachable():
            agent._model = scripted
        env = getattr(module, "REPLAY_ENV", None) or {}
        os.environ.update({str(k): str(v) for k, v in dict(env).items()})
        replayed = str(replay)
    runner = Runner(
        root,
        app_name=folder.resolve().name,
        session_service=service,
        artifact_service=artifacts,
        memory_service=InMemoryMemoryService(),
    )
    return InspectedApp(runner, target=module, label=module.__name__, replay=replayed)


def cmd_web(args: argparse.Namespace) -> int:
    """Serve the inspector for FOLDER until interrupted."""
    folder = Path(args.folder)
    if not folder.is_dir():
        raise CliError(f"not a directory: {args.folder}")
    folders = _agent_folders(folder)
    service = open_session_service(args.session_db)
    artifacts = (
        SqliteArtifactService(service.path) if isinstance(service, SqliteSessionService) else None
    )
    try:
        apps = [_app(each, service, artifacts) for each in folders]
        server = serve_apps(
            apps,
            trace_db=args.trace_db,
            host=args.host,
            port=args.port,
            title=folder.resolve().name,
            close_runners=True,
        )
        return wait_until_interrupted(server, "agent-core", browser=not args.no_browser)
    finally:
        if isinstance(service, SqliteSessionService):
            service.close()
        if artifacts is not None:
            artifacts.close()
