"""ViMU (Video Metaphorical Understanding) scorer (Li & Wang, protocol as in the ViMU repository).

Four tasks per video: OE (open-ended, scored by an external LLM judge whose rubric output is validated here),
EG / RM / SV (multi-select). Multi-select rule: any predicted letter outside the gold set scores 0, an empty
gold set scores 0, otherwise ``|pred ∩ gold| / |gold|``. OE: ``score_total = core + implicit + target -
hallucination - literal ∈ [-6, 9]``, normalised ``(total + 6)/15 · 100``; an ``[ERROR]`` answer has total -1.
Task scores are on 0-100; ``SSU-Avg = mean(RM, SV)``, ``All-Avg = mean(OE, EG, RM, SV)``. Letter sets are
held as bit masks so the scoring itself is vectorised.
"""

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.registry import MetricInfo, ScorerSpec, register
from service.scoring._common import (
    BootstrapParams,
    KeyItemBase,
    Label,
    Letter,
    PredItemBase,
    check_bootstrap,
    check_key_budget,
    column,
    group_means,
    match_items,
    metric,
    multi_group_means,
    result,
)
from service.stats import bootstrap_means, percentile_interval
from service.types import StrictModel

TASKS = ("OE", "EG", "RM", "SV")
Task = Literal["OE", "EG", "RM", "SV"]
_TASK_CODE = {t: i for i, t in enumerate(TASKS)}
_BIT = {chr(65 + i): 1 << i for i in range(26)}
MACRO_LABELS = {
    "RM": {
        "A": "Literal/Direct",
        "B": "Opposition/Incongruity",
        "C": "Attitude/Tone",
        "D": "Amplification/Stylization",
        "E": "Implicit/Coded Social Framing",
    },
    "SV": {
        "A": "None",
        "B": "Emotional attitude",
        "C": "Social evaluation/devaluation",
        "D": "Norm/value framing",
        "E": "Identity/ideological",
    },
}
"""Macro labels of the RM / SV options [C: ``20-vimu_ss.py`` guidance]."""
OE_MIN, OE_MAX = -6, 9


class OEScoreBreakdown(StrictModel):
    """The OE judge's rubric components."""

    core_intent: int = Field(ge=0, le=5, description="Core intended meaning recovered, 0-5.")
    implicit_signal: int = Field(ge=0, le=3, description="Implicit signals identified, 0-3.")
    target_or_social_meaning: int = Field(ge=0, le=1, description="Target / social meaning identified, 0-1.")
    hallucination_penalty: int = Field(ge=0, le=3, description="Penalty for hallucinated content, 0-3.")
    literal_only_penalty: int = Field(ge=0, le=3, description="Penalty for a literal-only reading, 0-3.")


class OEJudge(StrictModel):
    """External LLM-judge output for one OE answer; ``score_total`` must equal the rubric formula."""

    score_breakdown: OEScoreBreakdown
    score_total: int = Field(
        ge=OE_MIN,
        le=OE_MAX,
        description="core + implicit + target - hallucination - literal, in [-6, 9] (checked).",
    )
    verdict: Literal["excellent", "good", "partial", "poor", "wrong"] | None = Field(
        None, description="Judge verdict (optional)."
    )
    model: str | None = Field(None, max_length=128, description="Judge model name (provenance).")
    prompt_sha256: str | None = Field(
        None, pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the judge prompt (provenance)."
    )
    rubric_version: Label | None = Field(None, description="Rubric version (provenance).")


class AnswerKeyItem(KeyItemBase):
    """One ViMU question; OE items carry no options."""

    task: Task = Field(description="OE open-ended, EG evidence grounding, RM rhetoric, SV social value.")
    options: list[Letter] = Field(
        default_factory=list, max_length=26, description="Option letters (EG/RM/SV; empty for OE)."
    )
    correct_options: list[Letter] = Field(
        default_factory=list, max_length=26, description="Gold option letters, a subset of options (EG/RM/SV)."
    )
    video_id: Label | None = Field(None, description="Video the question belongs to.")
    difficulty: Label | None = Field(None, description="qa.difficulty (per-difficulty breakdown).")
    macro_label: Label | None = Field(None, description="Free category label (per-label breakdown).")
    target_subjects: list[Label] = Field(
        default_factory=list, max_length=32, description="Target subjects [R] (per-value breakdown)."
    )
    evidence_sources: list[Label] = Field(
        default_factory=list,
        max_length=32,
        description="Evidence sources, e.g. visual / speech / on-screen text / audio [R] (per-value breakdown).",
    )
    surface_form: Label | None = Field(None, description="Surface form [R] (per-value breakdown).")
    source_platform: Label | None = Field(None, description="Source platform [R] (per-value breakdown).")


