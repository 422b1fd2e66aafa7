"""Leaderboard reads that cost a page: the page, its ranks and the caller's own row are read on the board's order
index (query plans on SQLite, no scan of the board), and the plot draws the top ``top`` ranks (30 by default,
1-200) plus the caller's own best row wherever it ranks, answered ``private`` and varying with the credentials."""

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event

from tests.factories import api_key, benchmark, submission
from usecases import figures

ACCURACY = {"a": 9, "b": 8, "c": 7, "d": 6, "e": 5}
"""Correct public answers of 10 per model: a ranks 1st ... e 5th."""


@pytest.fixture(autouse=True)
def _no_remembered_figures() -> None:
    figures._CACHE.clear()


@pytest.fixture
def board(client: TestClient) -> dict[str, Any]:
    """Five models of two writers: ``bob`` made only ``d`` (rank 4), ``alice`` the others."""
    alice = api_key(client, "submissions:write", name="alice")
    bob = api_key(client, "submissions:write", name="bob")
    bench_id = benchmark(client)["id"]
    for model, correct in ACCURACY.items():
        submission(client, bench_id, bob if model == "d" else alice, model, correct)
    return {"id": bench_id, "alice": alice, "bob": bob}


def drawn(client: TestClient, monkeypatch: pytest.MonkeyPatch, url: str, **kw: Any) -> list[tuple[int, str, bool]]:
    """(rank, model, own) of the rows the plot would draw (the drawing itself is not made)."""
    seen: list[figures.Drawing] = []

    def capture(drawing: figures.Drawing, fmt: str, *, shared: bool) -> figures.Plot:
        seen.append(drawing)
        return figures.Plot(b"<svg/>", "image/svg+xml", placeholder=False, shared=shared)

    monkeypatch.setattr(figures, "figure", capture)
    r = client.get(url, **kw)
    assert r.status_code == 200, r.text
    (drawing,) = seen
    return [(row["rank"], row["model"], row["own"]) for row in drawing.data["rows"]]


@pytest.mark.slow
def test_the_plot_draws_the_top_ranks_and_the_callers_own_row(
    client: TestClient, board: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"/v1/benchmarks/{board['id']}/leaderboard/plot"
    assert drawn(client, monkeypatch, url) == [(i + 1, m, False) for i, m in enumerate(ACCURACY)]
    assert drawn(client, monkeypatch, url, params={"top": 2}) == [(1, "a", False), (2, "b", False)]
    assert drawn(client, monkeypatch, url, params={"top": 2}, headers=board["bob"]) == [
        (1, "a", False),
        (2, "b", False),
        (4, "d", True),
    ]
    assert drawn(client, monkeypatch, url, params={"top": 2}, headers=board["alice"]) == [
        (1, "a", True),
        (2, "b", False),
    ]
    assert drawn(client, monkeypatch, url, params={"top": 5}, headers=board["bob"])[3] == (4, "d", True)


def test_top_out_of_1_to_200_is_a_422_naming_it(client: TestClient) -> None:
    for top in ("0", "201", "1.5", "x"):
        r = client.get("/v1/benchmarks/any/leaderboard/plot", params={"top": top})
        assert r.status_code == 422 and r.headers["content-type"] == "application/problem+json"
        assert [e["loc"] for e in r.json()["errors"]] == [["query", "top"]]


def test_the_callers_plot_is_private_and_shows_its_row(client: TestClient, board: dict[str, Any]) -> None:
    r = client.get(f"/v1/benchmarks/{board['id']}/leaderboard/plot", params={"top": 1}, headers=board["bob"])
    assert r.status_code == 200 and r.headers["content-type"] == "image/svg+xml"
    assert r.headers.get("x-plot-status") != "placeholder"
    assert r.headers["cache-control"].startswith("private") and r.headers["vary"] == "Authorization, X-API-Key"
    text = r.content.decode()
    assert "1. a" in text and "4. d (yours)" in text and "2. b" not in text


@pytest.mark.slow
def test_pages_ranks_and_own_rows_are_read_on_the_order_index(
    client: TestClient, board: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every statement touching the board on a deep page and on the plot with a key: an index search on
    ``ix_leaderboard_entry_order`` or ``ix_leaderboard_entry_key_order`` (the baselines ahead of a rank on the partial
    ``ix_leaderboard_entry_baseline``), never a scan of the table. SQLite's plans only: PostgreSQL plans a table of
    five rows as it likes (bench/scale.py and docs/performance.md read its plans on 10,000 rows)."""
    services = client.app.state.services  # type: ignore[attr-defined]
    if services.engines.read.dialect.name != "sqlite":
        pytest.skip("query plans are checked on SQLite")
    statements: list[tuple[str, Any]] = []

    def record(conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool) -> None:
        if "leaderboard_entry" in statement:
            statements.append((statement, params))

    event.listen(services.engines.read, "before_cursor_execute", record)
    try:
        first = client.get(f"/v1/benchmarks/{board['id']}/leaderboard", params={"limit": 2}).json()
        second = client.get(
            f"/v1/benchmarks/{board['id']}/leaderboard", params={"limit": 2, "cursor": first["next_cursor"]}
        ).json()
        drawn(client, monkeypatch, f"/v1/benchmarks/{board['id']}/leaderboard/plot", headers=board["bob"])
    finally:
        event.remove(services.engines.read, "before_cursor_execute", record)
    assert [(r["rank"], r["model"]) for r in second["items"]] == [(3, "c"), (4, "d")]
    assert len(statements) >= 5
    with services.engines.read.connect() as conn:
        for statement, params in statements:
            plan = [row[3] for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, params)]
            board_steps = [p for p in plan if "leaderboard_entry" in p]
            assert board_steps and all(p.startswith("SEARCH leaderboard_entry USING") for p in board_steps), plan
            indexes = ("ix_leaderboard_entry_order", "ix_leaderboard_entry_key_order", "ix_leaderboard_entry_baseline")
            assert all(any(ix in p for ix in indexes) for p in board_steps), plan
