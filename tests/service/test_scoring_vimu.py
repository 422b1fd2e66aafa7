"""vimu scorer: a synthetic test, the published rows, chance and validation (docs/scoring.md, ViMU)."""

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import TypeAdapter, ValidationError

from service.errors import InvalidInput
from service.registry import SCORERS
from service.scoring import vimu
from service.stats import bootstrap_means, percentile_interval
from tests.service.shapes import shape

FIXTURES = Path(__file__).parent / "fixtures"


def _load(name: str, model: type) -> list:
    return TypeAdapter(dict[str, list[model]]).validate_json((FIXTURES / name).read_bytes())["items"]


@pytest.fixture(scope="module")
def items():
    return _load("vimu_key.json", vimu.AnswerKeyItem), _load("vimu_predictions.json", vimu.PredictionItem)


def _assert_close(actual, expected, rel: float = 1e-12) -> None:
    """Nested dicts equal key for key, floats to ``rel`` (pytest.approx compares one level only)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and set(actual) == set(expected), (actual, expected)
        for k, v in expected.items():
            _assert_close(actual[k], v, rel)
    elif isinstance(expected, float):
        assert actual == pytest.approx(expected, rel=rel, abs=0 if expected else 1e-12)
    else:
        assert actual == expected and type(actual) is type(expected), (actual, expected)


def _eg(item_id: str, gold: str, options: str = "ABCDE") -> vimu.AnswerKeyItem:
    return vimu.AnswerKeyItem(item_id=item_id, task="EG", options=list(options), correct_options=list(gold))


def test_registered_spec():
    assert SCORERS["vimu"] is vimu.SPEC and vimu.SPEC.primary_metric == "all_avg"


def test_v2_synthetic_example(items):
    key, pred = items
    out = vimu.score(key, pred, vimu.Params())
    s = {m: v["value"] for m, v in out["scores"].items()}
    # V2: 56.667 / 37.5 / 50 / 50 / 48.5417 (tolerance 1e-3 on the stated decimals)
    assert s == pytest.approx(
        {"oe": 56.667, "eg": 37.5, "rm": 50.0, "sv": 50.0, "ssu_avg": 50.0, "all_avg": 48.5417}, abs=1e-3
    )
    oe = out["breakdown"]["tasks"]["OE"]
    assert (oe["avg_raw"], oe["success_rate"], oe["perfect_rate"], oe["wrong_rate"]) == (2.5, 0.5, 0.25, 0.5)
    eg = out["breakdown"]["tasks"]["EG"]
    assert eg["exact_match_rate"] == 0.25 and eg["selection_conservatism"] == -1.0
    assert [r["value"] for r in out["item_scores"][:4]] == pytest.approx(
        [100.0, 60.0, 40.0, 80 / 3]
    )  # (total+6)/15·100
    for name in ("oe", "eg", "rm", "sv", "ssu_avg", "all_avg"):
        m = out["scores"][name]
        assert m["ci_low"] <= m["value"] <= m["ci_high"]
    assert out["scores"]["all_avg"]["n"] == 14 and out["coverage"] == 1.0
    assert out["breakdown"]["by_gold_option"]["RM"]["C: Attitude/Tone"] == {"n": 2, "score": 25.0}
    json.dumps(out, allow_nan=False)


def test_v1_published_rows_reproduce_ssu_and_all_avg():
    rows = json.loads((FIXTURES / "vimu_published_rows.json").read_text())["rows"]
    assert len(rows) == 16
    for r in rows:
        ssu, all_avg = vimu.aggregate(r["oe"], r["eg"], r["rm"], r["sv"])
        assert abs(ssu - r["ssu_avg"]) <= 0.01 and abs(all_avg - r["all_avg"]) <= 0.01, r["model"]  # V1


def test_v3_random_subset_chance_by_enumeration():
    k = 5
    subsets = [set(c) for r in range(1, k + 1) for c in itertools.combinations(range(k), r)]
    for g in (1, 2, 3):
        gold = set(range(g))
        enum = np.mean([len(s & gold) / g if s <= gold else 0.0 for s in subsets])
        assert vimu.random_subset_chance(np.array([g]), np.array([k]))[0] == pytest.approx(enum)
    assert vimu.random_subset_chance(np.array([1, 2, 3]), np.array([5] * 3)) == pytest.approx([1 / 31, 2 / 31, 4 / 31])
    # an empty gold set scores 0 whatever is selected; counts may come as floats (e.g. from a mean)
    assert vimu.random_subset_chance(np.array([0, 0]), np.array([1, 5])).tolist() == [0.0, 0.0]
    assert vimu.random_subset_chance(np.array([2.0]), np.array([3.0])) == pytest.approx([2 / 7])


@pytest.mark.parametrize(
    ("selected", "gold", "expected"),
    [("A", "AC", 50.0), ("AC", "AC", 100.0), ("AB", "AC", 0.0), ("", "AC", 0.0), ("A", "", 0.0), ("AAC", "AC", 100.0)],
)
def test_multi_select_rule(selected, gold, expected):
    out = vimu.score(
        [_eg("x", gold)], [vimu.PredictionItem(item_id="x", selected_options=list(selected))], vimu.Params()
    )
    assert out["scores"]["eg"]["value"] == expected


def test_error_answers_and_missing_items(items):
    key, pred = items
    errored = [vimu.PredictionItem(item_id="v1-oe", error=True), *pred[1:]]
    out = vimu.score(key, errored, vimu.Params(n_resamples=0))
    assert out["item_scores"][0]["value"] == pytest.approx(100 / 3)  # total -1 → (−1+6)/15·100
    assert out["scores"]["oe"]["ci_low"] is None
    assert out["breakdown"]["tasks"]["OE"]["n_errors"] == 1
    missing = vimu.score(key, pred[1:], vimu.Params())
    assert missing["coverage"] == pytest.approx(13 / 14)
    assert missing["item_scores"][0]["value"] == 0.0
    assert missing["scores"]["oe"]["value"] == pytest.approx((60 + 40 + 80 / 3) / 4)
    assert missing["breakdown"]["tasks"]["OE"]["avg_raw"] == pytest.approx(1 / 3)  # judged items only
    assert missing["breakdown"]["complete_subset"] is False


def test_absent_tasks_omit_their_metrics():
    out = vimu.score([_eg("x", "A")], [vimu.PredictionItem(item_id="x", selected_options=["A"])], vimu.Params())
    assert set(out["scores"]) == {"eg"}


def test_bootstrap_is_seeded(items):
    key, pred = items
    a = vimu.score(key, pred, vimu.Params(seed=3))
    assert a == vimu.score(key, pred, vimu.Params(seed=3))
    assert a["scores"]["all_avg"] != vimu.score(key, pred, vimu.Params(seed=4))["scores"]["all_avg"]


def _judge(total: int) -> dict:
    return {
        "score_breakdown": {
            "core_intent": 5,
            "implicit_signal": 3,
            "target_or_social_meaning": 1,
            "hallucination_penalty": 0,
            "literal_only_penalty": 0,
        },
        "score_total": total,
    }


@pytest.mark.parametrize(
    ("key", "pred", "loc"),
    [
        (
            {"item_id": "o", "task": "OE"},
            {"item_id": "o", "judge": _judge(8)},
            ("predictions", "items", 0, "judge", "score_total"),
        ),
        (
            {"item_id": "o", "task": "OE"},
            {"item_id": "o", "selected_options": ["A"]},
            ("predictions", "items", 0, "selected_options"),
        ),
        ({"item_id": "o", "task": "OE"}, {"item_id": "o"}, ("predictions", "items", 0, "judge")),
        (
            {"item_id": "e", "task": "EG", "options": ["A", "B"], "correct_options": ["A"]},
            {"item_id": "e", "selected_options": ["A", "C"]},
            ("predictions", "items", 0, "selected_options", 1),
        ),
        (
            {"item_id": "e", "task": "EG", "options": ["A", "B"], "correct_options": ["A"]},
            {"item_id": "e", "judge": _judge(9)},
            ("predictions", "items", 0, "judge"),
        ),
        (
            {"item_id": "e", "task": "EG", "options": ["A", "B"], "correct_options": ["A"]},
            {"item_id": "e", "selected_options": ["A"], "task": "RM"},
            ("predictions", "items", 0, "task"),
        ),
        (
            {"item_id": "e", "task": "EG", "options": ["A", "B"], "correct_options": ["C"]},
            {"item_id": "e", "selected_options": ["A"]},
            ("answer_key", "items", 0, "correct_options"),
        ),
        (
            {"item_id": "e", "task": "SV", "options": ["A", "A"], "correct_options": ["A"]},
            {"item_id": "e", "selected_options": ["A"]},
            ("answer_key", "items", 0, "options"),
        ),
        (
            {"item_id": "o", "task": "OE", "options": ["A"]},
            {"item_id": "o", "judge": _judge(9)},
            ("answer_key", "items", 0, "options"),
        ),
    ],
)
def test_domain_errors(key, pred, loc):
    with pytest.raises(InvalidInput) as err:
        vimu.score([vimu.AnswerKeyItem(**key)], [vimu.PredictionItem(**pred)], vimu.Params())
    assert err.value.loc == loc


def test_bootstrap_budget_is_enforced():
    key = [_eg(f"i{j}", "A") for j in range(5_001)]
    with pytest.raises(InvalidInput) as err:
        vimu.score(key, [], vimu.Params(n_resamples=10_000))  # B·n = 50 010 000 > 5e7
    assert err.value.loc == ("params", "n_resamples")


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (vimu.AnswerKeyItem, {"item_id": "a", "task": "XX"}),
        (vimu.AnswerKeyItem, {"item_id": "a", "task": "EG", "options": ["a"]}),
        (vimu.PredictionItem, {"item_id": "a", "judge": {**_judge(9), "score_total": 10}}),
        (vimu.PredictionItem, {"item_id": "a", "judge": {**_judge(9), "score_breakdown": {"core_intent": 6}}}),
        (vimu.PredictionItem, {"item_id": "a", "judge": {**_judge(9), "prompt_sha256": "xyz"}}),
        (vimu.Params, {"n_resamples": 10_001}),
        (vimu.Params, {"seed": -1}),
    ],
)
def test_schema_rejects_bad_values(model, data):
    with pytest.raises(ValidationError):
        model.model_validate(data)


def test_option_letters_are_stripped_of_surrounding_whitespace():
    key = vimu.AnswerKeyItem.model_validate(
        {"item_id": "e", "task": "EG", "options": [" A", "B ", "\tC\n"], "correct_options": ["A ", " C"]}
    )
    assert key.options == ["A", "B", "C"] and key.correct_options == ["A", "C"]
    pred = vimu.PredictionItem.model_validate({"item_id": "e", "selected_options": [" A", "A"]})
    assert pred.selected_options == ["A", "A"]
    assert vimu.score([key], [pred], vimu.Params())["scores"]["eg"]["value"] == 50.0  # {A} of gold {A, C}
    for bad in ("A B", " a ", "", "AB"):  # stripping never joins, case-folds or invents a letter
        with pytest.raises(ValidationError):
            vimu.PredictionItem.model_validate({"item_id": "e", "selected_options": [bad]})


def test_task_summary_rates_share_one_denominator():
    key = [_eg("a", "A"), _eg("b", "AB"), _eg("c", "C"), _eg("d", "D")]
    pred = [
        vimu.PredictionItem(item_id="a", selected_options=["A"]),  # 1
        vimu.PredictionItem(item_id="b", selected_options=["A"]),  # 0.5
        vimu.PredictionItem(item_id="c", selected_options=["D"]),  # 0
    ]  # d unanswered
    out = vimu.score(key, pred, vimu.Params(n_resamples=0))
    eg = out["breakdown"]["tasks"]["EG"]
    assert eg["rates_over"] == "n_predicted" and eg["n_predicted"] == 3 and eg["n"] == 4
    assert eg["avg_score_100"] == pytest.approx(50.0)  # (100 + 50 + 0) / 3 answered items
    assert (eg["exact_match_rate"], eg["zero_score_rate"]) == pytest.approx((1 / 3, 1 / 3))
    assert eg["avg_pred_option_count"] == 1.0 and eg["avg_gold_option_count"] == pytest.approx(4 / 3)
    assert eg["score_100_missing_as_zero"] == pytest.approx(37.5) == out["scores"]["eg"]["value"]  # over all 4
    none = vimu.score(key, [], vimu.Params(n_resamples=0))["breakdown"]["tasks"]["EG"]
    assert "avg_score_100" not in none and none["score_100_missing_as_zero"] == 0.0


def test_result_fields_are_the_documented_ones():
    # every field name and leaf type of the fixture's result (docs/scoring.md): a renamed, dropped or
    # None-valued field fails here
    key = _load("vimu_key.json", vimu.AnswerKeyItem)
    pred = _load("vimu_predictions.json", vimu.PredictionItem)
    expected = json.loads((FIXTURES / "vimu_shape.json").read_text())
    assert shape(vimu.score(key, pred, vimu.Params())) == expected


def test_cost_is_key_plus_prediction_items(items):
    key, pred = items
    assert vimu.SPEC.cost(key, pred[:5], vimu.Params()) == float(len(key) + 5)


def test_fixture_task_summaries_by_hand(items):
    # EG: gold AC/B/ABD/CD, selected A/B/AE/{} → scores 0.5, 1, 0, 0; K = 5 options everywhere
    key, pred = items
    tasks = vimu.score(key, pred, vimu.Params(n_resamples=0))["breakdown"]["tasks"]
    _assert_close(
        tasks["OE"],
        {
            "n": 4,
            "n_judged": 4,
            "n_errors": 0,
            "rates_over": "n_judged",
            "score_100_missing_as_zero": 170 / 3,  # totals 9, 3, 0, -2 → (2.5 + 6)/15·100
            "avg_raw": 2.5,
            "avg_normalized_score_100": 170 / 3,
            "success_rate": 0.5,  # total ≥ 3: 9 and 3
            "perfect_rate": 0.25,  # total = 9
            "wrong_rate": 0.5,  # total ≤ 0: 0 and -2
            "verdicts": {"excellent": 1, "good": 1, "poor": 1, "wrong": 1},
        },
    )
    _assert_close(
        tasks["EG"],
        {
            "n": 4,
            "n_predicted": 4,
            "rates_over": "n_predicted",
            "score_100_missing_as_zero": 37.5,
            "avg_score_100": 37.5,
            "exact_match_rate": 0.25,
            "zero_score_rate": 0.5,
            "exact_set_match_rate": 0.25,
            "avg_pred_option_count": 1.0,  # (1 + 1 + 2 + 0)/4
            "avg_gold_option_count": 2.0,  # (2 + 1 + 3 + 2)/4
            "selection_conservatism": -1.0,
            "chance": {
                "random_nonempty_subset": 100 * (2 + 1 + 4 + 2) / 31 / 4,  # 2^(g-1)/(2^5 - 1)
                "select_all": 0.0,
                "always_A": 100 * (1 / 2 + 1 / 3) / 4,
                "always_B": 100 * (1 + 1 / 3) / 4,
                "always_C": 100 * (1 / 2 + 1 / 2) / 4,
                "always_D": 100 * (1 / 3 + 1 / 2) / 4,
                "always_E": 0.0,
            },
        },
    )
    # SV: gold B/CD/A, selected B/D/E → 1, 0.5, 0
    sv = tasks["SV"]
    assert (sv["exact_match_rate"], sv["zero_score_rate"], sv["exact_set_match_rate"]) == pytest.approx((1 / 3,) * 3)
    assert sv["selection_conservatism"] == pytest.approx(1.0 - 4 / 3)
    assert sv["chance"]["random_nonempty_subset"] == pytest.approx(100 * (1 + 2 + 1) / 31 / 3)


def test_fixture_breakdowns_by_hand(items):
    key, pred = items
    bd = vimu.score(key, pred, vimu.Params(seed=7, n_resamples=20))["breakdown"]
    # OE item scores 100, 60, 40, 80/3 (easy: v1, v3; hard: v2, v4); EG 50, 100, 0, 0
    _assert_close(
        bd["by_difficulty"],
        {
            "OE": {"easy": {"n": 2, "score": 70.0}, "hard": {"n": 2, "score": (60 + 80 / 3) / 2}},
            "EG": {"easy": {"n": 2, "score": 25.0}, "hard": {"n": 2, "score": 50.0}},
        },
    )
    # RM 50, 100, 0 and SV 100, 50, 0 over videos v1 (politicians), v2 (celebrities, brands), v3 (ordinary people)
    subjects = ("politicians", "celebrities", "brands", "ordinary people")
    assert bd["by_target_subject"] == {
        "RM": {s: {"n": 1, "score": v} for s, v in zip(subjects, (50.0, 100.0, 100.0, 0.0), strict=True)},
        "SV": {s: {"n": 1, "score": v} for s, v in zip(subjects, (100.0, 50.0, 50.0, 0.0), strict=True)},
    }
    assert bd["by_gold_option"] == {
        "RM": {
            "B: Opposition/Incongruity": {"n": 1, "score": 50.0},
            "C: Attitude/Tone": {"n": 2, "score": 25.0},
            "A: Literal/Direct": {"n": 1, "score": 100.0},
        },
        "SV": {
            "B: Emotional attitude": {"n": 1, "score": 100.0},
            "C: Social evaluation/devaluation": {"n": 1, "score": 50.0},
            "D: Norm/value framing": {"n": 1, "score": 50.0},
            "A: None": {"n": 1, "score": 0.0},
        },
    }
    assert bd["by_macro_label"] == bd["by_surface_form"] == bd["by_source_platform"] == bd["by_evidence_source"] == {}
    assert bd["prompt_modes"] == {"without_guidance": 6}
    assert bd["complete_subset"] is True
    assert bd["bootstrap"] == {"seed": 7, "n_resamples": 20, "stratified_by": "task"}


def _oe(item_id: str) -> vimu.AnswerKeyItem:
    return vimu.AnswerKeyItem(item_id=item_id, task="OE")


def _judged(item_id: str, core: int, hallucination: int = 0, verdict: str | None = None) -> vimu.PredictionItem:
    b = {**_judge(0)["score_breakdown"], "core_intent": core, "hallucination_penalty": hallucination}
    b["implicit_signal"] = b["target_or_social_meaning"] = 0
    judge = {"score_breakdown": b, "score_total": core - hallucination, "verdict": verdict}
    return vimu.PredictionItem.model_validate({"item_id": item_id, "judge": judge})


def test_oe_summary_thresholds_errors_and_verdicts():
    key = [_oe(f"o{j}") for j in range(6)]
    pred = [
        vimu.PredictionItem(item_id="o4", error=True),  # total -1: wrong
        _judged("o0", 3, verdict="good"),  # total 3: a success
        _judged("o1", 2, verdict="partial"),  # 2: neither success nor wrong
        _judged("o2", 1, 1, verdict="good"),  # 0: wrong
        _judged("o3", 1),  # 1, no verdict
    ]  # o5 unanswered
    out = vimu.score(key, pred, vimu.Params(n_resamples=0))
    oe = out["breakdown"]["tasks"]["OE"]
    assert (oe["n"], oe["n_judged"], oe["n_errors"]) == (6, 5, 1)
    assert oe["avg_raw"] == pytest.approx((3 + 2 + 0 + 1 - 1) / 5)
    assert oe["avg_normalized_score_100"] == pytest.approx((1.0 + 6) / 15 * 100)
    assert (oe["success_rate"], oe["perfect_rate"], oe["wrong_rate"]) == pytest.approx((0.2, 0.0, 0.4))
    assert oe["verdicts"] == {"good": 2, "partial": 1} and list(oe["verdicts"]) == ["good", "partial"]
    # item values (total + 6)/15·100; the unanswered item scores 0 and stays in the metric's mean
    expected = [60.0, 160 / 3, 40.0, 140 / 3, 100 / 3, 0.0]
    assert [r["value"] for r in out["item_scores"]] == pytest.approx(expected, rel=1e-12)
    assert out["scores"]["oe"]["value"] == pytest.approx(sum(expected) / 6, rel=1e-12)
    assert oe["score_100_missing_as_zero"] == pytest.approx(sum(expected) / 6, rel=1e-12)
    none = vimu.score(key, [], vimu.Params(n_resamples=0))["breakdown"]["tasks"]["OE"]
    assert none == {"n": 6, "n_judged": 0, "n_errors": 0, "rates_over": "n_judged", "score_100_missing_as_zero": 0.0}


def test_oe_rubric_extremes_normalise_to_0_and_100():
    key = [_oe("lo"), _oe("hi")]
    worst = {
        "core_intent": 0,
        "implicit_signal": 0,
        "target_or_social_meaning": 0,
        "hallucination_penalty": 3,
        "literal_only_penalty": 3,
    }
    pred = [
        vimu.PredictionItem.model_validate({"item_id": "lo", "judge": {"score_breakdown": worst, "score_total": -6}}),
        vimu.PredictionItem.model_validate({"item_id": "hi", "judge": _judge(9)}),
    ]
    out = vimu.score(key, pred, vimu.Params(n_resamples=0))
    assert [r["value"] for r in out["item_scores"]] == [0.0, 100.0]
    assert out["breakdown"]["tasks"]["OE"]["perfect_rate"] == 0.5
    # each rubric component enters the formula with its sign: a total off by one is rejected
    for field, sign in (
        ("core_intent", 1),
        ("implicit_signal", 1),
        ("target_or_social_meaning", 1),
        ("hallucination_penalty", -1),
        ("literal_only_penalty", -1),
    ):
        b = {**worst, "hallucination_penalty": 0, "literal_only_penalty": 0, field: 1}
        total = sign
        ok = vimu.PredictionItem.model_validate(
            {"item_id": "lo", "judge": {"score_breakdown": b, "score_total": total}}
        )
        assert vimu.score([_oe("lo")], [ok], vimu.Params(n_resamples=0))["breakdown"]["tasks"]["OE"]["avg_raw"] == total
        bad = ok.model_copy(update={"judge": ok.judge.model_copy(update={"score_total": total + 1})})
        with pytest.raises(InvalidInput):
            vimu.score([_oe("lo")], [bad], vimu.Params(n_resamples=0))


def test_error_predictions_on_multi_select_items_score_zero():
    key = [_eg("a", "A"), _eg("b", "AB"), _eg("c", "C")]
    pred = [
        vimu.PredictionItem(item_id="a", error=True),
        vimu.PredictionItem(item_id="b", error=True, selected_options=[]),
        vimu.PredictionItem(item_id="c", selected_options=["C"]),
    ]
    out = vimu.score(key, pred, vimu.Params(n_resamples=0))
    eg = out["breakdown"]["tasks"]["EG"]
    assert [r["value"] for r in out["item_scores"]] == [0.0, 0.0, 100.0]
    assert eg["n_predicted"] == 3 and eg["zero_score_rate"] == pytest.approx(2 / 3)
    assert eg["avg_pred_option_count"] == pytest.approx(1 / 3) and out["coverage"] == 1.0
    with pytest.raises(InvalidInput) as err:
        vimu.score(key, [vimu.PredictionItem(item_id="a", error=True, selected_options=["A"])], vimu.Params())
    assert err.value.loc == ("predictions", "items", 0, "selected_options")
    with pytest.raises(InvalidInput) as err:
        vimu.score(
            [_oe("o")],
            [vimu.PredictionItem.model_validate({"item_id": "o", "error": True, "judge": _judge(9)})],
            vimu.Params(),
        )
    assert err.value.loc == ("predictions", "items", 0, "judge")
    with pytest.raises(InvalidInput) as err:
        vimu.score(key, [vimu.PredictionItem(item_id="b"), vimu.PredictionItem(item_id="a")], vimu.Params())
    assert err.value.loc == ("predictions", "items", 0, "selected_options")
    with pytest.raises(InvalidInput) as err:
        vimu.score([vimu.AnswerKeyItem(item_id="r", task="RM")], [], vimu.Params())
    assert err.value.loc == ("answer_key", "items", 0, "options")


def test_chance_references_follow_the_item_options():
    key = [
        vimu.AnswerKeyItem(item_id="a", task="RM", options=list("ABC"), correct_options=list("ABC")),
        vimu.AnswerKeyItem(item_id="b", task="RM", options=list("AB"), correct_options=["B"]),
        vimu.AnswerKeyItem(item_id="c", task="RM", options=list("AB"), correct_options=[]),
    ]
    out = vimu.score(key, [], vimu.Params(n_resamples=0))
    chance = out["breakdown"]["tasks"]["RM"]["chance"]
    # 2^(g-1)/(2^K - 1): 4/7, 1/3, and 0 for an empty gold set; select-all wins on item a only
    _assert_close(
        chance,
        {
            "random_nonempty_subset": 100 * (4 / 7 + 1 / 3) / 3,
            "select_all": 100 / 3,
            "always_A": 100 * (1 / 3) / 3,
            "always_B": 100 * (1 / 3 + 1) / 3,
            "always_C": 100 * (1 / 3) / 3,
        },
    )
    assert list(chance)[2:] == ["always_A", "always_B", "always_C"]  # letters of the union of options, in order
    assert out["breakdown"]["by_gold_option"]["RM"] == {
        "A: Literal/Direct": {"n": 1, "score": 0.0},
        "B: Opposition/Incongruity": {"n": 2, "score": 0.0},
        "C: Attitude/Tone": {"n": 1, "score": 0.0},
    }
    single = vimu.AnswerKeyItem(item_id="s", task="SV", options=["A"], correct_options=["A"])
    chance = vimu.score([single], [], vimu.Params(n_resamples=0))["breakdown"]["tasks"]["SV"]["chance"]
    assert chance == {"random_nonempty_subset": 100.0, "select_all": 100.0, "always_A": 100.0}
    far = vimu.AnswerKeyItem(item_id="z", task="EG", options=["A", "Z"], correct_options=["Z"])
    z = vimu.score([far], [vimu.PredictionItem(item_id="z", selected_options=["Z"])], vimu.Params(n_resamples=0))
    assert z["scores"]["eg"]["value"] == 100.0
    assert z["breakdown"]["tasks"]["EG"]["chance"] == {
        "random_nonempty_subset": pytest.approx(100 / 3),
        "select_all": 0.0,
        "always_A": 0.0,
        "always_Z": 100.0,
    }


def test_confidence_intervals_are_the_stratified_bootstrap(items):
    # replicate the draws: one generator, one bootstrap per task in OE, EG, RM, SV order; SSU/All from the mean
    # of the task replicates
    key, pred = items
    out = vimu.score(key, pred, vimu.Params(seed=5, n_resamples=200, confidence=0.8))
    values = np.array([r["value"] for r in out["item_scores"]])
    task = np.array([k.task for k in key])
    rng = np.random.default_rng(5)
    reps = {t: bootstrap_means(values[task == t], 200, rng) for t in vimu.TASKS}
    for name, members in [(t.lower(), (t,)) for t in vimu.TASKS] + [("ssu_avg", ("RM", "SV")), ("all_avg", vimu.TASKS)]:
        low, high = percentile_interval(np.mean([reps[t] for t in members], axis=0), 0.8)
        m = out["scores"][name]
        assert (m["ci_low"], m["ci_high"]) == pytest.approx((low, high), rel=1e-12), name
        assert m["n"] == int(np.isin(task, members).sum())
    none = vimu.score(key, pred, vimu.Params(n_resamples=0))["scores"]
    assert all(m["ci_low"] is None and m["ci_high"] is None for m in none.values())
    assert {k: m["value"] for k, m in none.items()} == {k: m["value"] for k, m in out["scores"].items()}


def test_prompt_modes_are_counted_per_mode():
    key = [_eg(c, "A") for c in "abcd"]
    modes = ["with_guidance", None, "without_guidance", "with_guidance"]
    pred = [
        vimu.PredictionItem(item_id=c, selected_options=["A"], prompt_mode=m)
        for c, m in zip("abcd", modes, strict=True)
    ]
    bd = vimu.score(key, pred, vimu.Params(n_resamples=0))["breakdown"]
    assert bd["prompt_modes"] == {"with_guidance": 2, "without_guidance": 1}
    assert list(bd["prompt_modes"]) == ["with_guidance", "without_guidance"]


def test_category_breakdowns_per_task():
    key = [
        vimu.AnswerKeyItem(
            item_id="a",
            task="SV",
            options=list("AB"),
            correct_options=["A"],
            macro_label="irony",
            surface_form="skit",
            source_platform="tiktok",
            evidence_sources=["visual", "speech"],
        ),
        vimu.AnswerKeyItem(
            item_id="b",
            task="SV",
            options=list("AB"),
            correct_options=["B"],
            macro_label="irony",
            surface_form="vlog",
            evidence_sources=["speech"],
        ),
        vimu.AnswerKeyItem(item_id="c", task="OE", macro_label="irony"),
    ]
    pred = [
        vimu.PredictionItem(item_id="a", selected_options=["A"]),
        vimu.PredictionItem(item_id="b", selected_options=["A"]),
        _judged("c", 3),
    ]
    bd = vimu.score(key, pred, vimu.Params(n_resamples=0))["breakdown"]
    assert bd["by_macro_label"] == {"OE": {"irony": {"n": 1, "score": 60.0}}, "SV": {"irony": {"n": 2, "score": 50.0}}}
    assert bd["by_surface_form"] == {"SV": {"skit": {"n": 1, "score": 100.0}, "vlog": {"n": 1, "score": 0.0}}}
    assert bd["by_source_platform"] == {"SV": {"tiktok": {"n": 1, "score": 100.0}}}
    assert bd["by_evidence_source"] == {"SV": {"visual": {"n": 1, "score": 100.0}, "speech": {"n": 2, "score": 50.0}}}
    assert bd["by_gold_option"] == {
        "SV": {"A: None": {"n": 1, "score": 100.0}, "B: Emotional attitude": {"n": 1, "score": 0.0}}
    }
    assert bd["by_difficulty"] == bd["by_target_subject"] == {}
    assert bd["complete_subset"] is True
    # a gold letter without a macro label keeps the letter as its name
    rm = vimu.AnswerKeyItem(item_id="r", task="RM", options=list("ABCDEF"), correct_options=["A", "F"])
    out = vimu.score([rm], [vimu.PredictionItem(item_id="r", selected_options=["F"])], vimu.Params(n_resamples=0))
    assert out["breakdown"]["by_gold_option"] == {
        "RM": {"A: Literal/Direct": {"n": 1, "score": 50.0}, "F: F": {"n": 1, "score": 50.0}}
    }
