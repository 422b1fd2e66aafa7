"""TELEVAL spoken-interaction benchmark scorer (protocol of the TELEVAL repository, HEAD 6acd665).

Per item (0-100 scale): ``basic`` ExistMatch (any gold alias as a contiguous token run), ``choice``
SingleOptionMatch (``cover`` / ``correct``), judge tasks AvgThreshold ``r = (s/5)^power · 100`` of the
(floored) 0-5 judge score, ``modal_consistency`` 100 - corpus WER/CER from ASR edit counts, and external
model scores (DNSMOS, emotion2vec, dialect classifier) averaged as given. Datasets are scored on their items;
groups are size-weighted (repo default) or macro averages of their datasets; Acoustic Robustness is the mean
over acoustic conditions of the worst level. The overall score, the RCF / IA aspect scores and the Caption
Trap rate are RECONSTRUCTED (no source defines them) and listed as such.
"""

import math
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.registry import MetricInfo, ScorerSpec, register
from service.scoring._common import (
    BootstrapParams,
    KeyItemBase,
    Label,
    PredItemBase,
    Text,
    check_bootstrap,
    check_key_budget,
    column,
    match_items,
    metric,
    result,
)
from service.scoring.televal_text import alias_matches, extract_option, meta_audio_mention, token_string, tokenize
from service.stats import bootstrap_means, factorize, percentile_interval, wilson, wilson_interval
from service.types import StrictModel

JudgeTask = Literal[
    "empathetic_response",
    "aed_instruct",
    "dialect_response",
    "human_morality",
    "human_likeness",
    "care_nsv",
    "care_age",
]
ExternalTask = Literal["dnsmos", "empathetic_response_audio", "dialect_response_audio"]
EvalTask = Literal["basic", "choice", "modal_consistency"] | JudgeTask | ExternalTask
JUDGE_TASKS = frozenset(JudgeTask.__args__)
EXTERNAL_TASKS = frozenset(ExternalTask.__args__)
CUE_TYPES = ("emotion", "age", "nsv", "scene", "dialect")
Alias = Annotated[str, Field(min_length=1, max_length=512)]
AnyOf = Annotated[list[Alias], Field(min_length=1, max_length=16)]


class AllOf(StrictModel):
    """A conjunction of aliases (the reference's tuple): every one must occur in the answer."""

    all: list[Alias] = Field(min_length=1, max_length=16, description="Aliases that must all occur.")


class AnswerKeyItem(KeyItemBase):
    """One TELEVAL item."""

    dataset: Label = Field(description="Dataset name; datasets are the unit of the published scores.")
    eval_task: EvalTask = Field(description="Evaluation method of the dataset.")
    ref: Text | Annotated[list[Alias | AnyOf | AllOf], Field(max_length=64)] | None = Field(
        None,
        description="basic: list of gold aliases (a string, a list = any of, {'all': [...]} = all of); "
        "choice: the gold option letter A-D; judge tasks: reference answer text (informational).",
    )
    query: Text | None = Field(None, description="Question transcript (choice: decides the negation cascade).")
    group: Label | None = Field(None, description="Aggregate group, e.g. 'Basic Knowledge'.")
    aspect: Literal["RCF", "IA"] | None = Field(
        None, description="Reliable Content Fulfillment or Interactional Appropriateness [R]."
    )
    condition: Label | None = Field(None, description="Acoustic condition family, e.g. 'babble' (robustness).")
    level: Label | None = Field(None, description="Severity level within the condition, e.g. 'snr_-5'.")
    cue_type: Literal["emotion", "age", "nsv", "scene", "dialect", "none"] | None = Field(
        None, description="Paralinguistic cue the audio carries (Caption-Trap analysis) [R]."
    )
    language: Label | None = Field(None, description="Language or dialect label (informational).")
    para_name: Label | None = Field(None, description="Non-verbal signal type (informational).")


class AsrEdits(StrictModel):
    """ASR alignment of the spoken answer against its text (modal consistency)."""

    S: int = Field(ge=0, le=10_000_000, description="Substitutions.")
    D: int = Field(ge=0, le=10_000_000, description="Deletions.")
    I: int = Field(ge=0, le=10_000_000, description="Insertions.")  # noqa: E741
    ref_len: int = Field(ge=1, le=10_000_000, description="Reference length (words or characters).")


