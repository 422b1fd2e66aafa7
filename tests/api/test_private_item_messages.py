"""Private items are no oracle: a submission naming a private item is scored (201) like any other, but no 4xx
answer to a submission carries a value of a private item's answer side (docs/security.md, "Private items").

For every registered scorer, a benchmark whose private items hold distinctive sentinel values in their answer-side
fields receives predictions that are invalid in every way the scorer's validation names; each is refused (422),
its error names the private item's position in the submitted list, and no string of the answer (detail, every
error message, any field) holds a sentinel. A second set of benchmarks has private answer-key items the scorer
refuses while scoring, as in a key stored before registration ran the scorer's key checks (registered here with
``check_key`` off; tests/api/test_answer_key_checks.py shows registration refuses them): the refusal names the item
without quoting its answer side. A public item's messages are unchanged (the bound of an out-of-range option). A
submission refused for its cost is not told the cost (it counts the answer key)."""

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from service.registry import SCORERS, load_all
from tests.factories import api_key, benchmark, post_submission
from usecases.scoring import PRIVATE_KEY_ITEM


def standalone(value: str) -> re.Pattern[str]:
    """``value`` as a token of its own: not inside a longer word or number (ids and UUIDs hold digits)."""
    return re.compile(rf"(?<![\w.]){re.escape(value)}(?![\w.])")


@dataclass(frozen=True)
class Case:
    """A benchmark with private items (``key``), predictions that score (``valid``) and invalid predictions
    (what, items, index of the private item the error must name); ``secrets`` may appear in no 4xx answer."""

    scorer: str
    key: list[dict]
    valid: list[dict]
    invalid: list[tuple[str, list[dict], int]]
    secrets: list[re.Pattern[str]]
    params: dict = field(default_factory=dict)


def film_mcq() -> Case:
    key = [
        {"item_id": "q0", "num_options": 4, "answer_idx": 2, "film_id": "f0"},
        {"item_id": "p0", "num_options": 23, "answer_idx": 17, "film_id": "f1", "split": "private"},
    ]
    q0 = {"item_id": "q0", "choice_idx": 2}
    return Case(
        "film_mcq",
        key,
        [q0, {"item_id": "p0", "choice_idx": 3}],
        [
            ("option beyond the private item's count", [q0, {"item_id": "p0", "choice_idx": 24}], 1),
            ("option beyond every count", [q0, {"item_id": "p0", "choice_idx": 26}], 1),
            ("option of the wrong type", [q0, {"item_id": "p0", "choice_idx": "17"}], 1),
            ("negative option", [q0, {"item_id": "p0", "choice_idx": -1}], 1),
            ("missing option", [q0, {"item_id": "p0"}], 1),
            ("unknown field", [q0, {"item_id": "p0", "choice_idx": 1, "answer_idx": 17}], 1),
            ("unknown id", [q0, {"item_id": "p9", "choice_idx": 1}], 1),
            ("duplicate id", [q0, {"item_id": "p0", "choice_idx": 1}, {"item_id": "p0", "choice_idx": 2}], 2),
        ],
        [standalone("23"), standalone("17"), re.compile("num_options")],
    )


RAVEN_ROLES = {"A": "ROLESENTINELA", "B": "ROLESENTINELB", "C": "ROLESENTINELC", "D": "ROLESENTINELD"}


