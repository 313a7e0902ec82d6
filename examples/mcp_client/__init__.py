"""An agent using an MCP server's tools: ``python -m examples.mcp_client``."""
