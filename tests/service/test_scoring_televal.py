"""televal scorer: the synthetic checks, the Caption Trap and validation (docs/scoring.md, TELEVAL)."""

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
    # GPT-4o-Audio Basic Knowledge (8 datasets) and Dialect Comprehension (5 datasets), the published rows
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
    assert s["value"] == pytest.approx(0.30) and s["n"] == 10  # Caption Trap flags [1,0,1,0,0,0,0,0,1,0]
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


@pytest.mark.slow
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


# --- hand-built keys: every number below is computed by hand from the formulas in the module docstring ----------

Z95 = 1.959963984540054  # the two-sided 95 % normal quantile


def _key(item_id: str, dataset: str, eval_task: str, **fields) -> televal.AnswerKeyItem:
    return televal.AnswerKeyItem(item_id=item_id, dataset=dataset, eval_task=eval_task, **fields)


def _pred(item_id: str, **fields) -> televal.PredictionItem:
    return televal.PredictionItem(item_id=item_id, **fields)


def _wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson (1927) score interval, written out; 0 and 1 at the ends."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5)
    return (0.0 if k == 0 else centre - half, 1.0 if k == n else centre + half)


def _score(key: list, pred: list, **params) -> dict:
    return televal.score(key, pred, televal.Params(**params))


def test_avg_threshold_floors_by_default_and_counts_strictly_above_the_threshold():
    assert televal.avg_threshold([3.9]) == {"avg": 36.0, "above": 0, "n": 1}  # ⌊3.9⌋ = 3 → 36
    unfloored = televal.avg_threshold([3.9], floor=False)  # (3.9/5)²·100 = 60.84 > 60 (and < 61)
    assert unfloored["avg"] == pytest.approx(60.84, rel=1e-12, abs=0) and unfloored["above"] == 1
    assert televal.avg_threshold([4, 4], threshold=64.0)["above"] == 0  # r = 64 is not above 64
    assert televal.avg_threshold([4, 4], threshold=63.99)["above"] == 2
    assert televal.avg_threshold([5, 4], power=3)["avg"] == pytest.approx((100 + 51.2) / 2, rel=1e-12, abs=0)
    assert televal.rescale_judge(np.array([2.5, 5.0]), 1, False).tolist() == pytest.approx([50.0, 100.0])
    assert televal.rescale_judge(np.array([2.5]), 1, True).tolist() == pytest.approx([40.0])
    for power in (1, 2, 3, 30):  # a perfect score is 100 at any power (integer scores are not raised as integers)
        assert televal.avg_threshold([5, 5], power=power, floor=False)["avg"] == pytest.approx(100.0, rel=1e-12)


def test_weighted_mean_divides_by_the_total_size():
    assert televal.weighted_mean([10.0, 40.0], [3, 1]) == pytest.approx(17.5, rel=1e-12, abs=0)
    assert televal.acoustic_robustness({"a": {"x": 70.0, "y": 10.0}}) == 10.0


def test_dataset_signature_covers_group_and_aspect():
    for extra in ({"group": "G"}, {"aspect": "IA"}):
        key = [
            _key("a", "d", "care_nsv", aspect="RCF"),
            _key("b", "e", "care_age"),  # another dataset may differ
            _key("c", "d", "care_nsv", **({"aspect": "RCF"} | extra)),
        ]
        with pytest.raises(InvalidInput) as err:
            _score(key, [])
        assert err.value.loc == ("answer_key", "items", 2, "dataset")


@pytest.mark.parametrize(
    "ref",
    [[], ["北京", ["巴黎", "。"]], [{"all": ["李白", "！"]}], ["、"]],
)
def test_basic_aliases_must_all_have_tokens(ref):
    key = [_key("a", "d", "basic", ref=["x"]), _key("b", "d", "basic", ref=ref)]
    with pytest.raises(InvalidInput) as err:
        _score(key, [])
    assert err.value.loc == ("answer_key", "items", 1, "ref")


