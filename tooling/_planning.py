"""The order of one dispatch's calls: conflicts, conflict keys, folding, and who waits for whom.

Two calls *conflict* unless both tools are ``read_only`` and ``concurrency_safe``, or both
calls have a conflict key and the keys differ. Under AUTO a call starts when every earlier
call it conflicts with has finished. A call that conflicts with everything (an unsafe
tool without a key, an unknown tool) is a *barrier*; the calls between two barriers form
a *segment*, whose members wait only for the earlier members they conflict with.
SEQUENTIAL makes every call a barrier; PARALLEL makes none.

Folding: calls to a ``read_only`` and ``idempotent`` tool with equal validated arguments
run once, provided no call between them conflicts with them (a read after a write must
see the write).

The plan also keeps one :class:`CallRecord` per call: which calls it waited for and why,
what it was folded into, and when it was queued, started and ended. Tracing reads it.
"""

from __future__ import annotations

import json
import logging
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ._base import BaseTool
from ._errors import ToolError

if TYPE_CHECKING:
    from ._types import ToolCall

__all__ = ["CallRecord", "Plan", "Segment", "WaitReason", "plan_dispatch", "scheduling_of"]

logger = logging.getLogger("tooling")

#: Why a call waited for an earlier one: one of the two is a barrier (no key, not a safe
#: read), both have the same conflict key, or the strategy is SEQUENTIAL.
WaitReason = Literal["barrier", "conflict_key", "sequential"]

Mode = Literal["auto", "parallel", "sequential"]

# Tools whose serialised calls were already pointed out (once per tool, process-wide).
_hinted: weakref.WeakSet[BaseTool] = weakref.WeakSet()


@dataclass(slots=True)
class CallRecord:
    """How one call of a dispatch was scheduled.

    ``waited_for`` holds the ids of the earlier calls this call waited for (only the
    nearest ones: what they waited for is on their own records), ``wait_reasons`` why,
    position by position. ``folded_into`` is the id of the call whose run answered this
    one; ``folded_ids`` (on every call of a fold) the ids answered by one run. Times are
    ``time.perf_counter()`` values: ``queued_at`` when the dispatch began, ``started_at``
    when the call got its turn (None if it never ran), ``ended_at`` when it was answered.
    """

    index: int
    call_id: str
    name: str
    conflict_key: str | None = None
    waited_for: tuple[str, ...] = ()
    wait_reasons: tuple[WaitReason, ...] = ()
    folded_into: str | None = None
    folded_ids: tuple[str, ...] = ()
    queued_at: float = 0.0
    started_at: float | None = None
    ended_at: float | None = None


@dataclass(slots=True)
class _Slot:
    index: int
    tool: BaseTool | None
    safe: bool
    key: str | None
    barrier: bool
    fold: str | None


@dataclass(slots=True)
class Segment:
    """Calls that run together; ``deps`` maps a member to the members it waits for.

    A segment of one call that is a barrier (``barrier=True``) waits for everything
    before it and holds back everything after it.
    """

    members: list[int]
    barrier: bool = False
    deps: dict[int, list[int]] = field(default_factory=dict)


@dataclass(slots=True)
class Plan:
    """One dispatch's calls in the order they run, with folds and records."""

    segments: list[Segment]
    followers: dict[int, list[int]]
    records: list[CallRecord | None]
    safe: dict[int, bool]


def plan_dispatch(
    calls: Sequence[ToolCall],
    todo: Sequence[int],
    tools: Mapping[str, BaseTool],
    mode: Mode,
    queued_at: float,
) -> Plan:
    """Plan the calls at ``todo`` (indexes into ``calls``) under ``mode``."""
    records: list[CallRecord | None] = [None] * len(calls)
    slots: dict[int, _Slot] = {}
    for index in todo:
        slot = _slot(index, calls[index], tools.get(calls[index].name), mode)
        slots[index] = slot
        records[index] = CallRecord(
            index, calls[index].id, calls[index].name, slot.key, queued_at=queued_at
        )

    runners, followers = _fold(todo, slots, mode)
    segments = _segments(runners, slots, mode)
    _record_waits(segments, slots, records, calls, mode)
    for leader, folded in followers.items():
        ids = (calls[leader].id, *(calls[i].id for i in folded))
        for index in (leader, *folded):
            record = records[index]
            assert record is not None
            record.folded_ids = ids
            if index != leader:
                record.folded_into = calls[leader].id
    if mode == "auto":
        _hint_missing_flags(runners, slots)
    return Plan(segments, followers, records, {i: s.safe for i, s in slots.items()})


