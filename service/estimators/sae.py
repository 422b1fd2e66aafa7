"""Hierarchical sparse autoencoder estimators: ``sae.hierarchical_train`` and ``sae.hierarchical_recovery``.

Muchane, Richardson, Park & Veitch, "Incorporating Hierarchical Semantics in Sparse Autoencoder Architectures"
(arXiv 2506.01197). ``sae.hierarchical_train`` fits the H-SAE of :mod:`service.estimators.sae_model` to uploaded
activations with :mod:`service.estimators.sae_train` and returns its metrics; the trained weights travel beside the
JSON result (:meth:`HierarchicalTrainResult.artifact_blobs`, one deterministic npz per artifact name) for the
use-case layer to store. ``sae.hierarchical_recovery`` trains on planted-hierarchy data
(:mod:`service.estimators.sae_planted`) and scores recovery against the random initialisation. User
documentation: docs/sae.md.
"""

import io
import math
import zipfile
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, PrivateAttr

from service.errors import Degenerate, InvalidInput
from service.estimators.sae_model import HSAEWeights, LossConfig, decoder_macs, encoder_macs, init_weights
from service.estimators.sae_planted import planted_hierarchy, recovery, sample_planted
from service.estimators.sae_train import Evaluation, TrainConfig, evaluate, train
from service.estimators.steering_metrics import as_stack
from service.plot_overlay import Curve, Curves
from service.registry import EstimatorSpec, Progress, register
from service.types import ResultModel, Seed, StrictModel, array_param

PAPER = "Incorporating Hierarchical Semantics in Sparse Autoencoder Architectures"
CITATION = (
    "Mark Muchane, Sean Richardson, Kiho Park, Victor Veitch. Incorporating Hierarchical Semantics in Sparse "
    "Autoencoder Architectures. arXiv:2506.01197, 2025."
)
MAX_DATA = 2_000_000
MAX_DIM = 1024
MAX_PARAMS = 5_000_000
STEP_OVERHEAD = 500_000
"""Fixed cost of one training step in MACs (measured 0.35 ms of numpy calls for the smallest model)."""
ARTIFACT_DTYPE = np.float32

Float = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-1e9, le=1e9)]
Amplitude = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0.0, le=1e3)]


class ModelSettings(StrictModel):
    """H-SAE size, loss and optimiser settings shared by both estimators."""

    n_parents: int = Field(12, ge=1, le=256, description="N, parent latents (default 12).")
    n_children: int = Field(8, ge=1, le=32, description="m, children per parent (default 8).")
    subspace: int = Field(3, ge=1, le=16, description="s, rank of each parent's child subspace, ≤ d (default 3).")
    k: int = Field(3, ge=1, le=256, description="Top-k active parents per input, ≤ N (default 3).")
    steps: int = Field(1500, ge=1, le=5000, description="Adam steps (default 1500).")
    batch: int = Field(256, ge=1, le=1024, description="Rows per step, drawn with replacement (default 256).")
    lr: float = Field(5e-3, gt=0.0, le=1.0, allow_inf_nan=False, description="Peak Adam learning rate (5e-3).")
    warmup_steps: int = Field(
        0, ge=0, le=5000, description="Linear warm-up of the learning rate and of λ, μ (default 0: none)."
    )
    l1: float = Field(1e-3, ge=0.0, le=10.0, allow_inf_nan=False, description="λ, L1 weight on z and c (1e-3).")
    top_weight: float = Field(
        0.1, ge=0.0, le=10.0, allow_inf_nan=False, description="Weight of the top-level-only loss (0.1)."
    )
    xortho_weight: float = Field(0.1, ge=0.0, le=10.0, allow_inf_nan=False, description="μ, XOrtho weight (0.1).")
    xortho_variant: Literal["off_diagonal", "repo"] = Field(
        "off_diagonal",
        description="'off_diagonal': ‖D̂ᵀÊᵀ with zeroed diagonal‖_F/(N² − N) (default); 'repo': the released "
        "code's broadcast M_ij = (D̂ᵀÊᵀ)_ij − (D̂ᵀÊᵀ)_jj.",
    )
    theta: float | None = Field(
        None, ge=0.0, le=1e3, allow_inf_nan=False, description="Activation threshold θ (default 1/√d)."
    )
    grad_clip: float | None = Field(
        None, gt=0.0, le=1e6, allow_inf_nan=False, description="Global gradient-norm clip (default none)."
    )
    seed: Seed = 0


