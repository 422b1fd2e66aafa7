"""Keyset paging: opaque cursors (a JSON value, base64url-encoded; every bad one is the same error naming
``cursor``) and the one way a use case cuts a page from ``limit + 1`` fetched rows."""

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from typing import Any, Generic, NamedTuple, TypeVar

from usecases.errors import InvalidFields, invalid

T = TypeVar("T")


def encode(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value, separators=(",", ":")).encode()).decode().rstrip("=")


def invalid_cursor() -> InvalidFields:
    return invalid("invalid cursor", ("query", "cursor"), "value_error")


def decode(cursor: str) -> Any:
    try:
        return json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise invalid_cursor() from exc


def decode_seq(cursor: str | None) -> int | None:
    """A keyset cursor on a non-negative integer sequence column (None: the first page)."""
    if cursor is None:
        return None
    seq = decode(cursor)
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        raise invalid_cursor()
    return seq


def decode_str(cursor: str | None) -> str | None:
    if cursor is None:
        return None
    value = decode(cursor)
    if not isinstance(value, str):
        raise invalid_cursor()
    return value


class Page(NamedTuple, Generic[T]):
    """A page of rows and the cursor of the next one (None on the last page)."""

    items: list[T]
    next_cursor: str | None


def keyset_page(fetch: Callable[[int], Sequence[T]], limit: int, key: Callable[[T], Any]) -> Page[T]:
    """The first ``limit`` rows ``fetch(limit + 1)`` returns, in the order of the keyset, and the cursor of the next
    page: the encoded ``key`` of the last row kept, when a further row shows that one follows."""
    rows = fetch(limit + 1)
    items = list(rows[:limit])
    return Page(items, encode(key(items[-1])) if len(rows) > limit else None)
