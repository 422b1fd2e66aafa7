"""RAVEN-Bench scorer: EO-IR aerial video MCQ accuracy, level macro score, group consistency and coherence.

Per setting (``eo_only``, ``ir_only``, ``eo_ir``) as the RAVEN-Bench artifact's ``score_prediction_file``:
overall accuracy; ``S_Lx`` = accuracy on level-x questions; ``S_main = (S_L1 + S_L2 + S_L3)/3`` (a level absent
from the key counts 0, as in the artifact); per group of k questions with c correct, consistency groups score
``(c/k)²`` and coherence groups ``(consecutive correct from step 1)/k``; ``S_cons``, ``S_coh`` are their means,
``group_composite`` the mean over all groups and ``strict_pass`` the fraction of groups answered entirely right.
CIs come from a seeded cluster bootstrap that resamples videos. :func:`cross_modal` combines a model's three
settings into the cross-modal gain ``G_cm = S_main(eo_ir) − max(S_main(eo_only), S_main(ir_only))`` and the
modality-reliance ratios.
"""

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.registry import Convention, ConventionOption, MetricInfo, ScorerSpec, Upstream, register
from service.scoring._common import (
    BootstrapParams,
    KeyItemBase,
    Label,
    PredItemBase,
    check_key_budget,
    check_key_size,
    column,
    match_items,
    metric,
)
from service.scoring._common import result as assemble
from service.scoring.raven_parse import (
    LETTERS,
    RAVEN_COMMIT,
    SHUFFLE_SALT,
    VLMEVALKIT_COMMIT,
    ParseRule,
    parse_answer,
    relabel,
    rotation_map,
    shuffle_map,
)
from service.stats import check_budget, factorize, percentile_interval
from service.types import StrictModel

MAX_ITEMS = 20_000
MAX_STEPS = 64
LEVELS = ("L1", "L2", "L3")
SETTINGS = ("eo_only", "ir_only", "eo_ir")
MODALITIES = ("EO", "IR", "EO+IR")
CHANCE = 1 / len(LETTERS)
COST_UNIT = "questions plus characters of raw responses / 100"
SYNC_BUDGET = 6e4
"""Questions (and response characters / 100) parsed and scored in about 1 s on one core (measured: 19,200
questions with 42-character raw responses and 1,000 video resamples, cost 4.6e4, 0.55 s)."""
HARD_CAP = 1e7
PAIRED_TESTS: dict[str, str] = {"s_main": "bootstrap", "overall_acc": "mcnemar", "parse_failure_rate": "mcnemar"}
"""Paired test per metric with per-item values: S_main's level-weighted item values by paired bootstrap;
correctness and parse-failure flags are 0/1 (McNemar)."""
RECONSTRUCTED: list[str] = []
_VLMEVALKIT = Upstream("VLMEvalKit can_infer (open-compass/VLMEvalKit)", VLMEVALKIT_COMMIT)
CONVENTIONS = (
    Convention(
        "parse_rule",
        "raven",
        (
            ConventionOption("raven", (Upstream("RAVEN-Bench artifact (yuhu990424/RAVEN-Bench)", RAVEN_COMMIT),)),
            ConventionOption("vlmevalkit", (_VLMEVALKIT,)),
            ConventionOption("vlmevalkit_verbose", (_VLMEVALKIT,)),
            ConventionOption("guarded", (_VLMEVALKIT,)),
        ),
    ),
)

Letter = Literal["A", "B", "C", "D"]
Response = str | None


class AnswerKeyItem(KeyItemBase):
    """One RAVEN-Bench question: its video, group position, level, modality requirement and answer."""

    video_id: Label = Field(description="Video (sample_key): the bootstrap cluster.")
    group_key: Label = Field(description="Group id within the video (the artifact's group_id and group_focus).")
    group_family: Literal["consistency", "coherence"] = Field(
        description="consistency: (c/k)²; coherence: consecutive correct from step 1 over k."
    )
    group_step: int = Field(ge=1, le=MAX_STEPS, description="Position in the group; steps are 1..k, contiguous.")
    level: Literal["L1", "L2", "L3"] = Field(description="Capability level.")
    modality_requirement: Literal["EO", "IR", "EO+IR"] = Field(description="Modality the question needs.")
    correct: Letter = Field(description="Correct option letter (source labels in seeded_shuffle mode).")
    options: dict[Letter, Annotated[str, Field(max_length=2000)]] | None = Field(
        None, description="Option texts A-D (used by the vlmevalkit rules' text matching)."
    )
    option_roles: dict[Letter, Label] | None = Field(
        None, description="Role of each option, e.g. correct / distractor_* (distractor analysis)."
    )
    question_type: Label | None = Field(None, description="Primary question type (slice).")
    scenario_type: Label | None = Field(None, description="EO-favorable, IR-favorable or EO+IR-required (slice).")


