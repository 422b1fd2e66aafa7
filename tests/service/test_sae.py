"""Hierarchical SAE: gradients against finite differences, XOrtho by hand, the sparse encoder against the dense
forward pass, FLOP counts, metrics, the planted generator and recovery of a planted hierarchy."""

import dataclasses
import io
import math

import numpy as np
import pytest

from service.errors import Degenerate, InvalidInput
from service.estimators import sae, sae_model, sae_planted, sae_train
from service.registry import ESTIMATORS, no_progress

REF = {"array": "sha256:" + "0" * 64}


def resolved(cls: type, **kwargs: object) -> object:
    """Params as the API hands them over: uploaded arrays resolved to ndarrays in place of references."""
    arrays = {k: v for k, v in kwargs.items() if isinstance(v, np.ndarray)}
    return cls(**{k: REF if k in arrays else v for k, v in kwargs.items()}).model_copy(update=arrays)


def _random_model(seed: int = 0, d: int = 6, n: int = 4, m: int = 3, s: int = 2) -> sae_model.HSAEWeights:
    rng = np.random.default_rng(seed)
    w = sae_model.init_weights(rng, d, n, m, s)
    for arr in w.arrays().values():
        arr += 0.3 * rng.standard_normal(arr.shape)  # untie, so every gradient term is generic
    return w


@pytest.mark.parametrize("variant", ["off_diagonal", "repo"])
def test_gradients_match_central_differences(variant):
    """Every parameter's hand-written gradient equals the central difference (h = 1e-6) to 1e-6 relative."""
    w = _random_model()
    x = 1.5 * np.random.default_rng(1).standard_normal((5, 6))
    cfg = sae_model.LossConfig(k=2, theta=1 / math.sqrt(6), l1=0.05, top_weight=0.1, xortho_weight=0.5,
                               xortho_variant=variant)  # fmt: skip
    f = sae_model.forward(w, x, cfg.k, cfg.theta)
    assert f.active.sum() > 0 and np.any((f.u < cfg.theta) & (f.u != 0))  # both leaky branches are exercised
    grads = sae_model.gradients(w, x, f, cfg)

    def loss() -> float:
        return sae_model.loss_terms(w, x, sae_model.forward(w, x, cfg.k, cfg.theta), cfg)["loss"]

    for name, arr in w.arrays().items():
        numeric = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            old = arr[idx]
            arr[idx] = old + 1e-6
            up = loss()
            arr[idx] = old - 1e-6
            down = loss()
            arr[idx] = old
            numeric[idx] = (up - down) / 2e-6
        err = np.max(np.abs(numeric - getattr(grads, name))) / np.max(np.abs(numeric))
        assert err < 1e-6, name


def test_xortho_by_hand():
    """Ê = I, D̂ columns (1, 0) and (1, 1)/√2: D̂ᵀÊᵀ = [[1, 0], [1/√2, 1/√2]].

    off-diagonal: ‖[[0, 0], [1/√2, 0]]‖/(4 − 2) = 0.3535534; repo: ‖[[0, −1/√2], [1/√2 − 1, 0]]‖/2 = 0.3826834."""
    enc = np.eye(2)
    dec = np.array([[1.0, 1.0], [0.0, 1.0]]) / np.array([1.0, math.sqrt(2)])
    assert sae_model.xortho(enc, dec, "off_diagonal")[0] == pytest.approx(0.5 / math.sqrt(2), rel=1e-5)
    assert sae_model.xortho(enc, dec, "repo")[0] == pytest.approx(math.sqrt(0.5 + (1 - 0.5**0.5) ** 2) / 2, rel=1e-5)
    assert sae_model.xortho(enc, np.eye(2), "off_diagonal")[0] == 0.0


