"""Exporters: a tool's schema in the shape each model API or protocol expects.

One module per target (``gemini``, ``openai``, ``anthropic``, ``mcp``), each with
``export(tool, **options) -> (result, diagnostics)``; ``BaseTool.to_*`` calls them once
and caches the result. ``_schema_ops`` holds the JSON-schema transforms they share.
Exporters read a tool's schemas and never change them: what they return is new.
"""