@pytest.mark.parametrize("ref", ["AB", "", "E", "X", None, ["A"]])
def test_choice_ref_must_be_one_letter_a_to_d(ref):
    key = [_key("a", "d", "choice", ref="A"), _key("b", "d", "choice", ref=ref)]
    with pytest.raises(InvalidInput) as err:
        _score(key, [])
    assert err.value.loc == ("answer_key", "items", 1, "ref")


def test_exist_match_alternatives_any_of_and_all_of():
    key = [
        _key("a", "d", "basic", ref=[["巴黎", "Paris"]]),
        _key("b", "d", "basic", ref=[{"all": ["李白", "杜甫"]}]),
        _key("c", "d", "basic", ref=["上海", {"all": ["李白", "杜甫"]}]),
        _key("d", "d", "basic", ref=[["巴黎", "Paris"], "北京"]),
        _key("e", "d", "basic", ref=["上海", "北京"]),
    ]
    pred = [
        _pred("a", pred_text="It is PARIS."),  # second alias of the nested any-of
        _pred("b", pred_text="只有李白"),  # all-of needs both
        _pred("c", pred_text="杜甫和李白"),  # second alternative, any order of the all-of
        _pred("d", pred_text="北京"),  # a later plain alias after a failing any-of
        _pred("e", pred_text="南京"),
    ]
    out = _score(key, pred)
    assert [r["value"] for r in out["item_scores"]] == [100.0, 0.0, 100.0, 100.0, 0.0]
    assert out["scores"]["basic_match"]["value"] == 60.0


def test_choice_items_lower_case_ref_query_and_cushion():
    key = [
        _key("a", "c", "choice", ref="b"),  # a lower-case gold letter
        _key("b", "c", "choice", ref="A"),  # no query: the positive cascade
        _key("c", "c", "choice", ref="A", query="下列说法错误的是哪一项？"),
        _key("d", "c", "choice", ref="D"),
    ]
    pred = [
        _pred("a", pred_text="答案是B"),
        _pred("b", pred_text="所以错误的是C，正确选项是A"),
        _pred("c", pred_text="所以错误的是C，正确选项是A"),  # negation cascade: C
        _pred("d", pred_text="我选D"),  # only the cushion extracts it
    ]
    out = _score(key, pred)
    assert [r["value"] for r in out["item_scores"]] == [100.0, 100.0, 0.0, 100.0]
    assert out["breakdown"]["datasets"]["c"]["cover"] == 100.0
    strict = _score(key, pred, choice_cushion=False)
    assert [r["value"] for r in strict["item_scores"]] == [100.0, 100.0, 0.0, 0.0]
    assert strict["breakdown"]["datasets"]["c"]["cover"] == 75.0
    assert strict["scores"]["choice_cover"]["value"] == 75.0 and strict["scores"]["choice_cover"]["n"] == 4
    assert strict["scores"]["choice_accuracy"]["value"] == 50.0


def test_judge_items_rescaled_per_task_with_floor_and_threshold():
    key = [
        *(_key(f"e{j}", "emp", "empathetic_response") for j in range(3)),
        _key("a0", "age", "care_age"),
        _key("a1", "age", "care_age"),
        _key("h0", "like", "human_likeness"),
    ]
    pred = [
        _pred("e0", judge_score=4.6),
        _pred("e1", judge_score=3.2),  # e2 and h0 unanswered: 0
        _pred("a0", judge_score=2.0),
        _pred("a1", judge_score=5.0),
    ]
    out = _score(key, pred, linear_judge_tasks=["care_age"], above_threshold=40.0)
    # floored 4, 3 → (4/5)²·100 = 64, 36; care_age linear 2, 5 → 40, 100
    assert [r["value"] for r in out["item_scores"]] == pytest.approx([64.0, 36.0, 0.0, 40.0, 100.0, 0.0])
    emp, age, like = (out["breakdown"]["datasets"][d] for d in ("emp", "age", "like"))
    assert emp["score"] == pytest.approx(100 / 3, rel=1e-12, abs=0)
    assert (emp["above_threshold"], emp["judge_score_mean"], emp["n"], emp["n_predicted"]) == (1, 3.5, 3, 2)
    assert (age["score"], age["above_threshold"], age["judge_score_mean"]) == (70.0, 1, 3.5)
    assert (like["score"], like["judge_score_mean"], like["n_predicted"]) == (0.0, None, 0)
    assert out["scores"]["judge_avg"]["value"] == pytest.approx(240 / 6, rel=1e-12, abs=0)
    above = out["scores"]["judge_above60"]  # r > 40: 64 and 100 (care_age's 40 is not above)
    assert above["value"] == pytest.approx(100 * 2 / 6, rel=1e-12, abs=0) and above["n"] == 6
    assert (above["ci_low"], above["ci_high"]) == pytest.approx(tuple(100 * x for x in _wilson(2, 6)), rel=1e-9)
    exact = _score(key, pred, judge_floor=False)  # (4.6/5)²·100 = 84.64, (3.2/5)²·100 = 40.96, 2 → 16
    assert [r["value"] for r in exact["item_scores"]][:4] == pytest.approx([84.64, 40.96, 0.0, 16.0], rel=1e-12)
    emp = exact["breakdown"]["datasets"]["emp"]
    assert emp["judge_score_mean"] == pytest.approx(3.9, rel=1e-12) and emp["above_threshold"] == 1  # > 60
    assert exact["breakdown"]["judge_floor"] is False


