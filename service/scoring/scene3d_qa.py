"""3D question answering scorer (ScanQA / SQA3D): EM@1, refined EM and the COCO caption metrics of the answers.

ScanQA (Azuma et al., CVPR 2022) and SQA3D (Ma et al., ICLR 2023) as evaluated by the LEO / Chat-Scene pipelines:
answers are optionally normalised with ``clean_answer`` (``scanqa_clean``); EM@1 = the answer is one of the
references; refined EM = with whitespace removed, the answer contains a reference or a reference contains it (an
empty answer never matches); BLEU-1..4, ROUGE-L and CIDEr-D compare the answer with all references on
pycocoevalcap's scale (no ×100), see :mod:`service.scoring.caption_metrics`. METEOR needs the Java METEOR 1.5
jar and is reported as null with its reason, never approximated.
"""

import operator
import re
from collections.abc import Sequence
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
    check_bootstrap,
    column,
    match_items,
    metric,
    result,
)
from service.scoring.caption_metrics import MAX_N, METEOR_REASON, Tokenizer, caption_scores, tokenize
from service.stats import bootstrap_mean_ci, factorize, wilson

MAX_ITEMS = 50_000
MAX_REFS = 20
MAX_TOKENS = 128
COST_UNIT = "characters of answers and references"
SYNC_BUDGET = 2.5e5
"""Characters scored (normalised, tokenised, EM and caption metrics) in about 1 s on one core (measured: 10,000
questions with three references, 3.5e5 characters, 1.3 s)."""
HARD_CAP = 5e7
PAIRED_TESTS: dict[str, str] = {
    "em_at_1": "mcnemar",
    "em_refined": "mcnemar",
    "em_at_10": "mcnemar",
    **{f"bleu_{n}": "bootstrap" for n in range(1, MAX_N + 1)},
    "rouge_l": "wilcoxon",
    "cider": "wilcoxon",
}
"""Paired test per metric: EM flags are 0/1 (McNemar); per-item BLEU values (pycocoevalcap's per-sentence BLEU,
not additive to the corpus value) by paired bootstrap; ROUGE-L and CIDEr per item by Wilcoxon signed-rank."""
RECONSTRUCTED: list[str] = []

Answer = Annotated[str, Field(max_length=512)]
NUMBER_WORDS = (
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
)  # fmt: skip

_WORDS = {
    "letf": "left",
    "let": "left",
    "tehre": "there",
    "rigth": "right",
    "rght": "right",
    "behine": "behind",
    "tv": "TV",
    "chai": "chair",
    "wasing": "washing",
    "waslked": "walked",
    "oclock": "o'clock",
    "0": "zero",
    "none": "zero",
    **{str(i): word for i, word in enumerate(NUMBER_WORDS, start=1)},
    "23": "twenty-three",
}
_first_group = operator.methodcaller("group", 1)
_CLEAN_RULES = (
    (r"[ ]+$", ""),
    (r"^[ ]+", ""),
    (r" {2,}", " "),
    (r"[^a-zA-Z0-9,'\s\-:]+", ""),
    (r"\b(" + "|".join(sorted(_WORDS, key=len, reverse=True)) + r")\b", lambda m: _WORDS[m.group(1)]),
    (r"\bo'[ ]+clock\b", "o'clock"),
    (r"\b([a-zA-Z]+)([0-9])\b", _first_group),
    (r"\ba\b ([a-zA-Z]+)", _first_group),
    (r"\ban\b ([a-zA-Z]+)", _first_group),
    (r"\bthe\b ([a-zA-Z]+)", _first_group),
    (r"\bbackwards\b", "backward"),
)
_CLEAN = tuple((re.compile(pattern), repl) for pattern, repl in _CLEAN_RULES)


def clean_answer(text: str) -> str:
    """LEO's ``clean_answer`` (used by Chat-Scene): lower case, trimmed spaces, characters outside
    ``[a-zA-Z0-9,'\\s\\-:]`` removed, typo fixes, numbers 0-20 and 23 as words, "none" → "zero", a digit
    suffix dropped ("mat2" → "mat"), articles dropped before a word, "backwards" → "backward".

    The reference's one-word substitutions (typos, numbers) run one after another; none creates or destroys
    another's match, so they run here as one alternation with a lookup. Its rules for ``\\.[ ]{2,}``, "ç" and
    "’" never fire (double spaces were collapsed and those characters removed before) and are left out.
    """
    out = text.lower()
    for pattern, repl in _CLEAN:
        out = pattern.sub(repl, out)
    return out


def clean_prediction(text: str) -> str:
    """The prediction's normalisation: a trailing period dropped and the first letter lower-cased (answers longer
    than one character), then :func:`clean_answer`."""
    if len(text) > 1:
        if text[-1] == ".":
            text = text[:-1]
        text = text[0].lower() + text[1:]
    return clean_answer(text)


