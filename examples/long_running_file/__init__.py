"""A long-running tool that processes a file in steps: ``python -m examples.long_running_file``."""
