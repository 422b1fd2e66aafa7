"""Token dynamics of self-attention with hyper-connections: spectrum at the zero state, regimes and crossings.

``hyperconnections.token_dynamics`` studies the continuous-depth limit of a hyper-connected attention layer,
dH/dt = (A_r − I)^T H + β SA(Σ_i α_i H_i) with SA(Z) = softmax(Z W Z^T + M) Z V, H of shape n × N × d: the
Jacobian spectrum at H = 0 from closed-form n × n blocks, the 1-stream critical a_r, the 2-stream block
determinants and traces, an RK4 run classified as collapse / non-trivial state / oscillation / divergence, and the
static and Hopf crossings of a one-parameter sweep.
"""

from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.estimators.hyperconnections_ode import (
    HYPERBOLIC_TOL,
    Spectrum,
    System,
    fd_jacobian,
    kronecker_jacobian,
    rk4,
    spectrum,
    spectrum_distance,
)
from service.estimators.hyperconnections_plot import plot_token_dynamics
from service.estimators.hyperconnections_sweep import TARGET_PATTERN, continuation
from service.registry import EstimatorSpec, Progress, register
from service.types import ResultModel, Seed, StrictModel

PAPER = "Token dynamics of Transformers with hyper-connections: collapse, divergence and bifurcations"
CITATION = (
    "Token dynamics of hyper-connected self-attention as a continuous-depth ODE (NeurIPS 2026; title and text not "
    "located, the ODE is reconstructed from the abstract); Hyper-Connections: Zhu et al., arXiv 2409.19606 (2024); "
    "token ODE convention: Geshkovski, Letrouit, Polyanskiy & Rigollet, A mathematical perspective on "
    "Transformers (2023)."
)
MAX_ENTRY = 1e3
MAX_SERIES = 1000
FD_MAX_STATE = 300
RECONSTRUCTED = [
    "eigenvalues",
    "spectral_abscissa",
    "hyperbolic",
    "linear_label",
    "critical_a_r",
    "blocks",
    "simulation",
    "crossings",
    "sweep_curve",
    "fd_residual",
    "fd_jacobian_residual",
]

Entry = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-MAX_ENTRY, le=MAX_ENTRY)]
StreamVector = Annotated[list[Entry], Field(min_length=1, max_length=4)]
StreamMatrix = Annotated[list[StreamVector], Field(min_length=1, max_length=4)]
DimMatrix = Annotated[
    list[Annotated[list[Entry], Field(min_length=1, max_length=32)]], Field(min_length=1, max_length=32)
]
TokenRows = Annotated[
    list[Annotated[list[Entry], Field(min_length=1, max_length=32)]], Field(min_length=1, max_length=64)
]


class Sweep(StrictModel):
    """A one-parameter continuation of the spectral abscissa of the zero state."""

    target: str = Field(
        pattern=TARGET_PATTERN,
        description="Parameter swept: 'a_r[i][j]', 'alpha[i]', 'beta[i]' (0-based indices, set to the grid value) or "
        "'scale_v' (V multiplied by the grid value).",
    )
    lo: Entry = Field(description="First grid value.")
    hi: Entry = Field(description="Last grid value (> lo).")
    n_points: int = Field(50, ge=2, le=200, description="Grid points, evenly spaced (default 50).")


class TokenDynamicsParams(StrictModel):
    """Parameters of ``hyperconnections.token_dynamics``."""

    n_streams: int = Field(ge=1, le=4, description="Number of hyper-connection streams n.")
    n_tokens: int = Field(ge=2, le=64, description="Number of tokens N.")
    dim: int = Field(ge=1, le=32, description="Token dimension d.")
    a_r: StreamMatrix = Field(description="Residual mixing A_r (n × n); n = 1 with a_r = 1 is the plain residual.")
    alpha: StreamVector = Field(description="Input weights α = A_m (n): attention reads Σ_i α_i H_i.")
    beta: StreamVector = Field(description="Output weights β = B (n): stream i receives β_i·SA(·).")
    w: DimMatrix | None = Field(None, description="W = W_Q W_K^T/√d_k (d × d); default the identity.")
    v: DimMatrix | None = Field(None, description="Value matrix V (d × d); default minus the identity.")
    causal: bool = Field(False, description="Causal mask (−∞ above the diagonal) instead of bidirectional attention.")
    h0: Annotated[list[TokenRows], Field(min_length=1, max_length=4)] | None = Field(
        None, description="Initial state H0 (n × N × d); default init_scale·N(0, 1) draws from init_seed."
    )
    init_seed: Seed = 0
    init_scale: float = Field(0.1, gt=0, le=MAX_ENTRY, description="Scale of the random H0 (default 0.1).")
    t_max: float = Field(150.0, gt=0, le=1000.0, description="Integration time (default 150).")
    dt: float = Field(0.05, ge=1e-3, le=0.1, description="RK4 step (default 0.05); round(t_max/dt) steps.")
    simulate: bool = Field(True, description="Run the RK4 simulation (default true).")
    sweep: Sweep | None = Field(None, description="Optional continuation in one parameter.")
    fd_check: bool = Field(
        False,
        description="Compare the closed-form spectrum with that of a central-difference Jacobian of the full "
        f"non-linear field (only when n·N·d ≤ {FD_MAX_STATE}).",
    )