def _slot(index: int, call: ToolCall, tool: BaseTool | None, mode: Mode) -> _Slot:
    safe = tool is not None and bool(tool.read_only and tool.concurrency_safe)
    key: str | None = None
    fold: str | None = None
    foldable = (
        tool is not None
        and tool.read_only
        and tool.idempotent
        and tool.require_confirmation is False
    )
    wants_key = mode == "auto" and tool is not None and tool.conflict_key is not None
    if tool is not None and (foldable or wants_key):
        try:
            values = tool.validated_arguments(call.args)
        except ToolError:
            values = None  # the call fails on its own when it runs; no key, no fold
        if values is not None:
            if wants_key:
                key = _conflict_key(tool, values)
            if foldable:
                fold = json.dumps(values, sort_keys=True, separators=(",", ":"), default=str)
    if mode == "sequential":
        barrier = True
    elif mode == "parallel":
        barrier = False
    else:
        barrier = not safe and key is None
    return _Slot(index, tool, safe, key, barrier, fold)


def _conflict_key(tool: BaseTool, values: dict[str, Any]) -> str | None:
    rule = tool.conflict_key
    try:
        value = values.get(rule) if isinstance(rule, str) else rule(values)  # type: ignore[misc]
    except Exception:
        logger.warning(
            "tool %r: its conflict_key function failed; the call runs as a barrier",
            tool.name,
            exc_info=True,
        )
        return None
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def conflict(a: _Slot, b: _Slot, mode: Mode) -> WaitReason | None:
    """Why ``a`` and ``b`` may not overlap, or None when they may."""
    if mode == "sequential":
        return "sequential"
    if mode == "parallel" or (a.safe and b.safe):
        return None
    if a.key is not None and b.key is not None:
        return "conflict_key" if a.key == b.key else None
    return "barrier"


def _fold(
    todo: Sequence[int], slots: Mapping[int, _Slot], mode: Mode
) -> tuple[list[int], dict[int, list[int]]]:
    """The calls that run, and for each fold leader the calls its run answers."""
    runners: list[int] = []
    followers: dict[int, list[int]] = {}
    open_folds: dict[tuple[str, str], int] = {}
    for index in todo:
        slot = slots[index]
        identity = (slot.tool.name, slot.fold) if slot.fold is not None and slot.tool else None
        if identity is not None and identity in open_folds:
            followers.setdefault(open_folds[identity], []).append(index)
            continue
        if open_folds:
            if slot.barrier:
                open_folds.clear()
            else:
                for known, leader in list(open_folds.items()):
                    if conflict(slots[leader], slot, mode) is not None:
                        del open_folds[known]
        if identity is not None:
            open_folds[identity] = index
        runners.append(index)
    return runners, followers


def _segments(runners: Sequence[int], slots: Mapping[int, _Slot], mode: Mode) -> list[Segment]:
    segments: list[Segment] = []
    current: list[int] = []

    def flush() -> None:
        if current:
            segments.append(Segment(list(current), deps=_deps(current, slots, mode)))
            current.clear()

    for index in runners:
        if slots[index].barrier:
            flush()
            segments.append(Segment([index], barrier=True))
        else:
            current.append(index)
    flush()
    return segments


def _deps(members: Sequence[int], slots: Mapping[int, _Slot], mode: Mode) -> dict[int, list[int]]:
    """For each member of a segment, the earlier members it conflicts with."""
    if len(members) < 2 or mode == "parallel" or all(slots[i].safe for i in members):
        return {}
    deps: dict[int, list[int]] = {}
    for position, index in enumerate(members):
        slot = slots[index]
        found = [j for j in members[:position] if conflict(slots[j], slot, mode) is not None]
        if found:
            deps[index] = found
    return deps