def raven() -> Case:
    base = {"group_family": "consistency", "group_step": 1, "level": "L1", "modality_requirement": "EO"}
    key = [
        {"item_id": "q0", "video_id": "v0", "group_key": "g0", "correct": "A", **base},
        {
            "item_id": "p0",
            "video_id": "v1",
            "group_key": "g1",
            "correct": "C",
            "option_roles": RAVEN_ROLES,
            "split": "private",
            **base,
        },
    ]
    q0 = {"item_id": "q0", "predicted_answer": "A"}
    circular = [{"predicted_answer": x} for x in "ABCD"]
    return Case(
        "raven",
        key,
        [q0, {"item_id": "p0", "predicted_answer": "B"}],
        [
            ("circular answers in single mode", [q0, {"item_id": "p0", "circular": circular}], 1),
            ("three circular passes", [q0, {"item_id": "p0", "circular": circular[:3]}], 1),
            ("answer of the wrong type", [q0, {"item_id": "p0", "predicted_answer": 3}], 1),
            ("answer too long", [q0, {"item_id": "p0", "predicted_answer": "C" * 65}], 1),
            ("unknown id", [q0, {"item_id": "p9", "predicted_answer": "C"}], 1),
        ],
        [re.compile("ROLESENTINEL"), re.compile(r"correct\b.*\bC\b"), re.compile("option_roles")],
        {"n_resamples": 0},
    )


GT_BOX = [7.123456, 8.234567, 9.345678, 1.456789, 1.567891, 1.678912]


def scene3d_grounding() -> Case:
    key = [
        {"item_id": "q0", "gt_boxes": [[0, 0, 0, 1, 1, 1]]},
        {"item_id": "p0", "gt_boxes": [GT_BOX], "split": "private"},
    ]
    q0 = {"item_id": "q0", "pred_boxes": [[0, 0, 0, 1, 1, 1]]}
    return Case(
        "scene3d_grounding",
        key,
        [q0, {"item_id": "p0", "pred_boxes": [[7, 8, 9, 1, 1, 1]]}],
        [
            ("negative box size", [q0, {"item_id": "p0", "pred_boxes": [[7, 8, 9, -1, 1, 1]]}], 1),
            ("box of five numbers", [q0, {"item_id": "p0", "pred_boxes": [[7, 8, 9, 1, 1]]}], 1),
            ("box of the wrong type", [q0, {"item_id": "p0", "pred_boxes": [["7", 8, 9, 1, 1, 1]]}], 1),
            ("missing boxes", [q0, {"item_id": "p0"}], 1),
            ("unknown id", [q0, {"item_id": "p9", "pred_boxes": []}], 1),
        ],
        [re.compile(re.escape(str(v)[:5])) for v in GT_BOX[:3]],
        {"n_resamples": 0},
    )


LONG = " ".join(["xy"] * 129)


def scene3d_qa() -> Case:
    key = [
        {"item_id": "q0", "refs": ["a chair"]},
        {"item_id": "p0", "refs": ["qwertysentinel table", "zxcvbsentinel"], "split": "private"},
    ]
    q0 = {"item_id": "q0", "pred": "a chair"}
    return Case(
        "scene3d_qa",
        key,
        [q0, {"item_id": "p0", "pred": "a table"}],
        [
            ("answer of more than 128 tokens", [q0, {"item_id": "p0", "pred": LONG}], 1),
            ("top-k answer of 513 characters", [q0, {"item_id": "p0", "pred": "x", "pred_topk": ["x" * 513]}], 1),
            ("empty top-k list", [q0, {"item_id": "p0", "pred": "x", "pred_topk": []}], 1),
            ("answer of the wrong type", [q0, {"item_id": "p0", "pred": ["a"]}], 1),
            ("unknown id", [q0, {"item_id": "p9", "pred": "x"}], 1),
        ],
        [re.compile("sentinel"), re.compile("refs")],
        {"n_resamples": 0},
    )