class PassAnswer(StrictModel):
    """One CircularEval pass: the letter or the raw response."""

    predicted_answer: Response = Field(None, max_length=64, description="Answer letter A-D.")
    raw_response: Response = Field(None, max_length=8000, description="Raw model output (at most 8 kB).")


class PredictionItem(PredItemBase):
    """A model's answer: a letter, a raw response to parse, or (circular mode) one answer per rotation."""

    predicted_answer: Response = Field(None, max_length=64, description="Answer letter A-D (case-insensitive).")
    raw_response: Response = Field(None, max_length=8000, description="Raw model output (at most 8 kB).")
    circular: list[PassAnswer] | None = Field(
        None,
        min_length=4,
        max_length=4,
        description="circular mode: the answers of passes 0-3 (options rotated right by the pass number).",
    )


class Params(BootstrapParams):
    """RAVEN-Bench scoring settings."""

    setting: Literal["eo_only", "ir_only", "eo_ir"] = Field(
        "eo_ir", description="Input setting of the submission (from the submission's metadata.setting)."
    )
    parse_rule: ParseRule = Field(
        "raven",
        description="'raven' (RAVEN-Bench artifact: JSON answer, else the first \\b[ABCD]\\b of the upper-cased "
        "text), 'vlmevalkit' (VLMEvalKit can_infer: option letter, 'answer is X', then option text) or "
        "'vlmevalkit_verbose' (the same with VERBOSE set: a lone 'A' among more than three tokens is refused as a "
        "possible article); 'guarded' is the older name of 'vlmevalkit_verbose'.",
    )
    mode: Literal["single", "seeded_shuffle", "circular"] = Field(
        "single",
        description="single: key letters as shown; seeded_shuffle: key holds source labels, shown labels follow "
        "RAVEN's seeded shuffle of item_id; circular: four rotated passes, a question counts only if all are right.",
    )
    shuffle_salt: str = Field(SHUFFLE_SALT, min_length=1, max_length=128, description="Salt of the seeded shuffle.")


METRICS = {
    "s_main": MetricInfo(True, (0.0, 1.0), "S_main = (S_L1 + S_L2 + S_L3)/3, macro accuracy over levels."),
    "overall_acc": MetricInfo(True, (0.0, 1.0), "Accuracy over all questions (parse failures are wrong)."),
    "s_l1": MetricInfo(True, (0.0, 1.0), "Accuracy on L1 questions."),
    "s_l2": MetricInfo(True, (0.0, 1.0), "Accuracy on L2 questions."),
    "s_l3": MetricInfo(True, (0.0, 1.0), "Accuracy on L3 questions."),
    "s_cons": MetricInfo(True, (0.0, 1.0), "Mean over consistency groups of (c/k)²."),
    "s_coh": MetricInfo(True, (0.0, 1.0), "Mean over coherence groups of (correct prefix length)/k."),
    "group_composite": MetricInfo(True, (0.0, 1.0), "Mean group score over all groups."),
    "strict_pass": MetricInfo(True, (0.0, 1.0), "Fraction of groups with every question right."),
    "parse_failure_rate": MetricInfo(False, (0.0, 1.0), "Fraction of questions whose answer could not be parsed."),
}


def _shown(key: AnswerKeyItem, mode: str, salt: str) -> list[dict[str, str]]:
    """Old → new label maps of the presentations of one question (one, or four in circular mode)."""
    if mode == "circular":
        return [rotation_map(i) for i in range(len(LETTERS))]
    if mode == "seeded_shuffle":
        return [shuffle_map(key.item_id, key.correct, salt)]
    return [{label: label for label in LETTERS}]