@pytest.mark.parametrize("k", [3, 9])
def test_sparse_encoder_equals_the_dense_forward_pass(k):
    """encode_active (children of the k selected parents only) gives the dense pass's parents, children and codes."""
    w = _random_model(2, d=12, n=9, m=5, s=3)
    x = np.random.default_rng(3).standard_normal((300, 12))
    theta = 1 / math.sqrt(12)
    f = sae_model.forward(w, x, k, theta)
    codes = sae_model.encode_active(w, x, k, theta)
    active = np.zeros_like(f.active)
    np.put_along_axis(active, codes.parents, codes.z > 0, axis=1)
    assert np.array_equal(active, f.active)
    rows, cols = np.nonzero(codes.z > 0)
    parents = codes.parents[rows, cols]
    assert np.array_equal(codes.child[rows, cols], f.best[parents, rows])
    assert np.allclose(codes.c[rows, cols], f.c[parents, f.best[parents, rows], rows], rtol=1e-12, atol=0)
    flat = sae_model.encode_flat(w.E, x, theta)
    assert np.array_equal(flat, f.z)


def test_flop_counts_of_the_released_configuration():
    """N = 16384, m = 16, s = 4, k = 32, d = 2304: 3.80e7 vs 6.42e8 encoder MACs, a 16.9× saving."""
    enc, flat = sae_model.encoder_macs(2304, 16384, 16, 4, 32)
    assert (enc, flat) == (16384 * 2304 + 32 * (4 * 2304 + 16 * 4), 16384 * 17 * 2304) == (38_045_696, 641_728_512)
    assert flat / enc == pytest.approx(16.867, abs=5e-4)
    assert sae_model.decoder_macs(2304, 16, 4, 32) == 32 * 2304 + 32 * (4 * 16 + 2304 * 4)


def test_evaluation_metrics_by_hand():
    """One parent e₀ with no child output: x = (2, 0, 1) → x̂ = (2, 0, 0); x = (0, 1, 0) → x̂ = 0.

    MSE = (1 + 1)/2 = 1; FVU = 2/Σ‖x − x̄‖² = 2/3 (x̄ = (1, ½, ½)); cos = (2/√5 + 0)/2; L0 = ½ parent and ½ child
    per row."""
    w = sae_model.HSAEWeights(
        E=np.array([[1.0, 0.0, 0.0]]),
        D=np.array([[1.0], [0.0], [0.0]]),
        W_down=np.ones((1, 1, 3)),
        W_up=np.zeros((1, 3, 1)),
        E_c=np.ones((1, 2, 1)),
        D_c=np.ones((1, 1, 2)),
    )
    ev = sae_train.evaluate(w, np.array([[2.0, 0.0, 1.0], [0.0, 1.0, 0.0]]), 1, 0.5)
    assert ev.mse == 1.0 and ev.fvu == pytest.approx(2 / 3, abs=1e-15)
    assert ev.cos == pytest.approx(1 / math.sqrt(5), abs=1e-15)
    assert (ev.l0_parents, ev.l0_children) == (0.5, 0.5)
    assert ev.parent_usage.tolist() == [1] and ev.child_usage.tolist() == [[1, 0]]


def test_learning_rate_schedule():
    cfg = sae_train.TrainConfig(steps=110, batch=1, lr=0.2, warmup_steps=10, grad_clip=None, loss=None)
    assert [sae_train.learning_rate(t, cfg) for t in (0, 5, 10, 60)] == pytest.approx([0.0, 0.1, 0.2, 0.1], abs=1e-15)
    assert sae_train.learning_rate(0, sae_train.TrainConfig(100, 1, 0.2, 0, None, None)) == 0.2


def test_loss_curve_has_at_most_1000_points():
    for steps in range(1, 5001):
        every = sae_train.curve_stride(steps)
        assert len(range(0, steps, every)) + ((steps - 1) % every != 0) <= sae_train.MAX_CURVE


def test_decoder_gradient_projection_is_orthogonal_to_each_column():
    w = _random_model(4)
    g = _random_model(5)
    sae_train.project_decoder_gradients(w, g)
    assert np.allclose(np.sum(g.D * w.D, axis=0), 0.0, atol=1e-12)
    assert np.allclose(np.sum(g.D_c * w.D_c, axis=1), 0.0, atol=1e-12)


