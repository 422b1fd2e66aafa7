"""Opaque pagination cursors: a JSON value, base64url-encoded. Every bad one is the same error naming ``cursor``."""

import base64
import binascii
import json
from typing import Any

from usecases.errors import InvalidFields, invalid


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
