"""RAVEN-Bench scorer: the synthetic three-setting table, random baselines, shuffle fixtures, CircularEval, parsing."""

import json
from pathlib import Path

import numpy as np
import pytest

from service.errors import InvalidInput
from service.scoring.raven import (
    MAX_ITEMS,
    AnswerKeyItem,
    Params,
    PassAnswer,
    PredictionItem,
    chance_levels,
    cluster_resample_sums,
    cost,
    cross_modal,
    group_scores,
    score,
)
from service.scoring.raven_parse import VLMEVALKIT_COMMIT, parse_answer, rotation_map, shuffle_map

PARSE_CASES = json.loads((Path(__file__).parent / "fixtures" / "raven_parse_cases.json").read_text())

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


@pytest.mark.slow
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
        ('{"answer": "c"}', ("C", "ok"), (None, "parse_failure")),
        ("I think a boat is there, so C", ("A", "ok"), ("C", "ok")),
        ("A boat is moving so the answer is C", ("A", "ok"), ("C", "ok")),
        ("(B)", ("B", "ok"), ("B", "ok")),
        ("Cannot determine the answer", (None, "parse_failure"), (None, "refusal")),
        ("no idea", (None, "parse_failure"), (None, "parse_failure")),
    ],
)
def test_parse_rules(raw: str, raven: tuple, guarded: tuple) -> None:
    """The artifact rule reads a JSON answer and upper-cases the text, so the article 'a' matches; VLMEvalKit
    reads no JSON, and two letters fall through to its 'answer is X' pattern."""
    assert parse_answer(None, raw, "raven") == raven
    assert parse_answer(None, raw, "guarded") == guarded


@pytest.mark.parametrize("case", PARSE_CASES["cases"], ids=lambda c: repr(c["raw"])[:40])
def test_parse_rules_equal_their_upstreams(case: dict) -> None:
    """Each rule on 50 responses (articles, 'The answer is A.', lower case, option text, several letters,
    punctuation, JSON, refusals, other languages) gives the letter the upstream code gives (fixture computed by
    running the RAVEN artifact's normalize_predicted_answer and VLMEvalKit's can_infer at the commits it names);
    'guarded' is 'vlmevalkit_verbose'."""
    options = PARSE_CASES["options"]
    for rule in ("raven", "vlmevalkit", "vlmevalkit_verbose"):
        expected = case[rule]
        status = "ok" if expected in ("A", "B", "C", "D") else expected or "parse_failure"
        want = (expected if status == "ok" else None, status)
        assert parse_answer(None, case["raw"], rule, options) == want, rule
    assert parse_answer(None, case["raw"], "guarded", options) == parse_answer(
        None, case["raw"], "vlmevalkit_verbose", options
    )


def test_parse_fixture_names_the_commit_followed() -> None:
    assert PARSE_CASES["upstream"]["vlmevalkit"]["commit"] == VLMEVALKIT_COMMIT
    modes = {rule: [c[rule] for c in PARSE_CASES["cases"]] for rule in ("raven", "vlmevalkit", "vlmevalkit_verbose")}
    assert len(PARSE_CASES["cases"]) >= 40
    assert modes["vlmevalkit"] != modes["vlmevalkit_verbose"] != modes["raven"]


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


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("A is right", ("A", "ok")),  # three tokens: too short for the article guard
        ("A is the answer", (None, "parse_failure")),  # a lone 'A' among four tokens may be the article
        ("The answer is B", ("B", "ok")),  # the guard is about 'A' only
        ("Z", (None, "refusal")),  # VLMEvalKit's 'Z' (no option fits) is a refusal
        ("B, C or Z", (None, "parse_failure")),  # two letters are ambiguous, 'Z' counts only without letters
        ("z", (None, "parse_failure")),  # tokens are case-sensitive
    ],
)
def test_guarded_rule_article_guard_and_refusal_token(raw: str, expected: tuple) -> None:
    assert parse_answer(None, raw, "guarded") == expected


