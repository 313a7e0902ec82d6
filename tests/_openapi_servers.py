"""Real HTTP servers for the OpenAPI tests: any ASGI app under uvicorn on 127.0.0.1 (a
free port), and a FastAPI app whose generated OpenAPI 3.1 spec the tests read."""

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

from fastapi import Body, FastAPI, Header, HTTPException, Query, Request, Security
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, Field


@contextmanager
def serve_asgi(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a thread; yields its base URL; stops it after."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


# -- a FastAPI app: its spec is FastAPI's own ------------------------------------------------


API_KEY = APIKeyHeader(name="X-API-Key")


class Item(BaseModel):
    name: str
    price: float = Field(gt=0)
    kind: Literal["tool", "toy"] = "tool"
    tags: list[str] = []
    note: str | None = None


class Circle(BaseModel):
    kind: Literal["circle"]
    radius: float


class Square(BaseModel):
    kind: Literal["square"]
    side: float


class Tree(BaseModel):
    label: str
    children: list["Tree"] = []


def inventory_app() -> tuple[FastAPI, dict[str, Any]]:
    """The app, and what it saw (``raw_paths``: every request's raw path; ``admin``: how
    often the admin route was reached)."""
    app = FastAPI(title="Inventory", version="1.0")
    seen: dict[str, Any] = {"raw_paths": [], "admin": 0, "headers": []}
    items: dict[str, Item] = {"hammer": Item(name="hammer", price=12.5, tags=["steel"])}

    @app.middleware("http")
    async def record(request: Request, call_next: Any) -> Any:
        seen["raw_paths"].append(request.scope["raw_path"].decode("latin-1"))
        seen["headers"].append(dict(request.headers))
        return await call_next(request)

    @app.get("/items", operation_id="listItems", summary="List the items")
    def list_items(
        limit: int = 10,
        kind: Literal["tool", "toy"] | None = None,
        tags: Annotated[list[str], Query()] = [],
    ) -> list[Item]:
        found = [i for i in items.values() if kind is None or i.kind == kind]
        found = [i for i in found if all(t in i.tags for t in tags)]
        return found[:limit]

    @app.get("/items/{item_id}")
    def read_item(item_id: str) -> dict[str, str]:
        """Read one item by its id."""
        if item_id not in items:
            raise HTTPException(404, f"no item {item_id!r}")
        return {"item_id": item_id, "name": items[item_id].name}

    @app.post("/items", status_code=201)
    def create_item(item: Item) -> Item:
        items[item.name] = item
        return item

    @app.put("/items/{item_id}")
    def replace_item(item_id: str, item: Item) -> Item:
        items[item_id] = item
        return item

    @app.delete("/items/{item_id}", status_code=204)
    def delete_item(item_id: str) -> Response:
        items.pop(item_id, None)
        return Response(status_code=204)

    @app.post("/shapes/area")
    def area(shape: Annotated[Circle | Square, Body(discriminator="kind")]) -> dict[str, float]:
        if isinstance(shape, Circle):
            return {"area": round(3.14159 * shape.radius**2, 3)}
        return {"area": shape.side**2}

    @app.post("/trees/count")
    def count(tree: Tree) -> int:
        return 1 + sum(count(c) for c in tree.children)

    @app.get("/echo/{value}")
    def echo(value: str, x_request_id: Annotated[str | None, Header()] = None) -> dict[str, Any]:
        return {"value": value, "x_request_id": x_request_id}

    @app.get("/admin")
    def admin() -> dict[str, str]:
        seen["admin"] += 1
        return {"secret": "admin area"}

    @app.get("/secure")
    def secure(key: Annotated[str, Security(API_KEY)]) -> dict[str, str]:
        return {"key_ends": key[-2:]}

    @app.get("/slow")
    async def slow() -> dict[str, str]:
        await asyncio.sleep(30)
        return {"late": "yes"}

    @app.get("/html", response_model=dict[str, str])
    def html() -> HTMLResponse:
        return HTMLResponse("<html><body>Sign in</body></html>")

    @app.get("/text", response_class=PlainTextResponse)
    def text() -> str:
        return "plain words"

    @app.get("/huge-error")
    def huge_error() -> Response:
        return PlainTextResponse("x" * (10 * 1024 * 1024), status_code=500)

    @app.get("/redirect-away")
    def redirect_away() -> RedirectResponse:
        return RedirectResponse("http://127.0.0.2:9/stolen")

    @app.get("/redirect-home")
    def redirect_home() -> RedirectResponse:
        return RedirectResponse("/items/hammer")

    return app, seen
