"""How a step ends its invocation: raise :class:`Stop` after storing the event that says why."""

from __future__ import annotations

__all__: list[str] = []


class Stop(Exception):
    """Ends the invocation after the event that explains why was emitted."""
