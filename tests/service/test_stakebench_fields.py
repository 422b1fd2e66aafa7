"""stakebench: T3's effective number of labels over the answered items and T4's direction accuracy with a dead band,
direct and forecast answers, and both FLAT policies, by hand (docs/scoring.md, StakeBench)."""

import math

import pytest
from scipy.stats import entropy, norm

from service.scoring import stakebench as S

# T4 (p_prev, p_now, p_next, answer); dead band 0.02. Truth Δ = p_next − p_now, FLAT when |Δ| ≤ 0.02.
ODDS = [
    (0.40, 0.50, 0.60, "UP"),  # UP, right
    (0.50, 0.45, 0.44, 0.46),  # FLAT (−0.01); forecast Δ = +0.01: FLAT, right when FLAT is a class
    (0.30, 0.35, 0.20, 0.30),  # DOWN; forecast Δ = −0.05: DOWN, right
    (0.70, 0.65, 0.90, "DOWN"),  # UP, wrong
    (0.20, 0.22, 0.18, 0.23),  # DOWN; forecast Δ = +0.01 is inside the band: FLAT, wrong
    (0.55, 0.60, 0.63, "UP"),  # UP, right
    (0.50, 0.50, 0.52, "UP"),  # Δ = 0.02 (0.020000000000000018 in floating point): on the band, FLAT
]


def wilson(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def score_odds(**params: object) -> dict:
    keys = [
        S.AnswerKeyItem(item_id=f"o{i}", task="odds_projection", p_prev=a, p_now=b, p_next=c)
        for i, (a, b, c, _) in enumerate(ODDS)
    ]
    preds = [
        S.PredictionItem(item_id=f"o{i}", **({"direction": ans} if isinstance(ans, str) else {"p_next": ans}))
        for i, (*_, ans) in enumerate(ODDS)
    ]
    return S.score(keys, preds, S.Params(dead_band=0.02, **params))


def test_odds_accuracy_excludes_flat_truths_and_counts_band_forecasts_as_flat() -> None:
    """exclude: 5 non-FLAT truths, 3 right → 3/5 with the Wilson interval; class: all 7 scored, the FLAT truth
    forecast inside the band is right and the one answered UP wrong → 4/7."""
    z = norm.ppf(0.975)
    excluded, as_class = score_odds()["scores"], score_odds(flat_policy="class")["scores"]
    assert excluded["odds_accuracy"] == {
        "value": pytest.approx(3 / 5, rel=1e-15), "ci_low": pytest.approx(wilson(3, 5, z)[0], rel=1e-9),
        "ci_high": pytest.approx(wilson(3, 5, z)[1], rel=1e-9), "n": 5,
    }  # fmt: skip
    assert as_class["odds_accuracy"] == {
        "value": pytest.approx(4 / 7, rel=1e-15), "ci_low": pytest.approx(wilson(4, 7, z)[0], rel=1e-9),
        "ci_high": pytest.approx(wilson(4, 7, z)[1], rel=1e-9), "n": 7,
    }  # fmt: skip


def test_action_effective_labels_over_the_answered_items() -> None:
    """Six T3 items, five answered INCREASE ×3, HOLD, REDUCE (the missing one is not a label): shares 3/5, 1/5,
    1/5, exp(entropy) = exp(−Σ p ln p) ≈ 2.6879 over n = 5."""
    gold = ["INCREASE", "HOLD", "REDUCE", "EXIT_FLIP", "INCREASE", "HOLD"]
    answers = ["INCREASE", "INCREASE", "HOLD", None, "REDUCE", "INCREASE"]
    keys = [S.AnswerKeyItem(item_id=f"a{i}", task="future_action", action=g) for i, g in enumerate(gold)]
    preds = [S.PredictionItem(item_id=f"a{i}", action=a) for i, a in enumerate(answers) if a is not None]
    out = S.score(keys, preds, S.Params())
    scores = out["scores"]
    assert scores["action_effective_labels"]["value"] == pytest.approx(math.exp(entropy([3, 1, 1])), rel=1e-12)
    by_hand = math.exp(-(0.6 * math.log(0.6) + 0.4 * math.log(0.2)))
    assert scores["action_effective_labels"]["value"] == pytest.approx(by_hand, rel=1e-12)
    assert scores["action_effective_labels"]["n"] == 5
