"""The ``run`` table: the cache lookup, inserts, and keyset-paginated listing."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, bindparam, or_, select
from sqlalchemy.exc import IntegrityError

from db.models import Run


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


_FIND_CACHED = select(*_COLUMNS).where(
    Run.kind == bindparam("kind"),
    Run.name == bindparam("name"),
    Run.version == bindparam("version"),
    Run.params_sha256 == bindparam("sha"),
)
"""Built once: constructing the statement per call cost about 200 µs of a 260 µs lookup (docs/performance.md)."""


def find_cached(conn: Connection, kind: str, name: str, version: str, params_sha256: str) -> RunRow | None:
    """The run with this cache key, if one is stored."""
    r = conn.execute(_FIND_CACHED, {"kind": kind, "name": name, "version": version, "sha": params_sha256}).first()
    return _row(r) if r else None


def get(conn: Connection, run_id: str) -> RunRow | None:
    r = conn.execute(select(*_COLUMNS).where(Run.id == run_id)).first()
    return _row(r) if r else None


def insert(conn: Connection, row: RunRow) -> RunRow:
    """Insert ``row``; if an identical cache key won the race, return the stored run instead."""
    values = {k: v for k, v in row.__dict__.items() if k not in ("seq", "artifacts")}
    try:
        with conn.begin_nested():
            conn.execute(Run.__table__.insert().values(**values))
    except IntegrityError:
        existing = find_cached(conn, row.kind, row.name, row.version, row.params_sha256)
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
