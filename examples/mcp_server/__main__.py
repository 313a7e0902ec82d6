"""``python -m examples.mcp_server [--http PORT]``: serve the tools over MCP."""

import argparse
import logging
import sys

from examples.mcp_server.server import server

parser = argparse.ArgumentParser(prog="python -m examples.mcp_server", description=__doc__)
parser.add_argument("--http", metavar="PORT", type=int, help="serve HTTP on 127.0.0.1:PORT")
args = parser.parse_args()
logging.basicConfig(stream=sys.stderr, level=logging.WARNING)  # stdout carries the protocol
if args.http is None:
    server.run("stdio")
else:
    print(f"serving at http://127.0.0.1:{args.http}/mcp", file=sys.stderr)
    server.run("streamable-http", host="127.0.0.1", port=args.http)