class PredictionItem(PredItemBase):
    """``selected_options`` for EG/RM/SV, ``judge`` for OE, or ``error`` for a failed model answer."""

    selected_options: list[Letter] | None = Field(
        None, max_length=26, description="Selected option letters (EG/RM/SV); duplicates are ignored."
    )
    judge: OEJudge | None = Field(None, description="Judge output (OE only).")
    error: bool = Field(
        False,
        description="The model answer was an error ('[ERROR]'): OE total -1 (reference behaviour), "
        "multi-select score 0.",
    )
    prompt_mode: Literal["without_guidance", "with_guidance"] | None = Field(
        None, description="RM/SV prompt mode (reported in the breakdown)."
    )
    task: Task | None = Field(None, description="Task of the item (optional; must match the answer key).")


class Params(BootstrapParams):
    """ViMU scoring settings: percentile-bootstrap CIs of the task scores (stratified by task)."""


METRICS = {
    "oe": MetricInfo(True, (0.0, 100.0), "Open-ended: mean normalised judge score (total+6)/15·100, missing = 0."),
    "eg": MetricInfo(
        True,
        (0.0, 100.0),
        "Evidence grounding: mean multi-select score ×100 over all items, missing = 0 (breakdown.tasks.EG: "
        "avg_score_100 and its rates are over the answered items, n_predicted).",
    ),
    "rm": MetricInfo(
        True,
        (0.0, 100.0),
        "Rhetoric mechanisms: mean multi-select score ×100 over all items, missing = 0 (breakdown.tasks.RM: "
        "avg_score_100 and its rates are over the answered items, n_predicted).",
    ),
    "sv": MetricInfo(
        True,
        (0.0, 100.0),
        "Social value signals: mean multi-select score ×100 over all items, missing = 0 (breakdown.tasks.SV: "
        "avg_score_100 and its rates are over the answered items, n_predicted).",
    ),
    "ssu_avg": MetricInfo(True, (0.0, 100.0), "SSU-Avg = mean(RM, SV)."),
    "all_avg": MetricInfo(True, (0.0, 100.0), "All-Avg = mean(OE, EG, RM, SV) (leaderboard metric)."),
}
RECONSTRUCTED = [
    "breakdown.by_target_subject",
    "breakdown.by_evidence_source",
    "breakdown.by_surface_form",
    "breakdown.by_source_platform",
]


def aggregate(oe: float, eg: float, rm: float, sv: float) -> tuple[float, float]:
    """``(SSU-Avg, All-Avg)`` from the four task scores (reproduces the 16 published leaderboard rows)."""
    return (rm + sv) / 2.0, (oe + eg + rm + sv) / 4.0


def random_subset_chance(gold_size: np.ndarray, n_options: np.ndarray) -> np.ndarray:
    """Expected multi-select score of a uniform random non-empty subset: ``2^(g-1) / (2^K - 1)``."""
    g = np.asarray(gold_size, dtype=np.int64)
    k = np.asarray(n_options, dtype=np.int64)
    return np.where(g > 0, np.ldexp(1.0, np.maximum(g - 1, 0)) / (np.ldexp(1.0, k) - 1.0), 0.0)


def _mask(letters: Sequence[str]) -> int:
    return sum(map(_BIT.__getitem__, set(letters)))


