"""A tool using artifacts and memory: ``python -m examples.document_analysis``."""
