"""The inspector's HTTP server: a standard-library server, its safety checks and routing.

One ``ThreadingHTTPServer`` serves the static page and a JSON API under ``/api/``. Every
request must name a loopback ``Host`` (or the host the server was told to bind) and, when
it carries an ``Origin``, the server's own; every API request must carry the per-launch
token (``X-Inspector-Token`` header or ``token`` query parameter). Anything else is a 403.

Handlers run on the request's thread. Async work (tool calls, agent runs, session
services) runs on one event loop the server owns, on its own thread: :meth:`run` waits
for a coroutine, :meth:`stream` turns an async iterator into server-sent events.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import ipaddress
import json
import logging
import queue
import re
import secrets
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, TypeVar

from .._closing import Closing

__all__ = ["EventStream", "HttpError", "Reply", "Request", "WebServer"]

logger = logging.getLogger("tooling")

_T = TypeVar("_T")

TOKEN_HEADER = "X-Inspector-Token"
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/jobs.js": ("jobs.js", "text/javascript; charset=utf-8"),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
    "/favicon.ico": ("", ""),
}
_MAX_BODY = 16 * 1024 * 1024
#: How long a client may take to send a request's head or its whole body, by default.
READ_TIMEOUT_S = 10.0
#: How many connections are served at once (each has a thread), by default.
MAX_CONNECTIONS = 64


class HttpError(Exception):
    """An error answer: ``status`` and a message, sent as ``{"error": message}``."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


@dataclass
class Request:
    """One API request: its method, path, the route's parameters, query and body."""

    method: str
    path: str
    params: dict[str, str]
    query: dict[str, str]
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        """The body as JSON (an empty body is ``{}``); invalid JSON is a 400."""
        if not self.body.strip():
            return {}
        try:
            return json.loads(self.body)
        except ValueError as exc:
            raise HttpError(400, f"the body is not valid JSON: {exc}") from None
        except RecursionError:
            raise HttpError(400, "the body's JSON is nested too deep") from None

    @property
    def wants_json(self) -> bool:
        """Whether the client asks for one JSON answer rather than server-sent events
        (``Accept: application/json`` without ``text/event-stream``)."""
        accept = (self.headers.get("Accept") or "").lower()
        return "application/json" in accept and "text/event-stream" not in accept

    def int_query(self, name: str, default: int, *, low: int = 0, high: int = 10**9) -> int:
        """An integer query parameter, bounded; a non-integer is a 400."""
        text = self.query.get(name)
        if text is None or text == "":
            return default
        try:
            value = int(text)
        except ValueError:
            raise HttpError(400, f"{name} must be an integer, got {text!r}") from None
        return min(max(value, low), high)


@dataclass
class Reply:
    """A JSON answer."""

    body: Any
    status: int = 200


@dataclass
class EventStream:
    """A server-sent event stream: ``(event name, JSON-safe data)`` pairs."""

    items: Iterator[tuple[str, Any]]
    on_close: Callable[[], None] | None = field(default=None)


