"""film_mcq scorer: the synthetic test, the scale checks, validation and the array path (docs/scoring.md, film
MCQ)."""

import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import TypeAdapter, ValidationError
from scipy.special import comb

from service.errors import InvalidInput
from service.registry import SCORERS
from service.scoring import film_mcq as fm
from service.stats import factorize, wilson
from tests.service.shapes import shape

FIXTURES = Path(__file__).parent / "fixtures"


def _load(name: str, model: type) -> list:
    return TypeAdapter(dict[str, list[model]]).validate_json((FIXTURES / name).read_bytes())["items"]


@pytest.fixture(scope="module")
def fixture_items():
    return _load("film_mcq_key.json", fm.AnswerKeyItem), _load("film_mcq_predictions.json", fm.PredictionItem)


def test_registered_spec(fixture_items):
    spec = SCORERS["film_mcq"]
    assert spec is fm.SPEC and spec.primary_metric in spec.metrics
    key, pred = fixture_items
    assert spec.cost(key, pred, fm.Params()) == len(key) + len(pred)


def test_spec_synthetic_example(fixture_items):
    key, pred = fixture_items
    out = fm.score(key, pred, fm.Params())
    s = out["scores"]
    assert s["accuracy"]["value"] == pytest.approx(0.60)
    assert (s["accuracy"]["ci_low"], s["accuracy"]["ci_high"]) == pytest.approx((0.3127, 0.8318), abs=5e-5)
    assert s["accuracy"]["n"] == 10
    assert s["chance"]["value"] == pytest.approx(0.25)
    assert s["p_value_vs_chance"]["value"] == pytest.approx(0.019728, abs=5e-7)  # V7
    assert s["clustered_se"]["value"] == pytest.approx(0.21071, abs=5e-6)  # V9
    assert s["clustered_se"]["n"] == 3
    assert s["coverage"]["value"] == 1.0 and out["coverage"] == 1.0
    overall = out["breakdown"]["overall"]
    assert overall["binomial_se"] == pytest.approx(0.15492, abs=5e-6)
    assert overall["lm_eval_se"] == pytest.approx(0.16330, abs=5e-6)
    assert overall["near_chance"] is False
    cats = out["breakdown"]["by_narrative_element"]
    got = {c: (v["correct"], v["n"]) for c, v in cats.items()}
    assert got == {"character": (2, 3), "event/plot": (2, 3), "causality/motivation": (0, 2), "setting": (2, 2)}
    # hand: P(X>=2 | 3, 1/4) = 0.15625, P(X>=2 | 2, 1/4) = 0.0625, P(X>=0) = 1; Holm over 4 categories
    assert cats["character"]["p_value"] == pytest.approx(0.15625)
    assert cats["setting"]["p_holm"] == pytest.approx(0.25)
    assert cats["character"]["p_holm"] == pytest.approx(0.46875)
    assert cats["causality/motivation"]["p_holm"] == 1.0
    assert set(out["breakdown"]["by_decade"]) == {"1940s", "1960s", "1920s"}
    assert [r["value"] for r in out["item_scores"]] == [1, 1, 0, 1, 0, 1, 0, 0, 1, 1]
    assert [r["item_id"] for r in out["item_scores"]] == [f"q{i}" for i in range(1, 11)]
    assert set(out["reconstructed"]) >= set(fm.METRICS)
    json.dumps(out, allow_nan=False)


def test_mixed_option_counts_use_the_poisson_binomial():
    ks = [4, 4, 5, 5, 2]
    key = [fm.AnswerKeyItem(item_id=f"i{j}", num_options=k, answer_idx=0, film_id=f"f{j}") for j, k in enumerate(ks)]
    pred = [fm.PredictionItem(item_id=f"i{j}", choice_idx=0 if j < 3 else 1) for j in range(5)]
    out = fm.score(key, pred, fm.Params())
    assert out["scores"]["chance"]["value"] == pytest.approx(0.28)  # chance of the synthetic set
    assert out["scores"]["p_value_vs_chance"]["value"] == pytest.approx(0.12875, abs=1e-12)  # V8
    assert out["breakdown"]["overall"]["chance_test"] == "poisson-binomial"


