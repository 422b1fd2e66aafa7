"""stakebench scorer: spec D_benchmarks_1 §3 synthetic test (V10), random-predictor range check, validation."""

import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import TypeAdapter, ValidationError

from service.errors import InvalidInput
from service.registry import SCORERS
from service.scoring import stakebench as sb
from tests.service.shapes import shape

FIXTURES = Path(__file__).parent / "fixtures"


def _load(name: str, model: type) -> list:
    return TypeAdapter(dict[str, list[model]]).validate_json((FIXTURES / name).read_bytes())["items"]


@pytest.fixture(scope="module")
def items():
    return _load("stakebench_key.json", sb.AnswerKeyItem), _load("stakebench_predictions.json", sb.PredictionItem)


@pytest.fixture  # per test: a module-scoped result would hide the scorer from the mutation run's test mapping
def scored(items):
    return sb.score(*items, sb.Params())


def _v(scored: dict, name: str) -> float:
    return scored["scores"][name]["value"]


def test_registered_spec(scored):
    assert SCORERS["stakebench"] is sb.SPEC and sb.SPEC.primary_metric == "directed_accuracy"
    assert set(scored["scores"]) <= set(scored["reconstructed"])
    json.dumps(scored, allow_nan=False)


def test_t2_directed_accuracy_v10(scored):
    assert _v(scored, "directed_accuracy") == 0.5
    assert scored["scores"]["directed_accuracy"]["n"] == 4
    assert _v(scored, "side_coverage") == pytest.approx(0.6667, abs=5e-5)
    assert _v(scored, "side_strict_accuracy") == pytest.approx(0.3333, abs=5e-5)
    assert _v(scored, "stake_weighted_da") == pytest.approx(0.9032, abs=5e-5)  # (100+40)/155


def test_t3_action_metrics_and_collapse_v10(scored):
    assert _v(scored, "action_accuracy") == 0.5
    assert _v(scored, "action_macro_f1") == pytest.approx(0.3167, abs=5e-5)
    f1 = scored["breakdown"]["future_action"]["f1"]
    assert f1 == pytest.approx({"INCREASE": 2 / 3, "HOLD": 0.6, "REDUCE": 0.0, "EXIT_FLIP": 0.0})
    assert _v(scored, "action_balanced_accuracy") == 0.375
    collapse = scored["breakdown"]["future_action"]["collapse"]
    assert collapse["shares"] == {"HOLD": 0.875, "INCREASE": 0.125}
    assert collapse["labels_used"] == 2 and collapse["collapsed"] is True
    assert collapse["effective_labels"] == pytest.approx(1.4576, abs=5e-5)


def test_t4_baselines_and_skill_v10(scored):
    overall = scored["breakdown"]["odds_projection"]["overall"]
    assert overall["accuracy"] == pytest.approx({"model": 5 / 6, "momentum": 2 / 3, "favourite_drift": 1 / 3})
    assert _v(scored, "odds_skill") == pytest.approx(1 / 6)
    # settings s1 (skill 0) and s2 (+1/3): one positive of one non-zero → sign-test p = 1/2
    assert _v(scored, "odds_settings_positive") == 1 and scored["scores"]["odds_settings_positive"]["n"] == 2
    assert _v(scored, "odds_sign_test_p") == 0.5
    assert scored["breakdown"]["odds_projection"]["consistently_improves"] is False


def test_t1_commitment_hand_computation(scored):
    # gold [T,T,F,F,T,F], pred [T,F,F,T,T,F]: TP 2, TN 2, FP 1, FN 1
    assert _v(scored, "commitment_accuracy") == pytest.approx(4 / 6)
    assert _v(scored, "commitment_mcc") == pytest.approx(1 / 3)  # (2·2 − 1·1)/sqrt(3·3·3·3)
    assert _v(scored, "commitment_macro_f1") == pytest.approx(2 / 3)
    assert scored["breakdown"]["commitment"]["majority_baseline_accuracy"] == 0.5


def test_random_directional_predictor_has_chance_da():
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 2, 10_000)
    pred = rng.integers(0, 2, 10_000)
    sides = np.array(["NO", "YES"])
    key = [sb.AnswerKeyItem(item_id=f"c{j}", task="revealed_side", side=sides[g]) for j, g in enumerate(gold)]
    preds = [sb.PredictionItem(item_id=f"c{j}", side=sides[p]) for j, p in enumerate(pred)]
    da = _v(sb.score(key, preds, sb.Params()), "directed_accuracy")
    assert da == pytest.approx(float(np.mean(gold == pred)))
    assert abs(da - 0.5) < 0.02  # §3 validation: measured 0.4981