def test_planted_hierarchy_geometry():
    """Orthonormal parents; per parent C unit children, centred, pairwise cos −1/(C − 1), orthogonal to parents."""
    truth = sae_planted.planted_hierarchy(np.random.default_rng(0), 64, 8, 4)
    assert np.allclose(truth.parents @ truth.parents.T, np.eye(8), atol=1e-12)
    kids = truth.children
    assert np.allclose(np.linalg.norm(kids, axis=2), 1.0, atol=1e-12)
    assert np.allclose(kids.sum(axis=1), 0.0, atol=1e-12)
    gram = np.einsum("pcd,ped->pce", kids, kids)
    assert np.allclose(gram, np.where(np.eye(4, dtype=bool), 1.0, -1 / 3), atol=1e-12)
    assert np.allclose(np.einsum("pcd,qd->pcq", kids, truth.parents), 0.0, atol=1e-12)
    other = np.einsum("pcd,qed->pqce", kids, kids)[~np.eye(8, dtype=bool)]
    assert np.allclose(other, 0.0, atol=1e-12)  # private subspaces


def test_planted_samples_match_the_model_moments():
    """E‖x‖² = P·p·(E a² + E b²) + d·σ² = 8·0.2·(7/3 + 13/12) + 64·0.0004 (Monte Carlo, 4 SE)."""
    rng = np.random.default_rng(6)
    truth = sae_planted.planted_hierarchy(rng, 64, 8, 4)
    x = sae_planted.sample_planted(rng, truth, 20000, 0.2, (1.0, 2.0), (0.5, 1.5), 0.02)
    sq = np.sum(x * x, axis=1)
    expected = 8 * 0.2 * (7 / 3 + 13 / 12) + 64 * 0.02**2
    assert abs(sq.mean() - expected) < 4 * sq.std() / math.sqrt(sq.size)


def _small_train_params(**overrides: object) -> sae.HierarchicalTrainParams:
    rng = np.random.default_rng(11)
    truth = sae_planted.planted_hierarchy(rng, 16, 3, 3)
    x = sae_planted.sample_planted(rng, truth, 600, 0.3, (1.0, 2.0), (0.5, 1.5), 0.02)
    settings = {"x": x, "n_parents": 5, "n_children": 4, "subspace": 2, "k": 2, "steps": 200, "batch": 64}
    return resolved(sae.HierarchicalTrainParams, **{**settings, **overrides})


@pytest.mark.slow
def test_training_reduces_the_loss_reproducibly_and_ships_the_weights():
    params = _small_train_params()
    out = sae.hierarchical_train(params, no_progress)
    again = sae.hierarchical_train(params, no_progress)
    assert out.model_dump() == again.model_dump()
    assert out.artifact_blobs() == again.artifact_blobs()  # bit-for-bit reproducible npz
    curve = out.loss_curve
    assert [p.step for p in curve] == [*range(200), 199][:200] and curve[-1].loss < 0.5 * curve[0].loss
    assert out.n_train == 540 and out.held_out.n == 60 and out.theta == 0.25
    assert sum(out.parent_usage) == pytest.approx(out.train.l0_parents * 540, abs=1e-9)
    assert sum(map(sum, out.child_usage)) == pytest.approx(out.train.l0_children * 540, abs=1e-9)
    assert out.dead_parents == out.parent_usage.count(0)
    assert out.dead_children == sum(row.count(0) for row in out.child_usage)
    assert out.train.explained_variance == pytest.approx(1 - out.train.fvu, abs=1e-15)
    arrays = np.load(io.BytesIO(out.artifact_blobs()["weights"]))
    assert {k: list(v.shape) for k, v in arrays.items()} == out.artifacts[0].arrays
    assert arrays["k"] == 2 and arrays["theta"] == 0.25 and arrays["E"].dtype == np.float32
    assert np.allclose(np.linalg.norm(arrays["D"], axis=0), 1.0, atol=1e-6)
    assert np.allclose(np.linalg.norm(arrays["D_c"], axis=1), 1.0, atol=1e-6)
    assert sae.HierarchicalTrainResult.model_validate_json(out.model_dump_json()).artifact_blobs() == {}