def test_missing_predictions_score_zero_and_lower_coverage(fixture_items):
    key, pred = fixture_items
    out = fm.score(key, pred[2:], fm.Params())  # q1, q2 (both correct) not answered
    assert out["coverage"] == pytest.approx(0.8)
    assert out["scores"]["accuracy"]["value"] == pytest.approx(0.4)
    assert out["breakdown"]["overall"]["n_missing"] == 2
    assert out["item_scores"][0] == {"item_id": "q1", "value": 0.0}


def test_near_chance_flag():
    # 27% at n = 500 with K = 4: two-sided p = 0.30 and the Wilson CI covers 0.25 (the scale check)
    key = [fm.AnswerKeyItem(item_id=f"i{j}", num_options=4, answer_idx=0, film_id=f"f{j % 50}") for j in range(500)]
    pred = [fm.PredictionItem(item_id=f"i{j}", choice_idx=0 if j < 135 else 1) for j in range(500)]
    overall = fm.score(key, pred, fm.Params())["breakdown"]["overall"]
    assert overall["p_value_two_sided"] == pytest.approx(0.30, abs=0.005)
    assert overall["near_chance"] is True


def test_single_film_falls_back_to_binomial_se(fixture_items):
    key, pred = fixture_items
    one_film = [k.model_copy(update={"film_id": "only"}) for k in key]
    out = fm.score(one_film, pred, fm.Params())
    assert out["scores"]["clustered_se"]["value"] == pytest.approx(0.15492, abs=5e-6)
    assert out["breakdown"]["overall"]["clustered_se_kind"].startswith("binomial")


def test_array_path_equals_item_path(fixture_items):
    key, pred = fixture_items
    out = fm.score(key, pred, fm.Params())
    codes, _ = factorize([k.film_id for k in key])
    correct, scores, _ = fm.score_arrays(
        np.array([k.num_options for k in key]),
        np.array([k.answer_idx for k in key]),
        codes,
        np.arange(10),
        np.array([p.choice_idx for p in pred]),
        fm.Params(),
    )
    assert scores == out["scores"]
    assert correct.tolist() == [r["value"] for r in out["item_scores"]]


@pytest.mark.parametrize(
    ("mutate", "loc"),
    [
        (
            lambda k, p: ([k[0], k[1].model_copy(update={"answer_idx": 3, "num_options": 3})], p[:1]),
            ("answer_key", "items", 1, "answer_idx"),
        ),
        (lambda k, p: (k, [p[0].model_copy(update={"choice_idx": 4})]), ("predictions", "items", 0, "choice_idx")),
        (lambda k, p: (k, [*p[:2], p[0]]), ("predictions", "items", 2, "item_id")),
        (lambda k, p: (k, [fm.PredictionItem(item_id="nope", choice_idx=0)]), ("predictions", "items", 0, "item_id")),
        (lambda k, p: ([*k, k[3]], p), ("answer_key", "items", 10, "item_id")),
        (lambda k, p: ([], p), ("answer_key", "items")),
    ],
)
def test_domain_errors_name_the_field(fixture_items, mutate, loc):
    key, pred = mutate(*fixture_items)
    with pytest.raises(InvalidInput) as err:
        fm.score(key, pred, fm.Params())
    assert err.value.loc == loc


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (fm.AnswerKeyItem, {"item_id": "a", "num_options": 1, "answer_idx": 0, "film_id": "f"}),
        (fm.AnswerKeyItem, {"item_id": "a", "num_options": 4, "answer_idx": 0, "film_id": "f", "extra": 1}),
        (fm.AnswerKeyItem, {"item_id": "", "num_options": 4, "answer_idx": 0, "film_id": "f"}),
        (fm.AnswerKeyItem, {"item_id": "a", "num_options": 4, "answer_idx": 0, "film_id": "f", "split": "dev"}),
        (fm.PredictionItem, {"item_id": "a", "choice_idx": -1}),
        (fm.PredictionItem, {"item_id": "a", "choice_idx": "1"}),
        (fm.Params, {"confidence": 1.0}),
        (fm.Params, {"alpha": 0.0}),
    ],
)
def test_schema_rejects_bad_values(model, data):
    with pytest.raises(ValidationError):
        model.model_validate(data)


