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


def test_a_cursor_is_compact_json_in_unpadded_base64url() -> None:
    # {"a":1} is the 7 bytes 7b 22 61 22 3a 31 7d; base64 "eyJhIjoxfQ==" (RFC 4648), padding dropped; with
    # json.dumps's default separators the text would be {"a": 1} (8 bytes, "eyJhIjogMX0").
    assert cursors.encode({"a": 1}) == "eyJhIjoxfQ"
    assert cursors.encode(0) == "MA"  # "0" = 0x30: "MA=="
    assert cursors.encode([1, 2]) == "WzEsMl0"  # "[1,2]": "WzEsMl0="; "[1, 2]" would be "WzEsIDJd"
    assert cursors.decode("eyJhIjoxfQ") == {"a": 1}


@pytest.mark.parametrize("value", [0, 1, 14, 99, 12345, 2**40])
def test_every_non_negative_sequence_round_trips(value: int) -> None:
    assert cursors.decode_seq(cursors.encode(value)) == value


def test_a_cursor_of_every_length_modulo_four_decodes() -> None:
    # "7" ... "77777" are 1 to 5 bytes: 2, 3, 4, 6 and 7 base64 characters unpadded (0, 2 and 3 mod 4).
    for text in ("7", "77", "777", "7777", "77777"):
        encoded = cursors.encode(int(text))
        assert "=" not in encoded
        assert cursors.decode_seq(encoded) == int(text)


def test_a_sequence_cursor_rejects_a_stray_character_and_every_error_is_the_same() -> None:
    # "MQ" is "1"; a stray "." makes three characters, which need one "=", and "MQ.=" is not valid base64.
    for bad in ("MQ.", "!!", "e30"):
        with pytest.raises(InvalidFields) as refused:
            cursors.decode_seq(bad)
        assert refused.value.status == 422
        assert [(e["loc"], e["type"]) for e in refused.value.errors] == [(["query", "cursor"], "value_error")]


def test_no_cursor_is_the_first_page() -> None:
    assert cursors.decode_seq(None) is None
    assert cursors.decode_str(None) is None


def test_a_string_cursor_round_trips_and_refuses_other_json() -> None:
    assert cursors.decode_str(cursors.encode("run-42")) == "run-42"
    assert cursors.decode_str("InJ1bi00MiI") == "run-42"  # '"run-42"' in base64url, by hand
    for bad in (cursors.encode(7), cursors.encode(None), cursors.encode(["x"]), "!!"):
        with pytest.raises(InvalidFields) as refused:
            cursors.decode_str(bad)
        assert refused.value.errors[0]["loc"] == ["query", "cursor"]
