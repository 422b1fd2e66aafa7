"""3D scene scorers: box IoU and Acc@k, Multi3DRefer F1 with Hungarian matching, QA metrics, Scan2Cap m@kIoU."""

import itertools
import re

import numpy as np
import pytest

from service.errors import InvalidInput
from service.scoring import scene3d_densecap as D
from service.scoring import scene3d_grounding as G
from service.scoring import scene3d_qa as Q

UNIT = [0.0, 0.0, 0.0, 2.0, 2.0, 2.0]


def shifted(dx: float, box: list[float] = UNIT) -> list[float]:
    return [box[0] + dx, *box[1:]]


def grounding(gt: list[list[list[float]]], pred: list[list[list[float]]], **params: object) -> dict:
    keys = [G.AnswerKeyItem(item_id=f"i{k}", gt_boxes=g) for k, g in enumerate(gt)]
    preds = [G.PredictionItem(item_id=f"i{k}", pred_boxes=p) for k, p in enumerate(pred)]
    return G.score(keys, preds, G.Params.model_validate({"n_resamples": 0, **params}))


def test_box_iou_of_shifted_cubes() -> None:
    """2×2×2 cubes shifted by 0, 0.5, 1, 1.5 along x: IoU = (2-d)/(2+d) = 1, 0.6, 1/3, 1/7 (eps 1e-8 aside)."""
    gt = np.array([UNIT] * 4)
    pred = np.array([shifted(d) for d in (0, 0.5, 1, 1.5)])
    assert G.box_iou(pred, gt) == pytest.approx([1, 0.6, 1 / 3, 1 / 7], rel=1e-8, abs=0)


def test_scanrefer_accuracy_fixture() -> None:
    """Acc@0.25 = 3/4, Acc@0.5 = 2/4; F1 equals Acc with one box each; the second predicted box is ignored."""
    out = grounding([[UNIT]] * 4, [[shifted(d), UNIT] for d in (0, 0.5, 1, 1.5)])
    assert out["scores"]["acc_at_0_25"]["value"] == 0.75
    assert out["scores"]["acc_at_0_5"]["value"] == 0.5
    assert out["item_metrics"]["f1_at_0_5"] == out["item_metrics"]["acc_at_0_5"] == [1.0, 1.0, 0.0, 0.0]
    assert [r["value"] for r in out["item_scores"]] == [1.0, 1.0, 0.0, 0.0]


def test_op_and_the_iou_eps_at_the_boundary() -> None:
    """A unit cube inside a 1×1×2 box: inter/union = 1/2, but the evaluator's eps puts the IoU just below 0.5, so
    neither operator accepts it at 0.5; a value exactly at k passes 'ge' and fails 'gt'."""
    iou = G.box_iou(np.array([[0.0, 0.0, 0.0, 1.0, 1.0, 1.0]]), np.array([[0.0, 0.0, 0.0, 1.0, 1.0, 2.0]]))[0]
    assert iou == pytest.approx(1 / (2 + 1e-8), rel=1e-15, abs=0)
    assert not G.passes(np.array([iou]), 0.5, "ge")[0]
    at = np.array([0.5])
    assert G.passes(at, 0.5, "ge")[0] and not G.passes(at, 0.5, "gt")[0]
    out = grounding([[UNIT]], [[shifted(0.5)]], thresholds=[0.5, 0.75], op="gt")
    assert out["scores"]["acc_at_0_5"]["value"] == 1.0
    assert out["scores"]["acc_at_0_75"]["value"] == 0.0


def test_multi3drefer_fixture_and_zero_target() -> None:
    """Matched IoUs 0.6 and 1/3 with |P| = 3, |G| = 2: F1@0.25 = 2·2/5 = 0.8, F1@0.5 = 2·1/5 = 0.4; a zero-target
    query scores 1 with no box and 0 with one."""
    gt = [[UNIT, shifted(5)], [], []]
    pred = [[shifted(0.5), shifted(6), [10, 10, 10, 1, 1, 1]], [], [UNIT]]
    out = grounding(gt, pred, task="multi3drefer")
    assert out["item_metrics"]["f1_at_0_25"] == pytest.approx([0.8, 1.0, 0.0], abs=1e-12)
    assert out["item_metrics"]["f1_at_0_5"] == pytest.approx([0.4, 1.0, 0.0], abs=1e-12)
    assert out["breakdown"]["n_zero_target"] == 2
    assert "acc_at_0_5" not in out["scores"]