def test_judge_bootstrap_intervals_follow_seed_confidence_and_n_resamples():
    key = [_key(f"a{j}", "age", "care_age") for j in range(2)] + [_key("c", "const", "care_nsv")]
    pred = [_pred("a0", judge_score=2.0), _pred("a1", judge_score=5.0), _pred("c", judge_score=4.0)]
    out = _score(key, pred)
    age, const = out["breakdown"]["datasets"]["age"], out["breakdown"]["datasets"]["const"]
    # two items 16 and 100: a replicate is 16, 58 or 100 with probabilities 1/4, 1/2, 1/4, so the 2.5 % and
    # 97.5 % quantiles of 1000 replicates are the extremes
    assert (age["ci_low"], age["score"], age["ci_high"]) == pytest.approx((16.0, 58.0, 100.0), rel=1e-12, abs=0)
    assert (
        const["ci_low"] == const["score"] == const["ci_high"] == pytest.approx(64.0, rel=1e-12, abs=0)
    )  # one value: no spread
    again = _score(key, pred)
    assert again["scores"]["judge_avg"] == out["scores"]["judge_avg"]  # seeded
    wide, narrow = (_score(key, pred, confidence=c)["scores"]["judge_avg"] for c in (0.95, 0.6))
    assert wide["ci_low"] < narrow["ci_low"] <= narrow["value"] <= narrow["ci_high"] < wide["ci_high"]
    assert narrow["value"] == pytest.approx(180 / 3, rel=1e-12, abs=0)
    above = _score(key, pred, confidence=0.6)["scores"]["judge_above60"]  # 64 and 100 are above 60
    low, high = _wilson(2, 3, 0.8416212335729143)  # z of a two-sided 60 % level
    assert (above["value"], above["ci_low"], above["ci_high"]) == pytest.approx((200 / 3, 100 * low, 100 * high))
    off = _score(key, pred, n_resamples=0)
    assert (off["breakdown"]["datasets"]["age"]["ci_low"], off["breakdown"]["datasets"]["age"]["ci_high"]) == (
        None,
        None,
    )
    assert off["scores"]["judge_avg"]["ci_low"] is None and off["scores"]["judge_avg"]["ci_high"] is None
    assert off["breakdown"]["bootstrap"] == {"seed": 0, "n_resamples": 0}
    seeded = _score(key, pred, seed=7, n_resamples=20)
    assert seeded["breakdown"]["bootstrap"] == {"seed": 7, "n_resamples": 20}


def test_bootstrap_intervals_are_reproducible_for_a_seed():
    key = [_key(f"e{j}", "emp", "empathetic_response") for j in range(12)]
    pred = [_pred(f"e{j}", judge_score=float(j % 6)) for j in range(12)]  # r = 0, 4, 16, 36, 64, 100 twice

    def intervals(seed: int) -> tuple:
        out = _score(key, pred, seed=seed)
        ds, avg = out["breakdown"]["datasets"]["emp"], out["scores"]["judge_avg"]
        return ds["ci_low"], ds["ci_high"], avg["ci_low"], avg["ci_high"]

    first = intervals(3)
    assert intervals(3) == first
    assert first[0] < 220 / 6 < first[1]
    assert intervals(4) != first  # another seed draws other resamples


