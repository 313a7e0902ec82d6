"""A report a worker finishes after the chat exits: ``python -m examples.durable_report``."""
