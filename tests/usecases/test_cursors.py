"""usecases/cursors.py: keyset pages cut from ``limit + 1`` fetched rows walk a listing exactly once, in order,
whatever the page size; every malformed cursor is the same 422 naming ``cursor``."""

import pytest

from usecases import cursors
from usecases.errors import InvalidFields

ROWS = [{"seq": s, "name": f"r{s}"} for s in range(17, 0, -1)]
"""A listing newest first (descending ``seq``), as the job, run and submission listings are."""


def _fetch_below(before: int | None):
    """A repository's keyset query: rows below ``before`` (all without one), at most ``n``."""

    def fetch(n: int) -> list[dict]:
        return [r for r in ROWS if before is None or r["seq"] < before][:n]

    return fetch


@pytest.mark.parametrize("limit", [1, 2, 3, 5, 16, 17, 18, 100])
def test_walking_the_cursors_visits_every_row_once_in_order(limit: int) -> None:
    seen: list[dict] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = cursors.keyset_page(_fetch_below(cursors.decode_seq(cursor)), limit, key=lambda r: r["seq"])
        seen += page.items
        pages += 1
        assert len(page.items) <= limit
        if page.next_cursor is None:
            break
        assert len(page.items) == limit
        cursor = page.next_cursor
    assert seen == ROWS
    assert pages == -(-len(ROWS) // limit)  # ceil(17 / limit): no empty last page


def test_a_page_asks_for_one_row_more_than_it_returns() -> None:
    asked: list[int] = []

    def fetch(n: int) -> list[dict]:
        asked.append(n)
        return ROWS[:n]

    page = cursors.keyset_page(fetch, 4, key=lambda r: r["seq"])
    assert asked == [5]
    assert [r["seq"] for r in page.items] == [17, 16, 15, 14]
    assert cursors.decode_seq(page.next_cursor) == 14


def test_an_empty_listing_is_one_empty_last_page() -> None:
    assert cursors.keyset_page(lambda n: [], 10, key=lambda r: r["seq"]) == cursors.Page([], None)


@pytest.mark.parametrize("bad", ["!!", "e30", cursors.encode(-1), cursors.encode(True), cursors.encode("7")])
def test_a_malformed_sequence_cursor_is_an_error_naming_cursor(bad: str) -> None:
    with pytest.raises(InvalidFields) as refused:
        cursors.decode_seq(bad)
    assert refused.value.errors[0]["loc"] == ["query", "cursor"]
