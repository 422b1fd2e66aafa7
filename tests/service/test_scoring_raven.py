"""RAVEN-Bench scorer: the synthetic three-setting table, random baselines, shuffle fixtures, CircularEval, parsing."""

import numpy as np
import pytest

from service.errors import InvalidInput
from service.scoring.raven import (
    AnswerKeyItem,
    Params,
    PassAnswer,
    PredictionItem,
    chance_levels,
    cross_modal,
    group_scores,
    score,
)
from service.scoring.raven_parse import parse_answer, rotation_map, shuffle_map

LEVELS_C1 = ["L1", "L2", "L2", "L2", "L2", "L2", "L3", "L3"]
LEVELS_H1 = ["L2", "L2", "L3", "L3"]
TABLE = {
    "eo_ir": ("11111101", "1101", 0.833333, (1, 1, 0.5), 0.833333, 0.765625, 0.5),
    "eo_only": ("11101100", "1011", 0.666667, (1, 0.714286, 0.5), 0.738095, 0.390625, 0.25),
    "ir_only": ("01110101", "0111", 0.666667, (0, 0.714286, 0.75), 0.488095, 0.390625, 0.0),
}


def video_key(video: str, correct: str = "A", modality: str = "EO") -> list[AnswerKeyItem]:
    """One video: consistency group C1 (8 steps) and coherence group H1 (4 steps)."""
    items = []
    for family, group, levels in (("consistency", "C1", LEVELS_C1), ("coherence", "H1", LEVELS_H1)):
        for step, level in enumerate(levels, start=1):
            items.append(
                AnswerKeyItem(
                    item_id=f"{video}__{group}_{step}",
                    video_id=video,
                    group_key=group,
                    group_family=family,
                    group_step=step,
                    level=level,
                    modality_requirement=modality,
                    correct=correct,
                )
            )
    return items


def answers(keys: list[AnswerKeyItem], flags: str) -> list[PredictionItem]:
    return [
        PredictionItem(item_id=k.item_id, predicted_answer=k.correct if f == "1" else "D")
        for k, f in zip(keys, flags, strict=True)
    ]


def test_synthetic_table_and_cross_modal_gain() -> None:
    """83% accuracy with 0% strict group pass; G_cm = 0.833333 - 0.738095 = 0.0952381."""
    keys = video_key("v")
    results = {}
    for setting, (c1, h1, overall, levels, s_main, s_cons, s_coh) in TABLE.items():
        out = score(keys, answers(keys, c1 + h1), Params(setting=setting, n_resamples=0))
        s = {k: v["value"] for k, v in out["scores"].items()}
        assert s["overall_acc"] == pytest.approx(overall, abs=5e-7)
        assert [s["s_l1"], s["s_l2"], s["s_l3"]] == pytest.approx(levels, abs=5e-7)
        assert s["s_main"] == pytest.approx(s_main, abs=5e-7)
        assert s["s_cons"] == pytest.approx(s_cons, abs=1e-15)
        assert s["s_coh"] == pytest.approx(s_coh, abs=1e-15)
        assert s["strict_pass"] == 0.0
        assert np.mean([r["value"] for r in out["item_scores"]]) == pytest.approx(s["s_main"], rel=1e-12)
        results[setting] = out
    cm = cross_modal(results)
    assert cm["g_cm"] == pytest.approx(0.0952381, abs=5e-8)
    assert cm["reliance_eo"] == pytest.approx(0.738095 / 0.833333, abs=1e-6)
    assert cm["missing_settings"] == []
    partial = cross_modal({"eo_ir": results["eo_ir"]})
    assert partial["g_cm"] is None and partial["reliance_ir"] is None
    assert partial["missing_settings"] == ["eo_only", "ir_only"]
    with pytest.raises(InvalidInput):
        cross_modal({"rgb": results["eo_ir"]})


