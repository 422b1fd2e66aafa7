"""Tests of the planted-hierarchy recovery (``service/estimators/sae_planted.py``) on a hand-built decoder."""

import warnings

import numpy as np
import pytest

from service.estimators.sae_model import HSAEWeights
from service.estimators.sae_planted import PlantedHierarchy, recovery, sample_planted


def test_recovery_of_a_permuted_rescaled_decoder_by_hand() -> None:
    # Truth in d = 4: parents e0, e1; children ±e2 (parent 0) and ±e3 (parent 1). Learned decoder columns 2·e1, 3·e0
    # and e2: parent 0 matches column 1, parent 1 column 0, both at cosine 1. Child atoms W_up,i·D_c,i[:, j]:
    # parent 0 → 2e3, −2e3; parent 1 → 3e2, −0.5e2 (norm below 1); parent 2 → 0, 0 (left at 0). Every true child
    # finds an atom at cosine 1 whose parent is the one matched to its own parent.
    eye = np.eye(4)
    truth = PlantedHierarchy(parents=eye[:2], children=np.array([[eye[2], -eye[2]], [eye[3], -eye[3]]]))
    w = HSAEWeights(
        E=np.zeros((3, 4)),
        D=np.stack([2 * eye[1], 3 * eye[0], eye[2]], axis=1),
        W_down=np.zeros((3, 1, 4)),
        W_up=np.stack([2 * eye[3], eye[2], np.zeros(4)])[:, :, None],
        E_c=np.zeros((3, 2, 1)),
        D_c=np.array([[[1.0, -1.0]], [[3.0, -0.5]], [[1.0, 1.0]]]),
    )
    rec = recovery(w, truth)
    assert rec.parent_cos.tolist() == [1.0, 1.0]
    assert rec.parent_match.tolist() == [1, 0]
    assert rec.child_cos.tolist() == [1.0, 1.0, 1.0, 1.0]
    assert rec.consistent.tolist() == [True, True, True, True]


def _simplex_truth() -> PlantedHierarchy:
    """d = 6: parents e0, e1; each parent's 3 children the vertices of an equilateral triangle at 90°, 210° and 330°
    in its own plane (e2, e3 for parent 0; e4, e5 for parent 1): unit vectors, pairwise cosine −½."""
    r = np.sqrt(3) / 2
    tri = np.array([[0.0, 1.0], [-r, -0.5], [r, -0.5]])
    children = np.zeros((2, 3, 6))
    children[0, :, 2:4] = tri
    children[1, :, 4:6] = tri
    return PlantedHierarchy(parents=np.eye(6)[:2], children=children)


def test_planted_samples_follow_the_documented_draws_row_by_row() -> None:
    """The same generator, drawn in the documented order (on, a, j, b, ε), rebuilds every sample one row and one
    parent at a time."""
    truth = _simplex_truth()
    n, p_active, noise = 50, 0.6, 0.3
    x = sample_planted(np.random.default_rng(7), truth, n, p_active, (1.0, 2.0), (0.5, 1.5), noise)
    rng = np.random.default_rng(7)
    on = rng.random((n, 2)) < p_active
    a = rng.uniform(1.0, 2.0, size=(n, 2))
    j = rng.integers(0, 3, size=(n, 2))
    b = rng.uniform(0.5, 1.5, size=(n, 2))
    eps = rng.standard_normal((n, 6))
    assert x.shape == (n, 6)
    for i in range(n):
        row = noise * eps[i]
        for p in range(2):
            if on[i, p]:
                row = row + a[i, p] * truth.parents[p] + b[i, p] * truth.children[p, j[i, p]]
        np.testing.assert_allclose(x[i], row, rtol=0, atol=1e-14)


def test_noiseless_planted_samples_are_a_parent_and_one_of_its_children() -> None:
    """Noise 0: each row's parent coordinate is 0 or in [1, 2]; the component in that parent's plane is 0 exactly
    when the parent is off, otherwise b times one of its three children (b in [0.5, 1.5]); every child is drawn."""
    truth = _simplex_truth()
    x = sample_planted(np.random.default_rng(3), truth, 400, 0.5, (1.0, 2.0), (0.5, 1.5), 0.0)
    drawn = np.zeros((2, 3), dtype=int)
    for row in x:
        for p, plane in ((0, slice(2, 4)), (1, slice(4, 6))):
            a, child = row[p], row[plane]
            if a == 0.0:
                assert np.all(child == 0.0)
                continue
            assert 1.0 <= a <= 2.0
            b = np.linalg.norm(child)
            assert 0.5 <= b <= 1.5
            cos = truth.children[p, :, plane] @ child / b
            best = int(np.argmax(cos))
            assert cos[best] == pytest.approx(1.0, abs=1e-12)
            drawn[p, best] += 1
    assert (drawn > 40).all(), drawn  # about 400 · ½ · ⅓ ≈ 67 each


@pytest.mark.parametrize(("n_parents", "n_children", "dim"), [(2, 2, 4), (64, 32, 128), (256, 32, 256)])
def test_zero_child_atoms_score_cosine_zero(n_parents: int, n_children: int, dim: int) -> None:
    """Truth: parent e0 with children e1, e2. Every non-zero child atom is −(e1 + e2) (cosine −1/√2 to both true
    children); the even-numbered children of parents 1, 2, … are zero atoms (W_up,i D_c,i[:, j] = 0), whose cosine
    is 0: the best atom of both true children is the first zero atom (parent 1, child 0) at cosine exactly 0, a
    parent other than the one matched to e0 (decoder column 0 = e0). No warning (no uninitialised memory read)."""
    eye = np.eye(dim)
    truth = PlantedHierarchy(parents=eye[:1], children=eye[1:3][None])
    d_c = np.ones((n_parents, 1, n_children))
    d_c[1:, 0, ::2] = 0.0
    w = HSAEWeights(
        E=np.zeros((n_parents, dim)),
        D=np.eye(dim, n_parents),
        W_down=np.zeros((n_parents, 1, dim)),
        W_up=np.tile(-(eye[1] + eye[2])[:, None], (n_parents, 1, 1)),
        E_c=np.zeros((n_parents, n_children, 1)),
        D_c=d_c,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rec = recovery(w, truth)
    assert rec.parent_match.tolist() == [0] and rec.parent_cos.tolist() == [1.0]
    assert rec.child_cos.tolist() == [0.0, 0.0]
    assert rec.consistent.tolist() == [False, False]
