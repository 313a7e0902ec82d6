"""Where a tool's code runs off the event loop: threads, sync generators, worker processes."""
