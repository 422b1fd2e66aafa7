"""Corpus BLEU-1..4, ROUGE-L and CIDEr-D exactly as the COCO caption evaluation (pycocoevalcap 1.2) defines them,
its PTB tokenisation, and METEOR 1.5 through its jar.

Chen et al., "Microsoft COCO Captions: Data Collection and Evaluation Server" (2015); BLEU by Papineni et al.
(2002), ROUGE-L by Lin (2004), CIDEr-D by Vedantam, Zitnick & Parikh, "CIDEr: Consensus-based Image Description
Evaluation" (CVPR 2015). Every sentence is a list of tokens; all n-gram bookkeeping is vectorised over the corpus
(n-grams as integer codes, counts by sorting), the LCS of ROUGE-L is one dynamic-programming row per candidate
position for all (candidate, reference) pairs at once.
"""

from collections.abc import Sequence
from typing import Literal

import numpy as np

from service.scoring import coco_java
from service.scoring.ptb_tokenizer import ptb_tokens
from service.stats import factorize

MAX_N = 4
ROUGE_BETA = 1.2
CIDER_SIGMA = 6.0
BLEU_TINY = 1e-15
BLEU_SMALL = 1e-9
Tokenizer = Literal["ptb_approx", "ptb_java", "whitespace"]
_LCS_CHUNK = 8192


def tokenize(text: str, tokenizer: Tokenizer) -> list[str]:
    """Tokens of ``text``: ``ptb_approx`` (:func:`service.scoring.ptb_tokenizer.ptb_tokens`, the Python port of
    pycocoevalcap's PTB tokenisation; also used for ``ptb_java`` one text at a time) or ``whitespace``
    (pre-tokenised text, split on whitespace and kept as is)."""
    return text.split() if tokenizer == "whitespace" else ptb_tokens(text)


def tokenize_all(texts: Sequence[str], tokenizer: Tokenizer) -> tuple[list[list[str]], str, str | None]:
    """(tokens of every text, the tokenizer that ran, why it differs from the one asked for or None).

    ``ptb_java`` runs the CoreNLP 3.4.1 jar once on all texts (:func:`coco_java.ptb_java_tokens`); without Java
    the port runs instead (equal to the jar on every text of the committed comparison corpus) and the reason is
    returned.
    """
    if tokenizer == "ptb_java":
        try:
            return coco_java.ptb_java_tokens(texts), "ptb_java", None
        except coco_java.JavaUnavailable as exc:
            return [ptb_tokens(t) for t in texts], "ptb_approx", f"ptb_java unavailable ({exc}); ptb_approx ran"
    return [tokenize(t, tokenizer) for t in texts], tokenizer, None


