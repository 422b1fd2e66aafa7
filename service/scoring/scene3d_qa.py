"""3D question answering scorer (ScanQA / SQA3D): EM@1, refined EM and the COCO caption metrics of the answers.

ScanQA (Azuma et al., CVPR 2022) and SQA3D (Ma et al., ICLR 2023) as evaluated by the Chat-Scene and LEO pipelines.
``normalize`` picks whose answer cleaning runs (docs/scene3d.md): ``chatscene`` (Chat-Scene's current
``calc_scanqa_score``: the prediction cleaned, the references as given), ``scanqa_clean`` (Chat-Scene's
``calc_sqa3d_score``, and its ScanQA path before July 2024: both cleaned), ``leo`` (LEO's ``ScanQAEvaluator``:
both cleaned by ``clean_answer`` alone, LEO's ``answer_match``) or ``none``. EM@1 = the answer is one of the
references; refined EM = with whitespace removed, the answer contains a reference or a reference contains it.
BLEU-1..4, ROUGE-L and CIDEr-D compare the answer with all references on pycocoevalcap's scale (no ×100), see
:mod:`service.scoring.caption_metrics`; METEOR (``meteor=true``) runs the METEOR 1.5 jar when Java is present and is
otherwise null with its reason, never approximated.
"""

import operator
import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.registry import Convention, ConventionOption, MetricInfo, ScorerSpec, Upstream, register
from service.scoring import coco_java
from service.scoring._common import (
    BootstrapParams,
    KeyItemBase,
    Label,
    PredItemBase,
    check_bootstrap,
    check_key_budget,
    check_key_size,
    column,
    match_items,
    metric,
    result,
)
from service.scoring.caption_metrics import MAX_N, Tokenizer, caption_scores, meteor, tokenize_all
from service.stats import bootstrap_mean_ci, factorize, wilson

