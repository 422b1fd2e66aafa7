"""The one registry of estimators and scorers (docs/architecture.md). Importing a module registers it."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from service.types import ResultModel, StrictModel


class Progress(Protocol):
    """``progress(fraction, message)``; raises ``service.errors.Cancelled`` once the job is cancelled."""

    def __call__(self, fraction: float, message: str = "") -> None: ...


def no_progress(fraction: float, message: str = "") -> None:
    """Progress sink for synchronous calls."""


@dataclass(frozen=True)
class EstimatorSpec:
    """An estimator: strict params, a result model, ``fn(params, progress) -> result`` and its cost model."""

    name: str
    version: str
    family: str
    summary: str
    paper: str
    """The paper's short title (the full reference is ``citation``)."""
    citation: str
    params_model: type[StrictModel]
    result_model: type[ResultModel]
    fn: Callable[[Any, Progress], ResultModel]
    cost: Callable[[Any], float]
    cost_unit: str
    sync_budget: float
    hard_cap: float
    plot: Callable[[Any], Any] | None = None
    """``plot(result) -> matplotlib.figure.Figure`` drawing the result (matplotlib imported inside), or None."""
    kind: str = field(default="estimator", init=False)


@dataclass(frozen=True)
class MetricInfo:
    """A scorer metric: direction, range and description (shown in the catalog and leaderboard)."""

    higher_is_better: bool
    range: tuple[float, float]
    description: str


@dataclass(frozen=True)
class ScorerSpec:
    """A benchmark scorer: item models, params, metrics and ``score(key_items, pred_items, params)``."""

    name: str
    version: str
    summary: str
    paper: str
    """The paper's short title (the full reference is ``citation``)."""
    citation: str
    answer_key_item_model: type[StrictModel]
    prediction_item_model: type[StrictModel]
    params_model: type[StrictModel]
    metrics: dict[str, MetricInfo]
    primary_metric: str
    score: Callable[[list[Any], list[Any], Any], dict[str, Any]]
    cost: Callable[[int, int], float] = lambda n_key, n_pred: float(n_key + n_pred)
    kind: str = field(default="scorer", init=False)


ESTIMATORS: dict[str, EstimatorSpec] = {}
SCORERS: dict[str, ScorerSpec] = {}


def register(spec: EstimatorSpec | ScorerSpec) -> EstimatorSpec | ScorerSpec:
    """Add ``spec`` to the registry; names are unique per kind."""
    table: dict[str, Any] = ESTIMATORS if isinstance(spec, EstimatorSpec) else SCORERS
    if spec.name in table:
        raise ValueError(f"duplicate registration of {spec.name!r}")
    table[spec.name] = spec
    return spec


def load_all() -> None:
    """Import every estimator and scorer module (explicit imports: no plugin scanning)."""
    import service.estimators
    import service.scoring  # noqa: F401
