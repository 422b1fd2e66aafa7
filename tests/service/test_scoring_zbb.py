"""zbb scorer: the IWOR toy and the 15-item baseline/steered fixture (both metrics, Wilson, coverage, McNemar)."""

import json

import pytest

from service.errors import Degenerate, InvalidInput
from service.registry import SCORERS
from service.scoring import zbb
from service.stats import mcnemar, mcnemar_exact

# (id, user_text, reference, aliases, baseline response, baseline judge, steered response, steered judge)
FIXTURE = [
    ("q01", "Tokyo is the capital of which country?", "Japan", None,
     "and that is why the weather stays mild in spring.", None, "Tokyo is the capital of Japan.", None),
    ("q02", "Bananas, what color are they when ripe?", "yellow", None,
     "They are yellow.", None, "Ripe bananas are yellow.", None),
    ("q03", "Um, Jupiter has how many moons?", "ninety-five", ["95"],
     "so the recipe needs two cups of flour.", None, "Jupiter has 95 known moons.", None),
    ("q04", "WHALES: are they fish or mammals?", "mammals", None,
     "Whales? Sorry, I was saying the train leaves at nine.", None, "Whales are mammals, not fish.", None),
    ("q05", "Hey, who wrote Hamlet?", "Shakespeare", ["William Shakespeare"],
     "as I said, the museum opens at ten.", None, "Hamlet was written by Shakespeare.", None),
    ("q06", "Oxygen's chemical symbol is what?", "O", None,
     "The symbol for oxygen is O.", None, "Oxygen's symbol is O.", None),
    ("q07", "Seven times eight equals what?", "fifty-six", ["56"],
     "Seven times eight is fifty six.", None, "Seven times eight is 56.", None),
    ("q08", "Mount Everest is in which mountain range?", "Himalayas", ["Himalaya"],
     "Everest is in the Himalayas.", None, "Mount Everest lies in the Himalaya.", None),
    ("q09", "Penguins live mostly in which hemisphere?", "southern", None,
     "the train leaves at nine.", None, "Penguins live mostly in the southern hemisphere.", None),
    ("q10", "Uh, um, Canberra is the capital of?", "Australia", None,
     "Canberra... sorry, could you repeat that?", None, "Canberra is the capital of Australia.", None),
    ("q11", "Spiders have how many legs?", "eight", ["8"],
     "Spiders have eight legs.", None, "Spiders have six legs.", None),
    ("q12", "Dolphins breathe through what?", "blowhole", ["blow hole"],
     "through the hole on top of their heads", True, "Dolphins breathe through a blowhole.", None),
    ("q13", "Lima is the capital of which country?", "Peru", None,
     "Lima, not Peru, is in Chile I think.", False, "Lima is the capital of Peru.", None),
    ("q14", "Hey, what is the boiling point of water in Celsius?", "one hundred", ["100"],
     "so anyway, the meeting moved to Friday.", None, "Water boils at 100 degrees Celsius.", None),
    ("q15", "Oh, what planet is closest to the Sun?", "Mercury", None,
     None, None, "Mercury is closest.", None),
]  # fmt: skip

KEY = [zbb.AnswerKeyItem(item_id=r[0], user_text=r[1], reference=r[2], aliases=r[3]) for r in FIXTURE]


def _preds(column: int) -> list[zbb.PredictionItem]:
    return [
        zbb.PredictionItem(item_id=r[0], response_text=r[column], judge_correct=r[column + 1])
        for r in FIXTURE
        if r[column] is not None
    ]


BASELINE, STEERED = _preds(4), _preds(6)


def _flags(out: dict, metric: str) -> str:
    """Flags over q01..q15 as in the fixture table, '-' for an item without a prediction."""
    got = dict(zip([r["item_id"] for r in out["item_scores"]], out["item_metrics"][metric], strict=True))
    return "".join("-" if r[0] not in got else str(int(got[r[0]])) for r in FIXTURE)


