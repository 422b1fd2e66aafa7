"""Keyset pages over HTTP: the page body every listing shares and the bounds of the ``limit``/``cursor`` query."""

from typing import Generic, TypeVar

from pydantic import BaseModel

T = TypeVar("T")
MAX_LIMIT = 100
"""The largest page a listing answers."""
MAX_CURSOR = 512
"""The longest cursor accepted (a leaderboard's keyset cursor is the longest the service writes)."""


class Page(BaseModel, Generic[T]):
    """Rows and the cursor of the next page (null on the last page): pass ``next_cursor`` back as ``cursor``."""

    items: list[T]
    next_cursor: str | None
