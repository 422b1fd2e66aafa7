"""COCO caption metrics: measured pycocoevalcap figures, the PTB approximation, LCS, parity with pycocoevalcap."""

import itertools

import numpy as np
import pytest

from service.scoring.caption_metrics import caption_scores, lcs_lengths, ptb_tokens, score_captions

GTS = {"q1": ["a brown wooden chair", "the chair is brown"], "q2": ["two"], "q3": ["on the table"]}
RES = {"q1": "a brown chair", "q2": "two", "q3": "under the table"}
SCAN2CAP_REFS = {
    "o1": ["sos this is a brown chair eos", "sos a chair next to the desk eos"],
    "o2": ["sos a white table eos"],
    "o3": ["sos the black monitor eos"],
}
SCAN2CAP_CANDS = {"o1": "sos a brown chair eos", "o2": "sos eos", "o3": "sos a black monitor eos"}


def _score(refs: dict[str, list[str]], cands: dict[str, str]) -> dict:
    return score_captions([cands[k] for k in refs], [refs[k] for k in refs])


def test_pycocoevalcap_measured_figures() -> None:
    """pycocoevalcap 1.2 on three pre-tokenised items: BLEU-1..4, ROUGE-L, CIDEr (values printed to 6 digits)."""
    out = _score(GTS, RES)
    bleu = [out[f"bleu_{n}"] for n in range(1, 5)]
    assert bleu == pytest.approx([0.743038, 0.567505, 5.19e-6, 3.32e-6], rel=1e-3, abs=0)
    assert out["rouge_l"] == pytest.approx(0.834094, abs=1e-6)
    assert out["rouge_l_items"] == pytest.approx([0.835616, 1.0, 0.666667], abs=1e-6)
    assert out["cider"] == pytest.approx(2.484790, abs=1e-6)
    assert out["cider_items"] == pytest.approx([2.374666, 2.5, 2.579705], abs=1e-6)


def test_rouge_l_hand_computation() -> None:
    """q1: LCS("a brown chair", refs) = 3 and 2 → P = max(3/3, 2/3) = 1, R = max(3/4, 2/4) = 0.75,
    F = 2.44·0.75/(0.75 + 1.44) = 0.835616."""
    out = _score(GTS, RES)
    assert out["rouge_l_items"][0] == pytest.approx(2.44 * 0.75 / (0.75 + 1.44), rel=1e-12, abs=0)


def test_scan2cap_placeholder_cider_is_zero() -> None:
    """The missed object's 'sos eos' has CIDEr exactly 0 (sos and eos are in every reference: IDF 0)."""
    out = _score(SCAN2CAP_REFS, SCAN2CAP_CANDS)
    assert out["cider"] == pytest.approx(2.576982, abs=1e-6)
    assert out["cider_items"] == pytest.approx([3.145339, 0.0, 4.585607], abs=1e-6)
    assert out["cider_items"][1] == 0.0
    assert out["bleu_4"] == pytest.approx(0.346578, abs=1e-6)
    assert out["rouge_l_items"][1] > 0


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("The chair's brown!", "the chair 's brown"),
        ("It isn't on the table.", "it is n't on the table"),
        ('A "red" t-shirt (large), 3.5 meters...', "a red t-shirt large 3.5 meters"),
        ("I'm here -- now; ok?", "i 'm here now ok"),
        ("It's 5 o'clock: the TV is on", "it 's 5 o'clock the tv is on"),
    ],
)
def test_ptb_approximation(text: str, tokens: str) -> None:
    assert " ".join(ptb_tokens(text)) == tokens


