"""A loopback HTTP server speaking OpenAI's Responses and Chat Completions APIs and
Anthropic's Messages API, for the adapters' tests and the benchmark.

The server (127.0.0.1, port 0) records each request (path, auth headers, JSON body) and
answers with the next scripted reply: a JSON body with a status (and headers), or
server-sent events. The reply builders write the shapes the real APIs send (checked
against the installed SDKs' types and the API references), including the SSE event
sequences; each ``Dialect`` knows one API's replies and how to read its requests back
in one neutral form, so one test can run against all three.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agent_core.models.anthropic import AnthropicModel
from agent_core.models.base import BaseLlm
from agent_core.models.openai import OpenAIModel

MODEL = "test-model"


@dataclass
class Reply:
    """What the server answers next: a JSON body with a status, or server-sent events
    (``(event name or None, data)`` pairs; ``done`` adds ``data: [DONE]``)."""

    body: Any = None
    status: int = 200
    events: list[tuple[str | None, Any]] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    done: bool = False


@dataclass
class FakeServer:
    base_url: str = ""
    replies: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    #: The reply when none is scripted (the benchmark's endless model), else a 500.
    always: Reply | None = None
    #: Keep each request (off for the benchmark's many thousands).
    record: bool = True

    def reply(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    @property
    def last_body(self) -> dict[str, Any]:
        body: dict[str, Any] = self.requests[-1]["body"]
        return body


def _handler(fake: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # no delayed-ACK stalls between headers and body

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if fake.record:
                fake.requests.append(
                    {
                        "path": self.path,
                        "authorization": self.headers.get("authorization"),
                        "x-api-key": self.headers.get("x-api-key"),
                        "body": json.loads(raw),
                    }
                )
            if fake.replies:
                reply = fake.replies.pop(0)
            elif fake.always is not None:
                reply = fake.always
            else:
                self._send(500, {"error": {"message": "no reply scripted", "type": "server"}}, {})
                return
            if reply.events is None:
                self._send(reply.status, reply.body, reply.headers)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for name, data in reply.events:
                head = f"event: {name}\n" if name else ""
                self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
            if reply.done:
                self.wfile.write(b"data: [DONE]\n\n")
            self.close_connection = True

        def _send(self, status: int, body: Any, headers: dict[str, str]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def no_proxies(monkeypatch: Any) -> None:
    """No proxy for this test's requests to 127.0.0.1 (an HTTP_PROXY in the environment
    would send them elsewhere)."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")


@contextmanager
def serving() -> Iterator[FakeServer]:
    """A fake server on 127.0.0.1, for the duration of the block."""
    fake = FakeServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.base_url = f"http://127.0.0.1:{httpd.server_port}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


