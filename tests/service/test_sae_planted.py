"""Tests of the planted-hierarchy recovery (``service/estimators/sae_planted.py``) on a hand-built decoder."""

import numpy as np

from service.estimators.sae_model import HSAEWeights
from service.estimators.sae_planted import PlantedHierarchy, recovery


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
