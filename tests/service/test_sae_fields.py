"""sae: the top-level reconstruction term and the weighted loss at step 0 with non-default weights, the recovery's
parent_min_cos for the initial and the trained weights, l0_total, the artifact name and the reconstructed lists
(docs/sae.md). The runs are replayed from the documented draw order: one default_rng(seed) gives the planted data
(recovery), then E, W_down, E_c as unit-row Gaussians, then the batch rows."""

import dataclasses

import numpy as np
import pytest

from service.estimators import sae, sae_model, sae_planted, sae_train
from service.registry import no_progress
from tests.service.field_paths import names_a_field

N_PARENTS, N_CHILDREN, SUBSPACE, K, BATCH = 4, 3, 2, 2, 16
WEIGHTS = {"l1": 0.01, "top_weight": 0.7, "xortho_weight": 0.3}  # defaults 1e-3, 0.1, 0.1: asymmetric on purpose


def initial_encoder(rng: np.random.Generator, dim: int) -> np.ndarray:
    """E (N × d) with unit rows, then the W_down and E_c draws that follow it; D = Eᵀ."""
    enc = rng.standard_normal((N_PARENTS, dim))
    rng.standard_normal((N_PARENTS, SUBSPACE, dim))
    rng.standard_normal((N_PARENTS, N_CHILDREN, SUBSPACE))
    return enc / np.linalg.norm(enc, axis=1, keepdims=True)


def top_level_mse(x: np.ndarray, enc: np.ndarray, theta: float) -> float:
    """mean‖x − x̂_top‖², x̂_top = Σ_{i∈A} z_i D_:,i with z = a·1[a ≥ θ], A = the k largest z that are > 0."""
    total = 0.0
    for row in x:
        a = enc @ row
        z = np.where(a >= theta, a, 0.0)
        active = [i for i in np.argsort(-z)[:K] if z[i] > 0]
        total += float(np.sum((row - sum((z[i] * enc[i] for i in active), np.zeros_like(row))) ** 2))
    return total / x.shape[0]


def train_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    return rng.normal(size=(40, 6)) + np.array([2.0, 0, 0, 0, 0, -1.0]), rng.normal(size=(10, 6))


def train_params(**overrides: object) -> sae.HierarchicalTrainParams:
    x, x_eval = train_data()
    settings = {"n_parents": N_PARENTS, "n_children": N_CHILDREN, "subspace": SUBSPACE, "k": K, "batch": BATCH}
    run = {"steps": 1, "seed": 9, "theta": 0.3, **overrides}
    return sae.HierarchicalTrainParams(x=x.tolist(), x_eval=x_eval.tolist(), **settings, **WEIGHTS, **run)


def test_train_step_zero_top_term_and_weighted_loss_by_hand() -> None:
    """With x_eval given nothing is split off, so the generator draws the initial weights, then the batch. The loss
    is mse + λ-weighted L1 + μ·XOrtho + w_top·mse_top with μ = 0.3 and w_top = 0.7."""
    x, _ = train_data()
    rng = np.random.default_rng(9)
    enc = initial_encoder(rng, 6)
    batch = x[rng.integers(0, 40, size=BATCH)]
    out = sae.hierarchical_train(train_params(), no_progress)
    point = out.loss_curve[0]
    assert point.step == 0
    assert point.mse_top == pytest.approx(top_level_mse(batch, enc, 0.3), rel=1e-12)
    assert point.loss == pytest.approx(point.mse + point.l1 + 0.3 * point.xortho + 0.7 * point.mse_top, rel=1e-12)


def test_the_weights_artifact_is_named_as_its_blob_and_the_flops_are_reconstructed() -> None:
    """docs/sae.md: one artifact, "weights", whose bytes artifact_blobs() returns under that name (the run store
    serves it at /artifacts/weights); the FLOP counts rest on the reconstructed architecture."""
    out = sae.hierarchical_train(train_params(), no_progress)
    assert [a.name for a in out.artifacts] == ["weights"] == list(out.artifact_blobs())
    assert out.reconstructed == ["flops"]
    assert all(names_a_field(sae.HierarchicalTrainResult, name) for name in out.reconstructed)


