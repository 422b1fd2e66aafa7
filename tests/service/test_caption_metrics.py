"""COCO caption metrics: measured pycocoevalcap figures, the PTB tokenizer port against the CoreNLP jar, METEOR through
Java, LCS, parity with pycocoevalcap."""

import itertools
import json
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from service.scoring import coco_java
from service.scoring.caption_metrics import (
    caption_scores,
    lcs_lengths,
    meteor,
    score_captions,
    tokenize,
    tokenize_all,
)
from service.scoring.ptb_tokenizer import ptb_tokens
from tests.conftest import service_unavailable

CORPUS = Path(__file__).parent / "fixtures" / "ptb_corpus.json"


@pytest.fixture
def java() -> None:
    """Skip without Java and the jars (fail in CI, which requires them)."""
    reason = coco_java.java_reason()
    if reason is not None:
        service_unavailable("Java", reason)


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
        ('A "red" t-shirt (large), 3.5 meters...', "a red t-shirt -lrb- large -rrb- 3.5 meters"),
        ("I'm here -- now; ok?", "i 'm here now ok"),
        ("It's 5 o'clock: the TV is on", "it 's 5 o'clock the tv is on"),
        ("Mr. Smith [left] e.g. the U.S. desk", "mr. smith -lsb- left -rsb- e.g. the u.s. desk"),
        ("vitamin c.", "vitamin c."),
        ("the sofa {x} <b> 1 1/2", "the sofa -lcb- x -rcb- <b> 1\u00a01/2"),
        ("see http://a.com/\U0001f600x ok", "see http://a.com/\U0001f600x ok"),
        ('<p title="\U0001d400"> hi', '<p\u00a0title="\U0001d400"> hi'),
        ("see http://a.com/\U00010000\U0010ffff ok", "see http://a.com/\U00010000\U0010ffff ok"),
        ("see http://a.com/\uffff\U00010000 ok", "see http://a.com/\uffff\U00010000 ok"),
        ("see http://a.com/\ud800x ok", "see http://a.com/\ufffdx ok"),
    ],
)
def test_ptb_port_on_hand_cases(text: str, tokens: str) -> None:
    """Outputs of the CoreNLP 3.4.1 jar (-preserveLines -lowerCase, then pycocoevalcap's filter): brackets stay as
    -lrb-/-rrb- (the filter lists only the upper-case forms), abbreviation periods stay, "1 1/2" is one token.
    Characters above U+FFFF reach a token only inside a URL or a tag (a word drops them): they come back whole from
    the lexer's UTF-16 units, at both ends of the range and beside U+FFFF; a lone surrogate becomes U+FFFD."""
    assert " ".join(ptb_tokens(text)) == tokens


def _corpus() -> list[dict]:
    return json.loads(CORPUS.read_text())["items"]


def test_ptb_port_equals_the_jar_on_the_committed_corpus() -> None:
    """Every one of the 2,680 captions and answers (brackets, abbreviations, numbers, hyphens, quotes, clitics,
    unicode, markup) gets exactly the tokens the jar gave when the fixture was made."""
    items = _corpus()
    assert len(items) >= 2000
    wrong = [
        (it["text"], it["tokens"], ptb_tokens(it["text"])) for it in items if ptb_tokens(it["text"]) != it["tokens"]
    ]
    assert wrong == []


@pytest.mark.java
@pytest.mark.usefixtures("java")
def test_ptb_port_equals_the_jar_now() -> None:
    """The jar, run here on the corpus, gives the committed tokens and the port's."""
    items = _corpus()
    jar = coco_java.ptb_java_tokens([it["text"] for it in items])
    assert [j == it["tokens"] for j, it in zip(jar, items, strict=True)] == [True] * len(items)
    assert [j == ptb_tokens(it["text"]) for j, it in zip(jar, items, strict=True)] == [True] * len(items)


@pytest.mark.java
@pytest.mark.usefixtures("java")
def test_ptb_java_equals_pycocoevalcaps_own_tokenizer() -> None:
    """pycocoevalcap's PTBTokenizer class on the corpus (one caption per image, in corpus order; its captions split
    on single spaces, as its ROUGE-L does) gives the committed tokens on every text but one: "no </b> 20°C.",
    followed in its file by "The CANNOT ...", loses the acronym's period ("c", not "c."), the one way a caption's
    tokens depend on the next caption there (service/scoring/ptb_tokenizer.py)."""
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    items = [it for it in _corpus() if "\r" not in it["text"] and "\u2028" not in it["text"]]
    upstream = PTBTokenizer().tokenize({i: [{"caption": it["text"]}] for i, it in enumerate(items)})
    differ = [
        (it["text"], items[i + 1]["text"][:4])
        for i, it in enumerate(items)
        if [w for w in upstream[i][0].split(" ") if w] != it["tokens"]
    ]
    assert len(items) > 2600 and differ == [("no </b> 20\u00b0C.", "The ")]
    assert upstream[[it["text"] for it in items].index("no </b> 20\u00b0C.")] == ["no </b> 20 \u00b0 c"]


