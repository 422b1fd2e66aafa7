"""Stateless scoring (``POST /v1/scorers/{name}/score``): every item scored together, stored as a run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from db.repositories.runs import RunRow
from service.registry import SCORERS, ScorerSpec
from service.types import StrictModel
from usecases import runs
from usecases.api_keys import Principal, require_for_runs
from usecases.errors import NotFound
from usecases.scoring import ScoreOutcome, check_unique, score_all

if TYPE_CHECKING:
    from usecases.services import Services


def scorer(name: str) -> ScorerSpec:
    spec = SCORERS.get(name)
    if spec is None:
        raise NotFound(f"no scorer named {name!r}")
    return spec


def score(services: Services, spec: ScorerSpec, body: Any, principal: Principal | None) -> tuple[RunRow, bool]:
    """Return (run, cached) for scoring ``body.predictions`` against ``body.answer_key`` with ``body.params``;
    ``body`` is the scorer's typed request (see api/routers/scorers.py)."""
    require_for_runs(services, principal)

    def produce() -> ScoreOutcome:
        check_unique(body.answer_key.items, ("answer_key", "items"))
        return ScoreOutcome.model_validate(score_all(spec, body.answer_key.items, body.predictions.items, body.params))

    request: StrictModel = body
    params_json = runs.canonical_params(request)
    key: runs.CacheKey = ("scorer", spec.name, spec.version, runs.sha256_hex(params_json))
    return runs.stored_or_computed(services.engines, key, params_json, produce, principal.key_id if principal else None)
