"""What a session store costs: appends and whole runs, in 1 and 8 processes, per store.

    python benchmarks/bench_sessions.py            # ours: memory, SQLite, PostgreSQL
    python benchmarks/bench_sessions.py --adk      # and google-adk's session services
    python benchmarks/bench_sessions.py --quick    # fewer operations, rougher numbers
    python benchmarks/bench_sessions.py --scale --adk   # N concurrent runs on PostgreSQL

For each store (in memory, SQLite, PostgreSQL) and each kind of work (``append_event``
with a small state delta; a whole run with 5 tool calls) it starts 1, then 8 processes
(``_sessions_side.py``), each on a session of its own in one shared store, starts them
together and reports the operations per second of all of them together (wall clock,
first start to last end) and the p50/p99 latency of one operation. With ``--adk``
google-adk's ``DatabaseSessionService`` (its ``InMemorySessionService`` for memory) does
the same work on the same server and file, from its own venv (``.bench-venvs/adk``,
with google-adk, aiosqlite and psycopg; skipped when missing).

``--scale`` (PostgreSQL only) runs ``--runs`` (1,000) whole runs at once in one process,
each on a session of its own, ours with the pool sized by the URL (``?max_size=``,
``--pool``, 50), google-adk's ``DatabaseSessionService`` with a pool of the same size; it reports
runs per second, p50/p99 of one run and the ratio.

PostgreSQL: ``--dsn`` or ``AGENT_CORE_TEST_POSTGRES``, else a throwaway server started
here (``tests/_pg_server.py``: fsync off, a Unix socket). Each case gets a fresh schema
(SQLite: a fresh file). Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import urllib.parse
import uuid
from pathlib import Path

from _timing import dist_version, fmt_ratio, load_avg, table

HERE = Path(__file__).parent
ROOT = HERE.parent
SIDE = HERE / "_sessions_side.py"
DEFAULT_ADK_VENV = ROOT / ".bench-venvs" / "adk"
STORES = ("memory", "sqlite", "postgres")
PROCESSES = (1, 8)
COUNTS = {"append": 400, "run": 60}
QUICK_COUNTS = {"append": 100, "run": 15}


def with_schema(dsn: str, schema: str) -> str:
    parts = urllib.parse.urlsplit(dsn)
    query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query) if k != "options"]
    query.append(("options", f"-csearch_path={schema}"))
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


class Stores:
    """Fresh stores per case: a SQLite file, a PostgreSQL schema."""

    def __init__(self, dsn: str, folder: Path) -> None:
        self.dsn = dsn
        self.folder = folder

    def fresh(self, store: str, impl: str) -> str:
        name = f"{impl}_{uuid.uuid4().hex[:10]}"
        if store == "memory":
            return "memory://"
        if store == "sqlite":
            path = self.folder / f"{name}.db"
            return f"sqlite+aiosqlite:///{path}" if impl == "adk" else f"sqlite:///{path}"
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}")
        url = with_schema(self.dsn, name)
        return "postgresql+psycopg://" + url.split("://", 1)[1] if impl == "adk" else url


def side_command(python: str, impl: str, url: str, work: str, count: int, tag: str) -> list[str]:
    options = {"--impl": impl, "--store": url, "--work": work, "--count": str(count), "--tag": tag}
    return [python, str(SIDE), *(part for item in options.items() for part in item)]


def prepare(python: str, impl: str, url: str) -> None:
    """One process opens the store first (its tables made; google-adk's
    DatabaseSessionService fails when several processes make them at once)."""
    subprocess.run(
        side_command(python, impl, url, "append", 0, "setup"),
        input="",
        capture_output=True,
        check=True,
        cwd=str(HERE),
        text=True,
    )


def run_case(python: str, impl: str, url: str, work: str, processes: int, count: int) -> dict:
    if url != "memory://":
        prepare(python, impl, url)
    procs = [
        subprocess.Popen(
            side_command(python, impl, url, work, count, f"p{i}"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=str(HERE),
        )
        for i in range(processes)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdin is not None
            line = proc.stdout.readline().strip()
            if line != "ready":
                raise RuntimeError(f"{impl} side failed: {line}{proc.communicate()[1][-2000:]}")
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=900)
            if proc.returncode != 0:
                raise RuntimeError(f"{impl} side failed: {err[-2000:]}")
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    latencies = sorted(ns for r in results for ns in r["latencies"])
    wall = max(r["end"] for r in results) - min(r["start"] for r in results)
    return {
        "rate": len(latencies) / wall,
        "p50": statistics.median(latencies) / 1e6,
        "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] / 1e6,
    }


def adk_python(venv: Path) -> str | None:
    python = venv / "bin" / "python"
    if not python.exists():
        return None
    probe = subprocess.run(
        [str(python), "-c", "import google.adk.sessions, aiosqlite, psycopg"], capture_output=True
    )
    return str(python) if probe.returncode == 0 else None


def adk_version(python: str) -> str:
    out = subprocess.run(
        [python, "-c", "from importlib.metadata import version; print(version('google-adk'))"],
        capture_output=True,
        text=True,
    )
    return out.stdout.strip() or "?"


def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmark the session stores.")
    parser.add_argument("--quick", action="store_true", help="fewer operations per process")
    parser.add_argument("--adk", action="store_true", help="google-adk side by side")
    parser.add_argument("--adk-venv", type=Path, default=DEFAULT_ADK_VENV)
    parser.add_argument("--dsn", default=os.environ.get("AGENT_CORE_TEST_POSTGRES", ""))
    parser.add_argument("--only", default="", help="comma-separated stores, e.g. sqlite,postgres")
    parser.add_argument("--scale", action="store_true", help="concurrent runs on PostgreSQL")
    parser.add_argument("--runs", type=int, default=1000, help="concurrent runs (--scale)")
    parser.add_argument("--pool", type=int, default=50, help="our pool's max_size (--scale)")
    opts = parser.parse_args()
    if opts.scale:
        scale_main(opts)
        return
    counts = QUICK_COUNTS if opts.quick else COUNTS
    stores = [s for s in STORES if not opts.only or s in opts.only.split(",")]

    adk = adk_python(opts.adk_venv) if opts.adk else None
    why_not = "" if adk or not opts.adk else f"no venv with google-adk at {opts.adk_venv}"
    server = None
    dsn = opts.dsn
    if "postgres" in stores and not dsn:
        sys.path.insert(0, str(ROOT / "tests"))
        from _pg_server import PgServer

        server = PgServer.start()
        dsn = server.dsn
    try:
        with tempfile.TemporaryDirectory() as folder:
            made = Stores(dsn, Path(folder))
            rows = []
            for store in stores:
                for work in ("append", "run"):
                    for processes in PROCESSES:
                        count = counts[work]
                        ours = run_case(
                            sys.executable,
                            "ours",
                            made.fresh(store, "ours"),
                            work,
                            processes,
                            count,
                        )
                        theirs = (
                            run_case(adk, "adk", made.fresh(store, "adk"), work, processes, count)
                            if adk
                            else None
                        )
                        row = [
                            store,
                            "append_event" if work == "append" else "5-call run",
                            str(processes),
                            f"{ours['rate']:,.0f}",
                            f"{ours['p50']:.2f}",
                            f"{ours['p99']:.2f}",
                        ]
                        if theirs is not None:
                            row += [
                                f"{theirs['rate']:,.0f}",
                                f"{theirs['p50']:.2f}",
                                f"{theirs['p99']:.2f}",
                                fmt_ratio(ours["rate"] / theirs["rate"]),
                            ]
                        rows.append(row)
                        print(" | ".join(row), file=sys.stderr, flush=True)
    finally:
        if server is not None:
            server.stop()
    header = ["store", "work", "procs", "ours ops/s", "p50 ms", "p99 ms"]
    if adk:
        header += ["adk ops/s", "adk p50 ms", "adk p99 ms", "ours/adk ops"]
    notes = [
        f"per process: {counts['append']} appends or {counts['run']} runs, one after another,"
        " each process on a session of its own in one shared store; ops/s = all processes'"
        " operations / wall time from the first start to the last end.",
        "append_event: an event with a 2-key state delta (one session key, one user: key);"
        " 5-call run: user message, a model turn with 5 calls, 5 responses, the final text.",
        "PostgreSQL: a local server over a Unix socket"
        + (" (throwaway, fsync off)" if server is not None else "")
        + "; SQLite: a file in a temp dir (WAL). One process opens each store first (making"
        " the tables): google-adk's DatabaseSessionService fails with 'Schema version not"
        " found' when 8 processes make its tables at once.",
        f"agent-tooling {dist_version('agent-tooling')}"
        + (f", google-adk {adk_version(adk)} (DatabaseSessionService)" if adk else "")
        + f"; {load_avg()}.",
    ]
    if why_not:
        notes.append(f"google-adk: skipped ({why_not}).")
    print(table("Session stores: appends and runs, 1 and 8 processes", header, rows, notes))


def scale_main(opts: argparse.Namespace) -> None:
    """N runs at once on PostgreSQL, ours against google-adk's DatabaseSessionService."""
    adk = adk_python(opts.adk_venv) if opts.adk else None
    server = None
    dsn = opts.dsn
    if not dsn:
        sys.path.insert(0, str(ROOT / "tests"))
        from _pg_server import PgServer

        server = PgServer.start()
        dsn = server.dsn
    runs = 200 if opts.quick else opts.runs
    os.environ["BENCH_POOL"] = str(opts.pool)  # google-adk's side sizes its pool alike
    rows = []
    try:
        with tempfile.TemporaryDirectory() as folder:
            made = Stores(dsn, Path(folder))
            url = made.fresh("postgres", "ours")
            url += ("&" if "?" in url else "?") + f"max_size={opts.pool}"
            ours = run_case(sys.executable, "ours", url, "scale", 1, runs)
            theirs = (
                run_case(adk, "adk", made.fresh("postgres", "adk"), "scale", 1, runs)
                if adk
                else None
            )
    finally:
        if server is not None:
            server.stop()
    row = [
        f"{runs:,}",
        f"{ours['rate']:,.0f}",
        f"{ours['p50']:.0f}",
        f"{ours['p99']:.0f}",
    ]
    if theirs is not None:
        row += [
            f"{theirs['rate']:,.0f}",
            f"{theirs['p50']:.0f}",
            f"{theirs['p99']:.0f}",
            fmt_ratio(ours["rate"] / theirs["rate"]),
        ]
    rows.append(row)
    header = ["concurrent runs", "ours runs/s", "p50 ms", "p99 ms"]
    if theirs is not None:
        header += ["adk runs/s", "adk p50 ms", "adk p99 ms", "ours/adk"]
    notes = [
        "each run: the user's message, a model turn with 5 calls of an async tool, the 5"
        " responses, the final text; all runs started together in one process, each on a"
        " session of its own; runs/s = runs / wall time.",
        f"ours: PostgresSessionService from the URL with ?max_size={opts.pool}; google-adk:"
        " DatabaseSessionService (postgresql+psycopg) with pool_size the same and no overflow"
        " (its default pool, 5 + 10, times out before 1,000 runs end).",
        "PostgreSQL: a local server over a Unix socket"
        + (" (throwaway, fsync off)" if server is not None else "")
        + f"; agent-tooling {dist_version('agent-tooling')}"
        + (f", google-adk {adk_version(adk)}" if adk else "")
        + f"; {load_avg()}.",
    ]
    if opts.adk and not adk:
        notes.append(f"google-adk: skipped (no venv with google-adk at {opts.adk_venv}).")
    print(table("Runs at scale on PostgreSQL", header, rows, notes))


if __name__ == "__main__":
    main()
