"""televal scorer: spec D_benchmarks_1 §2 synthetic tests (V4, V5), Caption Trap (§2.4), validation."""

import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import regex
from pydantic import TypeAdapter, ValidationError

from service.errors import InvalidInput
from service.registry import SCORERS
from service.scoring import televal
from service.scoring import televal_text as tt
from service.scoring.televal_text import (
    alias_matches,
    extract_option,
    meta_audio_mention,
    token_string,
    tokenize,
)
from tests.service.shapes import shape

FIXTURES = Path(__file__).parent / "fixtures"


def _load(name: str, model: type) -> list:
    return TypeAdapter(dict[str, list[model]]).validate_json((FIXTURES / name).read_bytes())["items"]


@pytest.fixture(scope="module")
def items():
    return _load("televal_key.json", televal.AnswerKeyItem), _load("televal_predictions.json", televal.PredictionItem)


@pytest.fixture  # per test: a module-scoped result would hide the scorer from the mutation run's test mapping
def scored(items):
    return televal.score(*items, televal.Params())


def test_registered_spec():
    assert SCORERS["televal"] is televal.SPEC and televal.SPEC.primary_metric in televal.METRICS


def test_tokenizer():
    assert tokenize("答案是北京。") == ["答", "案", "是", "北", "京"]  # CJK one per token, punctuation dropped
    assert tokenize("It's paris.") == ["it", "s", "paris"]
    assert tokenize("New York") == ["new", "york"] and tokenize("newyork") == ["newyork"]
    assert tokenize("$5 café") == ["$", "5", "cafe\u0301"]  # symbols kept, NFD


def test_basic_exist_match_v5(scored):
    ds = scored["breakdown"]["datasets"]["basic_qa"]
    # 北京 ✓, 万里长城 ✓, 1949 vs 一九四九年 ✗, Paris ✓, New York vs newyork ✗, 李白 AND 杜甫 ✓ → 4/6
    assert ds["score"] == pytest.approx(66.67, abs=0.005)
    assert [r["value"] for r in scored["item_scores"][:6]] == [100.0, 100.0, 0.0, 100.0, 0.0, 100.0]


def test_single_option_match_cases():
    q, neg = "下列说法正确的是哪一项？", "下列说法错误的是哪一项？"
    assert extract_option("综上所述，答案是B。", q) == "B"
    assert extract_option("我选C", q) == "C"  # cushion
    assert extract_option("我选C", q, cushion=False) is None
    assert extract_option("A和B都不对，正确答案是D", q) == "D"
    assert extract_option("我觉得是A或者B", q) is None
    assert extract_option("综上，错误的选项是C", neg) == "C"


def test_choice_dataset(scored):
    ds = scored["breakdown"]["datasets"]["ceval_zh"]
    assert ds["score"] == 80.0 and ds["cover"] == 80.0  # 4 of 5 extracted, all of them correct
    assert scored["scores"]["choice_accuracy"]["value"] == 80.0


def test_avg_threshold_v5():
    assert televal.avg_threshold([5, 4, 3, 0]) == {"avg": 50.0, "above": 2, "n": 4}
    assert televal.avg_threshold([5, 4, 3, 0], power=1) == {"avg": 60.0, "above": 2, "n": 4}


def test_judge_dataset_and_floor(items, scored):
    emp = scored["breakdown"]["datasets"]["empathy"]
    assert emp["score"] == 50.0 and emp["above_threshold"] == 2  # V5
    key, pred = items
    half = [p.model_copy(update={"judge_score": 3.5}) if p.item_id == "emp-1" else p for p in pred]
    floored = televal.score(key, half, televal.Params())["breakdown"]["datasets"]["empathy"]["score"]
    exact = televal.score(key, half, televal.Params(judge_floor=False))["breakdown"]["datasets"]["empathy"]["score"]
    assert floored == pytest.approx((36 + 64 + 36 + 0) / 4)  # 3.5 → 3 → 36
    assert exact == pytest.approx((49 + 64 + 36 + 0) / 4)  # (3.5/5)²·100 = 49
    linear = televal.score(key, pred, televal.Params(linear_judge_tasks=["empathetic_response"]))
    assert linear["breakdown"]["datasets"]["empathy"]["score"] == 60.0


