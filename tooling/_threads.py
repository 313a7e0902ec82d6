"""Worker threads for sync tools run outside a scheduler."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["default_executor"]

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None


def default_executor() -> ThreadPoolExecutor:
    """The process-wide pool used by ``tool.run()`` when no scheduler supplies one."""
    global _executor
    if _executor is None:
        with _lock:
            if _executor is None:
                _executor = ThreadPoolExecutor(
                    max_workers=min(64, (os.cpu_count() or 1) + 4), thread_name_prefix="tooling"
                )
    return _executor
