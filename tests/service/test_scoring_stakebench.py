"""stakebench scorer: a synthetic test, the random-predictor range check and validation (docs/scoring.md,
StakeBench)."""

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
    assert abs(da - 0.5) < 0.02  # a random predictor: measured 0.4981


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


def test_market_clustered_standard_errors_by_hand(scored):
    # CR1: sqrt(G/(G-1)·Σ_g (c_g - p̂ n_g)²)/N, clusters = market_id
    bd = scored["breakdown"]
    # T1 correct [1,0,1,0,1,1] in markets m1,m2,m3,m1,m2,m3: sums 1,1,2, p̂ n_g = 4/3 → sqrt(3/2·2/3)/6
    assert bd["commitment"]["clustered_se"] == pytest.approx(1 / 6, rel=1e-12)
    # T2 directional answers t2-1 ✓ (m1), t2-2 ✗ (m2), t2-4 ✓ (m1), t2-5 ✗ (m2): sums 2, 0 → sqrt(2·2)/4
    assert bd["revealed_side"]["da_clustered_se"] == pytest.approx(0.5, rel=1e-12)
    # T4 correct [1,1,0,1,1,1], six markets of one item: sqrt(6/5·5/6)/6
    assert bd["odds_projection"]["clustered_se"] == pytest.approx(1 / 6, rel=1e-12)


def test_items_without_a_market_are_their_own_cluster():
    gold, pred = [True, True, False, False, True], [True, False, False, True, True]
    key = [sb.AnswerKeyItem(item_id=f"c{j}", task="commitment", committed=g) for j, g in enumerate(gold)]
    preds = [sb.PredictionItem(item_id=f"c{j}", committed=p) for j, p in enumerate(pred)]
    # correct [1,0,1,0,1], p̂ = 3/5: Σ resid² = 3·(2/5)² + 2·(3/5)² = 6/5 → sqrt(5/4·6/5)/5
    se = sb.score(key, preds, sb.Params())["breakdown"]["commitment"]["clustered_se"]
    assert se == pytest.approx(np.sqrt(1.5) / 5, rel=1e-12)
    one_market = [k.model_copy(update={"market_id": "m"}) for k in key]
    assert sb.score(one_market, preds, sb.Params())["breakdown"]["commitment"]["clustered_se"] is None


def test_side_breakdowns_by_platform_and_setting():
    key = [
        sb.AnswerKeyItem(item_id="a", task="revealed_side", side="YES", platform="polymarket", setting_id="s1"),
        sb.AnswerKeyItem(item_id="b", task="revealed_side", side="NO", platform="polymarket", setting_id="s1"),
        sb.AnswerKeyItem(item_id="c", task="revealed_side", side="NO", platform="manifold", setting_id="s2"),
        sb.AnswerKeyItem(item_id="d", task="revealed_side", side="YES", platform="manifold"),
    ]
    pred = [
        sb.PredictionItem(item_id="a", side="YES"),
        sb.PredictionItem(item_id="b", side="YES"),
        sb.PredictionItem(item_id="c", side="UNCLEAR"),
    ]  # d unanswered: an abstention
    out = sb.score(key, pred, sb.Params())
    bd = out["breakdown"]["revealed_side"]
    assert (bd["n"], bd["directional"], bd["abstentions"]) == (4, 2, 2)
    assert bd["by_platform"] == {
        "polymarket": {"n": 2, "directional": 2, "directed_accuracy": 0.5, "coverage": 1.0},
        "manifold": {"n": 2, "directional": 0, "directed_accuracy": None, "coverage": 0.0},
    }
    assert bd["by_setting"] == {
        "s1": {"n": 2, "directional": 2, "directed_accuracy": 0.5, "coverage": 1.0},
        "s2": {"n": 1, "directional": 0, "directed_accuracy": None, "coverage": 0.0},
    }
    assert bd["da_clustered_se"] is not None  # items a and b: two clusters of one
    assert _v(out, "side_coverage") == 0.5 and _v(out, "side_strict_accuracy") == 0.25
    assert "stake_weighted_da" not in out["scores"]  # no position sizes
    assert [r["value"] for r in out["item_scores"]] == [1.0, 0.0, 0.0, 0.0]
    abstain = sb.score(key, [sb.PredictionItem(item_id="a", side="NEUTRAL")], sb.Params())
    assert (
        "directed_accuracy" not in abstain["scores"] and "da_clustered_se" not in abstain["breakdown"]["revealed_side"]
    )
    assert _v(abstain, "side_coverage") == 0.0


