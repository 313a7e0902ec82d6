"""A stand-in build, run by the streaming_build example as a real subprocess.

``python build_script.py TARGET`` prints its steps on stdout and its warnings and errors
on stderr, a line at a time with a short pause, and exits 0 when the target builds,
1 when it fails, 2 for an unknown target.
"""

import sys
import time

TARGETS = {
    "app": [
        ("out", "resolving dependencies"),
        ("out", "compiling core (12 modules)"),
        ("err", "warning: core/cache.py:41: unused variable 'stale'"),
        ("out", "compiling api (7 modules)"),
        ("out", "linking app"),
        ("out", "build finished: dist/app"),
    ],
    "docs": [
        ("out", "collecting pages (9 found)"),
        ("out", "rendering guide"),
        ("err", "error: guide/setup.md:12: broken link to 'install.md'"),
        ("err", "error: 1 page failed to render"),
    ],
}


def main(target: str) -> int:
    steps = TARGETS.get(target)
    if steps is None:
        print(f"error: unknown target {target!r}", file=sys.stderr, flush=True)
        return 2
    for stream, line in steps:
        print(line, file=sys.stdout if stream == "out" else sys.stderr, flush=True)
        time.sleep(0.02)
    return 1 if any(line.startswith("error:") for _, line in steps) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ""))