def test_counted_datasets_and_metrics_carry_wilson_intervals():
    key = [_key(f"b{j}", "b", "basic", ref=["北京"]) for j in range(5)]
    key += [_key(f"c{j}", "c", "choice", ref="A") for j in range(4)]
    pred = [_pred(f"b{j}", pred_text="北京" if j < 3 else "上海") for j in range(5)]
    pred += [_pred("c0", pred_text="答案是A"), _pred("c1", pred_text="答案是B"), _pred("c2", pred_text="嗯")]
    z90 = 1.6448536269514722
    for confidence, z in ((0.95, Z95), (0.9, z90)):
        out = _score(key, pred, confidence=confidence)
        b, c = out["breakdown"]["datasets"]["b"], out["breakdown"]["datasets"]["c"]
        assert (b["score"], b["n"], b["n_predicted"]) == (60.0, 5, 5)
        assert (b["ci_low"], b["ci_high"]) == pytest.approx(tuple(100 * x for x in _wilson(3, 5, z)), rel=1e-9)
        assert (c["score"], c["cover"], c["n_predicted"]) == (25.0, 50.0, 3)
        assert (c["ci_low"], c["ci_high"]) == pytest.approx(tuple(100 * x for x in _wilson(1, 4, z)), rel=1e-9)
        scores = out["scores"]
        assert scores["basic_match"] == pytest.approx(
            {"value": 60.0, "ci_low": 100 * _wilson(3, 5, z)[0], "ci_high": 100 * _wilson(3, 5, z)[1], "n": 5},
            rel=1e-9,
        )
        assert scores["choice_accuracy"] == pytest.approx(
            {"value": 25.0, "ci_low": 100 * _wilson(1, 4, z)[0], "ci_high": 100 * _wilson(1, 4, z)[1], "n": 4},
            rel=1e-9,
        )
        assert scores["choice_cover"] == pytest.approx(
            {"value": 50.0, "ci_low": 100 * _wilson(2, 4, z)[0], "ci_high": 100 * _wilson(2, 4, z)[1], "n": 4},
            rel=1e-9,
        )
        assert "judge_avg" not in scores and "modal_consistency" not in scores
    assert out["coverage"] == pytest.approx(8 / 9, rel=1e-12, abs=0)


def test_modal_consistency_is_100_minus_corpus_wer_scaled_by_the_answered_share():
    key = [_key(f"m{j}", "m", "modal_consistency") for j in range(3)]
    pred = [
        _pred("m0", asr_edits={"S": 1, "D": 1, "I": 0, "ref_len": 10}),  # item: 100 − 20 = 80
        _pred("m1", asr_edits={"S": 0, "D": 0, "I": 3, "ref_len": 20}),  # item: 100 − 15 = 85
    ]
    out = _score(key, pred)
    assert [r["value"] for r in out["item_scores"]] == pytest.approx([80.0, 85.0, 0.0], rel=1e-12)
    expected = (100 - 100 * 5 / 30) * 2 / 3  # corpus WER 5/30 over the answered items, 2 of 3 answered
    ds = out["breakdown"]["datasets"]["m"]
    assert ds["score"] == pytest.approx(expected, rel=1e-12, abs=0) and ds["ci_low"] is ds["ci_high"] is None
    assert out["scores"]["modal_consistency"] == pytest.approx(
        {"value": expected, "ci_low": None, "ci_high": None, "n": 3}
    )
    nothing = _score(key, [])  # no answered item: 0, not a division by zero
    assert nothing["breakdown"]["datasets"]["m"]["score"] == 0.0
    assert nothing["scores"]["modal_consistency"]["value"] == 0.0
    # more insertions than reference words: below zero, as in the repo
    worse = _score(key[:1], [_pred("m0", asr_edits={"S": 0, "D": 0, "I": 30, "ref_len": 10})])
    assert worse["scores"]["modal_consistency"]["value"] == pytest.approx(-200.0, rel=1e-12)