def test_npz_bytes_are_deterministic_and_loadable():
    arrays = {"b": np.arange(3.0), "a": np.eye(2, dtype=np.float32)}
    blob = sae.npz_bytes(arrays)
    assert blob == sae.npz_bytes(dict(reversed(arrays.items())))
    loaded = np.load(io.BytesIO(blob))
    assert sorted(loaded.files) == ["a", "b"] and np.array_equal(loaded["a"], arrays["a"])


def test_warmup_and_clip_change_the_run_and_stay_finite():
    base = sae.hierarchical_train(_small_train_params(steps=50), no_progress)
    other = sae.hierarchical_train(_small_train_params(steps=50, warmup_steps=10, grad_clip=0.5), no_progress)
    assert other.loss_curve[0].l1 == 0.0  # λ ramps from 0 during warm-up
    assert other.train.mse != base.train.mse and math.isfinite(other.train.mse)


@pytest.mark.parametrize(
    ("overrides", "loc"),
    [
        ({"subspace": 3, "x": np.ones((10, 2))}, ("subspace",)),
        ({"k": 6}, ("k",)),
        ({"x_eval": np.zeros((3, 5))}, ("x_eval",)),
        ({"x_eval": np.zeros((1, 16))}, ("x_eval",)),
        ({"x": [[1.0, 2.0], [1.0]]}, ("x",)),
        ({"x": [[], []]}, ("x",)),
    ],
)
def test_train_invalid_inputs(overrides, loc):
    with pytest.raises(InvalidInput) as err:
        sae.hierarchical_train(_small_train_params(**overrides), no_progress)
    assert err.value.loc == loc


def test_constant_rows_are_degenerate_and_tiny_hold_outs_are_skipped():
    with pytest.raises(Degenerate) as err:
        sae.hierarchical_train(_small_train_params(x=np.ones((30, 16)), steps=2), no_progress)
    assert err.value.loc == ("x",)
    assert sae.hierarchical_train(_small_train_params(x=np.eye(16)[:14], steps=2), no_progress).held_out is None


def test_parameter_cap_and_recovery_invalid_inputs():
    big = sae.HierarchicalRecoveryParams(
        d=1024, true_parents=4, n_parents=256, n_children=32, subspace=16, n_train=100, n_test=100
    )
    assert sae.parameter_count(big, 1024) == 256 * (2048 + 2 * 16 * 1024 + 2 * 32 * 16) > sae.MAX_PARAMS
    with pytest.raises(InvalidInput) as err:
        sae.hierarchical_recovery(big, no_progress)
    assert err.value.loc == ("n_parents",)
    with pytest.raises(InvalidInput) as err:
        sae.hierarchical_recovery(sae.HierarchicalRecoveryParams(d=16, true_parents=5, true_children=4), no_progress)
    assert err.value.loc == ("true_children",)
    with pytest.raises(InvalidInput) as err:
        sae.hierarchical_recovery(sae.HierarchicalRecoveryParams(d=1024, n_train=1900, n_test=100), no_progress)
    assert err.value.loc == ("n_train",)
    with pytest.raises(InvalidInput) as err:
        sae.hierarchical_recovery(sae.HierarchicalRecoveryParams(child_amplitude=(2.0, 1.0)), no_progress)
    assert err.value.loc == ("child_amplitude",)