@dataclass(frozen=True)
class Call:
    """A function call the fake model makes: ``arguments`` is the JSON text it sends."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class SentResult:
    """A tool result as the adapter sent it: the call id, the text, any images."""

    call_id: str
    text: str
    images: list[str]
    is_error: bool = False


# -- OpenAI Responses --------------------------------------------------------------------------


def responses_message(text: str, item_id: str = "msg_1") -> dict[str, Any]:
    return {
        "type": "message",
        "id": item_id,
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
    }


def responses_call(call: Call, item_id: str | None = None) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": item_id or f"fc_{call.id}",
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments,
        "status": "completed",
    }


def responses_body(
    output: list[dict[str, Any]],
    *,
    status: str = "completed",
    usage: tuple[int, int] = (12, 5),
    incomplete: str | None = None,
) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "error": None,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "instructions": None,
        "model": MODEL,
        "output": output,
        "parallel_tool_calls": True,
        "temperature": 1.0,
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "usage": {
            "input_tokens": usage[0],
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage[1],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage[0] + usage[1],
        },
    }


def responses_events(
    output: list[dict[str, Any]], usage: tuple[int, int] = (12, 5)
) -> list[tuple[str | None, Any]]:
    """The event sequence the Responses API streams for a response with ``output``."""
    events: list[tuple[str | None, Any]] = []

    def emit(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": len(events), **data}))

    started = responses_body([], status="in_progress")
    started["usage"] = None
    emit("response.created", response=started)
    emit("response.in_progress", response=started)
    for index, item in enumerate(output):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            )
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            emit(
                "response.content_part.added",
                output_index=index,
                item_id=item["id"],
                content_index=0,
                part=part,
            )
            for piece in _pieces(text):
                emit(
                    "response.output_text.delta",
                    output_index=index,
                    item_id=item["id"],
                    content_index=0,
                    delta=piece,
                    logprobs=[],
                )
            emit(
                "response.output_text.done",
                output_index=index,
                item_id=item["id"],
                content_index=0,
                text=text,
                logprobs=[],
            )
            emit(
                "response.content_part.done",
                output_index=index,
                item_id=item["id"],
                content_index=0,
                part={**part, "text": text},
            )
        else:
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            for piece in _pieces(item["arguments"]):
                emit(
                    "response.function_call_arguments.delta",
                    output_index=index,
                    item_id=item["id"],
                    delta=piece,
                )
            emit(
                "response.function_call_arguments.done",
                output_index=index,
                item_id=item["id"],
                arguments=item["arguments"],
            )
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.completed", response=responses_body(output, usage=usage))
    return events


# -- OpenAI Chat Completions -------------------------------------------------------------------


def chat_body(
    text: str | None,
    calls: Sequence[Call] = (),
    *,
    finish: str | None = None,
    usage: tuple[int, int] = (12, 5),
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c in calls
        ]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": finish or ("tool_calls" if calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        },
    }


def chat_events(
    text: str | None, calls: Sequence[Call] = (), usage: tuple[int, int] = (12, 5)
) -> list[tuple[str | None, Any]]:
    """The chunks Chat Completions streams (``stream_options.include_usage`` set)."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[str | None, Any]:
        return (
            None,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": MODEL,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
                "usage": None,
            },
        )

    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    for piece in _pieces(text) if text else ():
        events.append(chunk({"content": piece}))
    for index, call in enumerate(calls):
        first = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        events.append(chunk({"tool_calls": [first]}))
        for piece in _pieces(call.arguments):
            events.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    events.append(chunk({}, "tool_calls" if calls else "stop"))
    events.append(
        (
            None,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": MODEL,
                "choices": [],
                "usage": {
                    "prompt_tokens": usage[0],
                    "completion_tokens": usage[1],
                    "total_tokens": usage[0] + usage[1],
                },
            },
        )
    )
    return events


# -- Anthropic Messages ------------------------------------------------------------------------


