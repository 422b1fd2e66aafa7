"""Hollywood public-domain film MCQ benchmark scorer (every protocol choice [R]).

Accuracy with a Wilson CI, chance ``mean(1/K_i)``, an exact one-sided test against chance (binomial for one
option count, Poisson-binomial for mixed counts: a convolution of one binomial per distinct K, see
``service.stats.tails``), a film-clustered SE, and per-narrative-element / per-decade breakdowns with
Holm-adjusted p-values. Missing predictions score 0 and lower ``coverage``.
"""

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.registry import MetricInfo, ScorerSpec, register
from service.scoring._common import (
    ItemId,
    KeyItemBase,
    Label,
    PredItemBase,
    column,
    int_column,
    match_items,
    metric,
    result,
)
from service.stats import (
    binomial_se,
    cluster_robust_se,
    factorize,
    holm,
    mean_stderr,
    poisson_binomial_tail_ge,
    poisson_binomial_two_sided,
    wilson,
    wilson_interval,
)
from service.types import StrictModel

MAX_OPTIONS = 26


class AnswerKeyItem(KeyItemBase):
    """One multiple-choice question about a film clip (item metadata [R])."""

    num_options: int = Field(ge=2, le=MAX_OPTIONS, description="Number of answer options K (2-26).")
    answer_idx: int = Field(ge=0, le=MAX_OPTIONS - 1, description="0-based index of the correct option (< K).")
    film_id: ItemId = Field(description="Film identifier: the cluster for the film-clustered SE.")
    narrative_element: Label | None = Field(
        None,
        description="Narrative element probed, e.g. character, event/plot, causality/motivation, emotion, "
        "setting, temporal order, dialogue/speaker (free string; per-element breakdown).",
    )
    release_year: int | None = Field(None, ge=1880, le=2100, description="Release year (per-decade breakdown).")
    title: str | None = Field(None, max_length=256, description="Film title (informational).")
    studio: Label | None = Field(None, description="Studio (informational).")
    modality_needed: Literal["visual", "audio", "both"] | None = Field(
        None, description="Modality needed to answer (per-modality breakdown)."
    )
    question: str | None = Field(None, max_length=8000, description="Question text (informational).")


class PredictionItem(PredItemBase):
    """A model's chosen option."""

    choice_idx: int = Field(ge=0, le=MAX_OPTIONS - 1, description="0-based index of the chosen option (< K).")


class Params(StrictModel):
    """Film-MCQ scoring settings."""

    confidence: float = Field(
        0.95, gt=0.5, lt=1.0, description="Two-sided confidence level of the Wilson intervals (default 0.95)."
    )
    alpha: float = Field(
        0.05,
        gt=0.0,
        lt=0.5,
        description="Significance level of the 'near-chance' flag and of the Holm-adjusted category flags "
        "(default 0.05).",
    )


METRICS = {
    "accuracy": MetricInfo(True, (0.0, 1.0), "Fraction of key items answered correctly (missing = wrong); Wilson CI."),
    "chance": MetricInfo(False, (0.0, 1.0), "Expected accuracy of uniform guessing, mean(1/K_i) (reference)."),
    "p_value_vs_chance": MetricInfo(
        False,
        (0.0, 1.0),
        "Exact one-sided P(X >= correct) under guessing (binomial; Poisson-binomial for mixed K).",
    ),
    "clustered_se": MetricInfo(False, (0.0, 1.0), "Film-clustered standard error of accuracy (n = films)."),
    "coverage": MetricInfo(True, (0.0, 1.0), "Fraction of key items that received a prediction."),
}
RECONSTRUCTED = [*METRICS, "breakdown"]


