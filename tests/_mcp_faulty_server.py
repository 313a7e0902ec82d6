"""A stdio MCP server that misbehaves on purpose (plain JSON lines, no SDK).

``python tests/_mcp_faulty_server.py MODE``: it answers the handshake and ``tools/list``
(one tool, ``poke``); a ``tools/call`` then, by MODE:

* ``garble``: writes a line that is not UTF-8, then the answer;
* ``close``: closes its stdout and lives on;
* ``silent``: (any request) is never answered, not even ``initialize``;
* ``nolist``: ``tools/list`` is never answered.

Each process appends its pid to the file named by ``FAULTY_PIDS`` (when set).
"""

from __future__ import annotations

import json
import os
import sys
import time

MODE = sys.argv[1]
TOOL = {"name": "poke", "description": "Pokes.", "inputSchema": {"type": "object"}}


def send(message: dict[str, object]) -> None:
    os.write(1, (json.dumps(message) + "\n").encode())


def main() -> None:
    if os.environ.get("FAULTY_PIDS"):
        with open(os.environ["FAULTY_PIDS"], "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request or MODE == "silent":
            continue
        if request["method"] == "tools/list" and MODE == "nolist":
            continue
        ident, method = request["id"], request["method"]
        if method == "initialize":
            version = request["params"]["protocolVersion"]
            result: object = {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "faulty", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [TOOL]}
        elif method == "tools/call" and MODE == "garble":
            os.write(1, b"\xff\xfe not UTF-8\n")
            result = {"content": [{"type": "text", "text": "poked"}]}
        elif method == "tools/call" and MODE == "close":
            os.close(1)
            time.sleep(3600)
            return
        else:
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no"}})
            continue
        send({"jsonrpc": "2.0", "id": ident, "result": result})


if __name__ == "__main__":
    main()
