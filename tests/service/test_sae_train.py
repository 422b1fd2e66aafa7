"""H-SAE training loop and evaluation against computations written here: Adam (Kingma & Ba 2015, Algorithm 1) with
the warm-up/cosine schedule, global-norm clipping, decoder projection and renormalisation done by hand; the
loss-curve stride and progress cadence; ``evaluate`` over several chunks against a per-row computation."""

import dataclasses
import math

import numpy as np
import pytest

from service.estimators import sae_model, sae_train

BETA1, BETA2, EPSILON = 0.9, 0.999, 1e-8  # Adam's published defaults (Kingma & Ba 2015, Algorithm 1)


def _model(seed: int = 0, d: int = 6, n: int = 4, m: int = 3, s: int = 2) -> sae_model.HSAEWeights:
    rng = np.random.default_rng(seed)
    w = sae_model.init_weights(rng, d, n, m, s)
    for arr in w.arrays().values():
        arr += 0.3 * rng.standard_normal(arr.shape)  # untie, so every gradient term is generic
    w.D, w.D_c = _unit_columns(w.D, 0), _unit_columns(w.D_c, 1)
    return w


LOSS = sae_model.LossConfig(k=2, theta=1 / math.sqrt(6), l1=0.05, top_weight=0.1, xortho_weight=0.5)


def _data(seed: int = 1, rows: int = 40) -> np.ndarray:
    return 1.5 * np.random.default_rng(seed).standard_normal((rows, 6))


def _unit_columns(arr: np.ndarray, axis: int) -> np.ndarray:
    """Each column (vector along ``axis``) divided by its own Euclidean norm, one column at a time."""
    out = np.array(arr, dtype=float)
    moved = np.moveaxis(out, axis, -1)
    for idx in np.ndindex(moved.shape[:-1]):
        moved[idx] = moved[idx] / math.sqrt(sum(v * v for v in moved[idx]))
    return out


def _project(grad: np.ndarray, dec: np.ndarray, axis: int) -> np.ndarray:
    """g − (g·d̂)d̂ for every decoder column d (the columns lie along ``axis``), one column at a time."""
    out = np.array(grad, dtype=float)
    unit = np.moveaxis(_unit_columns(dec, axis), axis, -1)
    moved = np.moveaxis(out, axis, -1)
    for idx in np.ndindex(moved.shape[:-1]):
        moved[idx] = moved[idx] - float(np.dot(moved[idx], unit[idx])) * unit[idx]
    return out


def _schedule(step: int, steps: int, warmup: int, lr: float) -> float:
    """Linear warm-up to ``lr`` over ``warmup`` steps, then half a cosine period down to 0 at ``steps``."""
    if step < warmup:
        return lr * step / warmup
    return lr * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup))) / 2


