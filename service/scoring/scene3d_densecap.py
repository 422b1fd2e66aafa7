"""3D dense captioning scorer: Scan2Cap m@kIoU for CIDEr-D, BLEU-4 and ROUGE-L.

Chen et al., "Scan2Cap: Context-aware Dense Captioning in RGB-D Scans" (CVPR 2021), as evaluated by Chat-Scene:
the units are the ground-truth objects; an object's candidate is its predicted caption when the predicted box
reaches IoU k with the object's box, otherwise (and for an object without a prediction) the placeholder
"sos eos". Captions and references are wrapped as "sos … eos"; both words occur in every reference, so their IDF
is 0 and the placeholder's CIDEr is exactly 0, while BLEU and ROUGE-L still give it a small positive value (a
quirk of the protocol, kept). Metrics are pycocoevalcap's (:mod:`service.scoring.caption_metrics`) over all
objects, at k = 0.25 and 0.5; METEOR (``meteor=true``) runs the METEOR 1.5 jar when Java is present and is otherwise
null with its reason.
"""

from collections.abc import Sequence
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.registry import Convention, ConventionOption, MetricInfo, ScorerSpec, Upstream, register
from service.scoring._common import (
    BootstrapParams,
    KeyItemBase,
    PredItemBase,
    check_bootstrap,
    check_key_budget,
    check_key_size,
    column,
    match_items,
    metric,
    result,
)
from service.scoring.caption_metrics import Tokenizer, caption_scores, meteor, tokenize_all
from service.scoring.scene3d_grounding import Box, box_array, box_iou, passes
from service.scoring.scene3d_qa import COCO, java_cost
from service.stats import bootstrap_mean_ci

CHATSCENE_SCAN2CAP = Upstream("Chat-Scene utils/eval.py calc_scan2cap_score", "commit 475e106")
SCAN2CAP = Upstream("Scan2Cap lib/eval_helper.py (pre-tokenised captions, no tokenizer)", "commit b9e9610")
MAX_ITEMS = 50_000
MAX_REFS = 64
MAX_TOKENS = 128
THRESHOLDS = (0.25, 0.5)
COST_UNIT = "characters of captions and references"
SYNC_BUDGET = 3.3e5
"""Characters (counted once per threshold) scored in about 1 s on one core with the default ``ptb_approx`` (measured:
3,000 objects with three references, cost 1.3e6, 1.3 s with whitespace tokens; the CoreNLP port makes it 2.9 times
that, 12.5 s against 4.3 s on this shared machine under load 20)."""
HARD_CAP = 1e8
PLACEHOLDER = ("sos", "eos")
PAIRED_TESTS: dict[str, str] = {
    f"{name}_at_{str(t).replace('.', '_')}": test
    for t in THRESHOLDS
    for name, test in (("cider", "wilcoxon"), ("bleu_4", "bootstrap"), ("rouge_l", "wilcoxon"), ("meteor", "wilcoxon"))
}
"""Paired test per metric: per-object CIDEr-D and ROUGE-L by Wilcoxon signed-rank; per-sentence BLEU-4 (not
additive to the corpus value) by paired bootstrap."""
RECONSTRUCTED: list[str] = []
CONVENTIONS = (
    Convention("op", "ge", (ConventionOption("ge", (CHATSCENE_SCAN2CAP,)), ConventionOption("gt", (SCAN2CAP,)))),
    Convention(
        "tokenizer",
        "ptb_approx",
        (
            ConventionOption("ptb_approx", (COCO, CHATSCENE_SCAN2CAP)),
            ConventionOption("ptb_java", (COCO, CHATSCENE_SCAN2CAP)),
            ConventionOption("whitespace", (SCAN2CAP,)),
        ),
    ),
)
"""The IoU comparison (Chat-Scene's ``iou >= k`` against Scan2Cap's ``iou > k``) and the caption tokenisation
(pycocoevalcap's PTB tokenizer in Chat-Scene; none in Scan2Cap, whose captions are stored tokenised)."""

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
        "ptb_approx",
        description="'ptb_approx' (the Python port of pycocoevalcap's PTB tokenisation, equal to the jar on the "
        "committed comparison corpus), 'ptb_java' (the CoreNLP 3.4.1 jar through Java; the port when Java is "
        "absent, said in the result) or 'whitespace'.",
    )
    meteor: bool = Field(
        False,
        description="Also METEOR 1.5 through the jar pycocoevalcap ships (needs Java; null with the reason without "
        "it). The first call in a process starts its JVM (about 100 s), so such calls run as jobs.",
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
        ("meteor", (0.0, 1.0), "Corpus METEOR 1.5 over ground-truth objects at IoU {t} (meteor=true, needs Java)."),
    )
}


_EDGE_PUNCTUATION = "\"'`.,;:!?()[]{}"