def test_guarded_text_match_needs_exactly_one_option() -> None:
    options = {"A": "a tanker", "B": "a ferry", "C": "a tug", "D": "a sailboat"}
    assert parse_answer(None, "either a tanker or a ferry", "guarded", options) == (None, "parse_failure")
    assert parse_answer(None, "nothing of the sort", "guarded", options) == (None, "parse_failure")


def two_video_submission() -> tuple[list[AnswerKeyItem], list[PredictionItem]]:
    """v1 (key A, EO) answered by the eo_ir row 11111101 + 1101; v2 (key B, IR): C1 steps 1-4 right as raw text,
    step 5 a refusal, step 6 unparseable, steps 7-8 wrong ('C'), H1 unanswered."""
    v1, v2 = video_key("v1"), video_key("v2", correct="B", modality="IR")
    raws = ["The answer is B"] * 4 + ["Cannot determine the answer", "no idea"]
    preds = answers(v1, "111111011101")
    preds += [PredictionItem(item_id=k.item_id, raw_response=r) for k, r in zip(v2, raws, strict=False)]
    preds += [PredictionItem(item_id=k.item_id, predicted_answer="C") for k in v2[6:8]]
    return v1 + v2, preds


def test_two_video_scores_and_their_sizes() -> None:
    """By hand: 14/24 right; levels L1 2/2, L2 10/14, L3 2/8; groups (7/8)², 2/4, (4/8)², 0; 5 parse failures."""
    keys, preds = two_video_submission()
    out = score(keys, preds, Params(parse_rule="guarded", n_resamples=0))
    got = {name: (entry["value"], entry["n"]) for name, entry in out["scores"].items()}
    assert got == {
        "s_main": (pytest.approx((1 + 10 / 14 + 2 / 8) / 3, rel=1e-12), 24),
        "overall_acc": (14 / 24, 24),
        "s_l1": (1.0, 2),
        "s_l2": (10 / 14, 14),
        "s_l3": (2 / 8, 8),
        "s_cons": ((49 / 64 + 1 / 4) / 2, 2),
        "s_coh": ((2 / 4 + 0) / 2, 2),
        "group_composite": ((49 / 64 + 2 / 4 + 1 / 4 + 0) / 4, 4),
        "strict_pass": (0.0, 4),
        "parse_failure_rate": (5 / 24, 24),
    }
    assert all(entry["ci_low"] is None and entry["ci_high"] is None for entry in out["scores"].values())
    assert out["reconstructed"] == [] and out["coverage"] == 20 / 24
    metrics = out["item_metrics"]
    assert metrics["overall_acc"][12:] == [1.0] * 4 + [0.0] * 8
    assert metrics["parse_failure_rate"][12:] == [0.0] * 5 + [1.0, 0.0, 0.0] + [1.0] * 4
    # S_main per item: a right answer weighs n / (3 n_level): 24/6 = 4 (L1), 24/42 (L2), 24/24 (L3)
    assert metrics["s_main"][12:16] == pytest.approx([4.0, 4 / 7, 4 / 7, 4 / 7], rel=1e-12)