def grade(
    key_items: Sequence[AnswerKeyItem], pred_items: Sequence[PredictionItem], params: Params
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str | None]]:
    """Per question: correct flag, parse-failure flag, refusal flag and the distractor role picked (if wrong)."""
    index = match_items(column(key_items, "item_id"), column(pred_items, "item_id"))
    pred_at = np.full(len(key_items), -1, dtype=np.int64)
    pred_at[index] = np.arange(index.size)
    n = len(key_items)
    correct, failed, refused = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    roles: list[str | None] = [None] * n
    for i, key in enumerate(key_items):
        j = int(pred_at[i])
        if j < 0:
            failed[i] = True
            continue
        pred = pred_items[j]
        if params.mode == "circular":
            if pred.circular is None:
                raise InvalidInput("circular mode needs the four pass answers", ("predictions", "items", j, "circular"))
            answers = [(a.predicted_answer, a.raw_response) for a in pred.circular]
        elif pred.circular is not None:
            raise InvalidInput("circular answers need mode 'circular'", ("predictions", "items", j, "circular"))
        else:
            answers = [(pred.predicted_answer, pred.raw_response)]
        ok = True
        for mapping, (letter, raw) in zip(_shown(key, params.mode, params.shuffle_salt), answers, strict=True):
            got, status = parse_answer(letter, raw, params.parse_rule, relabel(mapping, key.options))
            failed[i] |= status == "parse_failure"
            refused[i] |= status == "refusal"
            right = got == mapping[key.correct]
            if not right and got is not None and roles[i] is None and key.option_roles is not None:
                roles[i] = relabel(mapping, key.option_roles)[got]  # type: ignore[index]
            ok &= right
        correct[i] = ok
    return correct, failed, refused, roles