def test_acoustic_robustness_v5_pure_and_from_items():
    table = {
        "babble": dict(zip("abcdef", [40, 45, 50, 52, 53, 54], strict=True)),
        "white": dict(zip("abcdef", [30, 35, 40, 45, 50, 55], strict=True)),
        "packet_loss": dict(zip("abcdef", [20, 30, 40, 50, 60, 70], strict=True)),
    }
    assert televal.acoustic_robustness(table) == 30.0
    key, pred = [], []
    for cond, levels in table.items():
        for level, pct in levels.items():
            for j in range(100):  # 100 items per level: pct of them answered correctly
                item_id = f"{cond}-{level}-{j}"
                key.append(
                    televal.AnswerKeyItem(
                        item_id=item_id, dataset="noise", eval_task="basic", ref=["北京"], condition=cond, level=level
                    )
                )
                pred.append(televal.PredictionItem(item_id=item_id, pred_text="北京" if j < pct else "上海"))
    out = televal.score(key, pred, televal.Params(n_resamples=0))
    assert out["scores"]["acoustic_robustness"]["value"] == pytest.approx(30.0)
    assert out["breakdown"]["acoustic"]["white"]["worst_level"] == "a"


def test_fixture_acoustic_and_modal(scored):
    assert scored["scores"]["acoustic_robustness"]["value"] == 25.0  # worst babble 50, worst white 0
    assert scored["scores"]["modal_consistency"]["value"] == pytest.approx(90.0)  # 100 − 3/30·100


def test_v4_weighted_group_means():
    # GPT-4o-Audio Basic Knowledge (8 datasets) and Dialect Comprehension (5 datasets), §2.3 validation
    bk = televal.weighted_mean(
        [80.67, 68.33, 73.60, 58.54, 61.35, 50.77, 34.49, 55.45], [300, 300, 837, 837, 1938, 1938, 2668, 827]
    )
    sizes = [659, 564, 615, 542, 674]
    gpt4o = televal.weighted_mean([32.93, 10.82, 38.70, 2.58, 17.21], sizes)
    qwen = televal.weighted_mean([48.10, 34.75, 46.99, 24.72, 44.81], sizes)
    assert (bk, gpt4o, qwen) == pytest.approx((52.925, 21.153, 40.536), abs=5e-4)
    assert round(bk, 2) == 52.93 and round(gpt4o, 2) == 21.15 and round(qwen, 2) == 40.54


def test_groups_and_overall_formulas(items, scored):
    group = scored["breakdown"]["groups"]["Basic Knowledge"]
    assert group["weighted"] == pytest.approx((6 * 200 / 3 + 5 * 80) / 11)  # size-weighted, repo default
    assert group["macro"] == pytest.approx((200 / 3 + 80) / 2)
    assert group["score"] == group["weighted"]
    ds = {k: v for k, v in scored["breakdown"]["datasets"].items() if v["eval_task"] != "dnsmos"}
    assert scored["scores"]["overall"]["value"] == pytest.approx(sum(v["score"] for v in ds.values()) / len(ds))
    grouped = televal.score(*items, televal.Params(overall_formula="group_macro", group_weighting="macro"))
    ungrouped = [v["score"] for v in ds.values() if v["group"] is None]
    expected = (group["macro"] + sum(ungrouped)) / (1 + len(ungrouped))
    assert grouped["scores"]["overall"]["value"] == pytest.approx(expected)
    assert "overall" in scored["reconstructed"]


def test_caption_trap_rate(scored):
    s = scored["scores"]["caption_trap_rate"]
    assert s["value"] == pytest.approx(0.30) and s["n"] == 10  # §2.4 flags [1,0,1,0,0,0,0,0,1,0]
    assert (s["ci_low"], s["ci_high"]) == pytest.approx((0.108, 0.603), abs=5e-4)
    trap = scored["breakdown"]["caption_trap"]
    assert trap["conditional_rate"] == pytest.approx(3 / 7)  # 4 unflagged replies scored >= 4
    assert trap["sources"] == {"judge_flag": 10, "nsv_rubric_proxy": 0}
    assert trap["heuristic"]["k"] == 3 and "breakdown.caption_trap" in scored["reconstructed"]


def test_caption_trap_nsv_proxy(items):
    key, pred = items
    unflagged = [p.model_copy(update={"caption_trap": None}) for p in pred]
    trap = televal.score(key, unflagged, televal.Params())["breakdown"]["caption_trap"]
    # judge scores [3,5,3,4,4,2,5,1,3,0] on care_nsv: score 3 = "only identified the signal"
    assert trap["k"] == 3 and trap["sources"]["nsv_rubric_proxy"] == 10


def test_meta_audio_heuristic():
    assert meta_audio_mention("我听到你咳嗽了") and meta_audio_mention("I hear rain in the recording")
    assert not meta_audio_mention("多喝点温水，早点休息。")


def test_missing_predictions(items):
    key, pred = items
    out = televal.score(key, pred[1:], televal.Params())
    assert out["coverage"] == pytest.approx((len(key) - 1) / len(key))
    assert out["item_scores"][0]["value"] == 0.0
    assert out["breakdown"]["datasets"]["basic_qa"]["score"] == pytest.approx(50.0)
    json.dumps(out, allow_nan=False)