def test_two_video_breakdown() -> None:
    keys, preds = two_video_submission()
    breakdown = score(keys, preds, Params(parse_rule="guarded", n_resamples=0, seed=7))["breakdown"]
    chance = breakdown.pop("chance")
    assert breakdown == {
        "setting": "eo_ir",
        "parse_rule": "guarded",
        "mode": "single",
        "n_questions": 24,
        "n_videos": 2,
        "n_groups": 4,
        "n_missing": 4,
        "n_parse_failures": 5,  # 'no idea' and the four unanswered H1 questions
        "n_refusals": 1,
        "absent_levels": [],
        "slices": {
            "modality_requirement": {"EO": {"n": 12, "accuracy": 10 / 12}, "IR": {"n": 12, "accuracy": 4 / 12}},
            "level": {
                "L1": {"n": 2, "accuracy": 1.0},
                "L2": {"n": 14, "accuracy": 10 / 14},
                "L3": {"n": 8, "accuracy": 0.25},
            },
            "group_family": {"consistency": {"n": 16, "accuracy": 11 / 16}, "coherence": {"n": 8, "accuracy": 3 / 8}},
            "group_step": {
                "1": {"n": 4, "accuracy": 0.75},
                "2": {"n": 4, "accuracy": 0.75},
                "3": {"n": 4, "accuracy": 0.5},
                "4": {"n": 4, "accuracy": 0.75},
                "5": {"n": 2, "accuracy": 0.5},
                "6": {"n": 2, "accuracy": 0.5},
                "7": {"n": 2, "accuracy": 0.0},
                "8": {"n": 2, "accuracy": 0.5},
            },
            "question_type": {},
            "scenario_type": {},
        },
        "distractor_roles": {},
        "answer_audit": {
            "counts": {"A": 12, "B": 12, "C": 0, "D": 0},
            "warnings": ["answer labels absent from the key: C, D"],
        },
        "bootstrap": {"unit": "video", "seed": 7, "n_resamples": 0},
    }
    # chance of one group pair (8-step consistency, 4-step coherence) at p = 1/4, each twice
    assert chance == pytest.approx(
        {
            "overall_acc": 0.25,
            "s_main": 0.25,
            "strict_pass": (0.25**8 + 0.25**4) / 2,
            "group_composite": (0.0859375 + 0.0830078125) / 2,
            "s_cons": 0.0859375,
            "s_coh": 0.0830078125,
        },
        rel=1e-12,
    )


def test_answer_audit_flags_a_ninety_percent_letter() -> None:
    """9 of 10 key letters 'A' is exactly the artifact's 90% imbalance threshold; C and D are absent."""
    keys = video_key("v")[8:] + video_key("w")[8:] + video_key("x")[:2]
    keys = [k.model_copy(update={"correct": "B" if j == 9 else "A"}) for j, k in enumerate(keys)]
    audit = score(keys, [], Params(n_resamples=0))["breakdown"]["answer_audit"]
    assert audit == {
        "counts": {"A": 9, "B": 1, "C": 0, "D": 0},
        "warnings": [
            "severe answer-label imbalance: scores may be inflated by answer-prior bias",
            "answer labels absent from the key: C, D",
        ],
    }
    balanced = [k.model_copy(update={"correct": "ABCD"[j % 4]}) for j, k in enumerate(keys)]
    assert score(balanced, [], Params(n_resamples=0))["breakdown"]["answer_audit"]["warnings"] == []


def test_distractor_roles_count_each_wrong_pick() -> None:
    roles = {"A": "correct", "B": "distractor_near", "C": "distractor_far", "D": "distractor_far"}
    keys = [k.model_copy(update={"option_roles": roles}) for k in video_key("v")[8:]]
    preds = [PredictionItem(item_id=k.item_id, predicted_answer=x) for k, x in zip(keys, "ABBD", strict=True)]
    out = score(keys, preds, Params(n_resamples=0))
    assert out["breakdown"]["distractor_roles"] == {"distractor_near": 2, "distractor_far": 1}


def test_unanswered_questions_are_wrong_whatever_else_was_answered() -> None:
    keys = video_key("v")[8:]
    out = score(keys, answers(keys[:2], "11"), Params(n_resamples=0))
    assert out["item_metrics"]["overall_acc"] == [1.0, 1.0, 0.0, 0.0]
    assert out["item_metrics"]["parse_failure_rate"] == [0.0, 0.0, 1.0, 1.0]