def scene3d_densecap() -> Case:
    key = [
        {"item_id": "q0", "refs": ["a chair"], "gt_box": [0, 0, 0, 1, 1, 1]},
        {"item_id": "p0", "refs": ["qwertysentinel table"], "gt_box": GT_BOX, "split": "private"},
    ]
    q0 = {"item_id": "q0", "caption": "a chair", "box": [0, 0, 0, 1, 1, 1]}
    box = [7, 8, 9, 1, 1, 1]
    return Case(
        "scene3d_densecap",
        key,
        [q0, {"item_id": "p0", "caption": "a table", "box": box}],
        [
            ("caption of more than 128 tokens", [q0, {"item_id": "p0", "caption": LONG, "box": box}], 1),
            ("box of five numbers", [q0, {"item_id": "p0", "caption": "x", "box": box[:5]}], 1),
            ("caption of the wrong type", [q0, {"item_id": "p0", "caption": 1, "box": box}], 1),
            ("unknown id", [q0, {"item_id": "p9", "caption": "x", "box": box}], 1),
        ],
        [re.compile("sentinel"), *(re.compile(re.escape(str(v)[:5])) for v in GT_BOX[:3])],
        {"n_resamples": 0},
    )


def stakebench() -> Case:
    key = [
        {"item_id": "q0", "task": "commitment", "committed": True, "outcomes": []},
        {
            "item_id": "p0",
            "task": "revealed_side",
            "side": "SENTINELWIN",
            "outcomes": ["SENTINELWIN", "SENTINELLOSE"],
            "split": "private",
        },
        {"item_id": "p1", "task": "commitment", "committed": False, "outcomes": [], "split": "private"},
        {"item_id": "p2", "task": "future_action", "action": "EXIT_FLIP", "outcomes": [], "split": "private"},
        {
            "item_id": "p3",
            "task": "odds_projection",
            "p_prev": 0.4,
            "p_now": 0.5,
            "p_next": 0.8765,
            "outcomes": [],
            "split": "private",
        },
    ]
    q0 = {"item_id": "q0", "committed": True}
    return Case(
        "stakebench",
        key,
        [q0, {"item_id": "p0", "side": "NEUTRAL"}, {"item_id": "p1", "committed": True}],
        [
            ("side outside the outcomes", [q0, {"item_id": "p0", "side": "MAYBE"}], 1),
            ("missing side", [q0, {"item_id": "p0"}], 1),
            ("commitment without committed", [q0, {"item_id": "p1", "side": "YES"}], 1),
            ("future action without action", [q0, {"item_id": "p2", "committed": True}], 1),
            ("action outside the actions", [q0, {"item_id": "p2", "action": "SELL"}], 1),
            ("direction and p_next", [q0, {"item_id": "p3", "direction": "UP", "p_next": 0.6}], 1),
            ("neither direction nor p_next", [q0, {"item_id": "p3"}], 1),
            ("p_next above 1", [q0, {"item_id": "p3", "p_next": 1.5}], 1),
            ("unknown id", [q0, {"item_id": "p9", "committed": True}], 1),
        ],
        [re.compile("SENTINEL"), re.compile("0.8765"), re.compile(r"\bFalse\b")],
    )


def televal() -> Case:
    key = [
        {"item_id": "q0", "dataset": "d0", "eval_task": "basic", "ref": ["paris"]},
        {"item_id": "p0", "dataset": "d0", "eval_task": "basic", "ref": ["qwertysentinel"], "split": "private"},
        {"item_id": "p1", "dataset": "d1", "eval_task": "choice", "ref": "C", "query": "A. x B. y C. z D. w"},
        {"item_id": "p2", "dataset": "d2", "eval_task": "modal_consistency", "ref": "", "split": "private"},
        {"item_id": "p3", "dataset": "d3", "eval_task": "empathetic_response", "ref": "", "split": "private"},
        {"item_id": "p4", "dataset": "d4", "eval_task": "dnsmos", "ref": "", "split": "private"},
    ]
    key[2]["split"] = "private"
    q0 = {"item_id": "q0", "pred_text": "paris"}
    return Case(
        "televal",
        key,
        [q0, {"item_id": "p0", "pred_text": "rome"}, {"item_id": "p1", "pred_text": "B"}],
        [
            ("basic item without pred_text", [q0, {"item_id": "p0", "judge_score": 3}], 1),
            ("choice item without pred_text", [q0, {"item_id": "p1", "model_score": 3}], 1),
            ("modal consistency without asr_edits", [q0, {"item_id": "p2", "pred_text": "x"}], 1),
            ("judge task without judge_score", [q0, {"item_id": "p3", "pred_text": "x"}], 1),
            ("model-score task without model_score", [q0, {"item_id": "p4", "pred_text": "x"}], 1),
            ("judge score above 5", [q0, {"item_id": "p3", "judge_score": 6}], 1),
            ("unknown id", [q0, {"item_id": "p9", "pred_text": "x"}], 1),
        ],
        [re.compile("sentinel"), re.compile(r"'C'|\"C\"")],
        {"n_resamples": 0},
    )


