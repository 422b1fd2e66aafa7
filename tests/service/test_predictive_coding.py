"""Target alignment of BP and PC in deep linear networks: hand computation, table, ordering, optimal rate rule."""

import math
import time
import warnings

import numpy as np
import pydantic
import pytest
from matplotlib.colors import to_rgba

from service.errors import Degenerate, InvalidInput
from service.estimators.predictive_coding import (
    SPEC,
    DrawAlignment,
    TargetAlignmentParams,
    TargetAlignmentResult,
    _equilibrium,
    target_alignment,
    target_alignment_cost,
)
from service.registry import no_progress


def run(**kw: object):
    return target_alignment(TargetAlignmentParams(**kw), no_progress)


def net(depth: int, width: int) -> list[int]:
    """d_in = 20, d_out = 5 and depth − 1 hidden layers of ``width``."""
    return [20] + [width] * (depth - 1) + [5]


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_two_layer_network_by_hand() -> None:
    # dims [3, 2, 2], B = 1, explicit weights; the draw is x ~ N(0, I_3) then y ~ N(0, I_2) from default_rng(4).
    w1 = np.array([[0.5, -1.0, 0.3], [0.2, 0.4, -0.7]])
    w2 = np.array([[1.1, -0.3], [0.6, 0.9]])
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal(3), rng.standard_normal(2)
    lr = 0.05
    a1 = w1 @ x
    e = y - w2 @ a1
    # BP: ΔW2 = η e a1ᵀ, ΔW1 = η (W2ᵀe) xᵀ
    bp = (lr * np.outer(e, a1), lr * np.outer(w2.T @ e, x))
    # PC equilibrium: S = I + W2 W2ᵀ, ε2 = S⁻¹e, ε1 = W2ᵀε2, x1 = a1 + ε1; ΔW2 = η ε2 x1ᵀ, ΔW1 = η ε1 xᵀ
    eps2 = np.linalg.solve(np.eye(2) + w2 @ w2.T, e)
    eps1 = w2.T @ eps2
    pc = (lr * np.outer(eps2, a1 + eps1), lr * np.outer(eps1, x))

    def finite(d2: np.ndarray, d1: np.ndarray) -> np.ndarray:
        return (w2 + d2) @ ((w1 + d1) @ x) - w2 @ a1

    def first(d2: np.ndarray, d1: np.ndarray) -> np.ndarray:
        return d2 @ a1 + w2 @ (d1 @ x)

    res = run(weights=[w1.tolist(), w2.tolist()], lr=lr, seed=4)
    assert res.ta_bp == pytest.approx(cos(finite(*bp), e), rel=1e-12)
    assert res.ta_pc == pytest.approx(cos(finite(*pc), e), rel=1e-12)
    assert res.ta_bp_first_order == pytest.approx(cos(first(*bp), e), rel=1e-12)
    assert res.ta_pc_first_order == pytest.approx(cos(first(*pc), e), rel=1e-12)
    assert res.loss_before == pytest.approx(e @ e / 2, rel=1e-12)
    r_bp, r_pc = y - w2 @ a1 - finite(*bp), y - w2 @ a1 - finite(*pc)
    assert res.loss_after_bp == pytest.approx(r_bp @ r_bp / 2, rel=1e-12)
    assert res.loss_after_pc == pytest.approx(r_pc @ r_pc / 2, rel=1e-12)
    assert res.equilibrium_residual < 1e-14


def test_uploaded_weights_equal_json_weights() -> None:
    w1, w2 = np.random.default_rng(2).standard_normal((2, 4, 4))
    as_json = run(weights=[w1.tolist(), w2.tolist()], n_draws=5)
    ref = {"array": "sha256:" + "0" * 64}
    params = TargetAlignmentParams(weights=[ref, ref], n_draws=5).model_copy(update={"weights": [w1, w2]})
    assert target_alignment(params, no_progress) == as_json
    listed = TargetAlignmentParams(weights=[w1.tolist(), w2.tolist()], n_draws=5)
    assert target_alignment_cost(params) == target_alignment_cost(listed)


