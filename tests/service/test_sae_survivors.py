"""sae's error locations, edges and passed-on settings that the training tests do not reach (written for the
mutation run's survivors, docs/testing.md): the field a diverged run or a constant data set is named by, the
parameter cap and subspace = d accepted, the held-out set's bounds, dead-latent counting, the configs handed to
training, the stored dtype and the npz layout."""

import io
import math
import struct
import zipfile

import numpy as np
import pytest

from service.errors import Degenerate, InvalidInput
from service.estimators import sae
from service.estimators.sae_model import LossConfig
from service.estimators.sae_train import Evaluation, TrainConfig
from service.reproductions import synthetic_models

TINY = {"n_parents": 1, "n_children": 1, "subspace": 1, "k": 1, "steps": 1, "batch": 1}


def _evaluation(mse: float, fvu: float, cos: float) -> Evaluation:
    return Evaluation(
        mse=mse,
        fvu=fvu,
        cos=cos,
        l0_parents=2.0,
        l0_children=0.5,
        parent_usage=np.array([3, 0, 1, 0]),
        child_usage=np.array([[0, 1], [2, 0], [1, 1]]),
    )


def _train_params(**overrides: object) -> sae.HierarchicalTrainParams:
    x = np.random.default_rng(5).normal(size=(20, 4))
    return sae.HierarchicalTrainParams(x=[[0.0]], **TINY).model_copy(update={"x": x, **overrides})


def test_metrics_by_hand() -> None:
    m = sae._metrics(_evaluation(0.5, 0.25, 0.75), 7, "x")
    assert m == sae.Metrics(
        n=7,
        mse=0.5,
        fvu=0.25,
        explained_variance=0.75,
        cos=0.75,
        l0_parents=2.0,
        l0_children=0.5,
        l0_total=2.5,
    )


@pytest.mark.parametrize(("mse", "cos"), [(math.inf, 0.5), (0.5, math.nan), (math.nan, math.nan)])
def test_metrics_of_a_diverged_run_name_lr(mse: float, cos: float) -> None:
    """A finite FVU beside a non-finite MSE or cosine: the run diverged (named by lr, not by the data)."""
    with pytest.raises(Degenerate) as err:
        sae._metrics(_evaluation(mse, 0.5, cos), 7, "x_eval")
    assert err.value.loc == ("lr",)


def test_metrics_of_a_diverged_run_name_lr_even_when_its_fvu_is_nan() -> None:
    """Non-finite weights make the squared error NaN, so the FVU (its ratio to the data's spread) is NaN too; the
    run diverged, the data are not constant (evaluate gives a finite MSE and cosine, and an infinite FVU, on
    constant rows)."""
    with pytest.raises(Degenerate) as err:
        sae._metrics(_evaluation(math.nan, math.nan, math.nan), 7, "x_eval")
    assert err.value.loc == ("lr",)


@pytest.mark.parametrize("fvu", [math.inf, math.nan])
def test_metrics_with_an_undefined_fvu_name_the_data(fvu: float) -> None:
    with pytest.raises(Degenerate) as err:
        sae._metrics(_evaluation(0.5, fvu, 0.5), 7, "n_test")
    assert err.value.loc == ("n_test",)


def test_curve_by_hand_and_a_non_finite_loss_names_lr() -> None:
    point = {"step": 3.0, "loss": 1.5, "mse": 1.0, "l1": 0.25, "xortho": 0.125, "mse_top": 2.0}
    (out,) = sae._curve([point])
    assert out == sae.LossPoint(step=3, loss=1.5, mse=1.0, l1=0.25, xortho=0.125, mse_top=2.0)
    assert isinstance(out.step, int)
    for key in ("loss", "xortho", "step"):
        with pytest.raises(Degenerate) as err:
            sae._curve([point, {**point, key: math.inf}])
        assert err.value.loc == ("lr",)


def test_a_constant_held_out_set_is_named_x_eval() -> None:
    """x varies, the 3 held-out rows are all ones: the held-out FVU is undefined and the error names x_eval."""
    with pytest.raises(Degenerate) as err:
        sae.hierarchical_train(_train_params(x_eval=np.ones((3, 4))), lambda *_: None)
    assert err.value.loc == ("x_eval",)


def _recovery_params(**overrides: object) -> sae.HierarchicalRecoveryParams:
    settings = {"d": 4, "true_parents": 1, "true_children": 2, "n_train": 6, "n_test": 4, **TINY}
    return sae.HierarchicalRecoveryParams(**{**settings, **overrides})


def test_recovery_on_constant_planted_training_rows_names_n_train() -> None:
    """Noise 0 and P(parent on) = 10⁻¹²: every planted row is 0, the training FVU is undefined."""
    with pytest.raises(Degenerate) as err:
        sae.hierarchical_recovery(_recovery_params(noise=0.0, p_active=1e-12), lambda *_: None)
    assert err.value.loc == ("n_train",)


