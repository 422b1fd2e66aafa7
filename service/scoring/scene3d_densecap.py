"""3D dense captioning scorer: Scan2Cap m@kIoU for CIDEr-D, BLEU-4 and ROUGE-L.

Chen et al., "Scan2Cap: Context-aware Dense Captioning in RGB-D Scans" (CVPR 2021), as evaluated by Chat-Scene:
the units are the ground-truth objects; an object's candidate is its predicted caption when the predicted box
reaches IoU k with the object's box, otherwise (and for an object without a prediction) the placeholder
"sos eos". Captions and references are wrapped as "sos … eos"; both words occur in every reference, so their IDF
is 0 and the placeholder's CIDEr is exactly 0, while BLEU and ROUGE-L still give it a small positive value (a
quirk of the protocol, kept). Metrics are pycocoevalcap's (:mod:`service.scoring.caption_metrics`) over all
objects, at k = 0.25 and 0.5.
"""

from collections.abc import Sequence
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.registry import MetricInfo, ScorerSpec, register
from service.scoring._common import (
    BootstrapParams,
    KeyItemBase,
    PredItemBase,
    check_bootstrap,
    column,
    match_items,
    metric,
    result,
)
from service.scoring.caption_metrics import METEOR_REASON, Tokenizer, caption_scores, tokenize
from service.scoring.scene3d_grounding import Box, box_array, box_iou, passes
from service.stats import bootstrap_mean_ci

MAX_ITEMS = 50_000
MAX_REFS = 64
MAX_TOKENS = 128
THRESHOLDS = (0.25, 0.5)
COST_UNIT = "characters of captions and references"
SYNC_BUDGET = 8e5
"""Characters (counted once per threshold) scored in about 1 s on one core (measured: 3,000 objects with three
references, cost 1.4e6, 1.3 s)."""
HARD_CAP = 1e8
PLACEHOLDER = ("sos", "eos")
PAIRED_TESTS: dict[str, str] = {
    f"{name}_at_{str(t).replace('.', '_')}": test
    for t in THRESHOLDS
    for name, test in (("cider", "wilcoxon"), ("bleu_4", "bootstrap"), ("rouge_l", "wilcoxon"))
}
"""Paired test per metric: per-object CIDEr-D and ROUGE-L by Wilcoxon signed-rank; per-sentence BLEU-4 (not
additive to the corpus value) by paired bootstrap."""
RECONSTRUCTED: list[str] = []

Caption = Annotated[str, Field(max_length=1024)]


def suffix(threshold: float) -> str:
    """``0_25`` style suffix of a threshold."""
    return str(threshold).replace(".", "_")


class AnswerKeyItem(KeyItemBase):
    """One ground-truth object (e.g. ``scene0011_00|7``) with its box and reference captions."""

    refs: list[Caption] = Field(min_length=1, max_length=MAX_REFS, description="Reference captions (1-64).")
    gt_box: Box = Field(description="The object's box [cx, cy, cz, dx, dy, dz].")  # type: ignore[valid-type]


class PredictionItem(PredItemBase):
    """The caption and box a model predicted for one ground-truth object."""

    caption: Caption = Field(description="Predicted caption (at most 1024 characters).")
    box: Box = Field(description="Predicted box [cx, cy, cz, dx, dy, dz].")  # type: ignore[valid-type]


class Params(BootstrapParams):
    """Dense-captioning scoring settings."""

    op: Literal["ge", "gt"] = Field(
        "ge", description="IoU comparison: 'ge' (IoU ≥ k, Chat-Scene) or 'gt' (IoU > k, Scan2Cap's mask)."
    )
    tokenizer: Tokenizer = Field(
        "ptb_approx", description="'ptb_approx' (PTB approximation, COCO punctuation removal) or 'whitespace'."
    )
    wrap: bool = Field(
        True,
        description="Wrap captions and references as 'sos … eos' unless they already start with 'sos' and end "
        "with 'eos' (Scan2Cap's corpus is stored wrapped); the placeholder of a missed object is then 'sos eos'.",
    )


METRICS = {
    f"{name}_at_{suffix(t)}": MetricInfo(True, rng, text.format(t=t))
    for t in THRESHOLDS
    for name, rng, text in (
        ("cider", (0.0, 10.0), "Mean CIDEr-D over ground-truth objects, missed objects (IoU < {t}) 'sos eos'."),
        ("bleu_4", (0.0, 1.0), "Corpus BLEU-4 over ground-truth objects at IoU {t}."),
        ("rouge_l", (0.0, 1.0), "Mean ROUGE-L over ground-truth objects at IoU {t}."),
    )
}


def _wrapped(tokens: list[str], wrap: bool) -> list[str]:
    if wrap and not (len(tokens) >= 2 and tokens[0] == "sos" and tokens[-1] == "eos"):
        return ["sos", *tokens, "eos"]
    return tokens


def _tokens(text: str, params: Params, loc: tuple) -> list[str]:
    tokens = _wrapped(tokenize(text.replace("\n", " "), params.tokenizer), params.wrap)
    if len(tokens) > MAX_TOKENS:
        raise InvalidInput(f"a caption has more than {MAX_TOKENS} tokens", loc)
    return tokens