def test_one_layer_pc_equals_bp_and_aligns_perfectly_to_first_order() -> None:
    # L = 1: ε_1 = e and x_0 = x, so both updates are η e xᵀ and Δŷ = η‖x‖² e to first order.
    res = run(dims=[7, 3], n_draws=20)
    assert res.ta_pc == pytest.approx(res.ta_bp, rel=1e-12)
    assert res.ta_bp_first_order == pytest.approx(1.0, abs=1e-12)
    assert res.pc_minus_bp == pytest.approx(0.0, abs=1e-12)


# Independently measured means over 20 seeds (d_in = 20, d_out = 5, init scale 1, η = 1e-3, exact equilibrium):
# (depth, width, B) → (TA_BP, TA_PC).
TABLE = {
    (2, 8, 1): (0.902, 0.977),
    (4, 8, 1): (0.806, 0.911),
    (8, 8, 1): (0.791, 0.900),
    (2, 64, 1): (0.998, 0.998),
    (8, 64, 1): (0.961, 1.000),
    (8, 8, 16): (0.571, 0.506),
    (8, 64, 16): (0.728, 0.737),
}


@pytest.mark.parametrize("key", list(TABLE))
def test_table_within_sampling_error(key: tuple[int, int, int]) -> None:
    depth, width, batch = key
    draws = 200
    res = run(dims=net(depth, width), batch=batch, n_draws=draws)
    assert res.n_excluded == 0
    for name, ref in zip(("ta_bp", "ta_pc"), TABLE[key], strict=True):
        values = np.array([getattr(d, name) for d in res.per_draw])
        # 3.5 standard errors of the difference of a 20-seed mean and our 200-draw mean, plus the reference's rounding
        tol = 3.5 * values.std(ddof=1) * math.sqrt(1 / 20 + 1 / draws) + 5e-4
        assert getattr(res, name) == pytest.approx(ref, abs=tol), (name, getattr(res, name), ref, tol)


def test_pc_beats_bp_on_average_for_single_samples_more_so_when_narrow() -> None:
    gaps = {}
    for depth, width in ((2, 8), (4, 8), (8, 8), (8, 64)):
        res = run(dims=net(depth, width), n_draws=400, seed=1)
        assert res.pc_minus_bp > 4 * res.pc_minus_bp_se, (depth, width)
        gaps[(depth, width)] = res.pc_minus_bp
    assert gaps[(4, 8)] > gaps[(2, 8)]  # deeper
    assert gaps[(8, 8)] > gaps[(8, 64)]  # narrower
    # not in every draw: at depth 8, width 8 PC is below BP in about a fifth of the draws
    res = run(dims=net(8, 8), n_draws=400, seed=1)
    below = np.mean([d.ta_pc < d.ta_bp for d in res.per_draw])
    assert 0.1 < below < 0.3


def test_optimal_rate_rule_gives_first_order_alignment_one() -> None:
    for depth, width in ((4, 8), (8, 8), (8, 64)):
        res = run(dims=net(depth, width), n_draws=200, optimal_pc_lr=True)
        kept = [d for d in res.per_draw if d.ta_pc is not None]
        assert len(kept) == 200 - res.n_excluded and len(kept) >= 100
        assert min(d.ta_pc_first_order for d in kept) == pytest.approx(1.0, abs=1e-9)
        assert min(d.ta_pc for d in kept) > 0.997  # η = 1e-3 is finite
        assert res.ta_bp_first_order < 0.96  # BP under the same normalisation: Δŷ ∝ S e, TA = eᵀSe/(‖Se‖‖e‖) < 1
        assert res.ta_pc == pytest.approx(np.mean([d.ta_pc for d in kept]), rel=1e-12)
        assert "x_{l−1}ᵀa_{l−1}" in res.lr_rule


