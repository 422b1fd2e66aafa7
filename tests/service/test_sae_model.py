"""Tests of the H-SAE numerics (``service/estimators/sae_model.py``) at the edges: thresholds hit exactly, a zero
child code, XOrtho's ε and one-latent case, top-k against sorting, chunked and float32 encoding."""

import math

import numpy as np
import pytest

from service.estimators import sae_model
from service.estimators.sae_model import EPS, HSAEWeights, LossConfig


def boundary_model() -> tuple[HSAEWeights, np.ndarray, LossConfig]:
    """One parent, three children, s = 1, d = 2, θ = ½ and x = (0.5, 0.3): a = E x = θ exactly, y = W_down x = ½,
    u = E_c y = (½, 0.1, 0): the argmax child sits exactly at θ and the third child's code is exactly 0."""
    w = HSAEWeights(
        E=np.array([[1.0, 0.0]]),
        D=np.array([[0.6], [0.8]]),
        W_down=np.array([[[1.0, 0.0]]]),
        W_up=np.array([[[0.3], [0.4]]]),
        E_c=np.array([[[1.0], [0.2], [0.0]]]),
        D_c=np.array([[[1.0, 0.5, 0.2]]]),
    )
    cfg = LossConfig(k=1, theta=0.5, l1=0.1, top_weight=0.2, xortho_weight=0.5)
    return w, np.array([[0.5, 0.3]]), cfg


def test_forward_at_the_thresholds_by_hand() -> None:
    # a = θ is active (z = a·1[a ≥ θ] = ½); u = θ is on the linear branch (c = ½), 0.1 leaks to 0.001.
    # x̂_top = ½·(0.6, 0.8) = (0.3, 0.4); x̂ = x̂_top + c·W_up·D_c[:, 0] = (0.3, 0.4) + ½·(0.3, 0.4) = (0.45, 0.6).
    w, x, cfg = boundary_model()
    f = sae_model.forward(w, x, cfg.k, cfg.theta)
    assert f.z.tolist() == [[0.5]]
    assert f.c[0, :, 0] == pytest.approx([0.5, 0.001, 0.0], abs=1e-17)
    assert f.best.tolist() == [[0]]
    assert f.x_hat == pytest.approx(np.array([[0.45, 0.6]]), abs=1e-15)
    assert sae_model.leaky(np.array([0.5, 0.1, -2.0]), 0.5).tolist() == [0.5, 0.001, -0.02]
    assert sae_model.encode_flat(w.E, x, cfg.theta).tolist() == [[0.5]]
    codes = sae_model.encode_active(w, x, cfg.k, cfg.theta)
    assert (codes.z.tolist(), codes.child.tolist(), codes.c.tolist()) == ([[0.5]], [[0]], [[0.5]])
    terms = sae_model.loss_terms(w, x, f, cfg)
    assert terms["xortho"] == 0.0  # one latent: no off-diagonal pair
    assert terms["mse"] == pytest.approx(0.05**2 + 0.3**2, rel=1e-14)


def test_gradients_at_the_thresholds_are_the_right_derivatives() -> None:
    # Raising any parameter keeps a and u_0 on or above θ (x, y > 0), so forward differences give the derivative of
    # the active/linear branch that a ≥ θ and u ≥ θ select. The zero child code has |c| symmetric about 0: its
    # central difference is 0, the sign(0) = 0 convention.
    w, x, cfg = boundary_model()
    grads = sae_model.gradients(w, x, sae_model.forward(w, x, cfg.k, cfg.theta), cfg)

    def loss() -> float:
        return sae_model.loss_terms(w, x, sae_model.forward(w, x, cfg.k, cfg.theta), cfg)["loss"]

    base, h = loss(), 1e-7
    for name, arr in w.arrays().items():
        numeric = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            old = arr[idx]
            arr[idx] = old + h
            up = loss()
            if name == "E_c" and idx == (0, 2, 0):
                arr[idx] = old - h
                numeric[idx] = (up - loss()) / (2 * h)
            else:
                numeric[idx] = (up - base) / h
            arr[idx] = old
        got = getattr(grads, name)
        assert np.isfinite(got).all(), name
        assert np.abs(got - numeric).max() < 1e-6, name
    assert np.abs(grads.E).max() > 0.01 and np.abs(grads.E_c[0, 0, 0]) > 0.01


def test_xortho_with_eps_by_hand() -> None:
    # Small rows make ε = 1e-6 visible: ê_1 = (0.03, 0.04)/(0.05 + ε), ê_2 = (0.01, 0)/(0.01 + ε),
    # d̂_1 = (0.01, 0)/(0.01 + ε), d̂_2 = (0, 0.02)/(0.02 + ε). Off the diagonal of D̂ᵀÊᵀ: d̂_1·ê_2 and d̂_2·ê_1;
    # XOrtho = √(sum of squares)/(N² − N) with N = 2.
    enc = np.array([[0.03, 0.04], [0.01, 0.0]])
    dec = np.array([[0.01, 0.0], [0.0, 0.02]])
    pair_12 = 0.01**2 / (0.01 + EPS) ** 2
    pair_21 = 0.02 * 0.04 / ((0.02 + EPS) * (0.05 + EPS))
    value = sae_model.xortho(enc, dec, "off_diagonal")[0]
    assert value == pytest.approx(math.hypot(pair_12, pair_21) / 2, rel=1e-13)


