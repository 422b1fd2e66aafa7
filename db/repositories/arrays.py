"""The ``array_blob`` table: content-addressed numeric arrays (SQL only)."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, select
from sqlalchemy.exc import IntegrityError

from db.models import ArrayBlob, ArrayGrant


@dataclass(frozen=True)
class ArrayMeta:
    sha256: str
    dtype: str
    shape: list[int]
    nbytes: int
    created_at: datetime


def insert_if_absent(
    conn: Connection,
    *,
    sha256: str,
    dtype: str,
    shape: list[int],
    data: bytes | bytearray | memoryview,
    api_key_id: str | None,
    now: datetime,
) -> bool:
    """Store the blob unless the same content is stored already; returns whether a row was inserted."""
    if conn.execute(select(ArrayBlob.sha256).where(ArrayBlob.sha256 == sha256)).first() is not None:
        return False
    values = {
        "sha256": sha256,
        "dtype": dtype,
        "shape": shape,
        "nbytes": len(data),
        "data": data,
        "api_key_id": api_key_id,
        "created_at": now,
    }
    try:
        with conn.begin_nested():
            conn.execute(ArrayBlob.__table__.insert().values(**values))
    except IntegrityError:
        return False
    return True


def meta(conn: Connection, sha256: str) -> ArrayMeta | None:
    cols = (ArrayBlob.sha256, ArrayBlob.dtype, ArrayBlob.shape, ArrayBlob.nbytes, ArrayBlob.created_at)
    r = conn.execute(select(*cols).where(ArrayBlob.sha256 == sha256)).first()
    return ArrayMeta(*r) if r else None


def load(conn: Connection, sha256: str) -> tuple[str, list[int], bytes] | None:
    """(dtype, shape, raw little-endian C-order bytes) of a stored array."""
    r = conn.execute(select(ArrayBlob.dtype, ArrayBlob.shape, ArrayBlob.data).where(ArrayBlob.sha256 == sha256)).first()
    return (r[0], list(r[1]), bytes(r[2])) if r else None


def grant(conn: Connection, sha256: str, api_key_id: str) -> None:
    """Let ``api_key_id`` use the stored array (its uploader, or a key that uploaded the same content)."""
    if (
        conn.execute(
            select(ArrayGrant.sha256).where(ArrayGrant.sha256 == sha256, ArrayGrant.api_key_id == api_key_id)
        ).first()
        is not None
    ):
        return
    try:
        with conn.begin_nested():
            conn.execute(ArrayGrant.__table__.insert().values(sha256=sha256, api_key_id=api_key_id))
    except IntegrityError:
        return


def may_use(conn: Connection, sha256: str, api_key_id: str | None) -> bool:
    """Whether ``api_key_id`` (None: anonymous) may read and reference the stored array: anyone an anonymous
    upload, the keys granted a keyed one."""
    owner = conn.execute(select(ArrayBlob.api_key_id).where(ArrayBlob.sha256 == sha256)).first()
    if owner is None:
        return False
    if owner[0] is None:
        return True
    if api_key_id is None:
        return False
    found = select(ArrayGrant.sha256).where(ArrayGrant.sha256 == sha256, ArrayGrant.api_key_id == api_key_id)
    return conn.execute(found).first() is not None
