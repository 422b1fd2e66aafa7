"""3D scene scorers: box IoU and Acc@k, Multi3DRefer F1 with Hungarian matching, QA metrics, Scan2Cap m@kIoU."""

import itertools
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from service.errors import InvalidInput
from service.scoring import scene3d_densecap as D
from service.scoring import scene3d_grounding as G
from service.scoring import scene3d_qa as Q
from service.scoring.caption_metrics import score_captions
from service.scoring.ptb_tokenizer import ptb_tokens
from service.stats import bootstrap_mean_ci

UNIT = [0.0, 0.0, 0.0, 2.0, 2.0, 2.0]


def shifted(dx: float, box: list[float] = UNIT) -> list[float]:
    return [box[0] + dx, *box[1:]]


def assert_seeded_bootstrap(entry: dict, values: list[float], n_resamples: int, seed: int, confidence: float) -> None:
    """The entry's interval is the percentile bootstrap of ``values`` with this seed and confidence, and another
    seed gives another interval (so the fixture does pin the seed)."""
    low, high, _ = bootstrap_mean_ci(np.array(values), n_resamples, seed, confidence)
    assert (entry["ci_low"], entry["ci_high"], entry["n"]) == (low, high, len(values))
    assert entry["value"] == pytest.approx(np.mean(values), rel=1e-12, abs=0)
    for other in (0, seed + 1):
        assert bootstrap_mean_ci(np.array(values), n_resamples, other, confidence)[:2] != (low, high)


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


def test_degenerate_predicted_boxes_score_zero_and_are_counted() -> None:
    """Chat-Scene's box3d_iou gives a zero-volume box inter 0, so IoU 0 for that item; the rest are scored."""
    flat = [0, 0, 0, 2, 2, 0]
    out = grounding([[UNIT]] * 3, [[flat], [UNIT], [[0, 0, 0, 0, 0, 0], UNIT]])
    assert out["item_metrics"]["acc_at_0_5"] == [0.0, 1.0, 0.0]
    assert out["breakdown"]["n_degenerate_pred_boxes"] == 2
    multi = grounding([[UNIT, shifted(5)]], [[flat, UNIT]], task="multi3drefer", iou_eps="none")
    assert multi["item_metrics"]["f1_at_0_5"] == [pytest.approx(2 * 1 / 4, abs=1e-15)]
    assert multi["breakdown"]["n_degenerate_pred_boxes"] == 1


def test_iou_eps_is_absolute_in_the_boxes_units() -> None:
    """Identical cubes: reference IoU = V/(V + 1e-8), so a 1 mm cube in metres (V = 1e-9) scores 1/11 = 0.0909
    and fails every threshold; 'none' gives 1 exactly. A zero-volume ground truth scores 0 under 'reference'."""
    mm = [0.5, 0.5, 0.5, 1e-3, 1e-3, 1e-3]
    cube = np.array([mm])
    assert G.box_iou(cube, cube)[0] == pytest.approx(1e-9 / (1e-9 + 1e-8), rel=1e-12)
    assert G.box_iou(cube, cube, G.IOU_EPS["none"])[0] == pytest.approx(1.0, rel=1e-12)
    assert grounding([[mm]], [[mm]])["scores"]["acc_at_0_25"]["value"] == 0.0
    exact = grounding([[mm]], [[mm]], iou_eps="none")
    assert exact["scores"]["acc_at_0_25"]["value"] == 1.0 and exact["breakdown"]["iou_eps"] == "none"
    assert grounding([[[0, 0, 0, 1, 1, 0]]], [[[0, 0, 0, 1, 1, 0]]])["item_metrics"]["acc_at_0_25"] == [0.0]
    cm = [0, 0, 0, 0.01, 0.01, 0.01]
    assert G.box_iou(np.array([cm]), np.array([cm]))[0] == pytest.approx(1e-6 / (1e-6 + 1e-8), rel=1e-12)


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
        ([[UNIT]], [[[0, 0, 0, 1, -0.5, 1]]], {}, ("predictions", "items", 0, "pred_boxes")),
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
    assert out["breakdown"]["meteor"] == {"value": None, "reason": "meteor=false"}
    assert "meteor" not in s


def test_scanqa_normalisation_and_matching() -> None:
    """clean_answer: lower case, digits to words, articles before a word dropped, typos fixed; EM vs refined EM."""
    assert Q.clean_prediction("The 2 chairs.") == "two chairs"
    assert Q.clean_answer("None") == "zero"
    assert Q.clean_answer("rigth of the tv") == "right of TV"
    assert Q.answer_match("brown chair", ["brown chair", "wood"]) == (1, 1)
    assert Q.answer_match("brownchair", ["a brown chair"]) == (0, 1)
    assert Q.answer_match("", ["a"]) == (0, 0)
    refs, preds = [["2"], ["left of the desk"], ["table"]], ["Two.", "The left", "chair"]
    out = qa(refs, preds, normalize="scanqa_clean")
    assert out["item_metrics"]["em_at_1"] == [1.0, 0.0, 0.0]
    assert out["item_metrics"]["em_refined"] == [1.0, 1.0, 0.0]
    chatscene = qa(refs, preds)  # the default: references as given, so "two" no longer equals "2"
    assert chatscene["item_metrics"]["em_at_1"] == [0.0, 0.0, 0.0]
    assert chatscene["item_metrics"]["em_refined"] == [0.0, 1.0, 0.0]
    raw = qa(refs, preds, normalize="none")
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


