"""U-Bench: checks written for the survivors of the second wave's mutation run (docs/testing.md)."""

from typing import get_args

import numpy as np
import pydantic
import pytest

from service.errors import InvalidInput
from service.estimators.ubench import _mask_type
from service.estimators.ubench_masks import as_mask
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