def test_dead_band_flat_policy_and_probability_answers(items):
    key, pred = items
    # |Δ| = [.05,.05,.03,.07,.03,.02]: a dead band of 0.04 makes items 3, 5, 6 FLAT
    excluded = sb.score(key, pred, sb.Params(dead_band=0.04))["breakdown"]["odds_projection"]
    assert excluded["n_flat_truth"] == 3 and excluded["overall"]["n"] == 3
    as_class = sb.score(key, pred, sb.Params(dead_band=0.04, flat_policy="class"))["breakdown"]["odds_projection"]
    assert as_class["overall"]["n"] == 6
    t4 = {k.item_id: k for k in key if k.task == "odds_projection"}
    probs = [
        sb.PredictionItem(item_id=p.item_id, p_next=t4[p.item_id].p_now + (0.01 if p.direction == "UP" else -0.01))
        if p.item_id in t4
        else p
        for p in pred
    ]
    assert sb.score(key, probs, sb.Params())["scores"] == sb.score(key, pred, sb.Params())["scores"]


def test_missing_side_answers_count_as_abstentions(items):
    key, pred = items
    out = sb.score(key, [p for p in pred if p.item_id != "t2-2"], sb.Params())  # t2-2 was a wrong YES
    assert _v(out, "directed_accuracy") == pytest.approx(2 / 3)
    assert _v(out, "side_coverage") == pytest.approx(0.5)
    assert out["coverage"] == pytest.approx(25 / 26)


def test_multi_outcome_markets():
    key = [sb.AnswerKeyItem(item_id="m", task="revealed_side", side="trump", outcomes=["trump", "harris", "other"])]
    out = sb.score(key, [sb.PredictionItem(item_id="m", side="trump")], sb.Params())
    assert _v(out, "directed_accuracy") == 1.0


@pytest.mark.parametrize(
    ("key", "pred", "loc"),
    [
        (
            {"item_id": "a", "task": "revealed_side", "side": "YES"},
            {"item_id": "a", "side": "MAYBE"},
            ("predictions", "items", 0, "side"),
        ),
        (
            {"item_id": "a", "task": "revealed_side", "side": "maybe"},
            {"item_id": "a", "side": "YES"},
            ("answer_key", "items", 0, "side"),
        ),
        (
            {"item_id": "a", "task": "odds_projection", "p_prev": 0.1, "p_now": 0.2, "p_next": 0.3},
            {"item_id": "a", "direction": "UP", "p_next": 0.4},
            ("predictions", "items", 0, "direction"),
        ),
        (
            {"item_id": "a", "task": "odds_projection", "p_now": 0.2, "p_next": 0.3},
            {"item_id": "a", "direction": "UP"},
            ("answer_key", "items", 0, "p_now"),
        ),
        (
            {"item_id": "a", "task": "future_action"},
            {"item_id": "a", "action": "HOLD"},
            ("answer_key", "items", 0, "action"),
        ),
        (
            {"item_id": "a", "task": "commitment", "committed": True},
            {"item_id": "a", "side": "YES"},
            ("predictions", "items", 0, "committed"),
        ),
    ],
)
def test_domain_errors(key, pred, loc):
    with pytest.raises(InvalidInput) as err:
        sb.score([sb.AnswerKeyItem(**key)], [sb.PredictionItem(**pred)], sb.Params())
    assert err.value.loc == loc


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (sb.AnswerKeyItem, {"item_id": "a", "task": "future_action", "action": "BUY"}),
        (sb.AnswerKeyItem, {"item_id": "a", "task": "odds_projection", "p_now": 1.5}),
        (sb.AnswerKeyItem, {"item_id": "a", "task": "commitment", "platform": "kalshi"}),
        (sb.AnswerKeyItem, {"item_id": "a", "task": "revealed_side", "position_size": -1.0}),
        (sb.PredictionItem, {"item_id": "a", "direction": "SIDEWAYS"}),
        (sb.Params, {"collapse_tau": 0.0}),
        (sb.Params, {"consistency_share": 0.4}),
    ],
)
def test_schema_rejects_bad_values(model, data):
    with pytest.raises(ValidationError):
        model.model_validate(data)