class HierarchicalTrainParams(ModelSettings):
    """Parameters of ``sae.hierarchical_train``."""

    x: array_param(list[Float], "float", ndim=2, ge=-1e9, le=1e9) = Field(  # type: ignore[valid-type]
        description='Training activations (n, d): d ≤ 1024, n·d ≤ 2e6. A JSON list of rows or {"array": "sha256:…"}.'
    )
    x_eval: array_param(list[Float], "float", ndim=2, ge=-1e9, le=1e9) | None = Field(  # type: ignore[valid-type]
        None, description="Held-out activations (n', d); default: a seeded eval_fraction of x."
    )
    eval_fraction: float = Field(
        0.1,
        ge=0.0,
        le=0.5,
        allow_inf_nan=False,
        description="Share of x held out when x_eval is absent (0.1; no hold-out when it rounds to < 2 rows).",
    )


class Metrics(ResultModel):
    """SAEBench-style metrics over one data set."""

    n: int = Field(description="Rows evaluated.")
    mse: float = Field(description="mean‖x − x̂‖².")
    fvu: float = Field(description="Σ‖x − x̂‖² / Σ‖x − x̄‖².")
    explained_variance: float = Field(description="1 − FVU.")
    cos: float = Field(description="Mean cos(x, x̂) (0 for rows where x or x̂ is 0).")
    l0_parents: float = Field(description="Mean active parents per row (top-k with z > 0).")
    l0_children: float = Field(description="Mean kept (argmax, non-zero) children per row.")
    l0_total: float = Field(description="l0_parents + l0_children.")


class Flops(ResultModel):
    """Multiply-accumulates per input."""

    encoder_macs: int = Field(description="H-SAE encoder: N·d + k(s·d + m·s).")
    flat_encoder_macs: int = Field(description="Flat SAE with the same N(1 + m) atoms: N(1 + m)·d.")
    encoder_saving: float = Field(description="flat_encoder_macs / encoder_macs.")
    decoder_macs: int = Field(description="H-SAE decoder: k·d + k(s·m + d·s).")


class LossPoint(ResultModel):
    """Loss of the sampled batch at one step (before its update)."""

    step: int
    loss: float
    mse: float
    l1: float
    xortho: float
    mse_top: float


class ArtifactInfo(ResultModel):
    """An artifact stored beside the run."""

    name: str = Field(description="Artifact name (download path segment).")
    media_type: str = Field(description="Media type of the stored bytes.")
    arrays: dict[str, list[int]] = Field(description="Array name → shape inside the npz.")
    dtype: str = Field(description="Element type of the weight arrays.")


class HierarchicalTrainResult(ResultModel):
    """Metrics of the trained H-SAE; weights in :meth:`artifact_blobs`, not in the JSON."""

    d: int = Field(description="Input dimension.")
    theta: float = Field(description="Threshold θ used.")
    n_train: int = Field(description="Training rows.")
    train: Metrics = Field(description="Metrics on the training rows.")
    held_out: Metrics | None = Field(description="Metrics on the held-out rows; null when none.")
    dead_parents: int = Field(description="Parents never active on the training rows.")
    dead_children: int = Field(description="(parent, child) pairs never the kept argmax child on the training rows.")
    parent_usage: list[int] = Field(description="Rows in which each parent is active (training rows).")
    child_usage: list[list[int]] = Field(description="Per parent, rows in which each child was kept (N × m).")
    loss_curve: list[LossPoint] = Field(description="Batch loss at ≤ 1000 evenly spaced steps.")
    flops: Flops
    artifacts: list[ArtifactInfo] = Field(description="Artifacts stored with the run.")
    reconstructed: list[str] = Field(description="Fields resting on reconstructed definitions.")

    _blobs: dict[str, bytes] = PrivateAttr(default_factory=dict)

    def artifact_blobs(self) -> dict[str, bytes]:
        """Artifact name → npz bytes, for the use-case layer to store (empty once the result went through JSON)."""
        return dict(self._blobs)


