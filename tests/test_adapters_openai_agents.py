"""The openai-agents adapter's tests (``tests/adapters/test_openai_agents.py``) once more,
against the openai-agents release the main environment installs (its ``[dev]`` extra):
newer than the one the adapters' environment resolves beside crewai, so both are covered."""

from __future__ import annotations

from tests.adapters import test_openai_agents as _suite

globals().update({name: test for name, test in vars(_suite).items() if name.startswith("test_")})