def test_external_scores_are_averaged_as_given_and_kept_out_of_aggregates():
    key = [
        _key("x0", "dns", "dnsmos", group="G", aspect="IA", condition="babble", level="l"),
        _key("x1", "dns", "dnsmos", group="G", aspect="IA", condition="babble", level="l"),
        _key("y0", "emo", "empathetic_response_audio"),
        _key("b0", "b", "basic", ref=["北京"], group="G", aspect="RCF"),
    ]
    pred = [
        _pred("x0", model_score=3.0),
        _pred("x1", model_score=4.5),
        _pred("y0", model_score=-0.25),
        _pred("b0", pred_text="北京"),
    ]
    out = _score(key, pred)
    assert [r["value"] for r in out["item_scores"]] == [3.0, 4.5, -0.25, 100.0]
    dns = out["breakdown"]["datasets"]["dns"]
    assert dns["score"] == 3.75 and dns["ci_low"] <= 3.75 <= dns["ci_high"] and "above_threshold" not in dns
    assert out["breakdown"]["datasets"]["emo"]["score"] == -0.25
    assert out["scores"]["overall"] == {"value": 100.0, "ci_low": None, "ci_high": None, "n": 1}
    assert out["breakdown"]["groups"]["G"]["datasets"] == ["b"] and out["breakdown"]["groups"]["G"]["n"] == 1
    assert "ia" not in out["scores"] and out["scores"]["rcf"]["value"] == 100.0
    assert out["breakdown"]["acoustic"] == {} and "acoustic_robustness" not in out["scores"]
    only_external = _score(key[:3], pred[:3])
    assert "overall" not in only_external["scores"] and only_external["reconstructed"] == ["breakdown.caption_trap"]
    assert only_external["breakdown"]["groups"] == {}


def _aggregate_key() -> tuple[list, list]:
    key = [
        *(_key(f"p{j}", "b1", "basic", ref=["北京"], group="G", aspect="RCF") for j in range(2)),
        *(_key(f"q{j}", "b2", "basic", ref=["北京"], group="G", aspect="RCF") for j in range(3)),
        _key("j0", "judge", "care_age", aspect="IA"),
        _key("u0", "loose", "basic", ref=["北京"]),
    ]
    pred = [_pred(f"p{j}", pred_text="北京" if j == 0 else "上海") for j in range(2)]  # b1: 50
    pred += [_pred(f"q{j}", pred_text="北京") for j in range(3)]  # b2: 100
    pred += [_pred("j0", judge_score=4.0), _pred("u0", pred_text="上海")]  # judge: 64, loose: 0
    return key, pred


def test_group_scores_are_size_weighted_or_macro():
    key, pred = _aggregate_key()
    for weighting, expected in (("weighted", (50 * 2 + 100 * 3) / 5), ("macro", 75.0)):
        group = _score(key, pred, group_weighting=weighting)["breakdown"]["groups"]
        assert list(group) == ["G"]  # ungrouped datasets form no group
        assert group["G"] == {
            "score": pytest.approx(expected, rel=1e-12, abs=0),
            "weighted": pytest.approx(80.0, rel=1e-12, abs=0),
            "macro": 75.0,
            "weighting": weighting,
            "n": 5,
            "datasets": ["b1", "b2"],
        }