def _one_cent_market(step_cents: int) -> tuple[list, list]:
    """T4 items on 1-cent odds k/100 -> (k + step)/100, with the same move before the comment; the model
    forecasts ``p_next`` exactly."""
    key, pred = [], []
    for k in range(1, 99 - step_cents):
        p_prev, p_now, p_next = (k - step_cents) / 100 if k > step_cents else 0.0, k / 100, (k + step_cents) / 100
        item = f"o{k}"
        key.append(sb.AnswerKeyItem(item_id=item, task="odds_projection", p_prev=p_prev, p_now=p_now, p_next=p_next))
        pred.append(sb.PredictionItem(item_id=item, p_next=p_next))
    return key, pred


def test_a_move_equal_to_the_dead_band_is_flat_whatever_the_rounding():
    # 0.51 - 0.50 = 0.010000000000000009 > 0.01 but 0.11 - 0.10 = 0.009999999999999995: both are one cent
    assert set(sb.directions(np.arange(1, 100) / 100 - np.arange(0, 99) / 100, 0.01).tolist()) == {"FLAT"}
    assert set(sb.directions(np.arange(0, 99) / 100 - np.arange(1, 100) / 100, 0.01).tolist()) == {"FLAT"}
    key, pred = _one_cent_market(1)
    odds = sb.score(key, pred, sb.Params(dead_band=0.01, flat_policy="class"))["breakdown"]["odds_projection"]
    assert odds["n_flat_truth"] == len(key)  # labels: every one-cent move is FLAT
    # momentum baseline (p_prev -> p_now) and forecasts (p_now -> p_next): FLAT too, so both match every label
    assert odds["overall"]["accuracy"] == {"model": 1.0, "momentum": 1.0, "favourite_drift": 0.0}
    key, pred = _one_cent_market(2)  # two cents: above the band, every move is UP
    odds = sb.score(key, pred, sb.Params(dead_band=0.01))["breakdown"]["odds_projection"]
    assert odds["n_flat_truth"] == 0 and odds["overall"]["accuracy"]["model"] == 1.0


def test_no_move_is_flat_without_a_dead_band():
    delta = np.array([0.3 - 0.3, 0.0, -0.0, 1e-6, -1e-6])
    assert sb.directions(delta, 0.0).tolist() == ["FLAT", "FLAT", "FLAT", "UP", "DOWN"]
    key = [sb.AnswerKeyItem(item_id="a", task="odds_projection", p_prev=0.4, p_now=0.4, p_next=0.4)]
    odds = sb.score(key, [sb.PredictionItem(item_id="a", direction="FLAT")], sb.Params(flat_policy="class"))
    assert odds["breakdown"]["odds_projection"]["overall"]["accuracy"]["model"] == 1.0


def test_missing_commitment_answer_counts_as_wrong():
    key = [sb.AnswerKeyItem(item_id=f"c{j}", task="commitment", committed=j % 2 == 0) for j in range(4)]
    pred = [sb.PredictionItem(item_id=f"c{j}", committed=j % 2 == 0) for j in range(3)]  # c3 unanswered
    out = sb.score(key, pred, sb.Params())
    assert _v(out, "commitment_accuracy") == 0.75
    assert [r["value"] for r in out["item_scores"]] == [1.0, 1.0, 1.0, 0.0]
    # gold [T,F,T,F], answers [T,F,T,wrong = T]: TP 2, TN 1, FP 1, FN 0; MCC (2 - 0)/sqrt(3·2·2·1)
    assert _v(out, "commitment_mcc") == pytest.approx(2 / np.sqrt(12))


def test_result_fields_are_the_documented_ones():
    # every field name and leaf type of the fixture's result (docs/scoring.md): a renamed, dropped or
    # None-valued field fails here
    key = _load("stakebench_key.json", sb.AnswerKeyItem)
    pred = _load("stakebench_predictions.json", sb.PredictionItem)
    expected = json.loads((FIXTURES / "stakebench_shape.json").read_text())
    assert shape(sb.score(key, pred, sb.Params())) == expected


def test_cost_is_key_plus_prediction_items(items):
    key, pred = items
    assert sb.SPEC.cost(key, pred[:5], sb.Params()) == float(len(key) + 5)
