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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .._base import BaseTool, CheckedArguments
from .._errors import ToolError

if TYPE_CHECKING:
    from .._types import ToolCall

__all__: list[str] = []

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
    #: The call's arguments when planning had to check them (a key, a fold): the
    #: dispatch reuses them instead of checking again.
    checked: CheckedArguments | None = None


_NO_DEPS: dict[int, list[int]] = {}  # shared, never written


class Segment:
    """Calls that run together; ``deps`` maps a member to the members it waits for.

    A segment with ``barrier=True`` is a chain of barriers: its calls run one after
    another, each waiting for everything before it and holding back everything after.
    """

    __slots__ = ("barrier", "deps", "members")

    def __init__(
        self, members: list[int], barrier: bool = False, deps: dict[int, list[int]] | None = None
    ) -> None:
        self.members = members
        self.barrier = barrier
        self.deps = deps if deps else _NO_DEPS


class Plan:
    """One dispatch's calls in the order they run, with their folds.

    ``segments`` in order; ``followers`` maps a fold's leader (the call that runs) to the
    calls its run answers. :meth:`records` says who waited for whom.
    """

    __slots__ = ("followers", "mode", "segments", "slots")

    def __init__(
        self,
        segments: list[Segment],
        followers: dict[int, list[int]],
        slots: dict[int, _Slot] | None,
        mode: Mode,
    ) -> None:
        self.segments = segments
        self.followers = followers
        self.slots = slots  # None: no call has a key or can fold (the plain path)
        self.mode = mode

    def checked(self, index: int) -> CheckedArguments | None:
        """The arguments of call ``index`` if planning checked them (else None)."""
        slot = self.slots.get(index) if self.slots is not None else None
        return slot.checked if slot is not None else None

    def folded_ids(self, leader: int, calls: Sequence[ToolCall]) -> tuple[str, ...]:
        """The ids one run of ``leader`` answers (``leader`` first), or ``()``."""
        folded = self.followers.get(leader)
        if not folded:
            return ()
        return (calls[leader].id, *(calls[i].id for i in folded))

    def records(
        self,
        calls: Sequence[ToolCall],
        queued_at: float,
        started_at: Mapping[int, float] | None = None,
        ended_at: Mapping[int, float] | None = None,
    ) -> list[CallRecord | None]:
        """One :class:`CallRecord` per call (None for calls that were never planned)."""
        started_at = started_at or {}
        ended_at = ended_at or {}
        records: list[CallRecord | None] = [None] * len(calls)

        def record(index: int) -> CallRecord:
            call = calls[index]
            slot = self.slots.get(index) if self.slots is not None else None
            made = CallRecord(
                index,
                call.id,
                call.name,
                slot.key if slot is not None else None,
                queued_at=queued_at,
                started_at=started_at.get(index),
                ended_at=ended_at.get(index),
            )
            records[index] = made
            return made

        reason: WaitReason = "sequential" if self.mode == "sequential" else "barrier"
        previous: Segment | None = None
        for segment in self.segments:
            if segment.barrier:
                before = previous.members if previous is not None else []
                for index in segment.members:
                    made = record(index)
                    if before:
                        made.waited_for = tuple(calls[i].id for i in before)
                        made.wait_reasons = (reason,) * len(before)
                    before = [index]
            else:
                barrier = previous.members[-1] if previous is not None else None
                for index in segment.members:
                    made = record(index)
                    waited = [calls[barrier].id] if barrier is not None else []
                    reasons: list[WaitReason] = ["barrier"] if barrier is not None else []
                    for j in segment.deps.get(index, ()):
                        assert self.slots is not None
                        why = conflict(self.slots[j], self.slots[index], self.mode)
                        assert why is not None
                        waited.append(calls[j].id)
                        reasons.append(why)
                    made.waited_for = tuple(waited)
                    made.wait_reasons = tuple(reasons)
            previous = segment
        for leader, folded in self.followers.items():
            ids = self.folded_ids(leader, calls)
            leading = records[leader]
            assert leading is not None
            leading.folded_ids = ids
            for index in folded:
                made = record(index)
                made.folded_ids = ids
                made.folded_into = ids[0]
                made.ended_at = ended_at.get(index)
        return records