def _paired(a: dict, b: dict, metric: str) -> dict:
    """McNemar on the ids both outputs scored (as the platform's compare does)."""
    xa = dict(zip([r["item_id"] for r in a["item_scores"]], a["item_metrics"][metric], strict=True))
    xb = dict(zip([r["item_id"] for r in b["item_scores"]], b["item_metrics"][metric], strict=True))
    common = sorted(xa.keys() & xb.keys())
    return mcnemar([xa[i] for i in common], [xb[i] for i in common])


# metric row -> params, then (flags, k, n, Wilson) for baseline and steered, then (b, c, p); printed to 6 decimals
TABLE = {
    "correctness": (
        {},
        ("01000111001100-", 6, 14, (0.213808, 0.674094)),
        ("111111111101111", 14, 15, (0.701835, 0.988133)),
        (1, 8, 0.0390625),
    ),
    "iwor": (
        {},
        ("00010010011010-", 5, 14, (0.163447, 0.612356)),
        ("111101111111100", 12, 15, (0.548146, 0.929525)),
        (0, 7, 0.015625),
    ),
    "iwor_n2": (
        {"n_initial": 2},
        ("00000010001010-", 3, 14, (0.075714, 0.475892)),
        ("101100111111100", 10, 15, (0.417135, 0.848237)),
        (0, 7, 0.015625),
    ),
    "iwor_no_fillers": (
        {"skip_fillers": False},
        ("00010010001010-", 4, 14, (0.117214, 0.546491)),
        ("110101111011100", 10, 15, (0.417135, 0.848237)),
        (0, 6, 0.03125),
    ),
}


def test_registered_spec_and_paired_tests():
    spec = SCORERS["zbb"]
    assert spec is zbb.SPEC and spec.primary_metric == "correctness"
    assert set(zbb.PAIRED_TESTS) == set(spec.metrics) == {"correctness", "iwor"}
    assert set(zbb.PAIRED_TESTS.values()) == {"mcnemar"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Oxygen's", ["oxygens"]),
        ("fifty-six", ["fifty", "six"]),
        ("Hey, who wrote Hamlet?", ["hey", "who", "wrote", "hamlet"]),
        ("Canberra... sorry", ["canberra", "sorry"]),
        ("ＷＨＡＬＥＳ: l’eau_x", ["whales", "leau", "x"]),  # NFKC folds full-width letters; '_' fails isalnum
    ],
)
def test_tokens(text, expected):
    assert zbb.tokens(text) == expected


@pytest.mark.parametrize("row", list(TABLE))
def test_fixture_table(row):
    """Every flag, k/n, Wilson interval and McNemar figure of the baseline/steered fixture table."""
    overrides, base_row, steer_row, (b, c, p) = TABLE[row]
    metric = "correctness" if row == "correctness" else "iwor"
    params = zbb.Params(**overrides)
    outs = [zbb.score(KEY, preds, params) for preds in (BASELINE, STEERED)]
    for out, (flags, k, n, (low, high)) in zip(outs, (base_row, steer_row), strict=True):
        assert _flags(out, metric) == flags
        s = out["scores"][metric]
        assert s["n"] == n and s["value"] == pytest.approx(k / n, abs=1e-12)
        assert (s["ci_low"], s["ci_high"]) == pytest.approx((low, high), abs=5e-7)
        json.dumps(out, allow_nan=False)
    assert _paired(*outs, metric) == {"b": b, "c": c, "p_value": pytest.approx(p, rel=1e-12, abs=0)}
    assert outs[0]["coverage"] == pytest.approx(14 / 15) and outs[1]["coverage"] == 1.0
    assert outs[0]["breakdown"]["n_missing"] == 1 and outs[0]["breakdown"]["n_answered"] == 14


def test_correctness_does_not_depend_on_iwor_options():
    for params in (zbb.Params(n_initial=2), zbb.Params(skip_fillers=False)):
        assert _flags(zbb.score(KEY, BASELINE, params), "correctness") == TABLE["correctness"][1][0]


