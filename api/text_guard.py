"""ASGI middleware reading a JSON body once and rejecting NUL and lone surrogates (U+D800-U+DFFF) in any text of a
request with a 422 naming the field: PostgreSQL cannot store either in a text column, and no text field of the API
needs them. The body is never parsed here: one regular-expression pass finds a bad character, and a vectorised
scan of the bytes before it, 256 KiB at a time (``json_bounds.blocks``), names its field, so the scan's memory does
not grow with the body. The body is kept in the request state for the run middleware, so it is read from the
socket once."""

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
_NONE = np.zeros(0, np.int64)


def bad_text_offset(body: bytes) -> int | None:
    """The byte offset of the first NUL or lone surrogate a JSON body's text would decode to, else None."""
    for found in _CANDIDATE.finditer(body):
        start = found.start()
        if body[start] != 0x5C or start == 0 or body[start - 1] != 0x5C or _run_before(body, start) % 2 == 0:
            return start
    return None


def _run_before(body: bytes, end: int) -> int:
    """How many backslashes end ``body[:end]``, read back in pieces of 64 bytes doubling up to 256 KiB."""
    n, size = 0, 64
    while end > 0:
        part = body[max(0, end - size) : end]
        kept = len(part.rstrip(b"\\"))
        n += len(part) - kept
        if kept:
            break
        end -= len(part)
        size = min(2 * size, 1 << 18)
    return n


def _key_text(token: bytes) -> str:
    try:
        return str(json.loads(token))
    except ValueError:
        return token[1:-1].decode("utf-8", "backslashreplace")


class _Levels:
    """Per nesting level (1 the outermost), what a ``loc`` needs of the container last opened there: the offset of
    its opening byte, the commas directly inside it, the offsets of its last comma and last colon (-1: none), the
    two unescaped quotes before that colon (its key), and how many quotes precede the colon (0, 1, or 2 for two or
    more). The arrays grow with the deepest level seen, up to ``LOC_LEVELS``."""

    FIELDS = ("opener", "commas", "comma", "colon", "key_open", "key_close", "key_quotes")

    def __init__(self) -> None:
        self.size = 0
        self.arrays = {name: np.zeros(0, np.int64) for name in self.FIELDS}

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    def reserve(self, top: int) -> None:
        """Room for levels up to ``top``."""
        if top < self.size:
            return
        size = max(top + 1, 2 * self.size, 64)
        for name, old in self.arrays.items():
            grown = np.full(size, -1 if name in ("comma", "colon") else 0, np.int64)
            grown[: self.size] = old
            self.arrays[name] = grown
        self.size = size


LOC_LEVELS = 2**15 - 1
"""The deepest level a ``loc`` names (a body nested deeper is undecodable: no JSON parser of the API accepts it)."""
_COLON_NEXT = re.compile(rb"[ \t\n\r\x0b\x0c]*:")
"""ASCII whitespace (what ``bytes.strip`` removes), then a colon: the string before is an object key."""


def _last_per_level(levels: np.ndarray, top: int) -> np.ndarray:
    """For each level 0..top, the index of its last entry in ``levels`` (-1 for none)."""
    last = np.full(top + 1, -1, np.int64)
    np.maximum.at(last, levels, np.arange(levels.size))
    return last


