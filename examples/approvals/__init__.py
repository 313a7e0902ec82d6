"""A destructive tool that waits for the user's approval: ``python -m examples.approvals``."""
