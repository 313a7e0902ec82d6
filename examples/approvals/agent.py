"""A destructive tool behind the user's confirmation: the run pauses, then resumes.

``delete_record`` is declared with ``require_confirmation=True``. When the model calls
it, the tool does not run: the run ends with a ``request_confirmation`` function call
addressed to the user (naming the held call, its arguments and a fingerprint of them).
The user answers with a ``request_confirmation`` function response carrying
``{"confirmed": true}`` or ``false`` (in ``replay.json``: the prompt ``{"confirm": true}``).
Confirmed, the held call runs and the model continues from its result; refused, the
model is told the user declined (``tool.rejected``) and nothing is deleted.

The records live in memory, in this module: every run starts with the same three.
"""

from __future__ import annotations

from typing import Any

from agent_core import Agent
from tooling import tool

RECORDS: dict[str, dict[str, str]] = {
    "r1": {"customer": "Acme Corp", "plan": "enterprise"},
    "r2": {"customer": "Globex", "plan": "starter"},
    "r3": {"customer": "Initech", "plan": "team"},
}


@tool(read_only=True, concurrency_safe=True)
def list_records() -> dict[str, Any]:
    """List the customer records: their ids, customers and plans."""
    return {"records": [{"id": key, **value} for key, value in RECORDS.items()]}


@tool(destructive=True, require_confirmation=True)
def delete_record(record_id: str) -> dict[str, Any]:
    """Delete a customer record for good. The user is asked to confirm first.

    Args:
        record_id: The record's id, such as "r2".

    Returns:
        {"status": "deleted", "record"} with what was deleted, or {"status": "error",
        "error_message"} when there is no such record.
    """
    record = RECORDS.pop(record_id, None)
    if record is None:
        return {"status": "error", "error_message": f"There is no record {record_id!r}."}
    return {"status": "deleted", "record": {"id": record_id, **record}}


root_agent = Agent(
    name="records_admin",
    model="gemini-2.5-flash",
    description="Manages customer records.",
    instruction=(
        "You manage customer records. Use list_records to look records up, and "
        "delete_record to delete one by its id (look the id up first if the user names "
        "the customer). Deleting needs the user's confirmation, which the system asks "
        "for: if the user declines, confirm that nothing was deleted."
    ),
    tools=[list_records, delete_record],
)