@pytest.mark.slow
def test_large_random_benchmark_is_consistent():
    rng = np.random.default_rng(0)
    n = 20_000
    ks = rng.integers(4, 6, n)
    ans = rng.integers(0, 4, n)
    choice = np.where(rng.random(n) < 0.3, ans, rng.integers(0, 4, n))
    key = [
        fm.AnswerKeyItem(item_id=f"i{j}", num_options=int(ks[j]), answer_idx=int(ans[j]), film_id=f"f{j % 97}")
        for j in range(n)
    ]
    pred = [fm.PredictionItem(item_id=f"i{j}", choice_idx=int(choice[j])) for j in range(n)]
    out = fm.score(key, pred, fm.Params())
    acc = float(np.mean(choice == ans))
    assert out["scores"]["accuracy"]["value"] == pytest.approx(acc)
    assert out["scores"]["chance"]["value"] == pytest.approx(float(np.mean(1 / ks)))
    # accuracy ≈ 0.3 + 0.7·chance ≈ 0.46 is far above chance ≈ 0.225: a vanishing one-sided p-value
    assert out["scores"]["p_value_vs_chance"]["value"] < 1e-300


def _key_pred(correct_by_film: dict[str, list[int]], element: dict[str, str] | None = None) -> tuple[list, list]:
    """K = 4 items per film; ``correct_by_film[f][j]`` says whether the j-th item of film f is answered right."""
    key, pred = [], []
    for film, marks in correct_by_film.items():
        for j, ok in enumerate(marks):
            item = f"{film}-{j}"
            label = None if element is None else element[film]
            key.append(
                fm.AnswerKeyItem(item_id=item, num_options=4, answer_idx=0, film_id=film, narrative_element=label)
            )
            pred.append(fm.PredictionItem(item_id=item, choice_idx=0 if ok else 1))
    return key, pred


def test_near_chance_needs_both_conditions():
    # 4 of 7 at K = 4: two-sided p = 0.0706 >= 0.05, but the Wilson CI [0.2505, 0.8418] excludes chance 0.25
    key, pred = _key_pred({"f": [1, 1, 1, 1, 0, 0, 0]})
    overall = fm.score(key, pred, fm.Params())["breakdown"]["overall"]
    assert overall["p_value_two_sided"] == pytest.approx(0.070556640625, rel=1e-9, abs=0)
    assert fm.score(key, pred, fm.Params())["scores"]["accuracy"]["ci_low"] == pytest.approx(0.25046, abs=5e-6)
    assert overall["near_chance"] is False
    # 5 of 10 with alpha = 0.2: the CI [0.2366, 0.7634] holds 0.25, but p = P(X >= 5) + P(X = 0) = 0.1344 < 0.2
    key, pred = _key_pred({"f": [1] * 5 + [0] * 5})
    overall = fm.score(key, pred, fm.Params(alpha=0.2))["breakdown"]["overall"]
    hand = sum(comb(10, i) * 0.25**i * 0.75 ** (10 - i) for i in range(5, 11)) + 0.75**10
    assert overall["p_value_two_sided"] == pytest.approx(hand, rel=1e-9, abs=0)
    assert overall["near_chance"] is False
    assert fm.score(key, pred, fm.Params(alpha=0.05))["breakdown"]["overall"]["near_chance"] is True


