"""``GET /v1/runs/{id}``, the keyset-paginated ``GET /v1/runs``, ``PATCH /v1/runs/{id}`` (the caller's tags and
note), and runs side by side (``GET /v1/runs/compare`` and its overlay plot)."""

import json
from datetime import UTC, datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Header, Path, Query, Response

from api.auth import OptionalCaller
from api.deps import Paging, ServicesDep
from api.envelope import envelope_json
from api.problems import responses
from api.schemas.plots import IMAGE_RESPONSES, chosen_format, plot_response
from api.schemas.runs import (
    ComparedRun,
    RunAnnotationOut,
    RunAnnotationPatch,
    RunComparisonOut,
    RunPage,
    RunView,
)
from usecases import figures, runs
from usecases.clock import utc_iso
from usecases.errors import NotFound, Unauthorized, invalid
from usecases.run_search import SearchQuery

router = APIRouter(prefix="/v1/runs", tags=["runs"])


ISO_TIME = r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?)?$"
"""An ISO 8601 date or time (a number is not taken as a Unix time)."""


def _time(text: str | None, field: str) -> datetime | None:
    """An ISO 8601 time of the query (a time without an offset is UTC); an impossible date is a 422."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise invalid(f"not a valid time: {exc}", ("query", field), "datetime_parsing") from exc
    return when if when.tzinfo else when.replace(tzinfo=UTC)


@router.get("", response_model=RunPage, responses=responses(Unauthorized, 422, 500))
def list_runs(
    services: ServicesDep,
    principal: OptionalCaller,
    page: Paging,
    kind: Literal["estimator", "scorer"] | None = None,
    name: Annotated[str | None, Query(max_length=128)] = None,
    filter: Annotated[
        list[str] | None,
        Query(
            description="Up to 8 of <field><op><value>: field param.<path>, result.<path> or tag.<key>, op one of "
            '= != < <= > >=, value a JSON scalar (strings in double quotes), e.g. param.num_perm>=64, tag.exp="a". '
            "A param or result filter needs name=."
        ),
    ] = None,
    sort: Annotated[
        str, Query(max_length=300, description="created_at, or result.<path> (a number; needs name=).")
    ] = "created_at",
    order: Literal["asc", "desc"] = "desc",
    created_from: Annotated[
        str | None, Query(pattern=ISO_TIME, description="Runs made at or after this time (ISO 8601).")
    ] = None,
    created_to: Annotated[
        str | None, Query(pattern=ISO_TIME, description="Runs made before this time (ISO 8601).")
    ] = None,
    owner: Annotated[
        Literal["me", "anonymous"] | None, Query(description="me: made with the caller's key; anonymous: without one.")
    ] = None,
) -> Response:
    """Runs the caller may see, newest first unless sorted otherwise (``cached`` false on every one), with the
    caller's tags and note; pass ``next_cursor`` back as ``cursor`` for the next page. With ``REQUIRE_KEYS`` a key
    sees its own runs (an admin all). A search looks through at most 100,000 runs for at most 2 s (422 beyond)."""
    query = SearchQuery(
        kind=kind,
        name=name,
        filters=tuple(filter or ()),
        sort=sort,
        order=order,
        created_from=_time(created_from, "created_from"),
        created_to=_time(created_to, "created_to"),
        owner=owner,
    )
    rows, next_cursor = runs.search_runs(services, principal, query, limit=page.limit, cursor=page.cursor)
    notes = runs.annotations(services, principal, [r.id for r in rows])
    body = b'{"items":[' + b",".join(_view_json(r, notes.get(r.id, runs.NO_ANNOTATION)) for r in rows) + b"],"
    body += b'"next_cursor":' + json.dumps(next_cursor).encode() + b"}"
    return Response(body, media_type="application/json")


CompareIds = Annotated[str, Query(max_length=8 * 40, description="2 to 8 run ids of one estimator, comma-separated.")]


def _ids(text: str) -> list[str]:
    return [i.strip() for i in text.split(",")]


@router.get("/compare", response_model=RunComparisonOut, responses=responses(Unauthorized, NotFound, 422, 500))
def compare_runs(ids: CompareIds, principal: OptionalCaller, services: ServicesDep) -> RunComparisonOut:
    """Runs of one estimator or scorer side by side: the params that differ and the scalar result fields, with
    ``versions_differ`` when different versions made them."""
    found = runs.compare_runs(services, principal, _ids(ids))
    return RunComparisonOut(
        kind=found.kind,
        name=found.name,
        runs=[
            ComparedRun(id=r.id, version=r.version, code_version=r.code_version, created_at=utc_iso(r.created_at))
            for r in found.runs
        ],
        versions_differ=found.versions_differ,
        params=found.params,
        result=found.result,
    )


@router.get(
    "/compare/plot",
    response_class=Response,
    responses={**IMAGE_RESPONSES, **responses(Unauthorized, NotFound, 422, 500)},
)
def compare_plot(
    ids: CompareIds,
    principal: OptionalCaller,
    services: ServicesDep,
    format: Literal["svg", "png"] | None = None,
    accept: Annotated[str | None, Header()] = None,
) -> Response:
    """The curves of 2 to 8 runs of one estimator on one figure, one colour per run (SVG by default, PNG with
    ``format=png``); a 422 naming ``ids`` when the estimator's plot cannot overlay runs."""
    return plot_response(figures.compare_plot(services, principal, _ids(ids), chosen_format(format, accept)))