@pytest.mark.parametrize(
    ("formula", "weighting", "expected"),
    [
        ("dataset_macro", "weighted", (50 + 100 + 64 + 0) / 4),
        ("dataset_weighted", "weighted", (50 * 2 + 100 * 3 + 64 + 0) / 7),
        ("group_macro", "weighted", (80 + 64 + 0) / 3),  # group G by size: 80; ungrouped datasets on their own
        ("group_macro", "macro", (75 + 64 + 0) / 3),
    ],
)
def test_overall_formulas_and_aspect_scores(formula, weighting, expected):
    key, pred = _aggregate_key()
    out = _score(key, pred, overall_formula=formula, group_weighting=weighting)
    assert out["scores"]["overall"]["value"] == pytest.approx(expected, rel=1e-12, abs=0)
    assert out["scores"]["overall"]["n"] == 4
    assert out["breakdown"]["overall_formula"] == f"reconstructed-v1:{formula}"
    assert out["scores"]["rcf"] == {"value": 75.0, "ci_low": None, "ci_high": None, "n": 2}  # b1, b2 (loose: none)
    assert out["scores"]["ia"] == {
        "value": pytest.approx(64.0, rel=1e-12, abs=0),
        "ci_low": None,
        "ci_high": None,
        "n": 1,
    }
    assert out["reconstructed"] == ["overall", "rcf", "ia", "breakdown.caption_trap"]  # no cue items


def test_acoustic_table_uses_counted_and_judge_items_per_level():
    key = [
        _key("w0", "nb", "basic", ref=["北京"], condition="white"),  # no level: level ""
        _key("w1", "nb", "basic", ref=["北京"], condition="white", level="x"),
        _key("w2", "nj", "care_age", condition="white", level="x"),
        _key("w3", "nm", "modal_consistency", condition="white", level="y"),  # not a robustness item
        _key("w4", "nd", "dnsmos", condition="white", level="y"),  # not a robustness item
        _key("b0", "nb", "basic", ref=["北京"], condition="babble", level="z"),
        _key("o0", "nb", "basic", ref=["北京"]),  # no condition
    ]
    pred = [
        _pred("w0", pred_text="北京"),
        _pred("w1", pred_text="上海"),
        _pred("w2", judge_score=5.0),
        _pred("w3", asr_edits={"S": 9, "D": 0, "I": 0, "ref_len": 10}),
        _pred("w4", model_score=-5.0),
        _pred("b0", pred_text="北京"),
        _pred("o0", pred_text="上海"),
    ]
    out = _score(key, pred)
    assert out["breakdown"]["acoustic"] == {
        "white": {
            "levels": {"": {"n": 1, "score": 100.0}, "x": {"n": 2, "score": 50.0}},
            "worst_level": "x",
            "worst_score": 50.0,
        },
        "babble": {"levels": {"z": {"n": 1, "score": 100.0}}, "worst_level": "z", "worst_score": 100.0},
    }
    assert out["scores"]["acoustic_robustness"] == {"value": 75.0, "ci_low": None, "ci_high": None, "n": 4}


def _trap_key() -> tuple[list, list]:
    key = [
        _key("c1", "nsv", "care_nsv", cue_type="nsv"),
        _key("c2", "nsv", "care_nsv", cue_type="nsv"),
        _key("c6", "nsv", "care_nsv", cue_type="none"),
        _key("c7", "nsv", "care_nsv", cue_type="nsv"),
        _key("c3", "emp", "empathetic_response", cue_type="emotion"),
        _key("c4", "emp", "empathetic_response", cue_type="emotion"),
        _key("c8", "age", "care_age", cue_type="age"),
        _key("c5", "b", "basic", ref=["北京"], cue_type="scene"),
        _key("c9", "b", "basic", ref=["北京"], cue_type="dialect"),
        _key("c10", "b", "basic", ref=["北京"], cue_type="dialect"),
        _key("n1", "b", "basic", ref=["北京"]),
    ]
    pred = [
        _pred("c1", judge_score=3.0, pred_text="我听到你咳嗽了"),  # NSV proxy: score 3 → trap
        _pred("c2", judge_score=4.0),  # NSV proxy: no trap, appropriate (≥ 4); no text
        _pred("c6", judge_score=3.0, caption_trap=True, pred_text="我听到了"),  # no cue: ignored
        _pred("c3", judge_score=5.0, caption_trap=False, pred_text="好的"),  # appropriate
        _pred("c4", judge_score=2.0, caption_trap=True, pred_text="The audio sounds sad"),
        _pred("c8", judge_score=3.0, caption_trap=False, pred_text="嗯"),  # not a trap, not appropriate
        _pred("c5", pred_text="北京"),  # no flag, not care_nsv: not rated
        _pred("c9", pred_text="北京", caption_trap=True),
        _pred("c10", pred_text="北京", caption_trap=False),  # no judge score: not appropriate
        _pred("n1", pred_text="我听到了", caption_trap=True),  # no cue_type: ignored
    ]
    return key, pred


