"""``agent-core run`` answers credential requests from ``tooling.auth``: an API key typed
on stdin, and an authorization: the URL shown, the address the user was sent back to
pasted (against a real Authlib server on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx2

from examples._authorization_server import REDIRECT_URI, oauth_server

ROOT = Path(__file__).resolve().parent.parent

AGENT = """
from pydantic import SecretStr

from agent_core import Agent
from tooling import ToolContext, tool
from tooling.auth import ApiKeyScheme, AuthConfig


@tool(auth=AuthConfig(ApiKeyScheme("X-Key")))
def lookup(tool_context: ToolContext) -> str:
    '''Look the user up with their API key.'''
    return "key ends in " + tool_context.credential.value.get_secret_value()[-3:]


root_agent = Agent("helper", "gemini-2.0-flash", tools=[lookup])
"""


def agent_core(*args: str, cwd: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return subprocess.run(
        [sys.executable, "-m", "agent_core.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def replay(folder: Path, tool_name: str) -> None:
    turns = [
        {"role": "model", "parts": [{"functionCall": {"name": tool_name, "args": {}}}]},
        "Done.",
    ]
    (folder / "replay.json").write_text(json.dumps({"prompts": ["go"], "turns": turns}))


def test_run_asks_for_a_missing_api_key_and_the_call_runs(tmp_path: Path) -> None:
    folder = tmp_path / "keyed"
    folder.mkdir()
    (folder / "agent.py").write_text(textwrap.dedent(AGENT))
    replay(folder, "lookup")

    result = agent_core("run", str(folder), cwd=tmp_path, stdin="go\nsecret-key-xyz\n")

    assert result.returncode == 0, result.stderr
    assert "user> [supplies a credential]" in result.stdout
    assert '"key ends in xyz"' in result.stdout
    assert "secret-key-xyz" not in result.stdout + result.stderr


def test_run_shows_the_authorization_url_and_takes_the_redirect(tmp_path: Path) -> None:
    with oauth_server() as server:
        server.add_client("cli-app", "cli-secret", "authorization_code", "refresh_token")
        folder = tmp_path / "oauth_app"
        folder.mkdir()
        (folder / "agent.py").write_text(
            textwrap.dedent(f"""
            import httpx2
            from agent_core import Agent
            from tooling import ToolContext, tool
            from tooling.auth import AuthConfig, AuthorizationCodeFlow, OAuth2Client, OAuth2Scheme

            flow = AuthorizationCodeFlow(
                "{server.authorization_url}", "{server.token_url}", ["read"]
            )
            client = OAuth2Client("cli-app", "cli-secret", redirect_uri="{REDIRECT_URI}")


            @tool(auth=AuthConfig(OAuth2Scheme(flow), client))
            def whoami(tool_context: ToolContext) -> dict:
                '''Who the token belongs to.'''
                answer = httpx2.get(
                    "{server.url}/api/me",
                    headers={{"Authorization": tool_context.credential.authorization}},
                )
                return answer.json()


            root_agent = Agent("helper", "gemini-2.0-flash", tools=[whoami])
            """)
        )
        replay(folder, "whoami")
        session = tmp_path / "sessions.db"
        base = ["run", str(folder), "--session-db", str(session), "--session", "s1"]
        started = agent_core(*base, cwd=tmp_path, stdin="go\n")
        (note,) = [line for line in started.stderr.splitlines() if "/authorize?" in line]
        auth_uri = note.split("open ", 1)[1].split(" ", 1)[0]
        redirect = httpx2.get(auth_uri + "&login=ana").headers["location"]
        resumed = agent_core(*base, cwd=tmp_path, stdin=f"{redirect}\n")

    assert started.returncode == 0, started.stderr
    assert resumed.returncode == 0, resumed.stderr
    assert '"user": "ana"' in resumed.stdout, resumed.stdout + resumed.stderr
    assert "code=" not in resumed.stdout  # the pasted address is not echoed