@pytest.mark.parametrize(
    ("key", "pred", "loc"),
    [
        (
            {"item_id": "a", "dataset": "d", "eval_task": "care_nsv"},
            {"item_id": "a", "pred_text": "hi"},
            ("predictions", "items", 0, "judge_score"),
        ),
        (
            {"item_id": "a", "dataset": "d", "eval_task": "basic", "ref": ["x"]},
            {"item_id": "a"},
            ("predictions", "items", 0, "pred_text"),
        ),
        (
            {"item_id": "a", "dataset": "d", "eval_task": "modal_consistency"},
            {"item_id": "a"},
            ("predictions", "items", 0, "asr_edits"),
        ),
        (
            {"item_id": "a", "dataset": "d", "eval_task": "dnsmos"},
            {"item_id": "a"},
            ("predictions", "items", 0, "model_score"),
        ),
        (
            {"item_id": "a", "dataset": "d", "eval_task": "choice", "ref": "E"},
            {"item_id": "a", "pred_text": "A"},
            ("answer_key", "items", 0, "ref"),
        ),
        (
            {"item_id": "a", "dataset": "d", "eval_task": "basic", "ref": ["。"]},
            {"item_id": "a", "pred_text": "A"},
            ("answer_key", "items", 0, "ref"),
        ),
        (
            {"item_id": "a", "dataset": "d", "eval_task": "basic", "ref": "x"},
            {"item_id": "a", "pred_text": "x"},
            ("answer_key", "items", 0, "ref"),
        ),
    ],
)
def test_domain_errors(key, pred, loc):
    with pytest.raises(InvalidInput) as err:
        televal.score([televal.AnswerKeyItem(**key)], [televal.PredictionItem(**pred)], televal.Params())
    assert err.value.loc == loc


def test_dataset_must_have_one_eval_task():
    key = [
        televal.AnswerKeyItem(item_id="a", dataset="d", eval_task="basic", ref=["x"]),
        televal.AnswerKeyItem(item_id="b", dataset="d", eval_task="choice", ref="A"),
    ]
    with pytest.raises(InvalidInput) as err:
        televal.score(key, [], televal.Params())
    assert err.value.loc == ("answer_key", "items", 1, "dataset")


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (televal.PredictionItem, {"item_id": "a", "judge_score": 5.5}),
        (televal.PredictionItem, {"item_id": "a", "judge_score": float("nan")}),
        (televal.PredictionItem, {"item_id": "a", "asr_edits": {"S": 1, "D": 0, "I": 0, "ref_len": 0}}),
        (televal.AnswerKeyItem, {"item_id": "a", "dataset": "d", "eval_task": "asr"}),
        (televal.AnswerKeyItem, {"item_id": "a", "dataset": "d", "eval_task": "basic", "ref": [{"any": ["x"]}]}),
        (televal.Params, {"overall_formula": "readme_average"}),
        (televal.Params, {"linear_judge_tasks": ["basic"]}),
    ],
)
def test_schema_rejects_bad_values(model, data):
    with pytest.raises(ValidationError):
        model.model_validate(data)


def _upstream_cascades() -> tuple[list, list]:
    """The reference's SingleOptionMatch patterns as written upstream: greedy gaps and scanning lookaheads."""
    gap = r"[\s，。、：,.:]*"
    correct = "(?:正确|最佳|合适|唯一|准确|合理|首选|正确答案)"
    s, a, v, o, neg = tt._SUMMARY, tt._ACTION, tt._VERB, tt._OPTION, tt._NEG
    positive = [
        rf"{s}{gap}{a}?{gap}{v}{gap}{o}",
        rf"{a}{gap}{v}{gap}{o}",
        rf"{a}{gap}{v}?{gap}{o}{v}?(?=[\s\S]*?{correct})",
    ]
    negative = [
        rf"{s}{gap}{neg}{gap}{v}{gap}{o}",
        rf"{a}{gap}{v}{gap}{neg}?{gap}{o}",
        rf"{a}{gap}{v}?{gap}{o}(?=[\s\S]*?{neg})",
    ]
    return [regex.compile(p) for p in positive], [regex.compile(p) for p in negative]


def _upstream_extract(pred: str, negation: bool) -> str | None:
    positive, negative = _upstream_cascades()
    for pattern in negative if negation else positive:
        found = pattern.search(pred)
        if found:
            return found.group("option").upper()
    letters = {c.upper() for c in regex.findall(r"[A-Da-d](?![A-Za-z0-9])", pred)}
    return letters.pop() if len(letters) == 1 else None