def test_two_films_use_the_clustered_se():
    key, pred = _key_pred({"A": [1, 1, 0, 1, 0, 1], "B": [0, 0, 1, 1]})
    out = fm.score(key, pred, fm.Params())
    # p̂ = 0.6, residuals 4 − 3.6 and 2 − 2.4: sqrt(2/1 · (0.16 + 0.16)) / 10
    assert out["scores"]["clustered_se"]["value"] == pytest.approx(0.08, rel=1e-12, abs=0)
    assert out["scores"]["clustered_se"]["n"] == 2
    assert out["breakdown"]["overall"]["clustered_se_kind"] == "film-clustered"


def test_holm_adjustment_decides_category_significance():
    # two categories of 8 items at K = 4, 5 right each: raw p = P(X >= 5 | 8, 1/4) = 1789/65536 = 0.0273 < 0.05,
    # Holm-adjusted 2 · 0.0273 = 0.0546: neither is significant
    element = {"A": "character", "B": "setting"}
    key, pred = _key_pred({"A": [1] * 5 + [0] * 3, "B": [1] * 5 + [0] * 3}, element)
    cats = fm.score(key, pred, fm.Params())["breakdown"]["by_narrative_element"]
    for cat in cats.values():
        assert cat["p_value"] == pytest.approx(1789 / 65536, rel=1e-12, abs=0)
        assert cat["p_holm"] == pytest.approx(1789 / 32768, rel=1e-12, abs=0)
        assert cat["significant_holm"] is False
    # one stronger category (6 of 8: p = 277/65536) lets the step-down keep the other at its raw p
    key, pred = _key_pred({"A": [1] * 6 + [0] * 2, "B": [1] * 5 + [0] * 3}, element)
    cats = fm.score(key, pred, fm.Params())["breakdown"]["by_narrative_element"]
    assert cats["character"]["p_holm"] == pytest.approx(2 * 277 / 65536, rel=1e-12, abs=0)
    assert cats["setting"]["p_holm"] == pytest.approx(1789 / 65536, rel=1e-12, abs=0)
    assert cats["character"]["significant_holm"] is True and cats["setting"]["significant_holm"] is True
    assert cats["setting"]["chance"] == 0.25 and cats["setting"]["accuracy"] == 5 / 8


def test_result_fields_are_the_documented_ones():
    # every field name and leaf type of the fixture's result (docs/scoring.md): a renamed, dropped or
    # None-valued field fails here
    key = _load("film_mcq_key.json", fm.AnswerKeyItem)
    pred = _load("film_mcq_predictions.json", fm.PredictionItem)
    expected = json.loads((FIXTURES / "film_mcq_shape.json").read_text())
    assert shape(fm.score(key, pred, fm.Params())) == expected


def test_item_matching_handles_order_and_duplicates():
    from service.scoring._common import match_items

    assert match_items(["a", "b", "c"], ["a", "b", "c"]).tolist() == [0, 1, 2]
    assert match_items(["a", "b", "c"], ["c", "a", "b"]).tolist() == [2, 0, 1]  # same length, other order
    assert match_items(["a", "b", "c"], ["b"]).tolist() == [1]
    for pred, j in ((["a", "a"], 1), (["c", "b", "b"], 2), (["b", "c", "a", "c"], 3)):
        with pytest.raises(InvalidInput) as err:
            match_items(["a", "b", "c"], pred)
        assert err.value.loc == ("predictions", "items", j, "item_id")


