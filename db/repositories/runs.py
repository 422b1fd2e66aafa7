"""The ``run`` table: the cache lookup, inserts, the keyset-paginated listing and the search over params, results
and the caller's tags (bound parameters only; SQLite ``json_extract``, PostgreSQL ``jsonb``)."""

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Float,
    Select,
    Text,
    and_,
    bindparam,
    case,
    cast,
    func,
    null,
    or_,
    select,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.exc import IntegrityError, OperationalError

from db.models import Run, RunAnnotation


@dataclass(frozen=True)
class RunRow:
    """A stored run: params and result are the stored canonical JSON texts."""

    seq: int
    id: str
    kind: str
    name: str
    version: str
    code_version: str
    params: str
    params_sha256: str
    result: str
    duration_ms: float
    created_at: datetime
    api_key_id: str | None
    artifacts: tuple[str, ...] = ()
    """Names of the run's stored artifacts (table ``run_artifact``; filled in by the use-case layer)."""


_COLUMNS = [getattr(Run, f) for f in RunRow.__dataclass_fields__ if f != "artifacts"]


def _row(r: object) -> RunRow:
    return RunRow(*r)  # type: ignore[misc]


_SAME_KEY = (
    Run.kind == bindparam("kind"),
    Run.name == bindparam("name"),
    Run.version == bindparam("version"),
    Run.params_sha256 == bindparam("sha"),
)
_FIND_ANONYMOUS = select(*_COLUMNS).where(*_SAME_KEY, Run.api_key_id.is_(None))
_FIND_OWN = (
    select(*_COLUMNS)
    .where(*_SAME_KEY, or_(Run.api_key_id == bindparam("owner"), Run.api_key_id.is_(None)))
    .order_by(Run.api_key_id.is_(None))
    .limit(1)
)
_FIND_ANY = select(*_COLUMNS).where(*_SAME_KEY).order_by(Run.seq).limit(1)
"""Built once: constructing the statement per call cost about 200 µs of a 260 µs lookup (docs/performance.md)."""


def find_cached(
    conn: Connection, kind: str, name: str, version: str, params_sha256: str, owner: str | None
) -> RunRow | None:
    """The run with this cache key that ``owner`` (a key id, None: anonymous) may be answered with: its own, else
    the anonymous one."""
    values = {"kind": kind, "name": name, "version": version, "sha": params_sha256, "owner": owner}
    r = conn.execute(_FIND_ANONYMOUS if owner is None else _FIND_OWN, values).first()
    return _row(r) if r else None


def find_any(conn: Connection, kind: str, name: str, version: str, params_sha256: str) -> RunRow | None:
    """The first stored run with this cache key, whoever owns it."""
    r = conn.execute(_FIND_ANY, {"kind": kind, "name": name, "version": version, "sha": params_sha256}).first()
    return _row(r) if r else None


def get(conn: Connection, run_id: str) -> RunRow | None:
    r = conn.execute(select(*_COLUMNS).where(Run.id == run_id)).first()
    return _row(r) if r else None


def insert(conn: Connection, row: RunRow) -> RunRow:
    """Insert ``row``; if a run with the same cache key and owner won the race, return it instead."""
    values = {k: v for k, v in row.__dict__.items() if k not in ("seq", "artifacts")}
    try:
        with conn.begin_nested():
            conn.execute(Run.__table__.insert().values(**values))
    except IntegrityError:
        existing = find_cached(conn, row.kind, row.name, row.version, row.params_sha256, row.api_key_id)
        if existing is None:
            raise
        return existing
    stored = get(conn, row.id)
    assert stored is not None
    return stored


def list_page(
    conn: Connection,
    *,
    kind: str | None,
    name: str | None,
    limit: int,
    before_seq: int | None,
    api_key_id: str | None = None,
    only_key: bool = False,
    anonymous_too: bool = False,
) -> list[RunRow]:
    """Newest first; keyset on ``seq`` (strictly below ``before_seq``); ``limit`` rows at most. With ``only_key``
    the runs of ``api_key_id`` (None: runs made without a key), and with ``anonymous_too`` those made without one."""
    stmt = select(*_COLUMNS).order_by(Run.seq.desc()).limit(limit)
    if kind is not None:
        stmt = stmt.where(Run.kind == kind)
    if name is not None:
        stmt = stmt.where(Run.name == name)
    if before_seq is not None:
        stmt = stmt.where(Run.seq < before_seq)
    if only_key:
        own = Run.api_key_id.is_(None) if api_key_id is None else Run.api_key_id == api_key_id
        stmt = stmt.where(or_(own, Run.api_key_id.is_(None)) if anonymous_too else own)
    return [_row(r) for r in conn.execute(stmt)]