def test_draws_with_undefined_rate_are_excluded_from_the_means() -> None:
    # Deep narrow nets often have x_{l−1}ᵀa_{l−1} ≤ 0 at some layer: those draws get null TA.
    res = run(dims=net(8, 8), n_draws=100, optimal_pc_lr=True)
    nulls = [d for d in res.per_draw if d.ta_bp is None]
    assert len(nulls) == res.n_excluded > 0
    assert all(d.ta_pc is None and d.ta_pc_first_order is None for d in nulls)
    kept = [d.ta_bp for d in res.per_draw if d.ta_bp is not None]
    assert res.ta_bp == pytest.approx(np.mean(kept), rel=1e-12)


def test_iterative_inference_converges_to_the_exact_equilibrium() -> None:
    exact = run(dims=net(4, 8), n_draws=20)
    slow = run(dims=net(4, 8), n_draws=20, pc_inference={"steps": 2000, "gamma": 0.1})
    assert slow.equilibrium_residual < 1e-9
    assert max(abs(a.ta_pc - b.ta_pc) for a, b in zip(exact.per_draw, slow.per_draw, strict=True)) < 1e-10
    assert slow.ta_bp == exact.ta_bp  # same draws
    short = run(dims=net(4, 8), n_draws=20, pc_inference={"steps": 5, "gamma": 0.1})
    assert short.equilibrium_residual > 1e-3


def test_reproducible_and_batched_over_draws() -> None:
    a = run(dims=net(3, 16), batch=4, n_draws=50, seed=9)
    assert run(dims=net(3, 16), batch=4, n_draws=50, seed=9) == a
    assert run(dims=net(3, 16), batch=4, n_draws=50, seed=10) != a
    assert a.loss_after_bp < a.loss_before and a.loss_after_pc < a.loss_before  # small steps descend


def test_validation_names_the_field() -> None:
    with pytest.raises(InvalidInput) as err:
        run(dims=[3, 2], weights=[[[1.0, 0.0, 0.0]]])
    assert err.value.loc == ("dims",)
    with pytest.raises(InvalidInput) as err:
        run()
    assert err.value.loc == ("dims",)
    with pytest.raises(InvalidInput) as err:
        run(weights=[[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0, 3.0]]])
    assert err.value.loc == ("weights", 1)
    with pytest.raises(InvalidInput) as err:
        run(weights=[[[1.0, 0.0], [0.0]]])
    assert err.value.loc == ("weights", 0)
    with pytest.raises(InvalidInput) as err:
        target_alignment_cost(TargetAlignmentParams(dims=[1024] * 6))
    assert err.value.loc == ("dims",)
    with pytest.raises(pydantic.ValidationError):
        TargetAlignmentParams(weights=[[[]]])


def test_cost_scales_with_draws_and_inference_steps() -> None:
    base = TargetAlignmentParams(dims=net(8, 64))
    assert target_alignment_cost(base.model_copy(update={"n_draws": 10})) == 10 * target_alignment_cost(base)
    slow = TargetAlignmentParams(dims=net(8, 64), pc_inference={"steps": 100, "gamma": 0.1})
    assert target_alignment_cost(slow) > target_alignment_cost(base)
    assert target_alignment_cost(base.model_copy(update={"n_draws": 200})) < SPEC.sync_budget


