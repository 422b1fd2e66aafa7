"""Multinomial NML (Shtarkov) regret and codelengths (docs/compression.md).

``compression.nml_regret``: log C(K, n) by the Kontkanen–Myllymäki O(n + K) recursion in log space.
``compression.codelength``: codelength of a count vector under ML (a lower bound, not a code), NML and a
Dirichlet(α) Bayes mixture (α = ½ is Krichevsky–Trofimov).
"""

import math
from typing import Annotated, Literal

import numpy as np
from pydantic import Field
from scipy.special import gammaln, logsumexp, xlogy

from service.errors import InvalidInput
from service.registry import EstimatorSpec, Progress, register
from service.types import ResultModel, StrictModel, array_param

PAPER = "Double descent through universal compression"
CITATION_NML = (
    "Double descent through universal compression (NeurIPS 2026); Kontkanen & Myllymäki, "
    "Inf. Process. Lett. 103 (2007) 227–233; Rissanen, IEEE Trans. IT 42 (1996)"
)
MAX_NML_N = 10_000_000
MAX_TOTAL_COUNT = 1_000_000_000
_CHUNK = 1 << 20
"""C(2, n) is summed over h in chunks of this many terms (~8 MB per float array, not 80 MB at n = 10^7)."""


def log_c2(n: int) -> float:
    """log C(2, n) = log Σ_h binom(n, h) (h/n)^h ((n−h)/n)^(n−h), chunked log-sum-exp; 0 for n = 0."""
    if n == 0:
        return 0.0
    log_n_fact = float(gammaln(n + 1))
    parts = []
    for start in range(0, n + 1, _CHUNK):
        h = np.arange(start, min(n + 1, start + _CHUNK), dtype=np.float64)
        terms = log_n_fact - gammaln(h + 1) - gammaln(n - h + 1) + xlogy(h, h / n) + xlogy(n - h, (n - h) / n)
        parts.append(logsumexp(terms))
    return float(logsumexp(parts))


def log_nml_complexity(num_symbols: int, n: int) -> float:
    """log C(K, n) by C(K, n) = C(K−1, n) + n/(K−2)·C(K−2, n), K ≥ 3, in log space (Kontkanen–Myllymäki 2007).

    C(1, n) = 1 and C(K, 0) = 1 (the empty sequence).
    """
    if n == 0 or num_symbols == 1:
        return 0.0
    prev, cur = 0.0, log_c2(n)
    log_n = math.log(n)
    for k in range(3, num_symbols + 1):
        prev, cur = cur, cur + math.log1p(math.exp(log_n - math.log(k - 2) + prev - cur))
    return cur


def asymptotic_log_complexity(num_symbols: int, n: int) -> float:
    """Rissanen (1996): (K−1)/2·log(n/2π) + log(Γ(½)^K / Γ(K/2)); accurate for n ≫ K, meaningless for K ≫ n."""
    k = num_symbols
    return float((k - 1) / 2 * math.log(n / (2 * math.pi)) + k * gammaln(0.5) - gammaln(k / 2))


class NmlRegretParams(StrictModel):
    """Parameters of ``compression.nml_regret``."""

    num_symbols: int = Field(
        ge=1, le=100_000, description="Alphabet size K of the multinomial (i.i.d. categorical) model."
    )
    n: int = Field(ge=0, le=MAX_NML_N, description="Sequence length n (number of symbols coded).")


class NmlRegretResult(ResultModel):
    """Shtarkov sum C(K, n) = Σ_{x^n} max_θ P(x^n|θ): the minimax (NML) regret log C(K, n)."""

    num_symbols: int = Field(description="Alphabet size K.")
    n: int = Field(description="Sequence length n.")
    log_c_nats: float = Field(description="log C(K, n) in nats: the NML regret, exact up to rounding.")
    log_c_bits: float = Field(description="log2 C(K, n) in bits.")
    asymptotic_nats: float | None = Field(
        description="Rissanen's asymptotic (K−1)/2·log(n/2π) + log(Γ(½)^K/Γ(K/2)) in nats; valid for n ≫ K "
        "(it is far off, even negative, when K ≫ n); null for n = 0."
    )
    reconstructed: list[str] = Field(description="Result fields resting on a RECONSTRUCTED definition (none).")


def nml_regret(params: NmlRegretParams, progress: Progress) -> NmlRegretResult:
    """log C(K, n) by the log-space Kontkanen–Myllymäki recursion, cost O(n + K)."""
    log_c = log_nml_complexity(params.num_symbols, params.n)
    asym = asymptotic_log_complexity(params.num_symbols, params.n) if params.n > 0 else None
    return NmlRegretResult(
        num_symbols=params.num_symbols,
        n=params.n,
        log_c_nats=log_c,
        log_c_bits=log_c / math.log(2),
        asymptotic_nats=asym,
        reconstructed=[],
    )


def nml_regret_cost(params: NmlRegretParams) -> float:
    """Number of log-space terms: n + 1 for C(2, n) plus K − 2 recursion steps."""
    return float(params.n + params.num_symbols)


Count = Annotated[int, Field(strict=True, ge=0, le=MAX_TOTAL_COUNT)]