def test_raw_responses_and_option_texts_are_parsed_through_the_scorer() -> None:
    options = {"A": "a tanker", "B": "a ferry", "C": "a tug", "D": "a sailboat"}
    keys = [k.model_copy(update={"options": options, "correct": "B"}) for k in video_key("v")[8:10]]
    preds = [
        PredictionItem(item_id=keys[0].item_id, raw_response="It is clearly a ferry."),
        PredictionItem(item_id=keys[1].item_id, raw_response="the answer is (B)"),
    ]
    assert score(keys, preds, Params(parse_rule="guarded", n_resamples=0))["item_metrics"]["overall_acc"] == [1, 1]
    # the artifact rule takes the first standalone letter of the upper-cased text: 'A' (the article)
    assert score(keys, preds, Params(n_resamples=0))["item_metrics"]["overall_acc"] == [0, 1]


def test_seeded_shuffle_follows_the_item_id_and_the_salt() -> None:
    keys = video_key("v")
    preds = [
        PredictionItem(item_id=k.item_id, predicted_answer=shuffle_map(k.item_id, k.correct, "pepper")[k.correct])
        for k in keys
    ]
    out = score(keys, preds, Params(mode="seeded_shuffle", shuffle_salt="pepper", n_resamples=0))
    assert out["scores"]["overall_acc"]["value"] == 1.0
    default_salt = score(keys, preds, Params(mode="seeded_shuffle", n_resamples=0))
    assert default_salt["scores"]["overall_acc"]["value"] < 1.0


def test_circular_pass_flags_accumulate_over_the_four_passes() -> None:
    """A question is right only if every pass is; a failure or refusal in any pass marks it."""
    keys = video_key("v", correct="B")[8:11]
    right = [PassAnswer(predicted_answer=rotation_map(i)["B"]) for i in range(4)]
    first_wrong = [PassAnswer(predicted_answer="A"), *right[1:]]
    first_unparsed = [PassAnswer(raw_response="no idea"), *right[1:]]
    first_refused = [PassAnswer(raw_response="Cannot determine the answer"), *right[1:]]
    passes = (first_wrong, first_unparsed, first_refused)
    preds = [PredictionItem(item_id=k.item_id, circular=c) for k, c in zip(keys, passes, strict=True)]
    out = score(keys, preds, Params(mode="circular", parse_rule="guarded", n_resamples=0))
    assert out["item_metrics"]["overall_acc"] == [0.0, 0.0, 0.0]
    assert out["item_metrics"]["parse_failure_rate"] == [0.0, 1.0, 0.0]
    assert out["breakdown"]["n_refusals"] == 1 and out["breakdown"]["n_parse_failures"] == 1


def test_mixed_family_names_the_first_item_that_differs() -> None:
    keys = video_key("v")
    mixed = [keys[0].model_copy(update={"group_family": "coherence"}), *keys[1:]]
    with pytest.raises(InvalidInput) as err:
        score(mixed, [], Params(n_resamples=0))
    assert err.value.loc == ("answer_key", "items", 1, "group_family")


def test_answer_key_size_limit_is_inclusive() -> None:
    """MAX_ITEMS key items pass the size check (this key then fails on its repeated group step, the next check);
    one more is refused on the answer key's item list."""
    item = video_key("v")[0]
    for n, loc in ((MAX_ITEMS, ("answer_key", "items", 1, "group_step")), (MAX_ITEMS + 1, ("answer_key", "items"))):
        with pytest.raises(InvalidInput) as err:
            score([item] * n, [], Params(n_resamples=0))
        assert err.value.loc == loc


def test_bootstrap_budget_is_checked_by_the_scorer() -> None:
    """The scorer enforces B ≤ 10,000 itself (here past a Params built without validation)."""
    keys = video_key("v")
    params = Params(n_resamples=0).model_copy(update={"n_resamples": 10_001})
    with pytest.raises(InvalidInput) as err:
        score(keys, answers(keys, "1" * 12), params)
    assert err.value.loc == ("params", "n_resamples")