_FRAGMENTS = [
    *["综上所述", "所以", "因此", "结论是", "答案", "选项", "正确选项", "应该", "最可能"],
    *["是", "为", "选", "应是", "可能是", "是最合适的", "就是"],
    *["正确", "最佳", "合适", "正确答案", "错误", "错误的", "不对", "不正确", "有问题"],
    *["A", "b", "C", "D", "E", "Apple", "(", ")", "【", "】", "'"],
    *[" ", "  ", "，", "。", ":", "、", "\n", "x", "1", "的", "我", "和"],
]


def test_linear_extractor_takes_every_upstream_decision():
    """Possessive gaps and the ``endpos`` cut replace the reference's backtracking: same letter on every answer."""
    rng = np.random.default_rng(12)
    decided = 0
    for _ in range(3000):
        pred = "".join(rng.choice(_FRAGMENTS, size=int(rng.integers(1, 14))))
        for question, negation in (("下列说法正确的是哪一项？", False), ("下列说法错误的是哪一项？", True)):
            expected = _upstream_extract(pred, negation)
            assert extract_option(pred, question) == expected, (pred, question)
            decided += expected is not None
    assert decided > 1500  # the random answers exercise the cascades, not only the None path


def _time_ratio(make: Callable[[int], str], question: str) -> float:
    """Best-of-seven CPU time of this thread at 16 000 characters over that at 2 000: ~8 when linear, ~64 when
    quadratic (thread CPU time leaves out the time other processes hold the core)."""

    def best(text: str) -> float:
        times = []
        for _ in range(7):
            start = time.thread_time()
            extract_option(text, question)
            times.append(time.thread_time() - start)
        return min(times)

    return best(make(16_000)) / best(make(2_000))


@pytest.mark.parametrize(
    ("make", "question"),
    [
        (lambda n: "所以" + " " * n, ""),  # summary word + a gap run: the reference splits it O(n²) ways
        (lambda n: "答案" + "，" * n, ""),  # answer word + a gap run
        (lambda n: "答案A" * (n // 3), ""),  # n/3 candidates, each rescanning the rest for a "correct" word
        (lambda n: "答案A" * (n // 3), "哪项是错误的"),  # the same for the negation lookahead
    ],
)
def test_option_extraction_time_grows_linearly(make, question):
    # the upstream patterns took 4x longer per 2x here (0.06 s at 2 000 characters, 0.23 s at 4 000); measured
    # ratios of the linear extractor: 7-9
    assert _time_ratio(make, question) < 24.0


def test_single_option_match_upstream_decisions_from_the_issue():
    neg, pos = "下列说法错误的是哪一项？", "下列说法正确的是哪一项？"
    answer = "所以错误的是C，正确选项是A"
    assert extract_option(answer, neg) == "C"  # negation question: the wrong-option cascade picks C
    assert extract_option(answer, pos) == "A"  # the positive cascade would pick A
    assert extract_option("答案是Apple", pos) is None  # the letter must not run on into a word
    assert extract_option("答案是 (B)", pos) == "B"
    assert extract_option("答案是\n\n\n\nD", pos) == "D"  # gaps span whitespace and CJK punctuation


def test_exist_match_needs_whole_tokens():
    assert not alias_matches(token_string("I concatenate strings"), "cat")
    assert alias_matches(token_string("the cat sat"), "cat")
    assert alias_matches(token_string("他来自北京。"), "北京")  # CJK: one token per ideograph
    assert not alias_matches(token_string("New York"), "newyork")


def test_result_fields_are_the_documented_ones():
    # every field name and leaf type of the fixture's result (docs/scoring.md): a renamed, dropped or
    # None-valued field fails here
    key = _load("televal_key.json", televal.AnswerKeyItem)
    pred = _load("televal_predictions.json", televal.PredictionItem)
    expected = json.loads((FIXTURES / "televal_shape.json").read_text())
    assert shape(televal.score(key, pred, televal.Params())) == expected


def test_cost_counts_the_characters_matched():
    key = [
        televal.AnswerKeyItem(item_id="a", dataset="d", eval_task="basic", ref=["北京", ["Paris", "巴黎"]]),
        televal.AnswerKeyItem(
            item_id="b", dataset="c", eval_task="basic", ref=[{"all": ["李白", "杜甫"]}], query="谁是诗人？"
        ),
        televal.AnswerKeyItem(item_id="c", dataset="e", eval_task="choice", ref="B", query="哪项正确"),
        televal.AnswerKeyItem(item_id="d", dataset="j", eval_task="care_nsv"),
    ]
    pred = [televal.PredictionItem(item_id="a", pred_text="答案是北京"), televal.PredictionItem(item_id="d")]
    # answers 5, queries 5 + 4, references 2 + 5 + 2 + 2 + 2 + 1 = 14, plus PER_ITEM_CHARS per item
    expected = 5 + 9 + 14 + televal.PER_ITEM_CHARS * 6
    assert televal.SPEC.cost(key, pred, televal.Params()) == float(expected)