def test_recovery_on_constant_planted_test_rows_names_n_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """Training rows drawn as usual, the 4 test rows all equal: the test FVU is undefined."""
    drawn = sae.sample_planted

    def sample(*args: object) -> np.ndarray:
        x = drawn(*args)
        x[6:] = 1.0
        return x

    monkeypatch.setattr(sae, "sample_planted", sample)
    with pytest.raises(Degenerate) as err:
        sae.hierarchical_recovery(_recovery_params(), lambda *_: None)
    assert err.value.loc == ("n_test",)


def test_train_metrics_count_rows_not_dimensions_and_weights_are_float32() -> None:
    # 20 rows of d = 4, 2 held out: 18 training rows.
    out = sae.hierarchical_train(_train_params(), lambda *_: None)
    assert (out.n_train, out.train.n, out.held_out.n, out.d) == (18, 18, 2, 4)
    assert out.artifacts[0].dtype == "float32"
    assert out.artifacts[0].name == "weights"


def test_subspace_equal_to_d_and_exactly_the_parameter_cap_are_accepted() -> None:
    # N(2d + 2sd + 2ms) at N = 160, s = 16, m = 15, d = 905: 160·(1810 + 28,960 + 480) = 160·31,250 = 5·10⁶.
    at_cap = sae.ModelSettings(n_parents=160, n_children=15, subspace=16, k=1)
    assert sae.parameter_count(at_cap, 905) == 5_000_000
    sae._check_model(at_cap, 905)
    with pytest.raises(InvalidInput) as err:
        sae._check_model(at_cap, 906)
    assert err.value.loc == ("n_parents",)
    square = sae.ModelSettings(n_parents=2, n_children=2, subspace=3, k=1)
    sae._check_model(square, 3)
    with pytest.raises(InvalidInput) as err:
        sae._check_model(square, 2)
    assert err.value.loc == ("subspace",)
    x = np.random.default_rng(6).normal(size=(10, 3))
    out = sae.hierarchical_train(_train_params(x=x, subspace=3, eval_fraction=0.0), lambda *_: None)
    assert out.d == 3


@pytest.mark.parametrize("x_eval", [[[1.0, 2.0, 3.0, 4.0], [1.0]], [[]], "not numbers"])
def test_a_malformed_x_eval_is_named_x_eval(x_eval: object) -> None:
    with pytest.raises(InvalidInput) as err:
        sae.hierarchical_train(_train_params(x_eval=x_eval), lambda *_: None)
    assert err.value.loc == ("x_eval",)


def test_x_eval_of_exactly_two_million_elements_is_accepted() -> None:
    # (2000, 1000) is 2·10⁶ elements, the cap itself; one row more is refused.
    x = np.ones((2, 1000))
    rng = np.random.default_rng(0)
    at_cap = np.zeros((2000, 1000))
    params = sae.HierarchicalTrainParams(x=[[0.0]], **TINY).model_copy(update={"x_eval": at_cap})
    x_train, x_eval = sae._split(params, x, rng)
    assert x_train is x and x_eval.shape == (2000, 1000)
    with pytest.raises(InvalidInput) as err:
        sae._split(params.model_copy(update={"x_eval": np.zeros((2001, 1000))}), x, rng)
    assert err.value.loc == ("x_eval",)


def test_usage_counts_only_never_used_latents_as_dead() -> None:
    # parents used 3, 0, 1, 0 times: two dead; children [[0, 1], [2, 0], [1, 1]]: two dead (three used once).
    assert sae._usage(_evaluation(0.5, 0.5, 0.5)) == {"dead_parents": 2, "dead_children": 2}


def test_configs_pass_every_setting_on() -> None:
    params = sae.ModelSettings(
        n_parents=4,
        k=2,
        steps=7,
        batch=3,
        lr=0.25,
        warmup_steps=2,
        l1=0.5,
        top_weight=0.75,
        xortho_weight=0.125,
        xortho_variant="repo",
        grad_clip=1.5,
    )
    assert sae._configs(params, 16) == TrainConfig(
        steps=7,
        batch=3,
        lr=0.25,
        warmup_steps=2,
        grad_clip=1.5,
        loss=LossConfig(k=2, theta=0.25, l1=0.5, top_weight=0.75, xortho_weight=0.125, xortho_variant="repo"),
    )
    default = sae._configs(sae.ModelSettings(theta=0.5), 16)
    assert (default.grad_clip, default.loss.xortho_variant, default.loss.theta) == (None, "off_diagonal", 0.5)


def _local_headers(blob: bytes) -> list[tuple[int, bytes]]:
    """(version needed to extract, extra field) of each entry's local file header, read from the bytes by hand."""
    out = []
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        for info in archive.infolist():
            at = info.header_offset
            assert blob[at : at + 4] == b"PK\x03\x04"
            version = struct.unpack_from("<H", blob, at + 4)[0]
            name_len, extra_len = struct.unpack_from("<HH", blob, at + 26)
            out.append((version, blob[at + 30 + name_len : at + 30 + name_len + extra_len]))
    return out


