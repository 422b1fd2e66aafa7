"""Small numpy settings that the internals checks run on, built without the estimators they judge: a trained network
whose activation gradients feed the steering check, and a leaky-integrator dialogue state for the lag check."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SteeringNet:
    """x → a = W0 x (the steered layer, width d) → h = tanh(W1 a + b1) → p = σ(w2·h + b2), trained on trait labels."""

    w0: np.ndarray
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: float

    def forward(self, x: np.ndarray, shift: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Activations a (steered: a + shift), hidden h and trait probability p for the rows of x."""
        a = x @ self.w0.T + shift
        h = np.tanh(a @ self.w1.T + self.b1)
        p = 1.0 / (1.0 + np.exp(-(h @ self.w2 + self.b2)))
        return a, h, p

    def activation_gradients(self, x: np.ndarray, y: np.ndarray, shift: np.ndarray) -> np.ndarray:
        """Per-example ∂L/∂a of the cross-entropy L = −y log p − (1 − y) log(1 − p) at the steered activations:
        W1ᵀ((p − y) w2 ⊙ (1 − h²)) by the chain rule."""
        _, h, p = self.forward(x, shift)
        return ((p - y)[:, None] * self.w2[None, :] * (1.0 - h**2)) @ self.w1


def teacher_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """x ~ N(0, I_10) and trait labels y = 1[tanh(x₀ + x₁) + 0.5 x₂ x₃ + 0.3 ξ > 0] (a non-linear teacher)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 10))
    y = (np.tanh(x[:, 0] + x[:, 1]) + 0.5 * x[:, 2] * x[:, 3] + 0.3 * rng.standard_normal(n) > 0).astype(float)
    return x, y


def train_steering_net(seed: int, steps: int = 400, width: int = 16, hidden: int = 32) -> SteeringNet:
    """Full-batch gradient descent (step 0.5) on the mean cross-entropy of 1000 teacher examples."""
    rng = np.random.default_rng(seed)
    x, y = teacher_data(1000, seed + 1)
    w0 = rng.standard_normal((width, 10)) / np.sqrt(10)
    w1 = rng.standard_normal((hidden, width)) / np.sqrt(width)
    b1 = np.zeros(hidden)
    w2 = rng.standard_normal(hidden) / np.sqrt(hidden)
    b2 = 0.0
    n = len(y)
    for _ in range(steps):
        a = x @ w0.T
        h = np.tanh(a @ w1.T + b1)
        p = 1.0 / (1.0 + np.exp(-(h @ w2 + b2)))
        d_logit = (p - y) / n
        d_h = d_logit[:, None] * w2[None, :] * (1.0 - h**2)
        d_a = d_h @ w1
        w2 = w2 - 0.5 * (h.T @ d_logit)
        b2 = b2 - 0.5 * float(d_logit.sum())
        w1 = w1 - 0.5 * (d_h.T @ a)
        b1 = b1 - 0.5 * d_h.sum(axis=0)
        w0 = w0 - 0.5 * (d_a.T @ x)
    return SteeringNet(w0, w1, b1, w2, b2)


def persona_direction(net: SteeringNet, x: np.ndarray) -> np.ndarray:
    """v = mean a over rows the network calls trait-positive (p > ½) − mean a over the others (its activations)."""
    a, _, p = net.forward(x, np.zeros(net.w0.shape[0]))
    return a[p > 0.5].mean(axis=0) - a[p <= 0.5].mean(axis=0)


def leaky_dialogues(
    kappa: float, alpha: float, onset: int, frames: int, dim: int, noise: float, dialogues: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hidden states h_t = μ_G + z_t (μ_P − μ_G) + α(μ_P − μ_G)·1[t ≥ onset] + noise·ξ_t of dialogues whose state z
    relaxes towards the perceptive state after the onset, z_{t+1} = z_t + κ(1 − z_t) (z = 0 up to the onset), with
    activation steering α along the state axis from the onset. Returns (states (dialogues, frames, dim), μ_G, μ_P)."""
    rng = np.random.default_rng(seed)
    mu_g, mu_p = rng.standard_normal(dim), rng.standard_normal(dim)
    t = np.arange(frames)
    z = np.where(t >= onset, 1.0 - (1.0 - kappa) ** np.maximum(t - onset, 0), 0.0) + alpha * (t >= onset)
    states = mu_g + z[None, :, None] * (mu_p - mu_g) + noise * rng.standard_normal((dialogues, frames, dim))
    return states, mu_g, mu_p


def flat_topk_sae(
    x_train: np.ndarray, x_test: np.ndarray, width: int, k: int, steps: int, batch: int, seed: int
) -> dict[str, np.ndarray | float]:
    """A standard (flat) top-k SAE: z = TopK_k(ReLU(W_e(x − b_d) + b_e)), x̂ = D z + b_d, unit-norm decoder columns,
    trained by Adam (lr 5e-3, β = (0.9, 0.999)) on the mean squared error. Returns the decoder (d, width) and the
    test fraction of variance unexplained Σ‖x − x̂‖²/Σ‖x − x̄‖²."""
    rng = np.random.default_rng(seed)
    dim = x_train.shape[1]
    dec = rng.standard_normal((dim, width))
    dec /= np.linalg.norm(dec, axis=0)
    params = {"enc": dec.T.copy(), "b_e": np.zeros(width), "dec": dec, "b_d": x_train.mean(axis=0)}
    moments = {name: (np.zeros_like(p), np.zeros_like(p)) for name, p in params.items()}

    def encode(x: np.ndarray) -> np.ndarray:
        pre = np.maximum((x - params["b_d"]) @ params["enc"].T + params["b_e"], 0.0)
        keep = np.argpartition(-pre, k - 1, axis=1)[:, :k]
        z = np.zeros_like(pre)
        np.put_along_axis(z, keep, np.take_along_axis(pre, keep, axis=1), axis=1)
        return z

    for step in range(1, steps + 1):
        xb = x_train[rng.integers(0, x_train.shape[0], batch)]
        z = encode(xb)
        err = z @ params["dec"].T + params["b_d"] - xb
        d_out = 2.0 * err / batch
        d_z = (d_out @ params["dec"]) * (z > 0)
        grads = {
            "dec": d_out.T @ z,
            "b_d": d_out.sum(axis=0) - (d_z @ params["enc"]).sum(axis=0),
            "enc": d_z.T @ (xb - params["b_d"]),
            "b_e": d_z.sum(axis=0),
        }
        for name, g in grads.items():
            m, v = moments[name]
            m[...] = 0.9 * m + 0.1 * g
            v[...] = 0.999 * v + 0.001 * g**2
            params[name] -= 5e-3 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
        params["dec"] /= np.linalg.norm(params["dec"], axis=0)
    recon = encode(x_test) @ params["dec"].T + params["b_d"]
    fvu = float(np.sum((x_test - recon) ** 2) / np.sum((x_test - x_test.mean(axis=0)) ** 2))
    return {"decoder": params["dec"], "fvu": fvu}