def answer_match(pred: str, refs: Sequence[str]) -> tuple[int, int]:
    """(EM, refined EM) of LEO's ``answer_match``: exact membership, else whitespace-free containment either way;
    an empty answer scores (0, 0)."""
    if not pred:
        return 0, 0
    if pred in refs:
        return 1, 1
    squeezed = "".join(pred.split())
    for ref in refs:
        ref_squeezed = "".join(ref.split())
        if squeezed in ref_squeezed or ref_squeezed in squeezed:
            return 0, 1
    return 0, 0


class AnswerKeyItem(KeyItemBase):
    """One question with its reference answers."""

    refs: list[Answer] = Field(min_length=1, max_length=MAX_REFS, description="Reference answers (1-20).")
    qtype: Label | None = Field(
        None, description="Question type for the per-type breakdown (e.g. SQA3D What/Is/How/Can/Which/Others)."
    )


class PredictionItem(PredItemBase):
    """A model's top-1 answer and, for classifier models, its top-10 list."""

    pred: Answer = Field(description="Top-1 answer text (at most 512 characters).")
    pred_topk: list[Answer] | None = Field(
        None, min_length=1, max_length=10, description="Ranked answers (at most 10) for EM@10."
    )


class Params(BootstrapParams):
    """QA scoring settings."""

    normalize: Literal["none", "scanqa_clean"] = Field(
        "scanqa_clean", description="'scanqa_clean' (LEO/Chat-Scene clean_answer on answers and references) or 'none'."
    )
    tokenizer: Tokenizer = Field(
        "ptb_approx",
        description="'ptb_approx' (regex approximation of the PTB tokenizer with COCO punctuation removal) or "
        "'whitespace' for pre-tokenised text.",
    )


METRICS = {
    "em_at_1": MetricInfo(True, (0.0, 1.0), "Fraction of questions whose top-1 answer is a reference (Wilson CI)."),
    "em_refined": MetricInfo(
        True, (0.0, 1.0), "Fraction whose answer contains or is contained in a reference, spaces removed."
    ),
    "em_at_10": MetricInfo(True, (0.0, 1.0), "Fraction with a reference among the top-10 answers (pred_topk)."),
    **{
        f"bleu_{n}": MetricInfo(True, (0.0, 1.0), f"Corpus BLEU-{n} (pycocoevalcap, closest reference length).")
        for n in range(1, MAX_N + 1)
    },
    "rouge_l": MetricInfo(True, (0.0, 1.0), "Mean ROUGE-L (β = 1.2, LCS, best precision and recall over refs)."),
    "cider": MetricInfo(True, (0.0, 10.0), "Mean CIDEr-D (σ = 6, IDF from the scored set's references)."),
}


def _texts(
    key_items: Sequence[AnswerKeyItem], pred_items: Sequence[PredictionItem], params: Params
) -> tuple[list[str], np.ndarray, list[str], list[list[str]], list[list[str] | None]]:
    """Key ids, prediction index, and the (normalised) answers, references and top-k lists in key order."""
    if len(key_items) > MAX_ITEMS:
        raise InvalidInput(f"{len(key_items)} items exceed the limit of {MAX_ITEMS}", ("answer_key", "items"))
    ids = column(key_items, "item_id")
    index = match_items(ids, column(pred_items, "item_id"))
    preds = [""] * len(key_items)
    topk: list[list[str] | None] = [None] * len(key_items)
    for j, item in zip(index.tolist(), pred_items, strict=True):
        preds[j], topk[j] = item.pred, item.pred_topk
    refs = column(key_items, "refs")
    if params.normalize == "scanqa_clean":
        preds = [clean_prediction(p) for p in preds]
        refs = [[clean_answer(r) for r in rs] for rs in refs]
        topk = [None if t is None else [clean_prediction(p) for p in t] for t in topk]
    return ids, index, preds, refs, topk


def _tokens(texts: Sequence[str], tokenizer: Tokenizer, locs: Sequence[tuple]) -> list[list[str]]:
    """Tokens of each text; more than ``MAX_TOKENS`` raises InvalidInput at the text's ``locs`` entry."""
    out = [tokenize(t.replace("\n", " ").strip(), tokenizer) for t in texts]
    long = [i for i, toks in enumerate(out) if len(toks) > MAX_TOKENS]
    if long:
        raise InvalidInput(f"an answer has more than {MAX_TOKENS} tokens", locs[long[0]])
    return out


def _mean_entry(values: np.ndarray, params: Params) -> dict:
    if params.n_resamples == 0:
        return metric(float(values.mean()), n=values.size)
    low, high, _ = bootstrap_mean_ci(values, params.n_resamples, params.seed, params.confidence)
    return metric(float(values.mean()), low, high, values.size)


