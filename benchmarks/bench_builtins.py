"""What the local built-ins cost: run_python, and a search over 10,000 documents.

    python benchmarks/bench_builtins.py           # SQLite and PostgreSQL
    python benchmarks/bench_builtins.py --quick   # fewer rounds
    python benchmarks/bench_builtins.py --only sqlite

``run_python("print(1)")``: every call starts a fresh interpreter, so "cold" is the
first call of a process (the subprocess machinery loaded on first use) and "warm" the
p50 of the calls after it; the baseline, measured in the same run, is a bare
``subprocess.run([python, "-I", "-c", "print(1)"])``. Goal: warm p50 ≤ 30 ms.

Search: 10,000 generated documents (a vocabulary of 2,000 words, 40-120 words each)
indexed once, then 200 queries of 1-3 words through ``retriever.search(q, 5)``: p50 and
p95 of one search. PostgreSQL: ``--dsn`` or ``AGENT_CORE_TEST_POSTGRES``, else a
throwaway server (``tests/_pg_server.py``). Not run in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import fmt_ratio, load_avg, table

HERE = Path(__file__).parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from tooling.builtin import (  # noqa: E402
    Document,
    LocalCodeExecution,
    PostgresFtsRetriever,
    SqliteFtsRetriever,
)


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def bench_code(rounds: int) -> list[list[str]]:
    runner = LocalCodeExecution()
    started = time.perf_counter()
    first = await runner.run("print(1)")
    cold = time.perf_counter() - started
    assert first["stdout"] == "1\n", first
    ours, bare = [], []
    for _ in range(rounds):  # interleaved, so a slow phase of the machine hits both
        t0 = time.perf_counter()
        await runner.run("print(1)")
        ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", "print(1)"], capture_output=True, check=True)
        bare.append(time.perf_counter() - t0)
    warm, floor = statistics.median(ours) * 1000, statistics.median(bare) * 1000
    return [
        ["run_python, cold (first call)", f"{cold * 1000:.1f} ms", "", "", ""],
        [
            "run_python, warm p50",
            f"{warm:.1f} ms",
            f"{floor:.1f} ms",
            fmt_ratio(warm / floor),
            "yes" if warm <= 30 else "NO",
        ],
        ["run_python, warm p95", f"{_ms(ours, 0.95):.1f} ms", f"{_ms(bare, 0.95):.1f} ms", "", ""],
    ]


def corpus(count: int, seed: int = 7) -> tuple[list[Document], list[str]]:
    rng = random.Random(seed)
    vocabulary = [f"w{i}{rng.choice('aeiou')}{rng.choice('nrst')}" for i in range(2000)]
    weights = [1 / (i + 1) for i in range(len(vocabulary))]  # Zipf-like, as real text
    docs = [
        Document(
            f"d{i}",
            " ".join(rng.choices(vocabulary, weights, k=rng.randint(40, 120))),
            {"title": f"Document {i}"},
        )
        for i in range(count)
    ]
    queries = [" ".join(rng.sample(vocabulary[:800], rng.randint(1, 3))) for _ in range(200)]
    return docs, queries


async def bench_search(store: SqliteFtsRetriever | PostgresFtsRetriever, name: str, quick: bool):
    docs, queries = corpus(10_000)
    started = time.perf_counter()
    for i in range(0, len(docs), 1000):
        await store.add(docs[i : i + 1000])
    indexed = time.perf_counter() - started
    queries = queries[:60] if quick else queries
    await store.search(queries[0], 5)  # warm the cache and the connection
    times = []
    for query in queries:
        t0 = time.perf_counter()
        hits = await store.search(query, 5)
        times.append(time.perf_counter() - t0)
        assert len(hits) <= 5
    return [
        f"search 10,000 docs, {name}",
        f"{_ms(times, 0.5):.2f} ms",
        f"{_ms(times, 0.95):.2f} ms",
        f"{indexed:.1f} s",
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmark the local built-in tools.")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="", help="code,sqlite,postgres (comma-separated)")
    parser.add_argument("--dsn", default=os.environ.get("AGENT_CORE_TEST_POSTGRES", ""))
    opts = parser.parse_args()
    wanted = set(opts.only.split(",")) if opts.only else {"code", "sqlite", "postgres"}
    notes = [f"Python {sys.version.split()[0]}, {load_avg()}"]
    if "code" in wanted:
        rows = await bench_code(10 if opts.quick else 40)
        print(table("run_python", ["case", "ours", "bare subprocess", "ratio", "≤ 30 ms"], rows))
        print()
    rows = []
    if "sqlite" in wanted:
        with tempfile.TemporaryDirectory() as folder:
            store = SqliteFtsRetriever(Path(folder) / "docs.db")
            rows.append(await bench_search(store, "SQLite FTS5", opts.quick))
            store.close()
    if "postgres" in wanted:
        server = None
        dsn = opts.dsn
        if not dsn:
            sys.path.insert(0, str(ROOT / "tests"))
            from _pg_server import PgServer

            server = PgServer.start()
            dsn = server.dsn
        try:
            pg = PostgresFtsRetriever(dsn, table=f"bench_docs_{os.getpid()}")
            rows.append(await bench_search(pg, "PostgreSQL FTS", opts.quick))
            await pg.close()
        finally:
            if server is not None:
                server.stop()
    if rows:
        print(table("search", ["case", "p50", "p95", "indexing"], rows, notes))


if __name__ == "__main__":
    asyncio.run(main())
