"""Zero-Buffer Benchmark scorer: correctness and initial-word occurrence rate (IWOR) of full-duplex spoken models.

Chang, Chang, Liu & Glass, "Overcoming State Inertia in Full-Duplex Spoken Language Models via Activation
Steering": the user starts speaking abruptly while the model talks; a response is *correct* when the judge says so
or the reference (or an alias) occurs in it, and *IWOR-positive* when the first content word(s) of the user turn
reappear in it (the model perceived the beginning of the input). Both rules are reconstructed from the abstract:

* tokens: NFKC, lower case, ``'`` and ``’`` deleted, every character failing ``str.isalnum()`` made a space, split
  on whitespace ("Oxygen's" → ``oxygens``, "fifty-six" → ``fifty six``);
* w₁..wₙ: the first ``n_initial`` user tokens after removing fillers (default uh, um, oh, hey); no stop words;
* IWOR flag = 1 iff every wₖ is a response token (exact match: no stemming, no number normalisation);
* correctness = ``judge_correct`` when given, else 1 iff the tokens of the reference or of an alias occur as a
  contiguous run of the response tokens.

Items without a prediction are left out of n (and out of paired comparisons); ``coverage`` reports them. Both
metrics carry Wilson 95% intervals; conditions (e.g. baseline and steered) are separate submissions compared with
the exact McNemar test on their common items.
"""

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from service.errors import Degenerate, InvalidInput
from service.registry import MetricInfo, ScorerSpec, register
from service.scoring._common import KeyItemBase, PredItemBase, check_key_size, column, match_items, metric, result
from service.stats import wilson
from service.types import StrictModel

MAX_ITEMS = 20_000
MAX_ALIASES = 32
CONFIDENCE = 0.95
DEFAULT_FILLERS = ("uh", "um", "oh", "hey")
PAIRED_TESTS: dict[str, str] = {"correctness": "mcnemar", "iwor": "mcnemar"}
"""Paired test of each metric with per-item values (both are 0/1 flags)."""
COST_UNIT = "characters of user, reference, alias and response text"
SYNC_BUDGET = 3.5e6
"""Characters scored in about 1 s of CPU (bench/scorer_costs.py: 3.7e6 characters per CPU second, 270 ns each, for
the whole score call at 20,000 items: tokenising, matching and the Wilson intervals)."""
HARD_CAP = 1e8

_APOSTROPHES = str.maketrans("", "", "'\u2019")
_NON_ALNUM = re.compile(r"[\W_]+")

ShortText = Annotated[str, Field(min_length=1, max_length=256)]


class AnswerKeyItem(KeyItemBase):
    """One zero-buffer item: the user turn and its reference answer."""

    user_text: str = Field(
        min_length=1, max_length=2000, description="Transcript of the user turn that started at the onset frame."
    )
    reference: ShortText = Field(description="Reference answer (matched as a contiguous token run).")
    aliases: list[ShortText] | None = Field(
        None, max_length=MAX_ALIASES, description="Other accepted answers (at most 32), matched like the reference."
    )


class PredictionItem(PredItemBase):
    """The model's response to one item."""

    response_text: str = Field(
        max_length=4000, description="Transcript of the model channel after the onset (ASR or inner monologue)."
    )
    judge_correct: bool | None = Field(
        None, description="Judge label; when given (true or false) it decides correctness instead of the match."
    )


class Params(StrictModel):
    """IWOR options (correctness does not depend on them)."""

    n_initial: int = Field(1, ge=1, le=16, description="Initial user words that must all reappear (default 1).")
    skip_fillers: bool = Field(True, description="Remove filler tokens before taking the initial words (default).")
    fillers: list[Annotated[str, Field(min_length=1, max_length=32)]] = Field(
        default_factory=lambda: list(DEFAULT_FILLERS),
        max_length=64,
        description="Filler words, each one token after normalisation (default uh, um, oh, hey).",
    )


