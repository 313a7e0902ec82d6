"""A prefixed toolset beside a plain tool: ``python -m examples.math_toolset``."""
