"""``ToolError`` and the error shape a model is shown."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "ToolError",
    "error_details_from_validation",
]

#: What a tool may raise that becomes ``tool.failed``: any ``Exception``, and
#: ``SystemExit`` (argparse and friends raise it; it must never end the host).
FAILURES = (Exception, SystemExit)

#: Offending inputs are shown to the model cut to this many characters.
INPUT_PREVIEW_CHARS = 200


class ToolError(Exception):
    """An error a model can read and recover from.

    Tool authors raise it with their own dotted ``code`` (``"orders.not_found"``); the
    framework uses the ``tool.*`` codes. ``details`` is a list of dicts, one per problem,
    with pydantic's ``loc``/``msg``/``type``/``input`` fields for argument errors, or one
    dict of the author's own (``{"status": 404}``), kept as given; anything else is a
    ``TypeError`` here. ``retry=True`` asks the model to try again with other arguments.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str = "tool.failed",
        details: Sequence[dict[str, Any]] | dict[str, Any] | None = None,
        retry: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.details: list[dict[str, Any]] | dict[str, Any] | None = _checked_details(details)
        #: The tool asks the model to try again with other arguments (counted against the
        #: tool's ``retries``; past them the call is ``tool.retries_exhausted``).
        self.retry = retry
        #: True when the message is the framework's generic stand-in for the text of the
        #: exception in ``__cause__`` (which ``expose_errors=True`` then shows instead).
        self.hides_cause = False

    def to_response(self) -> dict[str, Any]:
        """The response dict a model receives for this error."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            error["details"] = self.details
        if self.retry:
            error["retry"] = True
        return {"status": "error", "error": error}

    def __repr__(self) -> str:
        return f"ToolError({self.message!r}, code={self.code!r})"


def _checked_details(details: object) -> list[dict[str, Any]] | dict[str, Any] | None:
    """``details`` as stored: None, the dict given, or a list of the dicts given."""
    if details is None:
        return None
    if isinstance(details, dict):
        return details
    if isinstance(details, list | tuple) and all(isinstance(item, dict) for item in details):
        return list(details)
    raise TypeError(
        "ToolError details must be a dict or a list of dicts, "
        f"not {type(details).__name__}: {details!r:.80}"
    )


class PoolSaturated(RuntimeError):
    """Sync work is refused: too many abandoned threads are still running hung calls."""


def log_failure(tool_name: str, exc: BaseException) -> None:
    """Log a call that became ``tool.failed`` at WARNING, with the traceback.

    ``expose_errors`` decides what the model sees; the developer always sees this.
    """
    import logging  # on the failure path only: ``import tooling`` stays light

    logging.getLogger("tooling").warning(
        "tool %r failed with %s", tool_name, type(exc).__name__, exc_info=exc
    )


def failure(tool_name: str, exc: BaseException) -> ToolError:
    """The ``tool.failed`` error standing for ``exc`` (not logged: see :func:`log_failure`).

    Its message names only the exception's type: exception text can carry private data.
    """
    if isinstance(exc, PoolSaturated):  # the framework's own words: nothing private
        return ToolError(f"tool {tool_name!r} was not started: {exc}", code="tool.failed")
    error = ToolError(
        f"tool {tool_name!r} failed with {type(exc).__name__} "
        "(the error text is not shown; it may contain private data)",
        code="tool.failed",
    )
    error.hides_cause = True
    return error


#: An unknown tool's message names at most this many of the tools there are.
LISTED_TOOLS = 20


def not_found(name: str, tools: Iterable[str]) -> ToolError:
    """``tool.not_found`` for ``name``, listing what may be called instead.

    The names most like ``name`` come first, then the others in order, at most
    :data:`LISTED_TOOLS` of them (a model that invented a name needs the real one, not a
    catalog).
    """
    known = sorted(tools)
    if not known:
        listed = "there are none"
    else:
        import difflib  # on the failure path only

        close = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
        ordered = [*close, *(n for n in known if n not in close)]
        listed = "you may call: " + ", ".join(ordered[:LISTED_TOOLS])
        if len(ordered) > LISTED_TOOLS:
            listed += f" (and {len(ordered) - LISTED_TOOLS} more)"
    return ToolError(f"there is no tool named {name!r}; {listed}", code="tool.not_found")


def _preview(value: Any) -> Any:
    """Make an offending input JSON-safe and short enough to show a model."""
    if (
        value is None
        or isinstance(value, bool | int)
        or (isinstance(value, float) and value == value and abs(value) != float("inf"))
    ):
        return value
    if isinstance(value, str):
        text = value
    else:
        import json

        try:
            text = json.dumps(value, default=repr, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            text = repr(value)
        else:
            if len(text) <= INPUT_PREVIEW_CHARS:
                return json.loads(text)
    if len(text) <= INPUT_PREVIEW_CHARS:
        return text
    return text[: INPUT_PREVIEW_CHARS - 1] + "…"


def error_details_from_validation(
    errors: Iterable[Any], valid_names: Sequence[str]
) -> list[dict[str, Any]]:
    """Turn pydantic error dicts into the ``details`` a model sees (one per problem)."""
    details = []
    valid = ", ".join(valid_names) if valid_names else "(none)"
    for err in errors:
        loc = list(err.get("loc", ()))
        kind = err.get("type", "value_error")
        msg = err.get("msg", "invalid value")
        if kind == "extra_forbidden" and len(loc) == 1:
            msg = f"Unknown argument {loc[0]!r}; valid arguments: {valid}"
        elif kind == "missing" and len(loc) == 1:
            msg = f"Missing required argument {loc[0]!r}"
        detail: dict[str, Any] = {"loc": loc, "msg": msg, "type": kind}
        if "input" in err and kind != "missing":
            detail["input"] = _preview(err["input"])
        details.append(detail)
    return details