@pytest.mark.slow
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


BIG = [0.0, 0.0, 0.0, 1000.0, 1000.0, 1000.0]
"""A 10⁹ cube: with a 1000×1000×2000 box its IoU is exactly 0.5 in floating point (the 1e-8 eps is below half an
ulp of the 2·10⁹ union), the one way to put an IoU exactly on a threshold."""
TALL = [0.0, 0.0, 0.0, 1000.0, 1000.0, 2000.0]


def test_box_iou_of_unequal_boxes_offset_on_every_axis() -> None:
    """A 2×4×6 box (V 48) and a 2-cube at (1, 1, 1): overlaps 1, 2, 2 → IoU 4/(48 + 8 - 4); a gap on y or z
    alone makes it 0."""
    a = np.array([[0.0, 0.0, 0.0, 2.0, 4.0, 6.0]] * 3)
    b = np.array([[1.0, 1.0, 1.0, 2.0, 2.0, 2.0], [0.0, 5.0, 0.0, 2.0, 2.0, 2.0], [0.0, 0.0, 4.5, 2.0, 2.0, 2.0]])
    assert G.box_iou(a, b) == pytest.approx([4 / (52 + 1e-8), 0.0, 0.0], rel=1e-15, abs=0)
    assert G.box_iou(b, a) == pytest.approx(G.box_iou(a, b), rel=1e-15, abs=0)
    assert G.box_iou(np.array([BIG]), np.array([TALL]))[0] == 0.5


def test_iou_exactly_at_the_threshold_follows_op() -> None:
    """IoU exactly 0.5: 'ge' accepts it at 0.5, 'gt' rejects it, in both tasks; 0.25 accepts it either way."""
    for task in ("scanrefer", "multi3drefer"):
        ge = grounding([[TALL]], [[BIG]], task=task, op="ge")
        gt = grounding([[TALL]], [[BIG]], task=task, op="gt")
        assert ge["item_metrics"]["f1_at_0_5"] == [1.0] and gt["item_metrics"]["f1_at_0_5"] == [0.0]
        assert ge["item_metrics"]["f1_at_0_25"] == gt["item_metrics"]["f1_at_0_25"] == [1.0]
        assert gt["breakdown"]["op"] == "gt" and gt["breakdown"]["task"] == task
    for op, f1 in (("ge", 1.0), ("gt", 0.5)):  # two boxes each: the Hungarian path
        multi = grounding([[TALL, shifted(9)]], [[BIG, shifted(9)]], task="multi3drefer", op=op)
        assert multi["item_metrics"]["f1_at_0_5"] == [f1]


def test_multi3drefer_single_box_queries_take_the_best_pair() -> None:
    """Queries with one box on one side use the best IoU (no assignment): G = 1, P = 3 with IoUs 1/7, 0.6, 0 →
    F1@0.5 = 2/4, F1@0.25 = 2/4; G = 2, P = 1 with IoUs 1/3, 1/7 → F1@0.25 = 2/3, F1@0.5 = 0; G = 1, P = 1
    exact → 1; G = 0, P = 2 → 0; G = 3, P = 0 → 0."""
    gt = [[UNIT], [UNIT, shifted(2.5)], [UNIT], [], [UNIT, shifted(4), shifted(8)]]
    pred = [[shifted(1.5), shifted(0.5), shifted(7)], [shifted(1)], [UNIT], [UNIT, UNIT], []]
    out = grounding(gt, pred, task="multi3drefer", thresholds=[0.5, 0.25, 0.75])
    assert out["breakdown"]["thresholds"] == [0.25, 0.5, 0.75]
    m = out["item_metrics"]
    assert m["f1_at_0_25"] == pytest.approx([0.5, 2 / 3, 1.0, 0.0, 0.0], rel=1e-12, abs=0)
    assert m["f1_at_0_5"] == pytest.approx([0.5, 0.0, 1.0, 0.0, 0.0], rel=1e-12, abs=0)
    assert m["f1_at_0_75"] == pytest.approx([0.0, 0.0, 1.0, 0.0, 0.0], rel=1e-12, abs=0)
    assert out["scores"]["f1_at_0_5"]["value"] == pytest.approx(1.5 / 5, rel=1e-12, abs=0)
    assert (out["scores"]["f1_at_0_5"]["n"], out["scores"]["f1_at_0_5"]["ci_low"]) == (5, None)
    assert [r["value"] for r in out["item_scores"]] == m["f1_at_0_5"]
    assert out["breakdown"]["n_zero_target"] == 1 and out["breakdown"]["n_missing"] == 0