def ubench() -> Case:
    gt = [[0, 1, 1, 0, 0], [0, 1, 1, 1, 0], [0, 0, 1, 0, 0]]
    key = [
        {"item_id": "q0", "mask": [[0, 1], [1, 1]]},
        {"item_id": "p0", "mask": gt, "split": "private"},
    ]
    q0 = {"item_id": "q0", "mask": [[0.0, 1.0], [1.0, 1.0]]}
    return Case(
        "ubench",
        key,
        [q0, {"item_id": "p0", "mask": [[0.0] * 5, [1.0] * 5, [0.0] * 5]}],
        [
            ("mask of another shape", [q0, {"item_id": "p0", "mask": [[0.0, 1.0], [1.0, 0.0]]}], 1),
            ("mask of another dimension", [q0, {"item_id": "p0", "mask": [[[0.0] * 5] * 3] * 2}], 1),
            ("mask value above 1", [q0, {"item_id": "p0", "mask": [[2.0] * 5] * 3}], 1),
            ("ragged mask", [q0, {"item_id": "p0", "mask": [[0.0] * 5, [0.0] * 4, [0.0] * 5]}], 1),
            ("unknown id", [q0, {"item_id": "p9", "mask": [[0.0]]}], 1),
        ],
        [re.compile(r"\[3, 5\]|3 ?[x×] ?5|\(3, 5\)"), re.compile(r"\b15\b")],
        {"n_resamples": 0, "hd95": False},
    )


def vimu() -> Case:
    key = [
        {"item_id": "q0", "task": "EG", "options": ["A", "B"], "correct_options": ["A"]},
        {"item_id": "p0", "task": "RM", "options": list("ABCDE"), "correct_options": ["B", "D"], "split": "private"},
        {"item_id": "p1", "task": "OE", "split": "private"},
    ]
    q0 = {"item_id": "q0", "selected_options": ["A"]}
    judge = {
        "score_breakdown": {
            "core_intent": 2,
            "implicit_signal": 1,
            "target_or_social_meaning": 1,
            "hallucination_penalty": 0,
            "literal_only_penalty": 0,
        },
        "score_total": 4,
    }
    return Case(
        "vimu",
        key,
        [q0, {"item_id": "p0", "selected_options": ["A"]}, {"item_id": "p1", "judge": judge}],
        [
            ("option not of the item", [q0, {"item_id": "p0", "selected_options": ["Z"]}], 1),
            ("task other than the item's", [q0, {"item_id": "p0", "task": "SV", "selected_options": ["A"]}], 1),
            ("judge on a multiple-choice item", [q0, {"item_id": "p0", "judge": judge}], 1),
            ("no options selected", [q0, {"item_id": "p0"}], 1),
            ("error with options", [q0, {"item_id": "p0", "error": True, "selected_options": ["A"]}], 1),
            ("options on an open item", [q0, {"item_id": "p1", "selected_options": ["A"]}], 1),
            ("open item without judge", [q0, {"item_id": "p1"}], 1),
            ("wrong judge total", [q0, {"item_id": "p1", "judge": {**judge, "score_total": 5}}], 1),
            ("unknown id", [q0, {"item_id": "p9", "selected_options": ["A"]}], 1),
        ],
        [re.compile(r"'B', 'D'|\"B\", \"D\"|\bB\b.*\bD\b"), re.compile("correct_options")],
        {"n_resamples": 0},
    )