class Eigenvalue(ResultModel):
    """One eigenvalue λ of the Jacobian at H = 0, from the block R + p·μ·β α^T."""

    re: float = Field(description="Re λ.")
    im: float = Field(description="Im λ.")
    p: float = Field(description="Eigenvalue p of the attention matrix at H = 0.")
    mu_re: float = Field(description="Re μ, μ an eigenvalue of V.")
    mu_im: float = Field(description="Im μ.")
    multiplicity: int = Field(description="How often λ occurs in spec(J): multiplicity of p times that of μ.")


class Block(ResultModel):
    """Determinant and trace of one 2 × 2 block C = R + p·μ·β α^T (static boundary det C = 0, Hopf tr C = 0)."""

    p: float
    mu_re: float
    mu_im: float
    multiplicity: int
    det_re: float
    det_im: float
    trace_re: float
    trace_im: float


class NormSeries(ResultModel):
    """‖H(t)‖_F at up to 1,000 evenly spaced steps (first and last included)."""

    t: list[float]
    norm: list[float]


class Simulation(ResultModel):
    """The RK4 run from H0."""

    regime: Literal["collapse", "nontrivial", "oscillation", "divergence", "undetermined"] = Field(
        description="collapse: ‖H‖ < 1e-6 or a steady exponential decay of ‖H‖; divergence: ‖H‖ > 1e6 (t_end "
        "is when); nontrivial: ‖dH/dt‖/‖H‖ < 1e-4 at the end with ‖H‖ bounded away from 0; oscillation: bounded, "
        "not converging, ≥ 4 crossings of the projection on H0 in the second half; undetermined: none of these."
    )
    t_end: float = Field(description="Time reached (t_max, or the divergence time).")
    final_norm: float = Field(description="‖H(t_end)‖_F.")
    norm_series: NormSeries
    frequency: float | None = Field(
        description="Angular frequency from the crossings of the projection on H0 over the second half; null "
        "with fewer than 4 crossings."
    )


class Crossing(ResultModel):
    """A change of stability of the zero state along the sweep."""

    param: str = Field(description="The swept parameter.")
    type: Literal["static", "hopf"] = Field(description="static: a real eigenvalue crosses 0; hopf: a complex pair.")
    value: float = Field(description="Parameter value at the crossing (bisection to 1e-10).")
    omega: float | None = Field(description="Hopf frequency |Im λ| at the crossing; null for static.")


class SweepPoint(ResultModel):
    value: float
    spectral_abscissa: float


class TokenDynamicsResult(ResultModel):
    """Linear analysis of H = 0, RK4 regime and continuation."""

    eigenvalues: list[Eigenvalue] = Field(description="Every eigenvalue of every closed-form block.")
    spectral_abscissa: float = Field(description="max Re λ.")
    hyperbolic: bool = Field(description="min |Re λ| > 1e-9.")
    linear_label: Literal["stable", "marginal", "static_unstable", "oscillatory_unstable"] = Field(
        description="stable: max Re λ < −1e-9; marginal: |max Re λ| ≤ 1e-9; unstable: static when a leading "
        "eigenvalue is real, oscillatory when it is complex."
    )
    critical_a_r: float | None = Field(
        description="One stream: H = 0 is stable iff a_r < 1 − max over blocks of p·α·β·Re μ (bidirectional: "
        "1 − max(0, αβ·max Re μ); causal: 1 − max_t,k αβ·Re μ_k/t); null for n > 1."
    )
    blocks: list[Block] | None = Field(description="Two streams: det and trace of each distinct block; else null.")
    simulation: Simulation | None = Field(description="The RK4 run; null when simulate is false.")
    crossings: list[Crossing] | None = Field(description="Crossings along the sweep; null without a sweep.")
    sweep_curve: list[SweepPoint] | None = Field(description="Spectral abscissa at each sweep grid value.")
    fd_residual: float | None = Field(
        description="Largest distance between matched eigenvalues of the closed form and of the finite-difference "
        "Jacobian; null unless fd_check. For causal attention with N ≳ 32 the dense eigenproblem is ill-conditioned "
        "(non-normal averaging matrix), so this reflects the dense solver's error; see fd_jacobian_residual."
    )
    fd_jacobian_residual: float | None = Field(
        description="max |J_FD − J| entrywise, J = R ⊗ I + βαᵀ ⊗ (P0 ⊗ Vᵀ) the closed-form Jacobian; null unless "
        "fd_check."
    )
    reconstructed: list[str] = Field(description="Result fields resting on the RECONSTRUCTED continuous-depth ODE.")