def test_costs():
    p = sae.HierarchicalRecoveryParams()
    assert sae.recovery_cost(p) == (3 * 1500 * 256 + 12000) * 12 * (2 * 64 + 2 * 3 * 64 + 8 * 3) + 1500 * 5e5
    q = _small_train_params()
    assert sae.train_cost(q) == (3 * 200 * 64 + 600) * 5 * (2 * 16 + 2 * 2 * 16 + 4 * 2) + 200 * 5e5
    assert sae.train_cost(q.model_copy(update={"x": np.zeros((600, 16)).tolist()})) == sae.train_cost(q)
    assert ESTIMATORS["sae.hierarchical_train"].sync_budget < sae.recovery_cost(p)  # the recovery runs as a job


@pytest.mark.slow
def test_recovery_of_the_planted_hierarchy():
    """d = 64, P = 8, C = 4; N = 12, m = 8, s = 3, k = 3, 1500 Adam steps of 256 (seed 0). Pass criteria: FVU < 0.08,
    parent mean cos > 0.95 with all 8 matched uniquely, child mean cos > 0.78, consistency ≥ 24/32; the random
    initialisation stays near chance (child cos 0.26-0.30 measured)."""
    out = sae.hierarchical_recovery(sae.HierarchicalRecoveryParams(), no_progress)
    assert out.test.fvu < 0.08 and out.train.fvu < 0.08
    assert out.trained.parent_mean_cos > 0.95 and out.trained.unique_parent_matches == 8
    assert out.trained.child_mean_cos > 0.78 and out.trained.hierarchy_consistency >= 24
    assert out.trained.n_true_children == 32
    assert 0.2 < out.random_init.child_mean_cos < 0.35 and out.random_init.parent_mean_cos < 0.4
    assert out.random_init.hierarchy_consistency < 8
    fig = sae.recovery_plot(out)
    heights = [bar.get_height() for bar in fig.axes[0].patches]
    assert heights[:3] == [
        out.trained.parent_mean_cos,
        out.trained.child_mean_cos,
        out.trained.hierarchy_consistency / 32,
    ]


@pytest.mark.slow
def test_loss_plot_draws_the_curve():
    out = sae.hierarchical_train(_small_train_params(steps=20), no_progress)
    ax = sae.loss_plot(out).axes[0]
    assert ax.lines[0].get_ydata().tolist() == [p.loss for p in out.loss_curve]
    assert ax.lines[0].get_xdata().tolist() == list(range(20))


def test_train_result_reports_its_flops_dimension_and_l0_totals():
    """d = 16, N = 5, m = 4, s = 2, k = 2: encoder N·d + k(s·d + m·s) = 80 + 2·(32 + 8) = 160 MACs, a flat SAE of
    N(1 + m) = 25 atoms 25·16 = 400, saving 2.5; the weights are an npz, i.e. a zip archive."""
    out = sae.hierarchical_train(_small_train_params(steps=20), no_progress)
    assert out.d == 16
    assert (out.flops.encoder_macs, out.flops.flat_encoder_macs) == (160, 400)
    assert out.flops.encoder_saving == pytest.approx(2.5, rel=1e-15)
    for ev in (out.train, out.held_out):
        assert ev.l0_total == pytest.approx(ev.l0_parents + ev.l0_children, rel=1e-15)
        assert ev.l0_children > 0 and 0 < ev.l0_parents <= 2
    assert out.artifacts[0].media_type == "application/zip"
    assert io.BytesIO(out.artifact_blobs()["weights"]).read(4) == b"PK\x03\x04"


def test_l0_total_adds_parents_and_children_when_they_differ(monkeypatch: pytest.MonkeyPatch):
    """Trained runs keep one child per active parent (equal L0s); an evaluation with 0.25 children per row
    tells l0_parents + l0_children from 2·l0_parents."""
    measured = sae.evaluate
    monkeypatch.setattr(sae, "evaluate", lambda *a: dataclasses.replace(measured(*a), l0_children=0.25))
    out = sae.hierarchical_train(_small_train_params(steps=5), no_progress)
    for ev in (out.train, out.held_out):
        assert ev.l0_children == 0.25 and ev.l0_total == pytest.approx(ev.l0_parents + 0.25, rel=1e-15)
