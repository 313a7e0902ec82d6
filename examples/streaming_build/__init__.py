"""A tool streaming a subprocess's output: ``python -m examples.streaming_build``."""
