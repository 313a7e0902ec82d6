"""Structured output beside tools: ``Agent(output_schema=Model)``.

The agent is given a ``final_result`` tool whose arguments are the model's fields: a
call with valid arguments is the final answer (the run stops there, as after
``skip_summarization``), on ``Event.output`` as the validated ``Model`` and in
``state[output_key]`` as its JSON. Invalid arguments are answered like any tool's
(``tool.invalid_arguments`` with details), so the model tries again, each try a call
counted against the run's budget. A plain text answer that is the model's JSON is
accepted too; other text is sent back once per turn with what was wrong. When
``final_result`` is the only tool offered, ``OpenAIModel`` and ``GeminiModel`` ask for
the answer in the API's JSON mode instead (a JSON schema); Anthropic gets the tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from tooling import BaseTool, CheckedArguments, ToolContext, ToolError, ToolResponse, ToolRuntime
from tooling.integration import error_details_from_validation, input_schema

__all__: list[str] = []

FINAL_RESULT = "final_result"

_RUNTIME = ToolRuntime()


class FinalResult(BaseTool):
    """The tool a model calls with its final answer, validated by the output model."""

    name = FINAL_RESULT
    read_only = True

    def __init__(self, schema: type[BaseModel], output_key: str | None) -> None:
        self.schema = schema
        self.output_key = output_key
        self.description = (
            "Give your final answer by calling this tool once you have what you need; "
            "its arguments are the answer. " + (schema.__doc__ or "").strip()
        ).strip()
        self.parameters_json_schema = input_schema(schema)

    def check_arguments(self, args: Mapping[str, Any] | str | bytes) -> CheckedArguments:
        """The answer, validated by the output model (or ``tool.invalid_arguments``)."""
        try:
            try:
                if isinstance(args, str | bytes):
                    answer = self.schema.model_validate_json(args)
                else:
                    answer = self.schema.model_validate(dict(args))
            except ValidationError as first:
                retried = _without_default_nulls(self.schema, args, first)
                if retried is None:
                    raise
                answer = retried
        except ValidationError as exc:
            details = error_details_from_validation(
                exc.errors(include_url=False, include_context=False),
                list(self.parameters_json_schema.get("properties", {})),
            )
            summary = "; ".join(
                f"{'.'.join(map(str, d['loc'])) or '(answer)'}: {d['msg']}" for d in details[:3]
            )
            raise ToolError(
                f"the answer does not match its schema: {summary}; call {FINAL_RESULT} again "
                "with a corrected answer",
                code="tool.invalid_arguments",
                details=details,
            ) from None
        return CheckedArguments(answer.model_dump(mode="json"), native=answer)

    async def run(
        self, args: Mapping[str, Any] | str, ctx: ToolContext | None = None
    ) -> dict[str, Any]:
        """Accept the answer (see :meth:`respond`)."""
        return self.check_arguments(args).values

    async def respond(
        self,
        arguments: CheckedArguments,
        ctx: ToolContext | None = None,
        *,
        runtime: ToolRuntime = _RUNTIME,
    ) -> ToolResponse:
        """The accepted answer: its JSON for the model, the ``Model`` as the artifact; the
        run stops here and ``output_key`` gets the JSON."""
        values = arguments.values
        if ctx is not None:
            ctx.actions.skip_summarization = True
            if self.output_key:
                ctx.state[self.output_key] = values
        call_id = ctx.function_call_id if ctx is not None else ""
        return ToolResponse(
            id=call_id, name=self.name, response=dict(values), artifact=arguments.native
        )


def _without_default_nulls(
    schema: type[BaseModel], args: Mapping[str, Any] | str | bytes, error: ValidationError
) -> BaseModel | None:
    """The answer validated again without the nulls that mean "the default".

    A strict-mode model (OpenAI's) sends null for every field it leaves out; where the
    field has a default and its type takes no None, that null means the default. Only
    fields of the answer itself are considered; None if nothing changes.
    """
    import json

    if not any(e.get("input", 0) is None for e in error.errors()):
        return None
    data = json.loads(args) if isinstance(args, str | bytes) else dict(args)
    if not isinstance(data, dict):
        return None
    dropped = {
        key: value
        for key, value in data.items()
        if not (
            value is None
            and key in schema.model_fields
            and not schema.model_fields[key].is_required()
        )
    }
    if len(dropped) == len(data):
        return None
    try:
        return schema.model_validate(dropped)
    except ValidationError:
        return None


def parsed_answer(schema: type[BaseModel], text: str) -> tuple[BaseModel | None, str]:
    """A text answer read as the output model: ``(answer, "")`` or ``(None, why not)``."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    try:
        try:
            return schema.model_validate_json(body), ""
        except ValidationError as first:
            retried = _without_default_nulls(schema, body, first)
            if retried is None:
                raise
            return retried, ""
    except ValueError as exc:
        if not isinstance(exc, ValidationError):
            return None, "the answer is not JSON"
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(answer)'}: {e['msg']}"
            for e in exc.errors(include_url=False)[:3]
        )
        return None, problems
