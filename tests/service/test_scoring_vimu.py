"""vimu scorer: spec D_benchmarks_1 §1 synthetic test (V2), published rows (V1), chance (V3), validation."""

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import TypeAdapter, ValidationError

from service.errors import InvalidInput
from service.registry import SCORERS
from service.scoring import vimu
from tests.service.shapes import shape

FIXTURES = Path(__file__).parent / "fixtures"


def _load(name: str, model: type) -> list:
    return TypeAdapter(dict[str, list[model]]).validate_json((FIXTURES / name).read_bytes())["items"]


@pytest.fixture(scope="module")
def items():
    return _load("vimu_key.json", vimu.AnswerKeyItem), _load("vimu_predictions.json", vimu.PredictionItem)


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