Handler = Callable[[Request], Reply | EventStream]


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, without port) is the loopback interface."""
    name = host.strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _split_host(value: str) -> tuple[str, int | None]:
    """``host[:port]`` (an IPv6 address in brackets) as ``(host, port)``; a bad port is -1."""
    value = value.strip()
    port = ""
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        port = rest.removeprefix(":")
    elif value.count(":") == 1:
        host, port = value.split(":")
    else:
        host = value
    if not port:
        return host.lower(), None
    return host.lower(), int(port) if port.isdigit() else -1


class WebServer(Closing):
    """The inspector's server, running on a thread of its own from construction.

    ``url`` is the page's address with the token; ``close()`` stops it (also on leaving a
    ``with`` or ``async with`` block). Routes are added with :meth:`route`; the page asks
    ``GET /api/info`` what it may show (``info`` is that answer). A client gets
    ``read_timeout`` seconds to send a request's head, and as long for its body; at most
    ``max_connections`` connections are served at once, one more is answered 503.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        info: dict[str, Any] | None = None,
        on_close: Callable[[], None] | None = None,
        read_timeout: float = READ_TIMEOUT_S,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        if not is_loopback(host):
            logger.warning(
                "the inspector listens on %s, not only on this machine: anyone who can reach "
                "it and has the token can run the tools",
                host,
            )
        self.token = secrets.token_urlsafe(24)
        self.host = host
        #: Seconds a client may take to send a request's head, and its whole body; one
        #: that is slower gets a 408 and its connection closed (its thread is freed).
        self.read_timeout = read_timeout
        self.info: dict[str, Any] = dict(info or {})
        self._routes: list[tuple[str, re.Pattern[str], Handler]] = []
        self._on_close: list[Callable[[], None]] = [on_close] if on_close else []
        self._closed = False
        self.loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(
            target=self._run_loop, name="inspector-loop", daemon=True
        )
        self._loop_thread.start()
        self.route("GET", "/api/info", lambda request: Reply(self.info))
        self._httpd = _BoundedServer((host, port), self._handler_class(), max_connections)
        self.port = int(self._httpd.server_address[1])
        self._serve_thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="inspector-http",
            daemon=True,
        )
        self._serve_thread.start()

    # -- the address ----------------------------------------------------------------------

    @property
    def origin(self) -> str:
        """``http://host:port`` as a browser on this machine would write it."""
        shown = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host
        if ":" in shown:
            shown = f"[{shown}]"
        return f"http://{shown}:{self.port}"

    @property
    def url(self) -> str:
        """The page's address, with the token."""
        return f"{self.origin}/?token={self.token}"

    # -- routes and async work ------------------------------------------------------------

    def route(self, method: str, pattern: str, handler: Handler) -> None:
        """Answer ``method`` requests whose path matches ``pattern`` (a regex with named
        groups, which become ``request.params``; anchored at both ends)."""
        self._routes.append((method, re.compile(f"^{pattern}$"), handler))

    def run(self, work: Awaitable[_T], timeout: float | None = None) -> _T:
        """Run a coroutine on the server's event loop and wait for its result."""
        future = asyncio.run_coroutine_threadsafe(_awaited(work), self.loop)
        return future.result(timeout)

    def stream(self, items: Callable[[], AsyncIterator[tuple[str, Any]]]) -> EventStream:
        """Server-sent events from an async iterator run on the server's loop.

        Leaving early (the client went away) cancels the iterator's task.
        """
        out: queue.Queue[Any] = queue.Queue()
        done = object()

        async def pump() -> None:
            try:
                async for item in items():
                    out.put(item)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                logger.exception("inspector stream failed")
                out.put(("error", {"error": internal_error(exc)}))
            finally:
                out.put(done)

        future = asyncio.run_coroutine_threadsafe(pump(), self.loop)

        def drain() -> Iterator[tuple[str, Any]]:
            while True:
                item = out.get()
                if item is done:
                    return
                yield item

        return EventStream(drain(), on_close=lambda: _cancel(future))

    def _run_loop(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    # -- closing --------------------------------------------------------------------------

    def close(self) -> None:
        """Stop serving, run the close hooks, stop the event loop. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._httpd.shutdown()
        self._httpd.server_close()
        for hook in reversed(self._on_close):
            try:
                hook()
            except Exception:
                logger.exception("closing the inspector failed")

        async def cancel_all() -> None:
            current = asyncio.current_task()
            tasks = [t for t in asyncio.all_tasks() if t is not current]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.loop.shutdown_asyncgens()

        if self.loop.is_running():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(cancel_all(), self.loop).result(5)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._loop_thread.join(5)
        if not self.loop.is_running():
            self.loop.close()

    def add_close_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` when the server closes (after it stopped serving)."""
        self._on_close.append(hook)

    async def aclose(self) -> None:
        """:meth:`close` without blocking the event loop."""
        await asyncio.to_thread(self.close)

    # -- the request handler --------------------------------------------------------------

    def check(self, headers: Any, path: str, query: dict[str, str]) -> None:
        """Raise a 403 unless ``Host``, ``Origin`` and (for the API) the token are right."""
        host, _ = _split_host(headers.get("Host") or "")
        if not (is_loopback(host) or (host and host == self.host.lower())):
            raise HttpError(403, "the Host header must name this machine's loopback address")
        origin = headers.get("Origin")
        if origin is not None:
            parsed = urllib.parse.urlsplit(origin)
            ok = (
                parsed.scheme == "http"
                and parsed.hostname is not None
                and (is_loopback(parsed.hostname) or parsed.hostname == self.host.lower())
                and parsed.port == self.port
            )
            if not ok:
                raise HttpError(403, f"requests from {origin} are refused")
        if path.startswith("/api/"):
            given = headers.get(TOKEN_HEADER) or query.get("token") or ""
            if not secrets.compare_digest(given.encode(), self.token.encode()):
                raise HttpError(403, "a valid token is required (see the URL the command printed)")

    def _handler_class(self) -> type[http.server.BaseHTTPRequestHandler]:
        server = self

        class _Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "tooling-inspector"

            def setup(self) -> None:
                super().setup()
                # Reading a request's head (and each read of its body) waits this long.
                self.connection.settimeout(server.read_timeout)

            def log_message(self, format: str, *args: Any) -> None:
                logger.debug("inspector: " + format, *args)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PUT(self) -> None:
                self._handle("PUT")

            def do_DELETE(self) -> None:
                self._handle("DELETE")

            def do_HEAD(self) -> None:
                self._handle("HEAD")

            def do_OPTIONS(self) -> None:
                self._handle("OPTIONS")

            def _handle(self, method: str) -> None:
                split = urllib.parse.urlsplit(self.path)
                path = split.path  # routes match the encoded path; parameters are decoded
                query = dict(urllib.parse.parse_qsl(split.query, keep_blank_values=True))
                try:
                    # Who asks comes first: nothing of a body is read for a refused request.
                    server.check(self.headers, path, query)
                    body = self._body()
                    if not path.startswith("/api/"):
                        self._static(method, path)
                        return
                    result = self._dispatch(method, path, query, body)
                except HttpError as exc:
                    if "Content-Length" in self.headers:
                        # The body may be unread: the connection cannot carry another request.
                        self.close_connection = True
                    self._json(exc.status, {"error": exc.message, **exc.extra})
                    return
                except Exception as exc:
                    logger.exception("inspector request %s %s failed", method, path)
                    self._json(500, {"error": internal_error(exc)})
                    return
                if isinstance(result, EventStream):
                    self._events(result)
                else:
                    self._json(result.status, result.body)

            def _body(self) -> bytes:
                """The request's body: at most ``_MAX_BODY`` bytes, read within the
                server's ``read_timeout`` in all."""
                text = self.headers.get("Content-Length")
                if text is None:
                    return b""
                if not text.isdigit():
                    raise HttpError(400, "Content-Length must be a whole number of bytes")
                length = int(text)
                if length > _MAX_BODY:
                    raise HttpError(413, f"the body is too large (at most {_MAX_BODY} bytes)")
                deadline = time.monotonic() + server.read_timeout
                chunks: list[bytes] = []
                left = length
                try:
                    while left > 0:
                        if time.monotonic() > deadline:
                            raise TimeoutError
                        chunk = self.rfile.read1(min(left, 65536))
                        if not chunk:
                            raise HttpError(400, "the body ended before its Content-Length")
                        chunks.append(chunk)
                        left -= len(chunk)
                except TimeoutError:
                    raise HttpError(408, "the body did not arrive in time") from None
                return b"".join(chunks)

            def _dispatch(
                self, method: str, path: str, query: dict[str, str], body: bytes
            ) -> Reply | EventStream:
                allowed = False
                for verb, pattern, handler in server._routes:
                    match = pattern.match(path)
                    if match is None:
                        continue
                    if verb != method:
                        allowed = True
                        continue
                    params = {k: urllib.parse.unquote(v) for k, v in match.groupdict().items()}
                    headers = {k: v for k, v in self.headers.items()}
                    return handler(Request(method, path, params, query, body, headers))
                if allowed:
                    raise HttpError(405, f"{method} is not allowed on {path}")
                raise HttpError(404, f"no such API route: {path}")

            def _static(self, method: str, path: str) -> None:
                if method not in ("GET", "HEAD") or path not in _STATIC:
                    raise HttpError(404, f"not found: {path}")
                name, kind = _STATIC[path]
                if not name:  # no icon: say so without an error in the browser's console
                    self.send_response(204)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                data = resources.files("tooling.web").joinpath("static", name).read_bytes()
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("X-Content-Type-Options", "nosniff")
                self.send_header("Referrer-Policy", "no-referrer")
                self.send_header(
                    "Content-Security-Policy",
                    "default-src 'self'; img-src 'self' data:; style-src 'self'; "
                    "script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
                )
                self.end_headers()
                if method == "GET":
                    self.wfile.write(data)

            def _json(self, status: int, value: Any) -> None:
                data = _json_bytes(value)
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                if self.close_connection:
                    self.send_header("Connection", "close")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def _events(self, stream: EventStream) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    for name, data in stream.items:
                        self.wfile.write(
                            b"event: " + name.encode() + b"\ndata: " + _json_bytes(data) + b"\n\n"
                        )
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    if stream.on_close is not None:
                        stream.on_close()

        return _Handler


class _BoundedServer(http.server.ThreadingHTTPServer):
    """A thread per connection, at most ``limit`` at once: one more gets a 503 at once
    (slow or idle clients cannot take every thread; each is also let go after the read
    timeout)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: Any, limit: int) -> None:
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(limit)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            body = _json_bytes({"error": "the inspector is serving too many connections"})
            head = (
                "HTTP/1.1 503 Service Unavailable\r\n"
                "Content-Type: application/json; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            )
            with contextlib.suppress(OSError):
                request.settimeout(1.0)
                request.sendall(head.encode("ascii") + body)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


def internal_error(exc: BaseException) -> str:
    """What a client is told of an unexpected failure: its type, never its text (a
    store's error may hold a DSN with its password); the log has the rest."""
    return (
        f"the inspector failed with {type(exc).__name__} "
        "(the error text is not shown; see the server's log)"
    )


def _cancel(future: Any) -> None:
    future.cancel()


async def _awaited(work: Awaitable[_T]) -> _T:
    return await work