class HierarchicalRecoveryParams(ModelSettings):
    """Parameters of ``sae.hierarchical_recovery``: planted data, then the model settings."""

    d: int = Field(64, ge=2, le=MAX_DIM, description="Ambient dimension (default 64).")
    true_parents: int = Field(8, ge=1, le=256, description="P, planted parent directions (default 8).")
    true_children: int = Field(4, ge=2, le=32, description="C, children per planted parent; P·C ≤ d (default 4).")
    p_active: float = Field(0.2, gt=0.0, le=1.0, allow_inf_nan=False, description="P(parent on) (default 0.2).")
    parent_amplitude: tuple[Amplitude, Amplitude] = Field(
        (1.0, 2.0), description="Uniform range of a parent's amplitude (default [1, 2])."
    )
    child_amplitude: tuple[Amplitude, Amplitude] = Field(
        (0.5, 1.5), description="Uniform range of the chosen child's amplitude (default [0.5, 1.5])."
    )
    noise: float = Field(0.02, ge=0.0, le=10.0, allow_inf_nan=False, description="Noise sd per coordinate (0.02).")
    n_train: int = Field(
        10_000, ge=2, le=100_000, description="Training samples (default 10,000); (n_train + n_test)·d ≤ 2e6."
    )
    n_test: int = Field(2_000, ge=2, le=100_000, description="Test samples (default 2,000).")


class RecoveryScores(ResultModel):
    """How well one model's atoms match the planted hierarchy."""

    parent_mean_cos: float = Field(description="Mean over true parents of the max cosine to a decoder column.")
    parent_min_cos: float = Field(description="Smallest of those maxima.")
    unique_parent_matches: int = Field(description="Distinct decoder columns that are some true parent's best match.")
    child_mean_cos: float = Field(description="Mean over true children of the max cosine to W_up,i D_c,i[:, j].")
    hierarchy_consistency: int = Field(
        description="True children whose best atom sits under the parent matched to their true parent."
    )
    n_true_children: int = Field(description="P·C.")


class HierarchicalRecoveryResult(ResultModel):
    """Recovery of a planted hierarchy by the trained H-SAE and by its random initialisation."""

    trained: RecoveryScores
    random_init: RecoveryScores = Field(description="The same scores for the untrained initial weights.")
    train: Metrics
    test: Metrics
    dead_parents: int
    dead_children: int
    loss_curve: list[LossPoint]
    reconstructed: list[str]


def theta_of(params: ModelSettings, dim: int) -> float:
    return params.theta if params.theta is not None else 1.0 / math.sqrt(dim)


def _check_model(params: ModelSettings, dim: int) -> None:
    if params.subspace > dim:
        raise InvalidInput(f"subspace = {params.subspace} exceeds d = {dim}", ("subspace",))
    if params.k > params.n_parents:
        raise InvalidInput(f"k = {params.k} exceeds n_parents = {params.n_parents}", ("k",))
    if parameter_count(params, dim) > MAX_PARAMS:
        raise InvalidInput(
            f"N(2d + 2sd + 2ms) = {parameter_count(params, dim)} parameters exceed {MAX_PARAMS}", ("n_parents",)
        )


def parameter_count(params: ModelSettings, dim: int) -> int:
    """N(2d + 2sd + 2ms)."""
    n, s, m = params.n_parents, params.subspace, params.n_children
    return n * (2 * dim + 2 * s * dim + 2 * m * s)


def _configs(params: ModelSettings, dim: int) -> TrainConfig:
    loss = LossConfig(
        k=params.k,
        theta=theta_of(params, dim),
        l1=params.l1,
        top_weight=params.top_weight,
        xortho_weight=params.xortho_weight,
        xortho_variant=params.xortho_variant,
    )
    return TrainConfig(
        steps=params.steps,
        batch=params.batch,
        lr=params.lr,
        warmup_steps=params.warmup_steps,
        grad_clip=params.grad_clip,
        loss=loss,
    )