METRICS = {
    "correctness": MetricInfo(
        True,
        (0.0, 1.0),
        "Share of answered items whose response is correct (judge label, else reference/alias token-run match); "
        "Wilson 95% CI.",
    ),
    "iwor": MetricInfo(
        True,
        (0.0, 1.0),
        "Initial-word occurrence rate: share of answered items whose response contains the first user content "
        "word(s) as exact tokens; Wilson 95% CI.",
    ),
}
RECONSTRUCTED = ["correctness", "iwor"]


def tokens(text: str) -> list[str]:
    """Tokens of ``text``: NFKC, lower case, apostrophes deleted, non-alphanumerics as spaces, whitespace split."""
    return _NON_ALNUM.sub(" ", unicodedata.normalize("NFKC", text).lower().translate(_APOSTROPHES)).split()


def _token_run(text: str, loc: tuple[str | int, ...]) -> str:
    """Tokens of ``text`` framed by spaces, so that substring containment is a contiguous token-run match."""
    toks = tokens(text)
    if not toks:
        raise InvalidInput(f"{text!r} has no tokens (only punctuation or spaces)", loc)
    return " " + " ".join(toks) + " "


def _filler_set(params: Params, loc: tuple[str, ...] = ("fillers",)) -> frozenset[str]:
    """The normalised fillers; one that is not one token raises InvalidInput at ``loc + (index,)``."""
    if not params.skip_fillers:
        return frozenset()
    found = []
    for i, filler in enumerate(params.fillers):
        toks = tokens(filler)
        if len(toks) != 1:
            raise InvalidInput(f"filler {filler!r} is {len(toks)} tokens after normalisation, not 1", (*loc, i))
        found.append(toks[0])
    return frozenset(found)


def initial_words(user_text: str, n_initial: int, fillers: frozenset[str], loc: tuple[str | int, ...]) -> list[str]:
    """w₁..wₙ: the first ``n_initial`` user tokens that are not fillers; InvalidInput when fewer remain."""
    words = [t for t in tokens(user_text) if t not in fillers][:n_initial]
    if len(words) < n_initial:
        raise InvalidInput(f"user_text has {len(words)} non-filler tokens, n_initial is {n_initial}", loc)
    return words


@dataclass(frozen=True)
class KeyTokens:
    """The normalised parts of one answer-key item: initial words and framed answer token runs."""

    words: frozenset[str]
    answers: tuple[str, ...]


def key_tokens(key: AnswerKeyItem, k: int, n_initial: int, fillers: frozenset[str]) -> KeyTokens:
    """Initial words and answer runs of key item ``k``; InvalidInput names the field that has too few tokens."""
    loc = ("answer_key", "items", k)
    words = initial_words(key.user_text, n_initial, fillers, (*loc, "user_text"))
    answers = [_token_run(key.reference, (*loc, "reference"))]
    answers += [_token_run(a, (*loc, "aliases", j)) for j, a in enumerate(key.aliases or ())]
    return KeyTokens(words=frozenset(words), answers=tuple(answers))


def check_key(key_items: list[AnswerKeyItem], params: Params) -> None:
    """The checks :func:`score` makes of the answer key and params (``ScorerSpec.check_key``): at most
    ``MAX_ITEMS`` items, each filler one token, ``n_initial`` non-filler user tokens and a token in the reference
    and in each alias of every item."""
    check_key_size(len(key_items), MAX_ITEMS)
    fillers = _filler_set(params, ("scorer_params", "fillers"))
    for k, item in enumerate(key_items):
        key_tokens(item, k, params.n_initial, fillers)


def flags(key: KeyTokens, pred: PredictionItem) -> tuple[float, float]:
    """(correctness, IWOR) of one response: judge label or contiguous answer run; every initial word present."""
    response = tokens(pred.response_text)
    iwor = float(key.words <= set(response))
    if pred.judge_correct is not None:
        return float(pred.judge_correct), iwor
    run = " " + " ".join(response) + " "
    return float(any(a in run for a in key.answers)), iwor