def recovery_params() -> sae.HierarchicalRecoveryParams:
    return sae.HierarchicalRecoveryParams(
        d=12, true_parents=3, true_children=3, n_train=60, n_test=20, n_parents=N_PARENTS, n_children=N_CHILDREN,
        subspace=SUBSPACE, k=K, steps=3, batch=BATCH, seed=4, **WEIGHTS,
    )  # fmt: skip


def min_of_max_cos(parents: np.ndarray, decoder: np.ndarray) -> float:
    """min over true parents of the max over decoder columns of their cosine, by loops."""
    best = []
    for p in parents:
        cosines = [p @ col / (np.linalg.norm(p) * np.linalg.norm(col)) for col in decoder.T]
        best.append(max(cosines))
    return min(best)


def test_recovery_parent_min_cos_and_step_zero_top_term_by_hand() -> None:
    """Replay: planted truth and samples, the initial weights, then the batches; parent_min_cos of the initial and
    of the trained decoder by loops; the first batch's top-level term as above."""
    params = recovery_params()
    out = sae.hierarchical_recovery(params, no_progress)
    rng = np.random.default_rng(4)
    truth = sae_planted.planted_hierarchy(rng, 12, 3, 3)
    x = sae_planted.sample_planted(rng, truth, 80, 0.2, (1.0, 2.0), (0.5, 1.5), 0.02)
    state = rng.bit_generator.state
    enc = initial_encoder(rng, 12)
    assert out.random_init.parent_min_cos == pytest.approx(min_of_max_cos(truth.parents, enc.T), rel=1e-12)
    theta = 1 / np.sqrt(12)
    first = x[:60][rng.integers(0, 60, size=BATCH)]
    assert out.loss_curve[0].mse_top == pytest.approx(top_level_mse(first, enc, theta), rel=1e-12)
    rng.bit_generator.state = state  # train the same weights on the same batches
    w0 = sae_model.init_weights(rng, 12, N_PARENTS, N_CHILDREN, SUBSPACE)
    loss = sae_model.LossConfig(k=K, theta=theta, xortho_variant="off_diagonal", **WEIGHTS)
    config = sae_train.TrainConfig(steps=3, batch=BATCH, lr=5e-3, warmup_steps=0, grad_clip=None, loss=loss)
    trained, _ = sae_train.train(w0, x[:60], config, rng, lambda f: None)
    assert out.trained.parent_min_cos == pytest.approx(min_of_max_cos(truth.parents, trained.D), rel=1e-12)
    assert out.trained.parent_min_cos != out.random_init.parent_min_cos


def test_recovery_l0_total_adds_parents_and_children(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trained runs keep one child per active parent, so l0_children = l0_parents; an evaluation reporting 1.5
    parents and 0.25 children per row tells l0_parents + l0_children (1.75) from 2·l0_parents or l0_parents."""
    measured = sae.evaluate
    monkeypatch.setattr(sae, "evaluate", lambda *a: dataclasses.replace(measured(*a), l0_parents=1.5, l0_children=0.25))
    out = sae.hierarchical_recovery(recovery_params(), no_progress)
    assert (out.train.l0_total, out.test.l0_total) == (1.75, 1.75)
    assert out.reconstructed == ["trained", "random_init"]
    assert all(names_a_field(sae.HierarchicalRecoveryResult, name) for name in out.reconstructed)


def test_warm_up_ramps_the_l1_and_xortho_weights_but_not_the_top_weight() -> None:
    """warmup_steps = 4 (default 0): at step t the λ and μ weights are scaled by t/4 (docs/sae.md), w_top is not, so
    loss_t = mse + l1 (already weighted, 0 at t = 0) + (t/4)·0.3·xortho + 0.7·mse_top."""
    out = sae.hierarchical_train(train_params(steps=3, warmup_steps=4), no_progress)
    assert [p.step for p in out.loss_curve] == [0, 1, 2]
    assert out.loss_curve[0].l1 == 0.0 and out.loss_curve[1].l1 > 0.0
    for p in out.loss_curve:
        ramp = p.step / 4
        assert p.loss == pytest.approx(p.mse + p.l1 + ramp * 0.3 * p.xortho + 0.7 * p.mse_top, rel=1e-12)
