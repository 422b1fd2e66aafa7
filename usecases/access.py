"""Who may see and do what on one benchmark (docs/challenges.md, the access table).

A caller's role on a benchmark is the first that holds: ``admin`` (an admin key), ``owner`` (the key that created
it, ``benchmark.owner_key_id``, or a co-owner it added), ``participant`` (a key bound to it), ``key`` (any other
key) or ``anonymous``. Owners and admins see everything of the benchmark (both splits, every submission with its
per-item scores, withdrawn and non-public ones, the audit log); everyone else sees the public split and, with a key,
its own submissions. A submission the caller may not see answers 404, like one that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection

from db.repositories import owners as owners_repo
from db.repositories.benchmarks import BenchmarkRow
from db.repositories.submissions import SubmissionRow
from usecases.api_keys import Principal
from usecases.errors import Forbidden, Unauthorized

ROLES = ("admin", "owner", "participant", "key", "anonymous")
OWNERS_ONLY = "visible to the benchmark's owners"


@dataclass(frozen=True)
class Access:
    """A caller's role on one benchmark; ``creator`` for the key that created it (and admins): it manages owners."""

    role: str
    creator: bool = False

    @property
    def sees_everything(self) -> bool:
        """Owners and admins: both splits, every submission, the audit log."""
        return self.role in ("admin", "owner")


def access(conn: Connection, benchmark: BenchmarkRow, principal: Principal | None) -> Access:
    """The caller's role on ``benchmark`` (one indexed lookup for a key that may be a co-owner)."""
    if principal is None:
        return Access("anonymous")
    if principal.is_admin:
        return Access("admin", creator=True)
    if benchmark.owner_key_id is not None and principal.key_id == benchmark.owner_key_id:
        return Access("owner", creator=True)
    if owners_repo.is_co_owner(conn, benchmark.id, principal.key_id):
        return Access("owner")
    if principal.benchmark_id == benchmark.id:
        return Access("participant")
    return Access("key")


def require_owner(found: Access, what: str = "this") -> None:
    """Owners and admins pass; a caller without a key is ``Unauthorized``, any other key ``Forbidden``."""
    if found.role == "anonymous":
        raise Unauthorized(f"an owner's key is required for {what}")
    if not found.sees_everything:
        raise Forbidden(f"only the benchmark's owners or an admin may do {what}")


def check_split(found: Access, split: str) -> None:
    """The private split is for owners and admins."""
    if split == "private" and not found.sees_everything:
        raise Forbidden(f"private-split scores are {OWNERS_ONLY} (and admins)")


def check_bound(principal: Principal, benchmark_id: str) -> None:
    """A participant's key writes to its own benchmark only."""
    if principal.benchmark_id is not None and principal.benchmark_id != benchmark_id and not principal.is_admin:
        raise Forbidden("this key is bound to another benchmark")


def sees_submission(found: Access, principal: Principal | None, sub: SubmissionRow) -> bool:
    """Whether the caller may see ``sub`` in full: its maker, the owners and admins."""
    return found.sees_everything or (principal is not None and sub.api_key_id == principal.key_id)


def on_public_board(sub: SubmissionRow) -> bool:
    """A submission anyone may compare against: live and public (it is on the leaderboards)."""
    return sub.withdrawn_at is None and sub.public