def test_interval_width_follows_the_confidence_level() -> None:
    keys = [item for v in range(20) for item in video_key(f"v{v}")]
    flags = "".join(("1" if v % 3 else "0") * 12 for v in range(20))
    wide, narrow = (score(keys, answers(keys, flags), Params(n_resamples=500, confidence=c)) for c in (0.95, 0.6))
    for name in ("overall_acc", "s_main"):
        w, n = wide["scores"][name], narrow["scores"][name]
        assert w["value"] == n["value"] and w["n"] == n["n"] == 240
        assert w["ci_low"] < n["ci_low"] <= n["value"] <= n["ci_high"] < w["ci_high"]


def test_metric_undefined_in_every_replicate_has_no_interval() -> None:
    """v0 holds the only L1 question; seed 0's single resample draws v1 twice, so S_L1 and S_main are undefined in
    every replicate and get no interval while accuracy (v1's 2/4) gets a degenerate one."""
    keys = video_key("v0")[:1] + video_key("v1")[8:]
    out = score(keys, answers(keys, "11100"), Params(n_resamples=1, seed=0))
    s = out["scores"]
    assert (s["s_l1"]["ci_low"], s["s_l1"]["ci_high"], s["s_main"]["ci_low"]) == (None, None, None)
    assert (s["overall_acc"]["ci_low"], s["overall_acc"]["ci_high"]) == (0.5, 0.5)
    assert s["overall_acc"]["value"] == 3 / 5 and s["overall_acc"]["n"] == 5
    # strict pass: v0's one-question group is passed, v1's group is not (0.5); the replicate holds v1's only
    assert (s["strict_pass"]["value"], s["strict_pass"]["ci_low"], s["strict_pass"]["ci_high"]) == (0.5, 0.0, 0.0)


def test_absent_level_leaves_the_other_metrics_in_place() -> None:
    keys = video_key("v")[8:]
    out = score(keys, answers(keys, "1111"), Params(n_resamples=0))
    assert set(out["scores"]) == {
        "s_main", "overall_acc", "s_l2", "s_l3", "s_coh", "group_composite", "strict_pass", "parse_failure_rate"
    }  # fmt: skip


def test_coherence_group_of_the_maximum_length_all_right_scores_one() -> None:
    sizes, coherent = np.array([64, 64]), np.array([True, False])
    correct = np.ones(128, dtype=bool)
    assert group_scores(correct, np.arange(128), sizes, coherent).tolist() == [1.0, 1.0]
    correct[64 + 63] = False
    assert group_scores(correct, np.arange(128), sizes, coherent).tolist() == [1.0, (63 / 64) ** 2]


def test_chance_levels_of_consistency_groups_only() -> None:
    chance = chance_levels(np.array([2]), np.array([False]), 0.5)
    assert chance == {"overall_acc": 0.5, "s_main": 0.5, "strict_pass": 0.25, "group_composite": 0.375, "s_cons": 0.375}


def test_cluster_resample_sums_draw_n_videos_per_resample() -> None:
    """1,000 videos and B = 1,100: two chunks (1,048 + 52 rows); each replicate draws 1,000 videos; video 0 is
    drawn about B times in all; the draws depend on the seed only."""
    n, b = 1000, 1100
    stats = np.column_stack([np.ones(n), np.arange(n) == 0])
    sums = cluster_resample_sums(stats, b, seed=4)
    assert sums.shape == (b, 2)
    assert (sums[:, 0] == n).all()
    assert abs(sums[:, 1].sum() - b) < 5 * np.sqrt(b)
    assert np.array_equal(sums, cluster_resample_sums(stats, b, seed=4))
    assert not np.array_equal(sums, cluster_resample_sums(stats, b, seed=5))


