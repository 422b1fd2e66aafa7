"""The vectorised submission path: prediction items checked as columns (``item_columns``) and scored by split with
numpy alignment (``score_by_split``) give what the per-item path gives. Valid items: the same values, the same
stored JSON text and the same scores, with accuracy also counted by hand; each kind of invalid item: the vectorised
check declines and the model's validator gives its errors (message, loc, type); unknown, duplicate and
out-of-range items: the same error as a per-item reference of the split logic (the one used before the columns)."""

import json
import random
from typing import Any

import numpy as np
import pytest

from service.errors import Degenerate, InvalidInput
from service.registry import SCORERS, load_all
from service.scoring import film_mcq
from service.scoring._common import ItemColumns, ItemValues, item_values_as_arrays
from usecases import scoring
from usecases.errors import InvalidFields
from usecases.scoring import (
    _score,
    by_item_id,
    check_unique,
    dump_columns,
    dump_items,
    item_columns,
    key_columns,
    score_by_split,
    validate_columns,
    validate_items,
)
from usecases.submissions import NewSubmission

PRED = film_mcq.PredictionItem
LOC = ("predictions", "items")
ID_CHARS = 'abcXYZ019 _-/"\\\t\né€😀\x7f\x00\u2028'


@pytest.fixture(scope="module")
def spec() -> Any:
    load_all()
    return SCORERS["film_mcq"]


def _ids(rng: random.Random, n: int) -> list[str]:
    ids: set[str] = set()
    while len(ids) < n:
        ids.add("".join(rng.choice(ID_CHARS) for _ in range(rng.randint(1, 12))))
    return sorted(ids)


def _key(rng: random.Random, n: int) -> list[dict]:
    """Answer-key items with both splits, option counts 2-26, a few films, some metadata, in random order."""
    items = []
    for item_id in _ids(rng, n):
        k = rng.randint(2, 26)
        item = {"item_id": item_id, "num_options": k, "answer_idx": rng.randrange(k), "film_id": f"f{rng.randrange(5)}"}
        if rng.random() < 0.3:
            item["split"] = "private"
        if rng.random() < 0.5:
            item["narrative_element"] = rng.choice(["emotion", "setting"])
            item["release_year"] = rng.randint(1920, 1969)
        items.append(item)
    rng.shuffle(items)
    return items


def _preds(rng: random.Random, key: list[dict], share: float = 0.8) -> list[dict]:
    """Predictions for a random share of the key, in random order, each key order (item_id or choice_idx first)."""
    preds = []
    for k in key:
        if rng.random() < share:
            choice = k["answer_idx"] if rng.random() < 0.5 else rng.randrange(k["num_options"])
            pair = [("item_id", k["item_id"]), ("choice_idx", choice)]
            preds.append(dict(pair if rng.random() < 0.7 else pair[::-1]))
    rng.shuffle(preds)
    return preds


def _reference_score_by_split(spec: Any, key: list[Any], preds: list[Any], params: Any) -> tuple[dict, list]:
    """The split logic one item at a time (as it was before the columns): unknown ids, then duplicates, then each
    split's key and predictions sorted by item_id, a scorer error's item index moved back to the submitted list."""
    split_of = {k.item_id: k.split for k in key}
    pred_splits = [split_of.get(p.item_id) for p in preds]
    if None in pred_splits:
        i = pred_splits.index(None)
        raise InvalidInput(f"unknown item_id {preds[i].item_id!r}", ("predictions", "items", i, "item_id"))
    check_unique(preds, ("predictions", "items"))
    outcomes, items = {}, []
    for split in ("public", "private"):
        key_s = by_item_id(k for k in key if k.split == split)
        if not key_s:
            continue
        preds_s = by_item_id(p for p, s in zip(preds, pred_splits, strict=True) if s == split)
        try:
            outcomes[split], values = _score(spec, key_s, preds_s, params)
        except (InvalidInput, Degenerate) as exc:
            loc = list(exc.loc)
            every, subset = (preds, preds_s) if loc[0] == "predictions" else (key, key_s)
            item_id = subset[loc[2]].item_id
            loc[2] = next(i for i, item in enumerate(every) if item.item_id == item_id)
            private_key = loc[0] == "answer_key" and split == "private"
            raise type(exc)(scoring.PRIVATE_KEY_ITEM if private_key else exc.msg, loc) from exc
        items.append((split, [k.item_id for k in key_s], values))
    return outcomes, items