@pytest.mark.parametrize(
    ("extra", "per_draw"),
    [
        # dims [3, 4, 2]: Σ n_l n_{l−1} = 12 + 8 = 20 weights, L = 2 layers, d_out = 2; B = 5.
        # 60·(20 drawn + 5·(3 + 2)) + 5·20·6 + 3e4·2 + 4·2³
        ({"dims": [3, 4, 2]}, 60 * (20 + 25) + 600 + 60_000 + 32),
        # iterative inference, T = 10: 5·20·(6 + 2·10)
        ({"dims": [3, 4, 2], "pc_inference": {"steps": 10, "gamma": 0.1}}, 60 * (20 + 25) + 2600 + 60_000 + 32),
        # given weights: nothing drawn but the data
        ({"weights": [[[0.1] * 3] * 4, [[0.2] * 4] * 2]}, 60 * 25 + 600 + 60_000 + 32),
    ],
)
def test_cost_is_the_stated_multiply_add_count(extra: dict, per_draw: int) -> None:
    params = TargetAlignmentParams.model_validate({"batch": 5, "n_draws": 7, **extra})
    assert target_alignment_cost(params) == 7 * per_draw


def test_plot_draws_the_per_draw_values() -> None:
    res = run(dims=net(3, 8), n_draws=30)
    ax = SPEC.plot(res).axes[0]
    assert list(ax.lines[0].get_xdata()) == [d.ta_bp_first_order for d in res.per_draw]
    assert list(ax.lines[0].get_ydata()) == [d.ta_pc_first_order for d in res.per_draw]


def test_every_draw_undefined_is_degenerate_naming_n_draws_and_progress_counts_draws() -> None:
    # Zero weights: a_1 = 0, so x_1ᵀa_1 = 0 ≤ 0 and the optimal-rate rule is undefined in every draw.
    params = TargetAlignmentParams(weights=[[[0.0, 0.0]], [[0.0]]], optimal_pc_lr=True, n_draws=3)
    seen: list[tuple[float, str]] = []
    with pytest.raises(Degenerate) as err:
        target_alignment(params, lambda fraction, message="": seen.append((fraction, message)))
    assert err.value.loc == ("n_draws",)
    assert seen[-1] == (1.0, "3/3 draws")


@pytest.mark.parametrize("n_draws", [2, 5])
def test_paired_standard_error_is_the_sample_sd_over_root_n(n_draws: int) -> None:
    res = target_alignment(TargetAlignmentParams(dims=[2, 3, 1], n_draws=n_draws, seed=4), no_progress)
    diff = np.array([d.ta_pc - d.ta_bp for d in res.per_draw])
    assert res.n_excluded == 0 and diff.size == n_draws
    mean = diff.mean()
    sd = math.sqrt(sum((x - mean) ** 2 for x in diff) / (n_draws - 1))
    assert res.pc_minus_bp == pytest.approx(mean, rel=1e-12)
    assert res.pc_minus_bp_se == pytest.approx(sd / math.sqrt(n_draws), rel=1e-12)


def test_plot_of_a_hand_made_result() -> None:
    # Three draws, the second excluded (null): the scatter holds draws 1 and 3, the diagonal runs (−1, −1)–(1, 1).
    draws = [
        DrawAlignment(ta_bp=0.5, ta_pc=0.6, ta_bp_first_order=0.25, ta_pc_first_order=0.75),
        DrawAlignment(ta_bp=None, ta_pc=None, ta_bp_first_order=None, ta_pc_first_order=None),
        DrawAlignment(ta_bp=0.1, ta_pc=0.2, ta_bp_first_order=-0.125, ta_pc_first_order=0.5),
    ]
    result = TargetAlignmentResult(
        ta_bp=0.3,
        ta_pc=0.4,
        ta_bp_first_order=0.1234,
        ta_pc_first_order=0.98765,
        pc_minus_bp=0.1,
        pc_minus_bp_se=None,
        per_draw=draws,
        n_draws=3,
        n_excluded=1,
        equilibrium_residual=0.0,
        loss_before=1.0,
        loss_after_bp=0.9,
        loss_after_pc=0.8,
        lr_rule="η_l = lr for every layer, BP and PC",
        reconstructed=[],
    )
    fig = SPEC.plot(result)
    assert list(fig.get_size_inches()) == [5.0, 5.0]
    (ax,) = fig.axes
    points, diagonal = ax.lines
    assert list(points.get_xdata()) == [0.25, -0.125]
    assert list(points.get_ydata()) == [0.75, 0.5]
    assert (points.get_marker(), points.get_linestyle(), points.get_markersize()) == ("o", "None", 3)
    assert points.get_label() == "draws"
    assert list(diagonal.get_xdata()) == [-1, 1]
    assert list(diagonal.get_ydata()) == [-1, 1]
    assert (to_rgba(diagonal.get_color()), diagonal.get_linestyle()) == ((0.0, 0.0, 0.0, 1.0), ":")
    assert diagonal.get_label() == "TA_PC = TA_BP"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("TA_BP (first order)", "TA_PC (first order)")
    assert ax.title.get_text() == "means: BP 0.123, PC 0.988"
    assert ax.title.get_fontsize() == 9
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["draws", "TA_PC = TA_BP"]
    assert [t.get_fontsize() for t in legend.get_texts()] == [8, 8]


