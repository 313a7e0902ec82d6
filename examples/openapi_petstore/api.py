"""The pet store's API, served locally: the standard library's HTTP server on 127.0.0.1.

``serve()`` starts it once per process on a free port (a daemon thread) and gives its
base URL; ``reset()`` puts the store back as it was. ``python -m
examples.openapi_petstore.api [PORT]`` serves it in the foreground, for ``tooling serve
examples/openapi_petstore/petstore.yaml --base-url http://127.0.0.1:PORT/v1``.
"""

from __future__ import annotations

import json
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

#: The key the store's protected operations want in ``X-API-Key``.
API_KEY = "demo-key"

_START = [
    {"id": 1, "name": "Rex", "tag": "dog", "status": "available"},
    {"id": 2, "name": "Tom", "tag": "cat", "status": "available"},
    {"id": 3, "name": "Nemo", "tag": "fish", "status": "sold"},
]
_pets: dict[int, dict[str, Any]] = {}
_lock = threading.Lock()
_server: ThreadingHTTPServer | None = None


def reset() -> None:
    """Put the store back as it started."""
    with _lock:
        _pets.clear()
        _pets.update({p["id"]: dict(p) for p in _START})


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _answer(self, status: int, body: Any = None) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._answer(status, {"code": status, "message": message})

    def _route(self) -> tuple[list[str], dict[str, list[str]]] | None:
        url = urlsplit(self.path)
        if not url.path.startswith("/v1/"):
            self._error(404, f"no such path: {url.path}")
            return None
        return [unquote(s) for s in url.path[4:].split("/")], parse_qs(url.query)

    def _pet_id(self, text: str) -> int | None:
        try:
            return int(text)
        except ValueError:
            self._error(400, f"petId must be an integer, not {text!r}")
            return None

    def do_GET(self) -> None:
        route = self._route()
        if route is None:
            return
        parts, query = route
        with _lock:
            pets = sorted(_pets.values(), key=lambda p: p["id"])
        if parts == ["pets"]:
            status = query.get("status", [None])[0]
            tags = query.get("tags", [])
            found = [p for p in pets if status is None or p["status"] == status]
            found = [p for p in found if not tags or p.get("tag") in tags]
            self._answer(200, found[: int(query.get("limit", ["20"])[0])])
        elif len(parts) == 2 and parts[0] == "pets":
            pet_id = self._pet_id(parts[1])
            if pet_id is None:
                return
            pet = next((p for p in pets if p["id"] == pet_id), None)
            if pet is None:
                self._error(404, f"no pet with id {pet_id}")
            else:
                self._answer(200, pet)
        elif parts == ["store", "inventory"]:
            if self.headers.get("X-API-Key") != API_KEY:
                self._error(401, "a valid X-API-Key is required")
                return
            counts: dict[str, int] = {}
            for pet in pets:
                counts[pet["status"]] = counts.get(pet["status"], 0) + 1
            self._answer(200, counts)
        else:
            self._error(404, "no such path")

    def do_POST(self) -> None:
        route = self._route()
        if route is None:
            return
        if route[0] != ["pets"]:
            self._error(404, "no such path")
            return
        size = int(self.headers.get("Content-Length", "0"))
        try:
            body = json.loads(self.rfile.read(size) or b"null")
        except ValueError:
            self._error(400, "the body is not JSON")
            return
        if not isinstance(body, dict) or not isinstance(body.get("name"), str):
            self._error(400, "a pet needs a name")
            return
        with _lock:
            pet = {
                "id": max(_pets, default=0) + 1,
                "name": body["name"],
                "status": body.get("status", "available"),
            }
            if "tag" in body:
                pet["tag"] = body["tag"]
            _pets[pet["id"]] = pet
        self._answer(HTTPStatus.CREATED, pet)

    def do_DELETE(self) -> None:
        route = self._route()
        if route is None:
            return
        parts, _ = route
        if len(parts) != 2 or parts[0] != "pets":
            self._error(404, "no such path")
            return
        if self.headers.get("X-API-Key") != API_KEY:
            self._error(401, "a valid X-API-Key is required")
            return
        pet_id = self._pet_id(parts[1])
        if pet_id is None:
            return
        with _lock:
            if _pets.pop(pet_id, None) is None:
                self._error(404, f"no pet with id {pet_id}")
                return
        self._answer(204)


def serve() -> str:
    """Start the API once per process (127.0.0.1, a free port); its base URL."""
    global _server
    with _lock:
        if _server is None:
            _server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
            _server.daemon_threads = True
            threading.Thread(target=_server.serve_forever, daemon=True).start()
            if not _pets:
                _pets.update({p["id"]: dict(p) for p in _START})
        return f"http://127.0.0.1:{_server.server_address[1]}/v1"


if __name__ == "__main__":
    reset()
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8080
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    print(f"serving the pet store at http://127.0.0.1:{port}/v1", file=sys.stderr)
    server.serve_forever()
