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
    overlay: Callable[[Any], Any] | None = None
    """``overlay(result) -> service.plot_overlay.Curves``: the curves of the plot, declared when several runs can be
    drawn on one figure (``GET /v1/runs/compare/plot``); None when the plot is not curves (bars, a scatter)."""
    kind: str = field(default="estimator", init=False)


@dataclass(frozen=True)
class MetricInfo:
    """A scorer metric: direction, range and description (shown in the catalog and leaderboard)."""

    higher_is_better: bool
    range: tuple[float, float]
    description: str


@dataclass(frozen=True)
class Upstream:
    """A reference implementation a convention follows: its name and the version or commit followed."""

    name: str
    version: str


@dataclass(frozen=True)
class ConventionOption:
    """One value of a convention param and the upstream code(s) that behave that way."""

    value: str
    upstreams: tuple[Upstream, ...]


@dataclass(frozen=True)
class Convention:
    """A scorer param where reference implementations disagree: its default (the benchmark's own reference code)
    and every option with the upstreams it follows (shown in the catalog)."""

    param: str
    default: str
    options: tuple[ConventionOption, ...]


PAIRED_TESTS = ("mcnemar", "wilcoxon", "bootstrap")
"""Paired tests a scorer may declare for a metric with per-item values: exact McNemar (0/1 values), Wilcoxon
signed-rank, or the seeded paired percentile bootstrap of the mean difference."""


@dataclass(frozen=True)
class ScorerSpec:
    """A benchmark scorer: item models, params, metrics, ``score(key_items, pred_items, params)`` and its cost model.

    ``score`` returns ``scores``, ``breakdown``, ``coverage``, ``reconstructed``, ``item_scores`` (the primary
    metric per item) and optionally ``item_metrics`` (``{metric: [value or None per item]}`` in the order of
    ``item_scores``). ``paired_tests`` names, for every metric with per-item values, the test comparing two
    submissions when the values are graded (0/1 values always get McNemar); by default only the primary metric,
    with the paired bootstrap. ``cost(key_items, pred_items, params)`` is in ``cost_unit`` and sees the items with
    uploaded arrays resolved: above ``sync_budget`` a stateless call becomes a job, above ``hard_cap`` it is refused.
    """

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
    cost: Callable[[list[Any], list[Any], Any], float]
    cost_unit: str
    sync_budget: float
    hard_cap: float
    paired_tests: dict[str, str] = field(default_factory=dict)
    metadata_params: tuple[str, ...] = ()
    """Params fields a benchmark submission sets through its ``metadata`` (e.g. RAVEN-Bench's input ``setting``);
    the benchmark's fixed scorer params supply every other field."""
    conventions: tuple[Convention, ...] = ()
    """Params choosing between disagreeing reference implementations (``GET /v1/scorers/{name}`` lists them)."""
    check_key: Callable[[list[Any], Any], None] | None = None
    """``check_key(key_items, params)``: every check ``score`` makes of one split's answer-key items (in item_id
    order, uploaded arrays resolved) and of the params whatever the predictions, raising ``InvalidInput`` at
    ``("answer_key", "items", i, field...)``, ``("answer_key", "items")`` for the split as a whole, or
    ``("scorer_params", field...)``. Registration and answer-key uploads run it on each split, so a key they accept
    can be scored."""
    kind: str = field(default="scorer", init=False)

    def __post_init__(self) -> None:
        if not self.paired_tests:
            object.__setattr__(self, "paired_tests", {self.primary_metric: "bootstrap"})
        if self.primary_metric not in self.paired_tests:
            raise ValueError(f"{self.name}: paired_tests must include the primary metric {self.primary_metric!r}")
        for metric, test in self.paired_tests.items():
            if metric not in self.metrics or test not in PAIRED_TESTS:
                raise ValueError(f"{self.name}: paired test {test!r} of {metric!r} is not one of {PAIRED_TESTS}")
        unknown = set(self.metadata_params) - set(self.params_model.model_fields)
        if unknown:
            raise ValueError(f"{self.name}: metadata_params {sorted(unknown)} are not params fields")
        for conv in self.conventions:
            if conv.param not in self.params_model.model_fields:
                raise ValueError(f"{self.name}: convention {conv.param!r} is not a params field")
            if conv.default not in {o.value for o in conv.options}:
                raise ValueError(f"{self.name}: convention {conv.param!r} default {conv.default!r} is not an option")


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
