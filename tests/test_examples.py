"""The examples' layout and their runner: every folder is complete, loads by path, and
``python -m examples.<name>`` replays it offline."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core import Agent, ScriptedModel
from agent_core.models.scripted import load_replay
from examples._replay import load_agent_module, play
from examples._snapshots import unused_turns

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
NAMES = [
    "function_tools",
    "stock_price",
    "weather_sentiment",
    "long_running_file",
    "summary_agent_tool",
    "customer_support",
    "document_analysis",
    "math_toolset",
    "streaming_build",
    "approvals",
    "chart",
    "mcp_client",
    "web_search",
    "retrieval",
    "openapi_petstore",
    "durable_report",
]
#: Examples that need other frameworks: checked in their own environment, by
#: tests/adapters (which the main run does not collect).
OTHER_ENVIRONMENT = ["third_party_tools"]


def example_dirs() -> list[Path]:
    return sorted(
        p
        for p in EXAMPLES.iterdir()
        if (p / "agent.py").is_file() and p.name not in OTHER_ENVIRONMENT
    )


def test_every_scenario_has_its_example() -> None:
    assert sorted(p.name for p in example_dirs()) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_an_example_folder_is_complete(name: str) -> None:
    folder = EXAMPLES / name
    for part in ("__init__.py", "__main__.py", "agent.py", "replay.json", "tests/snapshot.json"):
        assert (folder / part).is_file(), f"{name} lacks {part}"
    assert (folder / "tests" / f"test_{name}.py").is_file()
    assert not (folder / "tests" / "__init__.py").exists()  # collected by unique basename

    module = load_agent_module(folder)
    root = module.root_agent
    assert isinstance(root, Agent)
    assert isinstance(root.model_as_given, str) and root.model_as_given.startswith(
        "gemini-"
    )  # built lazily
    assert root.description and root.instruction

    model, prompts = load_replay(folder / "replay.json")
    assert isinstance(model, ScriptedModel) and prompts
    assert all(isinstance(p, str | dict) for p in prompts)


def test_example_test_files_have_unique_basenames() -> None:
    names = [p.name for p in EXAMPLES.glob("*/tests/test_*.py")]
    names += [p.name for p in (ROOT / "tests").glob("test_*.py")]
    assert len(names) == len(set(names))


def test_loading_an_example_twice_gives_fresh_module_state() -> None:
    first = load_agent_module(EXAMPLES / "approvals")
    first.RECORDS.clear()
    second = load_agent_module(EXAMPLES / "approvals")
    assert list(second.RECORDS) == ["r1", "r2", "r3"] and first is not second


def test_importing_the_examples_does_not_import_google_genai() -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from examples._replay import load_agent_module\n"
        "for folder in sorted(Path('examples').iterdir()):\n"
        f"    if (folder / 'agent.py').is_file() and folder.name not in {OTHER_ENVIRONMENT!r}:\n"
        "        load_agent_module(folder)\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('google.genai'))\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def offline_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY")}
    env.pop("PYTEST_CURRENT_TEST", None)
    return env


def test_python_dash_m_replays_offline_without_a_key() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "examples.function_tools"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=offline_env(),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "== function_tools (offline, replaying replay.json) =="
    assert "user> random number and is 5 even" in lines
    # REPLAY_ENV turns the counter on, so the tools agree with the script.
    assert '  <- generate_random_number: {"result": 3}' in lines
    assert '  -> is_even({"number": 5})' in lines
    assert lines[-1] == "function_tools> The random number is 3. And 5 is not even: it is odd."


def test_the_printed_conversation_shows_pauses_and_progress() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "examples.approvals", "--offline"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=offline_env(),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert '  ?? delete_record({"record_id": "r2"}) waits for your confirmation' in out
    assert "user> [confirms]" in out and "user> [refuses]" in out
    assert '"code": "tool.rejected"' in out


def copy_example(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(EXAMPLES / name, target, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    return target


def test_a_replay_with_turns_left_over_is_reported(tmp_path: Path) -> None:
    folder = copy_example(tmp_path, "function_tools")
    data = json.loads((folder / "replay.json").read_text(encoding="utf-8"))
    data["turns"].append("a turn no prompt reaches")
    (folder / "replay.json").write_text(json.dumps(data), encoding="utf-8")
    replay = asyncio.run(play(folder))
    assert unused_turns(replay) == {"all agents": 1}


def test_a_confirmation_with_nothing_pending_is_an_error_offline(tmp_path: Path) -> None:
    folder = copy_example(tmp_path, "function_tools")
    data = json.loads((folder / "replay.json").read_text(encoding="utf-8"))
    data["prompts"].insert(0, {"confirm": True})
    (folder / "replay.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="nothing to confirm"):
        asyncio.run(play(folder))


def test_a_prepare_hook_runs_before_the_first_prompt(tmp_path: Path) -> None:
    folder = copy_example(tmp_path, "function_tools")
    with (folder / "agent.py").open("a", encoding="utf-8") as f:
        f.write(
            "\n\nasync def prepare(runner, session):\n"
            "    from agent_core import Event, EventActions\n"
            "    seed = Event(author='user', actions=EventActions(state_delta={'seeded': 1}))\n"
            "    await runner.session_service.append_event(session, seed)\n"
        )
    replay = asyncio.run(play(folder))
    assert replay.session.state["seeded"] == 1


def test_the_docs_index_names_every_example_agent() -> None:
    index = (ROOT / "docs" / "index.md").read_text()
    section = index.split("## Examples", 1)[1].split("\n## ", 1)[0]
    agents = sorted(p.name for p in EXAMPLES.iterdir() if (p / "agent.py").is_file())
    missing = [name for name in agents if f"`{name}`" not in section]
    assert missing == []
    # No count to go stale as examples are added.
    words = ("eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen")
    assert not any(word in section for word in words)
