"""televal: judge_above60 at a non-default threshold, without flooring, with one judge task rescaled linearly and a
non-judge dataset beside them, by hand (docs/scoring.md, TELEVAL)."""

import math

import pytest
from scipy.stats import norm

from service.scoring import televal

JUDGED = [  # (item, dataset, task, judge score or None when unanswered)
    ("e0", "emp", "empathetic_response", 3.6),  # (3.6/5)²·100 = 51.84
    ("e1", "emp", "empathetic_response", 3.5),  # 49.0
    ("e2", "emp", "empathetic_response", 4.9),  # 96.04
    ("a0", "age", "care_age", 2.5),  # linear: 20·2.5 = 50.0, not above 50
    ("a1", "age", "care_age", 2.6),  # 52.0
    ("a2", "age", "care_age", None),  # unanswered: 0
]


def wilson(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def scored(**params: object) -> dict:
    keys = [televal.AnswerKeyItem(item_id=i, dataset=d, eval_task=t) for i, d, t, _ in JUDGED]
    keys += [televal.AnswerKeyItem(item_id=f"b{j}", dataset="b", eval_task="basic", ref=["北京"]) for j in range(2)]
    preds = [televal.PredictionItem(item_id=i, judge_score=s) for i, _, _, s in JUDGED if s is not None]
    preds += [televal.PredictionItem(item_id=f"b{j}", pred_text="北京") for j in range(2)]
    return televal.score(keys, preds, televal.Params(linear_judge_tasks=["care_age"], n_resamples=0, **params))


def test_judge_above_threshold_share_over_every_judge_item() -> None:
    """r > 50 for 51.84, 96.04 and 52.0: 3 of the 6 judge items (the basic items do not count, the unanswered one
    does) → 50.0 with the Wilson interval ×100. Floored (default): r = 36, 36, 64, 40, 40, 0 → 1 of 6."""
    z = norm.ppf(0.975)
    exact, floored = scored(judge_floor=False, above_threshold=50.0)["scores"], scored(above_threshold=50.0)["scores"]
    low, high = wilson(3, 6, z)
    assert exact["judge_above60"] == {
        "value": pytest.approx(50.0, rel=1e-15), "ci_low": pytest.approx(100 * low, rel=1e-9),
        "ci_high": pytest.approx(100 * high, rel=1e-9), "n": 6,
    }  # fmt: skip
    assert floored["judge_above60"]["value"] == pytest.approx(100 / 6, rel=1e-12)