def test_given_weights_chain_on_the_last_width() -> None:
    # 2 → 3 → 4 → 1: W_3 needs 4 columns (the last width so far), not 3 (the first hidden width).
    w = [[[0.1] * 2] * 3, [[0.2] * 3] * 4, [[0.3] * 4]]
    # B = 1, nothing drawn but the data: 60·(2 + 1) + 1·(6 + 12 + 4)·6 + 3e4·3 + 4·1³
    assert target_alignment_cost(TargetAlignmentParams(weights=w)) == 180 + 132 + 90_000 + 4
    with pytest.raises(InvalidInput) as err:
        target_alignment_cost(TargetAlignmentParams(weights=[*w[:2], [[0.3] * 3]]))
    assert err.value.loc == ("weights", 2)


def uploaded(*weights: np.ndarray) -> TargetAlignmentParams:
    """Params with referenced weights, resolved to the given arrays (as the array resolver hands them over)."""
    ref = {"array": "sha256:" + "0" * 64}
    return TargetAlignmentParams(weights=[ref] * len(weights)).model_copy(update={"weights": list(weights)})


@pytest.mark.parametrize("shape", [(1025, 1), (1, 1025)])
def test_uploaded_weights_wider_than_1024_name_the_matrix(shape: tuple[int, int]) -> None:
    with pytest.raises(InvalidInput) as err:
        target_alignment_cost(uploaded(np.ones((2, 1)), np.ones((1, 2)), np.ones(shape)))
    assert err.value.loc == ("weights", 2)


def test_uploaded_weights_1024_wide_and_exactly_5e6_weights_are_accepted() -> None:
    # dims [1, 1024, 1]: 2048 weights, B = 1: 60·(1 + 1) + 2048·6 + 3e4·2 + 4·1³
    assert target_alignment_cost(uploaded(np.ones((1024, 1)), np.ones((1, 1024)))) == 120 + 12_288 + 60_000 + 4
    # dims [1000]·6: 5 layers of 10⁶ weights = MAX_PARAMS exactly; 60·(5e6 + 2000) + 5e6·6 + 3e4·5 + 4·1000³
    at_cap = TargetAlignmentParams(dims=[1000] * 6)
    assert target_alignment_cost(at_cap) == 60 * (5_000_000 + 2000) + 30_000_000 + 150_000 + 4 * 1000**3
    with pytest.raises(InvalidInput) as err:
        target_alignment_cost(TargetAlignmentParams(dims=[1000] * 5 + [1001]))
    assert err.value.loc == ("dims",)


