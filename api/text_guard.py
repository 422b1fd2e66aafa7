"""ASGI middleware reading a JSON body once and rejecting NUL and lone surrogates (U+D800-U+DFFF) in any text of a
request with a 422 naming the field: PostgreSQL cannot store either in a text column, and no text field of the API
needs them. The body is never parsed here: one regular-expression pass finds a bad character, and a vectorised
scan of the bytes before it names its field. The body is kept in the request state for the run middleware, so it
is read from the socket once."""

import json
import re
from urllib.parse import parse_qsl

import anyio
import numpy as np
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api import limiters
from api.problems import send_problem
from usecases import json_bounds

_CANDIDATE = re.compile(
    rb"\\u(?:0000|[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    rb"|[dD][c-fC-F][0-9a-fA-F]{2}(?<!\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}))"
    rb"|\xed[\xa0-\xbf]"
)
"""A ``\\u0000`` escape, a lone ``\\uD800``-``\\uDFFF`` escape (a high one not followed by a low one, or a low one
not preceded by a high one), or a raw UTF-8-encoded surrogate (Python's JSON decoder passes those through). An
escape counts only after an even run of backslashes (``\\\\u0000`` is a backslash and ``u0000``)."""
_BAD = re.compile("[\x00\ud800-\udfff]")
MESSAGE = "text may not contain NUL (U+0000) or lone surrogates (U+D800-U+DFFF)"
BODY = "body"
"""Request-state key of the JSON body this middleware read (bytes)."""
_BODY_METHODS = {"POST", "PUT", "PATCH"}
_STEP = np.zeros(256, np.int8)
_STEP[[ord("["), ord("{")]] = 1
_STEP[[ord("]"), ord("}")]] = -1


def bad_text_offset(body: bytes) -> int | None:
    """The byte offset of the first NUL or lone surrogate a JSON body's text would decode to, else None."""
    for found in _CANDIDATE.finditer(body):
        start = found.start()
        if body[start] != 0x5C:
            return start
        run = start - len(body[:start].rstrip(b"\\"))
        if run % 2 == 0:
            return start
    return None


def _key_text(token: bytes) -> str:
    try:
        return str(json.loads(token))
    except ValueError:
        return token[1:-1].decode("utf-8", "backslashreplace")


def bad_text_loc(body: bytes, offset: int) -> tuple[str | int, ...]:
    """The location of the string holding byte ``offset`` of a JSON body: the object keys and array indices of
    its enclosing containers (the key itself when the string is an object key), from vectorised passes over the
    bytes (string contents masked by quote parity, depth by cumulative sum, commas counted per container)."""
    text = np.frombuffer(body, np.uint8)
    quotes = json_bounds.quote_positions(text)
    k = int(np.searchsorted(quotes, offset, side="right")) - 1
    inside_string = k >= 0 and k % 2 == 0 and k + 1 < quotes.size
    start = int(quotes[k]) if inside_string else offset
    head = text[:start]
    masked = ~json_bounds.outside_strings(head, quotes[quotes < start])
    step = np.where(masked, np.int8(0), _STEP[head])
    depth = np.cumsum(step, dtype=np.int16)
    top = int(depth[-1]) if depth.size else 0
    openers = np.flatnonzero(step == 1)
    levels = depth[openers]
    loc: list[str | int] = []
    for level in range(1, top + 1):
        opener = int(openers[levels == level][-1])
        stop = int(openers[levels == level + 1][-1]) if level < top else start
        inside = slice(opener + 1, stop)
        here = (depth[inside] == level) & ~masked[inside]
        if text[opener] == ord("["):
            loc.append(int(np.count_nonzero(here & (head[inside] == ord(",")))))
            continue
        colons = np.flatnonzero(here & (head[inside] == ord(":")))
        commas = np.flatnonzero(here & (head[inside] == ord(",")))
        if colons.size == 0 or (commas.size and commas[-1] > colons[-1]):
            break
        close = int(np.searchsorted(quotes, opener + 1 + int(colons[-1]), side="left")) - 1
        loc.append(_key_text(body[int(quotes[close - 1]) : int(quotes[close]) + 1]))
    if inside_string and body[int(quotes[k + 1]) + 1 :].lstrip()[:1] == b":":
        loc.append(_key_text(body[start : int(quotes[k + 1]) + 1]))
    return tuple(loc)