@dataclass(frozen=True)
class JsonFilter:
    """``<source>.<path> <op> <value>`` on a run's params or result JSON, or on the caller's tag ``path[0]``:
    matches only where the value found has the JSON type of ``value``."""

    source: str
    """``params``, ``result`` or ``tag``."""
    path: tuple[str, ...]
    op: str
    """One of ``= != < <= > >=``."""
    value: str | int | float | bool | None


_OPS = {
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}
_SQLITE_TYPES = {bool: ("true", "false"), int: ("integer", "real"), float: ("integer", "real"), str: ("text",)}
_PG_TYPES = {bool: "boolean", int: "number", float: "number", str: "string", type(None): "null"}


def _sqlite_path(path: tuple[str, ...]) -> str:
    """A SQLite JSON path (bound as a parameter): every segment quoted."""
    return "$" + "".join(f'."{segment}"' for segment in path)


def _json_condition(dialect: str, column: ColumnElement[Any], f: JsonFilter) -> ColumnElement[bool]:
    """The condition of ``f`` on the JSON text ``column``; every path segment and value is a bound parameter."""
    op, value = _OPS[f.op], f.value
    if dialect == "postgresql":
        doc = cast(column, JSONB)
        found = func.jsonb_extract_path(doc, *[bindparam(None, s, type_=Text) for s in f.path])
        found_text = func.jsonb_extract_path_text(doc, *[bindparam(None, s, type_=Text) for s in f.path])
        typed = func.jsonb_typeof(found) == _PG_TYPES[type(value)]
        if f.op == "=":
            nested: Any = value
            for segment in reversed(f.path):
                nested = {segment: nested}
            return doc.op("@>")(cast(bindparam(None, json.dumps(nested), type_=Text), JSONB))
        if value is None:
            return and_(found.is_not(None), func.jsonb_typeof(found) != "null")
        if isinstance(value, bool):
            return and_(typed, op(found_text, "true" if value else "false"))
        if isinstance(value, str):
            return and_(typed, op(found_text, value))
        number = case((func.jsonb_typeof(found) == "number", cast(found_text, Float)))
        return and_(typed, op(number, float(value)))
    path = bindparam(None, _sqlite_path(f.path), type_=Text)
    kind = func.json_type(column, path)
    if value is None:
        return kind == "null" if f.op == "=" else and_(kind.is_not(None), kind != "null")
    if isinstance(value, bool):
        wanted = kind == ("true" if value else "false")
        return wanted if f.op == "=" else and_(kind.in_(("true", "false")), ~wanted)
    return and_(kind.in_(_SQLITE_TYPES[type(value)]), op(func.json_extract(column, path), value))


def _sort_value(dialect: str, column: ColumnElement[Any], path: tuple[str, ...]) -> ColumnElement[Any]:
    """The number at ``path`` of the JSON text ``column`` (NULL where it is absent or not a number)."""
    if dialect == "postgresql":
        segments = [bindparam(None, s, type_=Text) for s in path]
        found = func.jsonb_extract_path(cast(column, JSONB), *segments)
        found_text = func.jsonb_extract_path_text(cast(column, JSONB), *segments)
        return case((func.jsonb_typeof(found) == "number", cast(found_text, Float)))
    sql_path = bindparam(None, _sqlite_path(path), type_=Text)
    return case((func.json_type(column, sql_path).in_(("integer", "real")), func.json_extract(column, sql_path)))


@dataclass(frozen=True)
class RunSearch:
    """What ``search_page`` selects: the visible runs (``owner_clause``) of ``kind``/``name`` made within
    [``created_from``, ``created_to``), matching every filter, sorted by ``sort_path`` of the result (a number;
    runs without one are left out) or by creation, and after the keyset ``after``: (sort value, seq)."""

    kind: str | None
    name: str | None
    filters: tuple[JsonFilter, ...]
    caller: str | None
    """The key whose tags ``tag`` filters read."""
    created_from: datetime | None
    created_to: datetime | None
    sort_path: tuple[str, ...] | None
    descending: bool
    after: tuple[float | None, int] | None


