"""``tooling.adapters`` imports no framework until an adapter is built, and an adapter
whose framework is missing says which extra installs it. (The adapters themselves are
tested against the real frameworks in ``tests/adapters``, in an environment of their own.)"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tooling._base import TOOL_NAME_PATTERN
from tooling.adapters._base import tool_name

ROOT = Path(__file__).resolve().parent.parent

FRAMEWORKS = ("langchain_core", "crewai", "agents", "pydantic_ai", "google.adk")


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_importing_the_adapters_imports_no_framework() -> None:
    result = run(
        f"""
        import sys
        import tooling, tooling.adapters
        from tooling.adapters import (
            CrewaiTool, LangchainTool, LangchainToolset,
            to_adk, to_langchain, to_openai_agents, to_pydantic_ai,
        )
        loaded = [m for m in sys.modules if m.split(".")[0] in {FRAMEWORKS!r}
                  or m.startswith("google.adk")]
        assert not loaded, loaded
        """
    )
    assert result.returncode == 0, result.stderr


def test_a_missing_framework_names_its_extra() -> None:
    result = run(
        """
        import sys
        for name in ("langchain_core", "crewai", "agents", "pydantic_ai", "google.adk"):
            sys.modules[name] = None  # as if not installed: importing it raises ImportError
        from tooling import tool
        from tooling import adapters

        @tool
        def ping() -> str:
            '''Ping.'''
            return "pong"

        attempts = {
            "langchain": lambda: adapters.LangchainTool(object()),
            "crewai": lambda: adapters.CrewaiTool(object()),
            "openai-agents": lambda: adapters.to_openai_agents(ping),
            "pydantic-ai": lambda: adapters.to_pydantic_ai(ping),
            "adk": lambda: adapters.to_adk(ping),
        }
        for extra, attempt in attempts.items():
            try:
                attempt()
            except ImportError as exc:
                assert f"agent-tooling[{extra}]" in str(exc), exc
            else:
                raise AssertionError(f"{extra}: no ImportError")
        print("ok")
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


# -- what the adapters share needs no framework ----------------------------------------------


@given(st.text(max_size=120))
def test_any_framework_tool_name_becomes_a_valid_name(name: str) -> None:
    made = tool_name(name)
    assert TOOL_NAME_PATTERN.fullmatch(made), (name, made)


@given(st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,63}", fullmatch=True))
def test_a_valid_name_is_kept(name: str) -> None:
    assert tool_name(name) == name