def _outcome(fn: Any, *args: Any) -> Any:
    """What ``fn`` gives: its outcomes and per-item arrays as plain values, or its error's type, message and loc."""
    try:
        outcomes, items = fn(*args)
    except (InvalidInput, Degenerate) as exc:
        return type(exc).__name__, exc.msg, tuple(exc.loc)
    parts = [p if isinstance(p, tuple) else (p.split, p.item_ids, p.values) for p in items]
    return outcomes, [(s, ids, {m: v.tolist() for m, v in values.items()}) for s, ids, values in parts]


@pytest.mark.parametrize("seed", range(8))
def test_valid_items_give_the_models_values_text_and_scores(spec: Any, seed: int) -> None:
    rng = random.Random(seed)
    key = validate_items(film_mcq.AnswerKeyItem, _key(rng, rng.randint(1, 60)), ("answer_key", "items"))
    raw = _preds(rng, [k.model_dump() for k in key])
    if not raw:
        return
    models = validate_items(PRED, raw, LOC)
    columns = item_columns(PRED, raw)
    assert isinstance(columns, ItemColumns) and isinstance(validate_columns(PRED, raw, LOC), ItemColumns)
    assert [m.model_dump() for m in columns] == [m.model_dump() for m in models]
    assert dump_items(PRED, columns) == dump_items(PRED, models)
    params = film_mcq.Params()
    expected = _outcome(_reference_score_by_split, spec, key, models, params)
    assert _outcome(score_by_split, spec, key, columns, params) == expected
    assert _outcome(score_by_split, spec, key, models, params) == expected
    answer = {k.item_id: k.answer_idx for k in key}
    split_of = {k.item_id: k.split for k in key}
    for split, outcome in expected[0].items():  # accuracy counted by hand: right answers over the split's key items
        right = sum(answer[p["item_id"]] == p["choice_idx"] for p in raw if split_of[p["item_id"]] == split)
        n = sum(k.split == split for k in key)
        assert outcome["scores"]["accuracy"]["value"] == pytest.approx(right / n, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_items_as_columns_give_the_same_idempotency_fingerprint(seed: int) -> None:
    rng = random.Random(200 + seed)
    raw = _preds(rng, _key(rng, 50), share=1.0)
    metadata = {"note": "".join(rng.choice(ID_CHARS) for _ in range(8)), "n": [1, 2.5, None, {"b": True, "a": "x"}]}
    columns = item_columns(PRED, raw)
    assert columns is not None
    as_columns = NewSubmission("modèle", columns, metadata).fingerprint()
    assert as_columns == NewSubmission("modèle", raw, metadata).fingerprint()
    assert as_columns != NewSubmission("modèle", raw[:-1], metadata).fingerprint()
    text = json.dumps(raw, sort_keys=True, separators=(",", ":"))  # ensure_ascii, as the fingerprint's
    assert dump_columns(columns, sort_keys=True, ensure_ascii=True) == text


def test_every_character_is_stored_as_the_models_serialiser_writes_it() -> None:
    """Item ids holding every code point a JSON string may hold (no lone surrogates), 128 to an id."""
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    raw = [{"item_id": "".join(chars[i : i + 128]), "choice_idx": i % 26} for i in range(0, len(chars), 128)]
    columns = item_columns(PRED, raw)
    assert columns is not None
    assert dump_items(PRED, columns) == dump_items(PRED, validate_items(PRED, raw, LOC))


GOOD = {"item_id": "q1", "choice_idx": 2}
INVALID = {
    "choice as a string": {"item_id": "q1", "choice_idx": "2"},
    "item_id as an integer": {"item_id": 7, "choice_idx": 2},
    "bool for int": {"item_id": "q1", "choice_idx": True},
    "non-integral float": {"item_id": "q1", "choice_idx": 2.5},
    "null": {"item_id": "q1", "choice_idx": None},
    "missing field": {"item_id": "q1"},
    "extra field": {"item_id": "q1", "choice_idx": 2, "confidence": 0.9},
    "unknown field instead of one": {"item_id": "q1", "choice": 2},
    "empty item_id": {"item_id": "", "choice_idx": 2},
    "item_id too long": {"item_id": "x" * 129, "choice_idx": 2},
    "choice above the model's bound": {"item_id": "q1", "choice_idx": 26},
    "negative choice": {"item_id": "q1", "choice_idx": -1},
    "integer beyond int64": {"item_id": "q1", "choice_idx": 2**70},
    "lone surrogate": {"item_id": "q\ud800", "choice_idx": 2},
    "not an object": ["q1", 2],
    "nested object": {"item_id": {"id": "q1"}, "choice_idx": 2},
}


@pytest.mark.parametrize("kind", INVALID)
@pytest.mark.parametrize("where", [0, 57, 99])
def test_each_kind_of_invalid_item_gets_the_models_errors(kind: str, where: int) -> None:
    raw = [{"item_id": f"q{i}", "choice_idx": i % 4} for i in range(100)]
    raw[where] = INVALID[kind]
    assert item_columns(PRED, raw) is None
    with pytest.raises(InvalidFields) as slow:
        validate_items(PRED, raw, LOC)
    with pytest.raises(InvalidFields) as fast:
        validate_columns(PRED, raw, LOC)
    assert fast.value.errors == slow.value.errors and str(fast.value) == str(slow.value)
    assert slow.value.errors[0]["loc"][:4] == ["body", *LOC, where]


def test_an_integral_float_is_left_to_the_model_which_takes_it_as_an_integer() -> None:
    raw = [GOOD, {"item_id": "q2", "choice_idx": 3.0}]
    assert item_columns(PRED, raw) is None
    items = validate_columns(PRED, raw, LOC)
    assert [i.choice_idx for i in items] == [2, 3] and type(items[1].choice_idx) is int
    assert dump_items(PRED, items) == '[{"item_id":"q1","choice_idx":2},{"item_id":"q2","choice_idx":3}]'


def test_models_that_are_more_than_plain_strings_and_integers_are_not_checked_as_columns() -> None:
    load_all()
    raw = [{"item_id": "a", "selected_options": ["A"]}]
    assert scoring._column_fields(SCORERS["vimu"].prediction_item_model) is None
    assert item_columns(SCORERS["vimu"].prediction_item_model, raw) is None
    assert scoring._column_fields(film_mcq.AnswerKeyItem) is None  # optional fields, a Literal
    assert scoring._column_fields(PRED) == {"item_id": ("str", 1, 128), "choice_idx": ("int", 0, 25)}
    assert item_columns(PRED, []) is None


def _scoring_error(spec: Any, key: list[Any], preds: list[Any]) -> tuple:
    params = film_mcq.Params()
    expected = _outcome(_reference_score_by_split, spec, key, preds, params)
    assert isinstance(expected, tuple), expected
    assert _outcome(score_by_split, spec, key, preds, params) == expected
    columns = item_columns(PRED, [p.model_dump() for p in preds])
    assert _outcome(score_by_split, spec, key, columns, params) == expected
    return expected


@pytest.mark.parametrize("seed", range(6))
def test_unknown_duplicate_and_out_of_range_items_are_named_as_before(spec: Any, seed: int) -> None:
    rng = random.Random(100 + seed)
    key = validate_items(film_mcq.AnswerKeyItem, _key(rng, 40), ("answer_key", "items"))
    preds = validate_items(PRED, _preds(rng, [k.model_dump() for k in key], share=0.9), LOC)
    at = [rng.randrange(len(preds)) for _ in range(2)]

    unknown = list(preds)
    for i in at:
        unknown[i] = PRED(item_id=f"zz{i}", choice_idx=0)
    assert _scoring_error(spec, key, unknown) == (
        "InvalidInput",
        f"unknown item_id 'zz{min(at)}'",
        ("predictions", "items", min(at), "item_id"),
    )

    twice = [*preds, preds[at[0]], preds[at[1]]]
    assert _scoring_error(spec, key, twice) == (
        "InvalidInput",
        f"duplicate item_id {twice[len(preds)].item_id!r}",
        ("predictions", "items", len(preds), "item_id"),
    )

    options = {k.item_id: k.num_options for k in key}
    wide = [PRED(item_id=p.item_id, choice_idx=options[p.item_id]) if options[p.item_id] < 26 else p for p in preds]
    kind, msg, loc = _scoring_error(spec, key, wide)
    assert kind == "InvalidInput" and msg.startswith(f"choice_idx {wide[loc[2]].choice_idx} is out of range")


def test_the_key_columns_are_kept_for_the_same_items_only() -> None:
    key = validate_items(film_mcq.AnswerKeyItem, _key(random.Random(7), 30), ("answer_key", "items"))
    columns = key_columns(key)
    assert key_columns(list(key)) is columns  # a copy of the list: the same item objects
    assert columns.columns["item_id"] == [k.item_id for k in key]
    assert columns.columns["num_options"] == [k.num_options for k in key]
    other = [*key[:5], key[5].model_copy(update={"answer_idx": 0}), *key[6:]]  # same first and last items
    changed = key_columns(other)
    assert changed is not columns and changed.columns["answer_idx"][5] == 0
    for n in range(scoring._KEY_COLUMNS_SIZE + 2):
        key_columns(validate_items(film_mcq.AnswerKeyItem, _key(random.Random(n), 3), ("answer_key", "items")))
    assert len(scoring._KEY_COLUMNS) == scoring._KEY_COLUMNS_SIZE
    assert key_columns(list(key)) is not columns  # dropped as the oldest


def test_item_columns_read_as_a_sequence_of_the_models() -> None:
    raw = [{"item_id": f"q{i}", "choice_idx": i % 3} for i in range(5)]
    columns = item_columns(PRED, raw)
    assert columns is not None
    models = validate_items(PRED, raw, LOC)
    assert len(columns) == 5 and columns[-1] == models[-1] and list(columns) == models
    assert list(columns[1:4]) == models[1:4] and list(columns.take([4, 0])) == [models[4], models[0]]
    assert np.array_equal(film_mcq.int_column(columns, "choice_idx"), [0, 1, 2, 0, 1])
    assert film_mcq.column(columns, "item_id") == [m.item_id for m in models]


def test_the_scorer_gives_its_item_values_as_arrays_to_the_platform_only(spec: Any) -> None:
    rng = random.Random(300)
    key = by_item_id(validate_items(film_mcq.AnswerKeyItem, _key(rng, 30), ("answer_key", "items")))
    preds = validate_items(PRED, _preds(rng, [k.model_dump() for k in key]), LOC)
    as_list = film_mcq.score(key, preds, film_mcq.Params())
    with item_values_as_arrays():
        as_arrays = film_mcq.score(key, preds, film_mcq.Params())
    assert isinstance(as_arrays["item_scores"], ItemValues) and isinstance(as_list["item_scores"], list)
    assert [{"item_id": i, "value": v} for i, v in zip(*vars(as_arrays["item_scores"]).values(), strict=True)] == (
        as_list["item_scores"]
    )
    assert film_mcq.score(key, preds, film_mcq.Params())["item_scores"] == as_list["item_scores"]  # reset after
    ids = [k.item_id for k in key]
    from_list, from_arrays = scoring._item_values(spec, as_list, ids), scoring._item_values(spec, as_arrays, ids)
    assert from_list.keys() == from_arrays.keys() == {"accuracy"}
    assert from_list["accuracy"].tolist() == from_arrays["accuracy"].tolist()


def test_items_already_checked_are_taken_as_they_are_for_their_own_model_only() -> None:
    columns = item_columns(PRED, [GOOD])
    assert columns is not None and validate_columns(PRED, columns, LOC) is columns

    class Other(film_mcq.PredictionItem):
        pass

    with pytest.raises(InvalidFields):  # the model's validator sees instances of another model
        validate_columns(Other, columns, LOC)