MAX_ITEMS = 50_000
MAX_REFS = 20
MAX_TOKENS = 128
COST_UNIT = "characters of answers and references"
SYNC_BUDGET = 2.5e5
"""Characters scored (normalised, tokenised, EM and caption metrics) in about 1 s on one core (measured: 10,000
questions with three references, 3.5e5 characters, 1.3 s)."""
HARD_CAP = 5e7
JAVA_START_COST = 2.5e5
"""A ``ptb_java`` call starts a JVM for the tokenizer: about 1 s (measured 1.3 s), in ``COST_UNIT``."""
METEOR_START_COST = 2.5e7
"""Starting this process's METEOR JVM (paraphrase tables loaded): about 100 s measured here, in ``COST_UNIT``; paid
once per process, so a call finding it running costs only ``METEOR_ITEM_COST`` per item."""
METEOR_ITEM_COST = 2500.0
"""METEOR per question (a SCORE and an EVAL line through the JVM): about 10 ms (measured 1.3 s for 40 under load), in
``COST_UNIT``."""
PAIRED_TESTS: dict[str, str] = {
    "em_at_1": "mcnemar",
    "em_refined": "mcnemar",
    "em_at_10": "mcnemar",
    **{f"bleu_{n}": "bootstrap" for n in range(1, MAX_N + 1)},
    "rouge_l": "wilcoxon",
    "cider": "wilcoxon",
    "meteor": "wilcoxon",
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
    """(EM, refined EM) of Chat-Scene's ``answer_match``: exact membership, else whitespace-free containment either
    way; an empty answer scores (0, 0)."""
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


def answer_match_leo(pred: str, refs: Sequence[str]) -> tuple[int, int]:
    """(EM, refined EM) of LEO's ``ScanQAEvaluator.answer_match``: the references in order, the first that equals
    the answer (1, 1) or contains or is contained in it, whitespace removed (0, 1), decides; so an answer equal to
    a later reference scores (0, 1) after an earlier containing one, and an empty answer is contained in any."""
    squeezed = "".join(pred.split())
    for ref in refs:
        if pred == ref:
            return 1, 1
        ref_squeezed = "".join(ref.split())
        if squeezed in ref_squeezed or ref_squeezed in squeezed:
            return 0, 1
    return 0, 0


Normalize = Literal["chatscene", "scanqa_clean", "leo", "none"]
CHATSCENE = Upstream(
    "Chat-Scene utils/eval.py calc_scanqa_score", "commit 475e106 (unchanged since e7e9a3a, 2024-07-25)"
)
CHATSCENE_SQA3D = Upstream("Chat-Scene utils/eval.py calc_sqa3d_score", "commit 475e106")
CHATSCENE_OLD = Upstream("Chat-Scene utils/eval.py calc_scanqa_score", "commits before e7e9a3a (2024-07-25)")
LEO = Upstream("LEO (embodied-generalist) evaluator/scanqa_eval.py, sqa3d_eval.py", "commit 567f2d8")
COCO = Upstream("pycocoevalcap tokenizer/ptbtokenizer.py (Stanford CoreNLP 3.4.1 PTBTokenizer)", "1.2")
CONVENTIONS = (
    Convention(
        "normalize",
        "chatscene",
        (
            ConventionOption("chatscene", (CHATSCENE,)),
            ConventionOption("scanqa_clean", (CHATSCENE_SQA3D, CHATSCENE_OLD)),
            ConventionOption("leo", (LEO,)),
            ConventionOption("none", ()),
        ),
    ),
    Convention(
        "tokenizer",
        "ptb_approx",
        (
            ConventionOption("ptb_approx", (COCO, CHATSCENE)),
            ConventionOption("ptb_java", (COCO, CHATSCENE)),
            ConventionOption("whitespace", (LEO,)),
        ),
    ),
)
"""Where the reference evaluators disagree (docs/scene3d.md): the answer cleaning, and the caption tokenisation
(pycocoevalcap's PTB tokenizer in Chat-Scene; none in LEO, whose cleaned answers are split on spaces)."""


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

    normalize: Normalize = Field(
        "chatscene",
        description="Answer cleaning: 'chatscene' (Chat-Scene's current ScanQA evaluation: the prediction cleaned, "
        "references as given), 'scanqa_clean' (Chat-Scene's SQA3D evaluation: both cleaned), 'leo' (LEO's "
        "evaluator: both cleaned, LEO's match order) or 'none'.",
    )
    tokenizer: Tokenizer = Field(
        "ptb_approx",
        description="'ptb_approx' (the Python port of pycocoevalcap's PTB tokenisation, equal to the jar on the "
        "committed comparison corpus), 'ptb_java' (the CoreNLP 3.4.1 jar through Java; the port when Java is "
        "absent, said in the result) or 'whitespace' for pre-tokenised text.",
    )
    meteor: bool = Field(
        False,
        description="Also METEOR 1.5 through the jar pycocoevalcap ships (needs Java; null with the reason without "
        "it). The first call in a process starts its JVM (about 100 s), so such calls run as jobs.",
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
    "meteor": MetricInfo(True, (0.0, 1.0), "Corpus METEOR 1.5 (pycocoevalcap's jar; only with meteor=true and Java)."),
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
    if params.normalize != "none":
        clean_pred = clean_answer if params.normalize == "leo" else clean_prediction
        preds = [clean_pred(p) for p in preds]
        topk = [None if t is None else [clean_pred(p) for p in t] for t in topk]
    return ids, index, preds, _refs(key_items, params), topk


def _refs(key_items: Sequence[AnswerKeyItem], params: Params) -> list[list[str]]:
    """The references as scored: cleaned by ``clean_answer`` under ``scanqa_clean`` and ``leo``, else as given."""
    refs = column(key_items, "refs")
    if params.normalize in ("scanqa_clean", "leo"):
        return [[clean_answer(r) for r in rs] for rs in refs]
    return refs


def _tokens(
    preds: Sequence[str], refs: Sequence[Sequence[str]], pred_at: np.ndarray, tokenizer: Tokenizer
) -> tuple[list[list[str]], list[list[list[str]]], str, str | None]:
    """(answer tokens, reference tokens, the tokenizer that ran, why it is not the one asked for); more than
    ``MAX_TOKENS`` tokens raises InvalidInput at the text."""
    texts = [t.replace("\n", " ").strip() for t in (*preds, *(r for rs in refs for r in rs))]
    flat, ran, note = tokenize_all(texts, tokenizer)
    locs = [("predictions", "items", int(j), "pred") for j in pred_at]
    locs += [("answer_key", "items", i, "refs", k) for i, rs in enumerate(refs) for k in range(len(rs))]
    long = [i for i, toks in enumerate(flat) if len(toks) > MAX_TOKENS]
    if long:
        raise InvalidInput(f"an answer has more than {MAX_TOKENS} tokens", locs[long[0]])
    rest = iter(flat[len(preds) :])
    return flat[: len(preds)], [[next(rest) for _ in rs] for rs in refs], ran, note


def check_key(key_items: list[AnswerKeyItem], params: Params) -> None:
    """The answer-key checks of :func:`score` (``ScorerSpec.check_key``): at most ``MAX_ITEMS`` questions, the
    bootstrap budget, and every reference at most ``MAX_TOKENS`` tokens once cleaned and tokenised as scored."""
    check_key_size(len(key_items), MAX_ITEMS)
    check_key_budget(params.n_resamples, len(key_items))
    _tokens([], _refs(key_items, params), np.zeros(0, dtype=np.int64), params.tokenizer)


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
    match = answer_match_leo if params.normalize == "leo" else answer_match
    em = np.array([match(p, r) for p, r in zip(preds, refs, strict=True)], dtype=np.float64).reshape(n, 2)
    pred_at = np.zeros(n, dtype=np.int64)
    pred_at[index] = np.arange(index.size)
    cand_tokens, ref_tokens, tokenizer_ran, tokenizer_note = _tokens(preds, refs, pred_at, params.tokenizer)
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
    meteor_out = meteor(cand_tokens, ref_tokens) if params.meteor else {"value": None, "reason": "meteor=false"}
    if meteor_out["value"] is not None:
        scores["meteor"] = metric(meteor_out["value"], n=n)
        item_metrics["meteor"] = meteor_out.pop("items")
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
        "tokenizer": tokenizer_ran,
        **({"tokenizer_note": tokenizer_note} if tokenizer_note else {}),
        "meteor": meteor_out,
        "by_qtype": by_qtype,
        "scale": "pycocoevalcap's (no x100); EM as fractions",
        "notes": "BLEU is corpus-level (its per-item values are per-sentence BLEU); CIDEr-D's IDF comes from the "
        "references of the scored set, so per-type CIDEr means use the whole set's IDF",
    }
    out = result(scores, breakdown, index.size / n, RECONSTRUCTED, ids, em[:, 0])
    out["item_metrics"] = item_metrics
    return out


def java_cost(n_items: int, params: Any) -> float:
    """The Java part of a call, in ``COST_UNIT``: the tokenizer's JVM (``ptb_java``) and METEOR's start-up (unless
    this process's METEOR JVM runs already) and per-item cost (``meteor``)."""
    out = JAVA_START_COST if params.tokenizer == "ptb_java" else 0.0
    if params.meteor:
        out += (0.0 if coco_java.METEOR.started else METEOR_START_COST) + METEOR_ITEM_COST * n_items
    return out


def cost(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> float:
    """Characters of answers, top-k lists and references (``COST_UNIT``), plus :func:`java_cost`."""
    chars = sum(len(item.pred) + sum(map(len, item.pred_topk or ())) for item in pred_items)
    text = chars + sum(sum(map(len, key.refs)) for key in key_items) + len(key_items)
    return float(text) + java_cost(len(key_items), params)


SPEC = register(
    ScorerSpec(
        name="scene3d_qa",
        version="2",
        summary="3D question answering (ScanQA / SQA3D): EM@1, refined EM, EM@10 and pycocoevalcap BLEU-1..4, "
        "ROUGE-L, CIDEr-D (and METEOR 1.5 through Java) of the top-1 answer against all references.",
        paper="SceneScaffold",
        citation="SceneScaffold, a unified 3D-LMM (NeurIPS 2026; only the abstract is available); question answering "
        "as in Azuma et al., 'ScanQA: 3D Question Answering for Spatial Scene Understanding', CVPR 2022, and "
        "Ma et al., 'SQA3D: Situated Question Answering in 3D Scenes', ICLR 2023, evaluated as Chat-Scene "
        "utils/eval.py (default) or LEO (Huang et al., 'An Embodied Generalist Agent in 3D World', ICML 2024)",
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
        conventions=CONVENTIONS,
        check_key=check_key,
    )
)
