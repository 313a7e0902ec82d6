"""One invocation of an agent: model turns, tool calls, requests waiting on the user, tracing."""
