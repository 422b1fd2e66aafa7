"""The ``run_artifact`` table: files a run produced besides its JSON result, addressed by (run id, name)."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, insert, select

from db.models import RunArtifact


@dataclass(frozen=True)
class NewArtifact:
    name: str
    sha256: str
    media_type: str
    data: bytes


@dataclass(frozen=True)
class StoredArtifact:
    sha256: str
    media_type: str
    data: bytes


def insert_many(conn: Connection, run_id: str, artifacts: Sequence[NewArtifact], now: datetime) -> None:
    """Store a run's artifacts in the caller's transaction (the run row must exist)."""
    if artifacts:
        conn.execute(
            insert(RunArtifact),
            [
                {
                    "run_id": run_id,
                    "name": a.name,
                    "sha256": a.sha256,
                    "media_type": a.media_type,
                    "nbytes": len(a.data),
                    "data": a.data,
                    "created_at": now,
                }
                for a in artifacts
            ],
        )


def names(conn: Connection, run_ids: Sequence[str]) -> dict[str, list[str]]:
    """Artifact names of each run (sorted); runs without artifacts are absent."""
    if not run_ids:
        return {}
    stmt = (
        select(RunArtifact.run_id, RunArtifact.name)
        .where(RunArtifact.run_id.in_(list(run_ids)))
        .order_by(RunArtifact.run_id, RunArtifact.name)
    )
    out: dict[str, list[str]] = {}
    for run_id, name in conn.execute(stmt):
        out.setdefault(run_id, []).append(name)
    return out


def load(conn: Connection, run_id: str, name: str) -> StoredArtifact | None:
    stmt = select(RunArtifact.sha256, RunArtifact.media_type, RunArtifact.data).where(
        RunArtifact.run_id == run_id, RunArtifact.name == name
    )
    r = conn.execute(stmt).first()
    return StoredArtifact(r[0], r[1], bytes(r[2])) if r else None
