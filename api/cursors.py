"""Opaque pagination cursors: a JSON value, base64url-encoded. One 422 naming ``cursor`` for every bad one."""

import base64
import binascii
import json
from typing import Any

from api.problems import ApiError


def encode(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value, separators=(",", ":")).encode()).decode().rstrip("=")


def invalid() -> ApiError:
    return ApiError(
        422, "invalid cursor", errors=[{"loc": ["query", "cursor"], "msg": "invalid cursor", "type": "value_error"}]
    )


def decode(cursor: str) -> Any:
    try:
        return json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise invalid() from exc


def decode_seq(cursor: str) -> int:
    """A keyset cursor on a non-negative integer sequence column."""
    seq = decode(cursor)
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        raise invalid()
    return seq


def decode_str(cursor: str) -> str:
    value = decode(cursor)
    if not isinstance(value, str):
        raise invalid()
    return value