def test_result_helpers_reject_non_finite_values_by_name():
    from service.errors import Degenerate
    from service.scoring._common import group_means, metric, multi_group_means, result

    with pytest.raises(Degenerate) as err:
        metric(float("nan"))
    assert err.value.loc == ("value",)
    with pytest.raises(Degenerate) as err:
        result({}, {}, float("inf"), [], ["a"], np.array([1.0]))
    assert err.value.loc == ("coverage",)
    with pytest.raises(Degenerate) as err:
        result({}, {}, 1.0, [], ["a"], np.array([np.nan]))
    assert err.value.loc == ("item_scores",)
    assert group_means(["x", "y", "x", None], np.array([1.0, 2.0, 3.0, 9.0])) == {
        "x": {"n": 2, "score": 2.0},
        "y": {"n": 1, "score": 2.0},
    }
    assert multi_group_means([["x"], ["x", "y"]], np.array([1.0, 3.0]), 10.0) == {
        "x": {"n": 2, "score": 20.0},
        "y": {"n": 1, "score": 30.0},
    }
    assert multi_group_means([[], []], np.array([1.0, 3.0])) == {}


def test_small_keys_and_single_option_count():
    one = [fm.AnswerKeyItem(item_id="a", num_options=4, answer_idx=0, film_id="f")]
    overall = fm.score(one, [fm.PredictionItem(item_id="a", choice_idx=0)], fm.Params())["breakdown"]["overall"]
    assert overall["lm_eval_se"] is None and overall["chance_test"] == "binomial"
    assert overall["option_counts"] == {"4": 1}
    two = [*one, fm.AnswerKeyItem(item_id="b", num_options=4, answer_idx=1, film_id="f")]
    overall = fm.score(two, [fm.PredictionItem(item_id="a", choice_idx=0)], fm.Params())["breakdown"]["overall"]
    assert overall["lm_eval_se"] == pytest.approx(0.5, rel=1e-12, abs=0)  # [1, 0]: sd 0.7071 / sqrt 2


def test_category_with_a_lone_option_count_and_its_own_confidence():
    # "setting": three K = 4 items and one K = 2 item (a count of exactly one), all answered right
    key = [
        fm.AnswerKeyItem(item_id=f"s{j}", num_options=k, answer_idx=0, film_id="f", narrative_element="setting")
        for j, k in enumerate((4, 4, 4, 2))
    ]
    pred = [fm.PredictionItem(item_id=f"s{j}", choice_idx=0) for j in range(4)]
    cat = fm.score(key, pred, fm.Params(confidence=0.8))["breakdown"]["by_narrative_element"]["setting"]
    assert cat["chance"] == pytest.approx((3 / 4 + 1 / 2) / 4, rel=1e-12, abs=0)
    assert cat["p_value"] == pytest.approx(0.25**3 * 0.5, rel=1e-12, abs=0)  # all four right
    assert (cat["ci_low"], cat["ci_high"]) == pytest.approx(wilson(4, 4, 0.8), rel=1e-12, abs=0)


def test_decade_table_of_the_synthetic_example(fixture_items):
    # correct = [1,1,0,1 | 0,1,0,0 | 1,1]: 1940 → 3/4, 1968 → 1/4, 1921 → 2/2, all K = 4. Exact tails
    # P(X >= 3 | 4) = 13/256, P(X >= 1 | 4) = 175/256, P(X >= 2 | 2) = 16/256; Holm over 3: 39/256 for the two
    # smallest (3 · 13/256, then max(2 · 16/256, 39/256)), 175/256 for the last
    key, pred = fixture_items
    out = fm.score(key, pred, fm.Params())
    decades = out["breakdown"]["by_decade"]
    got = {d: (v["correct"], v["n"], v["accuracy"], v["chance"], v["p_value"], v["p_holm"]) for d, v in decades.items()}
    assert got == {
        "1940s": (3, 4, 0.75, 0.25, pytest.approx(13 / 256, rel=1e-12, abs=0), pytest.approx(39 / 256, rel=1e-12)),
        "1960s": (1, 4, 0.25, 0.25, pytest.approx(175 / 256, rel=1e-12, abs=0), pytest.approx(175 / 256, rel=1e-12)),
        "1920s": (2, 2, 1.0, 0.25, pytest.approx(16 / 256, rel=1e-12, abs=0), pytest.approx(39 / 256, rel=1e-12)),
    }
    assert out["breakdown"]["by_modality"] == {}  # no item carries modality_needed
    assert out["breakdown"]["protocol"] == "reconstructed-v1"