@pytest.mark.parametrize("variant", ["off_diagonal", "repo"])
def test_xortho_gradients_of_small_rows_match_central_differences(variant: sae_model.XOrthoVariant) -> None:
    # Rows and columns of norm ~0.01: ε/‖·‖ ~ 1e-4, so the ε terms of the gradient matter at the 1e-7 tolerance.
    rng = np.random.default_rng(4)
    enc, dec = 0.01 * rng.standard_normal((3, 4)), 0.01 * rng.standard_normal((4, 3))
    _, d_enc, d_dec = sae_model.xortho(enc, dec, variant)
    for arr, grad in ((enc, d_enc), (dec, d_dec)):
        numeric = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            old = arr[idx]
            arr[idx] = old + 1e-8
            up = sae_model.xortho(enc, dec, variant)[0]
            arr[idx] = old - 1e-8
            numeric[idx] = (up - sae_model.xortho(enc, dec, variant)[0]) / 2e-8
            arr[idx] = old
        assert np.abs(grad - numeric).max() < 1e-7 * np.abs(numeric).max()


@pytest.mark.parametrize(
    ("enc", "dec", "variant"),
    [
        (np.ones((1, 3)), np.ones((3, 1)), "off_diagonal"),
        (np.ones((1, 3)), np.ones((3, 1)), "repo"),
        (np.eye(3), np.eye(3), "off_diagonal"),
    ],
)
def test_xortho_is_zero_with_zero_gradients_for_one_latent_or_orthogonal_pairs(
    enc: np.ndarray, dec: np.ndarray, variant: sae_model.XOrthoVariant
) -> None:
    value, d_enc, d_dec = sae_model.xortho(enc, dec, variant)
    assert value == 0.0
    assert d_enc.shape == enc.shape and d_dec.shape == dec.shape
    assert not d_enc.any() and not d_dec.any()


@pytest.mark.parametrize(("rows", "n"), [(300, 20), (20, 1000)])
def test_top_k_mask_equals_sorting(rows: int, n: int) -> None:
    # Distinct values per row, a quarter of them ≤ 0: the k largest positive entries, by a full sort.
    rng = np.random.default_rng(5)
    z = np.array([rng.permutation(n) - n // 4 for _ in range(rows)], dtype=np.float64)
    for k in range(1, n, 1 if n <= 20 else 9):
        want = np.zeros(z.shape, dtype=bool)
        np.put_along_axis(want, np.argsort(-z, axis=1)[:, :k], True, axis=1)
        assert np.array_equal(sae_model.top_k_mask(z, k), want & (z > 0)), k


def test_init_weights_have_unit_rows_and_are_tied() -> None:
    w = sae_model.init_weights(np.random.default_rng(6), 5, 4, 3, 2)
    assert np.linalg.norm(w.E, axis=1) == pytest.approx(np.ones(4), rel=1e-14)
    assert np.linalg.norm(w.W_down, axis=2) == pytest.approx(np.ones((4, 2)), rel=1e-14)
    assert np.linalg.norm(w.E_c, axis=2) == pytest.approx(np.ones((4, 3)), rel=1e-14)
    assert np.array_equal(w.D, w.E.T) and np.array_equal(w.W_up, w.W_down.transpose(0, 2, 1))
    assert np.array_equal(w.D_c, w.E_c.transpose(0, 2, 1))


def test_encode_active_in_chunks_and_float32_equals_the_dense_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # Chunks of 2 rows (GATHER_CHUNK = 2·k·s·d) over 7 rows; z of the selected parents is the dense z (0 below θ),
    # the child an integer index; float32 input keeps float32 codes.
    rng = np.random.default_rng(7)
    w = sae_model.init_weights(rng, 6, 5, 3, 2)
    x = rng.standard_normal((7, 6))
    k, theta = 4, 0.3
    monkeypatch.setattr(sae_model, "GATHER_CHUNK", 2 * k * 2 * 6)
    codes = sae_model.encode_active(w, x, k, theta)
    f = sae_model.forward(w, x, k, theta)
    assert np.array_equal(codes.z, np.take_along_axis(f.z, codes.parents, axis=1))
    assert (codes.z == 0).any()
    assert np.issubdtype(codes.child.dtype, np.integer)
    assert np.array_equal(codes.child, f.best.T[np.arange(7)[:, None], codes.parents])
    best_c = np.take_along_axis(f.c, f.best[:, None, :], axis=1)[:, 0, :].T
    assert codes.c == pytest.approx(np.take_along_axis(best_c, codes.parents, axis=1), rel=1e-12)
    w32 = HSAEWeights(**{name: arr.astype(np.float32) for name, arr in w.arrays().items()})
    codes32 = sae_model.encode_active(w32, x.astype(np.float32), k, theta)
    assert codes32.z.dtype == codes32.c.dtype == np.float32
