"""Google Search as a built-in tool, and its sources: ``python -m examples.web_search``."""