def _array(value: list[float] | list[list[float]], shape: tuple[int, ...], loc: str) -> np.ndarray:
    """The value as a float array of the given shape (rows of equal length), or a 422 naming the field."""
    rows = [row if isinstance(row, list) else [row] for row in value]
    if any(len(row) != len(rows[0]) for row in rows) or np.shape(value) != shape:
        raise InvalidInput(f"{loc} must have shape {list(shape)}", loc=(loc,))
    return np.asarray(value, dtype=np.float64)


def build_system(params: TokenDynamicsParams) -> System:
    """The system with shapes checked against n_streams and dim (422 naming the field)."""
    n, d = params.n_streams, params.dim
    return System(
        a_r=_array(params.a_r, (n, n), "a_r"),
        alpha=_array(params.alpha, (n,), "alpha"),
        beta=_array(params.beta, (n,), "beta"),
        w=np.eye(d) if params.w is None else _array(params.w, (d, d), "w"),
        v=-np.eye(d) if params.v is None else _array(params.v, (d, d), "v"),
        n_tokens=params.n_tokens,
        causal=params.causal,
    )


def initial_state(params: TokenDynamicsParams) -> np.ndarray:
    shape = (params.n_streams, params.n_tokens, params.dim)
    if params.h0 is None:
        return params.init_scale * np.random.default_rng(params.init_seed).standard_normal(shape)
    ragged = any(len(rows) != params.n_tokens or any(len(r) != params.dim for r in rows) for rows in params.h0)
    if ragged or len(params.h0) != params.n_streams:
        raise InvalidInput(f"h0 must have shape {list(shape)}", loc=("h0",))
    return np.asarray(params.h0, dtype=np.float64)


def critical_a_r(spec: Spectrum, system: System) -> float:
    """One stream: λ = (a_r − 1) + p·α·β·μ, so H = 0 is stable iff a_r < 1 − max over blocks of p·α·β·Re μ."""
    return float(1.0 - (spec.block_p * spec.block_mu.real * system.alpha[0] * system.beta[0]).max())


def _label(abscissa: float, leading: complex) -> str:
    if abscissa < -HYPERBOLIC_TOL:
        return "stable"
    if abscissa <= HYPERBOLIC_TOL:
        return "marginal"
    return "oscillatory_unstable" if abs(leading.imag) > HYPERBOLIC_TOL else "static_unstable"


def _downsample(n: int) -> np.ndarray:
    return np.unique(np.linspace(0, n - 1, min(n, MAX_SERIES)).round().astype(np.int64))


