"""TELEVAL text matching: ExistMatch tokenizer and SingleOptionMatch extractor.

Re-implementation of the protocol of ``Tele-AI/TELEVAL`` ``src/evaluator/process.py`` (HEAD 6acd665):
- tokens (DPR ``SimpleTokenizer`` style): NFD, lower case, runs of letters/digits/marks, every CJK ideograph
  its own token, punctuation (``\\p{P}``) dropped, other symbols kept as one-character tokens. The reference's
  CJK test compares against malformed literals (``"\\u20000"`` is U+2000 followed by "0"), which turns
  general punctuation and symbols U+2000-U+2A6D into CJK tokens and never splits astral ideographs; here the
  intended ranges (U+4E00-9FFF, U+3400-4DBF, U+20000-2A6DF, U+2A700-2EBEF, U+F900-FAFF) are used.
- ExistMatch: an alias matches when its tokens occur as a contiguous run of the prediction's tokens.
- SingleOptionMatch: a negation question ("哪项是错误的") switches to the wrong-option cascade; otherwise
  summary hint + (answer word) + verb + letter, then answer word + verb + letter, then answer word … letter
  followed later by a "correct" word; with ``cushion`` the fallback is "exactly one distinct letter A-D".

The extractor takes the same decisions as the reference patterns in time linear in the answer's length. The
reference's gaps ``[\\s，。、：,.:]*`` sit next to each other around optional words (``gap word? gap``), so a run of
L gap characters is split in O(L²) ways before failing; every element after a gap starts with a non-gap
character, so a match's gaps are always maximal and possessive gaps (``*+``) accept exactly the same matches.
The third pattern's lookahead ``(?=[\\s\\S]*?word)`` rescans the rest of the answer for every candidate; it holds
exactly when the candidate ends at or before the last place a "correct" (or negation) word starts, so the pattern
is searched without it, up to that place (``endpos``): the character there is a CJK word start, so the option's
``(?![A-Za-z0-9])`` sees the same thing at the cut as in the whole answer.
"""

import unicodedata
from collections.abc import Sequence

import regex

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df\U0002a700-\U0002ebef"
_TOKEN = regex.compile(
    rf"(?V1)[{_CJK}]|[[\p{{L}}\p{{N}}\p{{M}}]--[{_CJK}]]+|[^\p{{Z}}\p{{C}}\p{{P}}\p{{L}}\p{{N}}\p{{M}}]"
)
_SEP = " "


def tokenize(text: str) -> list[str]:
    """ExistMatch tokens of ``text`` (module docstring)."""
    return _TOKEN.findall(unicodedata.normalize("NFD", text).lower())


def token_string(text: str) -> str:
    """Tokens joined and framed by a separator no token contains, so that substring = contiguous run."""
    return _SEP + _SEP.join(tokenize(text)) + _SEP


def alias_matches(pred_tokens: str, alias: str) -> bool:
    """Whether ``alias`` occurs as a contiguous token run in ``pred_tokens`` (a :func:`token_string`)."""
    return token_string(alias) in pred_tokens


_OPTION = r"[\(\[【“‘']?(?P<option>[A-Da-d])(?![A-Za-z0-9])[\)\]】”’']?"
_GAP = r"[\s，。、：,.:]*+"


def _alt(words: Sequence[str]) -> str:
    return "(?:" + "|".join(words) + ")"


_SUMMARY = _alt(
    [
        "综上(?:所述)?",
        "总结",
        "综合(?:分析|来看)?",
        "最终",
        "因此",
        "所以",
        "由此可见",
        "可见",
        "总的来说",
        "结论(?:是)?",
        "可以看出",
    ]
)
_ACTION = _alt(
    [
        "答案",
        "选项",
        "选择",
        "结论",
        "应选",
        "倾向(?:选择)?",
        "应当(?:选择)?",
        "推荐(?:选择)?",
        "应该",
        "正确(?:的)?(?:叙述|选项|描述|陈述)",
        "最(?:有)?可能",
    ]
)
_VERB = _alt(
    [
        "为",
        "是",
        "选",
        "应该",
        "应是",
        "应为",
        "可能是",
        "应该是",
        "应该选",
        "会是",
        "选择",
        "就是",
        "是(?:最|更)?(?:合适|合理|正确)(?:的)?",
    ]
)
_CORRECT_WORDS = ("正确", "最佳", "合适", "唯一", "准确", "合理", "首选")
"""Starts of the reference's "correct" words (its last one, 正确答案, starts with 正确)."""
_NEG_WORDS = ("错误", "不正确", "不对", "无效", "不合理", "不符合", "有问题", "不当")
"""Starts of the reference's negation words (their optional suffixes do not change where they start)."""
_NEG = _alt(
    ["错误(?:的|说法|选项|叙述|描述|陈述)?", "不正确(?:的)?", "不对", "无效", "不合理", "不符合", "有问题", "不当"]
)
_NEG_QUESTION = regex.compile(rf"{_NEG}|(?:不是|不属于|不应被选为|不算是|不应该是){_GAP}(?:正确|合理|符合|应选)")
_POSITIVE: list[tuple[regex.Pattern, tuple[str, ...]]] = [
    (regex.compile(rf"{_SUMMARY}{_GAP}{_ACTION}?{_GAP}{_VERB}{_GAP}{_OPTION}"), ()),
    (regex.compile(rf"{_ACTION}{_GAP}{_VERB}{_GAP}{_OPTION}"), ()),
    (regex.compile(rf"{_ACTION}{_GAP}{_VERB}?{_GAP}{_OPTION}{_VERB}?"), _CORRECT_WORDS),
]
"""The positive cascade: each pattern with the words one of which must start after the match (none: no condition)."""
_NEGATIVE: list[tuple[regex.Pattern, tuple[str, ...]]] = [
    (regex.compile(rf"{_SUMMARY}{_GAP}{_NEG}{_GAP}{_VERB}{_GAP}{_OPTION}"), ()),
    (regex.compile(rf"{_ACTION}{_GAP}{_VERB}{_GAP}{_NEG}?{_GAP}{_OPTION}"), ()),
    (regex.compile(rf"{_ACTION}{_GAP}{_VERB}?{_GAP}{_OPTION}"), _NEG_WORDS),
]
"""The wrong-option cascade, in the same form."""
_BARE_OPTION = regex.compile(r"[A-Da-d](?![A-Za-z0-9])")


def extract_option(pred: str, question: str = "", cushion: bool = True) -> str | None:
    """SingleOptionMatch: the option letter (upper case) the answer commits to, or ``None``."""
    cascade = _NEGATIVE if _NEG_QUESTION.search(question) else _POSITIVE
    for pattern, later in cascade:
        end = max(pred.rfind(word) for word in later) if later else len(pred)
        found = pattern.search(pred, 0, end) if end >= 0 else None
        if found:
            return found.group("option").upper()
    if cushion:
        letters = {c.upper() for c in _BARE_OPTION.findall(pred)}
        if len(letters) == 1:
            return letters.pop()
    return None


_META_AUDIO = regex.compile(
    r"音频|这段录音|录音中|背景音|听到了|听到你|我听到|声音中|声音里"
    r"|\bi (?:can )?hear\b|\bthe audio\b|\bin the recording\b|\bin the background\b|\byou sound\b",
    regex.IGNORECASE,
)


def meta_audio_mention(text: str) -> bool:
    """Caption-Trap lexical heuristic [R]: the reply talks *about* the audio (音频 / 听到了 / I hear …)."""
    return _META_AUDIO.search(text) is not None
