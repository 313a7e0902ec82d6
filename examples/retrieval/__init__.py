"""Search over documents shipped with the example: ``python -m examples.retrieval``."""