def test_random_baseline_closed_forms_against_monte_carlo() -> None:
    """p = 1/4: E[(c/8)²] = p² + p(1-p)/8 = 0.0859375, E[prefix/4] = Σ_{j≤4} p^j / 4 = 0.0830078, strict p^8, p^4;
    4·10⁵ simulated groups each agree within 4 standard errors."""
    p = 0.25
    chance = chance_levels(np.array([8, 4]), np.array([False, True]), p)
    assert chance["s_cons"] == 0.0859375
    assert chance["s_coh"] == pytest.approx(0.0830078, abs=5e-8)
    assert chance["strict_pass"] == pytest.approx((p**8 + p**4) / 2, rel=1e-15)
    rng = np.random.default_rng(11)
    n = 400_000
    sizes = np.tile([8, 4], n // 2)
    coherent = np.tile([False, True], n // 2)
    correct = rng.random(int(sizes.sum())) < p
    scores = group_scores(correct, np.arange(correct.size), sizes, coherent)
    for value, expected in ((scores[~coherent], chance["s_cons"]), (scores[coherent], chance["s_coh"])):
        assert abs(value.mean() - expected) < 4 * value.std() / np.sqrt(value.size)


def test_random_guessing_through_the_scorer_matches_chance() -> None:
    """1,000 videos answered uniformly at random: S_cons, S_coh and accuracy within 4 bootstrap SEs of chance."""
    rng = np.random.default_rng(5)
    keys = [item for v in range(1000) for item in video_key(f"v{v}")]
    preds = [PredictionItem(item_id=k.item_id, predicted_answer=str(rng.choice(list("ABCD")))) for k in keys]
    out = score(keys, preds, Params(n_resamples=400))
    for name in ("overall_acc", "s_cons", "s_coh"):
        entry = out["scores"][name]
        half_width = (entry["ci_high"] - entry["ci_low"]) / 2
        assert abs(entry["value"] - out["breakdown"]["chance"][name]) < 2 * half_width


def test_shuffle_fixtures() -> None:
    assert shuffle_map("demo_video__q1", "C") == {"C": "B", "A": "C", "B": "D", "D": "A"}
    assert shuffle_map("demo_video__q2", "A") == {"A": "C", "B": "D", "C": "A", "D": "B"}


def test_seeded_shuffle_mode_scores_the_shown_labels() -> None:
    """With source key letters C and A, the model saw them as B and C; roles follow the permutation."""
    keys = video_key("demo_video")[:2]
    keys = [
        k.model_copy(update={"item_id": q, "correct": c, "option_roles": {"A": "d1", "B": "d2", "C": "d3", "D": "d4"}})
        for k, q, c in zip(keys, ("demo_video__q1", "demo_video__q2"), ("C", "A"), strict=True)
    ]
    preds = [
        PredictionItem(item_id="demo_video__q1", predicted_answer="B"),
        PredictionItem(item_id="demo_video__q2", predicted_answer="A"),
    ]
    out = score(keys, preds, Params(mode="seeded_shuffle", n_resamples=0))
    assert out["item_metrics"]["overall_acc"] == [1.0, 0.0]
    assert out["breakdown"]["distractor_roles"] == {"d3": 1}
    single = score(keys, preds, Params(n_resamples=0))
    assert single["item_metrics"]["overall_acc"] == [0.0, 1.0]


def test_circular_eval() -> None:
    """Pass 1 shows A = old D, B = old A; a question counts only when all four passes are right, so random
    guessing passes with probability (1/4)^4 = 0.0039."""
    assert rotation_map(1) == {"A": "B", "B": "C", "C": "D", "D": "A"}
    keys = video_key("v", correct="B")
    right = [PassAnswer(predicted_answer=rotation_map(i)["B"]) for i in range(4)]
    one_wrong = [*right[:3], PassAnswer(predicted_answer="B")]
    preds = [PredictionItem(item_id=k.item_id, circular=right if i else one_wrong) for i, k in enumerate(keys)]
    out = score(keys, preds, Params(mode="circular", n_resamples=0))
    assert out["item_metrics"]["overall_acc"] == [0.0] + [1.0] * 11
    assert out["breakdown"]["chance"]["overall_acc"] == 0.25**4
    with pytest.raises(InvalidInput) as err:
        score(keys, answers(keys, "1" * 12), Params(mode="circular"))
    assert err.value.loc == ("predictions", "items", 0, "circular")
    with pytest.raises(InvalidInput) as err:
        score(keys, preds, Params())
    assert err.value.loc == ("predictions", "items", 0, "circular")
    rng = np.random.default_rng(9)
    guesses = rng.integers(0, 4, size=(200_000, 4))
    hit = (guesses == (1 + np.arange(4)) % 4).all(axis=1).mean()
    assert abs(hit - 0.25**4) < 4 * np.sqrt(0.25**4 / 200_000)


@pytest.mark.parametrize(
    ("raw", "raven", "guarded"),
    [
        ('{"answer": "c"}', ("C", "ok"), ("C", "ok")),
        ("I think a boat is there, so C", ("A", "ok"), ("C", "ok")),
        ("A boat is moving so the answer is C", ("A", "ok"), (None, "parse_failure")),
        ("(B)", ("B", "ok"), ("B", "ok")),
        ("Cannot determine the answer", (None, "parse_failure"), (None, "refusal")),
        ("no idea", (None, "parse_failure"), (None, "parse_failure")),
    ],
)
def test_parse_rules(raw: str, raven: tuple, guarded: tuple) -> None:
    """The artifact rule upper-cases first, so the article 'a' matches; VLMEvalKit's guard refuses a lone 'A'
    among more than three tokens."""
    assert parse_answer(None, raw, "raven") == raven
    assert parse_answer(None, raw, "guarded") == guarded


def test_guarded_rule_matches_option_text() -> None:
    options = {"A": "a tanker", "B": "a ferry", "C": "a tug", "D": "a sailboat"}
    assert parse_answer(None, "It is clearly a ferry.", "guarded", options) == ("B", "ok")
    assert parse_answer(" d ", None, "guarded", options) == ("D", "ok")


def test_parse_failures_and_missing_answers_count_wrong() -> None:
    keys = video_key("v")
    preds = [PredictionItem(item_id=k.item_id, raw_response="no idea") for k in keys[:6]]
    out = score(keys, preds, Params(n_resamples=0))
    assert out["scores"]["parse_failure_rate"]["value"] == 1.0
    assert out["scores"]["overall_acc"]["value"] == 0.0
    assert out["coverage"] == 0.5


def test_cluster_bootstrap_resamples_videos() -> None:
    """Videos answered all-right or all-wrong: the video bootstrap's accuracy CI is about √12 wider than a
    question-level interval would be, and reproducible for a seed."""
    keys = [item for v in range(40) for item in video_key(f"v{v}")]
    flags = "".join(("1" if v % 2 else "0") * 12 for v in range(40))
    out = score(keys, answers(keys, flags), Params(n_resamples=2000, seed=3))
    entry = out["scores"]["overall_acc"]
    iid_width = 2 * 1.96 * np.sqrt(0.25 / len(keys))
    assert entry["ci_high"] - entry["ci_low"] > 2.5 * iid_width
    again = score(keys, answers(keys, flags), Params(n_resamples=2000, seed=3))
    assert again["scores"] == out["scores"]


def test_group_structure_is_validated() -> None:
    keys = video_key("v")
    gap = [*keys[:7], keys[7].model_copy(update={"group_step": 9}), *keys[8:]]
    with pytest.raises(InvalidInput) as err:
        score(gap, [], Params(n_resamples=0))
    assert err.value.loc == ("answer_key", "items", 7, "group_step")
    mixed = [keys[0].model_copy(update={"group_family": "coherence"}), *keys[1:]]
    with pytest.raises(InvalidInput) as err:
        score(mixed, [], Params(n_resamples=0))
    assert err.value.loc[-1] == "group_family"


def test_absent_level_counts_zero_in_s_main() -> None:
    """Only L2/L3 questions: S_main = (0 + S_L2 + S_L3)/3 as in the artifact, and the absent level is reported."""
    keys = video_key("v")[8:]
    out = score(keys, answers(keys, "1111"), Params(n_resamples=0))
    assert out["scores"]["s_main"]["value"] == pytest.approx(2 / 3)
    assert "s_l1" not in out["scores"]
    assert out["breakdown"]["absent_levels"] == ["L1"]
