"""An agent whose tools are a REST API: the pet store, described by ``petstore.yaml``.

``OpenAPIToolset`` reads the spec (OpenAPI 3.0, YAML) and gives one tool per operation:
``list_pets``, ``create_pet``, ``show_pet_by_id``, ``delete_pet`` and ``get_inventory``,
each with the spec's parameters as its arguments and its flags from the HTTP method (the
two GETs of one turn run side by side; ``delete_pet`` is destructive). The store's
protected operations take the API key given with ``auth=``. ``api.py`` serves the API
locally; ``prepare`` starts it and points the toolset at it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agent_core import Agent
from tooling.auth import ApiKey
from tooling.openapi import OpenAPIToolset

SPEC = Path(__file__).with_name("petstore.yaml")

petstore = OpenAPIToolset(
    SPEC,
    auth={"api_key": ApiKey(value=os.environ.get("PETSTORE_API_KEY", "demo-key"))},
    timeout=10.0,
)

root_agent = Agent(
    name="openapi_petstore",
    model="gemini-2.5-flash",
    description="Answers about the pets in a pet store, and adds pets, through its REST API.",
    instruction=(
        "You help customers of a pet store. Use the store's tools: list_pets to find pets "
        "(by status or tag), show_pet_by_id for one pet, create_pet to add one, "
        "get_inventory for counts by status. When a question needs several lookups, ask "
        "for them together. Say what the tools answered, ids included."
    ),
    tools=[petstore],
)


async def prepare(runner: Any, session: Any) -> None:
    """Start the pet store's API (once per process), fresh, and point the toolset at it."""
    from examples.openapi_petstore import api

    api.reset()
    petstore.base_url = api.serve()
