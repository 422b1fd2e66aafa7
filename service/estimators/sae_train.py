"""Training and evaluation of the hierarchical SAE: Adam with warm-up and cosine decay, decoder-gradient projection
and column renormalisation after every step (as in the released H-SAE code), and SAEBench-style metrics."""

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from service.estimators.sae_model import HSAEWeights, LossConfig, forward, gradients, loss_terms

ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
MAX_CURVE = 1000
EVAL_CHUNK = 1024


@dataclass(frozen=True)
class TrainConfig:
    """Optimiser settings; ``grad_clip`` is a global-norm clip (None: off)."""

    steps: int
    batch: int
    lr: float
    warmup_steps: int
    grad_clip: float | None
    loss: LossConfig


def learning_rate(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up from 0 to ``lr`` over ``warmup_steps``, then cosine decay to 0 at ``steps``."""
    if step < cfg.warmup_steps:
        return cfg.lr * step / cfg.warmup_steps
    span = max(1, cfg.steps - cfg.warmup_steps)
    return cfg.lr * 0.5 * (1.0 + math.cos(math.pi * (step - cfg.warmup_steps) / span))


def project_decoder_gradients(w: HSAEWeights, g: HSAEWeights) -> None:
    """Remove from each decoder column's gradient its component along that column (D and every D_c), in place."""
    dn = w.D / np.linalg.norm(w.D, axis=0, keepdims=True)
    g.D -= dn * np.sum(g.D * dn, axis=0, keepdims=True)
    cn = w.D_c / np.linalg.norm(w.D_c, axis=1, keepdims=True)
    g.D_c -= cn * np.sum(g.D_c * cn, axis=1, keepdims=True)


def normalise_decoders(w: HSAEWeights) -> None:
    """Scale the columns of D and of every D_c to unit norm, in place."""
    w.D /= np.linalg.norm(w.D, axis=0, keepdims=True)
    w.D_c /= np.linalg.norm(w.D_c, axis=1, keepdims=True)


def curve_stride(steps: int) -> int:
    """Record every this many steps: with the last step added, at most ``MAX_CURVE`` points."""
    return max(1, math.ceil(steps / (MAX_CURVE - 1)))


def train(
    w: HSAEWeights,
    x: np.ndarray,
    cfg: TrainConfig,
    rng: np.random.Generator,
    progress: Callable[[float], None],
) -> tuple[HSAEWeights, list[dict[str, float]]]:
    """Train a copy of ``w`` on rows of ``x`` drawn with replacement (``batch`` per step, from ``rng``).

    The l1 and XOrtho weights ramp up linearly with the warm-up (as in the released code). Returns the trained
    weights and the loss curve of the sampled batches at ≤ 1000 evenly spaced steps (loss before the update)."""
    w = w.copy()
    names = list(w.arrays())
    m1 = {n: np.zeros_like(a) for n, a in w.arrays().items()}
    m2 = {n: np.zeros_like(a) for n, a in w.arrays().items()}
    b1, b2 = ADAM_BETAS
    every = curve_stride(cfg.steps)
    report = max(1, cfg.steps // 100)
    curve: list[dict[str, float]] = []
    for step in range(cfg.steps):
        ramp = min(1.0, step / cfg.warmup_steps) if cfg.warmup_steps else 1.0
        loss_cfg = replace(cfg.loss, l1=cfg.loss.l1 * ramp, xortho_weight=cfg.loss.xortho_weight * ramp)
        xb = x[rng.integers(0, x.shape[0], size=cfg.batch)]
        f = forward(w, xb, loss_cfg.k, loss_cfg.theta)
        if step % every == 0 or step == cfg.steps - 1:
            curve.append({"step": step, **loss_terms(w, xb, f, loss_cfg)})
        g = gradients(w, xb, f, loss_cfg)
        project_decoder_gradients(w, g)
        grads = g.arrays()
        if cfg.grad_clip is not None:
            norm = math.sqrt(sum(float(np.sum(a * a)) for a in grads.values()))
            if norm > cfg.grad_clip:
                grads = {n: a * (cfg.grad_clip / norm) for n, a in grads.items()}
        lr = learning_rate(step, cfg)
        c1, c2 = 1.0 - b1 ** (step + 1), 1.0 - b2 ** (step + 1)
        for n in names:
            m1[n] = b1 * m1[n] + (1.0 - b1) * grads[n]
            m2[n] = b2 * m2[n] + (1.0 - b2) * grads[n] ** 2
            getattr(w, n)[...] -= lr * (m1[n] / c1) / (np.sqrt(m2[n] / c2) + ADAM_EPS)
        normalise_decoders(w)
        if step % report == 0:
            progress(step / cfg.steps)
    return w, curve


@dataclass(frozen=True)
class Evaluation:
    """Metrics over a data set: MSE, FVU, mean cosine, L0 and usage counts."""

    mse: float
    fvu: float
    cos: float
    l0_parents: float
    l0_children: float
    parent_usage: np.ndarray
    child_usage: np.ndarray


def evaluate(w: HSAEWeights, x: np.ndarray, k: int, theta: float) -> Evaluation:
    """MSE = mean‖x − x̂‖², FVU = Σ‖x − x̂‖²/Σ‖x − x̄‖², mean cos(x, x̂) (0 where either is 0), L0 of active
    parents and of non-zero kept children per row, and how often each parent / (parent, child) was used."""
    n_parents, n_children = w.E_c.shape[:2]
    sq_err = 0.0
    cos_sum = 0.0
    l0_p = 0
    l0_c = 0
    parent_usage = np.zeros(n_parents, dtype=np.int64)
    child_usage = np.zeros((n_parents, n_children), dtype=np.int64)
    for start in range(0, x.shape[0], EVAL_CHUNK):
        xb = x[start : start + EVAL_CHUNK]
        f = forward(w, xb, k, theta)
        sq_err += float(np.sum((xb - f.x_hat) ** 2))
        norms = np.linalg.norm(xb, axis=1) * np.linalg.norm(f.x_hat, axis=1)
        dots = np.sum(xb * f.x_hat, axis=1)
        cos_sum += float(np.sum(np.divide(dots, norms, out=np.zeros_like(norms), where=norms > 0)))
        kept = np.take_along_axis(f.c, f.best[:, None, :], axis=1)[:, 0, :] != 0
        used = f.active.T & kept
        l0_p += int(f.active.sum())
        l0_c += int(used.sum())
        parent_usage += f.active.sum(axis=0)
        flat = (np.arange(n_parents)[:, None] * n_children + f.best)[used]
        child_usage += np.bincount(flat, minlength=n_parents * n_children).reshape(n_parents, n_children)
    total = float(np.sum((x - x.mean(axis=0)) ** 2))
    n = x.shape[0]
    return Evaluation(
        mse=sq_err / n,
        fvu=sq_err / total if total > 0 else math.inf,
        cos=cos_sum / n,
        l0_parents=l0_p / n,
        l0_children=l0_c / n,
        parent_usage=parent_usage,
        child_usage=child_usage,
    )
