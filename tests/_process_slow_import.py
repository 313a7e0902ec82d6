"""A tool module whose import takes two seconds in a worker process (not in the host)."""

from __future__ import annotations

import sys
import time

from tooling import tool

if "tooling._worker" in sys.modules:  # imported by a worker, for its first call
    time.sleep(2.0)


@tool(isolation="process", timeout=1.5)
def quick() -> str:
    """Answers at once once imported."""
    return "quick"