@pytest.mark.java
@pytest.mark.usefixtures("java")
def test_scorers_with_ptb_java_name_it_and_match_the_port() -> None:
    """scene3d_qa and scene3d_densecap with tokenizer=ptb_java: the jar ran (named in the breakdown, no note) and
    every score equals the ptb_approx run on captions with brackets, abbreviations and quotes."""
    from service.scoring import scene3d_densecap as D
    from service.scoring import scene3d_qa as Q

    texts = [it["text"] for it in _corpus()[:60] if it["text"].strip()]
    keys = [Q.AnswerKeyItem(item_id=f"q{k}", refs=[t, texts[k - 1]]) for k, t in enumerate(texts)]
    preds = [Q.PredictionItem(item_id=f"q{k}", pred=texts[(k + 3) % len(texts)]) for k in range(len(texts))]
    java = Q.score(keys, preds, Q.Params(n_resamples=0, tokenizer="ptb_java"))
    port = Q.score(keys, preds, Q.Params(n_resamples=0))
    assert java["breakdown"]["tokenizer"] == "ptb_java" and "tokenizer_note" not in java["breakdown"]
    assert java["scores"] == port["scores"] and java["item_metrics"] == port["item_metrics"]
    box = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    dkeys = [D.AnswerKeyItem(item_id=f"o{k}", refs=[t], gt_box=box) for k, t in enumerate(texts)]
    dpreds = [D.PredictionItem(item_id=f"o{k}", caption=texts[-k], box=box) for k in range(len(texts))]
    djava = D.score(dkeys, dpreds, D.Params(n_resamples=0, tokenizer="ptb_java"))
    assert djava["breakdown"]["tokenizer"] == "ptb_java"
    assert djava["scores"] == D.score(dkeys, dpreds, D.Params(n_resamples=0))["scores"]


def test_ptb_java_without_java_runs_the_port_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """No java on PATH: 'ptb_java' falls back to the port, named with the reason; METEOR is null with the reason."""
    monkeypatch.setenv("PATH", "/nonexistent")
    tokens, ran, note = tokenize_all(["A (red) chair."], "ptb_java")
    assert (tokens, ran) == ([["a", "-lrb-", "red", "-rrb-", "chair"]], "ptb_approx")
    assert note is not None and "no java executable" in note
    out = meteor([["a", "chair"]], [[["a", "chair"]]])
    assert out["value"] is None and "no java executable" in out["reason"]


@pytest.mark.java
@pytest.mark.timeout(900)
@pytest.mark.usefixtures("java")
def test_meteor_equals_pycocoevalcaps_meteor() -> None:
    """METEOR 1.5 through the shared JVM equals pycocoevalcap's Meteor class (its own JVM) per item and overall on 40
    generated items, and gives pycocoevalcap's 0.361643 on the three QA items."""
    from pycocoevalcap.meteor.meteor import Meteor

    rng = np.random.default_rng(8)
    words = ["a", "brown", "chair", "table", "is", "next", "to", "the", "white", "sofa", "sitting", "chairs"]
    hyps = [list(rng.choice(words, rng.integers(1, 8))) for _ in range(40)]
    refs = [[list(rng.choice(words, rng.integers(1, 8))) for _ in range(rng.integers(1, 4))] for _ in range(40)]
    ours = meteor(hyps, refs)
    gts = {i: [" ".join(r) for r in rs] for i, rs in enumerate(refs)}
    res = {i: [" ".join(h)] for i, h in enumerate(hyps)}
    total, items = Meteor().compute_score(gts, res)
    assert ours["value"] == pytest.approx(total, rel=1e-12, abs=0)
    assert ours["items"] == pytest.approx(items, rel=1e-12, abs=0)
    assert coco_java.METEOR.started and ours["version"].startswith("METEOR 1.5")
    three = meteor([RES[k].split() for k in GTS], [[r.split() for r in GTS[k]] for k in GTS])
    assert three["value"] == pytest.approx(0.361643, abs=1e-6)  # pycocoevalcap 1.2's figure (docs/scene3d.md)