def _body_kind(scope: Scope) -> str | None:
    """``json``, ``ndjson`` (JSON Lines: one JSON text per line) or None for a body this middleware leaves alone."""
    if scope.get("method") not in _BODY_METHODS:
        return None
    for k, v in scope.get("headers", ()):
        if k == b"content-type":
            media = v.decode("latin-1").split(";", 1)[0].strip().lower()
            if media == "application/x-ndjson":
                return "ndjson"
            json_media = media == "application/json" or (media.startswith("application/") and media.endswith("+json"))
            return "json" if json_media else None
    return None


def _query_loc(scope: Scope) -> tuple[str | int, ...] | None:
    raw: bytes = scope.get("query_string", b"")
    if b"%00" not in raw:
        return None
    for k, v in parse_qsl(raw.decode("latin-1"), keep_blank_values=True):
        if "\x00" in k or "\x00" in v:
            return ("query", k)
    return None


class TextGuardMiddleware:
    """Checks the path, the query and a JSON body (read once, kept in the request state as ``BODY``)."""

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
        kind = _body_kind(scope)
        if kind is None:
            await self.app(scope, receive, send)
            return
        lines = kind == "ndjson"
        if _declared_length(scope) < INLINE_SCAN_BYTES:
            await self._guard(scope, receive, send, lines)
            return
        async with limiters.large_bodies():  # the body is read only when its turn comes (memory stays bounded)
            await self._guard(scope, receive, send, lines)

    async def _guard(self, scope: Scope, receive: Receive, send: Send, lines: bool) -> None:
        buffer = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message], receive), send)
                return
            buffer += message.get("body", b"")
            if not message.get("more_body", False):
                break
        body = bytes(buffer)
        del buffer
        if len(body) < INLINE_SCAN_BYTES:
            found = _bad_loc(body, lines)
        else:
            found = await anyio.to_thread.run_sync(_scan_large, body, lines, limiter=limiters.heavy_bodies())
        if found is not None:
            await _reject(scope, send, ("body", *found))
            return
        scope.setdefault("state", {})[BODY] = body
        await self.app(scope, _replay([{"type": "http.request", "body": body, "more_body": False}], receive), send)


def _declared_length(scope: Scope) -> int:
    """The body's declared ``Content-Length`` (a chunked body without one counts as large)."""
    for k, v in scope.get("headers", ()):
        if k == b"content-length":
            text = v.decode("latin-1").strip()
            return int(text) if text.isdigit() else INLINE_SCAN_BYTES
    return INLINE_SCAN_BYTES


INLINE_SCAN_BYTES = 64 * 1024
"""A smaller body is scanned on the event loop; a larger one in a worker thread, one at a time per process."""


def _scan_large(body: bytes, lines: bool) -> tuple[str | int, ...] | None:
    """The scan of a large body, holding the process's one permit for large bodies (its temporary arrays are a
    few bytes per body byte, and it holds the interpreter while it runs)."""
    with json_bounds.LARGE_BODIES:
        return _bad_loc(body, lines)


def _bad_loc(body: bytes, lines: bool = False) -> tuple[str | int, ...] | None:
    """Where the first bad character is: in a JSON body its path, in JSON Lines its 1-based line then the path
    inside that line."""
    offset = bad_text_offset(body)
    if offset is None:
        return None
    if not lines:
        return bad_text_loc(body, offset)
    start = body.rfind(b"\n", 0, offset) + 1
    end = body.find(b"\n", offset)
    line = body[start : end if end >= 0 else len(body)]
    return (body.count(b"\n", 0, start) + 1, *bad_text_loc(line, offset - start))


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A ``receive`` that hands out ``messages`` first, then defers to the real one."""
    pending = list(messages)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()

    return replayed


def _printable(part: str | int) -> str | int:
    """A location part as valid text: a NUL or a lone surrogate in an object key is written as its escape."""
    if isinstance(part, int) or not _BAD.search(part):
        return part
    return _BAD.sub(lambda m: f"\\u{ord(m.group()):04x}", part)


async def _reject(scope: Scope, send: Send, loc: tuple[str | int, ...]) -> None:
    error = {"loc": [_printable(p) for p in loc], "msg": MESSAGE, "type": "string_invalid_character"}
    await send_problem(
        send,
        422,
        "The request failed validation.",
        instance=scope.get("state", {}).get("request_id"),
        errors=[error],
    )