def test_caption_trap_counts_flags_proxy_and_appropriate_replies_by_cue():
    key, pred = _trap_key()
    out = _score(key, pred)
    trap = out["breakdown"]["caption_trap"]
    low, high = _wilson(3, 7)
    assert trap == {
        "protocol": "reconstructed-v1",
        "n": 7,
        "k": 3,
        "rate": pytest.approx(3 / 7, rel=1e-12, abs=0),
        "ci_low": pytest.approx(low, rel=1e-9),
        "ci_high": pytest.approx(high, rel=1e-9),
        "by_cue_type": {
            "emotion": {"n": 2, "k": 1, "rate": 0.5},
            "age": {"n": 1, "k": 0, "rate": 0.0},
            "nsv": {"n": 2, "k": 1, "rate": 0.5},
            "dialect": {"n": 2, "k": 1, "rate": 0.5},
        },
        "sources": {"judge_flag": 5, "nsv_rubric_proxy": 2},
        "appropriate": 2,
        "conditional_rate": pytest.approx(3 / 5, rel=1e-12, abs=0),
        "heuristic": {"n": 7, "k": 2, "rate": pytest.approx(2 / 7, rel=1e-12, abs=0)},
    }
    assert list(trap["by_cue_type"]) == ["emotion", "age", "nsv", "dialect"]  # CUE_TYPES order
    assert out["scores"]["caption_trap_rate"] == pytest.approx({"value": 3 / 7, "ci_low": low, "ci_high": high, "n": 7})
    assert out["reconstructed"] == ["overall", "caption_trap_rate", "breakdown.caption_trap"]  # no aspects


def test_caption_trap_without_rated_items_or_traps():
    key = [_key("a", "age", "care_age", cue_type="age"), _key("b", "age", "care_age", cue_type="age")]
    none_rated = _score(key, [_pred("a", judge_score=2.0)])["breakdown"]["caption_trap"]
    assert none_rated == {
        "protocol": "reconstructed-v1",
        "n": 0,
        "k": 0,
        "heuristic": {"n": 0, "k": 0, "rate": None},
    }
    clean = _score(key, [_pred("a", judge_score=2.0, caption_trap=False, pred_text="the audio")])
    trap = clean["breakdown"]["caption_trap"]
    assert (trap["k"], trap["appropriate"], trap["conditional_rate"]) == (0, 0, None)  # 0/0: undefined
    assert trap["heuristic"] == {"n": 1, "k": 1, "rate": 1.0}
    assert trap["ci_low"] == 0.0 and trap["ci_high"] == pytest.approx(_wilson(0, 1)[1], rel=1e-9)
    # one trap and one appropriate reply: conditional rate 1/(1 + 1), at any confidence the Wilson bounds of 1/2
    pred = [
        _pred("a", judge_score=1.0, caption_trap=True),
        _pred("b", judge_score=4.0, caption_trap=False),
    ]
    even = _score(key, pred, confidence=0.9)
    trap = even["breakdown"]["caption_trap"]
    assert (trap["k"], trap["appropriate"], trap["conditional_rate"]) == (1, 1, 0.5)
    low, high = _wilson(1, 2, 1.6448536269514722)
    assert (trap["ci_low"], trap["ci_high"]) == pytest.approx((low, high), rel=1e-9)
    assert even["scores"]["caption_trap_rate"] == pytest.approx({"value": 0.5, "ci_low": low, "ci_high": high, "n": 2})


def test_cost_of_references_of_every_form():
    key = [
        _key("a", "d", "basic", ref=[{"all": ["ab", "cde"]}, ["f", "gh"]]),
        _key("b", "e", "choice", ref="B"),
        _key("c", "f", "care_age", ref="参考答案"),
        _key("d", "g", "dnsmos"),
    ]
    assert televal.cost(key, [], televal.Params()) == float(5 + 3 + 1 + 4 + 100 * 4)
