"""steering.persona_vector beyond tests/service/test_steering.py: the array-parameter type, the field each
inconsistent input names (including the 2·10⁷-element total over pos, neg and query), Cohen's d by hand for
unequal groups, groups too small or too uniform for a pooled sd, the progress report, the cost, the figure and the
overlay curve."""

from typing import Any, get_args

import numpy as np
import pydantic
import pytest
from matplotlib.colors import to_rgba

from service.errors import InvalidInput
from service.estimators.steering_persona import (
    SPEC,
    PersonaVectorParams,
    PersonaVectorResult,
    persona_cost,
    persona_curves,
    persona_vector,
    plot_persona,
    stack_param,
)
from service.types import ArrayConstraints, ArrayRef, StrictModel


def persona(pos: Any, neg: Any, progress: Any = None, **extra: Any) -> PersonaVectorResult:
    """Lists or arrays set after validation, as the API hands over resolved uploads."""
    params = PersonaVectorParams.model_validate({"pos": [[[0.0]]], "neg": [[[0.0]]]})
    update = {"pos": pos, "neg": neg, **extra}
    return persona_vector(params.model_copy(update=update), progress or (lambda *_: None))


def zeros(*shape: int) -> np.ndarray:
    """A read-only (n, L, d) array of zeros without allocating n·L·d floats."""
    return np.broadcast_to(np.float64(0.0), shape)


# ------------------------------------------------------------------ the array parameter


def test_stack_param_is_a_3d_float_array_or_a_json_list_of_at_most_256_examples() -> None:
    typ = stack_param()
    assert get_args(typ)[1] == ArrayConstraints("float", 3, None, None, 1)

    class Model(StrictModel):
        a: typ  # type: ignore[valid-type]

    assert Model.model_validate({"a": [[[0.5, 1.0]]] * 256}).a == [[[0.5, 1.0]]] * 256
    ref = "sha256:" + "cd" * 32
    assert Model.model_validate({"a": {"array": ref}}).a == ArrayRef(array=ref)
    for bad in ([[[0.0]]] * 257, [[0.0]], [[[float("nan")]]], [[[]]]):
        with pytest.raises(pydantic.ValidationError):
            Model.model_validate({"a": bad})


# ------------------------------------------------------------------ the field an inconsistent input names


@pytest.mark.parametrize(
    ("pos", "neg", "extra", "loc"),
    [
        (zeros(2, 2, 2), [[[0.0, 1.0], [2.0]]], {}, ("neg",)),  # ragged
        (zeros(2, 2, 2), zeros(2, 2, 2), {"query": [[[0.0, 1.0], [2.0]]]}, ("query",)),
        (zeros(1, 1, 1), zeros(4097, 1, 1), {}, ("neg",)),  # n ≤ 4096 examples, same (L, d) as pos
        (zeros(1, 1, 1), zeros(1, 1, 1), {"query": zeros(4097, 1, 1)}, ("query",)),
    ],
)
def test_each_array_is_checked_under_its_own_name(pos: Any, neg: Any, extra: dict, loc: tuple) -> None:
    with pytest.raises(InvalidInput) as err:
        persona(pos, neg, **extra)
    assert err.value.loc == loc


def test_the_element_cap_counts_pos_neg_and_query_together() -> None:
    # 4·128·16384 = 8,388,608 elements in pos and in neg, 2·128·16384 = 4,194,304 in the query: 20,971,520 > 2·10⁷
    # only with all three.
    with pytest.raises(InvalidInput) as err:
        persona(zeros(4, 128, 16384), zeros(4, 128, 16384), query=zeros(2, 128, 16384))
    assert err.value.loc == ("pos",)