def _category_table(
    codes: np.ndarray, names: Sequence[Any], correct: np.ndarray, k_opts: np.ndarray, params: Params
) -> dict[str, dict[str, Any]]:
    """Per-label accuracy, Wilson CI, chance, exact p vs chance and Holm-adjusted p.

    ``codes`` index ``names``; the label ``None`` (item without that metadata) is left out.
    """
    keep = [i for i, name in enumerate(names) if name is not None]
    if not keep:
        return {}
    n = np.bincount(codes, minlength=len(names))
    k = np.bincount(codes, weights=correct, minlength=len(names)).astype(np.int64)
    by_k = np.bincount(codes * (MAX_OPTIONS + 1) + k_opts, minlength=len(names) * (MAX_OPTIONS + 1))
    by_k = by_k.reshape(len(names), MAX_OPTIONS + 1)
    opts = np.arange(MAX_OPTIONS + 1)
    low, high = wilson_interval(k[keep], n[keep], params.confidence)
    p_vals = []
    for i in keep:
        present = by_k[i] > 0
        p_vals.append(poisson_binomial_tail_ge(int(k[i]), 1.0 / opts[present], by_k[i][present]))
    adjusted = holm(p_vals)
    table = {}
    for j, i in enumerate(keep):
        present = by_k[i] > 0
        table[str(names[i])] = {
            "n": int(n[i]),
            "correct": int(k[i]),
            "accuracy": float(k[i] / n[i]),
            "ci_low": float(low[j]),
            "ci_high": float(high[j]),
            "chance": float(by_k[i][present] @ (1.0 / opts[present]) / n[i]),
            "p_value": float(p_vals[j]),
            "p_holm": float(adjusted[j]),
            "significant_holm": bool(adjusted[j] < params.alpha),
        }
    return table


def score_arrays(
    num_options: np.ndarray,
    answer_idx: np.ndarray,
    film_codes: np.ndarray,
    pred_index: np.ndarray,
    choice_idx: np.ndarray,
    params: Params,
) -> tuple[np.ndarray, dict[str, dict], dict[str, Any]]:
    """Array core of :func:`score`: per-item correctness, the ``scores`` dict and the overall breakdown."""
    n = num_options.size
    correct = np.zeros(n)
    correct[pred_index] = choice_idx == answer_idx[pred_index]
    k = int(correct.sum())
    counts = np.bincount(num_options, minlength=MAX_OPTIONS + 1)
    present = np.flatnonzero(counts)
    chance = float(counts[present] @ (1.0 / present) / n)
    p_one = poisson_binomial_tail_ge(k, 1.0 / present, counts[present])
    p_two = poisson_binomial_two_sided(k, 1.0 / present, counts[present])
    low, high = wilson(k, n, params.confidence)
    n_films = int(film_codes.max()) + 1
    iid_se = float(binomial_se(k, n))
    se_kind = "film-clustered"
    if n_films >= 2:
        cl_se = cluster_robust_se(correct, film_codes, n_films)
    else:
        cl_se, se_kind = iid_se, "binomial (fewer than 2 films: clustering undefined)"
    coverage = pred_index.size / n
    scores = {
        "accuracy": metric(k / n, low, high, n),
        "chance": metric(chance, n=n),
        "p_value_vs_chance": metric(p_one, n=n),
        "clustered_se": metric(cl_se, n=n_films),
        "coverage": metric(coverage, n=n),
    }
    overall = {
        "correct": k,
        "n": n,
        "n_missing": n - int(pred_index.size),
        "n_films": n_films,
        "clustered_se_kind": se_kind,
        "binomial_se": iid_se,
        "lm_eval_se": mean_stderr(correct) if n >= 2 else None,
        "chance_test": "binomial" if present.size == 1 else "poisson-binomial",
        "p_value_two_sided": p_two,
        "near_chance": bool(p_two >= params.alpha and low <= chance <= high),
        "option_counts": {str(int(kk)): int(counts[kk]) for kk in present},
    }
    return correct, scores, overall


def _check_answers(num_options: np.ndarray, answer_idx: np.ndarray) -> None:
    """Every ``answer_idx`` below its item's ``num_options`` (the item model bounds both, ``answer_idx`` ≥ 0)."""
    bad = np.flatnonzero(answer_idx >= num_options)
    if bad.size:
        i = int(bad[0])
        raise InvalidInput(
            f"answer_idx {answer_idx[i]} is out of range for num_options={num_options[i]}",
            ("answer_key", "items", i, "answer_idx"),
        )


def check_key(key_items: list[AnswerKeyItem], params: Params) -> None:
    """The answer-key check of :func:`score` (``ScorerSpec.check_key``): each answer is one of its item's options."""
    _check_answers(int_column(key_items, "num_options"), int_column(key_items, "answer_idx"))