def zbb() -> Case:
    key = [
        {"item_id": "q0", "user_text": "what is the capital of france", "reference": "paris"},
        {
            "item_id": "p0",
            "user_text": "name a colour",
            "reference": "qwertysentinel",
            "aliases": ["zxcvbsentinel"],
            "split": "private",
        },
    ]
    q0 = {"item_id": "q0", "response_text": "paris"}
    return Case(
        "zbb",
        key,
        [q0, {"item_id": "p0", "response_text": "red"}],
        [
            ("response of the wrong type", [q0, {"item_id": "p0", "response_text": 5}], 1),
            ("response too long", [q0, {"item_id": "p0", "response_text": "x" * 4001}], 1),
            ("judge label of the wrong type", [q0, {"item_id": "p0", "response_text": "x", "judge_correct": "y"}], 1),
            ("unknown id", [q0, {"item_id": "p9", "response_text": "x"}], 1),
        ],
        [re.compile("sentinel")],
    )


CASES = {c.scorer: c for c in (f() for f in (film_mcq, raven, scene3d_grounding, scene3d_qa, scene3d_densecap))}
CASES |= {c.scorer: c for c in (f() for f in (stakebench, televal, ubench, vimu, zbb))}
SLOW_CASES = {"raven", "scene3d_qa", "ubench"}
"""The costliest cases (make test-quick runs the other seven)."""


def strings(value: Any) -> Iterator[str]:
    """Every string of a JSON value, object keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif value is not None:
        yield str(value)


def leaks(response: Any, secrets: list[re.Pattern[str]]) -> list[str]:
    """The strings of ``response``'s body (and its raw text) in which a secret appears."""
    return [s for s in [response.text, *strings(response.json())] if any(p.search(s) for p in secrets)]


def test_every_scorer_is_audited() -> None:
    load_all()
    assert set(CASES) == set(SCORERS)


@pytest.mark.parametrize(
    "scorer", [pytest.param(s, marks=pytest.mark.slow) if s in SLOW_CASES else s for s in sorted(CASES)]
)
def test_invalid_predictions_for_private_items_reveal_no_answer(client: Any, scorer: str) -> None:
    case = CASES[scorer]
    extra = {"scorer_params": case.params} if case.params else {}
    bench = benchmark(client, scorer=scorer, items=case.key, **extra)
    alice = api_key(client, "submissions:write", name="alice")
    ok = post_submission(client, bench, alice, predictions={"items": case.valid})
    assert ok.status_code == 201, ok.text
    statuses, located, leaked = {}, {}, {}
    for what, items, index in case.invalid:
        r = post_submission(client, bench, alice, predictions={"items": items})
        statuses[what] = r.status_code
        located[what] = r.json()["errors"][0]["loc"][:4] == ["body", "predictions", "items", index]
        if found := leaks(r, case.secrets):
            leaked[what] = found[-1]
    assert statuses == {what: 422 for what, _, _ in case.invalid}
    assert leaked == {}
    assert located == {what: True for what, _, _ in case.invalid}


BROKEN = {
    "film_mcq": (
        {"item_id": "p0", "num_options": 7, "answer_idx": 19, "film_id": "f1"},
        {"item_id": "p0", "choice_idx": 1},
        [standalone("19"), standalone("7")],
    ),
    "stakebench": (
        {"item_id": "p0", "task": "revealed_side", "side": "SENTINELWIN", "outcomes": ["SENTINELLOSE", "SENTINELTIE"]},
        {"item_id": "p0", "side": "NEUTRAL"},
        [re.compile("SENTINEL")],
    ),
    "televal": (
        {"item_id": "p0", "dataset": "d1", "eval_task": "basic", "ref": ["qwertysentinel", "?!."]},
        {"item_id": "p0", "pred_text": "x"},
        [re.compile("sentinel"), re.compile(re.escape("?!."))],
    ),
    "zbb": (
        {"item_id": "p0", "user_text": "name a colour", "reference": "?!~", "aliases": ["qwertysentinel"]},
        {"item_id": "p0", "response_text": "red"},
        [re.compile("sentinel"), re.compile(re.escape("?!~"))],
    ),
}
"""Per scorer: a private answer-key item its scoring refuses (registration refuses it too, so it is stored with the
key checks off, as in a key stored before registration ran them), a prediction for it, and what its refusal may not
quote. The stored key is in item_id order, so the item ``p0`` is the key's item 0 (before ``q0``)."""


