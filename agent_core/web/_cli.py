"""``agent-core web FOLDER``: the inspector for an agent folder or a folder of them."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tooling.integration import CliError, load_agent_dir
from tooling.web import wait_until_interrupted

from .._cli.support import (
    agent_key_variables,
    artifact_service,
    open_job_store,
    root_agent,
    session_service,
    use_replay,
)
from .._runner import Runner
from ..jobs.base import JobStore
from ..services.base import BaseArtifactService
from ..services.memory import InMemoryMemoryService
from ..sessions.base import BaseSessionService
from . import InspectedApp, serve_apps

__all__: list[str] = []


def _agent_folders(folder: Path) -> list[Path]:
    if (folder / "agent.py").is_file():
        return [folder]
    found = sorted(p for p in folder.iterdir() if (p / "agent.py").is_file())
    if not found:
        raise CliError(f"{folder} has no agent.py, and no folder in it has one")
    return found


def _app(
    folder: Path,
    service: BaseSessionService,
    artifacts: BaseArtifactService | None,
    jobs: JobStore | None,
) -> InspectedApp:
    module = load_agent_dir(folder)
    root = root_agent(module, folder)
    replay = folder / "replay.json"
    replayed: str | None = None
    live = any(os.environ.get(v) for v in agent_key_variables(root))
    if not live and replay.is_file():
        use_replay(root, module, replay)
        replayed = str(replay)
    runner = Runner(
        root,
        app_name=folder.resolve().name,
        session_service=service,
        artifact_service=artifacts,
        memory_service=InMemoryMemoryService(),
        job_store=jobs,  # None: the session database's, as `agent-core worker` uses
        run_jobs=False,  # the inspector shows and settles jobs; workers run them
    )
    # Shown by the file's own name, not the module name made up to import it.
    label = f"{folder.resolve().name}/agent.py"
    return InspectedApp(runner, target=module, label=label, replay=replayed)


def _apps(
    folders: list[Path],
    service: BaseSessionService,
    artifacts: BaseArtifactService | None,
    jobs: JobStore | None,
) -> list[InspectedApp]:
    """One app per folder. In a folder of several agents, one whose code needs a package
    that is not installed (an example needing an extra) is left out with a warning on
    stderr; any other problem, or a single folder, is an error."""
    apps: list[InspectedApp] = []
    for each in folders:
        try:
            apps.append(_app(each, service, artifacts, jobs))
        except CliError as exc:
            if len(folders) == 1 or not isinstance(exc.__cause__, ModuleNotFoundError):
                raise
            print(f"agent-core: leaving out {each.name}: {exc}", file=sys.stderr)
    if not apps:
        raise CliError("no agent folder could be loaded")
    return apps


def cmd_web(args: argparse.Namespace) -> int:
    """Serve the inspector for FOLDER until interrupted."""
    folder = Path(args.folder)
    if not folder.is_dir():
        raise CliError(f"not a directory: {args.folder}")
    folders = _agent_folders(folder)
    # --session-db as `agent-core run` reads it: a SQLite path or a service URL.
    service = session_service(args.session_db)
    artifacts = artifact_service(args.session_db)
    # Jobs as `agent-core worker` finds them: --job-db, else the session database.
    where = getattr(args, "job_db", None) or args.session_db
    jobs = open_job_store(where) if where else None
    try:
        apps = _apps(folders, service, artifacts, jobs)
        server = serve_apps(
            apps,
            trace_db=args.trace_db,
            host=args.host,
            port=args.port,
            title=folder.resolve().name,
            close_runners=True,
        )
        if jobs is not None:
            store = jobs
            server.add_close_hook(lambda: server.run(store.close(), timeout=30))
        return wait_until_interrupted(server, "agent-core", browser=not args.no_browser)
    finally:
        for opened in (service, artifacts):
            close = getattr(opened, "close", None)
            if callable(close):
                close()