def _is_wrapped(text: str) -> bool:
    """Whether a caption is already 'sos … eos': its first and last of at least two whitespace-separated words
    are 'sos' and 'eos', case and surrounding punctuation ignored."""
    words = text.split()
    return len(words) >= 2 and (
        words[0].strip(_EDGE_PUNCTUATION).lower(),
        words[-1].strip(_EDGE_PUNCTUATION).lower(),
    ) == (
        "sos",
        "eos",
    )


def _tokens(texts: list[str], locs: list[tuple], params: Params) -> tuple[list[list[str]], str, str | None]:
    """(tokens of every caption, the tokenizer that ran, why it is not the one asked for). With ``wrap``, a caption
    not already wrapped is tokenised as ``f"sos {caption} eos"``, the string Chat-Scene tokenises; more than
    ``MAX_TOKENS`` tokens raises InvalidInput at the caption."""
    texts = [t.replace("\n", " ") for t in texts]
    if params.wrap:
        texts = [t if _is_wrapped(t) else f"sos {t} eos" for t in texts]
    tokens, ran, note = tokenize_all(texts, params.tokenizer)
    long = [i for i, toks in enumerate(tokens) if len(toks) > MAX_TOKENS]
    if long:
        raise InvalidInput(f"a caption has more than {MAX_TOKENS} tokens", locs[long[0]])
    return tokens, ran, note


def _ref_locs(key_items: Sequence[AnswerKeyItem]) -> list[tuple]:
    return [("answer_key", "items", i, "refs", k) for i, key in enumerate(key_items) for k in range(len(key.refs))]


def check_key(key_items: list[AnswerKeyItem], params: Params) -> None:
    """The answer-key checks of :func:`score` (``ScorerSpec.check_key``): at most ``MAX_ITEMS`` objects, the
    bootstrap budget, box sizes > 0, and every reference at most ``MAX_TOKENS`` tokens as scored (wrapped)."""
    check_key_size(len(key_items), MAX_ITEMS)
    check_key_budget(params.n_resamples, len(key_items))
    box_array([[b] for b in column(key_items, "gt_box")], ("answer_key", "gt_box"))
    _tokens([r for key in key_items for r in key.refs], _ref_locs(key_items), params)


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
        out[suffix(t)]["meteor"] = (
            meteor(cands, references) if params.meteor else {"value": None, "reason": "meteor=false"}
        )
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
    texts = [item.caption for item in pred_items] + [r for key in key_items for r in key.refs]
    locs = [("predictions", "items", j, "caption") for j in range(len(pred_items))]
    locs += _ref_locs(key_items)
    flat, tokenizer_ran, tokenizer_note = _tokens(texts, locs, params)
    candidates: list[list[str]] = [[] for _ in range(n)]
    for j, i in enumerate(index.tolist()):
        candidates[i] = flat[j]
    rest = iter(flat[len(pred_items) :])
    references = [[next(rest) for _ in key.refs] for key in key_items]
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
        met = text["meteor"]
        if met["value"] is not None:
            scores[f"meteor_at_{suffix(t)}"] = metric(met["value"], n=n)
            item_metrics[f"meteor_at_{suffix(t)}"] = met.pop("items")
    breakdown = {
        "n_objects": n,
        "n_missing": n - int(index.size),
        "n_hit": {suffix(t): per_threshold[suffix(t)]["n_hit"] for t in THRESHOLDS},
        "bleu_1_to_4": {suffix(t): [per_threshold[suffix(t)][f"bleu_{m}"] for m in range(1, 5)] for t in THRESHOLDS},
        "op": params.op,
        "tokenizer": tokenizer_ran,
        **({"tokenizer_note": tokenizer_note} if tokenizer_note else {}),
        "wrap": params.wrap,
        "placeholder": " ".join(PLACEHOLDER) if params.wrap else "",
        "meteor": {suffix(t): per_threshold[suffix(t)]["meteor"] for t in THRESHOLDS},
    }
    out = result(scores, breakdown, index.size / n, RECONSTRUCTED, ids, np.asarray(item_metrics["cider_at_0_5"]))
    out["item_metrics"] = item_metrics
    return out


def cost(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> float:
    """Characters of captions and references (``COST_UNIT``), counted once per threshold, plus the Java part
    (:func:`service.scoring.scene3d_qa.java_cost`, METEOR once per threshold)."""
    chars = sum(len(item.caption) for item in pred_items) + sum(sum(map(len, key.refs)) for key in key_items)
    return float(len(THRESHOLDS) * chars + len(key_items)) + java_cost(len(THRESHOLDS) * len(key_items), params)


SPEC = register(
    ScorerSpec(
        name="scene3d_densecap",
        version="2",
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
        conventions=CONVENTIONS,
        check_key=check_key,
    )
)