def _scope(search: RunSearch, owners: Sequence[ColumnElement[bool]]) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = list(owners)
    if search.kind is not None:
        where.append(Run.kind == search.kind)
    if search.name is not None:
        where.append(Run.name == search.name)
    if search.created_from is not None:
        where.append(Run.created_at >= search.created_from)
    if search.created_to is not None:
        where.append(Run.created_at < search.created_to)
    return where


def owner_clause(api_key_id: str | None, *, anonymous_too: bool) -> ColumnElement[bool]:
    """Runs of ``api_key_id`` (None: made without a key), and with ``anonymous_too`` those made without one."""
    own = Run.api_key_id.is_(None) if api_key_id is None else Run.api_key_id == api_key_id
    return or_(own, Run.api_key_id.is_(None)) if anonymous_too else own


def count_scope(conn: Connection, search: RunSearch, owners: Sequence[ColumnElement[bool]], at_most: int) -> int:
    """How many runs the search's scope (kind, name, time, the ``owners`` clauses; not the JSON filters) holds,
    counted up to ``at_most``."""
    inner = select(Run.seq).where(*_scope(search, owners)).limit(at_most).subquery()
    return int(conn.execute(select(func.count()).select_from(inner)).scalar_one())


def search_statement(dialect: str, search: RunSearch, owners: Sequence[ColumnElement[bool]], limit: int) -> Select[Any]:
    """The search's statement on ``dialect``: the run columns and the sort value, at most ``limit`` rows."""
    where = _scope(search, owners)
    for f in search.filters:
        if f.source == "tag":
            tags = RunAnnotation.tags
            hit = select(RunAnnotation.run_id).where(
                RunAnnotation.run_id == Run.id,
                RunAnnotation.api_key_id == search.caller,
                _json_condition(dialect, cast(tags, Text) if dialect == "postgresql" else tags, f),
            )
            where.append(hit.exists())
        else:
            where.append(_json_condition(dialect, Run.params if f.source == "params" else Run.result, f))
    seq = Run.seq
    if search.sort_path is None:
        value: ColumnElement[Any] = cast(null(), Float)
        if search.after is not None:
            where.append(seq < search.after[1] if search.descending else seq > search.after[1])
        order = [seq.desc() if search.descending else seq.asc()]
    else:
        value = _sort_value(dialect, Run.result, search.sort_path)
        where.append(value.is_not(None))
        if search.after is not None:
            last, last_seq = search.after
            where.append(
                or_(value < last, and_(value == last, seq < last_seq))
                if search.descending
                else or_(value > last, and_(value == last, seq > last_seq))
            )
        order = [value.desc(), seq.desc()] if search.descending else [value.asc(), seq.asc()]
    return select(*_COLUMNS, value).where(*where).order_by(*order).limit(limit)


def search_page(
    conn: Connection, search: RunSearch, owners: Sequence[ColumnElement[bool]], limit: int
) -> list[tuple[RunRow, float | None]]:
    """At most ``limit`` runs of the search within the ``owners`` clauses, each with its sort value (None when
    sorted by creation)."""
    stmt = search_statement(conn.dialect.name, search, owners, limit)
    return [(_row(r[:-1]), r[-1]) for r in conn.execute(stmt)]


class SearchTooSlow(Exception):
    """The search ran past its time limit and was stopped."""


@contextmanager
def time_limit(conn: Connection, seconds: float) -> Iterator[None]:
    """Stop the statements run inside after ``seconds`` (PostgreSQL: ``statement_timeout`` for the transaction;
    SQLite: a progress handler that interrupts), raising ``SearchTooSlow``."""
    try:
        if conn.dialect.name == "postgresql":
            conn.execute(select(func.set_config("statement_timeout", str(max(1, round(seconds * 1000))), True)))
            yield
            return
        raw = conn.connection.driver_connection
        deadline = time.monotonic() + seconds
        raw.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 1000)
        try:
            yield
        finally:
            raw.set_progress_handler(None, 0)
    except OperationalError as exc:
        if conn.dialect.name == "postgresql" and "statement timeout" not in str(exc.orig):
            raise
        if conn.dialect.name != "postgresql" and "interrupted" not in str(exc.orig):
            raise
        raise SearchTooSlow(f"stopped after {seconds:g} s") from exc