def test_hungarian_matches_brute_force_assignment() -> None:
    """F1 from one max-IoU assignment equals the best permutation's (ties aside) on random box sets."""
    rng = np.random.default_rng(7)
    gts, preds = [], []
    for _ in range(60):
        g, p = int(rng.integers(2, 5)), int(rng.integers(2, 5))
        gts.append([[*rng.uniform(0, 3, 3), *rng.uniform(0.5, 2, 3)] for _ in range(g)])
        preds.append([[*rng.uniform(0, 3, 3), *rng.uniform(0.5, 2, 3)] for _ in range(p)])
    out = grounding(gts, preds, task="multi3drefer", thresholds=[0.25, 0.5])
    for k, (g, p) in enumerate(zip(gts, preds, strict=True)):
        iou = G.box_iou(np.repeat(np.array(p), len(g), 0), np.tile(np.array(g), (len(p), 1))).reshape(len(p), len(g))
        size = max(len(p), len(g))
        square = np.zeros((size, size))
        square[: len(p), : len(g)] = iou
        best = max(itertools.permutations(range(size)), key=lambda perm: square[range(size), perm].sum())
        matched = square[range(size), best]
        for t in (0.25, 0.5):
            expected = 2 * (matched >= t).sum() / (len(p) + len(g))
            assert out["item_metrics"][G.metric_name("f1", t)][k] == pytest.approx(expected, abs=1e-12)


def test_grounding_subsets_and_missing_predictions() -> None:
    keys = [
        G.AnswerKeyItem(item_id="a", gt_boxes=[UNIT], subset="unique"),
        G.AnswerKeyItem(item_id="b", gt_boxes=[UNIT], subset="multiple"),
        G.AnswerKeyItem(item_id="c", gt_boxes=[UNIT], subset="multiple"),
    ]
    preds = [G.PredictionItem(item_id="a", pred_boxes=[UNIT]), G.PredictionItem(item_id="c", pred_boxes=[UNIT])]
    out = G.score(keys, preds, G.Params(n_resamples=0))
    assert out["breakdown"]["by_subset"]["unique"]["acc_at_0_5"] == 1.0
    assert out["breakdown"]["by_subset"]["multiple"] == {
        "n": 2,
        "acc_at_0_25": 0.5,
        "acc_at_0_5": 0.5,
        "f1_at_0_25": 0.5,
        "f1_at_0_5": 0.5,
    }
    assert out["coverage"] == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("gt", "pred", "params", "loc"),
    [
        ([[UNIT, UNIT]], [[UNIT]], {}, ("answer_key", "items", 0, "gt_boxes")),
        ([[UNIT]], [[[0, 0, 0, 1, 0, 1]]], {}, ("predictions", "items", 0, "pred_boxes")),
        ([[UNIT]], [[UNIT]], {"thresholds": [0.25]}, ("params", "thresholds")),
    ],
)
def test_grounding_rejects_inconsistent_input(gt: list, pred: list, params: dict, loc: tuple) -> None:
    with pytest.raises(InvalidInput) as err:
        grounding(gt, pred, **params)
    assert err.value.loc == loc


def qa(refs: list[list[str]], preds: list[str], **params: object) -> dict:
    keys = [Q.AnswerKeyItem(item_id=f"q{k}", refs=r) for k, r in enumerate(refs)]
    items = [Q.PredictionItem(item_id=f"q{k}", pred=p) for k, p in enumerate(preds)]
    return Q.score(keys, items, Q.Params.model_validate({"n_resamples": 0, **params}))


def test_qa_text_metrics_reproduce_pycocoevalcap_figures() -> None:
    out = qa(
        [["a brown wooden chair", "the chair is brown"], ["two"], ["on the table"]],
        ["a brown chair", "two", "under the table"],
        normalize="none",
        tokenizer="whitespace",
    )
    s = out["scores"]
    assert [s[f"bleu_{n}"]["value"] for n in range(1, 5)] == pytest.approx(
        [0.743038, 0.567505, 5.19e-6, 3.32e-6], rel=1e-3, abs=0
    )
    assert s["rouge_l"]["value"] == pytest.approx(0.834094, abs=1e-6)
    assert s["cider"]["value"] == pytest.approx(2.484790, abs=1e-6)
    assert s["em_at_1"]["value"] == pytest.approx(1 / 3)
    assert out["item_metrics"]["cider"] == pytest.approx([2.374666, 2.5, 2.579705], abs=1e-6)
    assert out["breakdown"]["meteor"]["value"] is None and "Java" in out["breakdown"]["meteor"]["reason"]
    assert "meteor" not in s