def test_npz_entries_are_zip64_and_c_ordered_whatever_the_input_layout() -> None:
    """Every entry is written as zip64 (version 4.5, a zip64 extra field, id 0x0001), so the bytes do not depend on
    a size guess; a Fortran-ordered array gives the same bytes as its C-ordered copy (equal arrays, equal bytes)."""
    c_order = np.arange(6.0).reshape(2, 3)
    f_order = np.asfortranarray(c_order)
    blob = sae.npz_bytes({"w": f_order, "b": np.arange(3.0)})
    assert blob == sae.npz_bytes({"w": c_order, "b": np.arange(3.0)})
    headers = _local_headers(blob)
    assert len(headers) == 2
    for version, extra in headers:
        assert version == 45
        assert struct.unpack_from("<H", extra, 0)[0] == 0x0001
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        assert archive.namelist() == ["b.npy", "w.npy"]
        with archive.open("w.npy") as fh:
            np.lib.format.read_magic(fh)
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
    assert (shape, fortran, dtype) == ((2, 3), False, np.dtype(np.float64))
    with np.load(io.BytesIO(blob)) as npz:
        assert np.array_equal(npz["w"], c_order)


def test_flat_topk_sae_codes_keep_exactly_the_k_largest_pre_activations() -> None:
    """The untrained flat SAE (0 steps: encoder = decoderᵀ, b_e = 0, b_d the training mean) on 2000 test rows with
    300 latents and k = 100: its FVU equals the one computed here from the returned decoder with each row's k largest
    ReLU pre-activations found by a full sort (partial selections that keep k of the k ± 1 largest differ on some
    rows)."""
    rng = np.random.default_rng(4)
    x_train, x_test = rng.normal(size=(50, 16)), rng.normal(size=(2000, 16))
    out = synthetic_models.flat_topk_sae(x_train, x_test, width=300, k=100, steps=0, batch=1, seed=0)
    dec = out["decoder"]
    np.testing.assert_allclose(np.linalg.norm(dec, axis=0), 1.0, rtol=1e-12)
    b_d = x_train.mean(axis=0)
    pre = np.maximum((x_test - b_d) @ dec, 0.0)
    kth_largest = -np.sort(-pre, axis=1)[:, 99:100]
    z = np.where(pre >= kth_largest, pre, 0.0)
    assert ((z > 0).sum(axis=1) <= 100).all()
    recon = z @ dec.T + b_d
    fvu = np.sum((x_test - recon) ** 2) / np.sum((x_test - x_test.mean(axis=0)) ** 2)
    assert out["fvu"] == pytest.approx(fvu, rel=1e-12)


def test_flat_topk_sae_first_adam_step_on_data_whose_gradients_are_near_adams_epsilon() -> None:
    """Rows of size ~10⁻⁴ make the decoder's gradient entries ~10⁻⁸, Adam's ε: the first step moves each entry by
    5·10⁻³·g/(|g| + 10⁻⁸) (m̂ = g, v̂ = g² at step 1), between 0 and the full 5·10⁻³, then the columns are
    renormalised. The gradient is the central difference of the batch loss, exact for this quadratic; the batch and
    the decoder are the generator's draws in their documented order (decoder, then batch rows)."""
    rng = np.random.default_rng(8)
    x_train = 1e-4 * (rng.standard_normal((40, 4)) + np.array([2.0, 0.0, -1.0, 0.5]))
    seed, batch, k = 5, 16, 2
    gen = np.random.default_rng(seed)
    dec0 = gen.standard_normal((4, 6))
    dec0 /= np.linalg.norm(dec0, axis=0)
    xb = x_train[gen.integers(0, 40, batch)]
    b_d = x_train.mean(axis=0)
    pre = np.maximum((xb - b_d) @ dec0, 0.0)
    z = np.where(pre >= -np.sort(-pre, axis=1)[:, k - 1 : k], pre, 0.0)

    def loss(d: np.ndarray) -> float:
        return float(np.mean(np.sum((z @ d.T + b_d - xb) ** 2, axis=1)))

    grad = np.zeros_like(dec0)
    for idx in np.ndindex(dec0.shape):
        step = np.zeros_like(dec0)
        step[idx] = 1e-3
        grad[idx] = (loss(dec0 + step) - loss(dec0 - step)) / 2e-3
    near_eps = (np.abs(grad) > 1e-9) & (np.abs(grad) < 1e-7)
    assert near_eps.sum() >= 6, grad
    moved = dec0 - 5e-3 * grad / (np.abs(grad) + 1e-8)
    expected = moved / np.linalg.norm(moved, axis=0)
    out = synthetic_models.flat_topk_sae(x_train, x_train, width=6, k=k, steps=1, batch=batch, seed=seed)
    np.testing.assert_allclose(out["decoder"], expected, rtol=0, atol=1e-9)