def test_exactly_two_times_ten_to_the_seven_elements_are_accepted() -> None:
    # 5·125·16000 = 10⁷ in each group: the cap itself. pos ≡ 1 and neg ≡ 0 separate perfectly on every layer.
    ones = np.broadcast_to(np.float64(1.0), (5, 125, 16000))
    result = persona(ones, zeros(5, 125, 16000), return_vectors=False)
    assert (result.n_pos, result.num_layers, result.dim) == (5, 125, 16000)
    assert result.layers[0].norm == pytest.approx(np.sqrt(16000), rel=1e-12)
    assert result.layers[124].auc == 1.0


# ------------------------------------------------------------------ Cohen's d by hand


@pytest.mark.parametrize("scale", [1.0, 0.1])
def test_cohens_d_of_unequal_groups_by_hand_at_two_scales(scale: float) -> None:
    # One dimension, two layers, 3 pos and 4 neg examples. Layer 1: pos 3, 5, 7 and neg 1, 3, 1, 3: v = 5 − 2 = 3,
    # v̂ = 1, the projections are the values themselves; ss = (4 + 0 + 4) + 4·1 = 12 over n_pos + n_neg − 2 = 5
    # degrees of freedom, d = 3/√(12/5); AUC = (3 + 4 + 4)/12 (3 beats both 1s and ties both 3s). Layer 0: pos 1, 2,
    # 0 and neg 1, 0, 1, 0 (v = 1 − ½ = ½): AUC (3 + 4 + 1)/12 = 2/3, so the best layer is 1. Scaling every
    # activation by 0.1 (pooled sd 0.15 < 1) leaves d and the AUCs alone.
    pos = np.array([[[1.0], [3.0]], [[2.0], [5.0]], [[0.0], [7.0]]]) * scale
    neg = np.array([[[1.0], [1.0]], [[0.0], [3.0]], [[1.0], [1.0]], [[0.0], [3.0]]]) * scale
    result = persona(pos, neg)
    assert result.layers[1].separation == pytest.approx(3 / np.sqrt(12 / 5), rel=1e-12)
    assert [s.auc for s in result.layers] == pytest.approx([8 / 12, 11 / 12], rel=1e-12)
    assert result.best_layer == 1
    assert result.layers[1].pos_mean_projection == pytest.approx(5 * scale, rel=1e-12)
    assert result.layers[1].neg_mean_projection == pytest.approx(2 * scale, rel=1e-12)


def test_one_degree_of_freedom_gives_a_pooled_sd() -> None:
    # pos 1, 3 and neg 0: v = 2, ss = 1 + 1 over 2 + 1 − 2 = 1 degree of freedom, sd = √2, d = 2/√2 = √2.
    result = persona(np.array([[[1.0]], [[3.0]]]), np.array([[[0.0]]]))
    assert result.layers[0].separation == pytest.approx(np.sqrt(2.0), rel=1e-12)


def test_one_example_per_group_has_no_pooled_sd() -> None:
    # n_pos + n_neg − 2 = 0: no sd, so no separation; the AUC and the mean projections are still defined.
    result = persona(np.array([[[2.0, 0.0]]]), np.array([[[0.0, 0.0]]]))
    layer = result.layers[0]
    assert (layer.auc, layer.pos_mean_projection, layer.neg_mean_projection) == (1.0, 2.0, 0.0)
    assert layer.separation is None


def test_identical_examples_within_each_group_have_a_zero_sd_and_no_separation() -> None:
    # v = (1, 0) ≠ 0 but every pos projects to 1 and every neg to 0: pooled sd 0, separation null, AUC 1.
    result = persona(np.array([[[1.0, 0.0]]] * 3), np.array([[[0.0, 0.0]]] * 2))
    layer = result.layers[0]
    assert (layer.norm, layer.auc, layer.separation) == (1.0, 1.0, None)


def test_all_zero_vectors_leave_every_projection_and_the_best_layer_null() -> None:
    same = np.array([[[1.0, 2.0], [3.0, 4.0]], [[0.5, 0.0], [1.0, -1.0]]])
    result = persona(same, same[::-1].copy(), query=[[[1.0, 1.0], [1.0, 1.0]]])
    assert [s.norm for s in result.layers] == [0.0, 0.0]
    for s in result.layers:
        assert (s.auc, s.pos_mean_projection, s.neg_mean_projection, s.separation) == (None, None, None, None)
    assert result.best_layer is None
    assert result.unit_vectors == [None, None]
    assert result.query_projections == [[None, None]]