def _reference_train(
    w: sae_model.HSAEWeights, x: np.ndarray, cfg: sae_train.TrainConfig, seed: int
) -> tuple[sae_model.HSAEWeights, list[dict[str, float]], list[float]]:
    """The training loop written out from the equations; returns weights, curve and the gradient norms (unclipped)."""
    w = w.copy()
    rng = np.random.default_rng(seed)
    moment1 = {name: np.zeros(arr.shape) for name, arr in w.arrays().items()}
    moment2 = {name: np.zeros(arr.shape) for name, arr in w.arrays().items()}
    curve, norms = [], []
    for step in range(cfg.steps):
        ramp = min(1.0, step / cfg.warmup_steps) if cfg.warmup_steps else 1.0
        loss = dataclasses.replace(cfg.loss, l1=cfg.loss.l1 * ramp, xortho_weight=cfg.loss.xortho_weight * ramp)
        xb = x[rng.integers(0, x.shape[0], size=cfg.batch)]
        f = sae_model.forward(w, xb, loss.k, loss.theta)
        curve.append({"step": step, **sae_model.loss_terms(w, xb, f, loss)})
        g = sae_model.gradients(w, xb, f, loss).arrays()
        g["D"] = _project(g["D"], w.D, 0)
        g["D_c"] = _project(g["D_c"], w.D_c, 1)
        norm = math.sqrt(sum(float(v) ** 2 for arr in g.values() for v in arr.ravel()))
        factor = min(1.0, cfg.grad_clip / norm) if cfg.grad_clip is not None else 1.0
        norms.append(norm)
        t = step + 1
        alpha = _schedule(step, cfg.steps, cfg.warmup_steps, cfg.lr)
        for name in moment1:
            grad = g[name] * factor
            moment1[name] = BETA1 * moment1[name] + (1 - BETA1) * grad
            moment2[name] = BETA2 * moment2[name] + (1 - BETA2) * grad * grad
            m_hat = moment1[name] / (1 - BETA1**t)
            v_hat = moment2[name] / (1 - BETA2**t)
            setattr(w, name, getattr(w, name) - alpha * m_hat / (np.sqrt(v_hat) + EPSILON))
        w.D = _unit_columns(w.D, 0)
        w.D_c = _unit_columns(w.D_c, 1)
    return w, curve, norms


def test_first_adam_step_is_lr_times_the_gradient_sign():
    """At t = 1 the bias corrections give m̂ = g and v̂ = g², so θ₁ = θ₀ − α·g/(|g| + ε) for the parameters that are
    not renormalised; D and D_c take that step along their projected gradient and are then rescaled to unit columns."""
    w0, x = _model(), _data()
    cfg = sae_train.TrainConfig(steps=1, batch=8, lr=0.01, warmup_steps=0, grad_clip=None, loss=LOSS)
    w1, _ = sae_train.train(w0, x, cfg, np.random.default_rng(7), lambda _: None)
    xb = x[np.random.default_rng(7).integers(0, x.shape[0], size=8)]
    g = sae_model.gradients(w0, xb, sae_model.forward(w0, xb, LOSS.k, LOSS.theta), LOSS)
    for name in ("E", "W_down", "W_up", "E_c"):
        grad = getattr(g, name)
        step = getattr(w0, name) - getattr(w1, name)
        np.testing.assert_allclose(step, 0.01 * grad / (np.abs(grad) + EPSILON), rtol=1e-12, atol=1e-18)
        assert not np.allclose(step, 0.01 * np.sign(grad), rtol=1e-12, atol=0), name  # ε is resolved at 1e-12
    gd, gc = _project(g.D, w0.D, 0), _project(g.D_c, w0.D_c, 1)
    np.testing.assert_allclose(w1.D, _unit_columns(w0.D - 0.01 * gd / (np.abs(gd) + EPSILON), 0), rtol=1e-12)
    np.testing.assert_allclose(w1.D_c, _unit_columns(w0.D_c - 0.01 * gc / (np.abs(gc) + EPSILON), 1), rtol=1e-12)


@pytest.mark.parametrize(("warmup", "clipped"), [(0, False), (3, False), (0, True), (3, True)])
def test_training_steps_match_adam_written_from_the_paper(warmup, clipped):
    """Eight steps of ``train`` equal the loop written from the equations (same batches), weights to 1e-9 relative;
    the clip threshold is the median gradient norm of the unclipped run, so some steps are clipped and some not."""
    w0, x = _model(), _data()
    cfg = sae_train.TrainConfig(steps=8, batch=8, lr=0.02, warmup_steps=warmup, grad_clip=None, loss=LOSS)
    if clipped:
        cfg = dataclasses.replace(cfg, grad_clip=float(np.median(_reference_train(w0, x, cfg, 3)[2])))
    want, want_curve, norms = _reference_train(w0, x, cfg, 3)
    if clipped:
        assert min(norms) < cfg.grad_clip < 0.9 * max(norms)  # both branches of the clip, by varied factors
    got, curve = sae_train.train(w0, x, cfg, np.random.default_rng(3), lambda _: None)
    for name, arr in want.arrays().items():
        np.testing.assert_allclose(getattr(got, name), arr, rtol=1e-9, atol=1e-12, err_msg=name)
    assert [p["step"] for p in curve] == list(range(8))
    for point, ref in zip(curve, want_curve, strict=True):
        assert point == pytest.approx(ref, rel=1e-9, abs=1e-15)
    assert np.abs(want.E - w0.E).max() > 1e-3  # the run moved the weights


