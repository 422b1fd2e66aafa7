"""A benchmark run as a challenge: its owners, its participants (each with a key bound to it), its audit log and
its phases."""

from dataclasses import asdict
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response

from api.auth import CHECK_CREDENTIALS, AnyKey, OptionalCaller
from api.deps import PageQuery, Paging, ServicesDep, page_query
from api.problems import COMMON, responses
from api.schemas.challenges import (
    NULLABLE,
    AuditLog,
    OwnerIn,
    OwnerList,
    OwnerOut,
    ParticipantCreated,
    ParticipantIn,
    ParticipantList,
    ParticipantOut,
    PhaseIn,
    PhaseLeaderboard,
    PhaseList,
    PhaseOut,
    PhasePatch,
)
from usecases import challenges, phases
from usecases.errors import Conflict, Forbidden, NotFound, Unauthorized, invalid

router = APIRouter(prefix="/v1/benchmarks/{benchmark_id}", tags=["challenges"])
OWNERS = (Unauthorized, Forbidden, NotFound)


@router.get("/owners", response_model=OwnerList, responses=responses(*OWNERS, 500))
def list_owners(benchmark_id: str, caller: AnyKey, services: ServicesDep) -> dict[str, Any]:
    """The benchmark's creator and co-owners (owners and admins)."""
    return {"items": [asdict(o) for o in challenges.list_owners(services, caller, benchmark_id)]}


@router.post("/owners", status_code=201, response_model=OwnerOut, responses=responses(*COMMON, *OWNERS, Conflict))
def add_owner(benchmark_id: str, body: OwnerIn, caller: AnyKey, services: ServicesDep) -> dict[str, Any]:
    """Make a key a co-owner (the key that created the benchmark, or an admin): it then sees everything of the
    benchmark and manages its participants, baselines and answer keys."""
    return asdict(challenges.add_owner(services, caller, benchmark_id, body.key_id))


@router.delete("/owners/{key_id}", status_code=204, responses=responses(*OWNERS, Conflict, 500))
def remove_owner(benchmark_id: str, key_id: str, caller: AnyKey, services: ServicesDep) -> Response:
    """Remove a co-owner (the key that created the benchmark, or an admin); the creator stays."""
    challenges.remove_owner(services, caller, benchmark_id, key_id)
    return Response(status_code=204)


@router.post(
    "/participants",
    status_code=201,
    response_model=ParticipantCreated,
    responses=responses(*COMMON, *OWNERS, Conflict),
)
def invite_participant(benchmark_id: str, body: ParticipantIn, caller: AnyKey, services: ServicesDep) -> dict[str, Any]:
    """A new participant and its API key (scope ``submissions:write``, bound to this benchmark: refused on any
    other benchmark's writes), shown once (owners and admins)."""
    view, token = challenges.invite(services, caller, benchmark_id, body.display_name, body.team)
    return {**asdict(view), "key": token}


@router.get("/participants", response_model=ParticipantList, responses=responses(*OWNERS, 422, 500))
def list_participants(benchmark_id: str, caller: AnyKey, services: ServicesDep, page: Paging) -> dict[str, Any]:
    """The participants, oldest first, revoked ones included; never a key's secret (owners and admins)."""
    items, next_cursor = challenges.list_participants(services, caller, benchmark_id, page.limit, page.cursor)
    return {"items": [asdict(p) for p in items], "next_cursor": next_cursor}


@router.delete("/participants/{participant_id}", response_model=ParticipantOut, responses=responses(*OWNERS, 500))
def revoke_participant(benchmark_id: str, participant_id: str, caller: AnyKey, services: ServicesDep) -> Any:
    """Revoke the participant's key (401 from now on); its submissions stay (owners and admins)."""
    return asdict(challenges.revoke(services, caller, benchmark_id, participant_id))