def _arrays(key_items: Sequence[AnswerKeyItem], pred_items: Sequence[PredictionItem]) -> tuple:
    """Arrays of the key and predictions in one pass each; out-of-range indices raise InvalidInput (without the
    option count for a private item)."""
    num_options = int_column(key_items, "num_options")
    answer_idx = int_column(key_items, "answer_idx")
    _check_answers(num_options, answer_idx)
    ids = column(key_items, "item_id")
    pred_index = match_items(ids, column(pred_items, "item_id"))
    choice_idx = int_column(pred_items, "choice_idx")
    bad = np.flatnonzero(choice_idx >= num_options[pred_index])
    if bad.size:
        j = int(bad[0])
        i = int(pred_index[j])
        bound = "this private item's options" if key_items[i].split == "private" else f"num_options={num_options[i]}"
        raise InvalidInput(
            f"choice_idx {choice_idx[j]} is out of range for {bound}", ("predictions", "items", j, "choice_idx")
        )
    return ids, num_options, answer_idx, pred_index, choice_idx


def _by_label(
    labels: list[Any], correct: np.ndarray, num_options: np.ndarray, params: Params
) -> dict[str, dict[str, Any]]:
    """``_category_table`` of one metadata column (empty at once when no item has that metadata)."""
    if labels.count(None) == len(labels):
        return {}
    return _category_table(*factorize(labels), correct, num_options, params)


def score(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> dict[str, Any]:
    """Score one split of film-MCQ predictions; see the module docstring."""
    ids, num_options, answer_idx, pred_index, choice_idx = _arrays(key_items, pred_items)
    film_codes, _ = factorize(column(key_items, "film_id"))
    correct, scores, overall = score_arrays(num_options, answer_idx, film_codes, pred_index, choice_idx, params)
    years = column(key_items, "release_year")
    by_decade = {}
    if years.count(None) < len(years):
        year_codes, distinct = factorize(years)
        decade_codes, decades = factorize([None if y is None else f"{y // 10 * 10}s" for y in distinct])
        by_decade = _category_table(decade_codes[year_codes], decades, correct, num_options, params)
    breakdown = {
        "overall": overall,
        "by_narrative_element": _by_label(column(key_items, "narrative_element"), correct, num_options, params),
        "by_decade": by_decade,
        "by_modality": _by_label(column(key_items, "modality_needed"), correct, num_options, params),
        "protocol": "reconstructed-v1",
    }
    return result(scores, breakdown, scores["coverage"]["value"], RECONSTRUCTED, ids, correct)


COST_UNIT = "items (answer key plus predictions)"
SYNC_BUDGET = 3e5
"""Items scored in about 1 s of CPU (bench/scorer_costs.py: 3.3e5 items per CPU second at 100,000 key items); a
request holds at most 2e5 items, so stateless film_mcq calls are always synchronous."""
HARD_CAP = 3e6
PAIRED_TESTS = {"accuracy": "mcnemar"}
"""Per-item values are 0/1 correctness flags: exact McNemar."""


def cost(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> float:
    """Answer-key plus prediction items (``COST_UNIT``)."""
    return float(len(key_items) + len(pred_items))


SPEC = register(
    ScorerSpec(
        name="film_mcq",
        version="1",
        summary="Multimodal MCQ on public-domain Hollywood films: accuracy with Wilson CI, exact test vs "
        "chance (Poisson-binomial for mixed option counts), film-clustered SE, Holm-adjusted categories.",
        paper="Hollywood public-domain film MCQ benchmark (title not located)",
        citation="Hollywood public-domain film MCQ benchmark (NeurIPS 2026; title not located), scoring "
        "scoring protocol reconstructed from the abstract",
        answer_key_item_model=AnswerKeyItem,
        prediction_item_model=PredictionItem,
        params_model=Params,
        metrics=METRICS,
        primary_metric="accuracy",
        score=score,
        cost=cost,
        cost_unit=COST_UNIT,
        sync_budget=SYNC_BUDGET,
        hard_cap=HARD_CAP,
        paired_tests=PAIRED_TESTS,
        check_key=check_key,
    )
)
