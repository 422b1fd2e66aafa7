"""snn's finite-difference check and LocalZO draws in detail: the coordinates each chunk evaluates and the progress it
reports, the check on a smooth surrogate, LocalZO's chunk size and its detached reset path by hand on a two-step
network, and the trace cost of JSON traces that do not start with a zero."""

import numpy as np
import pytest
from scipy.stats import norm

from service.errors import InvalidInput
from service.estimators import snn
from service.estimators.snn_lif import Trajectory, hard_spike, surrogate_cdf, surrogate_grad
from service.registry import no_progress
from tests.service.test_snn_fields import DELTA, ZO_SEED, B, M, R, W, Y, localzo_run

# One layer of 3 units on 2 inputs, T = 1, B = 2: T·B·Σ n_l = 6 nodes and P = 3·(2 + 1) = 9 parameters.
SMALL = {"sizes": [2, 3], "time_steps": 1, "batch_size": 2, "seed": 4, "w_scale": 2.0, "p": 0.6}


def fd_run(
    monkeypatch: pytest.MonkeyPatch, chunk_nodes: int, **kw: object
) -> tuple[snn.GradientMismatchResult, list[int], list[tuple[float, str]]]:
    """gradient_mismatch with fd_check and FD_CHUNK_NODES = ``chunk_nodes``: the result, the θ replicas of each
    forward pass the check makes, and the progress reports."""
    replicas: list[int] = []
    real_forward = snn.forward

    def spy(x: np.ndarray, weights: list[np.ndarray], *args: object) -> Trajectory:
        if weights[0].ndim == 3:
            replicas.append(weights[0].shape[0])
        return real_forward(x, weights, *args)

    monkeypatch.setattr(snn, "forward", spy)
    monkeypatch.setattr(snn, "FD_CHUNK_NODES", chunk_nodes)
    seen: list[tuple[float, str]] = []
    params = snn.GradientMismatchParams(**(SMALL | kw), fd_check=True)
    res = snn.gradient_mismatch(params, lambda f, m="": seen.append((f, m)))
    return res, replicas, seen


@pytest.mark.parametrize(("chunk_nodes", "chunk"), [(20, 3), (5, 1)])
def test_each_fd_chunk_evaluates_only_its_own_coordinates(
    monkeypatch: pytest.MonkeyPatch, chunk_nodes: int, chunk: int
) -> None:
    # chunk = max(1, ⌊FD_CHUNK_NODES / nodes⌋) = ⌊20/6⌋ = 3 or max(1, ⌊5/6⌋) = 1 coordinates per pass pair: the
    # 2P = 18 replicas of the cost model, each in one + and one − pass, and one progress report per chunk.
    res, replicas, seen = fd_run(monkeypatch, chunk_nodes)
    n_chunks = 9 // chunk
    assert replicas == [chunk] * (2 * n_chunks)
    fd_reports = [(f, m) for f, m in seen if m.startswith("finite differences ")]
    ends = [chunk * (k + 1) for k in range(n_chunks)]
    assert [m for _, m in fd_reports] == [f"finite differences {e}/9" for e in ends]
    assert [f for f, _ in fd_reports] == pytest.approx([0.8 + 0.2 * e / 9 for e in ends], abs=1e-15)
    assert seen[-1] == (1.0, "done")
    assert res.fd is not None and res.fd.n_coords == 9
    assert res.fd.max_abs < 1e-8 and res.fd.rel_err < 1e-6


