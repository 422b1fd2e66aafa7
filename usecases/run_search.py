"""The query of a run search (``GET /v1/runs``), parsed and validated: ``filter=<field><op><value>`` (field
``param.<path>``, ``result.<path>`` or ``tag.<key>``; op ``= != < <= > >=``; value a JSON scalar), a sort on
creation or on a number of the result, a time range and an owner; ``db.repositories.runs.search_page`` turns the
plan into bound parameters, ``usecases.runs.search_runs`` runs it within ``MAX_SCANNED`` runs and ``TIME_LIMIT_S``
seconds (docs/runs.md)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from db.repositories.runs import JsonFilter, RunSearch, SearchTooSlow
from usecases import cursors
from usecases.api_keys import Principal
from usecases.errors import InvalidFields, Unauthorized, invalid

MAX_FILTERS = 8
MAX_FILTER_CHARS = 1024
MAX_SCANNED = 100_000
TIME_LIMIT_S = 2.0
FILTER = re.compile(r"(param|result|tag)\.([A-Za-z0-9_.-]{1,256}?)(<=|>=|!=|=|<|>)(.*)", re.DOTALL)
SEGMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
TAG_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
SOURCES = {"param": "params", "result": "result", "tag": "tag"}


def _path(text: str, loc: tuple[str, ...]) -> tuple[str, ...]:
    """A dotted path of identifiers (at most 8 segments)."""
    segments = tuple(text.split("."))
    if len(segments) > 8 or not all(SEGMENT.fullmatch(s) for s in segments):
        raise invalid(f"{text!r} is not a path of at most 8 names of [A-Za-z0-9_] joined by '.'", loc, "value_error")
    return segments


def parse_filter(text: str, index: int) -> JsonFilter:
    """``<field><op><value>``: ``param.a.b=3``, ``result.loss<0.1``, ``tag.lr="3e-4"``. The value is a JSON scalar
    (a string in double quotes); ``< <= > >=`` take numbers and strings, ``null`` and booleans only ``=`` and
    ``!=``; a tag's value is a string."""
    loc = ("query", "filter", str(index))
    if len(text) > MAX_FILTER_CHARS:
        raise invalid(f"a filter is at most {MAX_FILTER_CHARS} characters", loc, "string_too_long")
    match = FILTER.fullmatch(text)
    if match is None:
        raise invalid(
            "a filter is <field><op><value>: field param.<path>, result.<path> or tag.<key>, op one of "
            "= != < <= > >=, value a JSON scalar",
            loc,
            "value_error",
        )
    field, path_text, op, value_text = match.groups()
    if field == "tag":
        if not TAG_KEY.fullmatch(path_text):
            raise invalid("a tag key is 1-64 characters of [A-Za-z0-9_.-]", loc, "value_error")
        path: tuple[str, ...] = (path_text,)
    else:
        path = _path(path_text, loc)
    try:
        value = json.loads(value_text)
    except ValueError:
        raise invalid(f'{value_text!r} is not a JSON value (quote strings: "...")', loc, "value_error") from None
    if isinstance(value, (dict, list)) or (isinstance(value, float) and not math.isfinite(value)):
        raise invalid("the value must be a finite JSON scalar", loc, "value_error")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
        raise invalid("an integer value must be within ±2^53", loc, "value_error")
    if (value is None or isinstance(value, bool)) and op not in ("=", "!="):
        raise invalid(f"{op} compares numbers and strings, not {value_text}", loc, "value_error")
    if field == "tag" and not isinstance(value, str):
        raise invalid("a tag's value is a JSON string", loc, "value_error")
    return JsonFilter(SOURCES[field], path, op, value)


@dataclass(frozen=True)
class SearchQuery:
    """``GET /v1/runs``'s query beyond paging."""

    kind: Literal["estimator", "scorer"] | None = None
    name: str | None = None
    filters: tuple[str, ...] = ()
    sort: str = "created_at"
    order: Literal["asc", "desc"] = "desc"
    created_from: datetime | None = None
    created_to: datetime | None = None
    owner: Literal["me", "anonymous"] | None = None


def _cursor_after(cursor: str | None, by_result: bool) -> tuple[float | None, int] | None:
    if cursor is None:
        return None
    if not by_result:
        return (None, cursors.decode_seq(cursor) or 0)
    value = cursors.decode(cursor)
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not isinstance(value[0], (int, float))
        or isinstance(value[0], bool)
        or not isinstance(value[1], int)
        or isinstance(value[1], bool)
    ):
        raise cursors.invalid_cursor()
    return (float(value[0]), value[1])


def _aware(moment: datetime | None) -> datetime | None:
    """A time without an offset is UTC (as every stored time)."""
    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment


def plan(query: SearchQuery, principal: Principal | None, cursor: str | None) -> RunSearch:
    """The validated search of ``query`` for ``principal`` (the owner's visibility is added by the caller)."""
    if len(query.filters) > MAX_FILTERS:
        raise invalid(f"at most {MAX_FILTERS} filters", ("query", "filter"), "too_long")
    filters = tuple(parse_filter(text, i) for i, text in enumerate(query.filters))
    sort_path: tuple[str, ...] | None = None
    if query.sort != "created_at":
        if not query.sort.startswith("result."):
            raise invalid("sort is created_at or result.<path>", ("query", "sort"), "value_error")
        sort_path = _path(query.sort.removeprefix("result."), ("query", "sort"))
    if query.name is None and (sort_path or any(f.source != "tag" for f in filters)):
        raise invalid("a param or result filter or sort needs name=", ("query", "name"), "missing")
    if principal is None and (query.owner == "me" or any(f.source == "tag" for f in filters)):
        raise Unauthorized("tags and owner=me belong to a key: an API key is required")
    if query.created_from and query.created_to and _aware(query.created_from) >= _aware(query.created_to):
        raise invalid("created_from must be before created_to", ("query", "created_from"), "value_error")
    return RunSearch(
        kind=query.kind,
        name=query.name,
        filters=filters,
        caller=principal.key_id if principal else None,
        created_from=_aware(query.created_from),
        created_to=_aware(query.created_to),
        sort_path=sort_path,
        descending=query.order == "desc",
        after=_cursor_after(cursor, sort_path is not None),
    )


def too_many_rows() -> InvalidFields:
    return invalid(
        f"the search would look through more than {MAX_SCANNED} runs: narrow it with name, a time range or owner",
        ("query",),
        "too_many_rows",
    )


def too_slow(exc: SearchTooSlow) -> InvalidFields:
    return InvalidFields(
        f"the search took longer than {TIME_LIMIT_S:g} s: narrow it with name, a time range or owner",
        [{"loc": ["query"], "msg": str(exc), "type": "too_slow"}],
    )
