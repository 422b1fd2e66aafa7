"""Stored runs over HTTP: a run as its reader sees it (the envelope with the caller's tags and note), the page of
runs, and the body of ``PATCH /v1/runs/{id}``."""

from typing import Annotated, Any

from pydantic import Field, StringConstraints

from api.envelope import RunEnvelope
from api.schemas.paging import Page
from service.types import StrictModel

MAX_TAGS = 32
MAX_NOTE = 4000
TagKey = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")]
TagValue = Annotated[str, StringConstraints(max_length=256)]
Tags = Annotated[dict[TagKey, TagValue], Field(max_length=MAX_TAGS)]


class RunView(RunEnvelope):
    """A stored run with its params and the tags and note the caller's key keeps on it (none for an anonymous
    caller)."""

    params: dict[str, Any] = Field(
        description="The run's canonical params (defaults filled in): an estimator's params, a scorer's score request."
    )
    tags: dict[str, str] = Field(description="The caller's tags on this run (PATCH /v1/runs/{id}).")
    note: str | None = Field(description="The caller's note on this run.")


class RunPage(Page[RunView]):
    pass


class RunAnnotationPatch(StrictModel):
    """What a key keeps on a run it obtained: ``tags`` replace its tags (at most 32; keys 1-64 characters of
    ``A-Z a-z 0-9 _ . -``, values at most 256 characters), ``note`` its note (at most 4,000 characters; null
    clears it); a member left out is kept. The run itself (params, result, cache key) never changes."""

    tags: Tags | None = Field(default=None, description="All the caller's tags on the run (replacing them).")
    note: Annotated[str, StringConstraints(max_length=MAX_NOTE)] | None = Field(
        default=None, description="The caller's note on the run."
    )


class RunAnnotationOut(StrictModel):
    """The caller's tags and note on the run after the change."""

    id: str
    tags: dict[str, str]
    note: str | None


class ComparedRun(StrictModel):
    id: str
    version: str
    code_version: str
    created_at: str


class RunComparisonOut(StrictModel):
    """Two to eight runs of one estimator or scorer side by side: the params that differ and the scalar result
    fields, each a list with one value per run in the order of ``runs`` (null where a run has none)."""

    kind: str
    name: str
    runs: list[ComparedRun]
    versions_differ: bool = Field(
        description="The runs were made by different versions of the estimator or scorer (results may differ for "
        "that reason alone)."
    )
    params: dict[str, list[Any]] = Field(description="Params that differ, by dotted path.")
    result: dict[str, list[Any]] = Field(description="Scalar result fields, by dotted path.")