def test_modality_table_uses_correctness_option_counts_and_params(fixture_items):
    # visual q1-q3 (1,1,0), audio q4-q7 (1,0,1,0), both q8-q10 (0,1,1); K = 4 everywhere, confidence 0.8
    key, pred = fixture_items
    modality = ["visual"] * 3 + ["audio"] * 4 + ["both"] * 3
    key = [k.model_copy(update={"modality_needed": m}) for k, m in zip(key, modality, strict=True)]
    table = fm.score(key, pred, fm.Params(confidence=0.8))["breakdown"]["by_modality"]
    assert {m: (v["correct"], v["n"], v["chance"]) for m, v in table.items()} == {
        "visual": (2, 3, 0.25),
        "audio": (2, 4, 0.25),
        "both": (2, 3, 0.25),
    }
    assert table["audio"]["p_value"] == pytest.approx(1 - (3 / 4) ** 4 - 4 * (3 / 4) ** 3 / 4, rel=1e-12, abs=0)
    assert (table["audio"]["ci_low"], table["audio"]["ci_high"]) == pytest.approx(wilson(2, 4, 0.8), rel=1e-12)


def test_a_category_whose_holm_p_equals_alpha_is_not_significant():
    # one category, 2 of 2 right at K = 4: p = Holm p = 1/16 exactly; significance needs p < alpha
    key, pred = _key_pred({"f": [1, 1]}, {"f": "setting"})
    cat = fm.score(key, pred, fm.Params(alpha=0.0625))["breakdown"]["by_narrative_element"]["setting"]
    assert cat["p_holm"] == 0.0625 and cat["significant_holm"] is False
    cat = fm.score(key, pred, fm.Params(alpha=0.0626))["breakdown"]["by_narrative_element"]["setting"]
    assert cat["significant_holm"] is True


def test_accuracy_interval_follows_the_confidence_level():
    # 4 of 7 at confidence 0.8 (z = 1.2815516): Wilson (p̂ + z²/2n ± z·sqrt(p̂q̂/n + z²/4n²)) / (1 + z²/n)
    key, pred = _key_pred({"f": [1, 1, 1, 1, 0, 0, 0]})
    acc = fm.score(key, pred, fm.Params(confidence=0.8))["scores"]["accuracy"]
    z, n, p = 1.2815515655446004, 7, 4 / 7
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    centre, scale = p + z * z / (2 * n), 1 + z * z / n
    assert (acc["ci_low"], acc["ci_high"]) == pytest.approx(
        ((centre - half) / scale, (centre + half) / scale), rel=1e-12
    )


def test_a_two_sided_p_equal_to_alpha_is_near_chance():
    # 5 of 10 at K = 4: the Wilson CI [0.2366, 0.7634] holds 0.25; near chance needs p >= alpha, equality included
    key, pred = _key_pred({"f": [1] * 5 + [0] * 5})
    p_two = fm.score(key, pred, fm.Params())["breakdown"]["overall"]["p_value_two_sided"]
    assert p_two == pytest.approx(0.134, abs=5e-4)
    assert fm.score(key, pred, fm.Params(alpha=p_two))["breakdown"]["overall"]["near_chance"] is True


def test_chance_on_a_wilson_bound_counts_as_inside():
    # at this confidence the Wilson bounds of 5/10 and 0/10 land exactly on chance 0.25 (found by bisection);
    # both two-sided p-values are 0.134 >= 0.05, so both are near chance: the interval is closed
    confidence = 0.932110845138171
    for marks, bound in (([1] * 5 + [0] * 5, "ci_low"), ([0] * 10, "ci_high")):
        key, pred = _key_pred({"f": marks})
        out = fm.score(key, pred, fm.Params(confidence=confidence))
        assert out["scores"]["accuracy"][bound] == 0.25
        assert out["breakdown"]["overall"]["near_chance"] is True
