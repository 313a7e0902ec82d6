"""The agent loop: ask a model, dispatch its tool calls through ``tooling``, keep sessions.

The loop itself arrives in a later release; this package currently only reserves the name.
"""

__all__: list[str] = []
