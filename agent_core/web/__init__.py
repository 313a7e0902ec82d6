"""The inspector for agents: the Tools page, plus Sessions, Jobs and Runs, on a local web page.

``agent-core web FOLDER`` serves it for an agent folder (or a folder of them);
:func:`serve` does the same for a :class:`~agent_core.Runner` from Python (tests,
notebooks). The server is ``tooling.web``'s: the standard library only, 127.0.0.1 by
default, a per-launch token on every API request, ``Host`` and ``Origin`` checked.

The Jobs page shows the durable jobs of the apps whose agents have durable tools (or
whose ``InspectedApp.jobs`` is set), from each runner's job store. The Runs page reads
spans from a SQLite file written by :class:`agent_core.tracing.SqliteSpanExporter`
(``agent-core run --trace-db PATH``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tooling.integration import discover_tools
from tooling.web import ToolCatalogue, WebServer, add_tool_routes

from .._job_loop import durable_tools
from .._runner import RunConfig, Runner
from ..models.scripted import ScriptedModel
from ._sessions import SessionsApi, add_session_routes, pending_calls, state_at

__all__ = ["InspectedApp", "WebServer", "pending_calls", "serve", "serve_apps", "state_at"]


@dataclass
class InspectedApp:
    """One app the inspector shows: its runner, where its tools are found, its model.

    ``target`` is what ``tooling inspect`` would look in (the agent's module, so the
    catalogue is the CLI's; the root agent by default) and ``label`` its name there.
    ``replay`` names the replay file when the agents play a ``ScriptedModel``; ``jobs``
    says whether the Jobs page lists the app's jobs (None: when its agent has durable
    tools).
    """

    runner: Runner
    target: object = None
    label: str = ""
    replay: str | None = None
    run_config: RunConfig | None = None
    jobs: bool | None = None

    @property
    def shows_jobs(self) -> bool:
        """Whether the Jobs page lists this app: ``jobs`` when set, else whether its
        agent has durable tools."""
        return self.jobs if self.jobs is not None else bool(durable_tools(self.runner.agent))

    @property
    def name(self) -> str:
        return self.runner.app_name

    def describe(self) -> dict[str, Any]:
        """What the page shows of the app: its name and model (a replay is labelled)."""
        model = getattr(self.runner.agent, "_model", None)
        if isinstance(model, ScriptedModel) or self.replay is not None:
            where = f" replaying {os.path.basename(self.replay)}" if self.replay else ""
            label = f"ScriptedModel{where}: no model is called"
            return {"name": self.name, "model": label, "replay": True}
        name = model if isinstance(model, str) else getattr(model, "model", type(model).__name__)
        return {"name": self.name, "model": str(name), "replay": False}


def serve(
    runner: Runner,
    *,
    trace_db: str | os.PathLike[str] | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
) -> WebServer:
    """Serve the inspector for ``runner``'s agent: Tools, Sessions, Jobs when the agent
    has durable tools, and Runs when ``trace_db`` names a span database. The server runs
    until ``close()`` (or the end of a ``with`` / ``async with`` block); the runner stays
    the caller's to close."""
    return serve_apps([InspectedApp(runner)], trace_db=trace_db, host=host, port=port)


def serve_apps(
    apps: Sequence[InspectedApp],
    *,
    trace_db: str | os.PathLike[str] | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    title: str | None = None,
    close_runners: bool = False,
) -> WebServer:
    """Serve the inspector for several apps (the page offers a choice among them)."""
    if not apps:
        raise ValueError("no apps to serve")
    names = [app.name for app in apps]
    if len(set(names)) != len(names):
        raise ValueError(f"app names must be unique, got {names}")
    server = WebServer(host=host, port=port)
    try:
        catalogues: dict[str, ToolCatalogue] = {}
        sessions: dict[str, SessionsApi] = {}
        for app in apps:
            target = app.target if app.target is not None else app.runner.agent
            label = app.label or f"agent {app.runner.agent.name}"
            found, _ = server.run(discover_tools(target, label))
            # Toolsets belong to the runner, which closes them.
            catalogues[app.name] = ToolCatalogue(found)
            sessions[app.name] = SessionsApi(app.runner, app.run_config or RunConfig())
        add_tool_routes(server, catalogues)
        add_session_routes(server, sessions)
        pages = ["tools", "sessions"]
        with_jobs = [app for app in apps if app.shows_jobs]
        if with_jobs:
            from ._jobs import JobsApi, add_job_routes

            add_job_routes(server, {app.name: JobsApi(app.runner) for app in with_jobs})
            pages.append("jobs")
        if trace_db is not None:
            from ._runs import add_run_routes

            add_run_routes(server, os.fspath(trace_db))
            pages.append("runs")
        server.info.update(
            title=title or apps[0].name,
            pages=pages,
            apps=[{**app.describe(), "jobs": app.shows_jobs} for app in apps],
        )
        if close_runners:

            def close_all() -> None:
                for app in apps:
                    server.run(app.runner.aclose(), timeout=30)

            server.add_close_hook(close_all)
    except BaseException:
        server.close()
        raise
    return server