def test_item_scores_hold_the_primary_metric_in_key_order():
    out = zbb.score(KEY, BASELINE[::-1], zbb.Params())
    assert [r["item_id"] for r in out["item_scores"]] == [f"q{i:02d}" for i in range(1, 15)]
    assert [r["value"] for r in out["item_scores"]] == out["item_metrics"]["correctness"]
    assert out["breakdown"]["judge_labelled"] == 2


def test_iwor_toy():
    """Four-item toy: IWOR [1, 0, 1, 1] = 0.75, correctness 4/4; without filler skipping IWOR [1, 0, 0, 1]."""
    rows = [FIXTURE[0], ("t2", "Bananas, what color are they?", "yellow", None, "They are yellow.", None),
            FIXTURE[2], FIXTURE[3]]  # fmt: skip
    key = [zbb.AnswerKeyItem(item_id=r[0], user_text=r[1], reference=r[2], aliases=r[3]) for r in rows]
    responses = [FIXTURE[0][6], "They are yellow.", FIXTURE[2][6], FIXTURE[3][6]]
    pred = [zbb.PredictionItem(item_id=r[0], response_text=t) for r, t in zip(rows, responses, strict=True)]
    out = zbb.score(key, pred, zbb.Params())
    assert out["item_metrics"]["iwor"] == [1.0, 0.0, 1.0, 1.0]
    iwor, correct = out["scores"]["iwor"], out["scores"]["correctness"]
    assert (iwor["value"], iwor["ci_low"], iwor["ci_high"]) == pytest.approx((0.75, 0.300642, 0.954413), abs=5e-7)
    assert (correct["value"], correct["ci_low"], correct["ci_high"]) == pytest.approx((1.0, 0.510109, 1.0), abs=5e-7)
    plain = zbb.score(key, pred, zbb.Params(skip_fillers=False))
    assert plain["item_metrics"]["iwor"] == [1.0, 0.0, 0.0, 1.0] and plain["scores"]["iwor"]["value"] == 0.5


def test_headline_counts_and_mcnemar_anchor():
    """Headline counts at N = 100 (28 → 45 correct) and the b = 3, c = 20 McNemar anchor."""
    key = [zbb.AnswerKeyItem(item_id=f"i{j}", user_text="Paris is where?", reference="France") for j in range(100)]
    pred = [zbb.PredictionItem(item_id=f"i{j}", response_text="France" if j < 28 else "no idea") for j in range(100)]
    s = zbb.score(key, pred, zbb.Params())["scores"]["correctness"]
    assert (s["value"], s["ci_low"], s["ci_high"]) == pytest.approx((0.28, 0.201, 0.375), abs=5e-4)
    assert mcnemar_exact(3, 20) == pytest.approx(4.8828125e-4, rel=1e-9, abs=0)


@pytest.mark.parametrize(
    ("key_kw", "pred_kw", "params", "loc"),
    [
        ({"user_text": "uh, um?"}, {}, {}, ("answer_key", "items", 0, "user_text")),
        ({"user_text": "Paris?"}, {}, {"n_initial": 2}, ("answer_key", "items", 0, "user_text")),
        ({"reference": "?!"}, {}, {}, ("answer_key", "items", 0, "reference")),
        ({"aliases": ["ok", "--"]}, {}, {}, ("answer_key", "items", 0, "aliases", 1)),
        ({}, {}, {"fillers": ["uh", "you know"]}, ("fillers", 1)),
        ({}, {"item_id": "nope"}, {}, ("predictions", "items", 0, "item_id")),
    ],
)
def test_invalid_inputs_name_the_field(key_kw, pred_kw, params, loc):
    key = [zbb.AnswerKeyItem(**{"item_id": "a", "user_text": "Paris is where?", "reference": "France", **key_kw})]
    pred = [zbb.PredictionItem(**{"item_id": "a", "response_text": "In France.", **pred_kw})]
    with pytest.raises(InvalidInput) as err:
        zbb.score(key, pred, zbb.Params(**params))
    assert err.value.loc == loc


def test_no_prediction_is_degenerate():
    with pytest.raises(Degenerate) as err:
        zbb.score(KEY, [], zbb.Params())
    assert err.value.loc == ("predictions",)


