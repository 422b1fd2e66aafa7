"""The ``run_annotation`` table: the tags and note one key keeps on one run."""

import json
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, select

from db.models import RunAnnotation


@dataclass(frozen=True)
class AnnotationRow:
    run_id: str
    api_key_id: str
    tags: dict[str, str]
    note: str | None
    updated_at: datetime


_COLUMNS = [getattr(RunAnnotation, f) for f in AnnotationRow.__dataclass_fields__]


def _row(r: object) -> AnnotationRow:
    row = AnnotationRow(*r)  # type: ignore[misc]
    return row if isinstance(row.tags, dict) else AnnotationRow(**{**row.__dict__, "tags": json.loads(row.tags)})


def get(conn: Connection, run_id: str, api_key_id: str) -> AnnotationRow | None:
    r = conn.execute(
        select(*_COLUMNS).where(RunAnnotation.run_id == run_id, RunAnnotation.api_key_id == api_key_id)
    ).first()
    return _row(r) if r else None


def of_runs(conn: Connection, run_ids: list[str], api_key_id: str) -> dict[str, AnnotationRow]:
    """The annotations ``api_key_id`` keeps on these runs, by run id."""
    if not run_ids:
        return {}
    stmt = select(*_COLUMNS).where(RunAnnotation.run_id.in_(run_ids), RunAnnotation.api_key_id == api_key_id)
    return {row.run_id: row for row in map(_row, conn.execute(stmt))}


def put(conn: Connection, row: AnnotationRow) -> None:
    """Insert or replace the annotation of (run, key)."""
    table = RunAnnotation.__table__
    where = (table.c.run_id == row.run_id) & (table.c.api_key_id == row.api_key_id)
    values = {"tags": row.tags, "note": row.note, "updated_at": row.updated_at}
    if conn.execute(table.update().where(where).values(**values)).rowcount == 0:
        conn.execute(table.insert().values(run_id=row.run_id, api_key_id=row.api_key_id, **values))
