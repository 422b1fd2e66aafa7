"""RAVEN-Bench answer parsing, seeded option shuffle and CircularEval option rotation.

The ``raven`` rule and the shuffle follow the RAVEN-Bench artifact (``raven_benchmark/benchmark.py``:
``normalize_predicted_answer``, ``remap_question_options``); the ``guarded`` rule is VLMEvalKit's
``can_infer_option`` / ``can_infer_text`` (Duan et al., "VLMEvalKit", 2024), whose article guard refuses a lone
"A" among more than three tokens; the rotation is MMBench's CircularEval (Liu et al., "MMBench", ECCV 2024).
"""

import hashlib
import json
import random
import re
from collections.abc import Mapping
from typing import Literal

LETTERS = ("A", "B", "C", "D")
SHUFFLE_SALT = "eo_ir_option_shuffle_v1"
ParseRule = Literal["raven", "guarded"]
ParseStatus = Literal["ok", "refusal", "parse_failure"]

_LETTER = re.compile(r"\b([ABCD])\b")
_STRIP = str.maketrans({c: " " for c in ".()[],:;!*#{}"})
_REFUSALS = (
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
    "I'm sorry, but without the image provided",
    "Cannot determine the answer",
)


def _structured(predicted: str | None, raw: str | None) -> str | None:
    """The letter of ``predicted_answer`` (stripped, upper-cased) or of the JSON ``answer`` key of ``raw`` (only a
    JSON object has one, so text not starting with "{" is not parsed)."""
    if predicted is not None and predicted.strip().upper() in LETTERS:
        return predicted.strip().upper()
    if raw is not None and raw.lstrip().startswith("{"):
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            answer = parsed.get("answer")
            if isinstance(answer, str) and answer.strip().upper() in LETTERS:
                return answer.strip().upper()
    return None


def can_infer_option(text: str) -> str | None:
    """VLMEvalKit's option matcher: punctuation ``.()[],:;!*#{}`` to spaces, whitespace tokens; exactly one option
    letter among them gives it, unless "A" is a token of more than three (a possible article); no letter and a
    "Z" token, or a known refusal phrase, gives "Z"."""
    if any(phrase in text for phrase in _REFUSALS):
        return "Z"
    tokens = text.translate(_STRIP).split()
    hits = [c for c in LETTERS if c in tokens]
    if len(hits) == 1:
        return None if "A" in tokens and len(tokens) > 3 else hits[0]
    if not hits and "Z" in tokens:
        return "Z"
    return None


def can_infer_text(text: str, options: Mapping[str, str]) -> str | None:
    """VLMEvalKit's text matcher: the one option whose lower-cased text occurs in the lower-cased answer."""
    low = text.lower()
    hits = [label for label, value in options.items() if value.lower() in low]
    return hits[0] if len(hits) == 1 else None


def parse_answer(
    predicted: str | None, raw: str | None, rule: ParseRule, options: Mapping[str, str] | None = None
) -> tuple[str | None, ParseStatus]:
    """(letter, status) of one response.

    Both rules first take ``predicted_answer`` or the JSON ``answer`` of ``raw_response``. ``raven`` then takes
    the first ``\\b[ABCD]\\b`` of the *upper-cased* raw text (so the article "a" matches, as in the artifact);
    ``guarded`` applies :func:`can_infer_option`, then :func:`can_infer_text` when the options are known ("Z" is a
    refusal, scored wrong).
    """
    letter = _structured(predicted, raw)
    if letter is not None:
        return letter, "ok"
    if raw is None or not raw.strip():
        return None, "parse_failure"
    if rule == "raven":
        match = _LETTER.search(raw.upper())
        return (match.group(1), "ok") if match else (None, "parse_failure")
    found = can_infer_option(raw)
    if found is None and options:
        found = can_infer_text(raw, options)
    if found == "Z":
        return None, "refusal"
    return (found, "ok") if found else (None, "parse_failure")


def shuffle_map(question_id: str, correct: str, salt: str = SHUFFLE_SALT) -> dict[str, str]:
    """RAVEN's seeded option permutation (old → new label).

    ``seed = int(sha256(f"{salt}::{question_id}"))``; the correct option moves to ``"ABCD"[seed % 4]`` and the
    other labels are permuted by Python's ``random.Random(seed).shuffle`` (the artifact's generator, kept so the
    labels equal the released files' exactly).
    """
    seed = int(hashlib.sha256(f"{salt}::{question_id}".encode()).hexdigest(), 16)
    desired = LETTERS[seed % len(LETTERS)]
    sources = [label for label in LETTERS if label != correct]
    targets = [label for label in LETTERS if label != desired]
    random.Random(seed).shuffle(targets)
    return {correct: desired, **dict(zip(sources, targets, strict=True))}


def rotation_map(shift: int) -> dict[str, str]:
    """CircularEval pass ``shift``: options rotated right by ``shift`` (pass 1 shows A = old D, B = old A), as an
    old → new label map."""
    n = len(LETTERS)
    return {LETTERS[j]: LETTERS[(j + shift) % n] for j in range(n)}


def relabel(mapping: Mapping[str, str], values: Mapping[str, str] | None) -> dict[str, str] | None:
    """``values`` (label → text or role) under an old → new label map."""
    return None if values is None else {mapping[label]: value for label, value in values.items()}
