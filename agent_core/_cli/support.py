"""What the ``agent-core`` commands (``run``, ``web``) share: keys, the root agent,
replays, and the stores ``--session-db`` names."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from tooling.integration import CliError

from .._agent import Agent
from .._service_urls import (
    artifact_service_from_url,
    credential_service_from_url,
    session_service_from_url,
)
from ..models._names import KEY_VARIABLES, provider_of
from ..models.scripted import ReplayPrompt, ScriptedModel, load_replay
from ..services.artifacts import SqliteArtifactService
from ..services.base import BaseArtifactService
from ..sessions.base import BaseSessionService
from ..sessions.memory import InMemorySessionService
from ..sessions.sqlite import SqliteSessionService

if TYPE_CHECKING:
    from tooling.auth import CredentialService

    from ..jobs.base import JobStore

__all__: list[str] = []


def key_variables(model: str | None) -> tuple[str, ...]:
    """The environment variables holding the key for ``--model`` (Gemini's without one)."""
    try:
        provider = provider_of(model)[0] if model else "google"
    except ValueError as exc:
        raise CliError(f"--model: {exc}") from None
    return KEY_VARIABLES[provider]


def has_api_key(model: str | None = None) -> bool:
    """Whether the environment holds a key for ``model``'s provider."""
    return any(os.environ.get(variable) for variable in key_variables(model))


def agent_key_variables(root: Agent) -> tuple[str, ...]:
    """The key variables of the root agent's own model (Gemini's when it names no provider)."""
    model = root.model_as_given
    if isinstance(model, str):
        try:
            return KEY_VARIABLES[provider_of(model)[0]]
        except ValueError:
            pass
    provider = getattr(model, "provider", "")
    return KEY_VARIABLES.get(provider, KEY_VARIABLES["google"])


def root_agent(module: ModuleType, folder: Path) -> Agent:
    """The ``root_agent`` an agent folder's module defines, or a ``CliError`` saying why not."""
    root = getattr(module, "root_agent", None)
    if root is None:
        raise CliError(f"{folder / 'agent.py'} defines no root_agent")
    if not isinstance(root, Agent):
        kind = type(root).__name__
        raise CliError(f"root_agent in {folder / 'agent.py'} is a {kind}, not an agent_core.Agent")
    return root


def read_replay(path: Path) -> tuple[ScriptedModel, list[ReplayPrompt]]:
    """A replay file's model and prompts, or a ``CliError`` saying what is wrong with it."""
    try:
        return load_replay(path)
    except OSError as exc:
        raise CliError(f"cannot read replay file {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:  # json.JSONDecodeError included
        text = str(exc)
        raise CliError(
            text if str(path) in text else f"invalid replay file {path}: {text}"
        ) from exc


def session_service(where: str | None) -> BaseSessionService:
    """The session service ``--session-db`` names: a URL, or a plain SQLite file path."""
    if where is None:
        return InMemorySessionService()
    try:
        if "://" in where:
            return session_service_from_url(where)
        return SqliteSessionService(where)
    except (sqlite3.Error, OSError, ValueError, ImportError) as exc:
        raise CliError(f"cannot open session database {where}: {exc}") from exc


def open_job_store(url: str) -> JobStore:
    """The job store ``--job-db`` names: a URL, or a plain SQLite file path."""
    from .._service_urls import job_store_from_url

    try:
        if "://" not in url:
            from ..jobs.sqlite import SqliteJobStore

            return SqliteJobStore(url)
        return job_store_from_url(url)
    except (sqlite3.Error, OSError, ValueError, ImportError) as exc:
        raise CliError(f"cannot open job database {url}: {exc}") from exc


def artifact_service(where: str | None) -> BaseArtifactService | None:
    """Artifacts kept with the sessions (None: the runner's default, in memory)."""
    if where is None:
        return None
    if "://" in where:
        return artifact_service_from_url(where)
    return SqliteArtifactService(where)


def credential_service(where: str | None) -> CredentialService | None:
    """Tools' credentials kept in the database ``where`` names (None: the runner's default,
    in memory); encrypted when ``AGENT_CORE_CREDENTIAL_KEY`` is set."""
    if where is None:
        return None
    try:
        if "://" in where:
            return credential_service_from_url(where)
        from ..services.credentials import SqliteCredentialService

        return SqliteCredentialService(where)
    except (sqlite3.Error, OSError, ValueError, ImportError) as exc:
        raise CliError(f"cannot open credential database {where}: {exc}") from exc


def use_replay(root: Agent, module: ModuleType, replay: Path) -> list[ReplayPrompt]:
    """Make a ``ScriptedModel`` playing ``replay`` the model of every agent ``root``
    reaches, put the folder's ``REPLAY_ENV`` in the environment; the replay's prompts."""
    scripted, prompts = read_replay(replay)
    for agent in root.reachable():
        agent.model = scripted
    env = getattr(module, "REPLAY_ENV", None) or {}
    os.environ.update({str(k): str(v) for k, v in dict(env).items()})
    return prompts