class Corpus:
    """Candidates (one per item) and references (several per item) as integer token arrays."""

    def __init__(self, candidates: Sequence[Sequence[str]], references: Sequence[Sequence[Sequence[str]]]) -> None:
        self.n_items = len(candidates)
        sentences = [*candidates, *(ref for refs in references for ref in refs)]
        self.lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
        codes, vocab = factorize([tok for sent in sentences for tok in sent])
        self.tokens = codes
        self.vocab_size = max(len(vocab), 1)
        self.n_refs = np.fromiter(map(len, references), dtype=np.int64, count=self.n_items)
        self.ref_item = np.repeat(np.arange(self.n_items), self.n_refs)
        self.starts = np.concatenate(([0], np.cumsum(self.lengths)[:-1]))
        self.sentence = np.repeat(np.arange(len(sentences)), self.lengths)
        self.position = np.arange(self.tokens.size) - self.starts[self.sentence]

    def ngram_counts(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]:
        """Per n = 1..4: (sentence, n-gram code, count) sorted by sentence then code, and the number of codes."""
        out = []
        code = self.tokens
        size = self.vocab_size
        for n in range(1, MAX_N + 1):
            valid = self.position + n <= self.lengths[self.sentence]
            if n > 1:
                at = np.flatnonzero(valid)
                pairs = code[at] * self.vocab_size + self.tokens[at + n - 1]
                uniq, inverse = np.unique(pairs, return_inverse=True)
                code = np.full(self.tokens.size, -1, dtype=np.int64)
                code[at] = inverse
                size = max(uniq.size, 1)
            keys = self.sentence[valid] * size + code[valid]
            uniq_keys, counts = np.unique(keys, return_counts=True)
            out.append((uniq_keys // size, uniq_keys % size, counts, size))
        return out


def _lookup(keys: np.ndarray, table_keys: np.ndarray, table_values: np.ndarray) -> np.ndarray:
    """``table_values`` at ``keys`` in the sorted ``table_keys`` (0 where a key is absent)."""
    if table_keys.size == 0:
        return np.zeros(keys.size, dtype=table_values.dtype)
    at = np.minimum(np.searchsorted(table_keys, keys), table_keys.size - 1)
    return np.where(table_keys[at] == keys, table_values[at], 0)


def _distinct(keys: np.ndarray) -> np.ndarray:
    """Sorted distinct values (a sort and a neighbour comparison: faster here than numpy's hash-based unique)."""
    ordered = np.sort(keys)
    keep = np.ones(ordered.size, dtype=bool)
    keep[1:] = ordered[1:] != ordered[:-1]
    return ordered[keep]


def bleu(corpus: Corpus, grams: list) -> tuple[np.ndarray, np.ndarray]:
    """Corpus BLEU-1..4 and the per-item values of pycocoevalcap's ``BleuScorer`` with ``option='closest'``.

    ``B_n = (Π_{m≤n} (correct_m + 1e-15)/(guess_m + 1e-9))^{1/n}`` from clipped n-gram counts summed over the
    corpus, times ``exp(1 - r/c)`` when ``c < r`` (written ``exp(1 - 1/ratio)``, ``ratio = (c + 1e-15)/(r + 1e-9)``);
    ``r`` sums, per item, the reference length closest to the candidate's (the shorter one on ties).
    """
    n_items = corpus.n_items
    cand_len = corpus.lengths[:n_items]
    ref_len = corpus.lengths[n_items:]
    correct = np.zeros((MAX_N, n_items))
    for n, (sent, code, count, size) in enumerate(grams):
        is_ref = sent >= n_items
        ref_keys = corpus.ref_item[sent[is_ref] - n_items] * size + code[is_ref]
        order = np.argsort(ref_keys, kind="stable")
        ref_keys, ref_counts = ref_keys[order], count[is_ref][order]
        uniq, first = np.unique(ref_keys, return_index=True)
        max_ref = np.maximum.reduceat(ref_counts, first) if uniq.size else ref_counts
        cand_keys = sent[~is_ref] * size + code[~is_ref]
        clipped = np.minimum(count[~is_ref], _lookup(cand_keys, uniq, max_ref))
        correct[n] = np.bincount(sent[~is_ref], weights=clipped, minlength=n_items)
    guess = np.maximum(0, cand_len[None, :] - np.arange(MAX_N)[:, None]).astype(np.float64)
    span = int(max(ref_len.max(initial=0), cand_len.max(initial=0))) + 1
    distance = np.abs(ref_len - cand_len[corpus.ref_item]) * span + ref_len
    closest = np.minimum.reduceat(distance, np.concatenate(([0], np.cumsum(corpus.n_refs)[:-1]))) % span
    exponents = 1.0 / np.arange(1, MAX_N + 1)[:, None]
    per_item = np.cumprod((correct + BLEU_TINY) / (guess + BLEU_SMALL), axis=0) ** exponents
    ratio = (cand_len + BLEU_TINY) / (closest + BLEU_SMALL)
    per_item = np.where(ratio < 1, per_item * np.exp(1 - 1 / np.minimum(ratio, 1)), per_item)
    total = np.cumprod((correct.sum(axis=1) + BLEU_TINY) / (guess.sum(axis=1) + BLEU_SMALL)) ** exponents[:, 0]
    ratio_all = (cand_len.sum() + BLEU_TINY) / (closest.sum() + BLEU_SMALL)
    if ratio_all < 1:
        total = total * np.exp(1 - 1 / ratio_all)
    return total, per_item


def lcs_lengths(a: np.ndarray, a_len: np.ndarray, b: np.ndarray, b_len: np.ndarray) -> np.ndarray:
    """Longest-common-subsequence lengths of the token rows ``a[k, :a_len[k]]`` and ``b[k, :b_len[k]]``.

    Row recursion ``L_i[j] = max_{j' ≤ j} max(L_{i-1}[j'], [a_i = b_j'](L_{i-1}[j'-1] + 1))``: the running maximum
    replaces the within-row dependency, so each candidate position is one vectorised step for every pair.
    """
    out = np.zeros(a_len.size, dtype=np.int64)
    order = np.argsort(a_len * (b.shape[1] + 1) + b_len, kind="stable")
    for start in range(0, order.size, _LCS_CHUNK):
        rows = order[start : start + _LCS_CHUNK]
        la, lb = int(a_len[rows].max()), int(b_len[rows].max())
        if la == 0 or lb == 0:
            continue
        ra, rb = a[rows, :la], b[rows, :lb]
        prev = np.zeros((rows.size, lb + 1), dtype=np.int32)
        for i in range(la):
            match = ra[:, i : i + 1] == rb
            step = np.maximum(prev[:, 1:], np.where(match, prev[:, :-1] + 1, 0))
            prev[:, 1:] = np.maximum.accumulate(step, axis=1)
        out[rows] = prev[:, -1]
    return out


def _padded(corpus: Corpus, sentences: np.ndarray, lengths: np.ndarray, pad: int) -> np.ndarray:
    """Token rows of ``sentences`` padded with ``pad``; an empty sentence is the one token "" (code -3), as
    pycocoevalcap's ``split(" ")`` of an empty string."""
    width = max(int(lengths.max(initial=0)), 1)
    rows = np.full((sentences.size, width), pad, dtype=np.int64)
    filled = np.arange(width)[None, :] < corpus.lengths[sentences][:, None]
    rows[filled] = corpus.tokens[(corpus.starts[sentences][:, None] + np.arange(width)[None, :])[filled]]
    rows[corpus.lengths[sentences] == 0, 0] = -3
    return rows


def rouge_l(corpus: Corpus) -> np.ndarray:
    """Per-item ROUGE-L of pycocoevalcap: ``(1+β²)PR/(R+β²P)``, β = 1.2, with ``P = max_r LCS/|c|`` and
    ``R = max_r LCS/|r|`` maximised separately over the references; 0 when either is 0."""
    n_items = corpus.n_items
    ref_sent = n_items + np.arange(corpus.ref_item.size)
    cand_sent = corpus.ref_item
    cand_len = np.maximum(corpus.lengths[cand_sent], 1)
    ref_len = np.maximum(corpus.lengths[ref_sent], 1)
    lcs = lcs_lengths(
        _padded(corpus, cand_sent, cand_len, -1), cand_len, _padded(corpus, ref_sent, ref_len, -2), ref_len
    )
    starts = np.concatenate(([0], np.cumsum(corpus.n_refs)[:-1]))
    prec = np.maximum.reduceat(lcs / cand_len, starts)
    rec = np.maximum.reduceat(lcs / ref_len, starts)
    beta2 = ROUGE_BETA**2
    nonzero = (prec != 0) & (rec != 0)
    denom = np.where(nonzero, rec + beta2 * prec, 1.0)
    return np.where(nonzero, ((1 + beta2) * prec * rec) / denom, 0.0)


def cider_d(corpus: Corpus, grams: list) -> np.ndarray:
    """Per-item CIDEr-D of pycocoevalcap (n = 1..4, σ = 6).

    TF-IDF weight ``tf·(ln N - ln max(1, df))`` with ``df`` the number of items whose references contain the
    n-gram and N the number of items; per reference and n, ``Σ_g min(h_g, r_g)·r_g / (‖h‖‖r‖)`` (norm guard:
    0 when a norm is 0) times ``exp(-Δ²/(2σ²))`` with Δ the difference of *bigram* counts (the reference's
    length quirk); mean over n, sum over references divided by their number, times 10.
    """
    n_items = corpus.n_items
    n_refs_total = corpus.ref_item.size
    log_n = np.log(float(n_items))
    vals = np.zeros((MAX_N, n_refs_total))
    bigrams = np.zeros(corpus.lengths.size)
    for n, (sent, code, count, size) in enumerate(grams):
        is_ref = sent >= n_items
        ref_item = corpus.ref_item[sent[is_ref] - n_items]
        df = np.bincount(_distinct(ref_item * size + code[is_ref]) % size, minlength=size)
        weight = log_n - np.log(np.maximum(1.0, df))
        vec = count * weight[code]
        norms = np.sqrt(np.bincount(sent, weights=vec * vec, minlength=corpus.lengths.size))
        if n == 1:
            bigrams = np.bincount(sent, weights=count, minlength=corpus.lengths.size)
        cand_keys = sent[~is_ref] * size + code[~is_ref]
        ref_keys = ref_item * size + code[is_ref]
        hyp = _lookup(ref_keys, cand_keys, vec[~is_ref])
        ref_vec = vec[is_ref]
        dot = np.bincount(sent[is_ref] - n_items, weights=np.minimum(hyp, ref_vec) * ref_vec, minlength=n_refs_total)
        norm_product = norms[corpus.ref_item] * norms[n_items:]
        vals[n] = np.where(norm_product != 0, dot / np.where(norm_product != 0, norm_product, 1.0), dot)
    delta = bigrams[corpus.ref_item] - bigrams[n_items:]
    vals = vals * np.power(np.e, -(delta**2) / (2 * CIDER_SIGMA**2))
    starts = np.concatenate(([0], np.cumsum(corpus.n_refs)[:-1]))
    per_item_n = np.add.reduceat(vals, starts, axis=1)
    return per_item_n.mean(axis=0) / corpus.n_refs * 10.0


def caption_scores(
    candidates: Sequence[Sequence[str]], references: Sequence[Sequence[Sequence[str]]]
) -> dict[str, np.ndarray | float]:
    """BLEU-1..4 (corpus and per item), ROUGE-L and CIDEr-D (per item and mean) of tokenised candidates, one per
    item, against each item's non-empty list of tokenised references."""
    corpus = Corpus(candidates, references)
    grams = corpus.ngram_counts()
    total, per_bleu = bleu(corpus, grams)
    rouge = rouge_l(corpus)
    cider = cider_d(corpus, grams)
    out: dict[str, np.ndarray | float] = {}
    for n in range(MAX_N):
        out[f"bleu_{n + 1}"] = float(total[n])
        out[f"bleu_{n + 1}_items"] = per_bleu[n]
    out.update(rouge_l=float(rouge.mean()), rouge_l_items=rouge, cider=float(cider.mean()), cider_items=cider)
    return out


def score_captions(
    candidates: Sequence[str], references: Sequence[Sequence[str]], tokenizer: Tokenizer = "whitespace"
) -> dict[str, np.ndarray | float]:
    """Tokenise caption strings and return :func:`caption_scores` (the entry point timed by the benchmark)."""
    flat, _, _ = tokenize_all([*candidates, *(r for refs in references for r in refs)], tokenizer)
    cands, rest = flat[: len(candidates)], iter(flat[len(candidates) :])
    return caption_scores(cands, [[next(rest) for _ in refs] for refs in references])


def meteor(hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[Sequence[str]]]) -> dict:
    """METEOR 1.5 of tokenised hypotheses (one per item) against their tokenised references, through the jar
    pycocoevalcap ships (:data:`coco_java.METEOR`): ``{"value", "items", "version"}``, or ``{"value": None,
    "reason"}`` when Java cannot run it (never approximated)."""
    try:
        value, items = coco_java.METEOR.score(
            [" ".join(h) for h in hypotheses], [[" ".join(r) for r in refs] for refs in references]
        )
    except coco_java.JavaUnavailable as exc:
        return {"value": None, "reason": str(exc)}
    return {"value": value, "items": items, "version": coco_java.METEOR_VERSION}