def _record_waits(
    segments: Sequence[Segment],
    slots: Mapping[int, _Slot],
    records: list[CallRecord | None],
    calls: Sequence[ToolCall],
    mode: Mode,
) -> None:
    previous: Segment | None = None
    for segment in segments:
        if segment.barrier:
            record = records[segment.members[0]]
            assert record is not None
            if previous is not None:
                record.waited_for = tuple(calls[i].id for i in previous.members)
                reason: WaitReason = "sequential" if mode == "sequential" else "barrier"
                record.wait_reasons = (reason,) * len(previous.members)
        else:
            barrier = previous.members[0] if previous is not None else None
            for index in segment.members:
                record = records[index]
                assert record is not None
                waited: list[str] = [calls[barrier].id] if barrier is not None else []
                reasons: list[WaitReason] = ["barrier"] if barrier is not None else []
                for j in segment.deps.get(index, ()):
                    why = conflict(slots[j], slots[index], mode)
                    assert why is not None
                    waited.append(calls[j].id)
                    reasons.append(why)
                record.waited_for = tuple(waited)
                record.wait_reasons = tuple(reasons)
        previous = segment


def _hint_missing_flags(runners: Sequence[int], slots: Mapping[int, _Slot]) -> None:
    """Say once per tool when its calls ran one after another only for lack of flags."""
    seen: set[int] = set()
    for index in runners:
        slot = slots[index]
        tool = slot.tool
        if tool is None or not slot.barrier or tool.conflict_key is not None:
            continue
        if id(tool) not in seen:
            seen.add(id(tool))
            continue
        if tool in _hinted:
            continue
        _hinted.add(tool)
        why, fix = _missing_flags(tool)
        logger.info(
            "tool %r: two calls in one turn ran one after the other because %s; %s",
            tool.name,
            why,
            fix,
        )


def _missing_flags(tool: BaseTool) -> tuple[str, str]:
    """Which flags ``tool`` lacks to let its calls overlap, and what would fix it."""
    if tool.read_only:
        return (
            "it is not marked concurrency_safe",
            "mark it concurrency_safe=True if its calls may overlap, or give it conflict_key= "
            "so calls on different keys overlap",
        )
    return (
        "it is not marked read_only and concurrency_safe",
        "if it only reads, mark it read_only=True, concurrency_safe=True; if it writes, "
        "give it conflict_key= (a parameter, or a function of the arguments, naming what it "
        "changes) so calls on different keys overlap",
    )


def scheduling_of(tool: BaseTool) -> dict[str, Any]:
    """How AUTO schedules ``tool``'s calls: ``mode``, ``conflict_key`` and a ``summary``.

    ``mode`` is ``concurrent`` (a safe read, beside other safe reads), ``keyed`` (calls
    with different keys overlap) or ``barrier`` (runs alone).
    """
    rule = tool.conflict_key
    key = None if rule is None else rule if isinstance(rule, str) else _callable_name(rule)
    by = (
        None
        if rule is None
        else f"parameter {rule!r}"
        if isinstance(rule, str)
        else f"the function {key}"
    )
    safe = bool(tool.read_only and tool.concurrency_safe)
    if safe and rule is None:
        mode, summary = "concurrent", "runs alongside other read_only, concurrency_safe calls"
    elif safe:
        mode = "concurrent"
        summary = (
            "runs alongside other read_only, concurrency_safe calls; waits for writes with "
            f"the same key (keyed by {by})"
        )
    elif rule is not None:
        mode = "keyed"
        summary = (
            f"keyed by {by}: calls with different keys overlap, calls with the same key "
            "keep their order; a call without a key is a barrier"
        )
    else:
        mode = "barrier"
        summary = "a barrier: runs alone; " + _missing_flags(tool)[1]
    return {"mode": mode, "conflict_key": key, "summary": summary}


def _callable_name(rule: Any) -> str:
    return str(getattr(rule, "__qualname__", None) or getattr(rule, "__name__", None) or rule)
