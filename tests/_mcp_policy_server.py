"""``McpServer`` over stdio with the policy test tools, plus ``grant_admin``, which grants
the ``admin`` scope to the server's calls (the list a session may call changes)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import _policy_tools as tools
from tooling.mcp import McpServer


async def grant_admin() -> str:
    """Grant the admin scope to every call from now on."""
    await server.set_granted_scopes({"admin"})
    return "granted"


server = McpServer(
    [tools.read_file, tools.drop_table, tools.maintenance, grant_admin], name="policies"
)

if __name__ == "__main__":
    server.run()
