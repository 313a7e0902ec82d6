"""Where ids and timestamps come from; tests swap these for deterministic ones."""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__: list[str] = []

_id_factory: Callable[[str], str] = lambda prefix: f"{prefix}-{uuid.uuid4().hex}"  # noqa: E731
_clock: Callable[[], float] = time.time


def new_id(prefix: str) -> str:
    """A fresh id such as ``"e-3f2a..."`` (events) or ``"call-..."`` (function calls)."""
    return _id_factory(prefix)


def now() -> float:
    """The current time, in seconds since the epoch."""
    return _clock()


@contextmanager
def deterministic_ids(start_time: float = 1_700_000_000.0, step: float = 1.0) -> Iterator[None]:
    """Within the block, ids are ``prefix-1``, ``prefix-2``... (a counter per prefix) and
    the clock starts at ``start_time`` and advances by ``step`` per reading."""
    global _id_factory, _clock
    counters: dict[str, Iterator[int]] = {}
    ticks = itertools.count()

    def ids(prefix: str) -> str:
        return f"{prefix}-{next(counters.setdefault(prefix, itertools.count(1)))}"

    def clock() -> float:
        return start_time + step * next(ticks)

    saved = _id_factory, _clock
    _id_factory, _clock = ids, clock
    try:
        yield
    finally:
        _id_factory, _clock = saved