def token_dynamics(params: TokenDynamicsParams, progress: Progress) -> TokenDynamicsResult:
    """Closed-form spectrum of the Jacobian at H = 0, RK4 regime, continuation and FD check."""
    system = build_system(params)
    n = params.n_streams
    if params.fd_check and n * params.n_tokens * params.dim > FD_MAX_STATE:
        raise InvalidInput(f"fd_check needs n_streams·n_tokens·dim ≤ {FD_MAX_STATE}", loc=("fd_check",))
    if params.sweep is not None and params.sweep.hi <= params.sweep.lo:
        raise InvalidInput("sweep.hi must exceed sweep.lo", loc=("sweep", "hi"))
    h0 = initial_state(params) if params.simulate else None
    spec = spectrum(system)
    blocks = None
    if n == 2:
        det = np.linalg.det(spec.blocks)
        trace = np.trace(spec.blocks, axis1=1, axis2=2)
        blocks = [
            Block(
                p=float(p),
                mu_re=float(mu.real),
                mu_im=float(mu.imag),
                multiplicity=int(m),
                det_re=float(np.real(dt)),
                det_im=float(np.imag(dt)),
                trace_re=float(np.real(tr)),
                trace_im=float(np.imag(tr)),
            )
            for p, mu, m, dt, tr in zip(spec.block_p, spec.block_mu, spec.block_multiplicity, det, trace, strict=True)
        ]
    crossings = sweep_curve = None
    if params.sweep is not None:
        grid = np.linspace(params.sweep.lo, params.sweep.hi, params.sweep.n_points)
        abscissa, found = continuation(
            system, params.sweep.target, grid, ("sweep", "target"), lambda f: progress(f, "sweep")
        )
        crossings = [Crossing(param=params.sweep.target, type=c.type, value=c.value, omega=c.omega) for c in found]
        sweep_curve = [
            SweepPoint(value=float(x), spectral_abscissa=float(a)) for x, a in zip(grid, abscissa, strict=True)
        ]
    fd_residual = fd_jacobian_residual = None
    if params.fd_check:
        jac = fd_jacobian(system)
        fd_residual = spectrum_distance(np.repeat(spec.values, spec.multiplicity), np.linalg.eigvals(jac))
        fd_jacobian_residual = float(np.abs(jac - kronecker_jacobian(system)).max())
    simulation = None
    if h0 is not None:
        with np.errstate(over="ignore", invalid="ignore"):
            run = rk4(system, h0, params.t_max, params.dt, lambda f: progress(f, "rk4"))
        keep = _downsample(run.times.size)
        simulation = Simulation(
            regime=run.regime,
            t_end=run.t_end,
            final_norm=float(run.norms[-1]),
            norm_series=NormSeries(t=run.times[keep].tolist(), norm=run.norms[keep].tolist()),
            frequency=run.frequency,
        )
    return TokenDynamicsResult(
        eigenvalues=[
            Eigenvalue(
                re=float(lam.real),
                im=float(lam.imag),
                p=float(p),
                mu_re=float(mu.real),
                mu_im=float(mu.imag),
                multiplicity=int(m),
            )
            for lam, p, mu, m in zip(spec.values, spec.p, spec.mu, spec.multiplicity, strict=True)
        ],
        spectral_abscissa=spec.abscissa,
        hyperbolic=bool(np.abs(spec.values.real).min() > HYPERBOLIC_TOL),
        linear_label=_label(spec.abscissa, spec.leading()),
        critical_a_r=critical_a_r(spec, system) if n == 1 else None,
        blocks=blocks,
        simulation=simulation,
        crossings=crossings,
        sweep_curve=sweep_curve,
        fd_residual=fd_residual,
        fd_jacobian_residual=fd_jacobian_residual,
        reconstructed=RECONSTRUCTED,
    )


FIELD_OVERHEAD = 100_000
"""Fixed cost of one vectorised field evaluation (numpy call overhead), in work units."""
EIG_OVERHEAD = 50_000
EIG_PER_ENTRY = 250
BISECTIONS_PER_CROSSING = 40


def cost(params: TokenDynamicsParams) -> float:
    """Work units (≈ 0.4 ns each here): RK4 4·steps·(n²Nd + 2N²d + Nd² + 3N² + 1e5), each spectral abscissa
    5e4 + 250·blocks·n³ (a sweep: n_points of them plus 40 per possible crossing, worst case one between every pair
    of grid points), and the FD check 2m field evaluations plus an m³ eigensolve (m = nNd)."""
    n, big_n, d = params.n_streams, params.n_tokens, params.dim
    n_blocks = (big_n if params.causal else 2) * d
    eig = EIG_OVERHEAD + EIG_PER_ENTRY * n_blocks * n**3
    field_work = n * n * big_n * d + 2 * big_n * big_n * d + big_n * d * d + 3 * big_n * big_n + FIELD_OVERHEAD
    total = eig
    if params.simulate:
        total += 4.0 * max(1, round(params.t_max / params.dt)) * field_work
    if params.sweep is not None:
        total += eig * (params.sweep.n_points + BISECTIONS_PER_CROSSING * (params.sweep.n_points - 1))
    if params.fd_check:
        m = n * big_n * d
        total += 2.0 * m * field_work + 30.0 * m**3
    return float(total)


COST_UNIT = "work units (≈ 0.4 ns each on one core): RK4 steps × field size, eigensolves × block entries"
SYNC_BUDGET = 2.5e9
HARD_CAP = 1.5e12

SPEC = register(
    EstimatorSpec(
        name="hyperconnections.token_dynamics",
        version="1",
        family="hyperconnections",
        summary="Hyper-connected self-attention as an ODE: Jacobian spectrum at the zero state in closed form, "
        "1-stream critical a_r, 2-stream static/Hopf boundaries, RK4 regime and continuation crossings.",
        paper=PAPER,
        citation=CITATION,
        params_model=TokenDynamicsParams,
        result_model=TokenDynamicsResult,
        fn=token_dynamics,
        cost=cost,
        cost_unit=COST_UNIT,
        sync_budget=SYNC_BUDGET,
        hard_cap=HARD_CAP,
        plot=plot_token_dynamics,
    )
)