def test_stake_weights_skip_unsized_and_abstaining_items():
    sizes = [30.0, None, 10.0, 0.0, 500.0]
    sides = ["YES", "YES", "NO", "NO", "YES"]
    answers = ["YES", "YES", "YES", "NO", "NEUTRAL"]
    key = [
        sb.AnswerKeyItem(item_id=f"s{j}", task="revealed_side", side=s, position_size=w)
        for j, (s, w) in enumerate(zip(sides, sizes, strict=True))
    ]
    pred = [sb.PredictionItem(item_id=f"s{j}", side=a) for j, a in enumerate(answers)]
    out = sb.score(key, pred, sb.Params())
    # directional and sized: s0 ✓ (30), s2 ✗ (10), s3 ✓ (0) → 30/40 over n = 3
    assert out["scores"]["stake_weighted_da"] == {"value": 0.75, "ci_low": None, "ci_high": None, "n": 3}
    assert _v(out, "directed_accuracy") == 0.75  # s0, s1, s3 of four directional answers
    zero = [k.model_copy(update={"position_size": 0.0 if k.position_size is not None else None}) for k in key]
    assert "stake_weighted_da" not in sb.score(zero, pred, sb.Params())["scores"]  # total stake 0


def test_commitment_mcc_is_zero_when_undefined_and_one_when_perfect():
    key = [sb.AnswerKeyItem(item_id=f"c{j}", task="commitment", committed=j < 2) for j in range(4)]
    same = [sb.PredictionItem(item_id=f"c{j}", committed=True) for j in range(4)]
    out = sb.score(key, same, sb.Params())  # no negative answers: TN + FN = 0, MCC undefined → 0
    assert _v(out, "commitment_mcc") == 0.0 and _v(out, "commitment_accuracy") == 0.5
    assert _v(out, "commitment_macro_f1") == pytest.approx((2 / 3 + 0) / 2)  # F1(True) = 2·2/(4 + 2)
    perfect = sb.score(key[1:3], [sb.PredictionItem(item_id=f"c{j}", committed=j < 2) for j in (1, 2)], sb.Params())
    assert _v(perfect, "commitment_mcc") == 1.0  # TP = TN = 1: denominator sqrt(1) = 1
    assert perfect["breakdown"]["commitment"]["f1"] == {"committed": 1.0, "not_committed": 1.0}
    bd = out["breakdown"]["commitment"]
    assert bd["f1"] == pytest.approx({"committed": 2 / 3, "not_committed": 0.0})
    assert bd["majority_baseline_accuracy"] == 0.5 and bd["n"] == 4


def test_action_labels_are_those_in_gold_or_answers():
    key = [
        sb.AnswerKeyItem(item_id=f"a{j}", task="future_action", action=a)
        for j, a in enumerate(["HOLD", "HOLD", "INCREASE"])
    ]
    pred = [sb.PredictionItem(item_id=f"a{j}", action=a) for j, a in enumerate(["HOLD", "REDUCE", "INCREASE"])]
    out = sb.score(key, pred, sb.Params())
    # F1: HOLD 2·1/(2 + 0 + 1) = 2/3, INCREASE 1, REDUCE 0 (answered, never gold); EXIT_FLIP absent
    assert out["breakdown"]["future_action"]["f1"] == pytest.approx({"INCREASE": 1.0, "REDUCE": 0.0, "HOLD": 2 / 3})
    assert _v(out, "action_macro_f1") == pytest.approx(5 / 9)
    assert _v(out, "action_balanced_accuracy") == pytest.approx(0.75)  # recalls HOLD 1/2, INCREASE 1
    assert _v(out, "action_accuracy") == pytest.approx(2 / 3)
    assert [r["value"] for r in out["item_scores"]] == [1.0, 0.0, 1.0]
    only_gold = sb.score(key, [sb.PredictionItem(item_id="a0", action="HOLD")], sb.Params())
    # HOLD: TP 1, FN 1 → 2/3; INCREASE: gold only → 0; the two unanswered items are wrong
    assert _v(only_gold, "action_macro_f1") == pytest.approx(1 / 3)
    assert _v(only_gold, "action_balanced_accuracy") == pytest.approx(0.25)
    assert only_gold["breakdown"]["future_action"]["answered"] == 1


def test_action_accuracy_by_platform(scored):
    # gold INCREASE,HOLD,REDUCE,EXIT_FLIP,HOLD,INCREASE,REDUCE,HOLD on poly,mani alternately; answers HOLD except t3-6
    by = scored["breakdown"]["future_action"]["by_platform"]
    assert by == {"polymarket": {"n": 4, "accuracy": 0.25}, "manifold": {"n": 4, "accuracy": 0.75}}
    assert [r["value"] for r in scored["item_scores"][12:20]] == [0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0]


