"""film_mcq scorer: spec D_benchmarks_1 §4 synthetic test, V7-V9, validation, array path."""

import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import TypeAdapter, ValidationError

from service.errors import InvalidInput
from service.registry import SCORERS
from service.scoring import film_mcq as fm
from service.stats import factorize

FIXTURES = Path(__file__).parent / "fixtures"


def _load(name: str, model: type) -> list:
    return TypeAdapter(dict[str, list[model]]).validate_json((FIXTURES / name).read_bytes())["items"]


@pytest.fixture(scope="module")
def fixture_items():
    return _load("film_mcq_key.json", fm.AnswerKeyItem), _load("film_mcq_predictions.json", fm.PredictionItem)


def test_registered_spec():
    spec = SCORERS["film_mcq"]
    assert spec is fm.SPEC and spec.primary_metric in spec.metrics
    assert spec.cost(10, 12) == 22.0  # n_key + n_pred


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
    assert out["scores"]["chance"]["value"] == pytest.approx(0.28)  # §4
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
    # 27% at n = 500 with K = 4: two-sided p = 0.30 and the Wilson CI covers 0.25 (§4 scale check)
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
