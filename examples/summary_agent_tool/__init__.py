"""An agent used as another agent's tool: ``python -m examples.summary_agent_tool``."""