def test_one_iterative_step_by_hand() -> None:
    # dims [3, 2, 2], T = 1, γ = 0.5, from x_1 = a_1: ε_1 = 0 and ε_2 = e, so x_1 ← a_1 + γ W_2ᵀe.
    w1 = np.array([[0.5, -1.0, 0.3], [0.2, 0.4, -0.7]])
    w2 = np.array([[1.1, -0.3], [0.6, 0.9]])
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal(3), rng.standard_normal(2)
    lr, gamma = 0.05, 0.5
    a1 = w1 @ x
    e = y - w2 @ a1
    x1 = a1 + gamma * w2.T @ e
    eps1, eps2 = x1 - a1, y - w2 @ x1
    # ∂F/∂x_1 = ε_1 − W_2ᵀε_2 at the state reached
    residual = np.linalg.norm(eps1 - w2.T @ eps2)
    pc2, pc1 = lr * np.outer(eps2, x1), lr * np.outer(eps1, x)
    res = run(weights=[w1.tolist(), w2.tolist()], lr=lr, seed=4, pc_inference={"steps": 1, "gamma": gamma})
    assert res.equilibrium_residual == pytest.approx(residual, rel=1e-12)
    assert res.equilibrium_residual > 0.1
    assert res.ta_pc_first_order == pytest.approx(cos(pc2 @ a1 + w2 @ (pc1 @ x), e), rel=1e-12)


def test_one_layer_equilibrium_has_a_zero_residual_per_draw() -> None:
    # L = 1: no hidden layer, so ∂F/∂x is empty and the residual is 0 for each of the 3 draws (d_out = 2).
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 2, 4))
    x, y = rng.standard_normal((3, 4, 1)), rng.standard_normal((3, 2, 1))
    _, errors, residual = _equilibrium([w], [x, w @ x], y, "exact")
    assert residual.tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(errors[0], y - w @ x, rtol=1e-12)


def test_losses_divide_by_two_b() -> None:
    # dims [2, 1], B = 2, W = [[1, −2]]: X (2×2) then Y (1×2) from default_rng(3); loss = ‖Y − W X‖²/(2B).
    w = np.array([[1.0, -2.0]])
    rng = np.random.default_rng(3)
    xb, yb = rng.standard_normal((2, 2)), rng.standard_normal((1, 2))
    e = yb - w @ xb
    lr = 0.1
    # one layer: BP = PC = η e Xᵀ/B, so f(X) moves by η e XᵀX/B
    r = e - lr * e @ xb.T @ xb / 2
    res = run(weights=[w.tolist()], batch=2, lr=lr, seed=3)
    assert res.loss_before == pytest.approx(float((e**2).sum()) / 4, rel=1e-12)
    assert res.loss_after_bp == pytest.approx(float((r**2).sum()) / 4, rel=1e-12)
    assert res.loss_after_pc == pytest.approx(float((r**2).sum()) / 4, rel=1e-12)


def test_pc_minus_bp_is_the_mean_of_the_finite_lr_pc_bp_differences() -> None:
    res = run(dims=[3, 4, 2], n_draws=4, seed=2)
    diff = [d.ta_pc - d.ta_bp for d in res.per_draw]
    assert res.n_excluded == 0
    assert res.pc_minus_bp == pytest.approx(sum(diff) / 4, rel=1e-12)
    assert res.pc_minus_bp != pytest.approx(np.mean([d.ta_bp_first_order - d.ta_bp for d in res.per_draw]))


def test_per_draw_holds_the_first_1000_draws() -> None:
    res = run(dims=[1, 1], n_draws=1001)
    assert len(res.per_draw) == 1000


@pytest.mark.parametrize(
    ("extra", "rule"),
    [
        ({}, "η_l = lr for every layer, BP and PC"),
        (
            {"optimal_pc_lr": True},
            "PC: η_l = lr/(x_{l−1}ᵀa_{l−1}); BP: η_l = lr/(a_{l−1}ᵀa_{l−1}) (means over the batch)",
        ),
    ],
)
def test_lr_rule_states_the_rule(extra: dict, rule: str) -> None:
    assert run(dims=[2, 2], **extra).lr_rule == rule