def test_return_vectors_false_leaves_both_vector_fields_out() -> None:
    result = persona(np.array([[[1.0, 0.0]], [[3.0, 0.0]]]), np.array([[[0.0, 0.0]]]), return_vectors=False)
    assert (result.vectors, result.unit_vectors) == (None, None)
    assert result.layers[0].norm == 2.0


def test_progress_reports_the_projections_step() -> None:
    calls: list[tuple[Any, ...]] = []
    persona(np.array([[[1.0]]]), np.array([[[0.0]]]), progress=lambda *args: calls.append(args))
    assert calls == [(0.7, "projections")]


# ------------------------------------------------------------------ cost, figure, overlay


def test_cost_counts_every_element_of_pos_neg_and_query() -> None:
    # One example of 2 layers × 3 (6), two of 2 × 3 (12) and a query of three (18): 36 elements; lists and arrays
    # count alike.
    params = PersonaVectorParams.model_validate(
        {"pos": [[[0.0] * 3] * 2], "neg": [[[0.0] * 3] * 2] * 2, "query": [[[0.0] * 3] * 2] * 3}
    )
    assert persona_cost(params) == 6 + 12 + 18
    assert persona_cost(params.model_copy(update={"query": np.zeros((3, 2, 3))})) == 36
    assert persona_cost(params.model_copy(update={"query": None})) == 18


@pytest.fixture(scope="module")
def two_layers() -> PersonaVectorResult:
    # Layer 0 separates (AUC 1, ‖v‖ = 2), layer 1 is the same in both groups (AUC null, ‖v‖ = 0).
    pos = np.array([[[2.0], [1.0]], [[2.0], [1.0]]])
    neg = np.array([[[0.0], [1.0]], [[0.0], [1.0]]])
    return persona(pos, neg)


def test_figure_draws_auc_and_norm_per_layer_on_a_shared_layer_axis(two_layers: PersonaVectorResult) -> None:
    fig = plot_persona(two_layers)
    assert tuple(fig.get_size_inches()) == (7.0, 5.0)
    ax_auc, ax_norm = fig.axes
    assert ax_auc.get_shared_x_axes().joined(ax_auc, ax_norm)
    auc, chance = ax_auc.get_lines()
    assert list(auc.get_xdata()) == [0, 1]
    np.testing.assert_array_equal(auc.get_ydata(orig=False), [1.0, np.nan])
    assert (auc.get_marker(), auc.get_linestyle()) == ("o", "-")
    assert list(chance.get_ydata()) == [0.5, 0.5]
    assert to_rgba(chance.get_color()) == to_rgba("grey") and chance.get_linewidth() == 0.8
    assert ax_auc.get_ylabel() == "separability AUC"
    assert ax_auc.get_title() == "Persona vector per layer"
    (norm,) = ax_norm.get_lines()
    assert (list(norm.get_xdata()), list(norm.get_ydata())) == ([0, 1], [2.0, 0.0])
    assert (norm.get_marker(), norm.get_linestyle()) == ("s", "-")
    assert ax_norm.get_ylabel() == "‖v_ℓ‖"
    assert ax_norm.get_xlabel() == "layer ℓ"


def test_overlay_curve_is_the_auc_per_layer(two_layers: PersonaVectorResult) -> None:
    curves = persona_curves(two_layers)
    assert (curves.x_label, curves.y_label, curves.x_log, curves.y_log) == ("layer ℓ", "separability AUC", False, False)
    assert [(c.label, list(c.x), list(c.y)) for c in curves.curves] == [("AUC", [0, 1], [1.0, None])]
    assert SPEC.overlay is persona_curves and SPEC.plot is plot_persona
