"""The google.genai side of ``GeminiModel``: conversions between our ``Content``/``Part``
and ``google.genai.types``, request configs, responses and errors.

This module imports ``google.genai``; it is loaded when a ``GeminiModel`` is built (or one
of these functions is asked for), never by ``import agent_core``.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable
from typing import Any

from google.genai import errors as genai_errors
from google.genai import types

from tooling import Blob, FileRef
from tooling.builtin import BuiltinTool
from tooling.integration import provider_name

from .._content import Content, FunctionCall, FunctionResponse, Part, ProviderPart
from .._output import FinalResult
from .base import LlmRequest, LlmResponse

__all__: list[str] = []

# -- requests ------------------------------------------------------------------------------


def build_config(llm_request: LlmRequest) -> types.GenerateContentConfig:
    """The request's config (a ``GenerateContentConfig`` or dict; copied, not changed) with
    its system instruction, the offered tools' declarations, and automatic function
    calling off."""
    given = llm_request.config
    if given is None:
        config = types.GenerateContentConfig()
    elif isinstance(given, types.GenerateContentConfig):
        config = given.model_copy(deep=True)
    elif isinstance(given, dict):
        config = types.GenerateContentConfig.model_validate(given)
    else:
        raise TypeError(
            "LlmRequest.config must be a google.genai.types.GenerateContentConfig, a dict "
            f"or None, got {type(given).__name__}"
        )
    if llm_request.system_instruction:
        if isinstance(config.system_instruction, str) and config.system_instruction:
            config.system_instruction = (
                f"{config.system_instruction}\n\n{llm_request.system_instruction}"
            )
        elif config.system_instruction is None:
            config.system_instruction = llm_request.system_instruction
        else:
            raise ValueError(
                "GenerateContentConfig.system_instruction must be text to be combined with "
                "the agent's instruction"
            )
    offered = list(llm_request.tools.values())
    # An output_schema agent's answer alone is asked for in Gemini's JSON mode.
    if (
        len(offered) == 1
        and isinstance(offered[0], FinalResult)
        and config.response_mime_type is None
        and config.response_json_schema is None
    ):
        config.response_mime_type = "application/json"
        config.response_json_schema = offered[0].parameters_json_schema
        offered = []
    if offered:
        builtins = [t.to_gemini() for t in offered if isinstance(t, BuiltinTool)]
        declarations = [t.to_gemini() for t in offered if not isinstance(t, BuiltinTool)]
        extra = [types.Tool(function_declarations=declarations)] if declarations else []
        config.tools = [*(config.tools or []), *builtins, *extra]
    config.automatic_function_calling = types.AutomaticFunctionCallingConfig(disable=True)
    return config


def content_to_genai(content: Content) -> types.Content:
    """Our ``Content`` as a ``google.genai.types.Content``."""
    return types.Content(role=content.role, parts=[part_to_genai(p) for p in content.parts])


def part_to_genai(part: Part) -> types.Part:
    """Our ``Part`` as a ``google.genai.types.Part`` (function call ids kept as they are).

    What a built-in produced on Gemini goes back as it came; another provider's is its
    text stand-in."""
    provider = part.provider_part
    if provider is not None:
        if provider.provider == "gemini":
            kept = types.Part.model_validate(provider.data)
            kept.thought_signature = part.thought_signature
            return kept
        return types.Part(text=provider.stand_in())
    out = types.Part(
        text=part.text,
        thought=part.thought,
        function_call=_call_to_genai(part.function_call) if part.function_call else None,
        function_response=(
            _response_to_genai(part.function_response) if part.function_response else None
        ),
        inline_data=(
            types.Blob(mime_type=part.inline_data.mime_type, data=part.inline_data.data)
            if part.inline_data is not None
            else None
        ),
        file_data=(
            types.FileData(file_uri=part.file_data.uri, mime_type=part.file_data.mime_type)
            if part.file_data is not None
            else None
        ),
    )
    # Thinking models' opaque token must go back with the part it came on.
    out.thought_signature = part.thought_signature
    return out


def _call_to_genai(call: FunctionCall) -> types.FunctionCall:
    # Arguments that were not an object were answered tool.invalid_arguments; Gemini's
    # history holds objects only, so such a call goes back with none.
    args = call.args if isinstance(call.args, dict) else {}
    return types.FunctionCall(id=call.id, name=provider_name(call.name, "gemini"), args=args)


def _response_to_genai(response: FunctionResponse) -> types.FunctionResponse:
    return types.FunctionResponse(
        id=response.id,
        name=provider_name(response.name, "gemini"),
        response=response.response,
        will_continue=response.will_continue,
        parts=[_response_part_to_genai(p) for p in response.parts] if response.parts else None,
    )


def _response_part_to_genai(part: Part) -> types.FunctionResponsePart:
    if part.inline_data is not None:
        blob = part.inline_data
        return types.FunctionResponsePart(
            inline_data=types.FunctionResponseBlob(mime_type=blob.mime_type, data=blob.data)
        )
    if part.file_data is not None:
        ref = part.file_data
        return types.FunctionResponsePart(
            file_data=types.FunctionResponseFileData(file_uri=ref.uri, mime_type=ref.mime_type)
        )
    raise ValueError(
        f"a function response's parts may only carry inline data or file references, got {part!r}"
    )


# -- responses -----------------------------------------------------------------------------


def response_from_genai(response: types.GenerateContentResponse) -> LlmResponse:
    """The first candidate of a ``GenerateContentResponse`` as our ``LlmResponse``.

    A blocked prompt, or a candidate that stopped without content for a reason other than
    ``STOP``, is an error response.
    """
    if not response.candidates:
        blocked = _blocked(response)
        if blocked is not None:
            return blocked
        return LlmResponse(error_code="NO_CANDIDATES", error_message="The model returned nothing.")
    candidate = response.candidates[0]
    content = content_from_genai(candidate.content) if candidate.content is not None else None
    out = _candidate_response(
        content, _enum_text(candidate.finish_reason), candidate.finish_message
    )
    out.usage = _usage(response.usage_metadata)
    out.citations = citations(candidate)
    return out


def _usage(metadata: types.GenerateContentResponseUsageMetadata | None) -> dict[str, int] | None:
    if metadata is None:
        return None
    return {
        "input_tokens": metadata.prompt_token_count or 0,
        # Thinking tokens are output the model produced (and is billed for), as elsewhere.
        "output_tokens": (metadata.candidates_token_count or 0)
        + (metadata.thoughts_token_count or 0),
    }


def _candidate_response(
    content: Content | None, finish_reason: str | None, finish_message: str | None
) -> LlmResponse:
    if (content is None or not content.parts) and finish_reason not in (None, "STOP"):
        return LlmResponse(
            content=content,
            finish_reason=finish_reason,
            error_code=finish_reason,
            error_message=finish_message
            or f"The model stopped without an answer (finish reason {finish_reason}).",
        )
    return LlmResponse(content=content, finish_reason=finish_reason)


def error_response(exc: genai_errors.APIError) -> LlmResponse:
    """An API error as an error ``LlmResponse`` carrying the provider's message."""
    return LlmResponse(
        error_code=str(exc.code or exc.status),
        error_message=exc.message or str(exc),
    )