class PredictionItem(PredItemBase):
    """A spoken-language model's answer and the externally computed scores it needs."""

    pred_text: Text | None = Field(None, description="Answer text (transcript); needed by basic and choice.")
    judge_score: float | None = Field(None, ge=0.0, le=5.0, description="External LLM-judge score 0-5.")
    judge_model: str | None = Field(None, max_length=128, description="Judge model (provenance).")
    judge_rubric_version: Label | None = Field(None, description="Judge rubric version (provenance).")
    asr_edits: AsrEdits | None = Field(None, description="ASR edit counts (modal_consistency).")
    model_score: float | None = Field(
        None, ge=-1e6, le=1e6, description="External model score (dnsmos / *_audio tasks), averaged as is."
    )
    caption_trap: bool | None = Field(
        None, description="External judge flag: the reply describes the audio cue instead of acting on it [R]."
    )


class Params(BootstrapParams):
    """TELEVAL scoring settings."""

    choice_cushion: bool = Field(
        True, description="SingleOptionMatch fallback to 'exactly one distinct letter A-D' (default true)."
    )
    judge_floor: bool = Field(True, description="Floor fractional judge scores like the repo's int() (default).")
    linear_judge_tasks: list[JudgeTask] = Field(
        default_factory=list,
        max_length=7,
        description="Judge tasks rescaled linearly (AvgThresholdLinear, r = 20 s); others use power 2.",
    )
    above_threshold: float = Field(60.0, ge=0.0, le=100.0, description="AvgThreshold count threshold (r > 60).")
    group_weighting: Literal["weighted", "macro"] = Field(
        "weighted", description="Group score: sample-count-weighted (repo default) or macro over datasets."
    )
    overall_formula: Literal["dataset_macro", "dataset_weighted", "group_macro"] = Field(
        "dataset_macro",
        description="RECONSTRUCTED overall score: mean over datasets, size-weighted mean over datasets, or "
        "mean over groups (ungrouped datasets count as their own group). External-score datasets excluded.",
    )


METRICS = {
    "overall": MetricInfo(True, (-1e6, 100.0), "Overall score per params.overall_formula [R], 0-100."),
    "basic_match": MetricInfo(True, (0.0, 100.0), "ExistMatch accuracy over basic items ×100 (size-weighted)."),
    "choice_accuracy": MetricInfo(True, (0.0, 100.0), "SingleOptionMatch correct ×100."),
    "choice_cover": MetricInfo(True, (0.0, 100.0), "SingleOptionMatch: an option could be extracted ×100."),
    "judge_avg": MetricInfo(True, (0.0, 100.0), "AvgThreshold mean of rescaled judge scores over judge items."),
    "judge_above60": MetricInfo(True, (0.0, 100.0), "Share of judge items with rescaled score > threshold ×100."),
    "modal_consistency": MetricInfo(True, (-1e6, 100.0), "100 - corpus WER/CER of the spoken vs written answer."),
    "acoustic_robustness": MetricInfo(True, (0.0, 100.0), "Mean over acoustic conditions of the worst level."),
    "rcf": MetricInfo(True, (-1e6, 100.0), "Mean over RCF datasets of the dataset score [R]."),
    "ia": MetricInfo(True, (-1e6, 100.0), "Mean over IA datasets of the dataset score [R]."),
    "caption_trap_rate": MetricInfo(False, (0.0, 1.0), "Share of cue items whose reply captions the cue [R]."),
}
RECONSTRUCTED_FIELDS = ("overall", "rcf", "ia", "caption_trap_rate", "breakdown.caption_trap")


def avg_threshold(scores: Sequence[float], power: int = 2, threshold: float = 60.0, floor: bool = True) -> dict:
    """AvgThreshold: ``r = (s/5)^power · 100``; mean of r and ``#{r > threshold}``.

    [5, 4, 3, 0] give r = [100, 64, 36, 0], mean 50.00, above60 = 2 (linear: 60.0, 2).
    """
    s = np.asarray(scores, dtype=np.float64)
    r = rescale_judge(s, power, floor)
    return {"avg": float(r.mean()), "above": int(np.count_nonzero(r > threshold)), "n": int(r.size)}


def rescale_judge(s: np.ndarray, power: int, floor: bool) -> np.ndarray:
    """``(⌊s⌋/5)^power · 100`` (``⌊·⌋`` only with ``floor``)."""
    return (np.floor(s) if floor else s) ** power / 5.0**power * 100.0