@pytest.mark.parametrize(("steps", "warmup"), [(11, 10), (2, 1), (1, 0), (40, 7)])
def test_learning_rate_reaches_zero_at_the_last_step_count(steps, warmup):
    """The cosine half-period spans ``steps − warmup``: lr at ``warmup`` is the peak and lr at ``steps`` is 0, also
    when the span is a single step."""
    cfg = sae_train.TrainConfig(steps=steps, batch=1, lr=0.3, warmup_steps=warmup, grad_clip=None, loss=LOSS)
    assert sae_train.learning_rate(warmup, cfg) == pytest.approx(0.3, abs=1e-15)
    assert sae_train.learning_rate(steps, cfg) == pytest.approx(0.0, abs=1e-15)
    assert [sae_train.learning_rate(t, cfg) for t in range(steps + 1)] == pytest.approx(
        [_schedule(t, steps, warmup, 0.3) for t in range(steps + 1)], abs=1e-15
    )


def test_curve_stride_is_the_smallest_keeping_max_curve_minus_one_regular_points():
    """s = ⌈steps/(MAX_CURVE − 1)⌉ is the smallest stride with at most MAX_CURVE − 1 points at multiples of s, so the
    last step fits whatever the remainder; below MAX_CURVE steps every step is recorded."""
    for steps in range(1, 5001):
        every = sae_train.curve_stride(steps)
        assert len(range(0, steps, every)) <= sae_train.MAX_CURVE - 1
        assert every == 1 or len(range(0, steps, every - 1)) > sae_train.MAX_CURVE - 1, steps
    assert sae_train.curve_stride(sae_train.MAX_CURVE - 1) == 1


@pytest.mark.parametrize(("steps", "max_curve", "want"), [(10, 4, [0, 4, 8, 9]), (9, 4, [0, 3, 6, 8]),
                                                          (7, 4, [0, 3, 6]), (3, 4, [0, 1, 2])])  # fmt: skip
def test_curve_records_every_stride_and_the_last_step(monkeypatch, steps, max_curve, want):
    """With MAX_CURVE = 4 the stride is ⌈steps/3⌉; the last step is added once when the stride misses it."""
    monkeypatch.setattr(sae_train, "MAX_CURVE", max_curve)
    cfg = sae_train.TrainConfig(steps=steps, batch=4, lr=0.01, warmup_steps=0, grad_clip=None, loss=LOSS)
    _, curve = sae_train.train(_model(), _data(), cfg, np.random.default_rng(0), lambda _: None)
    assert [p["step"] for p in curve] == want


@pytest.mark.parametrize(("steps", "every"), [(5, 1), (99, 1), (201, 2)])
def test_progress_is_reported_every_hundredth_of_the_run(steps, every):
    """Progress step/steps at every max(1, ⌊steps/100⌋)-th step from 0: every step below 100 steps, about 100 reports
    above."""
    seen: list[float] = []
    cfg = sae_train.TrainConfig(steps=steps, batch=1, lr=0.01, warmup_steps=0, grad_clip=None, loss=LOSS)
    sae_train.train(_model(d=3, n=2, m=2, s=1), _data(rows=5)[:, :3], cfg, np.random.default_rng(0), seen.append)
    assert seen == [t / steps for t in range(0, steps, every)]