@pytest.mark.parametrize("scorer", sorted(BROKEN))
def test_a_private_key_item_the_scorer_refuses_is_named_without_its_answer(
    client: Any, scorer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken, prediction, secrets = BROKEN[scorer]
    case = CASES[scorer]
    monkeypatch.setitem(SCORERS, scorer, dataclasses.replace(SCORERS[scorer], check_key=None))
    public = case.key[0]
    bench = benchmark(client, scorer=scorer, items=[public, {**broken, "split": "private"}])
    alice = api_key(client, "submissions:write", name="alice")
    r = post_submission(client, bench, alice, predictions={"items": [case.valid[0], prediction]})
    assert r.status_code == 422, r.text
    error = r.json()["errors"][0]
    assert (error["loc"][:4], error["msg"]) == (["body", "answer_key", "items", 0], PRIVATE_KEY_ITEM)
    assert leaks(r, secrets) == []
    # the same item in the public split: the scorer's own message, naming the value
    bench = benchmark(client, scorer=scorer, items=[public, broken], name=f"{scorer}-public")
    r = post_submission(client, bench, alice, predictions={"items": [case.valid[0], prediction]})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"][:4] == ["body", "answer_key", "items", 0]
    assert leaks(r, secrets) != []


def test_a_public_items_messages_keep_their_bounds(client: Any) -> None:
    """An out-of-range option and a mask of another shape on a public item still name the bound."""
    bench = benchmark(client, items=CASES["film_mcq"].key)
    alice = api_key(client, "submissions:write", name="alice")
    r = post_submission(client, bench, alice, predictions={"items": [{"item_id": "q0", "choice_idx": 5}]})
    assert r.json()["errors"] == [
        {
            "loc": ["body", "predictions", "items", 0, "choice_idx"],
            "msg": "choice_idx 5 is out of range for num_options=4",
            "type": "invalid_input",
        }
    ]
    bench = benchmark(client, scorer="ubench", items=CASES["ubench"].key, scorer_params={"n_resamples": 0})
    r = post_submission(client, bench, alice, predictions={"items": [{"item_id": "q0", "mask": [[0.0, 1.0]]}]})
    assert r.json()["errors"][0]["msg"] == "mask shape [1, 2] differs from the answer key's [2, 2]"


def test_a_submission_over_the_hard_cap_is_refused_without_its_cost(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """zbb's cost counts the answer key's characters (the private reference and alias among them: 29 + 5 + 13 + 14
    + 13 = 74); stating a refused submission's cost (74 + its own 40) would measure them."""
    monkeypatch.setitem(SCORERS, "zbb", dataclasses.replace(SCORERS["zbb"], hard_cap=100))
    bench = benchmark(client, scorer="zbb", items=CASES["zbb"].key)
    alice = api_key(client, "submissions:write", name="alice")
    r = post_submission(client, bench, alice, predictions={"items": [{"item_id": "p0", "response_text": "x" * 40}]})
    assert r.status_code == 422 and r.json()["errors"][0]["type"] == "cost_cap"
    assert leaks(r, [standalone("114"), standalone("74")]) == []
    assert "100" in r.json()["errors"][0]["msg"]  # the cap is the scorer's, public
