"""U-Bench: checks written for the survivors of the second wave's mutation run (docs/testing.md)."""

from typing import get_args

import numpy as np
import pydantic
import pytest

from service.errors import Degenerate, InvalidInput
from service.estimators.ubench import (
    MAX_MATRIX,
    MAX_MODELS,
    PAIRED_UNIT,
    FriedmanParams,
    PairedParams,
    SegMetricsParams,
    UScoreParams,
    _mask_type,
    friedman_cost,
    friedman_fn,
    paired_cost,
    paired_fn,
    seg_case,
    seg_metrics_fn,
    uscore_fn,
)
from service.estimators.ubench_masks import as_mask
from service.estimators.ubench_stats import friedman_nemenyi, paired_test
from service.estimators.ubench_uscore import uscore
from service.registry import no_progress
from service.types import ArrayConstraints, ArrayRef, FiniteFloat, StrictModel


def mask_model(kind: str = "float") -> type[StrictModel]:
    """A model with one mask field, its type built during the test (the module builds its own at import)."""
    typ = _mask_type(FiniteFloat if kind == "float" else int, kind, "the mask")

    class Model(StrictModel):
        m: typ  # type: ignore[valid-type]

    return Model


def test_mask_type_declares_its_array_rules_and_description() -> None:
    for kind in ("float", "int"):
        meta = get_args(_mask_type(int, kind, "the mask"))[1:]
        assert meta[0] == ArrayConstraints(kind, ndim=2, ge=0, le=1, max_ndim=3)
        assert meta[1].description == "the mask"
    schema = mask_model().model_json_schema()["properties"]["m"]
    assert schema["description"] == "the mask"


@pytest.mark.parametrize(
    "shape",
    [(1, 1), (1, 1024), (1024, 1), (1, 1, 1), (1, 1, 256), (1, 256, 1), (256, 1, 1)],
)
def test_masks_up_to_1024_per_axis_in_2d_and_256_in_3d_are_accepted(shape: tuple[int, ...]) -> None:
    value: object = 1
    for size in reversed(shape):
        value = [value] * size
    assert mask_model("int").model_validate({"m": value}).m == value
    ref = {"array": "sha256:" + "0" * 64}
    assert mask_model().model_validate({"m": ref}).m == ArrayRef(**ref)


@pytest.mark.parametrize(
    "value",
    [
        [],  # no rows
        [[]],  # an empty row
        [[1] * 1025],
        [[1]] * 1025,
        [[[]]],  # 3-D: an empty innermost row
        [[[1]], []],  # 3-D: an empty slab
        [[[1] * 257]],
        [[[1]] * 257],
        [[[1]]] * 257,
        [[[[1]]]],  # 4-D
    ],
)
def test_masks_outside_the_axis_bounds_are_rejected(value: list) -> None:
    with pytest.raises(pydantic.ValidationError):
        mask_model("int").model_validate({"m": value})


LOC = ("pred", 3)


@pytest.mark.parametrize(
    "value",
    [
        ArrayRef(array="sha256:" + "0" * 64),  # a reference the API did not resolve
        [[0, 1], [1]],  # ragged
        [0, 1, 1],  # 1-D
        [[["a"]]],  # not numeric
        np.zeros((1, 1025 * 1024)),  # above 1024² voxels in 2-D
        np.zeros((257, 256, 256), dtype=np.uint8),  # above 256³ voxels in 3-D
        [[0.5, float("nan")]],
        [[0.5, 1.5]],  # a prediction above 1
        [[-0.5, 0.5]],
    ],
)
def test_as_mask_refusals_name_the_mask(value: object) -> None:
    with pytest.raises(InvalidInput) as e:
        as_mask(value, LOC, binary=False, threshold=0.5)
    assert e.value.loc == LOC


def test_as_mask_ground_truth_must_be_zero_one_and_bool_masks_pass_through() -> None:
    with pytest.raises(InvalidInput) as e:
        as_mask([[0, 2]], LOC, binary=True, threshold=0.5)
    assert e.value.loc == LOC
    assert as_mask([[0, 1], [1, 1]], LOC, binary=True, threshold=0.5).tolist() == [[False, True], [True, True]]
    flags = np.array([[True, False]])
    assert as_mask(flags, LOC, binary=True, threshold=0.5) is flags
    big = np.zeros((1024, 1024), dtype=np.uint8)  # exactly 1024² voxels: the 2-D cap, not the 3-D one
    assert as_mask(big, LOC, binary=True, threshold=0.5).shape == (1024, 1024)
    deep = np.zeros((32, 256, 256), dtype=np.uint8)  # 2²¹ voxels: above the 2-D cap, within the 3-D one
    assert as_mask(deep, LOC, binary=True, threshold=0.5).shape == (32, 256, 256)
    assert as_mask([[0.2, 0.5, 0.7]], LOC, binary=False, threshold=0.5).tolist() == [[False, False, True]]