def anthropic_blocks(text: str | None, calls: Sequence[Call]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if text:
        blocks.append({"type": "text", "text": text})
    for call in calls:
        try:
            arguments = json.loads(call.arguments)
        except ValueError:
            arguments = call.arguments
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": arguments})
    return blocks


def anthropic_body(
    text: str | None,
    calls: Sequence[Call] = (),
    *,
    stop: str | None = None,
    usage: tuple[int, int] = (12, 5),
) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": anthropic_blocks(text, calls),
        "stop_reason": stop or ("tool_use" if calls else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


def anthropic_events(
    text: str | None, calls: Sequence[Call] = (), usage: tuple[int, int] = (12, 5)
) -> list[tuple[str | None, Any]]:
    """The event sequence the Messages API streams."""
    events: list[tuple[str | None, Any]] = []

    def emit(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, **data}))

    start = anthropic_body(None, usage=(usage[0], 1))
    start.update(content=[], stop_reason=None)
    emit("message_start", message=start)
    index = 0
    if text:
        emit("content_block_start", index=index, content_block={"type": "text", "text": ""})
        emit("ping")
        for piece in _pieces(text):
            emit("content_block_delta", index=index, delta={"type": "text_delta", "text": piece})
        emit("content_block_stop", index=index)
        index += 1
    for call in calls:
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        emit("content_block_start", index=index, content_block=block)
        for piece in _pieces(call.arguments):
            emit(
                "content_block_delta",
                index=index,
                delta={"type": "input_json_delta", "partial_json": piece},
            )
        emit("content_block_stop", index=index)
        index += 1
    emit(
        "message_delta",
        delta={"stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None},
        usage={"output_tokens": usage[1]},
    )
    emit("message_stop")
    return events


# -- dialects ----------------------------------------------------------------------------------


class Dialect:
    """One API: its model, replies, errors, and its requests read back neutrally."""

    name = ""

    def model(self, server: FakeServer) -> BaseLlm:
        raise NotImplementedError

    def turn(
        self, text: str | None = None, calls: Sequence[Call] = (), usage: tuple[int, int] = (12, 5)
    ) -> Reply:
        raise NotImplementedError

    def streamed(
        self, text: str | None = None, calls: Sequence[Call] = (), usage: tuple[int, int] = (12, 5)
    ) -> Reply:
        raise NotImplementedError

    def error(self, status: int) -> Reply:
        raise NotImplementedError

    def error_text(self, status: int) -> tuple[str, str]:
        """The provider's message and code (or type) for an error reply of ``status``."""
        raise NotImplementedError

    def instruction(self, body: dict[str, Any]) -> str | None:
        raise NotImplementedError

    def tools(self, body: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """name -> {"description", "parameters", "strict"?} as declared."""
        raise NotImplementedError

    def calls(self, body: dict[str, Any]) -> list[tuple[str, str, Any]]:
        """The model's calls in the history sent: (id, name, arguments as JSON data)."""
        raise NotImplementedError

    def results(self, body: dict[str, Any]) -> list[SentResult]:
        raise NotImplementedError

    def texts(self, body: dict[str, Any]) -> list[tuple[str, str]]:
        """(role, text) of the plain messages of the history, in order."""
        raise NotImplementedError


_OPENAI_ERRORS = {
    400: (
        "Invalid 'input[1].call_id': empty string. Expected a string with minimum length 1.",
        "invalid_request_error",
        "empty_string",
    ),
    401: (
        "Incorrect API key provided: sk-test. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        "invalid_request_error",
        "invalid_api_key",
    ),
    429: (
        "Rate limit reached for test-model on tokens per min (TPM): Limit 30000, Used 30000, "
        "Requested 120. Please try again in 240ms.",
        "tokens",
        "rate_limit_exceeded",
    ),
}

_ANTHROPIC_ERRORS = {
    400: ("messages.1.content.0: unexpected `tool_use_id` found", "invalid_request_error"),
    401: ("invalid x-api-key", "authentication_error"),
    429: (
        "This request would exceed the rate limit for your organization of 50 requests per minute.",
        "rate_limit_error",
    ),
}


class _OpenAIDialect(Dialect):
    def error(self, status: int) -> Reply:
        message, kind, code = _OPENAI_ERRORS[status]
        body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
        return Reply(body, status=status, headers={"retry-after-ms": "1"})

    def error_text(self, status: int) -> tuple[str, str]:
        message, _, code = _OPENAI_ERRORS[status]
        return message, code


class ResponsesDialect(_OpenAIDialect):
    name = "openai-responses"

    def model(self, server: FakeServer) -> BaseLlm:
        return OpenAIModel(MODEL, api_key="sk-test", base_url=f"{server.base_url}/v1")

    def _output(self, text: str | None, calls: Sequence[Call]) -> list[dict[str, Any]]:
        output = [responses_message(text)] if text else []
        output += [responses_call(c) for c in calls]
        return output

    def turn(
        self, text: str | None = None, calls: Sequence[Call] = (), usage: tuple[int, int] = (12, 5)
    ) -> Reply:
        return Reply(responses_body(self._output(text, calls), usage=usage))

    def streamed(
        self, text: str | None = None, calls: Sequence[Call] = (), usage: tuple[int, int] = (12, 5)
    ) -> Reply:
        return Reply(events=responses_events(self._output(text, calls), usage))

    def instruction(self, body: dict[str, Any]) -> str | None:
        return body.get("instructions")

    def tools(self, body: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {t["name"]: t for t in body.get("tools", [])}

    def calls(self, body: dict[str, Any]) -> list[tuple[str, str, Any]]:
        return [
            (i["call_id"], i["name"], json.loads(i["arguments"]))
            for i in body["input"]
            if i.get("type") == "function_call"
        ]

    def results(self, body: dict[str, Any]) -> list[SentResult]:
        out = []
        for item in body["input"]:
            if item.get("type") != "function_call_output":
                continue
            output = item["output"]
            if isinstance(output, str):
                out.append(SentResult(item["call_id"], output, []))
            else:
                text = "\n".join(p["text"] for p in output if p["type"] == "input_text")
                images = [p["image_url"] for p in output if p["type"] == "input_image"]
                out.append(SentResult(item["call_id"], text, images))
        return out

    def texts(self, body: dict[str, Any]) -> list[tuple[str, str]]:
        out = []
        for item in body["input"]:
            if "role" not in item:
                continue
            content = item["content"]
            if isinstance(content, str):
                out.append((item["role"], content))
            else:
                out.append((item["role"], "".join(p.get("text", "") for p in content)))
        return out


class ChatDialect(_OpenAIDialect):
    name = "openai-chat"

    def model(self, server: FakeServer) -> BaseLlm:
        return OpenAIModel(MODEL, api_key="sk-test", base_url=f"{server.base_url}/v1", api="chat")

    def turn(
        self, text: str | None = None, calls: Sequence[Call] = (), usage: tuple[int, int] = (12, 5)
    ) -> Reply:
        return Reply(chat_body(text, calls, usage=usage))

    def streamed(
        self, text: str | None = None, calls: Sequence[Call] = (), usage: tuple[int, int] = (12, 5)
    ) -> Reply:
        return Reply(events=chat_events(text, calls, usage), done=True)

    def instruction(self, body: dict[str, Any]) -> str | None:
        system = [m["content"] for m in body["messages"] if m["role"] == "system"]
        return system[0] if system else None

    def tools(self, body: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {t["function"]["name"]: t["function"] for t in body.get("tools", [])}

    def calls(self, body: dict[str, Any]) -> list[tuple[str, str, Any]]:
        return [
            (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for m in body["messages"]
            for c in m.get("tool_calls") or ()
        ]

    def results(self, body: dict[str, Any]) -> list[SentResult]:
        return [
            SentResult(m["tool_call_id"], m["content"], [])
            for m in body["messages"]
            if m["role"] == "tool"
        ]

    def texts(self, body: dict[str, Any]) -> list[tuple[str, str]]:
        out = []
        for m in body["messages"]:
            if m["role"] in ("user", "assistant") and m.get("content"):
                content = m["content"]
                if not isinstance(content, str):
                    content = "".join(p.get("text", "") for p in content)
                out.append((m["role"], content))
        return out


class AnthropicDialect(Dialect):
    name = "anthropic"

    def model(self, server: FakeServer) -> BaseLlm:
        return AnthropicModel(MODEL, api_key="sk-ant-test", base_url=server.base_url)

    def turn(
        self, text: str | None = None, calls: Sequence[Call] = (), usage: tuple[int, int] = (12, 5)
    ) -> Reply:
        return Reply(anthropic_body(text, calls, usage=usage))

    def streamed(
        self, text: str | None = None, calls: Sequence[Call] = (), usage: tuple[int, int] = (12, 5)
    ) -> Reply:
        return Reply(events=anthropic_events(text, calls, usage))

    def error(self, status: int) -> Reply:
        message, kind = _ANTHROPIC_ERRORS[status]
        body = {"type": "error", "error": {"type": kind, "message": message}}
        return Reply(body, status=status, headers={"retry-after-ms": "1"})

    def error_text(self, status: int) -> tuple[str, str]:
        return _ANTHROPIC_ERRORS[status]

    def instruction(self, body: dict[str, Any]) -> str | None:
        return body.get("system")

    def tools(self, body: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {
            t["name"]: {"description": t["description"], "parameters": t["input_schema"]}
            for t in body.get("tools", [])
        }

    def calls(self, body: dict[str, Any]) -> list[tuple[str, str, Any]]:
        return [
            (b["id"], b["name"], b["input"])
            for m in body["messages"]
            for b in m["content"]
            if b["type"] == "tool_use"
        ]

    def results(self, body: dict[str, Any]) -> list[SentResult]:
        out = []
        for m in body["messages"]:
            for b in m["content"]:
                if b["type"] != "tool_result":
                    continue
                text = "\n".join(p["text"] for p in b["content"] if p["type"] == "text")
                images = [
                    f"data:{p['source']['media_type']};base64,{p['source']['data']}"
                    for p in b["content"]
                    if p["type"] == "image"
                ]
                out.append(SentResult(b["tool_use_id"], text, images, b.get("is_error", False)))
        return out

    def texts(self, body: dict[str, Any]) -> list[tuple[str, str]]:
        out = []
        for m in body["messages"]:
            text = "".join(b.get("text", "") for b in m["content"] if b["type"] == "text")
            if text:
                out.append((m["role"], text))
        return out


DIALECTS: list[Dialect] = [ResponsesDialect(), ChatDialect(), AnthropicDialect()]
