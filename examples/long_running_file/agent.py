"""A long-running generator tool: process a real file in steps, reporting progress.

``process_file`` reads a text file from this example's ``files/`` folder a few lines at
a time and counts the words in each chunk. After each chunk it yields an update
(``{"status": "running", "percent", "time_left_s", ...}``); each update reaches the
caller at once as an intermediate function response, while the model waits. When the
file is done, the generator's ``return`` value is the final response the model sees:
the totals, the words per chunk and the most frequent words.

``long_running=True`` also tells the model, in the tool's description, not to call the
tool again for the same request while it runs. ``STEP_SECONDS`` sets the pause after
each chunk (to make the progress visible; set it to 0 for speed).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Generator
from pathlib import Path
from typing import Any

from agent_core import Agent
from tooling import tool

FILES = Path(__file__).with_name("files")
STEP_SECONDS = 0.05
_WORD = re.compile(r"[A-Za-z']+")
_COMMON = frozenset(  # words too common to count
    _WORD.findall(
        "a an and are as at be by can for from in is it its not now of on one or that the "
        "this to two was what when with"
    )
)


@tool(long_running=True, read_only=True)
def process_file(
    file_name: str, lines_per_chunk: int = 6
) -> Generator[dict[str, Any], None, dict[str, Any]]:
    """Count the words of a text file, chunk by chunk, reporting progress as it goes.

    Args:
        file_name: The name of a file in the example's files folder, e.g. "field_notes.txt".
        lines_per_chunk: How many lines to read per step.

    Returns:
        {"status": "completed", "file", "lines", "words", "words_per_chunk",
        "top_words"} at the end, or {"status": "error", "error_message"} when the file
        cannot be read.
    """
    path = (FILES / file_name).resolve()
    if path.parent != FILES.resolve() or not path.is_file():
        available = sorted(p.name for p in FILES.iterdir() if p.is_file())
        return {
            "status": "error",
            "error_message": f"No file named {file_name!r}. Available: {', '.join(available)}.",
        }
    lines = path.read_text(encoding="utf-8").splitlines()
    step = max(lines_per_chunk, 1)
    chunks = [lines[i : i + step] for i in range(0, len(lines), step)]
    started = time.monotonic()
    counts: Counter[str] = Counter()
    words_per_chunk: list[int] = []
    for index, chunk in enumerate(chunks, start=1):
        words = [w.lower() for line in chunk for w in _WORD.findall(line)]
        counts.update(w for w in words if w not in _COMMON)
        words_per_chunk.append(len(words))
        time.sleep(STEP_SECONDS)  # stands in for real work on a large file
        elapsed = time.monotonic() - started
        if index < len(chunks):
            yield {
                "status": "running",
                "percent": round(100 * index / len(chunks)),
                "time_left_s": round(elapsed / index * (len(chunks) - index), 2),
                "chunk": index,
                "chunks": len(chunks),
                "words_so_far": sum(words_per_chunk),
            }
    return {
        "status": "completed",
        "file": file_name,
        "lines": len(lines),
        "words": sum(words_per_chunk),
        "words_per_chunk": words_per_chunk,
        "top_words": [[word, n] for word, n in counts.most_common(5)],
    }


root_agent = Agent(
    name="long_running_file",
    model="gemini-2.5-flash",
    description="Processes text files in steps and reports on them.",
    instruction=(
        "You process text files with the process_file tool. It reports progress while "
        "it works; wait for its final response (status 'completed' or 'error') before "
        "answering, then give the totals and the most frequent words. If it answers "
        "with status 'error', say which files are available."
    ),
    tools=[process_file],
)
