"""What the inspector costs: nothing at import, little per request.

    .venv/bin/python benchmarks/bench_inspector.py           # about a minute
    .venv/bin/python benchmarks/bench_inspector.py --quick   # ~15 s, rougher numbers

Sections: 1 ``import tooling`` and ``import agent_core`` in fresh interpreters, this tree
against the tree before the inspector (``git archive`` of ``--base``, default the parent of
the commit that added ``tooling/web``), so "not slower" is measured, not assumed; 2 what
importing the inspector adds when it is used (``tooling.web``, ``agent_core.web``); 3 the
API, over HTTP on 127.0.0.1, against the work it wraps measured in the same run: the
catalogue of an example against exporting its tools, a 200-event page of a 5,000-event
session against ``get_session``. Numbers are medians. A script, not a test.
"""

from __future__ import annotations

import asyncio
import http.client
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from _timing import fmt_ns, fmt_ratio, fresh_process_ns, load_avg, ratio, table, verdict

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _base_commit() -> str:
    added = subprocess.run(
        ["git", "log", "--diff-filter=A", "--format=%H", "--", "tooling/web/_server.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return f"{added[-1]}^" if added else "HEAD"


def _export_tree(commit: str, into: Path) -> None:
    archive = into / "tree.tar"
    subprocess.run(
        ["git", "archive", "--format=tar", "-o", str(archive), commit, "tooling", "agent_core"],
        cwd=ROOT,
        check=True,
    )
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")


def section_imports(runs: int, base: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp)
        _export_tree(base, old)
        commands = {"empty": "pass", "tooling": "import tooling", "agent_core": "import agent_core"}
        # `python -c` puts the working directory first on sys.path: each tree imports itself.
        ours = fresh_process_ns(sys.executable, commands, runs=runs, cwd=str(ROOT))
        theirs = fresh_process_ns(sys.executable, commands, runs=runs, cwd=str(old))
    rows = []
    for name in ("tooling", "agent_core"):
        now = ours[name] - ours["empty"]
        before = theirs[name] - theirs["empty"]
        r = ratio(now, before)
        rows.append(
            [
                f"import {name}",
                fmt_ns(now),
                fmt_ns(before),
                fmt_ratio(r),
                "≤ 1.10×",
                verdict(None if r is None else r <= 1.10),
            ]
        )
    return table(
        f"1. Import time, this tree against {base} (fresh interpreters, median of {runs})",
        ["import", "now", "before", "ratio", "target", "ok?"],
        rows,
        ["The inspector's modules are imported only by the commands and serve()."],
    )


def section_use(runs: int) -> str:
    commands = {
        "tooling": "import tooling",
        "tooling.web": "import tooling.web",
        "agent_core": "import agent_core",
        "agent_core.web": "import agent_core.web",
    }
    med = fresh_process_ns(sys.executable, commands, runs=runs, cwd=str(ROOT))
    rows = [
        ["tooling.web over tooling", fmt_ns(med["tooling.web"] - med["tooling"])],
        ["agent_core.web over agent_core", fmt_ns(med["agent_core.web"] - med["agent_core"])],
    ]
    return table("2. What importing the inspector adds, when used", ["import", "adds"], rows)


def _median_ns(fn, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples)


def section_api(rounds: int) -> str:
    sys.path.insert(0, str(ROOT))
    from agent_core import Agent, Event, InMemorySessionService, Part, Runner, ScriptedModel
    from agent_core._content import Content
    from agent_core.web import serve
    from tooling.cli import discover_tools, load_target
    from tooling.web import serve_tools

    rows = []
    label, module = load_target(str(ROOT / "examples" / "chart"))
    found, _ = asyncio.run(discover_tools(module, label))
    tools = [f.tool for f in found if f.tool is not None]

    def get(server, path: str) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port)
        conn.request("GET", path, headers={"X-Inspector-Token": server.token})
        response = conn.getresponse()
        response.read()
        assert response.status == 200, response.status
        conn.close()

    with serve_tools(found) as server:
        base = _median_ns(lambda: get(server, "/api/info"), rounds)
        for path in ("/api/tools", f"/api/tools/{tools[0].name}?provider=openai-strict"):
            api = _median_ns(lambda path=path: get(server, path), rounds)
            rows.append(
                [
                    f"GET {path}",
                    fmt_ns(api),
                    "GET /api/info",
                    fmt_ns(base),
                    fmt_ratio(ratio(api, base)),
                ]
            )

    service = InMemorySessionService()

    async def fill() -> None:
        session = await service.create_session(app_name="app", user_id="u", session_id="big")
        for i in range(5000):
            await service.append_event(
                session,
                Event(author="bot", content=Content("model", [Part.from_text(f"event {i}")])),
            )

    asyncio.run(fill())
    agent = Agent(name="bot", model=ScriptedModel(["-"]))
    with Runner(agent, app_name="app", session_service=service) as runner, serve(runner) as web:
        api = _median_ns(lambda: get(web, "/api/sessions/u/big?offset=0&limit=200"), rounds)
        base = _median_ns(
            lambda: asyncio.run(service.get_session(app_name="app", user_id="u", session_id="big")),
            rounds,
        )
        rows.append(
            [
                "first page of 5,000 events",
                fmt_ns(api),
                "get_session",
                fmt_ns(base),
                fmt_ratio(ratio(api, base)),
            ]
        )
    return table(
        f"3. The API over HTTP against its baselines (median of {rounds})",
        ["request", "time", "baseline", "baseline time", "ratio"],
        rows,
    )


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, rougher numbers")
    parser.add_argument("--base", default=None, help="the tree to compare imports with")
    args = parser.parse_args()
    runs = 5 if args.quick else 15
    rounds = 10 if args.quick else 40
    print(f"Python {sys.version.split()[0]} on {os.uname().sysname}; {load_avg()}\n")
    print(section_imports(runs, args.base or _base_commit()))
    print()
    print(section_use(runs))
    print()
    print(section_api(rounds))


if __name__ == "__main__":
    main()
