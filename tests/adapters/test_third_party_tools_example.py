"""The third_party_tools example: a LangChain tool and a CrewAI tool beside our own in one
agent, replayed offline (its folder's layout, as tests/test_examples.py checks the others')."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agent_core import Agent, ScriptedModel
from agent_core.models.scripted import load_replay
from examples._replay import load_agent_module
from examples._snapshots import check_snapshot
from tooling.adapters import CrewaiTool, LangchainTool

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "third_party_tools"


def test_the_folder_is_complete() -> None:
    for part in ("__init__.py", "__main__.py", "agent.py", "replay.json", "tests/snapshot.json"):
        assert (EXAMPLE / part).is_file(), part
    root = load_agent_module(EXAMPLE).root_agent
    assert isinstance(root, Agent) and root.description and root.instruction
    given = root.model_as_given  # built lazily: still the name
    assert isinstance(given, str) and given.startswith("gemini-")
    model, prompts = load_replay(EXAMPLE / "replay.json")
    assert isinstance(model, ScriptedModel) and prompts


def test_replay_matches_snapshot_and_keeps_the_artifact_apart() -> None:
    replay = check_snapshot(EXAMPLE)
    tools = replay.module.root_agent.tools
    assert [type(t) for t in tools[:2]] == [LangchainTool, CrewaiTool]
    [exchange] = replay.exchanges
    answers = {r.name: r for e in exchange.events for r in e.get_function_responses()}
    assert answers["convert_currency"].response == {"result": "200 USD is 184.00 EUR."}
    assert answers["convert_currency"].artifact["rate"] == 0.92
    assert answers["weather_forecast"].response["result"].startswith("Highs in Lisbon")
    assert answers["packing_list"].response["items"][-1] == "sunscreen"
    # The artifact never reached the model.
    requests = replay.module.root_agent.model.requests
    assert all("rates" not in str(c.to_dict()) for r in requests for c in r.contents)


def test_python_dash_m_replays_offline() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "examples.third_party_tools", "--offline"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert '  <- convert_currency: {"result": "200 USD is 184.00 EUR."}' in result.stdout
