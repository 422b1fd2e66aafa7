"""ASGI middleware rejecting NUL and lone surrogates (U+D800-U+DFFF) in any text of a request with a 422 naming the
field: PostgreSQL cannot store either in a text column, and no text field of the API needs them."""

import json
import re
from typing import Any
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.problems import PROBLEM_MEDIA_TYPE, ErrorItem, Problem

_HINT = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])|\xed[\xa0-\xbf]|\x00")
"""Bytes without a match cannot decode to a NUL or a surrogate: a ``\\u0000`` or ``\\uD800``-``\\uDFFF`` escape, a
UTF-8-encoded surrogate (Python's JSON decoder passes those through), or a NUL byte (UTF-16/32 bodies)."""
_BAD = re.compile("[\x00\ud800-\udfff]")
MESSAGE = "text may not contain NUL (U+0000) or lone surrogates (U+D800-U+DFFF)"
_BODY_METHODS = {"POST", "PUT", "PATCH"}


def bad_text_loc(value: Any, loc: tuple[str | int, ...] = ()) -> tuple[str | int, ...] | None:
    """The location of the first string (object key or value) holding a NUL or a lone surrogate, else None."""
    if isinstance(value, str):
        return loc if _BAD.search(value) else None
    if isinstance(value, dict):
        for k, v in value.items():
            found = (*loc, k) if _BAD.search(k) else bad_text_loc(v, (*loc, k))
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = bad_text_loc(v, (*loc, i))
            if found is not None:
                return found
    return None


def _json_body(scope: Scope) -> bool:
    if scope.get("method") not in _BODY_METHODS:
        return False
    for k, v in scope.get("headers", ()):
        if k == b"content-type":
            media = v.decode("latin-1").split(";", 1)[0].strip().lower()
            return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))
    return False


def _query_loc(scope: Scope) -> tuple[str | int, ...] | None:
    raw: bytes = scope.get("query_string", b"")
    if b"%00" not in raw:
        return None
    for k, v in parse_qsl(raw.decode("latin-1"), keep_blank_values=True):
        if "\x00" in k or "\x00" in v:
            return ("query", k)
    return None


class TextGuardMiddleware:
    """Checks the path, the query and a JSON body; a body is parsed here only when its bytes could hold such a
    character (a cheap byte scan), so ordinary bodies cost one regular-expression pass."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loc = ("path",) if "\x00" in scope.get("path", "") else _query_loc(scope)
        if loc is not None:
            await _reject(scope, send, loc)
            return
        if not _json_body(scope):
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        chunks: list[bytes] = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if _HINT.search(body):
            try:
                found = bad_text_loc(json.loads(body))
            except (ValueError, RecursionError):
                found = None  # not JSON: the route answers 400
            if found is not None:
                await _reject(scope, send, ("body", *found))
                return
        pending = [{"type": "http.request", "body": body, "more_body": False}] if len(messages) > 1 else messages

        async def replay() -> Message:
            return pending.pop(0) if pending else await receive()

        await self.app(scope, replay, send)


def _printable(part: str | int) -> str | int:
    """A location part as valid text: a NUL or a lone surrogate in an object key is written as its escape."""
    if isinstance(part, int) or not _BAD.search(part):
        return part
    return _BAD.sub(lambda m: f"\\u{ord(m.group()):04x}", part)


async def _reject(scope: Scope, send: Send, loc: tuple[str | int, ...]) -> None:
    problem = Problem(
        title="Unprocessable Content",
        status=422,
        detail="The request failed validation.",
        instance=scope.get("state", {}).get("request_id"),
        errors=[ErrorItem(loc=[_printable(p) for p in loc], msg=MESSAGE, type="string_invalid_character")],
    )
    payload = problem.model_dump_json(exclude_none=True).encode()
    headers = [(b"content-type", PROBLEM_MEDIA_TYPE.encode()), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": 422, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
