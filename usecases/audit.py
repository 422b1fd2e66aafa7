"""The per-benchmark audit log's writer: ``record`` appends an entry in the caller's transaction, so an entry exists
exactly when its action committed (``usecases.challenges.audit_log`` reads it)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection

from db.repositories import audit as audit_repo
from usecases.api_keys import Principal

ACTIONS = (
    "benchmark.created",
    "answer_key.put",
    "answer_key.restored",
    "rescore",
    "submission.withdrawn",
    "submission.baseline",
    "submission.public",
    "owner.added",
    "owner.removed",
    "participant.invited",
    "participant.revoked",
    "phase.created",
    "phase.changed",
    "phase.deleted",
    "phase.frozen",
)
"""Every action the log records (``action`` of an entry)."""


def record(
    conn: Connection, benchmark_id: str, action: str, actor: Principal | None, subject: str | None, **details: Any
) -> None:
    """Append an entry for ``action`` by ``actor`` on ``subject`` (a submission, key, participant or version id) with
    ``details`` (JSON), in the caller's transaction (a phase's freeze has no actor)."""
    assert action in ACTIONS, action
    text = json.dumps(details, sort_keys=True, separators=(",", ":"))
    actor_id = actor.key_id if actor is not None else None
    audit_repo.append(conn, benchmark_id, action, actor_id, subject, text, datetime.now(UTC))