def weighted_mean(scores: Sequence[float], sizes: Sequence[float]) -> float:
    """Sample-count-weighted mean of dataset scores (published Basic Knowledge of GPT-4o-Audio: 52.93)."""
    w = np.asarray(sizes, dtype=np.float64)
    return float(np.asarray(scores, dtype=np.float64) @ w / w.sum())


def acoustic_robustness(table: Mapping[str, Mapping[str, float]]) -> float:
    """Mean over conditions of the worst (minimum) level score (worst levels 40/30/20 → 30.0)."""
    return float(np.mean([min(levels.values()) for levels in table.values()]))


def _check_key(key_items: Sequence[AnswerKeyItem]) -> None:
    """Dataset consistency and task-typed ``ref`` (InvalidInput naming the item)."""
    seen: dict[str, tuple[str, str | None, str | None]] = {}
    for i, it in enumerate(key_items):
        loc = ("answer_key", "items", i)
        sig = (it.eval_task, it.group, it.aspect)
        first = seen.setdefault(it.dataset, sig)
        if first != sig:
            raise InvalidInput(
                f"dataset {it.dataset!r} mixes eval_task/group/aspect {first} and {sig}", (*loc, "dataset")
            )
        if it.eval_task == "basic":
            if not isinstance(it.ref, list) or not it.ref:
                raise InvalidInput("basic items need a non-empty list of aliases", (*loc, "ref"))
            for alias in _aliases(it.ref):
                if not tokenize(alias):
                    raise InvalidInput(f"alias {alias!r} has no tokens (it would match anything)", (*loc, "ref"))
        elif it.eval_task == "choice" and not (
            isinstance(it.ref, str) and len(it.ref) == 1 and it.ref.upper() in "ABCD"
        ):
            raise InvalidInput("choice items need ref = one option letter A-D", (*loc, "ref"))


def check_key(key_items: list[AnswerKeyItem], params: Params) -> None:
    """The answer-key checks of :func:`score` (``ScorerSpec.check_key``): the bootstrap budget, one eval_task,
    group and aspect per dataset, a basic item's aliases each with a token, a choice item's letter A-D."""
    check_key_budget(params.n_resamples, len(key_items))
    _check_key(key_items)


def _aliases(ref: list) -> list[str]:
    out: list[str] = []
    for alt in ref:
        out.extend([alt] if isinstance(alt, str) else alt if isinstance(alt, list) else alt.all)
    return out


def _exist_match(ref: list, pred_text: str) -> bool:
    """ExistMatch: outer list = any of; a nested list = any of; ``{'all': [...]}`` = all of."""
    toks = token_string(pred_text)
    for alt in ref:
        if isinstance(alt, str):
            hit = alias_matches(toks, alt)
        elif isinstance(alt, list):
            hit = any(alias_matches(toks, a) for a in alt)
        else:
            hit = all(alias_matches(toks, a) for a in alt.all)
        if hit:
            return True
    return False