def _metrics(ev: Evaluation, n: int, field: str) -> Metrics:
    if not all(map(math.isfinite, (ev.mse, ev.cos))):
        raise Degenerate("training diverged to non-finite weights; lower lr or rescale x", ("lr",))
    if not math.isfinite(ev.fvu):
        raise Degenerate(f"FVU is undefined: every row of {field} is the same", (field,))
    return Metrics(
        n=n,
        mse=ev.mse,
        fvu=ev.fvu,
        explained_variance=1.0 - ev.fvu,
        cos=ev.cos,
        l0_parents=ev.l0_parents,
        l0_children=ev.l0_children,
        l0_total=ev.l0_parents + ev.l0_children,
    )


def flops(params: ModelSettings, dim: int) -> Flops:
    enc, flat = encoder_macs(dim, params.n_parents, params.n_children, params.subspace, params.k)
    return Flops(
        encoder_macs=enc,
        flat_encoder_macs=flat,
        encoder_saving=flat / enc,
        decoder_macs=decoder_macs(dim, params.n_children, params.subspace, min(params.k, params.n_parents)),
    )


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An uncompressed npz of ``arrays`` (sorted names, fixed timestamps): equal arrays give equal bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as archive:
        for name in sorted(arrays):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            with archive.open(info, "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, np.asarray(arrays[name], order="C"), allow_pickle=False)
    return buf.getvalue()


def weight_arrays(w: HSAEWeights, k: int, theta: float) -> dict[str, np.ndarray]:
    """The weights as stored (float32) with the inference settings k and θ as 0-d arrays."""
    arrays = {name: arr.astype(ARTIFACT_DTYPE) for name, arr in w.arrays().items()}
    return {**arrays, "k": np.array(k, dtype=np.int64), "theta": np.array(theta, dtype=np.float64)}


def _split(params: HierarchicalTrainParams, x: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    if params.x_eval is not None:
        x_eval = as_stack(params.x_eval, ("x_eval",), ndim=2)
        if x_eval.shape[1:] != x.shape[1:]:
            raise InvalidInput(f"x_eval has d = {x_eval.shape[1]}, x has d = {x.shape[1]}", ("x_eval",))
        if x_eval.shape[0] < 2 or x_eval.size > MAX_DATA:
            raise InvalidInput(f"x_eval needs 2 to {MAX_DATA // x.shape[1]} rows", ("x_eval",))
        return x, x_eval
    n_eval = round(params.eval_fraction * x.shape[0])
    if n_eval < 2:
        return x, x[:0]
    order = rng.permutation(x.shape[0])
    return x[order[n_eval:]], x[order[:n_eval]]


def _usage(ev: Evaluation) -> dict[str, Any]:
    return {
        "dead_parents": int(np.sum(ev.parent_usage == 0)),
        "dead_children": int(np.sum(ev.child_usage == 0)),
    }


def _curve(curve: list[dict[str, float]]) -> list[LossPoint]:
    if not all(math.isfinite(v) for point in curve for v in point.values()):
        raise Degenerate("training diverged to a non-finite loss; lower lr or rescale x", ("lr",))
    return [LossPoint(**{**point, "step": int(point["step"])}) for point in curve]


def hierarchical_train(params: HierarchicalTrainParams, progress: Progress) -> HierarchicalTrainResult:
    """Train the H-SAE on ``x`` (seeded: split, then initialisation, then batches) and evaluate it."""
    x = as_stack(params.x, ("x",), ndim=2)
    n, dim = x.shape
    if dim > MAX_DIM:
        raise InvalidInput(f"d = {dim} exceeds {MAX_DIM}", ("x",))
    if n * dim > MAX_DATA:
        raise InvalidInput(f"n·d = {n * dim} exceeds {MAX_DATA}", ("x",))
    _check_model(params, dim)
    cfg = _configs(params, dim)
    rng = np.random.default_rng(params.seed)
    x_train, x_eval = _split(params, x, rng)
    w0 = init_weights(rng, dim, params.n_parents, params.n_children, params.subspace)
    w, curve = train(w0, x_train, cfg, rng, lambda f: progress(0.95 * f, "training"))
    progress(0.95, "evaluating")
    ev_train = evaluate(w, x_train, params.k, cfg.loss.theta)
    ev_eval = evaluate(w, x_eval, params.k, cfg.loss.theta) if x_eval.shape[0] else None
    arrays = weight_arrays(w, params.k, cfg.loss.theta)
    result = HierarchicalTrainResult(
        d=dim,
        theta=cfg.loss.theta,
        n_train=x_train.shape[0],
        train=_metrics(ev_train, x_train.shape[0], "x"),
        held_out=None if ev_eval is None else _metrics(ev_eval, x_eval.shape[0], "x_eval"),
        parent_usage=ev_train.parent_usage.tolist(),
        child_usage=ev_train.child_usage.tolist(),
        loss_curve=_curve(curve),
        flops=flops(params, dim),
        artifacts=[
            ArtifactInfo(
                name="weights",
                media_type="application/zip",
                arrays={name: list(arr.shape) for name, arr in arrays.items()},
                dtype=np.dtype(ARTIFACT_DTYPE).name,
            )
        ],
        reconstructed=["flops"],
        **_usage(ev_train),
    )
    result._blobs = {"weights": npz_bytes(arrays)}
    return result


def _scores(w: HSAEWeights, truth: Any) -> RecoveryScores:
    rec = recovery(w, truth)
    return RecoveryScores(
        parent_mean_cos=float(rec.parent_cos.mean()),
        parent_min_cos=float(rec.parent_cos.min()),
        unique_parent_matches=rec.unique_parent_matches,
        child_mean_cos=float(rec.child_cos.mean()),
        hierarchy_consistency=int(rec.consistent.sum()),
        n_true_children=int(rec.consistent.size),
    )


def hierarchical_recovery(params: HierarchicalRecoveryParams, progress: Progress) -> HierarchicalRecoveryResult:
    """Planted hierarchy → samples → H-SAE training → recovery of trained and initial weights.

    One generator: the truth, then n_train + n_test samples, then the initial weights, then the batches."""
    dim = params.d
    if params.true_parents * params.true_children > dim:
        raise InvalidInput(f"P·C = {params.true_parents * params.true_children} exceeds d = {dim}", ("true_children",))
    if (params.n_train + params.n_test) * dim > MAX_DATA:
        raise InvalidInput(
            f"(n_train + n_test)·d = {(params.n_train + params.n_test) * dim} exceeds {MAX_DATA}", ("n_train",)
        )
    for name in ("parent_amplitude", "child_amplitude"):
        low, high = getattr(params, name)
        if low > high:
            raise InvalidInput(f"{name}: low {low} exceeds high {high}", (name,))
    _check_model(params, dim)
    cfg = _configs(params, dim)
    rng = np.random.default_rng(params.seed)
    truth = planted_hierarchy(rng, dim, params.true_parents, params.true_children)
    x = sample_planted(
        rng,
        truth,
        params.n_train + params.n_test,
        params.p_active,
        params.parent_amplitude,
        params.child_amplitude,
        params.noise,
    )
    x_train, x_test = x[: params.n_train], x[params.n_train :]
    w0 = init_weights(rng, dim, params.n_parents, params.n_children, params.subspace)
    w, curve = train(w0, x_train, cfg, rng, lambda f: progress(0.95 * f, "training"))
    progress(0.95, "evaluating")
    ev_train = evaluate(w, x_train, params.k, cfg.loss.theta)
    return HierarchicalRecoveryResult(
        trained=_scores(w, truth),
        random_init=_scores(w0, truth),
        train=_metrics(ev_train, params.n_train, "n_train"),
        test=_metrics(evaluate(w, x_test, params.k, cfg.loss.theta), params.n_test, "n_test"),
        loss_curve=_curve(curve),
        reconstructed=["trained", "random_init"],
        **_usage(ev_train),
    )


def _work(params: ModelSettings, dim: int, n_rows: int) -> float:
    """(3·steps·batch + rows evaluated)·N(2d + 2sd + ms) + steps·STEP_OVERHEAD: forward plus a backward of about
    twice the forward, then evaluation, plus the fixed cost of a step's numpy calls."""
    per_row = params.n_parents * (2 * dim + 2 * params.subspace * dim + params.n_children * params.subspace)
    return float((3 * params.steps * params.batch + n_rows) * per_row + params.steps * STEP_OVERHEAD)


def _rows(arr: Any) -> tuple[int, int]:
    if isinstance(arr, list):
        return len(arr), len(arr[0]) if arr else 0
    shape = np.shape(arr)
    return int(shape[0]), int(shape[1]) if len(shape) > 1 else 0


def train_cost(params: HierarchicalTrainParams) -> float:
    n, dim = _rows(params.x)
    n_eval = _rows(params.x_eval)[0] if params.x_eval is not None else 0
    return _work(params, dim, n + n_eval)


def recovery_cost(params: HierarchicalRecoveryParams) -> float:
    return _work(params, params.d, params.n_train + params.n_test)


def loss_plot(result: HierarchicalTrainResult | HierarchicalRecoveryResult) -> Any:
    """Batch loss and its reconstruction part against the step (log scale)."""
    from matplotlib.figure import Figure

    steps = [p.step for p in result.loss_curve]
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    ax.plot(steps, [p.loss for p in result.loss_curve], label="loss")
    ax.plot(steps, [p.mse for p in result.loss_curve], label="mean‖x − x̂‖²")
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def loss_curves(result: HierarchicalTrainResult | HierarchicalRecoveryResult) -> Curves:
    """The plot's batch loss and reconstruction part against the step (log y), for overlaying runs."""
    steps = [p.step for p in result.loss_curve]
    curves = (
        Curve("loss", steps, [p.loss for p in result.loss_curve]),
        Curve("mean‖x − x̂‖²", steps, [p.mse for p in result.loss_curve]),
    )
    return Curves("step", "loss", curves, y_log=True)


def recovery_plot(result: HierarchicalRecoveryResult) -> Any:
    """Trained against random-init recovery: parent cos, child cos and hierarchy consistency."""
    from matplotlib.figure import Figure

    labels = ["parent mean cos", "child mean cos", "consistency"]

    def values(s: RecoveryScores) -> list[float]:
        return [s.parent_mean_cos, s.child_mean_cos, s.hierarchy_consistency / s.n_true_children]

    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    pos = np.arange(len(labels))
    ax.bar(pos - 0.2, values(result.trained), 0.4, label="trained")
    ax.bar(pos + 0.2, values(result.random_init), 0.4, label="random init")
    ax.set_xticks(pos, labels)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


COST_UNIT = "multiply-accumulates, (3·steps·batch + rows evaluated)·N(2d + 2sd + ms) + 5e5·steps; ~1.5e9 per second"
SYNC_BUDGET = 1.5e8
HARD_CAP = 1e12

SPECS = [
    register(
        EstimatorSpec(
            name="sae.hierarchical_train",
            version="1",
            family="sae",
            summary="Train a hierarchical sparse autoencoder (top-k parents, one argmax child each in a low-rank "
            "subspace) with Adam; FVU, L0, dead latents, child usage, encoder FLOP saving and the weights as npz.",
            paper=PAPER,
            citation=CITATION,
            params_model=HierarchicalTrainParams,
            result_model=HierarchicalTrainResult,
            fn=hierarchical_train,
            cost=train_cost,
            cost_unit=COST_UNIT,
            sync_budget=SYNC_BUDGET,
            hard_cap=HARD_CAP,
            plot=loss_plot,
            overlay=loss_curves,
        )
    ),
    register(
        EstimatorSpec(
            name="sae.hierarchical_recovery",
            version="1",
            family="sae",
            summary="Recovery of a planted parent/child hierarchy by the hierarchical SAE (parent and child max "
            "cosines, hierarchy consistency) against its random initialisation.",
            paper=PAPER,
            citation=CITATION,
            params_model=HierarchicalRecoveryParams,
            result_model=HierarchicalRecoveryResult,
            fn=hierarchical_recovery,
            cost=recovery_cost,
            cost_unit=COST_UNIT,
            sync_budget=SYNC_BUDGET,
            hard_cap=HARD_CAP,
            plot=recovery_plot,
        )
    ),
]