@pytest.mark.parametrize(
    ("dims", "batch", "n_draws", "done"),
    [
        # per draw Σ n_l n_{l−1} + 4B·Σ n_l values: 2·64² + 4·64·192 = 57 344, so 2·10⁶ // 57 344 = 34 draws per chunk
        ([64, 64, 64], 64, 40, [34, 40]),
        # 1024² + 1024 + 4·1·2049 = 1 057 796 > 10⁶: one draw per chunk
        ([1024, 1024, 1], 1, 2, [1, 2]),
    ],
)
def test_chunks_keep_weights_and_activations_under_2e6_values(
    dims: list[int], batch: int, n_draws: int, done: list[int]
) -> None:
    seen: list[str] = []
    params = TargetAlignmentParams(dims=dims, batch=batch, n_draws=n_draws)
    target_alignment(params, lambda fraction, message="": seen.append(message))
    assert seen == [f"{d}/{n_draws} draws" for d in done]


def test_an_excluded_draw_computes_no_division_by_zero() -> None:
    # Zero weights: x_1ᵀa_1 = 0 in every draw; the rule's rate is not taken as lr/0 (no numpy warning), all excluded.
    params = TargetAlignmentParams(weights=[[[0.0, 0.0]], [[0.0]]], optimal_pc_lr=True, n_draws=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(Degenerate):
            target_alignment(params, no_progress)


def test_two_layer_network_by_hand_with_a_batch() -> None:
    # dims [3, 2, 2], B = 4 > widths: X (3×4) then Y (2×4) from default_rng(6); updates are means over the batch.
    w1 = np.array([[0.5, -1.0, 0.3], [0.2, 0.4, -0.7]])
    w2 = np.array([[1.1, -0.3], [0.6, 0.9]])
    rng = np.random.default_rng(6)
    xb, yb = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    lr, b = 0.05, 4
    a1 = w1 @ xb
    e = yb - w2 @ a1
    bp = (lr * e @ a1.T / b, lr * (w2.T @ e) @ xb.T / b)
    eps2 = np.linalg.solve(np.eye(2) + w2 @ w2.T, e)
    eps1 = w2.T @ eps2
    pc = (lr * eps2 @ (a1 + eps1).T / b, lr * eps1 @ xb.T / b)

    def finite(d2: np.ndarray, d1: np.ndarray) -> np.ndarray:
        return ((w2 + d2) @ ((w1 + d1) @ xb) - w2 @ a1).ravel()

    res = run(weights=[w1.tolist(), w2.tolist()], lr=lr, seed=6, batch=b)
    assert res.ta_bp == pytest.approx(cos(finite(*bp), e.ravel()), rel=1e-12)
    assert res.ta_pc == pytest.approx(cos(finite(*pc), e.ravel()), rel=1e-12)
    assert res.ta_bp_first_order == pytest.approx(cos((bp[0] @ a1 + w2 @ bp[1] @ xb).ravel(), e.ravel()), rel=1e-12)
    assert res.ta_pc_first_order == pytest.approx(cos((pc[0] @ a1 + w2 @ pc[1] @ xb).ravel(), e.ravel()), rel=1e-12)


def test_cpu_time_per_cost_unit_does_not_grow_with_the_batch() -> None:
    # B ≫ widths: ΔW_l z as left·(rightᵀz) would take B²(n_l + n_{l−1}) multiply-adds, which the cost model (and the
    # synchronous budget) does not count; (left·rightᵀ)·z takes 2B·n_l·n_{l−1}.
    def per_unit(params: TargetAlignmentParams) -> float:
        times = []
        for _ in range(3):
            start = time.process_time()
            target_alignment(params, no_progress)
            times.append(time.process_time() - start)
        return min(times) / target_alignment_cost(params)

    baseline = per_unit(TargetAlignmentParams(dims=[64, 64, 64], batch=64, n_draws=20))
    assert per_unit(TargetAlignmentParams(dims=[2, 2], batch=1024, n_draws=20)) < 20 * baseline