class CodelengthParams(StrictModel):
    """Parameters of ``compression.codelength``."""

    counts: array_param(Count, "int", ge=0, le=MAX_TOTAL_COUNT) = Field(  # type: ignore[valid-type]
        description="Symbol counts n_1..n_K of the coded sequence (non-negative integers; K = len(counts) is "
        "the alphabet size, zero counts included; sum n ≤ 10^9, ≤ 10^7 for method=nml). A JSON list of at most "
        '100,000 counts, or {"array": "sha256:…"} for a larger alphabet uploaded with POST /v1/arrays.',
    )
    method: Literal["ml", "nml", "bayes"] = Field(
        default="nml",
        description="'ml': −log P(x^n|θ̂) (maximum likelihood, not a prefix code); 'nml': ML + log C(K, n) "
        "(Shtarkov/NML); 'bayes': Dirichlet(alpha) mixture. Default 'nml'.",
    )
    alpha: float = Field(
        default=0.5,
        gt=0,
        le=1e6,
        description="Dirichlet concentration per symbol for method='bayes' (default 0.5 = Krichevsky–Trofimov; "
        "1 = Laplace; 1/3 is minimax for K ≫ n). Ignored by the other methods.",
    )


class CodelengthResult(ResultModel):
    """Codelength of the sequence summarised by ``counts`` under the chosen code."""

    method: str = Field(description="The method used.")
    num_symbols: int = Field(description="Alphabet size K = len(counts).")
    n: int = Field(description="Sequence length n = sum(counts).")
    codelength_nats: float = Field(description="Codelength −log q(x^n) in nats.")
    codelength_bits: float = Field(description="Codelength in bits.")
    ml_codelength_nats: float = Field(description="−log P(x^n|θ̂) = −Σ n_j log(n_j/n) in nats.")
    regret_vs_ml_nats: float = Field(
        description="codelength − ML codelength in nats (0 for 'ml'; log C(K, n) for 'nml')."
    )
    reconstructed: list[str] = Field(description="Result fields resting on a RECONSTRUCTED definition (none).")


def ml_codelength(counts: np.ndarray) -> float:
    """−log P(x^n | θ̂) = −Σ_j n_j log(n_j / n), with 0 log 0 = 0."""
    n = counts.sum()
    if n == 0:
        return 0.0
    return 0.0 - float(xlogy(counts, counts / n).sum())


def bayes_codelength(counts: np.ndarray, alpha: float) -> float:
    """Dirichlet(α) mixture: log Γ(n+Kα) − log Γ(Kα) − Σ_j [log Γ(n_j+α) − log Γ(α)]."""
    k, n = counts.size, counts.sum()
    return float(gammaln(n + k * alpha) - gammaln(k * alpha) - (gammaln(counts + alpha) - gammaln(alpha)).sum())


def codelength(params: CodelengthParams, progress: Progress) -> CodelengthResult:
    """Codelength of ``counts`` under ML, NML (= ML + log C(K, n)) or a Dirichlet mixture."""
    counts = np.asarray(params.counts, dtype=np.float64)
    n = int(np.asarray(params.counts, dtype=np.int64).sum())
    if n > MAX_TOTAL_COUNT:
        raise InvalidInput(f"sum(counts) = {n} exceeds {MAX_TOTAL_COUNT}", loc=("counts",))
    if params.method == "nml" and n > MAX_NML_N:
        raise InvalidInput(f"method='nml' needs sum(counts) ≤ {MAX_NML_N}, got {n}", loc=("counts",))
    ml = ml_codelength(counts)
    if params.method == "ml":
        length = ml
    elif params.method == "nml":
        length = ml + log_nml_complexity(counts.size, n)
    else:
        length = bayes_codelength(counts, params.alpha)
    return CodelengthResult(
        method=params.method,
        num_symbols=counts.size,
        n=n,
        codelength_nats=length,
        codelength_bits=length / math.log(2),
        ml_codelength_nats=ml,
        regret_vs_ml_nats=length - ml,
        reconstructed=[],
    )


def codelength_cost(params: CodelengthParams) -> float:
    """len(counts), plus n + K log-space terms for the NML complexity."""
    counts = np.asarray(params.counts, dtype=np.int64)
    return float(counts.size + (int(counts.sum()) + counts.size if params.method == "nml" else 0))


NML_REGRET_SPEC = register(
    EstimatorSpec(
        name="compression.nml_regret",
        version="1",
        family="compression",
        summary="Multinomial NML (Shtarkov) regret log C(K, n) by the Kontkanen–Myllymäki recursion, "
        "with Rissanen's asymptotic.",
        paper=PAPER,
        citation=CITATION_NML,
        params_model=NmlRegretParams,
        result_model=NmlRegretResult,
        fn=nml_regret,
        cost=nml_regret_cost,
        cost_unit="log-space terms (n + K)",
        sync_budget=2e7,
        hard_cap=2e7,
    )
)

CODELENGTH_SPEC = register(
    EstimatorSpec(
        name="compression.codelength",
        version="1",
        family="compression",
        summary="Codelength of a count vector under maximum likelihood, NML, or a Dirichlet (KT) mixture, "
        "and its regret over the ML codelength.",
        paper=PAPER,
        citation=CITATION_NML + "; Krichevsky & Trofimov, IEEE Trans. IT 27 (1981)",
        params_model=CodelengthParams,
        result_model=CodelengthResult,
        fn=codelength,
        cost=codelength_cost,
        cost_unit="log-space terms (K, + n + K for nml)",
        sync_budget=2.2e7,
        hard_cap=2.2e7,
    )
)