def test_collapse_diagnostics_order_threshold_and_top_two():
    pred = np.array(["HOLD"] * 12 + ["INCREASE"] * 5 + ["EXIT_FLIP"] + ["REDUCE"] * 2)
    d = sb.collapse_diagnostics(pred, 0.05, 2)
    assert list(d["shares"].items()) == [("HOLD", 0.6), ("INCREASE", 0.25), ("REDUCE", 0.1), ("EXIT_FLIP", 0.05)]
    assert d["labels_used"] == 4  # a share equal to tau counts as used
    assert d["top2_share"] == pytest.approx(0.85)
    p = np.array([0.6, 0.25, 0.1, 0.05])
    assert d["effective_labels"] == pytest.approx(np.exp(-(p @ np.log(p))), rel=1e-12)
    assert d["collapsed"] is False and d["tau"] == 0.05
    tied = sb.collapse_diagnostics(np.array(["REDUCE", "HOLD", "INCREASE", "REDUCE", "EXIT_FLIP", "INCREASE"]), 0.05, 2)
    assert list(tied["shares"]) == ["INCREASE", "REDUCE", "EXIT_FLIP", "HOLD"]  # equal shares: alphabetical
    assert sb.collapse_diagnostics(pred, 0.1, 3) | {"tau": None} == d | {
        "labels_used": 3,
        "collapsed": True,
        "tau": None,
    }


def test_a_move_of_exactly_the_band_is_flat():
    band = 0.0 + sb.BAND_TOLERANCE
    assert sb.directions(np.array([band, -band, np.nextafter(band, 1), -np.nextafter(band, 1)]), 0.0).tolist() == [
        "FLAT",
        "FLAT",
        "UP",
        "DOWN",
    ]


def _t4(item_id: str, p_prev: float, p_now: float, p_next: float, **extra) -> sb.AnswerKeyItem:
    return sb.AnswerKeyItem(item_id=item_id, task="odds_projection", p_prev=p_prev, p_now=p_now, p_next=p_next, **extra)


def test_odds_overall_table_and_favourite_drift_baseline(scored, items):
    odds = scored["breakdown"]["odds_projection"]
    assert odds["overall"]["skill_vs_momentum"] == pytest.approx(5 / 6 - 2 / 3)
    assert odds["overall"]["skill_vs_favourite_drift"] == pytest.approx(5 / 6 - 1 / 3)
    assert scored["breakdown"]["protocol"] == "reconstructed-v1"
    assert odds["favourite_drift_rule"] == "UP iff p_now > 0.5 (p_now = 0.5 counts as DOWN)"
    assert (odds["flat_policy"], odds["dead_band"], odds["baseline"]) == ("exclude", 0.0, "momentum")
    fav = sb.score(*items, sb.Params(baseline="favourite_drift"))
    assert _v(fav, "odds_skill") == pytest.approx(0.5)
    # favourite (UP iff p_now > 0.5): s1 t4-1 ✗, t4-2 ✓ (0.5 is DOWN), t4-3 ✗; s2 t4-4 ✗, t4-5 ✓, t4-6 ✗
    by = fav["breakdown"]["odds_projection"]["by_setting"]
    assert by["s1"]["skill_vs_favourite_drift"] == pytest.approx(2 / 3 - 1 / 3)
    assert by["s2"]["skill_vs_favourite_drift"] == pytest.approx(1 - 1 / 3)
    assert _v(fav, "odds_settings_positive") == 2 and _v(fav, "odds_sign_test_p") == 0.25  # 2 of 2: 1/2²
    assert fav["breakdown"]["odds_projection"]["consistently_improves"] is True  # 2 ≥ 1.0 · 2


