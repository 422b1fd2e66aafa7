"""sae's input bounds at their edges (P·C = d, (n_train + n_test)·d = 2·10⁶, equal amplitude bounds are accepted),
the training cost with a held-out set by hand, and the progress both estimators report."""

import io
import zipfile
from typing import Any

import numpy as np
import pytest

from service.errors import InvalidInput
from service.estimators import sae

TINY = {"n_parents": 1, "n_children": 1, "subspace": 1, "k": 1, "steps": 1, "batch": 1}


def recorder() -> tuple[list[tuple[Any, ...]], Any]:
    calls: list[tuple[Any, ...]] = []
    return calls, lambda *args: calls.append(args)


def test_recovery_accepts_p_times_c_equal_to_d_and_equal_amplitude_bounds() -> None:
    # P·C = 2·4 = 8 = d; amplitudes fixed at 1 (parents) and ½ (children). Two steps report f = 0 and ½ of the
    # training (scaled to 0.95 of the run), then the evaluation at 0.95.
    params = sae.HierarchicalRecoveryParams(
        d=8,
        true_parents=2,
        true_children=4,
        parent_amplitude=(1.0, 1.0),
        child_amplitude=(0.5, 0.5),
        n_train=40,
        n_test=20,
        **{**TINY, "n_parents": 2, "n_children": 4, "steps": 2, "batch": 4},
    )
    calls, progress = recorder()
    out = sae.hierarchical_recovery(params, progress)
    assert out.trained.n_true_children == 8
    assert (out.train.n, out.test.n) == (40, 20)
    assert calls == [(0.0, "training"), (pytest.approx(0.475, rel=1e-15), "training"), (0.95, "evaluating")]


def test_recovery_accepts_exactly_two_million_data_elements() -> None:
    # (25,000 + 25,000)·40 = 2·10⁶, the cap itself (2,048,000 is refused: tests/service/test_sae.py).
    params = sae.HierarchicalRecoveryParams(
        d=40, true_parents=2, true_children=4, n_train=25_000, n_test=25_000, **TINY
    )
    out = sae.hierarchical_recovery(params, lambda *_: None)
    assert (out.train.n, out.test.n) == (25_000, 25_000)


def test_training_cost_counts_the_held_out_rows_by_hand() -> None:
    # N(2d + 2sd + ms) = 1·(8 + 8 + 1) = 17 MACs per row at d = 4; (3·1·1 + 10 training + 3 held-out rows)·17 plus
    # one step's 5·10⁵; lists and arrays alike, and without x_eval only the 10 rows.
    x, x_eval = [[0.0] * 4] * 10, [[1.0] * 4] * 3
    params = sae.HierarchicalTrainParams(x=x, x_eval=x_eval, **TINY)
    assert sae.train_cost(params) == (3 + 10 + 3) * 17 + 5e5
    arrays = params.model_copy(update={"x": np.zeros((10, 4)), "x_eval": np.ones((3, 4))})
    assert sae.train_cost(arrays) == (3 + 10 + 3) * 17 + 5e5
    assert sae.train_cost(params.model_copy(update={"x_eval": None})) == (3 + 10) * 17 + 5e5


def test_training_reports_its_progress() -> None:
    rng = np.random.default_rng(0)
    params = sae.HierarchicalTrainParams(x=rng.normal(size=(20, 4)).tolist(), **{**TINY, "steps": 2})
    calls, progress = recorder()
    sae.hierarchical_train(params, progress)
    assert calls == [(0.0, "training"), (pytest.approx(0.475, rel=1e-15), "training"), (0.95, "evaluating")]


def test_trained_weights_ship_with_k_theta_and_usage_counts() -> None:
    # d = 4, default θ = 1/√4 = ½, k = 1; the npz holds float32 weights beside k (int64) and θ (float64) as 0-d
    # arrays, every entry stamped 1980-01-01 00:00:00 (equal weights give equal bytes). Two held-out rows are
    # enough for held-out metrics; the usage counts add up to the dead-latent fields.
    rng = np.random.default_rng(1)
    x = rng.normal(size=(20, 4))
    params = sae.HierarchicalTrainParams(x=x.tolist(), x_eval=x[:2].tolist(), **{**TINY, "n_parents": 3, "steps": 2})
    out = sae.hierarchical_train(params, lambda *_: None)
    blob = out.artifact_blobs()["weights"]
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        assert {info.date_time for info in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_STORED}
    with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
        assert (npz["k"].dtype, npz["k"].shape, int(npz["k"])) == (np.dtype(np.int64), (), 1)
        assert (npz["theta"].dtype, float(npz["theta"])) == (np.dtype(np.float64), 0.5)
        weights = [name for name in npz.files if name not in ("k", "theta")]
        assert weights and all(npz[name].dtype == np.float32 for name in weights)
    assert out.theta == 0.5 and out.held_out.n == 2
    for m in (out.train, out.held_out):
        assert m.explained_variance == pytest.approx(1.0 - m.fvu, rel=1e-15)
    assert out.dead_parents == sum(u == 0 for u in out.parent_usage)
    assert out.dead_children == sum(u == 0 for row in out.child_usage for u in row)


@pytest.mark.parametrize(("fraction", "held_out"), [(0.1, 2), (0.05, None)])
def test_a_hold_out_of_two_rows_is_kept_and_one_is_not(fraction: float, held_out: int | None) -> None:
    # 20 rows: 0.1 of them is 2 (kept), 0.05 is 1 (no hold-out: metrics need 2 rows).
    x = np.random.default_rng(2).normal(size=(20, 4)).tolist()
    out = sae.hierarchical_train(sae.HierarchicalTrainParams(x=x, eval_fraction=fraction, **TINY), lambda *_: None)
    assert (None if out.held_out is None else out.held_out.n) == held_out
    assert out.n_train == 20 - (held_out or 0)


@pytest.mark.parametrize(
    ("shape", "ok"), [((2, 1025), False), ((3, 1024), True), ((2001, 1000), False), ((2000, 1000), True)]
)
def test_training_data_bounds_d_1024_and_two_million_elements(shape: tuple[int, int], ok: bool) -> None:
    # d ≤ 1024 and n·d ≤ 2·10⁶, both named on x; the edges themselves are accepted (no hold-out: eval_fraction 0).
    x = np.random.default_rng(3).normal(size=shape)
    params = sae.HierarchicalTrainParams(x=[[0.0]], eval_fraction=0.0, **TINY).model_copy(update={"x": x})
    if ok:
        assert sae.hierarchical_train(params, lambda *_: None).d == shape[1]
    else:
        with pytest.raises(InvalidInput) as err:
            sae.hierarchical_train(params, lambda *_: None)
        assert err.value.loc == ("x",)