def test_cross_modal_matrix_and_withheld_modality() -> None:
    keys, preds = two_video_submission()
    eo = score(keys, preds, Params(setting="eo_only", n_resamples=0))
    flipped = [p.model_copy(update={"predicted_answer": "D"}) if p.item_id.startswith("v1") else p for p in preds]
    ir = score(keys, flipped, Params(setting="ir_only", n_resamples=0))
    both = score(keys, answers(keys, "1" * 24), Params(n_resamples=0))
    cm = cross_modal({"eo_only": eo, "ir_only": ir, "eo_ir": both})
    assert cm["modality_matrix"] == {
        "eo_only": {"EO": 10 / 12, "IR": 4 / 12, "EO+IR": None},
        "ir_only": {"EO": 0.0, "IR": 4 / 12, "EO+IR": None},
        "eo_ir": {"EO": 1.0, "IR": 1.0, "EO+IR": None},
    }
    assert cm["without_required_modality"] == {"ir_questions_in_eo_only": 4 / 12, "eo_questions_in_ir_only": 0.0}
    s_eo, s_ir = eo["scores"]["s_main"]["value"], ir["scores"]["s_main"]["value"]
    assert cm["reliance_eo"] == s_eo and cm["reliance_ir"] == s_ir  # S_main(eo_ir) = 1
    assert cm["g_cm"] == pytest.approx(1 - max(s_eo, s_ir), rel=1e-12)
    assert cm["reconstructed"] == ["reliance_eo", "reliance_ir", "modality_matrix", "without_required_modality"]
    assert cm["s_main"] == {"eo_only": s_eo, "ir_only": s_ir, "eo_ir": 1.0}
    with pytest.raises(InvalidInput) as err:
        cross_modal({"rgb": both})
    assert err.value.loc == ("settings",)


def test_cost_counts_questions_and_raw_characters() -> None:
    keys = video_key("v")[:3]
    preds = [
        PredictionItem(item_id="a", raw_response="x" * 250),
        PredictionItem(item_id="b", predicted_answer="A"),
        PredictionItem(item_id="c", circular=[PassAnswer(raw_response="y" * 30), *[PassAnswer()] * 2,
                                               PassAnswer(raw_response="z" * 20)]),
    ]  # fmt: skip
    assert cost(keys, preds, Params()) == 3 + 3 + (250 + 30 + 20) / 100


@pytest.mark.parametrize(
    ("predicted", "raw", "rule", "expected"),
    [
        (None, None, "raven", (None, "parse_failure")),  # nothing to parse
        ("E", None, "guarded", (None, "parse_failure")),  # not an option letter
        (None, '  {"answer": "b"}', "raven", ("B", "ok")),  # leading blanks before the JSON object
        (None, '{"answer": "E"}', "raven", (None, "parse_failure")),  # JSON answer that is no option letter
        (None, '{"answer": 2}', "raven", (None, "parse_failure")),  # JSON answer that is no string
    ],
)
def test_structured_answers(predicted: str | None, raw: str | None, rule: str, expected: tuple) -> None:
    assert parse_answer(predicted, raw, rule) == expected


def test_circular_answers_the_answer_is_x_under_each_rule() -> None:
    """Every question has a CircularEval pass keyed A, so 'The answer is A.' decides it: VLMEvalKit's default
    parses it and all 12 questions count; its verbose mode (the older 'guarded' rule) refuses the lone 'A' among
    four tokens and none counts, each with one parse failure; the artifact rule reads the letter."""
    keys = video_key("v", correct="B")
    passes = [PassAnswer(raw_response=f"The answer is {rotation_map(i)['B']}.") for i in range(4)]
    preds = [PredictionItem(item_id=k.item_id, circular=passes) for k in keys]
    for rule, acc, failed in (("vlmevalkit", 1.0, 0.0), ("vlmevalkit_verbose", 0.0, 1.0), ("guarded", 0.0, 1.0)):
        out = score(keys, preds, Params(mode="circular", parse_rule=rule, n_resamples=0))
        assert out["scores"]["overall_acc"]["value"] == acc, rule
        assert out["scores"]["parse_failure_rate"]["value"] == failed, rule
    assert score(keys, preds, Params(mode="circular", n_resamples=0))["scores"]["overall_acc"]["value"] == 1.0
