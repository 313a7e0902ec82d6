"""``RestApiTool``: one operation of a REST API, called like any other tool.

``check_arguments`` validates against the parameters schema (jsonschema; nothing is sent
when they do not match; a ``null`` a strict-mode model sends for an optional argument is
left out). A call builds the request (``_requests``), adds the credentials its security
requirements name (``_security``), sends it through the toolset's ``httpx2.AsyncClient``
without following redirects (a redirect within the base URL is followed by hand, up to
five times; one elsewhere is an error), reads the answer with a bound and maps it
(``_answers``). Past the toolset's ``timeout`` the call is ``tool.timeout``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urljoin

from .._base import BaseTool, CheckedArguments, ToolRuntime
from .._errors import ToolError
from .._jsonschema import drop_default_nulls
from .._results import to_response
from .._schema_errors import invalid_arguments, schema_problems
from .._types import Diagnostic, ToolResponse
from ._answers import (
    ERROR_BODY_BYTES,
    MAX_ANSWER_BYTES,
    http_error,
    read_bounded,
    success_answer,
)
from ._fastcheck import fast_checker
from ._operations import OperationPlan
from ._requests import build_request, cookie_header
from ._security import Choice

if TYPE_CHECKING:
    import httpx2
    from jsonschema.protocols import Validator

    from .._context import ToolContext
    from ._toolset import HttpSide

__all__ = ["RestApiTool"]

_MAX_REDIRECTS: Final = 5
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})


class RestApiTool(BaseTool):
    """One operation of an OpenAPI spec (made by :class:`OpenAPIToolset`).

    ``name`` is the ``operationId`` in snake_case (else ``{method}_{path words}``),
    ``description`` the summary then the description; ``parameters_json_schema`` has the
    path, query, header and cookie parameters and the JSON body (an object body's
    properties one by one); ``response_json_schema`` is the first 2xx JSON answer's.
    The flags follow the HTTP method. ``method``, ``path`` and ``operation_id`` say which
    operation it is.
    """

    #: How a trace names this kind of tool (``gen_ai.tool.type``): one served elsewhere.
    _trace_tool_type = "extension"

    def __init__(self, plan: OperationPlan, http: HttpSide, choice: Choice | None = None) -> None:
        self.name = plan.name
        self.description = plan.description
        self.parameters_json_schema = plan.parameters_schema
        self.response_json_schema = plan.response_schema
        self.read_only = plan.flags.read_only
        self.concurrency_safe = plan.flags.concurrency_safe
        self.idempotent = plan.flags.idempotent
        self.destructive = plan.flags.destructive
        self.method = plan.method.upper()
        """The HTTP method (``"GET"``)."""
        self.path = plan.path
        """The operation's path template (``"/pets/{petId}"``)."""
        self.operation_id = plan.operation_id
        """The spec's ``operationId`` (None when it has none)."""
        self._choice = choice or Choice()
        self.auth = self._choice.auth
        self._plan = plan
        self._http = http
        self._validator: Validator | None = None
        self._fast = fast_checker(self.parameters_json_schema)
        described = sorted(plan.answer_media_types)
        self._accept = {"Accept": ", ".join(described)} if described else {}

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """What was noticed reading the operation, then by exports so far."""
        return [*self._plan.diagnostics, *super().diagnostics]

    # -- arguments -----------------------------------------------------------------------

    def _schema_validator(self) -> Validator:
        if self._validator is None:
            try:
                from jsonschema.validators import validator_for
            except ImportError:
                raise ImportError(
                    "checking a REST API tool's arguments needs jsonschema: "
                    "pip install 'agent-tooling[openapi]'"
                ) from None
            schema = self.parameters_json_schema
            self._validator = validator_for(schema)(schema)
        return self._validator

    def check_arguments(self, args: Mapping[str, Any] | str | bytes) -> CheckedArguments:
        """The arguments, valid against the parameters schema (or
        ``tool.invalid_arguments`` with one detail per problem)."""
        arguments = super().check_arguments(args).values
        if self._fast is not None and self._fast(arguments):
            return CheckedArguments(arguments)  # certainly valid: no jsonschema needed
        validator = self._schema_validator()
        try:
            if validator.is_valid(arguments):
                return CheckedArguments(arguments)
            if drop_default_nulls(self.parameters_json_schema, arguments) and validator.is_valid(
                arguments
            ):
                return CheckedArguments(arguments)
            errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
        except Exception as exc:  # a schema the spec got wrong in a way not caught at build
            raise ToolError(
                f"the spec's schema for tool {self.name!r} ({self._plan.label}) cannot check "
                f"arguments: {type(exc).__name__}",
                code="tool.failed",
            ) from exc
        if errors:
            raise invalid_arguments(
                self.name,
                [problem for e in errors for problem in schema_problems(e)],
                list(self.parameters_json_schema.get("properties", {})),
            )
        return CheckedArguments(arguments)

    # -- running ---------------------------------------------------------------------------

    async def run(
        self, args: Mapping[str, Any] | str, ctx: ToolContext | None = None
    ) -> dict[str, Any]:
        """Validate ``args``, send the request, and return the answer as a response dict."""
        return await self._exchange(self.check_arguments(args).values, ctx)

    async def respond(
        self,
        arguments: CheckedArguments,
        ctx: ToolContext | None = None,
        *,
        runtime: ToolRuntime | None = None,
    ) -> ToolResponse:
        """Send the request for arguments already checked against the schema."""
        body, parts = to_response(await self._exchange(arguments.values, ctx), self.name)
        call_id = ctx.function_call_id if ctx is not None else ""
        return ToolResponse(id=call_id, name=self.name, response=body, parts=parts)

    async def _exchange(self, values: dict[str, Any], ctx: ToolContext | None) -> dict[str, Any]:
        http = self._http
        base = http.base()
        parts = build_request(self._plan, base, values)
        http.security.apply(self._plan, self._choice, ctx, parts)
        headers = {**self._accept, **http.headers, **parts.headers}
        if parts.cookies:
            headers["Cookie"] = cookie_header(parts.cookies)
        client = http.client()
        timeout = http.timeout
        try:
            async with asyncio.timeout(timeout) as deadline:
                return await self._send(client, parts.method, parts.url, parts, headers, base)
        except ToolError as err:
            raise http.scrub_error(err) from err.__cause__
        except TimeoutError:
            if not deadline.expired():
                raise
            raise ToolError(
                f"{self._plan.label} did not answer within {timeout:g} s", code="tool.timeout"
            ) from None

    async def _send(
        self,
        client: httpx2.AsyncClient,
        method: str,
        url: str,
        parts: Any,
        headers: dict[str, str],
        base: Any,
    ) -> dict[str, Any]:
        import httpx2

        content = parts.content
        files = parts.files or None
        query: Any = parts.query
        for _ in range(_MAX_REDIRECTS + 1):
            request = client.build_request(
                method, url, params=query or None, headers=headers, content=content, files=files
            )
            try:
                response = await client.send(request, stream=True, follow_redirects=False)
            except httpx2.TimeoutException:
                raise TimeoutError from None
            except httpx2.HTTPError as exc:
                raise ToolError(
                    f"{self._plan.label}: cannot reach {base.scheme}://{base.netloc}: "
                    f"{type(exc).__name__}{': ' + self._http.scrub(str(exc)) if str(exc) else ''}",
                    code="tool.failed",
                ) from exc
            try:
                status = response.status_code
                if status in _REDIRECTS and "location" in response.headers:
                    target = urljoin(str(request.url), response.headers["location"])
                    if not base.covers(target):
                        raise ToolError(
                            f"{self._plan.label} answered HTTP {status}, a redirect away from "
                            f"the API's base URL (to {self._http.scrub(target)[:300]}): not "
                            "followed",
                            code="tool.failed",
                        )
                    url, query = target, parts.auth_query or None
                    if status == 303 or (status in (301, 302) and method not in ("GET", "HEAD")):
                        method, content, files = "GET", None, None
                        headers = {k: v for k, v in headers.items() if k != "Content-Type"}
                    continue
                if status == 401 and self.auth is not None:
                    from ..auth import Unauthorized

                    raise Unauthorized(f"{self._plan.label} answered HTTP 401: credential refused")
                if status >= 400:
                    data, more = await read_bounded(response, ERROR_BODY_BYTES)
                    raise http_error(self._plan, response, data, more)
                if status >= 300:
                    data, more = await read_bounded(response, ERROR_BODY_BYTES)
                    raise ToolError(
                        f"{self._plan.label} answered HTTP {status} without a redirect to follow",
                        code="tool.failed",
                    )
                data, more = await read_bounded(response, MAX_ANSWER_BYTES)
                if more:
                    raise ToolError(
                        f"{self._plan.label} answered more than {MAX_ANSWER_BYTES // 2**20} MiB: "
                        "not read",
                        code="tool.failed",
                    )
                return success_answer(self._plan, response, data)
            except httpx2.TimeoutException:
                raise TimeoutError from None
            except httpx2.HTTPError as exc:
                raise ToolError(
                    f"{self._plan.label}: the answer could not be read: {type(exc).__name__}",
                    code="tool.failed",
                ) from exc
            finally:
                await response.aclose()
        raise ToolError(
            f"{self._plan.label} redirected more than {_MAX_REDIRECTS} times", code="tool.failed"
        )
