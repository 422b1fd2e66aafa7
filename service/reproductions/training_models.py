"""Online training of small deep networks by backpropagation and by predictive coding on a teacher, written with numpy
apart from the estimators: the loss trajectories and trained weights of the predictive-coding trajectory check."""

from dataclasses import dataclass
from itertools import pairwise

import numpy as np

DIMS = (20, 8, 8, 8, 5)
"""Input 20, three hidden layers of 8, output 5 (four weight layers)."""
DIVERGED = 1e6
"""A weight beyond this size (or not finite) stops the run: its remaining losses count as infinite."""
RELAXED = 1e-4
"""PC's relaxation in the tanh network stops once every component of ∂F/∂x is below this."""


@dataclass(frozen=True)
class Trajectory:
    """Test losses ½‖y − f(x)‖² (mean over the test set) after every ``every`` samples, from step 0 (infinite once the
    run diverged), and the weights at those points."""

    losses: list[float]
    weights: list[list[np.ndarray]]


def _phi(z: np.ndarray, nonlinear: bool) -> np.ndarray:
    return np.tanh(z) if nonlinear else z


def _dphi(z: np.ndarray, nonlinear: bool) -> np.ndarray:
    return 1.0 - np.tanh(z) ** 2 if nonlinear else np.ones_like(z)


def forward(weights: list[np.ndarray], x: np.ndarray, nonlinear: bool) -> list[np.ndarray]:
    """Pre-activations a_0 = x, a_l = W_l φ(a_{l−1}) with φ = tanh between hidden layers (identity on the input, and
    everywhere in the linear network); x holds one sample per column."""
    acts = [x]
    for i, w in enumerate(weights):
        prev = acts[-1] if i == 0 else _phi(acts[-1], nonlinear)
        acts.append(w @ prev)
    return acts


def _bp_update(weights: list[np.ndarray], x: np.ndarray, y: np.ndarray, nonlinear: bool) -> list[np.ndarray]:
    """−∂/∂W_l of ½‖y − f(x)‖² for one sample (the chain rule)."""
    acts = forward(weights, x, nonlinear)
    delta = y - acts[-1]
    out = [np.zeros(0)] * len(weights)
    for i in range(len(weights) - 1, -1, -1):
        prev = acts[i] if i == 0 else _phi(acts[i], nonlinear)
        out[i] = np.outer(delta, prev)
        if i > 0:
            delta = (weights[i].T @ delta) * _dphi(acts[i], nonlinear)
    return out


def _linear_equilibrium(weights: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """The exact minimiser of F for a linear network: ε_L = S⁻¹e, ε_l = U_lᵀε_L with U_l = W_L ⋯ W_{l+1} and
    S = Σ_l U_l U_lᵀ (F's stationarity conditions ε_l = W_{l+1}ᵀε_{l+1} with Σ_l U_l ε_l = e), then
    x_l = W_l x_{l−1} + ε_l."""
    us = [np.eye(weights[-1].shape[0])]
    for w in weights[:0:-1]:
        us.append(us[-1] @ w)
    us = us[::-1]
    acts = forward(weights, x, False)
    top = np.linalg.solve(sum(u @ u.T for u in us), y - acts[-1])
    xs = [x]
    for w, u in zip(weights[:-1], us[:-1], strict=True):
        xs.append(w @ xs[-1] + u.T @ top)
    return [*xs, y]


def _pc_update(
    weights: list[np.ndarray], x: np.ndarray, y: np.ndarray, nonlinear: bool, steps: int, gamma: float
) -> list[np.ndarray]:
    """ε_l φ(x_{l−1})ᵀ at the relaxed activities of F = ½ Σ_l ‖x_l − W_l φ(x_{l−1})‖² (x_0 = x and x_L = y clamped):
    exact for the linear network, else gradient steps x_l ← x_l − γ ∂F/∂x_l on the hidden layers from their
    feed-forward values until every |∂F/∂x| is below ``RELAXED`` (at most ``steps``)."""
    if not nonlinear:
        xs = _linear_equilibrium(weights, x, y)
        return [np.outer(xs[i + 1] - w @ xs[i], xs[i]) for i, w in enumerate(weights)]
    xs = forward(weights, x, nonlinear)
    xs[-1] = y

    def inputs(i: int) -> np.ndarray:
        return xs[i] if i == 0 else _phi(xs[i], True)

    for _ in range(steps):
        errs = [xs[i + 1] - w @ inputs(i) for i, w in enumerate(weights)]
        grads = [errs[i - 1] - _dphi(xs[i], True) * (weights[i].T @ errs[i]) for i in range(1, len(weights))]
        if max(np.abs(g).max() for g in grads) < RELAXED:
            break
        for i, g in enumerate(grads, start=1):
            xs[i] = xs[i] - gamma * g
    errs = [xs[i + 1] - w @ inputs(i) for i, w in enumerate(weights)]
    return [np.outer(e, inputs(i)) for i, e in enumerate(errs)]


def train(
    method: str,
    nonlinear: bool,
    lr: float,
    samples: int,
    seed: int,
    every: int = 25,
    inference_steps: int = 500,
    gamma: float = 0.2,
    n_test: int = 500,
) -> Trajectory:
    """One sample per update, ``samples`` updates: a teacher of the student's shape (weights N(0, 1/fan_in), seed
    ``seed``), the student drawn from the same generator, x ~ N(0, I) and y the teacher's output."""
    rng = np.random.default_rng(seed)
    teacher = [rng.standard_normal((o, i)) / np.sqrt(i) for i, o in pairwise(DIMS)]
    student = [rng.standard_normal((o, i)) / np.sqrt(i) for i, o in pairwise(DIMS)]
    x_test = rng.standard_normal((DIMS[0], n_test))
    y_test = forward(teacher, x_test, nonlinear)[-1]
    xs = rng.standard_normal((samples, DIMS[0]))

    def loss() -> float:
        return float(0.5 * ((y_test - forward(student, x_test, nonlinear)[-1]) ** 2).sum(axis=0).mean())

    losses, kept = [loss()], [[w.copy() for w in student]]
    for t, x in enumerate(xs, start=1):
        y = forward(teacher, x, nonlinear)[-1]
        if method == "bp":
            update = _bp_update(student, x, y, nonlinear)
        else:
            update = _pc_update(student, x, y, nonlinear, inference_steps, gamma)
        student = [w + lr * u for w, u in zip(student, update, strict=True)]
        if not all(np.isfinite(w).all() and np.abs(w).max() < DIVERGED for w in student):
            losses += [float("inf")] * (samples // every - len(losses) + 1)
            break
        if t % every == 0:
            losses.append(loss())
            kept.append([w.copy() for w in student])
    return Trajectory(losses, kept)


def best_rate(
    method: str, nonlinear: bool, lrs: list[float], samples: int, seeds: list[int]
) -> tuple[float, list[float], dict[float, float]]:
    """The rate of ``lrs`` with the lowest mean (over ``seeds``) area under the test-loss curve (the mean of its
    points; a diverged run counts as infinite), the per-seed areas at that rate and the mean area of every rate."""
    areas = {}
    per_seed = {}
    with np.errstate(over="ignore", invalid="ignore"):
        for lr in lrs:
            runs = [np.mean(train(method, nonlinear, lr, samples, seed).losses) for seed in seeds]
            per_seed[lr] = [float(a) if np.isfinite(a) else float("inf") for a in runs]
            areas[lr] = float(np.mean(per_seed[lr]))
    best = min(lrs, key=areas.__getitem__)
    return best, per_seed[best], areas