def _key_arrays(key_items: Sequence[AnswerKeyItem]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Task codes and option / gold bit masks; inconsistent items raise InvalidInput."""
    n = len(key_items)
    task = np.empty(n, dtype=np.int64)
    opts = np.zeros(n, dtype=np.int64)
    gold = np.zeros(n, dtype=np.int64)
    for i, it in enumerate(key_items):
        task[i] = _TASK_CODE[it.task]
        loc = ("answer_key", "items", i)
        if it.task == "OE":
            if it.options or it.correct_options:
                raise InvalidInput("OE items carry no options", (*loc, "options"))
            continue
        if not it.options:
            raise InvalidInput(f"{it.task} items need options", (*loc, "options"))
        if len(set(it.options)) != len(it.options):
            raise InvalidInput("option letters must be unique", (*loc, "options"))
        opts[i] = _mask(it.options)
        gold[i] = _mask(it.correct_options)
        if gold[i] & ~opts[i]:
            raise InvalidInput("correct_options must be a subset of options", (*loc, "correct_options"))
    return task, opts, gold


def check_key(key_items: list[AnswerKeyItem], params: Params) -> None:
    """The answer-key checks of :func:`score` (``ScorerSpec.check_key``): the bootstrap budget; OE items without
    options, the others with unique option letters holding their correct options."""
    check_key_budget(params.n_resamples, len(key_items))
    _key_arrays(key_items)


def _pred_arrays(
    pred_items: Sequence[PredictionItem], index: np.ndarray, task: np.ndarray, opts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
    """Per prediction: selected bit mask and OE total (validated against the key and the rubric)."""
    sel = np.zeros(len(pred_items), dtype=np.int64)
    total = np.zeros(len(pred_items), dtype=np.int64)
    verdicts: list[str | None] = [None] * len(pred_items)
    for j, (p, i) in enumerate(zip(pred_items, index.tolist(), strict=True)):
        loc = ("predictions", "items", j)
        t = TASKS[task[i]]
        if p.task is not None and p.task != t:
            raise InvalidInput(f"task {p.task} does not match the answer key ({t})", (*loc, "task"))
        if t == "OE":
            if p.selected_options is not None:
                raise InvalidInput("OE predictions carry a judge, not selected_options", (*loc, "selected_options"))
            if p.error:
                if p.judge is not None:
                    raise InvalidInput("an error prediction carries no judge output", (*loc, "judge"))
                total[j] = -1
                continue
            if p.judge is None:
                raise InvalidInput("OE predictions need the judge output", (*loc, "judge"))
            b = p.judge.score_breakdown
            formula = (
                b.core_intent
                + b.implicit_signal
                + b.target_or_social_meaning
                - b.hallucination_penalty
                - b.literal_only_penalty
            )
            if p.judge.score_total != formula:
                raise InvalidInput(
                    f"score_total {p.judge.score_total} != core + implicit + target - hallucination - "
                    f"literal = {formula}",
                    (*loc, "judge", "score_total"),
                )
            total[j] = formula
            verdicts[j] = p.judge.verdict
            continue
        if p.judge is not None:
            raise InvalidInput(f"{t} predictions carry selected_options, not a judge", (*loc, "judge"))
        if p.error:
            if p.selected_options:
                raise InvalidInput("an error prediction selects no options", (*loc, "selected_options"))
            continue
        if p.selected_options is None:
            raise InvalidInput(f"{t} predictions need selected_options", (*loc, "selected_options"))
        for k, letter in enumerate(p.selected_options):
            if not _BIT[letter] & opts[i]:
                raise InvalidInput(f"option {letter!r} is not an option of this item", (*loc, "selected_options", k))
        sel[j] = _mask(p.selected_options)
    return sel, total, verdicts


def _ms_summary(sel: np.ndarray, gold: np.ndarray, opts: np.ndarray, score: np.ndarray, has: np.ndarray) -> dict:
    """Multi-select task summary and chance references.

    ``avg_score_100`` and its sibling rates and counts are over the answered items (``n_predicted``, the
    reference's denominator); ``score_100_missing_as_zero`` is over all ``n`` items (the task metric).
    """
    n_pred = int(has.sum())
    pred_count = np.bitwise_count(sel[has]).astype(np.float64)
    gold_count = np.bitwise_count(gold).astype(np.float64)
    answered = score[has]
    summary: dict[str, Any] = {
        "n": int(score.size),
        "n_predicted": n_pred,
        "rates_over": "n_predicted",
        "score_100_missing_as_zero": 100.0 * float(score.mean()),
    }
    if n_pred:
        avg_pred, avg_gold = float(pred_count.mean()), float(gold_count[has].mean())
        summary |= {
            "avg_score_100": 100.0 * float(answered.mean()),
            "exact_match_rate": float(np.mean(answered == 1.0)),
            "zero_score_rate": float(np.mean(answered == 0.0)),
            "exact_set_match_rate": float(np.mean(sel[has] == gold[has])),
            "avg_pred_option_count": avg_pred,
            "avg_gold_option_count": avg_gold,
            "selection_conservatism": avg_pred - avg_gold,
        }
    union = int(np.bitwise_or.reduce(opts))
    inv_g = np.divide(1.0, gold_count, out=np.zeros_like(gold_count), where=gold_count > 0)
    summary["chance"] = {
        "random_nonempty_subset": 100.0 * float(random_subset_chance(gold_count, np.bitwise_count(opts)).mean()),
        "select_all": 100.0 * float(np.mean((opts == gold) & (gold > 0))),
        **{
            f"always_{letter}": 100.0 * float(np.mean(((gold >> b) & 1) * inv_g))
            for b, letter in enumerate(_BIT)
            if union >> b & 1
        },
    }
    return summary


def _oe_summary(total: np.ndarray, verdicts: list[str | None], n: int, n_errors: int, values: np.ndarray) -> dict:
    """OE summary: the reference statistics over judged items, plus the all-items metric base."""
    summary: dict[str, Any] = {
        "n": n,
        "n_judged": int(total.size),
        "n_errors": n_errors,
        "rates_over": "n_judged",
        "score_100_missing_as_zero": float(values.mean()),
    }
    if total.size:
        avg_raw = float(total.mean())
        summary |= {
            "avg_raw": avg_raw,
            "avg_normalized_score_100": (avg_raw - OE_MIN) / (OE_MAX - OE_MIN) * 100.0,
            "success_rate": float(np.mean(total >= 3)),
            "perfect_rate": float(np.mean(total == OE_MAX)),
            "wrong_rate": float(np.mean(total <= 0)),
            "verdicts": {v: verdicts.count(v) for v in sorted({v for v in verdicts if v is not None})},
        }
    return summary


def score(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> dict[str, Any]:
    """Score one split of ViMU predictions: per-task scores, SSU-Avg, All-Avg, summaries, breakdowns."""
    ids = column(key_items, "item_id")
    index = match_items(ids, column(pred_items, "item_id"))
    n = len(key_items)
    check_bootstrap(params, n)
    task, opts, gold = _key_arrays(key_items)
    sel_p, total_p, verdicts = _pred_arrays(pred_items, index, task, opts)
    has = np.zeros(n, dtype=bool)
    has[index] = True
    sel = np.zeros(n, dtype=np.int64)
    sel[index] = sel_p
    gold_count = np.bitwise_count(gold)
    hit = np.bitwise_count(sel & gold)
    ms = np.where((gold_count == 0) | ((sel & ~gold) != 0), 0.0, hit / np.maximum(gold_count, 1))
    oe_total = np.zeros(n)
    oe_total[index] = total_p
    values = np.where(task == 0, np.where(has, (oe_total - OE_MIN) / (OE_MAX - OE_MIN) * 100.0, 0.0), 100.0 * ms)

    rng = np.random.default_rng(params.seed)
    scores: dict[str, dict] = {}
    reps: dict[str, np.ndarray] = {}
    tasks_summary: dict[str, Any] = {}
    for code, name in enumerate(TASKS):
        mask = task == code
        if not mask.any():
            continue
        v = values[mask]
        low = high = None
        if params.n_resamples:
            reps[name] = bootstrap_means(v, params.n_resamples, rng)
            low, high = percentile_interval(reps[name], params.confidence)
        scores[name.lower()] = metric(float(v.mean()), low, high, int(mask.sum()))
        if name == "OE":
            judged = np.flatnonzero(task[index] == 0)
            n_err = sum(1 for j in judged.tolist() if pred_items[j].error)
            tasks_summary[name] = _oe_summary(
                total_p[judged], [verdicts[j] for j in judged.tolist()], int(mask.sum()), n_err, v
            )
        else:
            tasks_summary[name] = _ms_summary(sel[mask], gold[mask], opts[mask], ms[mask], has[mask])
    for name, members in (("ssu_avg", ("RM", "SV")), ("all_avg", TASKS)):
        if all(t.lower() in scores for t in members):
            value = float(np.mean([scores[t.lower()]["value"] for t in members]))
            low = high = None
            if params.n_resamples:
                low, high = percentile_interval(np.mean([reps[t] for t in members], axis=0), params.confidence)
            n_members = int(np.isin(task, [_TASK_CODE[t] for t in members]).sum())
            scores[name] = metric(value, low, high, n_members)

    breakdown = {
        "tasks": tasks_summary,
        **_categories(key_items, task, gold, values),
        "prompt_modes": _counts(column(pred_items, "prompt_mode")),
        "complete_subset": bool(has.all()),
        "bootstrap": {"seed": params.seed, "n_resamples": params.n_resamples, "stratified_by": "task"},
    }
    return result(scores, breakdown, index.size / n, RECONSTRUCTED, ids, values)


def _counts(values: Sequence[str | None]) -> dict[str, int]:
    present = [v for v in values if v is not None]
    return {v: present.count(v) for v in sorted(set(present))}


def _categories(key_items: Sequence[AnswerKeyItem], task: np.ndarray, gold: np.ndarray, values: np.ndarray) -> dict:
    """Per-task mean score (0-100) by category field, and by gold option for RM / SV (macro labels)."""
    single = {
        "by_difficulty": column(key_items, "difficulty"),
        "by_macro_label": column(key_items, "macro_label"),
        "by_surface_form": column(key_items, "surface_form"),
        "by_source_platform": column(key_items, "source_platform"),
    }
    multi = {
        "by_target_subject": column(key_items, "target_subjects"),
        "by_evidence_source": column(key_items, "evidence_sources"),
    }
    out: dict[str, dict] = {name: {} for name in [*single, *multi, "by_gold_option"]}
    for code, t in enumerate(TASKS):
        members = np.flatnonzero(task == code)
        if not members.size:
            continue
        v = values[members]
        picked = members.tolist()
        for name, labels in single.items():
            table = group_means([labels[i] for i in picked], v)
            if table:
                out[name][t] = table
        for name, labels in multi.items():
            table = multi_group_means([labels[i] for i in picked], v)
            if table:
                out[name][t] = table
        if t in MACRO_LABELS:
            names = MACRO_LABELS[t]
            gold_labels = [
                [f"{letter}: {names.get(letter, letter)}" for letter, bit in _BIT.items() if g & bit]
                for g in gold[members].tolist()
            ]
            out["by_gold_option"][t] = multi_group_means(gold_labels, v)
    return out


COST_UNIT = "items (answer key plus predictions)"
SYNC_BUDGET = 1.5e5
"""Items scored in about 1 s of CPU (bench/scorer_costs.py: 1.5e5 items per CPU second at 50,000 key items with the
default 1000 bootstrap resamples)."""
HARD_CAP = 1.5e6
PAIRED_TESTS = {"all_avg": "bootstrap"}
"""Per-item values are 0-100 task scores: graded, so the paired bootstrap."""


def cost(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> float:
    """Answer-key plus prediction items (``COST_UNIT``)."""
    return float(len(key_items) + len(pred_items))


SPEC = register(
    ScorerSpec(
        name="vimu",
        version="1",
        summary="ViMU video subtext benchmark: OE judge-rubric scores (validated), EG/RM/SV multi-select "
        "partial credit, SSU-Avg and All-Avg with stratified bootstrap CIs, chance references.",
        paper="ViMU: Benchmarking Video Metaphorical Understanding",
        citation="Li & Wang, ViMU: Benchmarking Video Metaphorical Understanding, arXiv:2605.14607 (2026)",
        answer_key_item_model=AnswerKeyItem,
        prediction_item_model=PredictionItem,
        params_model=Params,
        metrics=METRICS,
        primary_metric="all_avg",
        score=score,
        cost=cost,
        cost_unit=COST_UNIT,
        sync_budget=SYNC_BUDGET,
        hard_cap=HARD_CAP,
        paired_tests=PAIRED_TESTS,
        check_key=check_key,
    )
)