def densecap_score(
    ious: np.ndarray, candidates: Sequence[list[str]], references: Sequence[list[list[str]]], params: Params
) -> dict[str, dict[str, Any]]:
    """Caption metrics per threshold: each object's candidate if its IoU passes k, else the placeholder."""
    placeholder = list(PLACEHOLDER) if params.wrap else []
    out = {}
    for t in THRESHOLDS:
        hit = passes(ious, t, params.op)
        cands = [c if h else placeholder for c, h in zip(candidates, hit.tolist(), strict=True)]
        out[suffix(t)] = caption_scores(cands, references) | {"n_hit": int(hit.sum())}
    return out


def score(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> dict[str, Any]:
    """m@0.25 and m@0.5 for CIDEr-D, BLEU-4 and ROUGE-L over every ground-truth object."""
    if len(key_items) > MAX_ITEMS:
        raise InvalidInput(f"{len(key_items)} items exceed the limit of {MAX_ITEMS}", ("answer_key", "items"))
    check_bootstrap(params, len(key_items))
    ids = column(key_items, "item_id")
    index = match_items(ids, column(pred_items, "item_id"))
    n = len(key_items)
    gt, _ = box_array([[b] for b in column(key_items, "gt_box")], ("answer_key", "gt_box"))
    pred, _ = box_array([[b] for b in column(pred_items, "box")], ("predictions", "box"))
    ious = np.zeros(n)
    ious[index] = box_iou(pred, gt[index])
    candidates: list[list[str]] = [[] for _ in range(n)]
    for j, (i, item) in enumerate(zip(index.tolist(), pred_items, strict=True)):
        candidates[i] = _tokens(item.caption, params, ("predictions", "items", j, "caption"))
    references = [
        [_tokens(r, params, ("answer_key", "items", i, "refs", k)) for k, r in enumerate(key.refs)]
        for i, key in enumerate(key_items)
    ]
    per_threshold = densecap_score(ious, candidates, references, params)
    scores: dict[str, dict] = {}
    item_metrics: dict[str, list[float]] = {}
    for t in THRESHOLDS:
        text = per_threshold[suffix(t)]
        for name in ("cider", "bleu_4", "rouge_l"):
            key = f"{name}_at_{suffix(t)}"
            values = np.asarray(text[f"{name}_items"])
            item_metrics[key] = values.tolist()
            if name == "bleu_4" or params.n_resamples == 0:
                scores[key] = metric(float(text[name]) if name == "bleu_4" else float(values.mean()), n=n)
            else:
                low, high, _ = bootstrap_mean_ci(values, params.n_resamples, params.seed, params.confidence)
                scores[key] = metric(float(values.mean()), low, high, n)
    breakdown = {
        "n_objects": n,
        "n_missing": n - int(index.size),
        "n_hit": {suffix(t): per_threshold[suffix(t)]["n_hit"] for t in THRESHOLDS},
        "bleu_1_to_4": {suffix(t): [per_threshold[suffix(t)][f"bleu_{m}"] for m in range(1, 5)] for t in THRESHOLDS},
        "op": params.op,
        "tokenizer": params.tokenizer,
        "wrap": params.wrap,
        "placeholder": " ".join(PLACEHOLDER) if params.wrap else "",
        "meteor": {"value": None, "reason": METEOR_REASON},
    }
    out = result(scores, breakdown, index.size / n, RECONSTRUCTED, ids, np.asarray(item_metrics["cider_at_0_5"]))
    out["item_metrics"] = item_metrics
    return out


def cost(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> float:
    """Characters of captions and references (``COST_UNIT``), counted once per threshold."""
    chars = sum(len(item.caption) for item in pred_items) + sum(sum(map(len, key.refs)) for key in key_items)
    return float(len(THRESHOLDS) * chars + len(key_items))


SPEC = register(
    ScorerSpec(
        name="scene3d_densecap",
        version="1",
        summary="3D dense captioning (Scan2Cap m@kIoU): CIDEr-D, BLEU-4 and ROUGE-L over ground-truth objects at "
        "IoU 0.25 and 0.5, missed objects captioned 'sos eos' (CIDEr 0).",
        paper="SceneScaffold",
        citation="SceneScaffold, a unified 3D-LMM (NeurIPS 2026; only the abstract is available); dense captioning as "
        "in Chen, Gholami, Nießner & Chang, 'Scan2Cap: Context-aware Dense Captioning in RGB-D Scans', CVPR "
        "2021 (evaluator: Chat-Scene utils/eval.py calc_scan2cap_score with pycocoevalcap)",
        answer_key_item_model=AnswerKeyItem,
        prediction_item_model=PredictionItem,
        params_model=Params,
        metrics=METRICS,
        primary_metric="cider_at_0_5",
        score=score,
        cost=cost,
        cost_unit=COST_UNIT,
        sync_budget=SYNC_BUDGET,
        hard_cap=HARD_CAP,
        paired_tests=PAIRED_TESTS,
    )
)
