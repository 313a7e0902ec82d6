"""What ``tooling.openapi`` costs: building a toolset from a large spec, and one GET.

    .venv/bin/python benchmarks/bench_openapi.py           # about a minute
    .venv/bin/python benchmarks/bench_openapi.py --quick   # ~20 s, rougher numbers

Sections: 1 building an ``OpenAPIToolset`` from a generated 200-operation OpenAPI 3.0
spec (path, query and header parameters, enums, nullable fields, ``$ref``'d object
bodies, a recursive model), then exporting every tool to every provider (Gemini both
forms, OpenAI plain and strict, Anthropic, MCP); 2 a GET through ``RestApiTool.run``
(arguments checked, request built, answer read and mapped) vs the same request with a
bare ``httpx2.AsyncClient``, both against one local server (uvicorn in a subprocess on
127.0.0.1, keep-alive connections), target ≤ 1.2×.

Cases are interleaved round by round and each number is a median over rounds. A script,
not a test.
"""

from __future__ import annotations

import argparse
import json
import platform
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from _timing import Case, dist_version, fmt_ns, fmt_ratio, load_avg, loop, measure, table, verdict

from tooling.openapi import OpenAPIToolset

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OPERATIONS = 200
GET_TARGET = 1.2

# A bare ASGI app: the same small JSON answer for every request (no routing cost).
SERVER = """
import sys, uvicorn
BODY = b'{"id": 7, "name": "Rex", "tags": ["dog", "brown"], "status": "available"}'
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": BODY})
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def generated_spec(operations: int) -> dict[str, Any]:
    """An OpenAPI 3.0 spec with ``operations`` operations, half GETs, half POSTs."""
    schemas: dict[str, Any] = {
        "Node": {
            "type": "object",
            "properties": {
                "label": {"type": "string"},
                "next": {"$ref": "#/components/schemas/Node"},
            },
        }
    }
    paths: dict[str, Any] = {}
    for i in range(operations // 2):
        schemas[f"Thing{i}"] = {
            "type": "object",
            "required": ["name", "kind"],
            "properties": {
                "name": {"type": "string", "maxLength": 80},
                "kind": {"type": "string", "enum": ["a", "b", "c"]},
                "size": {"type": "integer", "format": "int32", "minimum": 0, "nullable": True},
                "tags": {"type": "array", "items": {"type": "string"}},
                "when": {"type": "string", "format": "date-time"},
                "parent": {"$ref": "#/components/schemas/Node"},
            },
        }
        paths[f"/things{i}/{{thingId}}"] = {
            "parameters": [
                {"name": "thingId", "in": "path", "required": True, "schema": {"type": "integer"}}
            ],
            "get": {
                "operationId": f"getThing{i}",
                "summary": f"Read thing {i}",
                "parameters": [
                    {
                        "name": "fields",
                        "in": "query",
                        "schema": {
                            "type": "array",
                            "items": {"type": "string", "enum": ["name", "kind", "size"]},
                        },
                    },
                    {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                ],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {"$ref": f"#/components/schemas/Thing{i}"}
                            }
                        },
                    }
                },
            },
            "post": {
                "operationId": f"updateThing{i}",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": f"#/components/schemas/Thing{i}"}}
                    },
                },
                "responses": {"201": {"description": "created"}},
            },
        }
    return {
        "openapi": "3.0.3",
        "info": {"title": "generated", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:1/api"}],
        "paths": paths,
        "components": {"schemas": schemas},
    }


def export_everything(tools: list[Any]) -> None:
    for tool in tools:
        tool.to_gemini()
        tool.to_gemini(legacy=True)
        tool.to_openai()
        tool.to_openai(strict=True)
        tool.to_anthropic()
        tool.to_mcp()


def section_build(rounds: int) -> str:
    spec = generated_spec(OPERATIONS)
    text = json.dumps(spec)

    def build() -> list[Any]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return loop().run_until_complete(OpenAPIToolset(spec).get_tools())

    def fresh(n: int) -> dict[str, Any]:
        return {"toolsets": [build() for _ in range(n)]}

    def quiet_export(tools: list[Any]) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            export_everything(tools)

    cases = {
        "build from a dict": Case("build()", {"build": build}, n=1),
        "build from JSON text": Case(
            "OpenAPIToolset(text)", {"OpenAPIToolset": OpenAPIToolset, "text": text}, n=1
        ),
        "export every tool, 6 forms": Case(
            "export(toolsets[_i])", {"export": quiet_export}, setup=fresh, n=1
        ),
    }
    results = measure(cases, rounds=rounds, budget_ms=200)
    tools = build()
    rows = [[name, fmt_ns(ns), fmt_ns(ns / len(tools))] for name, ns in results.items()]
    total = results["build from a dict"] + results["export every tool, 6 forms"]
    rows.append(["build + export, total", fmt_ns(total), fmt_ns(total / len(tools))])
    return table(
        f"1. a {OPERATIONS}-operation spec: {len(tools)} tools",
        ["case", "time", "per tool"],
        rows,
        ["exports are cached per tool: each round exports freshly built tools"],
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def section_get(rounds: int) -> str:
    import httpx2

    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], cwd=ROOT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("the benchmark server did not start") from None
                time.sleep(0.05)
        base = f"http://127.0.0.1:{port}/api"
        spec = generated_spec(2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            toolset = OpenAPIToolset(spec, base_url=base)
        tool = next(t for t in loop().run_until_complete(toolset.get_tools()) if t.read_only)
        bare = httpx2.AsyncClient()
        url = f"{base}/things0/7"
        args = {"thingId": 7, "fields": ["name", "kind"]}
        params = [("fields", "name"), ("fields", "kind")]

        async def bare_get() -> Any:
            response = await bare.get(url, params=params)
            return response.json()

        cases = {
            "RestApiTool.run (GET)": Case("await tool.run(args)", {"tool": tool, "args": args}),
            "bare httpx2.AsyncClient.get": Case("await bare_get()", {"bare_get": bare_get}),
        }
        for case in cases.values():  # warm both connection pools
            case.run(20)
        results = measure(cases, rounds=rounds, budget_ms=300)
        loop().run_until_complete(bare.aclose())
        loop().run_until_complete(toolset.close())
    finally:
        server.terminate()
        server.wait(timeout=10)
    ours, baseline = results["RestApiTool.run (GET)"], results["bare httpx2.AsyncClient.get"]
    r = ours / baseline
    rows = [
        [
            "GET, small JSON answer",
            fmt_ns(ours),
            fmt_ns(baseline),
            fmt_ratio(r),
            f"≤ {GET_TARGET}×",
            verdict(r <= GET_TARGET),
        ],
    ]
    return table(
        "2. one GET against a local server (uvicorn subprocess, keep-alive)",
        ["case", "RestApiTool", "bare httpx2", "ratio", "target", "ok?"],
        rows,
        [
            "ours: arguments checked against the schema, URL built and checked, query "
            "serialized, answer read with a bound and mapped to the response dict",
            "baseline: client.get(url, params=...) then response.json()",
        ],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run, rougher numbers")
    options = parser.parse_args()
    rounds = 5 if options.quick else 15
    print(
        f"bench_openapi: Python {platform.python_version()}, httpx2 {dist_version('httpx2')}, "
        f"{load_avg()}\n"
    )
    print(section_build(rounds))
    print(section_get(rounds))


if __name__ == "__main__":
    main()