def test_multi3drefer_assignment_is_one_to_one() -> None:
    """Two predictions on the same ground-truth box among two: only one can match → F1@0.5 = 2·1/4; matched
    pairs 1 and 0.6 with a third, unmatched prediction → 2·2/5."""
    out = grounding(
        [[UNIT, shifted(9)], [UNIT, shifted(9)]],
        [[UNIT, UNIT], [shifted(9.5), UNIT, shifted(30)]],
        task="multi3drefer",
    )
    assert out["item_metrics"]["f1_at_0_5"] == pytest.approx([0.5, 0.8], rel=1e-12, abs=0)


def test_scanrefer_wilson_and_f1_bootstrap_intervals() -> None:
    """Acc 3/4: Wilson 95% interval [0.300642, 0.954413] and at 90% [0.356168, 0.942093] (hand formula); F1's
    interval is the seeded percentile bootstrap of the per-item values (same seed, same interval)."""
    gt, pred = [[UNIT]] * 4, [[UNIT], [UNIT], [shifted(0.5)], [shifted(1.5)]]
    out = grounding(gt, pred, n_resamples=200, seed=3)
    acc = out["scores"]["acc_at_0_5"]
    assert (acc["value"], acc["n"]) == (0.75, 4)
    assert out["item_metrics"]["acc_at_0_5"] == [1.0, 1.0, 1.0, 0.0]
    assert {type(v) for v in out["item_metrics"]["acc_at_0_5"] + out["item_metrics"]["f1_at_0_5"]} == {float}
    assert [acc["ci_low"], acc["ci_high"]] == pytest.approx([0.300642, 0.954413], abs=1e-6)
    narrow = grounding(gt, pred, n_resamples=200, seed=3, confidence=0.9)["scores"]["acc_at_0_5"]
    assert [narrow["ci_low"], narrow["ci_high"]] == pytest.approx([0.356168, 0.942093], abs=1e-6)
    f1 = out["scores"]["f1_at_0_5"]
    low, high, _ = bootstrap_mean_ci(np.array([1.0, 1.0, 1.0, 0.0]), 200, 3, 0.95)
    assert (f1["ci_low"], f1["ci_high"], f1["n"]) == (low, high, 4)
    assert f1["ci_low"] < 0.75 < f1["ci_high"]
    assert grounding(gt, pred, n_resamples=0)["scores"]["f1_at_0_5"]["ci_low"] is None


def test_grounding_subsets_skip_unlabelled_items() -> None:
    keys = [
        G.AnswerKeyItem(item_id="a", gt_boxes=[UNIT], subset="st"),
        G.AnswerKeyItem(item_id="b", gt_boxes=[], subset="zt"),
        G.AnswerKeyItem(item_id="c", gt_boxes=[UNIT]),
        G.AnswerKeyItem(item_id="d", gt_boxes=[UNIT], subset="st"),
    ]
    preds = [G.PredictionItem(item_id="d", pred_boxes=[shifted(1)]), G.PredictionItem(item_id="c", pred_boxes=[UNIT])]
    out = G.score(keys, preds, G.Params(task="multi3drefer", n_resamples=0))
    assert out["breakdown"]["by_subset"] == {
        "st": {"n": 2, "f1_at_0_25": 0.5, "f1_at_0_5": 0.0},
        "zt": {"n": 1, "f1_at_0_25": 1.0, "f1_at_0_5": 1.0},
    }
    assert out["breakdown"]["n_missing"] == 2 and out["breakdown"]["n_items"] == 4
    assert out["coverage"] == 0.5
    assert out["item_metrics"]["f1_at_0_5"] == [0.0, 1.0, 1.0, 0.0]
    assert out["breakdown"]["iou"] == (
        "inter/(V1 + V2 - inter + 1e-8), axis-aligned boxes (cx, cy, cz, dx, dy, dz); a zero-volume predicted box "
        "scores 0"
    )
    assert out["reconstructed"] == []


@pytest.mark.parametrize(
    ("gt", "pred", "params", "loc"),
    [
        ([[UNIT], [UNIT]], [[UNIT], [[0, 0, 0, 1, 1, -1e-9]]], {}, ("predictions", "items", 1, "pred_boxes")),
        ([[UNIT], [[0, 0, 0, 1, 0, 1]]], [[UNIT]] * 2, {"iou_eps": "none"}, ("answer_key", "items", 1, "gt_boxes")),
        (
            [[UNIT], [], [UNIT, [0, 0, 0, -1, 1, 1]]],
            [[]] * 3,
            {"task": "multi3drefer"},
            ("answer_key", "items", 2, "gt_boxes"),
        ),
        ([[UNIT], []], [[UNIT], []], {}, ("answer_key", "items", 1, "gt_boxes")),
        ([[UNIT]], [[UNIT]], {"thresholds": [0.5, 0.5]}, ("params", "thresholds")),
    ],
)
def test_grounding_errors_name_the_item(gt: list, pred: list, params: dict, loc: tuple) -> None:
    with pytest.raises(InvalidInput) as err:
        grounding(gt, pred, **params)
    assert err.value.loc == loc


def score_n_items(module: object, n: int) -> dict:
    """``n`` answer-key items of one scene3d scorer (grounding and QA answered correctly, densecap unanswered)."""
    if module is G:
        return grounding([[UNIT]] * n, [[UNIT]] * n)
    if module is Q:
        return qa([["red"]] * n, ["red"] * n)
    keys = [D.AnswerKeyItem(item_id=f"o{k}", refs=["a chair"], gt_box=UNIT) for k in range(n)]
    return D.score(keys, [], D.Params(n_resamples=0))