@pytest.mark.parametrize("kind", ["gaussian", "sigmoid", "atan"])
def test_fd_check_differentiates_the_chosen_smooth_surrogate(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    # Central differences of L_F with F the chosen surrogate agree with the adjoint's ∇L_F (two steps, two layers so
    # the reset and the leak enter); the rect surrogate's objective would differ at order 1e-2.
    res, _, _ = fd_run(monkeypatch, 10**6, sizes=[2, 3, 2], time_steps=2, surrogate=kind)
    assert res.fd is not None and res.norm_grad_lf > 1e-3
    assert res.fd.rel_err < 1e-6 and res.fd.max_abs < 1e-8


# Two steps of the one-layer network of test_snn_fields: X_1, X_2 and the zero reset between them.
X2 = np.array([[[1.0, 0.0], [1.0, 1.0]], [[0.0, 1.0], [1.0, 1.0]]])
BETA = 0.5


def two_step_gradient(h: np.ndarray, s: np.ndarray, d_1: np.ndarray) -> np.ndarray:
    """θ-gradient (W row-major, then b) of mean_(b,k) (r − Y)², r = (s_1 + s_2)/2, with node factors h (T, B, K) and
    reset factor d_1 of step 1: ē_v2 = ē_s·h_2, ē_v1 = ē_s·h_1 + β·ē_v2·d_1, ē_s = 2(r − Y)/(B·K·T)."""
    e_s = 2.0 * (s.mean(axis=0) - Y) / (Y.size * 2)
    e_v2 = e_s * h[1]
    e_v1 = e_s * h[0] + BETA * e_v2 * d_1
    grad_w = e_v1.T @ X2[0] + e_v2.T @ X2[1]
    return np.concatenate([grad_w.ravel(), (e_v1 + e_v2).sum(axis=0)])


def two_step_hard_pass(reset: str) -> tuple[np.ndarray, np.ndarray]:
    """v and s (T, B, K) of the hard pass: v_1 = X_1 Wᵀ + b, s = 1{v > 1}, m = (1 − s_1)·v_1 (zero) or v_1 − s_1
    (subtract), v_2 = β·m + X_2 Wᵀ + b."""
    v1 = X2[0] @ W.T + B
    s1 = (v1 > 1.0).astype(float)
    m = (1.0 - s1) * v1 if reset == "zero" else v1 - s1
    v = np.array([v1, BETA * m + X2[1] @ W.T + B])
    return v, (v > 1.0).astype(float)


def two_step_params(**kw: object) -> snn.GradientMismatchParams:
    return snn.GradientMismatchParams(
        sizes=[2, 3],
        time_steps=2,
        batch_size=2,
        beta=BETA,
        theta=np.concatenate([W.ravel(), B]).tolist(),
        x=X2.tolist(),
        y=Y.tolist(),
        **kw,
    )


@pytest.mark.parametrize("reset", ["zero", "subtract"])
def test_detached_surrogate_direction_by_hand(reset: str) -> None:
    # Detached, D = 1 − s_1 (zero reset) or 1 (subtract); attached, D = (1 − s_1) − v_1·h_1 or 1 − ϑ·h_1.
    v, s = two_step_hard_pass(reset)
    assert 0 < s[0].sum() < s[0].size
    h = norm.pdf((v - 1.0) / 0.5) / 0.5
    detached = two_step_gradient(h, s, 1.0 - s[0] if reset == "zero" else np.ones_like(s[0]))
    attached = two_step_gradient(h, s, (1.0 - s[0]) - v[0] * h[0] if reset == "zero" else 1.0 - h[0])
    for detach, g in ((True, detached), (False, attached)):
        res = snn.gradient_mismatch(two_step_params(reset=reset, detach_reset=detach), no_progress)
        assert res.norm_g_f == pytest.approx(np.linalg.norm(g), rel=1e-12)
    assert np.linalg.norm(detached - attached) > 1e-3 * np.linalg.norm(detached)


def test_localzo_with_a_detached_reset_by_hand() -> None:
    v, s = two_step_hard_pass("zero")
    u = v - 1.0
    rng = np.random.default_rng(ZO_SEED)
    draws = []
    for _ in range(R):
        z = np.abs(rng.standard_normal((M, *u.shape)))
        draws.append(
            two_step_gradient(np.where(np.abs(u) / DELTA < z, z, 0.0).sum(axis=0) / (2 * DELTA * M), s, 1.0 - s[0])
        )
    draws = np.array(draws)
    mean = draws.mean(axis=0)
    g_gauss = two_step_gradient(norm.pdf(u / DELTA) / DELTA, s, 1.0 - s[0])
    spread = np.sqrt(np.mean(np.sum((draws - mean) ** 2, axis=1))) / np.linalg.norm(mean)
    localzo = snn.LocalZoParams(delta=DELTA, samples=M, draws=R, zo_seed=ZO_SEED)
    zo = snn.gradient_mismatch(two_step_params(detach_reset=True, localzo=localzo), no_progress).localzo
    assert zo is not None
    assert zo.mc_rel_err == pytest.approx(np.linalg.norm(mean - g_gauss) / np.linalg.norm(g_gauss), rel=1e-10)
    assert zo.spread == pytest.approx(spread, rel=1e-10)


@pytest.mark.parametrize(("chunk_values", "chunk"), [(5, 1), (13, 2), (10**6, 10**6 // 6)])
def test_localzo_draws_at_most_zo_chunk_values_normals_at_once(
    monkeypatch: pytest.MonkeyPatch, chunk_values: int, chunk: int
) -> None:
    # The one-step network has 2·3 = 6 offsets: max(1, ⌊ZO_CHUNK_VALUES/6⌋) samples per chunk; the draws (and so the
    # statistics) are those of one (M, T, B, n) draw whatever the chunk, up to the rounding of the chunk sums.
    chunks: list[int] = []
    real = snn.localzo_node_grad

    def spy(rng: np.random.Generator, u_layers: list[np.ndarray], delta: float, samples: int, ch: int) -> object:
        chunks.append(ch)
        return real(rng, u_layers, delta, samples, ch)

    whole = localzo_run(delta=DELTA, samples=M, draws=R, zo_seed=ZO_SEED).localzo
    monkeypatch.setattr(snn, "localzo_node_grad", spy)
    monkeypatch.setattr(snn, "ZO_CHUNK_VALUES", chunk_values)
    got = localzo_run(delta=DELTA, samples=M, draws=R, zo_seed=ZO_SEED).localzo
    assert chunks == [chunk] * R
    assert got.model_dump() == pytest.approx(whole.model_dump(), rel=1e-12)  # the chunk sums' rounding only


def test_threshold_tail_cost_of_json_traces_with_nonzero_values() -> None:
    # 2 layers of T×B×n = 2×1×2 and 2×1×1 (first values 1.5 and −0.7): 6 offsets × (3 ε + 4).
    v = [[[[1.5, 2.0]], [[0.5, 0.1]]], [[[-0.7]], [[0.3]]]]
    assert snn.threshold_tail_cost(snn.ThresholdTailParams(v=v, eps=[0.1, 0.2, 0.3])) == 6 * 7


def test_threshold_tail_uses_the_given_width() -> None:
    # u = 0.1, −0.2, 0.3 and rect(a = 0.5): κ(u) = max(0, 1 − 2|u|/a) = 0.6, 0.2, 0 (a = 1 would give 0.8, 0.6, 0.4).
    params = snn.ThresholdTailParams(v=[[[[1.1, 0.8, 1.3]]]], eps=[0.25], surrogate="rect", width=0.5)
    res = snn.threshold_tail(params, no_progress)
    assert res.kernel_tail == pytest.approx(0.8 / 3, rel=1e-12)
    assert res.band_frac == [pytest.approx(2 / 3)]


def test_threshold_tail_reports_done_once() -> None:
    seen: list[tuple[object, ...]] = []
    snn.threshold_tail(snn.ThresholdTailParams(v=[[[[1.1]]]]), lambda *args: seen.append(args))
    assert seen == [(1.0, "done")]


def test_trace_cap_admits_exactly_max_trace_values(monkeypatch: pytest.MonkeyPatch) -> None:
    # With the cap at 12 values: two layers of 2×1×3 (12 in all) pass, 2×1×3 and 2×1×4 (14) are refused as a whole.
    monkeypatch.setattr(snn, "MAX_TRACE_VALUES", 12)
    six = [[[0.0, 1.0, 2.0]], [[3.0, 4.0, 5.0]]]
    res = snn.threshold_tail(snn.ThresholdTailParams(v=[six, six]), no_progress)
    assert res.n_u == 12
    seven = [[[0.0, 1.0, 2.0, 3.0]], [[3.0, 4.0, 5.0, 6.0]]]
    with pytest.raises(InvalidInput) as err:
        snn.threshold_tail(snn.ThresholdTailParams(v=[six, seven]), no_progress)
    assert err.value.loc == ("v",)


def test_ratios_are_null_only_below_tiny() -> None:
    # mismatch_rel and cosine are null if a norm is < 1e-12: a norm of exactly 1e-12 still divides.
    tiny = np.array([1e-12, 0.0])
    assert np.linalg.norm(tiny) == snn.TINY == 1e-12
    assert snn._rel(3e-12, 1e-12) == pytest.approx(3.0)
    assert snn._rel(1.0, np.nextafter(1e-12, 0.0)) is None
    assert snn._cos(tiny, np.array([2.0, 1.0])) == pytest.approx(2 / np.sqrt(5))
    assert snn._cos(np.array([2.0, 1.0]), tiny) == pytest.approx(2 / np.sqrt(5))
    assert snn._cos(tiny * 0.5, np.array([2.0, 1.0])) is None


def test_given_inputs_are_checked_against_the_sizes() -> None:
    # sizes [3, 2], T = 2, B = 2: x holds T·B·n_0 = 12 values (more than T·B·n_1 = 8) and θ P = 2·4 = 8.
    rng = np.random.default_rng(5)
    x = (rng.random((2, 2, 3)) < 0.5).astype(float)
    theta = rng.standard_normal(8)
    base = {"sizes": [3, 2], "time_steps": 2, "batch_size": 2, "labels": [0, 1]}
    res = snn.gradient_mismatch(snn.GradientMismatchParams(**base, x=x.tolist(), theta=theta.tolist()), no_progress)
    assert res.n_params == 8 and res.p is None and res.w_scale is None
    ref = {"array": "sha256:" + "0" * 64}
    # the same inputs as resolved arrays (y = one-hot of the labels) give the same result
    as_arrays = snn.GradientMismatchParams(**(base | {"labels": None}), x=ref, theta=ref, y=ref)
    same = snn.gradient_mismatch(as_arrays.model_copy(update={"x": x, "theta": theta, "y": np.eye(2)}), no_progress)
    assert same == res
    y = np.eye(2)
    bad = [
        ({"x": x.reshape(4, 1, 3), "theta": theta, "y": y}, ("x",)),  # T·B·n_0 values, wrong shape
        ({"x": x, "theta": np.append(theta[:-1], np.nan), "y": y}, ("theta",)),
        ({"x": x, "theta": theta.reshape(2, 4), "y": y}, ("theta",)),
        ({"x": x, "theta": theta, "y": np.array([[0.0, np.inf], [1.0, 0.0]])}, ("y",)),
        ({"x": x, "theta": theta, "y": y.reshape(1, 2, 2)}, ("y",)),
    ]
    for arrays, loc in bad:
        with pytest.raises(InvalidInput) as err:
            snn.gradient_mismatch(as_arrays.model_copy(update=arrays), no_progress)
        assert err.value.loc == loc


def test_gradient_mismatch_reports_each_stage() -> None:
    seen: list[tuple[object, ...]] = []
    params = snn.GradientMismatchParams(**SMALL, localzo={"draws": 2, "samples": 2}, fd_check=True)
    snn.gradient_mismatch(params, lambda *args: seen.append(args))
    assert seen == [
        (0.2, "analysis"),
        (pytest.approx(0.5), "LocalZO draw 1/2"),
        (pytest.approx(0.8), "LocalZO draw 2/2"),
        (0.8, "finite differences"),
        (pytest.approx(1.0), "finite differences 9/9"),
        (1.0, "done"),
    ]


@pytest.mark.parametrize("kind", ["sigmoid", "rect"])
def test_one_layer_block_ratios_by_hand(kind: str) -> None:
    # One layer, T = 1: g_F = (2/(BK))·Σ_b ((H(u_b) − Y_b)⊙F′(u_b)) [x_b, 1] and ∇L_F the same with F(u_b) for H(u_b),
    # u = x Wᵀ + b − 1; the one block is all of θ.
    width = {"sigmoid": 4.0, "rect": 1.0}[kind]
    u = X2[0] @ W.T + B - 1.0
    slope = surrogate_grad(kind, width, u)
    ones = np.ones((2, 1))

    def grad(spikes: np.ndarray) -> np.ndarray:
        e_v = 2.0 * (spikes - Y) / Y.size * slope
        return (e_v.T @ np.hstack([X2[0], ones])).ravel()

    def as_theta(g: np.ndarray) -> np.ndarray:
        g = g.reshape(3, 3)
        return np.concatenate([g[:, :2].ravel(), g[:, 2]])

    g_f, g_lf = as_theta(grad(hard_spike(u))), as_theta(grad(surrogate_cdf(kind, width, u)))
    params = snn.GradientMismatchParams(
        sizes=[2, 3],
        time_steps=1,
        batch_size=2,
        surrogate=kind,
        theta=np.concatenate([W.ravel(), B]).tolist(),
        x=X2[:1].tolist(),
        y=Y.tolist(),
    )
    (row,) = snn.gradient_mismatch(params, no_progress).per_layer
    assert row.norm_g_f == pytest.approx(np.linalg.norm(g_f), rel=1e-12)
    assert row.mismatch_rel == pytest.approx(np.linalg.norm(g_f - g_lf) / np.linalg.norm(g_lf), rel=1e-12)
    assert row.cosine == pytest.approx(g_f @ g_lf / (np.linalg.norm(g_f) * np.linalg.norm(g_lf)), rel=1e-12)
    assert row.mismatch_rel > 0.0 and -1.0 < row.cosine < 1.0


def test_fd_check_admits_exactly_max_fd_macs() -> None:
    # sizes [4, 100], T = 20, B = 250: P = 100·5 = 500 and T·B·Σ n_l·n_(l−1) = 5000·400 = 2·10⁶, so
    # 2P·T·B·Σ n_l·n_(l−1) = 2·10⁹ exactly (the cap); one more step is over.
    params = snn.GradientMismatchParams(sizes=[4, 100], time_steps=20, batch_size=250, fd_check=True)
    per_pass = 2e6 + 40 * 5000 * 100
    assert snn.gradient_mismatch_cost(params) == (4 + 2 * 500) * per_pass
    with pytest.raises(InvalidInput) as err:
        snn.gradient_mismatch_cost(params.model_copy(update={"time_steps": 21}))
    assert err.value.loc == ("fd_check",)