def test_lcs_matches_brute_force() -> None:
    """Batched LCS rows equal the textbook O(|a||b|) recursion on random short sequences."""
    rng = np.random.default_rng(3)

    def lcs(a: list[int], b: list[int]) -> int:
        table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i, j in itertools.product(range(1, len(a) + 1), range(1, len(b) + 1)):
            same = a[i - 1] == b[j - 1]
            table[i][j] = table[i - 1][j - 1] + 1 if same else max(table[i - 1][j], table[i][j - 1])
        return table[-1][-1]

    pairs = [
        (rng.integers(0, 4, rng.integers(0, 9)).tolist(), rng.integers(0, 4, rng.integers(0, 9)).tolist())
        for _ in range(300)
    ]
    width = 9
    a = np.full((300, width), -1)
    b = np.full((300, width), -2)
    for k, (x, y) in enumerate(pairs):
        a[k, : len(x)], b[k, : len(y)] = x, y
    got = lcs_lengths(a, np.array([len(x) for x, _ in pairs]), b, np.array([len(y) for _, y in pairs]))
    assert got.tolist() == [lcs(x, y) for x, y in pairs]


def test_cider_is_corpus_dependent_and_bleu_order_invariant() -> None:
    """CIDEr-D's IDF comes from the scored set (adding an item changes the others' scores); item order changes
    nothing."""
    base = _score(GTS, RES)
    more = score_captions([*RES.values(), "a chair"], [*GTS.values(), ["a wooden chair"]])
    assert more["cider_items"][0] != pytest.approx(base["cider_items"][0], rel=1e-6, abs=0)
    order = [2, 0, 1]
    keys = list(GTS)
    swapped = score_captions([RES[keys[i]] for i in order], [GTS[keys[i]] for i in order])
    assert swapped["bleu_4"] == pytest.approx(base["bleu_4"], rel=1e-12, abs=0)
    assert swapped["cider_items"] == pytest.approx(base["cider_items"][order], rel=1e-12, abs=0)


def _random_sets(rng: np.random.Generator, n_sets: int) -> list[tuple[list[list[str]], list[list[list[str]]]]]:
    """Caption sets over small vocabularies (frequent repeats, empty candidates, 1-6 non-empty references: pycocoevalcap
    fails when no reference has a word)."""
    sets = []
    for _ in range(n_sets):
        vocab = np.array([f"w{i}" for i in range(int(rng.integers(3, 40)))])
        n = int(rng.integers(1, 20))
        sizes = rng.integers(1, 7, n)
        lengths = np.concatenate((rng.integers(0, 16, n), rng.integers(1, 16, int(sizes.sum()))))
        words = [vocab[rng.integers(0, vocab.size, k)].tolist() for k in lengths]
        starts = np.concatenate(([n], n + np.cumsum(sizes)))
        sets.append((words[:n], [words[starts[i] : starts[i + 1]] for i in range(n)]))
    return sets


@pytest.mark.slow
def test_parity_with_pycocoevalcap() -> None:
    """300 generated pre-tokenised caption sets: corpus and per-item BLEU-1..4, ROUGE-L, CIDEr-D to 1e-9."""
    bleu_ref = pytest.importorskip("pycocoevalcap.bleu.bleu")
    rouge_ref = pytest.importorskip("pycocoevalcap.rouge.rouge")
    cider_ref = pytest.importorskip("pycocoevalcap.cider.cider")
    for cands, refs in _random_sets(np.random.default_rng(2026), 300):
        gts = {i: [" ".join(r) for r in rs] for i, rs in enumerate(refs)}
        res = {i: [" ".join(c)] for i, c in enumerate(cands)}
        ours = caption_scores(cands, refs)
        bleu, bleu_items = bleu_ref.Bleu(4).compute_score(gts, res, verbose=0)
        rouge, rouge_items = rouge_ref.Rouge().compute_score(gts, res)
        cider, cider_items = cider_ref.Cider().compute_score(gts, res)
        for n in range(4):
            assert ours[f"bleu_{n + 1}"] == pytest.approx(bleu[n], rel=0, abs=1e-9)
            assert ours[f"bleu_{n + 1}_items"] == pytest.approx(bleu_items[n], rel=0, abs=1e-9)
        assert ours["rouge_l"] == pytest.approx(rouge, rel=0, abs=1e-9)
        assert ours["rouge_l_items"] == pytest.approx(rouge_items, rel=0, abs=1e-9)
        assert ours["cider"] == pytest.approx(cider, rel=0, abs=1e-9)
        assert ours["cider_items"] == pytest.approx(cider_items, rel=0, abs=1e-9)
