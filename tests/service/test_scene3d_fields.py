"""scene3d scorers: dense captioning's ROUGE-L and METEOR at IoU 0.25 and QA's BLEU-3, against pycocoevalcap's own
Rouge, Bleu and Meteor classes on the candidates each threshold selects (docs/scene3d.md)."""

import numpy as np
import pytest
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.rouge.rouge import Rouge

from service.scoring import coco_java
from service.scoring import scene3d_densecap as D
from service.scoring import scene3d_qa as Q
from tests.conftest import service_unavailable

UNIT = [0.0, 0.0, 0.0, 2.0, 2.0, 2.0]
NEAR = [1.0, 0.0, 0.0, 2.0, 2.0, 2.0]  # a 2-cube shifted by 1: IoU 1/3, a hit at 0.25 but not at 0.5
REFS = {
    "o1": ["a brown wooden chair", "the chair next to the desk"],
    "o2": ["a black monitor on the desk"],
    "o3": ["a white table with four legs", "a table"],
}
PREDS = {"o1": ("a brown chair", UNIT), "o2": ("the black monitor", NEAR)}  # o3 has no prediction


def densecap(**params: object) -> dict:
    keys = [D.AnswerKeyItem(item_id=k, refs=refs, gt_box=UNIT) for k, refs in REFS.items()]
    preds = [D.PredictionItem(item_id=k, caption=c, box=b) for k, (c, b) in PREDS.items()]
    return D.score(keys, preds, D.Params.model_validate({"n_resamples": 0, "tokenizer": "whitespace", **params}))


def wrapped_candidates(threshold: float) -> dict[int, list[str]]:
    """Chat-Scene's candidates: 'sos caption eos' when the box reaches the threshold, else 'sos eos'."""
    hit = {"o1": 1.0, "o2": 1 / 3}
    return {i: [f"sos {PREDS[k][0]} eos" if hit.get(k, 0.0) >= threshold else "sos eos"] for i, k in enumerate(REFS)}


def wrapped_references() -> dict[int, list[str]]:
    return {i: [f"sos {r} eos" for r in refs] for i, refs in enumerate(REFS.values())}


def test_densecap_rouge_l_at_0_25_equals_pycocoevalcap() -> None:
    """At 0.25 the shifted monitor counts (IoU 1/3), at 0.5 it is the placeholder, so the two values differ."""
    out = densecap()
    gts = wrapped_references()
    expected, _ = Rouge().compute_score(gts, wrapped_candidates(0.25))
    assert out["scores"]["rouge_l_at_0_25"]["value"] == pytest.approx(expected, rel=1e-12)
    at_half, _ = Rouge().compute_score(gts, wrapped_candidates(0.5))
    assert out["scores"]["rouge_l_at_0_5"]["value"] == pytest.approx(at_half, rel=1e-12)
    assert out["scores"]["rouge_l_at_0_25"]["value"] > out["scores"]["rouge_l_at_0_5"]["value"]


def test_densecap_meteor_at_0_25_scores_the_candidates_of_that_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """METEOR itself is pycocoevalcap's jar (compared in the java suite); here a stand-in scorer, the share of
    candidates with a word of their first reference besides sos/eos, shows which candidates reach METEOR at 0.25:
    the chair and the monitor (2/3), against the chair alone at 0.5 (1/3)."""

    def share(hyps: list[list[str]], refs: list[list[list[str]]]) -> dict:
        items = [float(bool((set(h) & set(r[0])) - {"sos", "eos"})) for h, r in zip(hyps, refs, strict=True)]
        return {"value": float(np.mean(items)), "items": items, "version": "stand-in"}

    monkeypatch.setattr(D, "meteor", share)
    out = densecap(meteor=True)
    assert out["scores"]["meteor_at_0_25"]["value"] == pytest.approx(2 / 3, rel=1e-15)
    assert out["scores"]["meteor_at_0_5"]["value"] == pytest.approx(1 / 3, rel=1e-15)
    assert out["item_metrics"]["meteor_at_0_25"] == [1.0, 1.0, 0.0]


@pytest.mark.java
@pytest.mark.timeout(900)
def test_densecap_meteor_at_0_25_equals_pycocoevalcaps_meteor() -> None:
    """With Java (skipped without it, failing in CI): meteor_at_0_25 is pycocoevalcap's Meteor on the 0.25
    candidates and wrapped references."""
    from pycocoevalcap.meteor.meteor import Meteor

    reason = coco_java.java_reason()
    if reason is not None:
        service_unavailable("Java", reason)

    out = densecap(meteor=True)
    expected, items = Meteor().compute_score(wrapped_references(), wrapped_candidates(0.25))
    assert out["scores"]["meteor_at_0_25"]["value"] == pytest.approx(expected, rel=1e-12, abs=0)
    assert out["item_metrics"]["meteor_at_0_25"] == pytest.approx(items, rel=1e-12, abs=0)


def test_qa_bleu_3_equals_pycocoevalcap() -> None:
    """Corpus BLEU-3 with the closest reference length: answers of 1 to 6 words against 1 to 3 references."""
    refs = [
        ["two chairs", "there are two chairs"],
        ["the lamp is on the left of the bed"],
        ["brown", "dark brown wood", "brown wooden"],
        ["it is next to the window on the wall"],
    ]
    preds = ["there are two", "lamp is on the left side", "dark brown", "next to the window"]
    keys = [Q.AnswerKeyItem(item_id=f"q{i}", refs=r) for i, r in enumerate(refs)]
    items = [Q.PredictionItem(item_id=f"q{i}", pred=p) for i, p in enumerate(preds)]
    out = Q.score(keys, items, Q.Params(n_resamples=0, normalize="none", tokenizer="whitespace"))
    (b1, b2, b3, b4), _ = Bleu(4).compute_score(
        {i: r for i, r in enumerate(refs)}, {i: [p] for i, p in enumerate(preds)}, verbose=0
    )
    assert out["scores"]["bleu_3"]["value"] == pytest.approx(b3, rel=1e-12)
    assert 0 < b4 < b3 < b2 < b1  # BLEU-3 is its own figure here, not a neighbour's
