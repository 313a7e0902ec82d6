"""Runnable examples: ``python -m examples.tool_schemas`` shows tools as each provider sees them."""
