"""What a function tool builds on first use: its spec, shared by the tool and its copies
(bound methods, prefixed copies), built once under a lock."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .spec import ToolSpec
    from .target import Target

__all__: list[str] = []


class SpecCell:
    """Builds a target's spec on first use; shared by a tool and all its copies."""

    __slots__ = ("_lock", "description", "long_running", "owner", "spec", "target")

    def __init__(self, target: Target, description: str | None, long_running: bool) -> None:
        self.target = target
        self.description = description
        self.long_running = long_running
        self.spec: ToolSpec | None = None
        self.owner: type | None = None  # the class a method tool is defined in
        self._lock = threading.Lock()

    def build(self) -> ToolSpec:
        with self._lock:
            if self.spec is None:
                from .spec import build_spec  # pydantic's model machinery, on first use

                self.spec = build_spec(
                    self.target,
                    description=self.description,
                    long_running=self.long_running,
                    owner=self.owner,
                )
            return self.spec