@router.get("/audit", response_model=AuditLog, responses=responses(*OWNERS, 422, 500))
def audit_log(benchmark_id: str, caller: AnyKey, services: ServicesDep, page: Paging) -> dict[str, Any]:
    """The benchmark's audit log, newest first: answer keys put, rescores, withdrawals, owners and participants
    added or removed, baseline and public changes, each with the acting key and the time (owners and admins)."""
    items, next_cursor = challenges.audit_log(services, caller, benchmark_id, page.limit, page.cursor)
    return {"items": [asdict(e) for e in items], "next_cursor": next_cursor}


@router.post("/phases", status_code=201, response_model=PhaseOut, responses=responses(*COMMON, *OWNERS))
def create_phase(benchmark_id: str, body: PhaseIn, caller: AnyKey, services: ServicesDep) -> dict[str, Any]:
    """A new phase (owners and admins): ends after it starts and in the future, overlaps no other phase."""
    return asdict(phases.create(services, caller, benchmark_id, body.model_dump()))


@router.get(
    "/phases",
    response_model=PhaseList,
    dependencies=[CHECK_CREDENTIALS],
    responses=responses(Unauthorized, NotFound, 500),
)
def list_phases(benchmark_id: str, services: ServicesDep) -> dict[str, Any]:
    """The benchmark's phases, earliest first, with their times, settings and status (anyone)."""
    return {"items": [asdict(p) for p in phases.list_phases(services, benchmark_id)]}


@router.get(
    "/phases/{phase_id}",
    response_model=PhaseOut,
    dependencies=[CHECK_CREDENTIALS],
    responses=responses(Unauthorized, NotFound, 500),
)
def get_phase(benchmark_id: str, phase_id: str, services: ServicesDep) -> dict[str, Any]:
    """One phase (anyone)."""
    return asdict(phases.get(services, benchmark_id, phase_id))


@router.patch("/phases/{phase_id}", response_model=PhaseOut, responses=responses(*COMMON, *OWNERS, Conflict))
def update_phase(
    benchmark_id: str, phase_id: str, body: PhasePatch, caller: AnyKey, services: ServicesDep
) -> dict[str, Any]:
    """Change a phase's settings (owners and admins); an ended phase is frozen (409), ``starts_at`` and ``splits``
    stay once it has started (409)."""
    changes = body.model_dump(exclude_unset=True)
    for name, value in changes.items():
        if value is None and name not in NULLABLE:
            raise invalid(f"{name} cannot be null", ("body", name), "value_error", "a value")
    if not changes:
        raise invalid("give at least one setting to change", ("body",), "missing", "a setting")
    return asdict(phases.update(services, caller, benchmark_id, phase_id, changes))


@router.delete("/phases/{phase_id}", status_code=204, responses=responses(*OWNERS, Conflict, 500))
def delete_phase(benchmark_id: str, phase_id: str, caller: AnyKey, services: ServicesDep) -> Response:
    """Delete a phase without submissions or a frozen board (owners and admins)."""
    phases.delete(services, caller, benchmark_id, phase_id)
    return Response(status_code=204)


@router.get(
    "/phases/{phase_id}/leaderboard",
    response_model=PhaseLeaderboard,
    responses=responses(Unauthorized, Forbidden, NotFound, 422, 500),
)
def phase_leaderboard(
    benchmark_id: str,
    phase_id: str,
    services: ServicesDep,
    caller: OptionalCaller,
    page: Annotated[PageQuery, Depends(page_query(100))],
    split: Literal["public", "private"] = "public",
    metric: Annotated[str | None, Query(max_length=64)] = None,
    rank_by: Literal["best", "latest"] = "best",
) -> dict[str, Any]:
    """The phase's board: live while it is open, the frozen snapshot (with ``frozen_at``) once it has ended. A
    ``hidden_until_end`` phase's board is for the owners and admins until the end (403 for others)."""
    board = phases.leaderboard(
        services,
        caller,
        benchmark_id,
        phase_id,
        split=split,
        metric=metric,
        rank_by=rank_by,
        limit=page.limit,
        cursor=page.cursor,
    )
    out = asdict(board)
    return {**out, "items": out.pop("rows")}
