"""``new_message`` is a str or a ``Content``: anything else (a dict such as
``{"confirm": True}``) is a ``TypeError`` where the run is asked for, saying what to send,
not an error about ``.parts`` from deep in the loop."""

from __future__ import annotations

from typing import Any

import pytest

from agent_core import Agent, Runner, ScriptedModel
from agent_core.testing import run_script


def runner() -> Runner:
    return Runner(Agent("a", ScriptedModel(["hi"])), app_name="app")


@pytest.mark.parametrize("message", [{"confirm": True}, ["hi"], 3, None])
def test_run_refuses_a_message_that_is_no_str_or_content_at_the_call(message: Any) -> None:
    with runner() as made, pytest.raises(TypeError, match="new_message must be a str or a Content"):
        made.run(user_id="u", session_id="s", new_message=message)


@pytest.mark.parametrize("message", [{"confirm": True}, 3])
async def test_run_async_refuses_it_at_the_call(message: Any) -> None:
    made = runner()
    try:
        with pytest.raises(TypeError, match="request_confirmation"):
            made.run_async(user_id="u", session_id="s", new_message=message)
    finally:
        await made.aclose()


def test_run_script_refuses_it_before_running_anything() -> None:
    model = ScriptedModel(["hi", "again"])
    with pytest.raises(TypeError, match="new_message must be a str or a Content, not dict"):
        run_script(Agent("a", model), ["hello", {"confirm": True}])
    assert model.requests == []