def _groups(key_items: Sequence[AnswerKeyItem]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Question order by (group, step), group sizes and the groups' coherence flags; steps must be 1..k within a
    group and the family one per group (else InvalidInput)."""
    codes, _ = factorize(list(zip(column(key_items, "video_id"), column(key_items, "group_key"), strict=True)))
    steps = np.fromiter((k.group_step for k in key_items), dtype=np.int64, count=len(key_items))
    coherent = np.array([k.group_family == "coherence" for k in key_items])
    order = np.lexsort((steps, codes))
    sizes = np.bincount(codes)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    position = np.arange(order.size) - np.repeat(starts, sizes)
    bad = np.flatnonzero(steps[order] != position + 1)
    if bad.size:
        i = int(order[bad[0]])
        raise InvalidInput("group steps must be 1..k without gaps or repeats", ("answer_key", "items", i, "group_step"))
    family = coherent[order]
    mixed = np.flatnonzero(family != np.repeat(family[starts], sizes))
    if mixed.size:
        i = int(order[mixed[0]])
        raise InvalidInput("a group has one group_family", ("answer_key", "items", i, "group_family"))
    return order, sizes, family[starts]


def check_key(key_items: list[AnswerKeyItem], params: Params) -> None:
    """The answer-key checks of :func:`score` (``ScorerSpec.check_key``): at most ``MAX_ITEMS`` questions, steps
    1..k and one family per group, and the bootstrap budget in videos (the resampled unit)."""
    check_key_size(len(key_items), MAX_ITEMS)
    _groups(key_items)
    check_key_budget(params.n_resamples, len(set(column(key_items, "video_id"))), "videos")


def group_scores(correct: np.ndarray, order: np.ndarray, sizes: np.ndarray, coherent: np.ndarray) -> np.ndarray:
    """Group scores: (c/k)² for consistency groups, (correct prefix)/k for coherence groups."""
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    ordered = correct[order]
    hits = np.add.reduceat(ordered.astype(np.float64), starts)
    position = np.arange(order.size) - np.repeat(starts, sizes)
    prefix = np.minimum.reduceat(np.where(ordered, MAX_STEPS + 1, position), starts)
    prefix = np.minimum(prefix, sizes)
    return np.where(coherent, prefix / sizes, (hits / sizes) ** 2)


def chance_levels(sizes: np.ndarray, coherent: np.ndarray, p: float) -> dict[str, float]:
    """Expected group metrics of independent guessing with per-question success probability p:
    E(c/k)² = p² + p(1-p)/k; E[prefix/k] = (1/k)Σ_{j≤k} p^j; P(strict) = p^k."""
    cons = p * p + p * (1 - p) / sizes
    coh = np.array([sum(p**j for j in range(1, k + 1)) / k for k in sizes.tolist()])
    out = {"overall_acc": p, "s_main": p, "strict_pass": float(np.mean(p ** sizes.astype(np.float64)))}
    out["group_composite"] = float(np.mean(np.where(coherent, coh, cons)))
    if (~coherent).any():
        out["s_cons"] = float(cons[~coherent].mean())
    if coherent.any():
        out["s_coh"] = float(coh[coherent].mean())
    return out


def _video_stats(
    key_items: Sequence[AnswerKeyItem],
    correct: np.ndarray,
    failed: np.ndarray,
    level: np.ndarray,
    order: np.ndarray,
    sizes: np.ndarray,
    coherent: np.ndarray,
) -> tuple[np.ndarray, list[str]]:
    """Per-video sums from which every metric is a ratio (the cluster bootstrap resamples these rows)."""
    video, _ = factorize(column(key_items, "video_id"))
    n_videos = int(video.max()) + 1
    scores = group_scores(correct, order, sizes, coherent)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    group_video = video[order[starts]]
    strict = (np.add.reduceat(correct[order].astype(np.float64), starts) == sizes).astype(np.float64)
    cols = {
        "n": np.bincount(video, minlength=n_videos),
        "c": np.bincount(video, weights=correct, minlength=n_videos),
        "fail": np.bincount(video, weights=failed, minlength=n_videos),
        "g": np.bincount(group_video, minlength=n_videos),
        "g_sum": np.bincount(group_video, weights=scores, minlength=n_videos),
        "strict": np.bincount(group_video, weights=strict, minlength=n_videos),
        "cons_n": np.bincount(group_video, weights=~coherent, minlength=n_videos),
        "cons_sum": np.bincount(group_video, weights=scores * ~coherent, minlength=n_videos),
        "coh_n": np.bincount(group_video, weights=coherent, minlength=n_videos),
        "coh_sum": np.bincount(group_video, weights=scores * coherent, minlength=n_videos),
    }
    for lv in range(len(LEVELS)):
        cols[f"n{lv}"] = np.bincount(video, weights=level == lv, minlength=n_videos)
        cols[f"c{lv}"] = np.bincount(video, weights=(level == lv) & correct, minlength=n_videos)
    return np.column_stack([np.asarray(v, dtype=np.float64) for v in cols.values()]), list(cols)


def cluster_resample_sums(stats: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Column sums of ``n_resamples`` cluster-bootstrap resamples of the rows of ``stats``: n videos drawn with
    replacement per resample (uniform indices, counted per resample; chunks of about 2²⁰ draws)."""
    rng = np.random.default_rng(seed)
    n = stats.shape[0]
    rows = max(1, (1 << 20) // n)
    chunks = []
    for start in range(0, n_resamples, rows):
        size = min(rows, n_resamples - start)
        draws = rng.integers(0, n, size=(size, n)) + n * np.arange(size)[:, None]
        counts = np.bincount(draws.ravel(), minlength=size * n).reshape(size, n)
        chunks.append(counts.astype(np.float64) @ stats)
    return np.concatenate(chunks)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def metrics_from_sums(sums: np.ndarray, names: list[str], levels_present: np.ndarray) -> dict[str, np.ndarray]:
    """Every metric from column sums (rows: the data, or bootstrap replicates); undefined ratios are NaN. In
    S_main a level absent from the key counts 0 (the artifact's rule); a replicate that lost a level of the key is
    undefined."""
    s = dict(zip(names, np.atleast_2d(sums).T, strict=True))
    out = {
        "overall_acc": _ratio(s["c"], s["n"]),
        "parse_failure_rate": _ratio(s["fail"], s["n"]),
        "group_composite": _ratio(s["g_sum"], s["g"]),
        "strict_pass": _ratio(s["strict"], s["g"]),
        "s_cons": _ratio(s["cons_sum"], s["cons_n"]),
        "s_coh": _ratio(s["coh_sum"], s["coh_n"]),
    }
    for lv in range(len(LEVELS)):
        out[f"s_l{lv + 1}"] = _ratio(s[f"c{lv}"], s[f"n{lv}"])
    out["s_main"] = sum(out[f"s_l{lv + 1}"] if levels_present[lv] else 0.0 for lv in range(len(LEVELS))) / len(LEVELS)
    return out


def _slices(key_items: Sequence[AnswerKeyItem], correct: np.ndarray) -> dict[str, dict[str, dict]]:
    out = {}
    for field in ("modality_requirement", "level", "group_family", "group_step", "question_type", "scenario_type"):
        codes, labels = factorize(column(key_items, field))
        n = np.bincount(codes, minlength=len(labels))
        hits = np.bincount(codes, weights=correct, minlength=len(labels))
        out[field] = {
            str(label): {"n": int(n[c]), "accuracy": float(hits[c] / n[c])}
            for c, label in enumerate(labels)
            if label is not None
        }
    return out


def _answer_audit(key_items: Sequence[AnswerKeyItem]) -> dict[str, Any]:
    """Answer-letter distribution of the key with the artifact's warnings (one letter ≥ 90%, a letter absent)."""
    letters = column(key_items, "correct")
    counts = {label: letters.count(label) for label in LETTERS}
    top = max(counts.values())
    warnings = []
    if top / len(letters) >= 0.9:
        warnings.append("severe answer-label imbalance: scores may be inflated by answer-prior bias")
    missing = [label for label, c in counts.items() if c == 0]
    if missing:
        warnings.append(f"answer labels absent from the key: {', '.join(missing)}")
    return {"counts": counts, "warnings": warnings}


def score(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> dict[str, Any]:
    """RAVEN-Bench metrics of one setting's submission with video-cluster bootstrap CIs; missing answers are
    parse failures (wrong)."""
    if len(key_items) > MAX_ITEMS:
        raise InvalidInput(f"{len(key_items)} items exceed the limit of {MAX_ITEMS}", ("answer_key", "items"))
    order, sizes, coherent = _groups(key_items)
    correct, failed, refused, roles = grade(key_items, pred_items, params)
    level = np.array([LEVELS.index(k.level) for k in key_items])
    stats, names = _video_stats(key_items, correct, failed, level, order, sizes, coherent)
    n_videos = stats.shape[0]
    check_budget(params.n_resamples, n_videos, ("params", "n_resamples"))
    total = dict(zip(names, stats.sum(axis=0), strict=True))
    present = np.array([total[f"n{lv}"] > 0 for lv in range(len(LEVELS))])
    point = {name: float(v[0]) for name, v in metrics_from_sums(stats.sum(axis=0), names, present).items()}
    reps = None
    if params.n_resamples:
        reps = metrics_from_sums(cluster_resample_sums(stats, params.n_resamples, params.seed), names, present)
    counts = {"s_l1": "n0", "s_l2": "n1", "s_l3": "n2", "s_cons": "cons_n", "s_coh": "coh_n"}
    scores = {}
    for name in METRICS:
        if np.isnan(point[name]):
            continue
        size = int(total[counts.get(name, "g" if name in ("group_composite", "strict_pass") else "n")])
        if reps is None:
            scores[name] = metric(point[name], n=size)
            continue
        defined = reps[name][~np.isnan(reps[name])]
        interval = percentile_interval(defined, params.confidence) if defined.size else (None, None)
        scores[name] = metric(point[name], *interval, size)
    n = len(key_items)
    per_level = np.bincount(level, minlength=len(LEVELS))
    weighted = correct * n / (len(LEVELS) * np.maximum(per_level[level], 1))
    role_counts: dict[str, int] = {}
    for role in roles:
        if role is not None:
            role_counts[role] = role_counts.get(role, 0) + 1
    p = CHANCE ** len(LETTERS) if params.mode == "circular" else CHANCE
    breakdown = {
        "setting": params.setting,
        "parse_rule": params.parse_rule,
        "mode": params.mode,
        "n_questions": n,
        "n_videos": n_videos,
        "n_groups": int(sizes.size),
        "n_missing": n - len(pred_items),
        "n_parse_failures": int(failed.sum()),
        "n_refusals": int(refused.sum()),
        "absent_levels": [lv for lv, c in zip(LEVELS, per_level.tolist(), strict=True) if c == 0],
        "slices": _slices(key_items, correct),
        "distractor_roles": role_counts,
        "chance": chance_levels(sizes, coherent, p),
        "answer_audit": _answer_audit(key_items),
        "bootstrap": {"unit": "video", "seed": params.seed, "n_resamples": params.n_resamples},
    }
    out = assemble(scores, breakdown, len(pred_items) / n, RECONSTRUCTED, column(key_items, "item_id"), weighted)
    out["item_metrics"] = {
        "s_main": weighted.tolist(),
        "overall_acc": correct.astype(np.float64).tolist(),
        "parse_failure_rate": failed.astype(np.float64).tolist(),
    }
    return out


def cross_modal(results_by_setting: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Cross-modal gain and modality reliance of one model from its per-setting :func:`score` results.

    ``G_cm = S_main(eo_ir) − max(S_main(eo_only), S_main(ir_only))`` (null unless all three settings are given);
    reliance ``R_EO = S_main(eo_only)/S_main(eo_ir)``, ``R_IR`` likewise (null without eo_ir or when its S_main
    is 0); the setting × modality-requirement accuracy matrix, and the accuracy on questions whose required
    modality was withheld (IR questions in eo_only, EO questions in ir_only).
    """
    unknown = sorted(set(results_by_setting) - set(SETTINGS))
    if unknown:
        raise InvalidInput(f"unknown setting {unknown[0]!r}; expected one of {list(SETTINGS)}", ("settings",))
    s_main = {s: float(r["scores"]["s_main"]["value"]) for s, r in results_by_setting.items()}
    matrix = {
        s: {m: r["breakdown"]["slices"]["modality_requirement"].get(m, {}).get("accuracy") for m in MODALITIES}
        for s, r in results_by_setting.items()
    }
    full = all(s in s_main for s in SETTINGS)
    base = s_main.get("eo_ir")
    reliance = {
        f"reliance_{m.lower()}": (s_main[s] / base if base and s in s_main else None)
        for m, s in (("EO", "eo_only"), ("IR", "ir_only"))
    }
    return {
        "s_main": s_main,
        "g_cm": s_main["eo_ir"] - max(s_main["eo_only"], s_main["ir_only"]) if full else None,
        **reliance,
        "modality_matrix": matrix,
        "without_required_modality": {
            "ir_questions_in_eo_only": matrix.get("eo_only", {}).get("IR"),
            "eo_questions_in_ir_only": matrix.get("ir_only", {}).get("EO"),
        },
        "missing_settings": [s for s in SETTINGS if s not in s_main],
        "reconstructed": ["reliance_eo", "reliance_ir", "modality_matrix", "without_required_modality"],
    }


def cost(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> float:
    """Questions plus raw-response characters / 100 (``COST_UNIT``)."""
    chars = 0
    for item in pred_items:
        answers = item.circular or [item]
        chars += sum(len(a.raw_response or "") for a in answers)
    return float(len(key_items) + len(pred_items) + chars / 100)


SPEC = register(
    ScorerSpec(
        name="raven",
        version="2",
        summary="RAVEN-Bench EO-IR aerial video MCQ: S_main (level macro accuracy), S_L1-3, consistency and "
        "coherence group scores, strict group pass, parse failures; video-cluster bootstrap CIs; seeded shuffle "
        "and CircularEval modes; cross-modal gain across a model's three settings.",
        paper="RAVEN-Bench",
        citation="RAVEN-Bench: Reasoning over Aerial Videos with EO-IR aligNment (NeurIPS 2026; anonymous artifact "
        "yuhu990424/RAVEN-Bench, raven_benchmark/benchmark.py)",
        answer_key_item_model=AnswerKeyItem,
        prediction_item_model=PredictionItem,
        params_model=Params,
        metrics=METRICS,
        primary_metric="s_main",
        score=score,
        cost=cost,
        cost_unit=COST_UNIT,
        sync_budget=SYNC_BUDGET,
        hard_cap=HARD_CAP,
        paired_tests=PAIRED_TESTS,
        metadata_params=("setting",),
        conventions=CONVENTIONS,
        check_key=check_key,
    )
)