@pytest.mark.parametrize("module", [G, Q, D])
def test_item_limit(module: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """More than MAX_ITEMS answer-key items is rejected on answer_key.items; exactly MAX_ITEMS is accepted."""
    monkeypatch.setattr(module, "MAX_ITEMS", 2)
    assert len(score_n_items(module, 2)["item_scores"]) == 2
    with pytest.raises(InvalidInput) as err:
        score_n_items(module, 3)
    assert err.value.loc == ("answer_key", "items")


def test_grounding_cost_counts_ious_and_assignments() -> None:
    """Per query 20 + |P|·|G|, plus max(|P|, |G|)³ for a multi3drefer query with both sides above one box."""
    keys = [G.AnswerKeyItem(item_id="a", gt_boxes=[UNIT] * 3), G.AnswerKeyItem(item_id="b", gt_boxes=[UNIT] * 2)]
    preds = [G.PredictionItem(item_id="a", pred_boxes=[UNIT] * 2), G.PredictionItem(item_id="b", pred_boxes=[UNIT])]
    assert G.cost(keys, preds, G.Params(task="multi3drefer")) == (20 + 6 + 27) + (20 + 2)
    assert G.cost(keys, preds, G.Params()) == (20 + 6) + (20 + 2)
    assert G.cost(keys, preds[1:], G.Params(task="multi3drefer")) == 20 + (20 + 2)


def test_prediction_cleaning_drops_the_period_before_trimming() -> None:
    """The prediction's trailing period goes before clean_answer trims spaces ("red ." → "red", while
    clean_answer alone leaves "red "); a one-character answer is left to clean_answer."""
    assert Q.clean_prediction("red .") == "red"
    assert Q.clean_answer("red .") == "red "
    assert Q.clean_prediction(".") == "" and Q.clean_prediction("A") == "a"
    assert Q.clean_prediction("1.5") == "fifteen"  # only a final period goes; the decimal point is then removed
    assert Q.clean_prediction("ßchair") == "chair"  # lower-cased, not upper-cased ("SS"), then non-ASCII removed
    out = qa([["red"]], ["red ."])
    assert out["item_metrics"]["em_at_1"] == [1.0]


def test_refined_match_in_either_direction() -> None:
    assert Q.answer_match("big brown chair", ["brown chair"]) == (0, 1)
    assert Q.answer_match("brown", ["table", "a brown chair"]) == (0, 1)
    assert Q.answer_match("chair", ["table", "desk"]) == (0, 0)
    assert Q.answer_match("desk", ["table", "desk"]) == (1, 1)


def test_em_at_10_uses_the_top1_answer_without_a_list() -> None:
    """a: 'Red.' is second in the (cleaned) list; b: no list, its top-1 answer is right; c: wrong list →
    EM@10 = 2/3 with Wilson 95% interval [0.207660, 0.938508]; EM@1 = 1/3, [0.061492, 0.792340]."""
    keys = [Q.AnswerKeyItem(item_id=k, refs=[r]) for k, r in (("a", "red"), ("b", "two"), ("c", "blue"))]
    preds = [
        Q.PredictionItem(item_id="a", pred="blue", pred_topk=["blue", "Red."]),
        Q.PredictionItem(item_id="b", pred="2"),
        Q.PredictionItem(item_id="c", pred="green", pred_topk=["green", "navy"]),
    ]
    out = Q.score(keys, preds, Q.Params(n_resamples=0))
    assert out["item_metrics"]["em_at_10"] == [1.0, 1.0, 0.0]
    at10, at1 = out["scores"]["em_at_10"], out["scores"]["em_at_1"]
    assert [at10["value"], at10["ci_low"], at10["ci_high"]] == pytest.approx([2 / 3, 0.207660, 0.938508], abs=1e-6)
    assert [at1["value"], at1["ci_low"], at1["ci_high"]] == pytest.approx([1 / 3, 0.061492, 0.792340], abs=1e-6)
    assert at10["n"] == at1["n"] == 3
    at90 = Q.score(keys, preds, Q.Params(n_resamples=0, confidence=0.9))["scores"]["em_at_10"]
    assert [at90["ci_low"], at90["ci_high"]] == pytest.approx([0.253534, 0.921734], abs=1e-6)
    raw = Q.score(keys, preds, Q.Params(n_resamples=0, normalize="none"))
    assert raw["item_metrics"]["em_at_10"] == [0.0, 0.0, 0.0]
    assert "em_at_10" not in qa([["red"]], ["red"])["scores"]


def test_qa_intervals_and_breakdown() -> None:
    """ROUGE-L and CIDEr carry the seeded percentile bootstrap interval of their per-item values; EM the Wilson
    interval; per-type means are over the type's items only."""
    keys = [
        Q.AnswerKeyItem(item_id="a", refs=["brown chair"], qtype="What"),
        Q.AnswerKeyItem(item_id="b", refs=["two"], qtype="How"),
        Q.AnswerKeyItem(item_id="c", refs=["on the table"], qtype="What"),
        Q.AnswerKeyItem(item_id="d", refs=["left"]),
    ]
    preds = [Q.PredictionItem(item_id=k, pred=p) for k, p in (("a", "chair"), ("b", "two"), ("c", "table"))]
    params = Q.Params(n_resamples=300, seed=5, tokenizer="whitespace")
    out = Q.score(keys, preds, params)
    for name in ("rouge_l", "cider"):
        values = np.array(out["item_metrics"][name])
        low, high, _ = bootstrap_mean_ci(values, 300, 5, 0.95)
        assert out["scores"][name] == {"value": pytest.approx(values.mean()), "ci_low": low, "ci_high": high, "n": 4}
    assert out["item_metrics"]["rouge_l"][3] == 0.0
    rouge = out["item_metrics"]["rouge_l"]
    by = out["breakdown"]["by_qtype"]
    assert set(by) == {"What", "How"} and by["What"]["n"] == 2 and by["How"]["n"] == 1
    assert by["What"]["rouge_l"] == pytest.approx((rouge[0] + rouge[2]) / 2, rel=1e-12, abs=0)
    assert by["What"]["em_at_1"] == 0.0 and by["What"]["em_refined"] == 1.0 and by["How"]["em_at_1"] == 1.0
    b = out["breakdown"]
    assert (b["n_items"], b["n_missing"], b["normalize"], b["tokenizer"]) == (4, 1, "chatscene", "whitespace")
    assert out["coverage"] == 0.75
    assert [r["value"] for r in out["item_scores"]] == [0.0, 1.0, 0.0, 0.0]
    assert (out["scores"]["em_at_1"]["value"], out["scores"]["em_refined"]["value"]) == (0.25, 0.75)
    assert b["scale"] == "pycocoevalcap's (no x100); EM as fractions"
    assert b["notes"] == (
        "BLEU is corpus-level (its per-item values are per-sentence BLEU); CIDEr-D's IDF comes from the references "
        "of the scored set, so per-type CIDEr means use the whole set's IDF"
    )
    assert out["reconstructed"] == []


def test_em_wilson_intervals_use_the_confidence() -> None:
    """EM@1 = 1/4: Wilson 90% [0.057907, 0.643832]; refined EM = 3/4: [0.356168, 0.942093]; ROUGE-L without
    resamples has no interval."""
    out = qa([["brown chair"], ["two"], ["on the table"], ["left"]], ["chair", "two", "table", "right"], confidence=0.9)
    at1, refined = out["scores"]["em_at_1"], out["scores"]["em_refined"]
    assert [at1["value"], at1["ci_low"], at1["ci_high"], at1["n"]] == pytest.approx(
        [0.25, 0.057907, 0.643832, 4], abs=1e-6
    )
    assert [refined["value"], refined["ci_low"], refined["ci_high"], refined["n"]] == pytest.approx(
        [0.75, 0.356168, 0.942093, 4], abs=1e-6
    )
    assert out["scores"]["rouge_l"]["ci_low"] is None and out["scores"]["rouge_l"]["n"] == 4
    assert {type(v) for name in ("em_at_1", "em_refined") for v in out["item_metrics"][name]} == {float}


def test_a_missing_answer_is_the_empty_candidate() -> None:
    """Only a: 'red chair' is answered: corpus BLEU-1 = (2/2)·exp(1 - 3/2) (candidate length 2, closest
    reference lengths 2 + 1); the missing answer's per-item BLEU is exactly 0 (its brevity factor underflows)."""
    keys = [Q.AnswerKeyItem(item_id="a", refs=["red chair"]), Q.AnswerKeyItem(item_id="b", refs=["two"])]
    out = Q.score(keys, [Q.PredictionItem(item_id="a", pred="red chair")], Q.Params(n_resamples=0))
    assert out["scores"]["bleu_1"] == {"value": pytest.approx(math.exp(-0.5), rel=1e-9), "ci_low": None,
                                       "ci_high": None, "n": 2}  # fmt: skip
    assert out["item_metrics"]["bleu_1"] == [pytest.approx(1.0, rel=1e-9), 0.0]
    assert out["item_metrics"]["rouge_l"] == [1.0, 0.0]


def test_answers_and_references_use_the_tokenizer() -> None:
    """Without normalisation, 'ptb_approx' lower-cases and drops punctuation in answers and references alike, and
    a newline separates words: ROUGE-L 1 for both items; 'whitespace' keeps 'Brown', 'chair!' and 'chair.' (0)."""
    refs, preds = [["brown chair"], ["Brown chair."]], ["Brown chair!", "brown\nchair"]
    assert qa(refs, preds, normalize="none")["item_metrics"]["rouge_l"] == [1.0, 1.0]
    assert qa(refs, preds, normalize="none", tokenizer="whitespace")["item_metrics"]["rouge_l"] == [0.0, 0.0]


def test_qa_token_cap_is_128_tokens() -> None:
    """128 tokens are accepted; 129 in a reference raise at that reference."""
    assert qa([["x " * 128]], ["x " * 128], tokenizer="whitespace", normalize="none")["scores"]["em_at_1"]["value"] == 1
    with pytest.raises(InvalidInput) as err:
        qa([["red"], ["blue", "x " * 129]], ["red", "blue"], tokenizer="whitespace")
    assert err.value.loc == ("answer_key", "items", 1, "refs", 1)


def test_qa_cost_counts_characters() -> None:
    """Characters of answers (3), top-k lists (1 + 2) and references (3 + 4 + 3), plus one per question."""
    keys = [Q.AnswerKeyItem(item_id="a", refs=["red", "blue"]), Q.AnswerKeyItem(item_id="b", refs=["two"])]
    preds = [Q.PredictionItem(item_id="a", pred="blu", pred_topk=["a", "bc"])]
    assert Q.cost(keys, preds, Q.Params()) == 3 + 3 + 10 + 2


@pytest.mark.parametrize(
    ("caption", "tokens"),
    [
        ("sos eos", "sos eos"),
        ("SOS a eos.", "sos a eos"),
        ("sos", "sos sos eos"),
        ("sos a", "sos sos a eos"),
        ("a eos", "sos a eos eos"),
        ("", "sos eos"),
        ("(a) chair", "sos -lrb- a -rrb- chair eos"),
        ('"Sos chair eos"', "sos chair eos"),
        ("sos, eos", "sos eos"),
        ("sosa eos", "sos sosa eos eos"),
    ],
)
def test_caption_wrapping_rule(caption: str, tokens: str) -> None:
    """Wrapped unless the first and last of two words or more are 'sos' and 'eos' (case and punctuation around
    them ignored); wrap off leaves the tokens as they are."""
    assert D._tokens([caption], [("c",)], D.Params(n_resamples=0))[0] == [tokens.split()]
    bare = D._tokens([caption], [("c",)], D.Params(n_resamples=0, wrap=False))[0]
    assert bare == [ptb_tokens(caption)]


def test_densecap_without_wrapping() -> None:
    """wrap off: pre-wrapped captions score as bare ones with wrap on while every object is hit; a missed object
    is then the empty caption (ROUGE-L 0) instead of 'sos eos' (ROUGE-L > 0)."""
    hit = {"o1": ("a brown chair", UNIT), "o2": ("a white table", UNIT), "o3": ("the monitor", UNIT)}
    wrapped = {k: (f"sos {c} eos", b) for k, (c, b) in hit.items()}
    assert densecap(wrapped, wrap=False)["scores"] == densecap(hit)["scores"]
    missed = {"o1": hit["o1"], "o3": hit["o3"]}
    bare = densecap({k: wrapped[k] for k in missed}, wrap=False)
    assert bare["item_metrics"]["rouge_l_at_0_5"][1] == 0.0
    assert densecap(missed)["item_metrics"]["rouge_l_at_0_5"][1] > 0
    assert bare["breakdown"]["placeholder"] == "" and bare["breakdown"]["wrap"] is False
    assert densecap(missed)["breakdown"]["placeholder"] == "sos eos"


def test_densecap_iou_exactly_at_the_threshold_follows_op() -> None:
    keys = [D.AnswerKeyItem(item_id="o", refs=["a chair", "the red chair"], gt_box=TALL)]
    preds = [D.PredictionItem(item_id="o", caption="a red chair", box=BIG)]
    ge = D.score(keys, preds, D.Params(n_resamples=0))
    gt = D.score(keys, preds, D.Params(n_resamples=0, op="gt"))
    assert ge["breakdown"]["n_hit"] == {"0_25": 1, "0_5": 1}
    assert gt["breakdown"]["n_hit"] == {"0_25": 1, "0_5": 0} and gt["breakdown"]["op"] == "gt"
    assert gt["scores"]["rouge_l_at_0_5"]["value"] < ge["scores"]["rouge_l_at_0_5"]["value"]


def test_densecap_intervals_and_breakdown() -> None:
    """CIDEr-D and ROUGE-L: seeded bootstrap interval of the per-object values; BLEU-4 is corpus-level (no
    interval); BLEU-1..4 per threshold are the corpus values of the candidates used at that threshold."""
    preds = {"o1": ("a brown chair", UNIT), "o3": ("A black monitor.", shifted(1.0))}
    out = densecap(preds, n_resamples=300, seed=2)
    for key in ("cider_at_0_25", "rouge_l_at_0_5"):
        values = np.array(out["item_metrics"][key])
        low, high, _ = bootstrap_mean_ci(values, 300, 2, 0.95)
        assert out["scores"][key] == {"value": pytest.approx(values.mean()), "ci_low": low, "ci_high": high, "n": 3}
    assert out["scores"]["bleu_4_at_0_25"] == {"value": pytest.approx(0.346578, abs=1e-6), "ci_low": None,
                                               "ci_high": None, "n": 3}  # fmt: skip
    refs = [
        ["sos this is a brown chair eos", "sos a chair next to the desk eos"],
        ["sos a white table eos"],
        ["sos the black monitor eos"],
    ]
    for suffix, third in (("0_25", "sos a black monitor eos"), ("0_5", "sos eos")):
        text = score_captions(["sos a brown chair eos", "sos eos", third], refs)
        assert out["breakdown"]["bleu_1_to_4"][suffix] == pytest.approx(
            [text[f"bleu_{m}"] for m in range(1, 5)], rel=1e-12, abs=0
        )
        assert out["item_metrics"][f"bleu_4_at_{suffix}"] == pytest.approx(text["bleu_4_items"], rel=1e-12, abs=0)
    assert out["breakdown"]["n_missing"] == 1 and out["breakdown"]["n_objects"] == 3
    assert out["breakdown"]["tokenizer"] == "ptb_approx" and out["reconstructed"] == []
    off = {"value": None, "reason": "meteor=false"}
    assert out["breakdown"]["meteor"] == {"0_25": off, "0_5": off}
    assert "meteor_at_0_5" not in out["scores"]
    assert out["coverage"] == pytest.approx(2 / 3)
    assert [r["value"] for r in out["item_scores"]] == out["item_metrics"]["cider_at_0_5"]


@pytest.mark.parametrize(
    ("box", "caption", "loc"),
    [
        ([0, 0, 0, 1, 1, 0], "a chair", ("predictions", "items", 1, "box")),
        (UNIT, "x " * 126, None),
        (UNIT, "x " * 127, ("predictions", "items", 1, "caption")),
    ],
)
def test_densecap_input_checks(box: list[float], caption: str, loc: tuple | None) -> None:
    """A box size ≤ 0 is rejected at its prediction; a caption may hold 126 words (128 tokens with sos/eos)."""
    keys = [D.AnswerKeyItem(item_id=f"o{k}", refs=["a chair"], gt_box=UNIT) for k in range(2)]
    preds = [
        D.PredictionItem(item_id="o1", caption="a chair", box=UNIT),
        D.PredictionItem(item_id="o0", caption=caption, box=box),
    ]
    if loc is None:
        assert D.score(keys, preds, D.Params(n_resamples=0))["breakdown"]["n_hit"] == {"0_25": 2, "0_5": 2}
        return
    with pytest.raises(InvalidInput) as err:
        D.score(keys, preds, D.Params(n_resamples=0))
    assert err.value.loc == loc


def test_densecap_key_errors_name_the_object() -> None:
    bad_box = [
        D.AnswerKeyItem(item_id="o0", refs=["a"], gt_box=UNIT),
        D.AnswerKeyItem(item_id="o1", refs=["a"], gt_box=[0, 0, 0, 1, -1, 1]),
    ]
    with pytest.raises(InvalidInput) as err:
        D.score(bad_box, [], D.Params(n_resamples=0))
    assert err.value.loc == ("answer_key", "items", 1, "gt_box")
    long_ref = [D.AnswerKeyItem(item_id="o0", refs=["a", "x " * 127], gt_box=UNIT)]
    with pytest.raises(InvalidInput) as err:
        D.score(long_ref, [], D.Params(n_resamples=0))
    assert err.value.loc == ("answer_key", "items", 0, "refs", 1)


def test_densecap_cost_counts_characters_per_threshold() -> None:
    """Two thresholds × (caption 7 + references 1 + 3) characters, plus one per object."""
    keys = [
        D.AnswerKeyItem(item_id="o0", refs=["a", "red"], gt_box=UNIT),
        D.AnswerKeyItem(item_id="o1", refs=["b"], gt_box=UNIT),
    ]
    preds = [D.PredictionItem(item_id="o0", caption="a chair", box=UNIT)]
    assert D.cost(keys, preds, D.Params()) == 2 * (7 + 1 + 3 + 1) + 2


def test_graded_metric_intervals_are_seeded_bootstraps() -> None:
    """Multi3DRefer F1, QA ROUGE-L/CIDEr and Scan2Cap CIDEr/ROUGE-L on 12 items with graded values: each
    interval is the seeded percentile bootstrap of the per-item values at the requested confidence."""
    rng = np.random.default_rng(11)
    gt = [[[*rng.uniform(0, 6, 3), *rng.uniform(0.5, 2, 3)] for _ in range(3)] for _ in range(12)]
    pred = [[[*(np.array(b[:3]) + rng.normal(0, 0.1, 3)), *b[3:]] for b in g[: 1 + k % 3]] for k, g in enumerate(gt)]
    out = grounding(gt, pred, task="multi3drefer", n_resamples=400, seed=3, confidence=0.9)
    for t in ("0_25", "0_5"):
        assert_seeded_bootstrap(out["scores"][f"f1_at_{t}"], out["item_metrics"][f"f1_at_{t}"], 400, 3, 0.9)
    words = ["red", "chair", "table", "on", "the", "left", "of", "wooden", "big", "lamp"]
    refs = [" ".join(rng.choice(words, 4)) for _ in range(12)]
    answers = [" ".join([*r.split()[: k % 4], *rng.choice(words, 2)]) for k, r in enumerate(refs)]
    out = qa([[r] for r in refs], answers, n_resamples=400, seed=5, confidence=0.9)
    for name in ("rouge_l", "cider"):
        assert_seeded_bootstrap(out["scores"][name], out["item_metrics"][name], 400, 5, 0.9)
    keys = [D.AnswerKeyItem(item_id=f"o{k}", refs=[r], gt_box=UNIT) for k, r in enumerate(refs)]
    items = [D.PredictionItem(item_id=f"o{k}", caption=a, box=UNIT) for k, a in enumerate(answers)]
    out = D.score(keys, items, D.Params(n_resamples=400, seed=7, confidence=0.9))
    for key in ("cider_at_0_25", "rouge_l_at_0_5"):
        assert_seeded_bootstrap(out["scores"][key], out["item_metrics"][key], 400, 7, 0.9)
    assert out["scores"]["bleu_4_at_0_5"]["ci_low"] is None


def test_a_newline_separates_caption_words() -> None:
    with_newline = densecap({"o1": ("a brown\nchair", UNIT)})
    assert with_newline["scores"] == densecap({"o1": ("a brown chair", UNIT)})["scores"]


NORMALIZE_FIXTURE = Path(__file__).parent / "fixtures" / "scene3d_qa_normalize.json"


@pytest.mark.parametrize("mode", ["chatscene", "scanqa_clean", "leo"])
def test_normalize_modes_equal_their_upstream_code(mode: str) -> None:
    """62 answers against their references: EM, refined EM and the texts handed to the caption metrics (after the
    newline-to-space and strip that precede tokenisation) are those Chat-Scene (475e106, ScanQA and SQA3D paths)
    and LEO (567f2d8) compute, run once on these cases into the fixture."""
    cases = json.loads(NORMALIZE_FIXTURE.read_text())["cases"]
    keys = [Q.AnswerKeyItem(item_id=f"q{k:02d}", refs=c["refs"]) for k, c in enumerate(cases)]
    preds = [Q.PredictionItem(item_id=f"q{k:02d}", pred=c["pred"]) for k, c in enumerate(cases)]
    params = Q.Params(n_resamples=0, normalize=mode)
    out = Q.score(keys, preds, params)
    expected = [c["expected"][mode] for c in cases]
    assert out["item_metrics"]["em_at_1"] == [float(e["em"][0]) for e in expected]
    assert out["item_metrics"]["em_refined"] == [float(e["em"][1]) for e in expected]
    _, _, texts, refs, _ = Q._texts(keys, preds, params)

    def prepared(text: str) -> str:
        return text.replace("\n", " ").strip()

    assert [prepared(t) for t in texts] == [prepared(e["pred"]) for e in expected]
    assert [[prepared(r) for r in rs] for rs in refs] == [[prepared(r) for r in e["refs"]] for e in expected]


def test_scanqa_clean_differs_from_chatscene_and_leo_where_upstream_does() -> None:
    """Chat-Scene's current ScanQA path compares with the raw references ('2' is not 'two'); LEO's match takes the
    first reference that decides ('chair' in 'brown chair' before the equal 'chair'); LEO's cleaning keeps the
    space left by a removed period ('red .' → 'red ', not 'red')."""
    refs, preds = [["2"], ["brown chair", "chair"], ["red"]], ["Two.", "chair", "red ."]
    em = {m: qa(refs, preds, normalize=m)["item_metrics"]["em_at_1"] for m in ("chatscene", "scanqa_clean", "leo")}
    assert em == {"chatscene": [0.0, 1.0, 1.0], "scanqa_clean": [1.0, 1.0, 1.0], "leo": [1.0, 0.0, 0.0]}
    assert Q.answer_match_leo("", ["red"]) == (0, 1) and Q.answer_match("", ["red"]) == (0, 0)


def test_conventions_name_the_upstreams() -> None:
    """The catalog lists normalize (default chatscene) and tokenizer for QA, op and tokenizer for Scan2Cap."""
    qa_conv = {c.param: c for c in Q.SPEC.conventions}
    assert qa_conv["normalize"].default == "chatscene" == Q.Params().normalize
    assert [o.value for o in qa_conv["normalize"].options] == ["chatscene", "scanqa_clean", "leo", "none"]
    assert qa_conv["tokenizer"].default == "ptb_approx" == Q.Params().tokenizer
    dc_conv = {c.param: c for c in D.SPEC.conventions}
    assert dc_conv["op"].default == "ge" == D.Params().op and dc_conv["tokenizer"].default == D.Params().tokenizer
    assert (Q.SPEC.version, D.SPEC.version) == ("2", "2")


def test_meteor_param_without_java_is_null_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """meteor=true without Java: no meteor score, the breakdown says why; the cost then counts the JVM start."""
    monkeypatch.setenv("PATH", "/nonexistent")
    out = qa([["red"]], ["red"], meteor=True)
    assert "meteor" not in out["scores"] and "no java executable" in out["breakdown"]["meteor"]["reason"]
    dc = densecap({"o1": ("a brown chair", UNIT)}, meteor=True)
    assert all("no java executable" in m["reason"] for m in dc["breakdown"]["meteor"].values())
    keys = [Q.AnswerKeyItem(item_id="a", refs=["red"])]
    plain = Q.cost(keys, [], Q.Params())
    assert Q.cost(keys, [], Q.Params(meteor=True)) == plain + Q.METEOR_START_COST + Q.METEOR_ITEM_COST
    assert Q.cost(keys, [], Q.Params(tokenizer="ptb_java")) == plain + Q.JAVA_START_COST