def _metric_entry(flags: np.ndarray) -> dict:
    k, n = int(flags.sum()), flags.size
    low, high = wilson(k, n, CONFIDENCE)
    return metric(k / n, low, high, n)


def score(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> dict[str, Any]:
    """Correctness and IWOR over the answered items, with Wilson intervals and per-item flags per metric.

    Every answer-key item is validated (initial words, answer tokens), answered or not."""
    if len(key_items) > MAX_ITEMS:
        raise InvalidInput(f"{len(key_items)} items exceed the limit of {MAX_ITEMS}", ("answer_key", "items"))
    ids = column(key_items, "item_id")
    index = match_items(ids, column(pred_items, "item_id"))
    if index.size == 0:
        raise Degenerate("no answer-key item has a prediction: correctness and IWOR are undefined", ("predictions",))
    fillers = _filler_set(params)
    keys = [key_tokens(item, k, params.n_initial, fillers) for k, item in enumerate(key_items)]
    order = np.argsort(index, kind="stable")
    values = np.array([flags(keys[index[j]], pred_items[j]) for j in order]).reshape(-1, 2)
    answered = [ids[index[j]] for j in order]
    correct, iwor = values[:, 0], values[:, 1]
    scores = {"correctness": _metric_entry(correct), "iwor": _metric_entry(iwor)}
    breakdown = {
        "n_items": len(key_items),
        "n_answered": int(index.size),
        "n_missing": len(key_items) - int(index.size),
        "correct": int(correct.sum()),
        "iwor_hits": int(iwor.sum()),
        "judge_labelled": sum(pred_items[j].judge_correct is not None for j in order),
        "rules": {
            "tokens": "NFKC, lower case, apostrophes deleted, non-alphanumerics as spaces, split on whitespace",
            "iwor": "every initial word is a response token (exact match)",
            "correctness": "judge_correct when given, else a contiguous token-run match of the reference or an alias",
            "n_initial": params.n_initial,
            "fillers": sorted(fillers),
        },
        "protocol": "reconstructed-v1",
    }
    out = result(scores, breakdown, index.size / len(key_items), RECONSTRUCTED, answered, correct)
    out["item_metrics"] = {"correctness": correct.tolist(), "iwor": iwor.tolist()}
    return out


def _texts(items: Sequence[Any], *names: str) -> int:
    return sum(len(getattr(item, name) or "") for item in items for name in names)


def cost(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> float:
    """Characters to tokenise: user, reference and alias texts of the key plus every response (in ``COST_UNIT``)."""
    aliases = sum(len(a) for item in key_items for a in item.aliases or ())
    return float(_texts(key_items, "user_text", "reference") + aliases + _texts(pred_items, "response_text"))


SPEC = register(
    ScorerSpec(
        name="zbb",
        version="1",
        summary="Zero-Buffer Benchmark: correctness and initial-word occurrence rate (IWOR) of full-duplex "
        "spoken-model responses, with Wilson intervals and per-item flags for paired McNemar comparisons.",
        paper="Overcoming State Inertia in Full-Duplex Spoken Language Models via Activation Steering",
        citation="Cheng-Kuang Chang, Kai-Wei Chang, Alexander H. Liu, James Glass. Overcoming State Inertia in "
        "Full-Duplex Spoken Language Models via Activation Steering. arXiv:2606.11386, 2026.",
        answer_key_item_model=AnswerKeyItem,
        prediction_item_model=PredictionItem,
        params_model=Params,
        metrics=METRICS,
        primary_metric="correctness",
        score=score,
        cost=cost,
        cost_unit=COST_UNIT,
        sync_budget=SYNC_BUDGET,
        hard_cap=HARD_CAP,
        paired_tests=PAIRED_TESTS,
        check_key=check_key,
    )
)