def test_lcs_matches_brute_force() -> None:
    """Batched LCS rows equal the textbook O(|a||b|) recursion on random short sequences."""
    rng = np.random.default_rng(3)

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
    assert got.tolist() == [_lcs(x, y) for x, y in pairs]
    assert got.dtype == np.int64


def test_lcs_beyond_one_chunk() -> None:
    """8,200 pairs (more than one 8,192-row chunk): the first chunk holds only empty rows (LCS 0, skipped) and
    the later rows are still computed: LCS([0, 1, 2], [2, 1, 2]) = 2, LCS([5], [5]) = 1."""
    n = 8200
    a, b = np.full((n, 3), -1), np.full((n, 3), -2)
    a_len, b_len = np.zeros(n, dtype=np.int64), np.full(n, 3)
    a[-8:], b[-8:], a_len[-8:] = [0, 1, 2], [2, 1, 2], 3
    a[-1], b[-1], a_len[-1], b_len[-1] = [5, -1, -1], [5, -2, -2], 1, 1
    got = lcs_lengths(a, a_len, b, b_len)
    assert got[:-8].tolist() == [0] * (n - 8)
    assert got[-8:].tolist() == [2] * 7 + [1]


def test_rouge_l_of_one_word_candidates() -> None:
    """Every candidate one word long: 'two' vs 'two' → 1; 'red' vs 'blue red' → P = 1, R = 1/2, F = 2.44·0.5/(0.5
    + 1.44) = 0.628866."""
    out = caption_scores([["two"], ["red"]], [[["two"]], [["blue", "red"]]])
    assert out["rouge_l_items"] == pytest.approx([1.0, 2.44 * 0.5 / (0.5 + 1.44)], rel=1e-12, abs=0)


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


