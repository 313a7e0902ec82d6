"""A ``.py`` target (or an agent folder) is shown by the file's own name, in the CLI's text,
the inspector's title and under every tool, never by the module name made up to import it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from agent_core import Agent, Runner, ScriptedModel
from tooling.integration import discover_tools, load_agent_dir, load_target

ROOT = Path(__file__).resolve().parent.parent

TOOLS = textwrap.dedent(
    '''
    from tooling import tool


    @tool
    def ping(x: int) -> int:
        """Answer with x."""
        return x
    '''
)


def write(folder: Path, name: str, text: str = TOOLS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_a_py_target_is_labelled_by_its_file_name(tmp_path: Path) -> None:
    path = write(tmp_path / "shop", "inventory_tools.py")
    label, module = load_target(str(path))
    assert label == "inventory_tools.py"
    label, tool = load_target(f"{path}:ping")
    assert label == "inventory_tools.py:ping" and getattr(tool, "name", None) == "ping"
    label, module = load_target(str(path))
    found, _ = asyncio.run(discover_tools(module, label))
    assert [(f.name, f.origin) for f in found] == [("ping", "inventory_tools.py")]


def test_tooling_inspect_shows_the_file_name(tmp_path: Path) -> None:
    path = write(tmp_path / "shop", "inventory_tools.py")
    done = subprocess.run(
        [sys.executable, "-m", "tooling.cli", "inspect", "--json", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "_tooling_loaded" not in done.stdout
    [entry] = json.loads(done.stdout)
    assert entry["origin"] == "inventory_tools.py"


def test_an_agent_folders_tools_are_shown_under_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "helpdesk"
    write(
        folder,
        "agent.py",
        TOOLS
        + textwrap.dedent(
            """
            from agent_core import Agent, ScriptedModel

            root_agent = Agent("desk", ScriptedModel(["hi"]), tools=[ping])
            """
        ),
    )
    module = load_agent_dir(folder)
    runner = Runner(Agent("desk", ScriptedModel(["hi"])), app_name="helpdesk")
    from agent_core.sessions.memory import InMemorySessionService
    from agent_core.web._cli import _app

    app = _app(folder, InMemorySessionService(), None, None)
    assert app.label == "helpdesk/agent.py"
    assert module.__name__ != app.label
    runner.close()
    app.runner.close()