def test_scanqa_normalisation_and_matching() -> None:
    """clean_answer: lower case, digits to words, articles before a word dropped, typos fixed; EM vs refined EM."""
    assert Q.clean_prediction("The 2 chairs.") == "two chairs"
    assert Q.clean_answer("None") == "zero"
    assert Q.clean_answer("rigth of the tv") == "right of TV"
    assert Q.answer_match("brown chair", ["brown chair", "wood"]) == (1, 1)
    assert Q.answer_match("brownchair", ["a brown chair"]) == (0, 1)
    assert Q.answer_match("", ["a"]) == (0, 0)
    out = qa([["2"], ["left of the desk"], ["table"]], ["Two.", "The left", "chair"])
    assert out["item_metrics"]["em_at_1"] == [1.0, 0.0, 0.0]
    assert out["item_metrics"]["em_refined"] == [1.0, 1.0, 0.0]
    raw = qa([["2"], ["left of the desk"], ["table"]], ["Two.", "The left", "chair"], normalize="none")
    assert raw["item_metrics"]["em_at_1"] == [0.0, 0.0, 0.0]


def test_qa_em_at_10_and_missing_answer() -> None:
    keys = [Q.AnswerKeyItem(item_id="a", refs=["red"], qtype="What"), Q.AnswerKeyItem(item_id="b", refs=["two"])]
    preds = [Q.PredictionItem(item_id="a", pred="blue", pred_topk=["blue", "red"])]
    out = Q.score(keys, preds, Q.Params(n_resamples=0))
    assert out["item_metrics"]["em_at_10"] == [1.0, 0.0]
    assert out["item_metrics"]["em_at_1"] == [0.0, 0.0]
    assert out["coverage"] == 0.5
    expected = {"n": 1, "em_at_1": 0.0, "em_refined": 0.0, "rouge_l": 0.0, "cider": 0.0}
    assert out["breakdown"]["by_qtype"] == {"What": expected}


def densecap(preds: dict[str, tuple[str, list[float]]], **params: object) -> dict:
    refs = {
        "o1": ["sos this is a brown chair eos", "sos a chair next to the desk eos"],
        "o2": ["sos a white table eos"],
        "o3": ["sos the black monitor eos"],
    }
    keys = [D.AnswerKeyItem(item_id=k, refs=r, gt_box=UNIT) for k, r in refs.items()]
    items = [D.PredictionItem(item_id=k, caption=c, box=b) for k, (c, b) in preds.items()]
    return D.score(keys, items, D.Params.model_validate({"n_resamples": 0, **params}))


def test_densecap_missed_object_gets_sos_eos() -> None:
    """o2 has no prediction and o3's box has IoU 1/3: at 0.25 CIDEr 2.576982 (o2 = 0), at 0.5 o3 is missed too."""
    out = densecap({"o1": ("a brown chair", UNIT), "o3": ("A black monitor.", shifted(1.0))})
    s = out["scores"]
    assert s["cider_at_0_25"]["value"] == pytest.approx(2.576982, abs=1e-6)
    assert out["item_metrics"]["cider_at_0_25"] == pytest.approx([3.145339, 0.0, 4.585607], abs=1e-6)
    assert s["bleu_4_at_0_25"]["value"] == pytest.approx(0.346578, abs=1e-6)
    assert out["item_metrics"]["cider_at_0_5"][1:] == [0.0, 0.0]
    assert out["breakdown"]["n_hit"] == {"0_25": 2, "0_5": 1}


def test_densecap_wrapping_is_idempotent() -> None:
    """Captions given with or without 'sos … eos' score the same when wrap is on."""
    bare = densecap({"o1": ("a brown chair", UNIT), "o3": ("a black monitor", UNIT)})
    wrapped = densecap({"o1": ("sos a brown chair eos", UNIT), "o3": ("sos a black monitor eos", UNIT)})
    assert bare["scores"] == wrapped["scores"]


def test_caption_token_cap() -> None:
    with pytest.raises(InvalidInput) as err:
        densecap({"o1": ("word " * 200, UNIT)})
    assert err.value.loc == ("predictions", "items", 0, "caption")


