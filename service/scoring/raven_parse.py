"""RAVEN-Bench answer parsing, seeded option shuffle and CircularEval option rotation.

The ``raven`` rule and the shuffle follow the RAVEN-Bench artifact (``raven_benchmark/benchmark.py`` at commit
cdad9ff: ``normalize_predicted_answer``, ``remap_question_options``); the ``vlmevalkit`` rules follow VLMEvalKit's
``can_infer`` (Duan et al., "VLMEvalKit", 2024; ``vlmeval/utils/matching_util.py`` at commit e8e78f0, unchanged
since 2cf2a36 of 2026-06-25) with ``VERBOSE`` unset (``vlmevalkit``) or set (``vlmevalkit_verbose``, whose article
guard refuses a lone "A" among more than three tokens; ``guarded`` is its older name); the rotation is MMBench's
CircularEval (Liu et al., "MMBench", ECCV 2024).
"""

import hashlib
import json
import random
import re
from collections.abc import Mapping
from typing import Literal

LETTERS = ("A", "B", "C", "D")
SHUFFLE_SALT = "eo_ir_option_shuffle_v1"
ParseRule = Literal["raven", "vlmevalkit", "vlmevalkit_verbose", "guarded"]
ParseStatus = Literal["ok", "refusal", "parse_failure"]
VLMEVALKIT_COMMIT = "e8e78f05f3080fe28154f2130321f17951c3be94"
RAVEN_COMMIT = "cdad9ffe223437cfd6ec2f615d73c76947d3623a"

_LETTER = re.compile(r"\b([ABCD])\b")
_ANSWER_IS = re.compile(r"(?i)(?:correct\s+)?answer\s+is\s+\**([ABCD])\**")
_STRIP = str.maketrans({c: " " for c in ".()[],:;!*#{}"})
_API_FAILURE = "Failed to obtain answer via API"
_REFUSALS = (
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
    "I'm sorry, but without the image provided",
    "Cannot determine the answer",
)


def _json_answer(raw: str) -> str | None:
    """The letter of the JSON ``answer`` key of ``raw`` (only a JSON object has one)."""
    if not raw.lstrip().startswith("{"):
        return None
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        return None
    answer = parsed.get("answer") if isinstance(parsed, dict) else None
    if isinstance(answer, str) and answer.strip().upper() in LETTERS:
        return answer.strip().upper()
    return None


def can_infer_option(text: str, choices: tuple[str, ...], verbose: bool) -> str | None:
    """VLMEvalKit's option matcher: the API-failure marker gives nothing and a known refusal phrase "Z";
    punctuation ``.()[],:;!*#{}`` to spaces, whitespace tokens; exactly one choice letter among them gives it if
    it is among the last four tokens (verbose mode first refuses a lone match when "A" is a token of more than
    three: a possible article); no letter and a "Z" token gives "Z"; otherwise "(correct) answer is X"
    (any case, X in A-D and a choice) anywhere in the text gives X."""
    if _API_FAILURE in text:
        return None
    if any(phrase in text for phrase in _REFUSALS):
        return "Z"
    tokens = text.translate(_STRIP).split()
    hits = [c for c in choices if c in tokens]
    if len(hits) == 1:
        if verbose and "A" in tokens and len(tokens) > 3:
            return None
        if tokens.index(hits[0]) > len(tokens) - 5:
            return hits[0]
    elif not hits and "Z" in tokens:
        return "Z"
    match = _ANSWER_IS.search(text)
    if match and match.group(1).upper() in choices:
        return match.group(1).upper()
    return None


def can_infer_text(text: str, options: Mapping[str, str]) -> str | None:
    """VLMEvalKit's text matcher: the one option whose lower-cased text occurs in the lower-cased answer; nothing
    when the answer is longer than twice the options' total length."""
    low = text.lower()
    if len(low) > 2 * sum(len(value) for value in options.values()):
        return None
    hits = [label for label, value in options.items() if value.lower() in low]
    return hits[0] if len(hits) == 1 else None


def parse_answer(
    predicted: str | None, raw: str | None, rule: ParseRule, options: Mapping[str, str] | None = None
) -> tuple[str | None, ParseStatus]:
    """(letter, status) of one response.

    Every rule first takes ``predicted_answer`` (stripped, upper-cased). ``raven`` then takes the JSON ``answer``
    of ``raw_response``, else the first ``\\b[ABCD]\\b`` of the *upper-cased* raw text (so the article "a"
    matches, as in the artifact). The VLMEvalKit rules apply :func:`can_infer_option` to the raw text (the
    choices: the option labels, or A-D when the options are not known), then :func:`can_infer_text` when the
    options are known ("Z" is a refusal, scored wrong).
    """
    if predicted is not None and predicted.strip().upper() in LETTERS:
        return predicted.strip().upper(), "ok"
    if raw is None or not raw.strip():
        return None, "parse_failure"
    if rule == "raven":
        letter = _json_answer(raw)
        match = _LETTER.search(raw.upper())
        letter = letter or (match.group(1) if match else None)
        return (letter, "ok") if letter else (None, "parse_failure")
    choices = LETTERS if not options else tuple(label for label in LETTERS if label in options)
    found = can_infer_option(raw, choices, verbose=rule != "vlmevalkit")
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