def _fold(levels: _Levels, at: np.ndarray, marks: np.ndarray, depth: int, held: np.ndarray, before: int) -> int:
    """Updates ``levels`` with a block's marks (bytes ``marks`` at offsets ``at``) entered at nesting ``depth``;
    ``held`` are the unescaped quotes from the last two before the block to the block's end, ``before`` how many
    quotes precede ``held``. Returns the depth after the block."""
    step = _STEP.take(marks)
    level = np.cumsum(step, dtype=np.int64)
    level += depth
    after = int(level[-1])
    top = min(int(level.max()), LOC_LEVELS)
    if top < 1:
        return after
    levels.reserve(top)
    tracked = (level >= 1) & (level <= top)
    since = np.full(top + 1, -1, np.int64)  # per level, the index of its last opener in this block
    opens = np.flatnonzero(tracked & (step == 1))
    if opens.size:
        last = _last_per_level(level[opens], top)
        reset = np.flatnonzero(last >= 0)
        since[reset] = opens[last[reset]]
        levels["opener"][reset] = at[since[reset]]
        levels["commas"][reset] = 0
        levels["comma"][reset] = -1
        levels["colon"][reset] = -1
    for byte in (ord(","), ord(":")):
        idx = np.flatnonzero(tracked & (marks == byte))
        idx = idx[idx > since[level[idx]]]
        if idx.size == 0:
            continue
        last = _last_per_level(level[idx], top)
        got = np.flatnonzero(last >= 0)
        chosen = at[idx[last[got]]]
        if byte == ord(","):
            levels["commas"][: top + 1] += np.bincount(level[idx], minlength=top + 1)
            levels["comma"][got] = chosen
            continue
        levels["colon"][got] = chosen
        j = np.searchsorted(held, chosen)
        levels["key_quotes"][got] = np.minimum(before + j, 2)
        if held.size:
            levels["key_open"][got] = held[np.maximum(j - 2, 0)]
            levels["key_close"][got] = held[np.maximum(j - 1, 0)]
    return after


def bad_text_loc(body: bytes, offset: int, begin: int = 0, end: int | None = None) -> tuple[str | int, ...]:
    """The location of the string holding byte ``offset`` of the JSON text ``body[begin:end]``: the object keys and
    array indices of its enclosing containers (the key itself when the string is an object key). One scan, block by
    block (``json_bounds.blocks``), of the brackets, commas and colons outside strings before ``offset`` keeps, per
    nesting level, the state of the container last opened there, so what it allocates does not grow with the text;
    the quotes after ``offset`` are read up to the one closing the string."""
    end = len(body) if end is None else end
    levels = _Levels()
    depth = before = 0
    last = _NONE
    for at, marks, found in json_bounds.blocks(body, begin, offset):
        held = np.r_[last, found]
        if marks.size:
            depth = _fold(levels, at, marks, depth, held, before)
        before += held.size - min(held.size, 2)
        last = held[-2:]
    quotes = before + last.size
    rest = (found for _, _, found in json_bounds.blocks(body, offset, end))
    following = next((found for found in rest if found.size), _NONE)
    inside_string = quotes % 2 == 1 and following.size > 0
    start = int(last[-1]) if inside_string else offset
    final: np.ndarray | None = None  # the text's last two quotes, read when needed
    loc: list[str | int] = []
    for level in range(1, min(depth, LOC_LEVELS) + 1):
        if body[int(levels["opener"][level])] == ord("["):
            loc.append(int(levels["commas"][level]))
            continue
        colon = int(levels["colon"][level])
        if colon < 0 or levels["comma"][level] > colon:
            break
        held_before = int(levels["key_quotes"][level])
        if held_before == 2:
            loc.append(_key_text(body[int(levels["key_open"][level]) : int(levels["key_close"][level]) + 1]))
        elif held_before == 1:  # the whole-text scan read the key between the last quote and the first: ""
            loc.append("")
        else:  # no quote before the colon: the whole-text scan read the text's last string
            if final is None:
                final = np.r_[last, following]
                for found in rest:
                    final = np.r_[final[-2:], found]
            if final.size < 2:
                break
            loc.append(_key_text(body[int(final[-2]) : int(final[-1]) + 1]))
    if inside_string and _COLON_NEXT.match(body, int(following[0]) + 1, end):
        loc.append(_key_text(body[start : int(following[0]) + 1]))
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
    """The scan of a large body, holding the process's one permit for large bodies (it holds the interpreter for
    much of its time, and its temporary arrays take up to about 10 MB)."""
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
    return (body.count(b"\n", 0, start) + 1, *bad_text_loc(body, offset, start, end if end >= 0 else len(body)))


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