def _with_blind_child_encoder(w: sae_model.HSAEWeights) -> tuple[sae_model.HSAEWeights, np.ndarray]:
    """W_down,0 made blind to the last coordinate, and two rows: zero (nothing active, x̂ = 0) and one along that
    coordinate with parent 0 active, where W_down,0 x = 0 exactly, so parent 0's argmax child code is 0."""
    w = w.copy()
    w.W_down[0][:, -1] = 0.0
    sign = 1.0 if w.E[0, -1] > 0 else -1.0
    along = np.zeros(w.E.shape[1])
    along[-1] = sign * 3.0 / abs(w.E[0, -1]) / math.sqrt(w.E.shape[1])  # a₀ = 3θ
    return w, np.vstack([np.zeros(w.E.shape[1]), along])


def _reference_metrics(
    w: sae_model.HSAEWeights, x: np.ndarray, k: int, theta: float
) -> tuple[dict[str, float], np.ndarray, np.ndarray, int]:
    """The metrics row by row from one whole-array forward pass, and how many active parents kept a zero child code."""
    f = sae_model.forward(w, x, k, theta)
    n_parents, n_children = w.E_c.shape[:2]
    err = cos = l0_p = l0_c = 0.0
    parent_usage = np.zeros(n_parents, dtype=int)
    child_usage = np.zeros((n_parents, n_children), dtype=int)
    zero_kept = 0
    for r in range(x.shape[0]):
        diff = x[r] - f.x_hat[r]
        err += float(diff @ diff)
        norm = math.sqrt(float(x[r] @ x[r])) * math.sqrt(float(f.x_hat[r] @ f.x_hat[r]))
        cos += float(x[r] @ f.x_hat[r]) / norm if norm > 0 else 0.0
        for p in range(n_parents):
            if f.active[r, p]:
                l0_p += 1
                parent_usage[p] += 1
                child = f.best[p, r]
                if f.c[p, child, r] != 0:
                    l0_c += 1
                    child_usage[p, child] += 1
                else:
                    zero_kept += 1
    centred = x - x.sum(axis=0) / x.shape[0]
    total = float(np.sum(centred * centred))
    n = x.shape[0]
    metrics = {"mse": err / n, "fvu": err / total, "cos": cos / n, "l0_parents": l0_p / n, "l0_children": l0_c / n}
    return metrics, parent_usage, child_usage, zero_kept


@pytest.mark.parametrize("scale", [1.0, 0.01])
@pytest.mark.parametrize("chunk", [1, 7, 1024])
def test_evaluate_in_chunks_equals_the_row_by_row_metrics(monkeypatch, scale, chunk):
    """50 rows in chunks of 1, 7 (a partial last chunk) or one chunk: the same metrics as the per-row computation.

    Scaling x and θ together scales every code, so scale 0.01 gives ‖x‖‖x̂‖ < 1 and Σ‖x − x̄‖² < 1."""
    w, special = _with_blind_child_encoder(_model(4))
    theta = scale / math.sqrt(6)
    x = scale * np.vstack([_data(5, 48), special])
    want, parent_usage, child_usage, zero_kept = _reference_metrics(w, x, 3, theta)
    assert zero_kept > 0 and 0 < parent_usage.sum() < 3 * x.shape[0]
    monkeypatch.setattr(sae_train, "EVAL_CHUNK", chunk)
    ev = sae_train.evaluate(w, x, 3, theta)
    assert {name: getattr(ev, name) for name in want} == pytest.approx(want, rel=1e-12)
    assert ev.parent_usage.dtype == np.int64 and ev.child_usage.dtype == np.int64  # counts, not floats
    assert np.array_equal(ev.parent_usage, parent_usage) and np.array_equal(ev.child_usage, child_usage)
    if scale < 1:
        norms = np.linalg.norm(x, axis=1) * np.linalg.norm(sae_model.forward(w, x, 3, theta).x_hat, axis=1)
        assert np.any((norms > 0) & (norms < 1)) and np.sum((x - x.mean(axis=0)) ** 2) < 1
