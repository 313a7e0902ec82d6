"""Two plain functions as tools: ``python -m examples.function_tools``."""