def score(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> dict[str, Any]:
    """EM@1, refined EM, EM@10 (when top-k lists are given), BLEU-1..4, ROUGE-L and CIDEr-D; per type and item.

    A missing prediction is the empty answer (EM 0, text metrics of an empty candidate) and lowers coverage.
    """
    check_bootstrap(params, len(key_items))
    ids, index, preds, refs, topk = _texts(key_items, pred_items, params)
    n = len(key_items)
    em = np.array([answer_match(p, r) for p, r in zip(preds, refs, strict=True)], dtype=np.float64).reshape(n, 2)
    pred_at = np.zeros(n, dtype=np.int64)
    pred_at[index] = np.arange(index.size)
    cand_tokens = _tokens(preds, params.tokenizer, [("predictions", "items", int(j), "pred") for j in pred_at])
    ref_tokens = [
        _tokens(rs, params.tokenizer, [("answer_key", "items", i, "refs", k) for k in range(len(rs))])
        for i, rs in enumerate(refs)
    ]
    text = caption_scores(cand_tokens, ref_tokens)
    item_metrics: dict[str, list[float]] = {"em_at_1": em[:, 0].tolist(), "em_refined": em[:, 1].tolist()}
    scores: dict[str, dict] = {}
    for name, col in (("em_at_1", 0), ("em_refined", 1)):
        k = int(em[:, col].sum())
        scores[name] = metric(k / n, *wilson(k, n, params.confidence), n)
    if any(t is not None for t in topk):
        hits = np.array([any(p in r for p in (t or [p0])) for p0, t, r in zip(preds, topk, refs, strict=True)])
        k = int(hits.sum())
        scores["em_at_10"] = metric(k / n, *wilson(k, n, params.confidence), n)
        item_metrics["em_at_10"] = hits.astype(np.float64).tolist()
    for m in range(1, MAX_N + 1):
        scores[f"bleu_{m}"] = metric(text[f"bleu_{m}"], n=n)
        item_metrics[f"bleu_{m}"] = np.asarray(text[f"bleu_{m}_items"]).tolist()
    for name in ("rouge_l", "cider"):
        values = np.asarray(text[f"{name}_items"])
        scores[name] = _mean_entry(values, params)
        item_metrics[name] = values.tolist()
    codes, types = factorize(column(key_items, "qtype"))
    by_qtype = {}
    for c, label in enumerate(types):
        if label is not None:
            mask = codes == c
            by_qtype[str(label)] = {"n": int(mask.sum())} | {
                name: float(np.asarray(item_metrics[name])[mask].mean())
                for name in ("em_at_1", "em_refined", "rouge_l", "cider")
            }
    breakdown = {
        "n_items": n,
        "n_missing": n - int(index.size),
        "normalize": params.normalize,
        "tokenizer": params.tokenizer,
        "meteor": {"value": None, "reason": METEOR_REASON},
        "by_qtype": by_qtype,
        "scale": "pycocoevalcap's (no x100); EM as fractions",
        "notes": "BLEU is corpus-level (its per-item values are per-sentence BLEU); CIDEr-D's IDF comes from the "
        "references of the scored set, so per-type CIDEr means use the whole set's IDF",
    }
    out = result(scores, breakdown, index.size / n, RECONSTRUCTED, ids, em[:, 0])
    out["item_metrics"] = item_metrics
    return out


def cost(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> float:
    """Characters of answers, top-k lists and references (``COST_UNIT``)."""
    chars = sum(len(item.pred) + sum(map(len, item.pred_topk or ())) for item in pred_items)
    return float(chars + sum(sum(map(len, key.refs)) for key in key_items) + len(key_items))


SPEC = register(
    ScorerSpec(
        name="scene3d_qa",
        version="1",
        summary="3D question answering (ScanQA / SQA3D): EM@1, refined EM, EM@10 and pycocoevalcap BLEU-1..4, "
        "ROUGE-L, CIDEr-D of the top-1 answer against all references; METEOR null without a Java backend.",
        paper="SceneScaffold",
        citation="SceneScaffold, a unified 3D-LMM (NeurIPS 2026; only the abstract is available); question answering "
        "as in Azuma et al., 'ScanQA: 3D Question Answering for Spatial Scene Understanding', CVPR 2022, and "
        "Ma et al., 'SQA3D: Situated Question Answering in 3D Scenes', ICLR 2023, with the normalisation and "
        "matching of LEO (Huang et al., 'An Embodied Generalist Agent in 3D World', ICML 2024) as in "
        "Chat-Scene utils/eval.py",
        answer_key_item_model=AnswerKeyItem,
        prediction_item_model=PredictionItem,
        params_model=Params,
        metrics=METRICS,
        primary_metric="em_at_1",
        score=score,
        cost=cost,
        cost_unit=COST_UNIT,
        sync_budget=SYNC_BUDGET,
        hard_cap=HARD_CAP,
        paired_tests=PAIRED_TESTS,
    )
)