def plan_dispatch(
    calls: Sequence[ToolCall],
    todo: Sequence[int],
    tools: Mapping[str, BaseTool],
    mode: Mode,
) -> Plan:
    """Plan the calls at ``todo`` (indexes into ``calls``) under ``mode``."""
    if len(todo) == 1 and not _needs_arguments(tools.get(calls[todo[0]].name), mode):
        return Plan([Segment([todo[0]], True)], {}, None, mode)  # one call: nothing to order
    names = {calls[i].name for i in todo}
    if any(_needs_arguments(tools.get(name), mode) for name in names):
        return _plan_with_arguments(calls, todo, tools, mode)
    # The plain path: no keys, no folds; a call is a barrier or a safe read.
    safe = {n: mode == "parallel" or (mode == "auto" and _safe(tools.get(n))) for n in names}
    if todo and all(safe.values()):  # PARALLEL, or safe reads only: all at once
        return Plan([Segment(list(todo))], {}, None, mode)
    segments: list[Segment] = []
    current: list[int] = []
    serial: dict[int, int] = {}
    for index in todo:
        name = calls[index].name
        if safe[name]:
            current.append(index)
            continue
        tool = tools.get(name)
        if current:
            segments.append(Segment(current))
            current = []
        if segments and segments[-1].barrier:
            segments[-1].members.append(index)  # a chain of barriers: one after another
        else:
            segments.append(Segment([index], True))
        if tool is not None and mode == "auto":
            serial[id(tool)] = serial.get(id(tool), 0) + 1
    if current:
        segments.append(Segment(current))
    if any(count > 1 for count in serial.values()):
        _hint_missing_flags([t for t in tools.values() if serial.get(id(t), 0) > 1])
    return Plan(segments, {}, None, mode)


def _safe(tool: BaseTool | None) -> bool:
    return tool is not None and bool(tool.read_only and tool.concurrency_safe)


def _needs_arguments(tool: BaseTool | None, mode: Mode) -> bool:
    """Whether planning must look at a call's arguments (a key, or a possible fold)."""
    if tool is None:
        return False
    if mode == "auto" and tool.conflict_key is not None:
        return True
    return bool(tool.read_only and tool.idempotent and tool.require_confirmation is False)


def _plan_with_arguments(
    calls: Sequence[ToolCall],
    todo: Sequence[int],
    tools: Mapping[str, BaseTool],
    mode: Mode,
) -> Plan:
    slots: dict[int, _Slot] = {}
    followers: dict[int, list[int]] = {}
    open_folds: dict[tuple[str, str], int] = {}
    segments: list[Segment] = []
    current: list[int] = []  # the open segment's members
    serial: dict[int, int] = {}  # id(tool) -> barrier calls of a tool without flags or key

    for index in todo:
        call = calls[index]
        tool = tools.get(call.name)
        slot = _slot(index, call, tool, mode)
        slots[index] = slot

        if slot.fold is not None:
            leader = open_folds.get((call.name, slot.fold))
            if leader is not None:
                followers.setdefault(leader, []).append(index)
                continue
        if open_folds:  # a call that conflicts with a fold's leader closes that fold
            if slot.barrier:
                open_folds.clear()
            else:
                for known, leader in list(open_folds.items()):
                    if conflict(slots[leader], slot, mode) is not None:
                        del open_folds[known]
        if slot.fold is not None:
            open_folds[call.name, slot.fold] = index

        if not slot.barrier:
            current.append(index)
            continue
        if current:
            segments.append(Segment(current, deps=_deps(current, slots, mode)))
            current = []
        if segments and segments[-1].barrier:
            segments[-1].members.append(index)  # a chain of barriers: one after another
        else:
            segments.append(Segment([index], True))
        if tool is not None and tool.conflict_key is None and mode == "auto":
            serial[id(tool)] = serial.get(id(tool), 0) + 1
    if current:
        segments.append(Segment(current, deps=_deps(current, slots, mode)))
    if any(count > 1 for count in serial.values()):
        _hint_missing_flags([t for t in tools.values() if serial.get(id(t), 0) > 1])
    return Plan(segments, followers, slots, mode)


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
    checked: CheckedArguments | None = None
    if tool is not None and (foldable or wants_key):
        try:
            checked = tool.check_arguments(call.args)
            values = checked.values
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
    return _Slot(index, tool, safe, key, barrier, fold, checked)


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


def _hint_missing_flags(serialised: Sequence[BaseTool]) -> None:
    """Say once per tool when its calls ran one after another only for lack of flags."""
    for tool in serialised:
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
    """How AUTO schedules ``tool``'s calls: ``mode``, ``conflict_key``, ``isolation`` and
    a ``summary``.

    ``mode`` is ``concurrent`` (a safe read, beside other safe reads), ``keyed`` (calls
    with different keys overlap) or ``barrier`` (runs alone); ``isolation`` is
    ``process`` for a tool that runs in a worker process, else ``thread``.
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
    isolation = getattr(tool, "isolation", "thread")
    if isolation == "process":
        summary += "; runs in a worker process (killed on timeout or cancellation)"
    return {"mode": mode, "conflict_key": key, "isolation": isolation, "summary": summary}


def _callable_name(rule: Any) -> str:
    return str(getattr(rule, "__qualname__", None) or getattr(rule, "__name__", None) or rule)
