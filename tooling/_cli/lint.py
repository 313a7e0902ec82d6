"""``tooling inspect --lint``: what the tool policies make visible, tool by tool.

Each finding is ``{"tool", "code", "message"}``; codes: ``name.renamed`` (a provider is
given another name for the tool), ``name.collision`` (two tools one provider would see
under one name: an agent refuses them), ``scopes.hidden`` (not offered, nor run, unless
the run grants the scopes), ``available`` (offered only while its check says so),
``guardrails``, ``budget`` (calls per run, result tokens), ``retries.not_idempotent``
(automatic retries need ``idempotent``; only the model's retry asks count).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._base import BaseTool
from .._export.names import provider_aliases, renamed_for

__all__: list[str] = []


def lint(tools: Sequence[BaseTool]) -> list[dict[str, Any]]:
    """The findings for ``tools``, in their order."""
    found: list[dict[str, Any]] = []

    def note(tool: str, code: str, message: str) -> None:
        found.append({"tool": tool, "code": code, "message": message})

    try:
        provider_aliases(t.name for t in tools)
    except ValueError as exc:
        note("", "name.collision", str(exc))
    renamed = renamed_for(t.name for t in tools)
    for t in tools:
        for provider, wire in renamed.get(t.name, {}).items():
            note(t.name, "name.renamed", f"{provider} is given the name {wire!r} (mapped back)")
        if t.scopes:
            note(
                t.name,
                "scopes.hidden",
                f"offered and run only when the run grants {', '.join(t.scopes)}",
            )
        if t.available is not None:
            label = getattr(t.available, "__qualname__", "a check")
            note(t.name, "available", f"offered only in turns where {label}(context) is true")
        if t.guardrails or t.output_guardrails:
            note(
                t.name,
                "guardrails",
                f"{len(t.guardrails)} before the run, {len(t.output_guardrails)} after it",
            )
        limits = []
        if t.max_calls_per_run is not None:
            limits.append(f"{t.max_calls_per_run} calls per run")
        if t.max_result_tokens is not None:
            limits.append(f"results cut past {t.max_result_tokens} tokens")
        if t.retries:
            limits.append(f"{t.retries} retries")
        if limits:
            note(t.name, "budget", ", ".join(limits))
        if t.retries and not t.idempotent and (t.retry_on or t.timeout is not None):
            note(
                t.name,
                "retries.not_idempotent",
                "retry_on and timeouts are not retried automatically: the tool is not "
                "idempotent (only the model's ToolError(retry=True) asks count)",
            )
    return found


def print_findings(findings: Sequence[dict[str, Any]], out: Any) -> None:
    """One line per finding, or a line saying there is none."""
    if not findings:
        out.write("lint: nothing to report\n")
        return
    for f in findings:
        where = f["tool"] or "(tools)"
        out.write(f"{where}: {f['code']}: {f['message']}\n")
