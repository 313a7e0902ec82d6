"""Runnable examples.

``python -m examples.<name>`` runs one of the agent folders (``function_tools``,
``approvals``, ``chart``...) offline from its ``replay.json``, or live with a Gemini key;
see ``examples/README.md``. ``python -m examples.tool_schemas`` shows tools as each
provider sees them.
"""
