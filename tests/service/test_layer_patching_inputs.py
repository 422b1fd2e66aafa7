"""layer_patching.plan's inputs: the field each inconsistent combination names, the largest table (M = 16), and
parameter budgets quoted to ten significant digits."""

from typing import Any

import numpy as np
import pytest

from service.errors import InvalidInput
from service.estimators.layer_patching import PlanParams, PlanResult, cost_model_of, plan
from service.registry import no_progress

UNARY = {"kind": "unary", "delta": [1.0, -2.0]}


def run(**params: Any) -> PlanResult:
    return plan(PlanParams.model_validate(params), no_progress)


@pytest.mark.parametrize(
    ("params", "loc"),
    [
        ({"cost_model": UNARY}, ("block_sizes",)),  # neither
        ({"block_sizes": [2, 3], "copied_teacher_layers": [0, 2], "cost_model": UNARY}, ("block_sizes",)),  # both
        ({"block_sizes": [2, 3], "n_teacher_layers": 5, "cost_model": UNARY}, ("n_teacher_layers",)),
        ({"copied_teacher_layers": [0, 2], "cost_model": UNARY}, ("n_teacher_layers",)),  # N missing
        ({"copied_teacher_layers": [0, 2], "n_teacher_layers": 2, "cost_model": UNARY}, ("n_teacher_layers",)),
        # N = 4 exceeds ℓ_1 = 2 but not the last copied layer ℓ_2 = 5.
        (
            {
                "copied_teacher_layers": [0, 2, 5],
                "n_teacher_layers": 4,
                "cost_model": {"kind": "unary", "delta": [0.0] * 3},
            },
            ("n_teacher_layers",),
        ),
        (
            {
                "block_sizes": [2, 3],
                "cost_model": UNARY,
                "added_depths": [1],
                "param_budgets": [10.0],
                "params_per_layer": 1.0,
            },
            ("param_budgets",),
        ),
    ],
)
def test_inconsistent_inputs_name_the_field(params: dict[str, Any], loc: tuple[Any, ...]) -> None:
    with pytest.raises(InvalidInput) as err:
        run(**params)
    assert err.value.loc == loc


def test_a_table_of_sixteen_layers_is_accepted() -> None:
    # M = 16 is the largest table (2^16 = 65,536 losses); M = 17 is refused (tests/service/test_layer_patching.py).
    loss = np.arange(1 << 16, dtype=np.float64)
    params = PlanParams.model_validate({"block_sizes": [2] * 16, "cost_model": {"kind": "table", "loss": [0.0, 1.0]}})
    params = params.model_copy(update={"cost_model": params.cost_model.model_copy(update={"loss": loss})})
    model = cost_model_of(params, np.ones(16, dtype=np.int64))
    assert (model.kind, model.m) == ("table", 16)


def test_a_budget_quoted_to_ten_significant_digits_still_reaches_its_depth() -> None:
    # Four blocks of 126 (widths 125: depths 0, 125, 250, 375, 500), p_layer = 12,345,678.9. The full teacher,
    # 504 layers, holds 6,222,222,165.6 parameters; quoted as 6.222222166e9 or 6.222222165e9 (0.6 short, 5·10⁻⁸
    # of a layer) it is still the full teacher, not 375.
    for budget in (6.222222166e9, 6.222222165e9):
        result = run(
            block_sizes=[126] * 4,
            cost_model={"kind": "unary", "delta": [1.0] * 4},
            param_budgets=[budget],
            params_per_layer=12_345_678.9,
        )
        assert result.plans[0].added_depth == 500