def test_costs_grow_with_work() -> None:
    small = G.cost([G.AnswerKeyItem(item_id="a", gt_boxes=[UNIT] * 2)], [], G.Params(task="multi3drefer"))
    keys = [G.AnswerKeyItem(item_id="a", gt_boxes=[UNIT] * 8)]
    big = G.cost(keys, [G.PredictionItem(item_id="a", pred_boxes=[UNIT] * 8)], G.Params(task="multi3drefer"))
    assert big == 20 + 64 + 512 and small == 20


REFERENCE_RULES = [
    (r"[ ]+$", ""), (r"^[ ]+", ""), (r" {2,}", " "), (r"\.[ ]{2,}", ". "), (r"[^a-zA-Z0-9,'\s\-:]+", ""),
    (r"ç", "c"), (r"’", "'"), (r"\bletf\b", "left"), (r"\blet\b", "left"), (r"\btehre\b", "there"),
    (r"\brigth\b", "right"), (r"\brght\b", "right"), (r"\bbehine\b", "behind"), (r"\btv\b", "TV"),
    (r"\bchai\b", "chair"), (r"\bwasing\b", "washing"), (r"\bwaslked\b", "walked"), (r"\boclock\b", "o'clock"),
    (r"\bo'[ ]+clock\b", "o'clock"), (r"\b0\b", "zero"), (r"\bnone\b", "zero"),
    *((rf"\b{i}\b", w) for i, w in enumerate(Q.NUMBER_WORDS, start=1)), (r"\b23\b", "twenty-three"),
    (r"\b([a-zA-Z]+)([0-9])\b", r"\g<1>"), (r"\ba\b ([a-zA-Z]+)", r"\g<1>"), (r"\ban\b ([a-zA-Z]+)", r"\g<1>"),
    (r"\bthe\b ([a-zA-Z]+)", r"\g<1>"), (r"\bbackwards\b", "backward"),
]  # fmt: skip
"""LEO's clean_answer rules one by one, in the reference's order."""


def test_clean_answer_equals_the_sequential_reference_rules() -> None:
    """The merged one-word substitutions give the reference's result on 3,000 random answers built from its
    trigger words, digits, articles, punctuation and runs of spaces."""
    pieces = [*Q._WORDS, "a", "an", "the", "o'", "clock", "mat2", "backwards", "1.5", "23", "ç", "’", ".", "  ", "-"]
    rng = np.random.default_rng(4)
    for _ in range(3000):
        text = "".join(
            str(rng.choice(pieces)) + str(rng.choice([" ", "", "  ", ", "])) for _ in range(rng.integers(1, 9))
        )
        expected = text.lower()
        for pattern, repl in REFERENCE_RULES:
            expected = re.sub(pattern, repl, expected)
        assert Q.clean_answer(text) == expected, text


def test_prediction_order_does_not_matter_and_errors_name_the_prediction() -> None:
    """Predictions listed in another order (with different box counts) score the same; a bad predicted box is
    reported at its own position in the prediction list."""
    gt = [[UNIT, shifted(5)], [UNIT], [shifted(2)]]
    pred = [[shifted(0.5), shifted(6), [10, 10, 10, 1, 1, 1]], [], [shifted(2.2), UNIT]]
    keys = [G.AnswerKeyItem(item_id=f"i{k}", gt_boxes=g) for k, g in enumerate(gt)]
    items = [G.PredictionItem(item_id=f"i{k}", pred_boxes=p) for k, p in enumerate(pred)]
    params = G.Params(task="multi3drefer", n_resamples=0)
    assert G.score(keys, items[::-1], params)["item_metrics"] == G.score(keys, items, params)["item_metrics"]
    bad = [items[2], G.PredictionItem(item_id="i0", pred_boxes=[UNIT, [0, 0, 0, 1, -1, 1]])]
    with pytest.raises(InvalidInput) as err:
        G.score(keys, bad, params)
    assert err.value.loc == ("predictions", "items", 1, "pred_boxes")


def test_qa_token_cap_names_the_prediction() -> None:
    keys = [Q.AnswerKeyItem(item_id="a", refs=["red"]), Q.AnswerKeyItem(item_id="b", refs=["two"])]
    preds = [Q.PredictionItem(item_id="b", pred="x " * 200), Q.PredictionItem(item_id="a", pred="red")]
    with pytest.raises(InvalidInput) as err:
        Q.score(keys, preds, Q.Params(n_resamples=0))
    assert err.value.loc == ("predictions", "items", 0, "pred")
