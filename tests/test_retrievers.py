"""Full-text retrievers on SQLite (FTS5, BM25) and PostgreSQL (ts_rank), and the tool over them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tooling.builtin import Document, PostgresFtsRetriever, SqliteFtsRetriever

CORPUS = [
    Document(
        "tides", "The moon pulls the sea: tides rise and fall twice a day.", {"title": "Tides"}
    ),
    Document(
        "moon-moon",
        "Moon phases: the moon waxes, the moon wanes, the moon is full.",
        {"title": "Moon phases"},
    ),
    Document("bread", "Bread needs flour, water, salt and time to rise.", {"title": "Bread"}),
    Document("sea-salt", "Sea salt is made by letting sea water evaporate in the sun."),
]

NASTY = [
    '"',
    "*",
    "NEAR",
    "NEAR(moon sea",
    "(((",
    "moon)",
    "a:b",
    "-moon",
    "^sea",
    "'",
    "moon AND",
    "OR",
    "\\",
    "%",
    "moon & | ! sea",
    "<->",
    "':*",
]


@pytest.fixture(params=["sqlite", "postgres"])
async def retriever(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[SqliteFtsRetriever | PostgresFtsRetriever]:
    if request.param == "sqlite":
        store: SqliteFtsRetriever | PostgresFtsRetriever = SqliteFtsRetriever(tmp_path / "d.db")
    else:
        store = PostgresFtsRetriever(request.getfixturevalue("postgres_dsn"))
    await store.add(CORPUS)
    yield store
    if isinstance(store, PostgresFtsRetriever):
        await store.close()
    else:
        store.close()


async def test_more_matches_rank_first(
    retriever: SqliteFtsRetriever | PostgresFtsRetriever,
) -> None:
    hits = await retriever.search("moon", 5)
    assert [d.id for d in hits] == ["moon-moon", "tides"]
    assert hits[0].score is not None and hits[1].score is not None
    assert hits[0].score > hits[1].score
    assert hits[0].metadata == {"title": "Moon phases"}
    assert hits[0].snippet and "moon" in hits[0].snippet.lower()


async def test_any_word_matches_and_k_bounds_the_hits(
    retriever: SqliteFtsRetriever | PostgresFtsRetriever,
) -> None:
    hits = await retriever.search("sea bread", 10)
    assert {d.id for d in hits} == {"tides", "bread", "sea-salt"}
    assert len(await retriever.search("sea bread", 2)) == 2


async def test_fts_syntax_is_searched_as_text(
    retriever: SqliteFtsRetriever | PostgresFtsRetriever,
) -> None:
    for query in NASTY:
        hits = await retriever.search(query, 5)  # never an error from the database
        words = {w for w in ("moon", "sea") if w in query.lower()}
        if words:
            assert hits, query
        else:
            assert all(isinstance(h, Document) for h in hits)


async def test_add_replaces_by_id_and_delete_removes(
    retriever: SqliteFtsRetriever | PostgresFtsRetriever,
) -> None:
    await retriever.add([Document("bread", "Sourdough starter", {"title": "Sourdough"})])
    assert await retriever.search("flour", 5) == []
    [hit] = await retriever.search("sourdough", 5)
    assert hit.id == "bread" and hit.metadata == {"title": "Sourdough"}
    await retriever.delete(["bread", "no-such-id"])
    assert await retriever.search("sourdough", 5) == []


async def test_an_empty_query_finds_nothing(
    retriever: SqliteFtsRetriever | PostgresFtsRetriever,
) -> None:
    assert await retriever.search("", 5) == []
    assert await retriever.search("  ?! ", 5) == []


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=40))
async def test_any_text_is_a_query_on_sqlite(query: str) -> None:
    store = SqliteFtsRetriever(":memory:")
    await store.add(CORPUS)
    hits = await store.search(query, 3)
    assert len(hits) <= 3
    store.close()


def test_a_table_name_must_be_plain() -> None:
    with pytest.raises(ValueError, match="table name"):
        SqliteFtsRetriever(":memory:", table="docs; DROP TABLE x")
    with pytest.raises(ValueError, match="table name"):
        PostgresFtsRetriever("postgresql://nowhere/db", table="a b")


async def test_the_tool_sends_hits_to_the_model_and_keeps_documents_as_the_artifact(
    tmp_path: Path,
) -> None:
    from tooling import Scheduler, ToolCall, ToolError
    from tooling.builtin import retriever_tool

    store = SqliteFtsRetriever(tmp_path / "t.db")
    await store.add(CORPUS)
    search = retriever_tool(store, k=2)
    assert search.name == "search_documents"
    assert search.read_only and search.concurrency_safe
    assert search.to_openai()["function"]["parameters"]["required"] == ["query"]
    [response] = await Scheduler([search]).dispatch(
        [ToolCall(id="c1", name="search_documents", args={"query": "moon NEAR("})]
    )
    hits = response.response["hits"]
    assert [h["id"] for h in hits] == ["moon-moon", "tides"]
    assert hits[0]["title"] == "Moon phases" and "moon" in hits[0]["snippet"].lower()
    assert "text" not in hits[0], "the full text stays out of what the model sees"
    assert [d["id"] for d in response.artifact] == ["moon-moon", "tides"]
    assert response.artifact[0]["text"] == CORPUS[1].text
    with pytest.raises(ToolError) as raised:
        await search.run({"query": "   "})
    assert raised.value.code == "tool.bad_query"
    store.close()


def test_a_retriever_needs_a_search_method() -> None:
    from tooling.builtin import retriever_tool

    with pytest.raises(TypeError, match="search"):
        retriever_tool(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k must"):
        retriever_tool(SqliteFtsRetriever(":memory:"), k=0)