def _grams(tokens: list[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _lcs(a: Sequence[object], b: Sequence[object]) -> int:
    """The textbook O(|a||b|) longest-common-subsequence recursion."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, j in itertools.product(range(1, len(a) + 1), range(1, len(b) + 1)):
        same = a[i - 1] == b[j - 1]
        table[i][j] = table[i - 1][j - 1] + 1 if same else max(table[i - 1][j], table[i][j - 1])
    return table[-1][-1]


def _reference_bleu(cands: list[list[str]], refs: list[list[list[str]]]) -> tuple[list[float], list[list[float]]]:
    """pycocoevalcap's BleuScorer ('closest'), one item and one n at a time."""
    items: list[list[float]] = [[] for _ in range(4)]
    correct_sum, guess_sum, cand_sum, ref_sum = [0.0] * 4, [0.0] * 4, 0, 0
    for c, rs in zip(cands, refs, strict=True):
        closest = min((len(r) for r in rs), key=lambda x: (abs(x - len(c)), x))
        ratio, product = (len(c) + 1e-15) / (closest + 1e-9), 1.0
        for n in range(4):
            max_ref: Counter = Counter()
            for r in rs:
                max_ref |= _grams(r, n + 1)
            correct = sum(min(k, max_ref[g]) for g, k in _grams(c, n + 1).items())
            guess = max(0, len(c) - n)
            product *= (correct + 1e-15) / (guess + 1e-9)
            items[n].append(product ** (1 / (n + 1)) * (math.exp(1 - 1 / ratio) if ratio < 1 else 1.0))
            correct_sum[n] += correct
            guess_sum[n] += guess
        cand_sum, ref_sum = cand_sum + len(c), ref_sum + closest
    ratio, product, total = (cand_sum + 1e-15) / (ref_sum + 1e-9), 1.0, []
    for n in range(4):
        product *= (correct_sum[n] + 1e-15) / (guess_sum[n] + 1e-9)
        total.append(product ** (1 / (n + 1)) * (math.exp(1 - 1 / ratio) if ratio < 1 else 1.0))
    return total, items


def _reference_rouge(cands: list[list[str]], refs: list[list[list[str]]]) -> list[float]:
    """pycocoevalcap's Rouge: an empty sentence is the one token "" (``split(" ")``)."""
    out = []
    for c, rs in zip(cands, refs, strict=True):
        c = c or [""]
        prec = max(_lcs(c, r) / len(c) for r in rs)
        rec = max(_lcs(c, r) / len(r) for r in rs)
        out.append(2.44 * prec * rec / (rec + 1.44 * prec) if prec and rec else 0.0)
    return out


def _reference_cider(cands: list[list[str]], refs: list[list[list[str]]]) -> list[float]:
    """pycocoevalcap's CiderScorer (CIDEr-D, σ = 6), dictionaries of n-grams as in the original."""
    df: Counter = Counter()
    for rs in refs:
        df.update({g for r in rs for n in range(1, 5) for g in _grams(r, n)})
    log_n = math.log(len(cands))

    def vec(tokens: list[str]) -> tuple[list[dict], list[float], int]:
        v = [{g: tf * (log_n - math.log(max(1.0, df[g]))) for g, tf in _grams(tokens, n).items()} for n in range(1, 5)]
        return v, [math.sqrt(sum(x * x for x in d.values())) for d in v], sum(_grams(tokens, 2).values())

    out = []
    for c, rs in zip(cands, refs, strict=True):
        hyp, hyp_norm, hyp_bigrams = vec(c)
        total = 0.0
        for r in rs:
            ref, ref_norm, ref_bigrams = vec(r)
            for n in range(4):
                val = sum(min(x, ref[n].get(g, 0.0)) * ref[n].get(g, 0.0) for g, x in hyp[n].items())
                if hyp_norm[n] != 0 and ref_norm[n] != 0:
                    val /= hyp_norm[n] * ref_norm[n]
                total += val * math.exp(-((hyp_bigrams - ref_bigrams) ** 2) / (2 * 6.0**2))
        out.append(total / 4 / len(rs) * 10.0)
    return out


def test_random_sets_match_a_transcription_of_pycocoevalcap() -> None:
    """15 small random caption sets (tiny vocabularies, so n-grams repeat; empty candidates; ties of reference
    lengths): the vectorised BLEU-1..4 (corpus and per item), ROUGE-L and CIDEr-D equal a line-by-line
    transcription of pycocoevalcap 1.2's scorers (checked against pycocoevalcap itself on 300 sets) to 1e-12
    (CIDEr 1e-9)."""
    rng = np.random.default_rng(5)
    for _ in range(15):
        vocab = [f"w{i}" for i in range(int(rng.integers(2, 12)))]
        n = int(rng.integers(1, 8))

        def words(low: int) -> list[str]:
            return [vocab[k] for k in rng.integers(0, len(vocab), rng.integers(low, 9))]  # noqa: B023

        cands = [words(0) for _ in range(n)]
        refs = [[words(1) for _ in range(rng.integers(1, 4))] for _ in range(n)]
        ours = caption_scores(cands, refs)
        total, items = _reference_bleu(cands, refs)
        assert [ours[f"bleu_{k}"] for k in range(1, 5)] == pytest.approx(total, rel=0, abs=1e-12)
        for k in range(4):
            assert ours[f"bleu_{k + 1}_items"] == pytest.approx(items[k], rel=0, abs=1e-12)
        rouge = _reference_rouge(cands, refs)
        assert ours["rouge_l_items"] == pytest.approx(rouge, rel=0, abs=1e-12)
        assert ours["rouge_l"] == pytest.approx(np.mean(rouge), rel=0, abs=1e-12)
        cider = _reference_cider(cands, refs)
        assert ours["cider_items"] == pytest.approx(cider, rel=0, abs=1e-9)
        assert ours["cider"] == pytest.approx(np.mean(cider), rel=0, abs=1e-9)


def test_tokenizers() -> None:
    """'ptb_approx' lower-cases, splits clitics and drops punctuation; 'whitespace' only splits."""
    assert tokenize("The chair's brown!", "ptb_approx") == ["the", "chair", "'s", "brown"]
    assert tokenize("The chair's  brown!\n", "whitespace") == ["The", "chair's", "brown!"]
    assert score_captions(["The chair!"], [["The chair."]], "ptb_approx")["bleu_2"] == pytest.approx(1, rel=1e-8)
    assert score_captions(["The chair!"], [["the chair"]])["rouge_l"] == 0.0


def test_bleu_closest_reference_length_prefers_the_shorter_on_ties() -> None:
    """Candidate 'a b c' with references of lengths 2 and 4 (both at distance 1): r = 2, so no brevity penalty and
    BLEU-1 = 3/3; were r = 4 it would be exp(1 - 4/3) = 0.7165. A 2-token candidate against lengths 1 and 3
    takes r = 1: BLEU-1 = 2/2."""
    out = caption_scores([["a", "b", "c"], ["a", "b"]], [[["a", "b"], ["a", "b", "c", "d"]], [["a"], ["x", "a", "b"]]])
    assert out["bleu_1_items"] == pytest.approx([1.0, 1.0], rel=1e-9, abs=0)
    assert out["bleu_1"] == pytest.approx(1.0, rel=1e-9, abs=0)
    short = caption_scores([["a", "b"]], [[["a", "b", "c", "d"], ["a", "b", "c", "d", "e", "f"]]])
    assert short["bleu_1"] == pytest.approx(math.exp(1 - 4 / 2), rel=1e-9, abs=0)