# ---------------------------------------------------------------- the estimators' own checks and echoes


def friedman(scores: object, models: list[str] | None = None) -> object:
    """``friedman_fn`` on scores as the API hands them over (an uploaded array arrives unchecked by the schema)."""
    return friedman_fn(FriedmanParams.model_construct(scores=scores, models=models), no_progress)


@pytest.mark.parametrize(
    "scores",
    [
        np.zeros(4),  # not N × k (an uploaded 1-D array)
        np.zeros((4, 1)),  # k = 1
        np.zeros((2, MAX_MODELS + 1)),
        np.zeros((1, 3)),  # N = 1 (an uploaded array; a list needs 2 rows)
        np.zeros((MAX_MATRIX // MAX_MODELS + 1, MAX_MODELS)),  # N·k above the cap
        [[0.1, 0.2], [0.3, 0.4, 0.5]],  # ragged
    ],
)
def test_friedman_refuses_scores_outside_n_by_k_with_the_field(scores: object) -> None:
    with pytest.raises(InvalidInput) as e:
        friedman(scores)
    assert e.value.loc == ("scores",)


def test_friedman_accepts_the_largest_matrix_and_names_models_from_m1() -> None:
    res = friedman(np.arange(2 * MAX_MODELS, dtype=float).reshape(2, MAX_MODELS) % 7)
    assert res.n_models == MAX_MODELS and res.models[:3] == ["m1", "m2", "m3"] and res.models[-1] == "m200"
    big = friedman(np.random.default_rng(0).random((MAX_MATRIX // MAX_MODELS, MAX_MODELS)))  # N·k exactly the cap
    assert big.n_models == MAX_MODELS
    assert friedman([[0.1, 0.2], [0.3, 0.4]], ["a", "b"]).models == ["a", "b"]


def test_paired_counts_differences_that_survive_rounding_to_twelve_decimals() -> None:
    p = PairedParams(model=[0.5, 0.3 + 4e-13, 0.2, 0.9], baseline=[0.5, 0.3, 0.1, 0.4])
    assert paired_fn(p, no_progress).n_nonzero == 2  # 4e-13 rounds to 0 at 12 decimals, not at 13


def test_seg_metrics_reports_each_case_and_checks_the_ground_truth_as_binary() -> None:
    calls: list[tuple[float, str]] = []
    params = SegMetricsParams(pred=[[[1, 0]], [[0, 1]]], gt=[[[1, 0]], [[1, 1]]])
    seg_metrics_fn(params, lambda f, m="": calls.append((f, m)))
    assert calls == [(0.5, "case 1 of 2"), (1.0, "case 2 of 2")]
    with pytest.raises(InvalidInput) as e:
        gt = [np.array([[0.7, 0.0]])]  # an uploaded float array: only as_mask checks its values
        seg_metrics_fn(SegMetricsParams.model_construct(pred=[[[1, 0]]], gt=gt), no_progress)
    assert e.value.loc == ("gt", 0)


def test_uscore_echoes_every_constant_it_used() -> None:
    p = UScoreParams(
        iou=0.8,
        params_m=10.0,
        gflops=20.0,
        fps=30.0,
        iou_quantiles={"q10": 0.5, "q90": 0.9},
        log_params_quantiles={"q10": 0.1, "q90": 2.0},
        log_gflops_quantiles={"q10": 0.2, "q90": 3.0},
        fps_quantiles={"q10": 5.0, "q90": 90.0},
        floor=0.1,
        alpha=0.4,
        weights=[0.2, 0.3, 0.5],
    )
    assert uscore_fn(p, no_progress).constants_used == {
        "iou_quantiles_q10": 0.5,
        "iou_quantiles_q90": 0.9,
        "log_params_quantiles_q10": 0.1,
        "log_params_quantiles_q90": 2.0,
        "log_gflops_quantiles_q10": 0.2,
        "log_gflops_quantiles_q90": 3.0,
        "fps_quantiles_q10": 5.0,
        "fps_quantiles_q90": 90.0,
        "floor": 0.1,
        "alpha": 0.4,
        "w_p": 0.2,
        "w_g": 0.3,
        "w_s": 0.5,
    }


def test_seg_metrics_passes_its_surface_convention_and_nsd_tolerance_to_each_case() -> None:
    """One pixel predicted, two in the ground truth 3 apart: directed distances pred→gt {0}, gt→pred {0, 3}.
    medpy pools them: 95th percentile of [0, 0, 3] = 2.7; MONAI takes the larger directed one: 0.95·3 = 2.85.
    NSD counts surface points within the tolerance: (1 + 1)/3 at τ = 1, 3/3 at τ = 3."""
    for convention, hd95 in (("medpy", 2.7), ("monai", 2.85)):
        for tol, nsd in ((1.0, 2 / 3), (3.0, 1.0)):
            params = SegMetricsParams(
                pred=[[[1, 0, 0, 0]]], gt=[[[1, 0, 0, 1]]], surface_convention=convention, nsd_tolerance=tol
            )
            case = seg_metrics_fn(params, no_progress).cases[0]
            assert (case.hd95, case.nsd, case.assd) == pytest.approx((hd95, nsd, 1.0), rel=1e-12)


def test_costs_count_the_scores() -> None:
    rows = [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]
    assert friedman_cost(FriedmanParams(scores=rows)) == 6.0
    assert friedman_cost(FriedmanParams.model_construct(scores=np.zeros((4, 5)))) == 20.0  # an uploaded array
    assert paired_cost(PairedParams(model=[0.1] * 5, baseline=[0.2] * 5)) == PAIRED_UNIT * 5


def test_paired_t_test_needs_varying_differences_and_takes_the_alternative() -> None:
    model, base = np.array([0.5, 0.6, 0.7, 0.9]), np.array([0.4, 0.5, 0.6, 0.8])
    with pytest.raises(Degenerate) as e:
        paired_test(model, base, "ttest_rel", "two-sided", "auto")  # every difference 0.1
    assert e.value.loc == ("model",)
    model = np.array([1.0, 2.0, 1.0, 2.0])  # differences 1, 2, 1, 2: range exactly 1
    base = np.zeros(4)
    two = paired_test(model, base, "ttest_rel", "two-sided", "auto")
    one = paired_test(model, base, "ttest_rel", "greater", "auto")
    t = 1.5 / (np.std([1.0, 2.0, 1.0, 2.0], ddof=1) / 2)  # mean 1.5, sd/√4
    assert two.statistic == pytest.approx(t, rel=1e-12)
    assert one.p == pytest.approx(two.p / 2, rel=1e-12)  # t > 0: the one-sided p is half the two-sided one


def test_friedman_of_datasets_tying_every_model_names_the_scores() -> None:
    with pytest.raises(Degenerate) as e:
        friedman_nemenyi(np.ones((3, 4)), True, 0.05)
    assert e.value.loc == ("scores",)


def test_uscore_and_seg_case_defaults_are_the_documented_ones() -> None:
    args = (0.8, 10.0, 20.0, 30.0, (0.5, 0.9))
    assert vars(uscore(*args)) == vars(uscore(*args, floor=0.05, alpha=0.5))
    pred, gt = np.array([[True, False, False, False]]), np.array([[True, False, False, True]])
    explicit = seg_case(pred, gt, [1.0, 1.0], True, "medpy", "exclude", 1.0)
    assert seg_case(pred, gt, [1.0, 1.0], True) == explicit
    assert (explicit["hd95"], explicit["nsd"]) == pytest.approx((2.7, 2 / 3), rel=1e-12)


def test_single_voxel_masks_are_not_empty() -> None:
    one = np.array([[False, True, False]])
    case = seg_case(one, one, [1.0, 1.0], True, "medpy", "synapse", 1.0)
    assert (case["dice"], case["iou"], case["hd95"], case["assd"]) == (1.0, 1.0, 0.0, 0.0)
    other = np.array([[True, False, False]])
    case = seg_case(one, other, [1.0, 1.0], True, "medpy", "synapse", 1.0)
    assert (case["dice"], case["hd95"]) == (0.0, 1.0)  # both masks hold one voxel: the distance is measured