def content_from_genai(content: types.Content) -> Content:
    """A ``google.genai.types.Content`` as ours (parts we cannot carry are left out)."""
    parts = [p for p in (part_from_genai(gp) for gp in content.parts or ()) if p is not None]
    return Content(role=content.role or "model", parts=parts)


def part_from_genai(part: types.Part) -> Part | None:
    """A ``google.genai.types.Part`` as ours, or None for a kind we do not carry.

    Code the built-in code execution ran, and its result, are kept as Gemini sent them
    (a ``ProviderPart``), to go back to Gemini unchanged."""
    builtin = _builtin_part(part)
    if builtin is not None:
        return builtin
    fields: dict[str, Any] = {}
    if part.text is not None:
        fields["text"] = part.text
    if part.thought is not None:
        fields["thought"] = part.thought
    if part.function_call is not None:
        call = part.function_call
        fields["function_call"] = FunctionCall(
            id=call.id, name=call.name or "", args=dict(call.args or {})
        )
    if part.function_response is not None:
        resp = part.function_response
        fields["function_response"] = FunctionResponse(
            id=resp.id,
            name=resp.name or "",
            response=dict(resp.response or {}),
            will_continue=resp.will_continue,
            parts=_response_parts_from_genai(resp.parts) if resp.parts else None,
        )
    if part.inline_data is not None:
        blob = part.inline_data
        fields["inline_data"] = Blob(blob.mime_type or "application/octet-stream", blob.data or b"")
    if part.file_data is not None:
        ref = part.file_data
        fields["file_data"] = FileRef(ref.file_uri or "", ref.mime_type or "")
    if part.thought_signature is not None:
        fields["thought_signature"] = part.thought_signature
    if not fields or fields.keys() == {"thought_signature"}:
        return None
    return Part(**fields)