def test_odds_sign_test_counts_only_nonzero_settings():
    # four settings of one item each, the model right in all; momentum right in s1 only (skill 0), else +1
    key = [
        _t4("a", 0.40, 0.45, 0.50, setting_id="s1"),  # UP, momentum UP
        _t4("b", 0.40, 0.45, 0.40, setting_id="s2"),  # DOWN, momentum UP
        _t4("c", 0.60, 0.55, 0.60, setting_id="s3"),  # UP, momentum DOWN
        _t4("d", 0.30, 0.35, 0.30, setting_id="s4"),  # DOWN, momentum UP
    ]
    answers = ["UP", "DOWN", "UP", "DOWN"]
    pred = [sb.PredictionItem(item_id=i, direction=d) for i, d in zip("abcd", answers, strict=True)]
    out = sb.score(key, pred, sb.Params())
    odds = out["breakdown"]["odds_projection"]
    assert (odds["settings_positive"], odds["settings_nonzero"]) == (3, 3)
    assert _v(out, "odds_sign_test_p") == 0.125 and out["scores"]["odds_sign_test_p"]["n"] == 3  # 1/2³
    assert _v(out, "odds_settings_positive") == 3 and out["scores"]["odds_settings_positive"]["n"] == 4
    assert odds["consistently_improves"] is False  # 3 < 1.0 · 4
    share = sb.score(key, pred, sb.Params(consistency_share=0.75))["breakdown"]["odds_projection"]
    assert share["consistently_improves"] is True  # 3 ≥ 0.75 · 4: the share is inclusive


def test_settings_and_platforms_without_scored_items():
    key = [
        _t4("a", 0.40, 0.45, 0.50, platform="polymarket", market_id="m"),  # UP
        _t4("b", 0.40, 0.45, 0.40, platform="polymarket", market_id="m"),  # DOWN
        _t4("c", 0.40, 0.45, 0.45, platform="manifold", setting_id="flat"),  # FLAT truth: excluded
    ]
    pred = [sb.PredictionItem(item_id=i, direction="UP") for i in "abc"]
    out = sb.score(key, pred, sb.Params())
    odds = out["breakdown"]["odds_projection"]
    assert odds["n_flat_truth"] == 1 and odds["overall"]["n"] == 2
    assert list(odds["by_setting"]) == ["all"]  # no setting_id → "all"; the all-FLAT setting is dropped
    assert odds["by_setting"]["all"]["accuracy"] == {"model": 0.5, "momentum": 0.5, "favourite_drift": 0.5}
    assert odds["by_platform"]["manifold"] == {"n": 0}
    assert odds["by_platform"]["polymarket"]["n"] == 2
    assert out["scores"]["odds_settings_positive"]["n"] == 1
    assert [r["value"] for r in out["item_scores"]] == [1.0, 0.0, 0.0]
    assert odds["clustered_se"] is None  # both scored items are in market m: one cluster
    flat = sb.score(key[2:], pred[2:], sb.Params())
    assert flat["breakdown"]["odds_projection"]["overall"] == {"n": 0}
    assert not any(name.startswith("odds_") for name in flat["scores"])


def test_wilson_intervals_use_the_confidence_level(items):
    # T1 accuracy 4/6: Wilson bounds (p̂ + z²/2n ∓ z·sqrt(p̂(1-p̂)/n + z²/4n²))/(1 + z²/n)
    for confidence, z in ((0.95, 1.959963984540054), (0.8, 1.2815515655446004)):
        out = sb.score(*items, sb.Params(confidence=confidence))
        n, p = 6, 4 / 6
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        m = out["scores"]["commitment_accuracy"]
        assert (m["ci_low"], m["ci_high"]) == pytest.approx((centre - half, centre + half), rel=1e-9)


def test_stake_weights_below_one_unit_count():
    key = [
        sb.AnswerKeyItem(item_id="a", task="revealed_side", side="YES", position_size=0.25),
        sb.AnswerKeyItem(item_id="b", task="revealed_side", side="NO", position_size=0.5),
    ]
    out = sb.score(key, [sb.PredictionItem(item_id=i, side="YES") for i in "ab"], sb.Params())
    assert _v(out, "stake_weighted_da") == pytest.approx(1 / 3)  # 0.25 / 0.75


@pytest.mark.parametrize(
    ("key", "pred", "loc"),
    [
        (
            {"item_id": "a", "task": "commitment"},
            {"item_id": "a", "committed": True},
            ("answer_key", "items", 0, "committed"),
        ),
        (
            {"item_id": "a", "task": "future_action", "action": "HOLD"},
            {"item_id": "a", "side": "YES"},
            ("predictions", "items", 0, "action"),
        ),
        (
            {"item_id": "a", "task": "odds_projection", "p_prev": 0.1, "p_now": 0.2, "p_next": 0.3},
            {"item_id": "a"},
            ("predictions", "items", 0, "direction"),
        ),
    ],
)
def test_missing_gold_or_answer_fields(key, pred, loc):
    with pytest.raises(InvalidInput) as err:
        sb.score([sb.AnswerKeyItem(**key)], [sb.PredictionItem(**pred)], sb.Params())
    assert err.value.loc == loc