def _per_item(
    key_items: Sequence[AnswerKeyItem], pred_items: Sequence[PredictionItem], index: np.ndarray, params: Params
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-item arrays: value (0-100), cover, raw judge score (NaN if none), ASR errors and reference length."""
    n = len(key_items)
    value = np.zeros(n)
    cover = np.zeros(n)
    judge = np.full(n, np.nan)
    errors = np.zeros(n)
    ref_len = np.zeros(n)
    linear = set(params.linear_judge_tasks)
    for j, (p, i) in enumerate(zip(pred_items, index.tolist(), strict=True)):
        it = key_items[i]
        task = it.eval_task
        loc = ("predictions", "items", j)
        if task in ("basic", "choice"):
            if p.pred_text is None:
                raise InvalidInput(f"{task} items need pred_text", (*loc, "pred_text"))
            if task == "basic":
                value[i] = 100.0 * _exist_match(it.ref, p.pred_text)
            else:
                option = extract_option(p.pred_text, it.query or "", params.choice_cushion)
                cover[i] = option is not None
                value[i] = 100.0 * (option == it.ref.upper())
        elif task in JUDGE_TASKS:
            if p.judge_score is None:
                raise InvalidInput(f"{task} items need judge_score", (*loc, "judge_score"))
            judge[i] = math.floor(p.judge_score) if params.judge_floor else p.judge_score
            value[i] = (judge[i] / 5.0) ** (1 if task in linear else 2) * 100.0
        elif task == "modal_consistency":
            if p.asr_edits is None:
                raise InvalidInput("modal_consistency items need asr_edits", (*loc, "asr_edits"))
            e = p.asr_edits
            errors[i], ref_len[i] = e.S + e.D + e.I, e.ref_len
            value[i] = 100.0 * (1.0 - errors[i] / ref_len[i])
        else:
            if p.model_score is None:
                raise InvalidInput(f"{task} items need model_score", (*loc, "model_score"))
            value[i] = p.model_score
    return value, cover, judge, errors, ref_len


def _modal(errors: np.ndarray, ref_len: np.ndarray, has: np.ndarray) -> float:
    """100 - corpus WER over answered items, scaled by the answered share (a missing item scores 0)."""
    total = ref_len[has].sum()
    if total == 0:
        return 0.0
    return float((100.0 - 100.0 * errors[has].sum() / total) * has.mean())


def score(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> dict[str, Any]:
    """Score one split of TELEVAL predictions: datasets, groups, robustness, Caption Trap, overall."""
    ids = column(key_items, "item_id")
    index = match_items(ids, column(pred_items, "item_id"))
    n = len(key_items)
    check_bootstrap(params, n)
    _check_key(key_items)
    value, cover, judge, errors, ref_len = _per_item(key_items, pred_items, index, params)
    has = np.zeros(n, dtype=bool)
    has[index] = True
    tasks = np.array(column(key_items, "eval_task"), dtype=object)
    rng = np.random.default_rng(params.seed)

    ds_codes, ds_names = factorize(column(key_items, "dataset"))
    datasets: dict[str, dict[str, Any]] = {}
    for d, name in enumerate(ds_names):
        members = np.flatnonzero(ds_codes == d)
        first = key_items[int(members[0])]
        datasets[name] = _dataset_entry(first, members, value, cover, judge, errors, ref_len, has, params, rng)

    scores = _task_metrics(tasks, value, cover, errors, ref_len, has, params, rng)
    acoustic = _acoustic(key_items, tasks, value)
    if acoustic:
        scores["acoustic_robustness"] = metric(
            acoustic_robustness({c: {lv: e["score"] for lv, e in t["levels"].items()} for c, t in acoustic.items()}),
            n=sum(e["n"] for t in acoustic.values() for e in t["levels"].values()),
        )
    groups = _groups(datasets, params)
    scored = {k: v for k, v in datasets.items() if v["eval_task"] not in EXTERNAL_TASKS}
    for aspect in ("RCF", "IA"):
        chosen = [v["score"] for v in scored.values() if v["aspect"] == aspect]
        if chosen:
            scores[aspect.lower()] = metric(float(np.mean(chosen)), n=len(chosen))
    if scored:
        scores["overall"] = metric(_overall(scored, groups, params), n=len(scored))
    trap = _caption_trap(key_items, pred_items, index, judge, params)
    if trap["n"]:
        scores["caption_trap_rate"] = metric(trap["rate"], trap["ci_low"], trap["ci_high"], trap["n"])
    breakdown = {
        "datasets": datasets,
        "groups": groups,
        "acoustic": acoustic,
        "caption_trap": trap,
        "overall_formula": f"reconstructed-v1:{params.overall_formula}",
        "judge_floor": params.judge_floor,
        "bootstrap": {"seed": params.seed, "n_resamples": params.n_resamples},
    }
    reconstructed = [f for f in RECONSTRUCTED_FIELDS if f.split(".")[-1] in scores or f.startswith("breakdown")]
    return result(scores, breakdown, index.size / n, reconstructed, ids, value)


def _boot(v: np.ndarray, params: Params, rng: np.random.Generator) -> tuple[float | None, float | None]:
    if not params.n_resamples:
        return None, None
    return percentile_interval(bootstrap_means(v, params.n_resamples, rng), params.confidence)


def _dataset_entry(
    first: AnswerKeyItem,
    members: np.ndarray,
    value: np.ndarray,
    cover: np.ndarray,
    judge: np.ndarray,
    errors: np.ndarray,
    ref_len: np.ndarray,
    has: np.ndarray,
    params: Params,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """One dataset's score (0-100 scale except external scores), its CI and task-specific statistics."""
    task = first.eval_task
    v = value[members]
    entry: dict[str, Any] = {
        "eval_task": task,
        "group": first.group,
        "aspect": first.aspect,
        "n": int(members.size),
        "n_predicted": int(has[members].sum()),
    }
    low = high = None
    if task in ("basic", "choice"):
        k = int(np.count_nonzero(v))
        low, high = (100.0 * x for x in wilson(k, members.size, params.confidence))
        if task == "choice":
            entry["cover"] = 100.0 * float(cover[members].mean())
        entry["score"] = 100.0 * k / members.size
    elif task == "modal_consistency":
        entry["score"] = _modal(errors[members], ref_len[members], has[members])
    else:
        entry["score"] = float(v.mean())
        low, high = _boot(v, params, rng)
        if task in JUDGE_TASKS:
            entry["above_threshold"] = int(np.count_nonzero(v > params.above_threshold))
            entry["judge_score_mean"] = float(np.nanmean(judge[members])) if entry["n_predicted"] else None
    entry["ci_low"], entry["ci_high"] = low, high
    return entry


def _task_metrics(
    tasks: np.ndarray,
    value: np.ndarray,
    cover: np.ndarray,
    errors: np.ndarray,
    ref_len: np.ndarray,
    has: np.ndarray,
    params: Params,
    rng: np.random.Generator,
) -> dict[str, dict]:
    """Item-level (size-weighted) metrics per evaluation method."""
    scores: dict[str, dict] = {}
    for name, task in (("basic_match", "basic"), ("choice_accuracy", "choice")):
        sel = tasks == task
        if sel.any():
            k, m = int(np.count_nonzero(value[sel])), int(sel.sum())
            low, high = wilson(k, m, params.confidence)
            scores[name] = metric(100.0 * k / m, 100.0 * low, 100.0 * high, m)
            if task == "choice":
                c = int(cover[sel].sum())
                low, high = wilson(c, m, params.confidence)
                scores["choice_cover"] = metric(100.0 * c / m, 100.0 * low, 100.0 * high, m)
    sel = np.isin(tasks, list(JUDGE_TASKS))
    if sel.any():
        v = value[sel]
        low, high = _boot(v, params, rng)
        scores["judge_avg"] = metric(float(v.mean()), low, high, int(v.size))
        k = int(np.count_nonzero(v > params.above_threshold))
        low, high = wilson_interval(k, v.size, params.confidence)
        scores["judge_above60"] = metric(100.0 * k / v.size, 100.0 * float(low), 100.0 * float(high), int(v.size))
    sel = tasks == "modal_consistency"
    if sel.any():
        scores["modal_consistency"] = metric(_modal(errors[sel], ref_len[sel], has[sel]), n=int(sel.sum()))
    return scores


def _acoustic(key_items: Sequence[AnswerKeyItem], tasks: np.ndarray, value: np.ndarray) -> dict[str, Any]:
    """Per condition and level mean item score (basic / choice / judge items), and the worst level."""
    table: dict[str, dict[str, list[float]]] = {}
    for i, it in enumerate(key_items):
        if it.condition is not None and tasks[i] not in EXTERNAL_TASKS and tasks[i] != "modal_consistency":
            table.setdefault(it.condition, {}).setdefault(it.level or "", []).append(value[i])
    out: dict[str, Any] = {}
    for cond, levels in table.items():
        entries = {lv: {"n": len(vs), "score": float(np.mean(vs))} for lv, vs in levels.items()}
        worst = min(entries, key=lambda lv: entries[lv]["score"])
        out[cond] = {"levels": entries, "worst_level": worst, "worst_score": entries[worst]["score"]}
    return out


def _groups(datasets: Mapping[str, Mapping[str, Any]], params: Params) -> dict[str, Any]:
    """Group scores: size-weighted and macro means of their datasets' scores."""
    members: dict[str, list[str]] = {}
    for name, d in datasets.items():
        if d["group"] is not None and d["eval_task"] not in EXTERNAL_TASKS:
            members.setdefault(d["group"], []).append(name)
    out = {}
    for group, names in members.items():
        s = [datasets[d]["score"] for d in names]
        w = [datasets[d]["n"] for d in names]
        weighted, macro = weighted_mean(s, w), float(np.mean(s))
        out[group] = {
            "score": weighted if params.group_weighting == "weighted" else macro,
            "weighted": weighted,
            "macro": macro,
            "weighting": params.group_weighting,
            "n": int(sum(w)),
            "datasets": names,
        }
    return out


def _overall(scored: Mapping[str, Mapping[str, Any]], groups: Mapping[str, Any], params: Params) -> float:
    """The RECONSTRUCTED overall score under ``params.overall_formula``."""
    s = [d["score"] for d in scored.values()]
    if params.overall_formula == "dataset_macro":
        return float(np.mean(s))
    if params.overall_formula == "dataset_weighted":
        return weighted_mean(s, [d["n"] for d in scored.values()])
    parts = [g["score"] for g in groups.values()] + [d["score"] for d in scored.values() if d["group"] is None]
    return float(np.mean(parts))


def _caption_trap(
    key_items: Sequence[AnswerKeyItem],
    pred_items: Sequence[PredictionItem],
    index: np.ndarray,
    judge: np.ndarray,
    params: Params,
) -> dict[str, Any]:
    """Caption-Trap rate [R] on answered cue items: judge flag, else the NSV-rubric proxy (score 3)."""
    flags: list[tuple[str, bool, str]] = []
    appropriate = 0
    heur_hits = heur_n = 0
    for p, i in zip(pred_items, index.tolist(), strict=True):
        it = key_items[i]
        if it.cue_type is None or it.cue_type == "none":
            continue
        if p.pred_text is not None:
            heur_n += 1
            heur_hits += meta_audio_mention(p.pred_text)
        if p.caption_trap is not None:
            flag, source = p.caption_trap, "judge_flag"
        elif it.eval_task == "care_nsv" and not np.isnan(judge[i]):
            flag, source = bool(judge[i] == 3), "nsv_rubric_proxy"
        else:
            continue
        flags.append((it.cue_type, flag, source))
        appropriate += bool(not flag and judge[i] >= 4)
    k = sum(f for _, f, _ in flags)
    out: dict[str, Any] = {"protocol": "reconstructed-v1", "n": len(flags), "k": k}
    if flags:
        low, high = wilson(k, len(flags), params.confidence)
        by_cue = {}
        for cue in CUE_TYPES:
            cue_flags = [f for c, f, _ in flags if c == cue]
            if cue_flags:
                by_cue[cue] = {"n": len(cue_flags), "k": sum(cue_flags), "rate": sum(cue_flags) / len(cue_flags)}
        out |= {
            "rate": k / len(flags),
            "ci_low": low,
            "ci_high": high,
            "by_cue_type": by_cue,
            "sources": {s: sum(1 for *_, src in flags if src == s) for s in ("judge_flag", "nsv_rubric_proxy")},
            "appropriate": appropriate,
            "conditional_rate": k / (k + appropriate) if k + appropriate else None,
        }
    out["heuristic"] = {"n": heur_n, "k": heur_hits, "rate": heur_hits / heur_n if heur_n else None}
    return out


COST_UNIT = "characters of answer, query and reference text, plus 100 per item"
SYNC_BUDGET = 1.5e7
"""Cost units scored in about 1 s of CPU (bench/scorer_costs.py: 1.5e7 per CPU second at 50,000 key items with the
default 1000 bootstrap resamples)."""
HARD_CAP = 1.5e8
PER_ITEM_CHARS = 100
PAIRED_TESTS = {"overall": "bootstrap"}
"""Per-item values are 0-100 item scores: graded, so the paired bootstrap."""


def _ref_chars(ref: object) -> int:
    if isinstance(ref, str):
        return len(ref)
    if isinstance(ref, AllOf):
        return sum(map(len, ref.all))
    if isinstance(ref, list):
        return sum(map(_ref_chars, ref))
    return 0


def cost(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> float:
    """Characters matched (``COST_UNIT``): answers, queries and references, plus ``PER_ITEM_CHARS`` per item."""
    chars = sum(len(p.pred_text or "") for p in pred_items)
    chars += sum(len(k.query or "") + _ref_chars(k.ref) for k in key_items)
    return float(chars + PER_ITEM_CHARS * (len(key_items) + len(pred_items)))


SPEC = register(
    ScorerSpec(
        name="televal",
        version="1",
        summary="TELEVAL Chinese spoken-interaction benchmark: ExistMatch, SingleOptionMatch, AvgThreshold "
        "judge scores, modal consistency, size-weighted groups, acoustic robustness, Caption-Trap rate [R].",
        paper="TELEVAL",
        citation="TELEVAL (China Telecom TeleAI), arXiv:2507.18061 (v3 2026); repo Tele-AI/TELEVAL",
        answer_key_item_model=AnswerKeyItem,
        prediction_item_model=PredictionItem,
        params_model=Params,
        metrics=METRICS,
        primary_metric="overall",
        score=score,
        cost=cost,
        cost_unit=COST_UNIT,
        sync_budget=SYNC_BUDGET,
        hard_cap=HARD_CAP,
        paired_tests=PAIRED_TESTS,
        check_key=check_key,
    )
)