def _builtin_part(part: types.Part) -> Part | None:
    if part.executable_code is not None:
        kind, summary = "executableCode", part.executable_code.code or ""
    elif part.code_execution_result is not None:
        kind, summary = "codeExecutionResult", part.code_execution_result.output or ""
    else:
        return None
    data = part.model_dump(
        mode="json", by_alias=True, exclude_none=True, exclude={"thought_signature"}
    )
    return Part(
        provider_part=ProviderPart("gemini", kind, data, summary=summary),
        thought_signature=part.thought_signature,
    )


def citations(candidate: types.Candidate) -> list[dict[str, Any]] | None:
    """The sources a candidate's grounding cites, one per (span, source) pair; a source no
    span points to is listed without ``start``/``end``."""
    grounding = candidate.grounding_metadata
    if grounding is None or not grounding.grounding_chunks:
        return None
    sources = []
    for chunk in grounding.grounding_chunks:
        web = chunk.web or chunk.retrieved_context
        sources.append(
            {"title": getattr(web, "title", None) or "", "uri": getattr(web, "uri", None) or ""}
        )
    out: list[dict[str, Any]] = []
    cited: set[int] = set()
    for support in grounding.grounding_supports or ():
        segment = support.segment
        for index in support.grounding_chunk_indices or ():
            if 0 <= index < len(sources):
                cited.add(index)
                out.append(
                    {
                        **sources[index],
                        "start": segment.start_index if segment else None,
                        "end": segment.end_index if segment else None,
                    }
                )
    out.extend(
        {**source, "start": None, "end": None} for i, source in enumerate(sources) if i not in cited
    )
    return out or None


def _response_parts_from_genai(parts: Iterable[types.FunctionResponsePart]) -> list[Part]:
    out = []
    for p in parts:
        if p.inline_data is not None:
            blob = p.inline_data
            out.append(Part(inline_data=Blob(blob.mime_type or "", blob.data or b"")))
        elif p.file_data is not None:
            ref = p.file_data
            out.append(Part(file_data=FileRef(ref.file_uri or "", ref.mime_type or "")))
    return out


def _blocked(response: types.GenerateContentResponse) -> LlmResponse | None:
    feedback = response.prompt_feedback
    if feedback is None or feedback.block_reason is None:
        return None
    reason = _enum_text(feedback.block_reason) or "BLOCKED"
    return LlmResponse(
        error_code=reason,
        error_message=feedback.block_reason_message or f"The prompt was blocked ({reason}).",
    )


def _enum_text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, enum.Enum):
        return str(value.value)
    return str(value)


class StreamAggregate:
    """Joins streamed chunks into the final response.

    Consecutive text pieces of the same kind (answer or thought) become one part; other
    parts (function calls, data) are kept in order.
    """

    def __init__(self) -> None:
        self.parts: list[Part] = []
        self.new_text: list[Part] = []
        self.finish_reason: str | None = None
        self.finish_message: str | None = None
        self.usage: dict[str, int] | None = None
        self.citations: list[dict[str, Any]] | None = None
        self.role = "model"

    def add(self, chunk: types.GenerateContentResponse) -> LlmResponse | None:
        """Take in a chunk; returns an error response if the prompt was blocked."""
        self.new_text = []
        if chunk.usage_metadata is not None:
            self.usage = _usage(chunk.usage_metadata)
        if not chunk.candidates:
            return _blocked(chunk)
        candidate = chunk.candidates[0]
        if candidate.finish_reason is not None:
            self.finish_reason = _enum_text(candidate.finish_reason)
            self.finish_message = candidate.finish_message
        found = citations(candidate)
        if found:
            self.citations = found
        if candidate.content is None:
            return None
        content = content_from_genai(candidate.content)
        self.role = content.role
        for part in content.parts:
            if _is_plain_text(part):
                self.new_text.append(part)
                last = self.parts[-1] if self.parts else None
                if last is not None and _is_plain_text(last) and last.thought == part.thought:
                    last.text = f"{last.text}{part.text}"
                    signature = getattr(part, "thought_signature", None)
                    if signature is not None:
                        setattr(last, "thought_signature", signature)  # noqa: B010
                    continue
                part = dataclasses.replace(part)
            self.parts.append(part)
        return None

    def final(self) -> LlmResponse:
        """The aggregated response (an error if the stream ended without content for a
        reason other than ``STOP``)."""
        content = Content(self.role, self.parts) if self.parts else None
        out = _candidate_response(content, self.finish_reason, self.finish_message)
        out.usage = self.usage
        out.citations = self.citations
        return out


def _is_plain_text(part: Part) -> bool:
    return (
        part.text is not None
        and part.provider_part is None
        and part.function_call is None
        and part.function_response is None
        and part.inline_data is None
        and part.file_data is None
    )