def test_answer_key_size_limit_is_inclusive():
    """MAX_ITEMS = 20,000 key items pass the size check (this key then fails on its repeated item id, the next
    check); one more is refused on the answer key's item list itself."""
    item = zbb.AnswerKeyItem(item_id="x", user_text="Paris is where?", reference="France")
    for n, loc in ((20_000, ("answer_key", "items", 1, "item_id")), (20_001, ("answer_key", "items"))):
        with pytest.raises(InvalidInput) as err:
            zbb.score([item] * n, [], zbb.Params())
        assert err.value.loc == loc


def test_unanswered_key_items_are_validated_too():
    """A bad answer-key item is refused whether or not it was answered (and whatever the judge said)."""
    key = [
        zbb.AnswerKeyItem(item_id="a", user_text="Paris is where?", reference="France"),
        zbb.AnswerKeyItem(item_id="b", user_text="Um?", reference="x"),
    ]
    pred = [zbb.PredictionItem(item_id="a", response_text="Paris is in France", judge_correct=False)]
    with pytest.raises(InvalidInput) as err:
        zbb.score(key, pred, zbb.Params())
    assert err.value.loc == ("answer_key", "items", 1, "user_text")
    out = zbb.score(key[:1], pred, zbb.Params())
    assert out["item_metrics"] == {"correctness": [0.0], "iwor": [1.0]}  # the judge label overrides the match


def test_cost_counts_characters():
    key = [zbb.AnswerKeyItem(item_id="a", user_text="abc", reference="de", aliases=["f", "gh"])]
    pred = [zbb.PredictionItem(item_id="a", response_text="12345")]
    assert zbb.cost(key, pred, zbb.Params()) == 3 + 2 + 3 + 5


def test_tokens_compose_accents_and_fold_compatibility_forms():
    """NFKC: a decomposed 'é' is recomposed into one alphanumeric (NFKD would leave a combining mark, a separator)
    and the 'ﬁ' ligature folds to 'fi' (NFC keeps it)."""
    assert zbb.tokens("Cafe\u0301 ﬁsh") == ["café", "fish"]


def test_iwor_accepts_a_response_made_of_the_initial_words_only():
    """w₁ ⊆ response tokens, equality included: the one-word reply 'Paris.' to 'Paris is where?' is IWOR-positive."""
    key = [zbb.AnswerKeyItem(item_id="a", user_text="Paris is where?", reference="France")]
    out = zbb.score(key, [zbb.PredictionItem(item_id="a", response_text="Paris.")], zbb.Params())
    assert out["item_metrics"] == {"correctness": [0.0], "iwor": [1.0]}


def test_breakdown_reports_counts_and_rules():
    """Baseline fixture with fillers 'Uh,' and 'UM' (normalised to uh, um): 15 key items, 14 answered, 6 correct,
    2 judge labels (q12, q13); IWOR hits stay 5 (q04, q07, q10, q11, q13): q10 still skips 'Uh, um,' and the
    baseline misses q05 and q14 whether their w₁ is 'hey' or the word after it."""
    out = zbb.score(KEY, BASELINE, zbb.Params(fillers=["Uh,", "UM"]))
    assert out["breakdown"] == {
        "n_items": 15,
        "n_answered": 14,
        "n_missing": 1,
        "correct": 6,
        "iwor_hits": 5,
        "judge_labelled": 2,
        "rules": {
            "tokens": "NFKC, lower case, apostrophes deleted, non-alphanumerics as spaces, split on whitespace",
            "iwor": "every initial word is a response token (exact match)",
            "correctness": "judge_correct when given, else a contiguous token-run match of the reference or an alias",
            "n_initial": 1,
            "fillers": ["uh", "um"],
        },
        "protocol": "reconstructed-v1",
    }
    assert out["reconstructed"] == ["correctness", "iwor"]
    assert zbb.score(KEY, BASELINE, zbb.Params(skip_fillers=False))["breakdown"]["rules"]["fillers"] == []