def _view_json(row: runs.RunRow, annotation: runs.Annotation) -> bytes:
    """The run envelope (``cached`` false) followed by its params and the caller's tags and note."""
    tail = json.dumps({"tags": annotation.tags, "note": annotation.note}, separators=(",", ":"))
    return envelope_json(row, cached=False)[:-1] + b',"params":' + row.params.encode() + b"," + tail[1:].encode()


@router.get("/{run_id}", response_model=RunView, responses=responses(Unauthorized, NotFound, 500))
def get_run(run_id: str, principal: OptionalCaller, services: ServicesDep) -> Response:
    """One stored run (``cached`` is false: reading a run is not a call that found it stored) with the caller's
    tags and note."""
    row = runs.get_run(services, principal, run_id)
    annotation = runs.annotations(services, principal, [row.id]).get(row.id, runs.NO_ANNOTATION)
    return Response(_view_json(row, annotation), media_type="application/json")


@router.patch("/{run_id}", response_model=RunAnnotationOut, responses=responses(Unauthorized, NotFound, 422, 500))
def annotate_run(
    run_id: str, body: RunAnnotationPatch, principal: OptionalCaller, services: ServicesDep
) -> RunAnnotationOut:
    """Set the caller's tags and note on a run its key may see: each key keeps its own; anonymous callers cannot
    (401). The run itself never changes."""
    row, annotation = runs.annotate(
        services, principal, run_id, tags=body.tags, note=body.note, set_note="note" in body.model_fields_set
    )
    return RunAnnotationOut(id=row.id, tags=annotation.tags, note=annotation.note)


@router.get(
    "/{run_id}/artifacts/{name}",
    response_class=Response,
    responses={
        200: {
            "description": "The artifact's bytes (an npz archive: application/x-npz).",
            "content": {"application/x-npz": {}, "application/octet-stream": {}},
        }
    }
    | responses(Unauthorized, NotFound, 500),
)
def get_artifact(
    run_id: str,
    name: Annotated[str, Path(max_length=64, description="An artifact name listed in the run's `artifacts`.")],
    principal: OptionalCaller,
    services: ServicesDep,
) -> Response:
    """A file stored with the run (for instance ``weights`` of ``sae.hierarchical_train``), visible like the run."""
    artifact = runs.get_artifact(services, principal, run_id, name)
    suffix = ".npz" if artifact.media_type == "application/x-npz" else ""
    headers = {
        "ETag": f'"{artifact.sha256}"',
        "Content-Disposition": f'attachment; filename="{name}{suffix}"',
        "Cache-Control": "private, max-age=31536000, immutable",
    }
    return Response(artifact.data, media_type=artifact.media_type, headers=headers)
