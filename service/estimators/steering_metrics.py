"""Numerics of the steering family: stacked activations, separability AUC, Gram-side spectra, participation ratios."""

from typing import Any

import numpy as np
from scipy.stats import rankdata

from service.errors import InvalidInput

MAX_EXAMPLES = 4096
MAX_LAYERS = 128
MAX_DIM = 16_384
MAX_ELEMENTS = 20_000_000
"""n·L·d cap over all arrays of one request (160 MB as float64)."""


def as_stack(value: Any, loc: tuple[str | int, ...], ndim: int = 3) -> np.ndarray:
    """A float64 array of ``ndim`` dimensions from a nested list or an (fp16/fp32/fp64) array; 422 if ragged."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (ValueError, TypeError) as exc:
        raise InvalidInput(f"not a rectangular {ndim}-dimensional array: {exc}", loc=loc) from exc
    if arr.ndim != ndim:
        raise InvalidInput(f"expected a {ndim}-dimensional array, got shape {list(arr.shape)}", loc=loc)
    if arr.size == 0:
        raise InvalidInput("the array is empty", loc=loc)
    if not np.isfinite(arr).all():
        raise InvalidInput("the array holds NaN or infinite values", loc=loc)
    return arr


def check_stack(arr: np.ndarray, loc: tuple[str | int, ...]) -> None:
    """(n, L, d) within n ≤ 4096, L ≤ 128, d ≤ 16384."""
    n, layers, dim = arr.shape
    for size, cap, what in ((n, MAX_EXAMPLES, "examples"), (layers, MAX_LAYERS, "layers"), (dim, MAX_DIM, "d")):
        if size > cap:
            raise InvalidInput(f"{size} {what}; at most {cap}", loc=loc)


def check_total(total: int, loc: tuple[str | int, ...]) -> None:
    if total > MAX_ELEMENTS:
        raise InvalidInput(f"{total} array elements in all; at most {MAX_ELEMENTS}", loc=loc)


def unit_rows(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(v / ‖v‖ row-wise with zero rows left at 0, ‖v‖) for an (L, d) matrix."""
    norms = np.linalg.norm(v, axis=-1)
    safe = np.where(norms > 0, norms, 1.0)
    return v / safe[..., None], norms


def auc_by_column(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """P(pos > neg) + ½·P(tie) per column: the Mann–Whitney U / (n_pos·n_neg) from mid-ranks."""
    ranks = rankdata(np.concatenate([pos, neg]), axis=0)
    n_pos, n_neg = pos.shape[0], neg.shape[0]
    return (ranks[:n_pos].sum(axis=0) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def gram_singular_values(g: np.ndarray) -> np.ndarray:
    """Singular values of each (n, d) matrix of a stack (…, n, d), largest first, via the smaller Gram matrix.

    σ² are the eigenvalues of G·Gᵀ (n ≤ d) or Gᵀ·G (n > d): O(n·d·min(n, d)) instead of a full SVD. Rounding
    leaves eigenvalues below ~1e-16·σ₁² as noise; they are clipped at 0.
    """
    n, d = g.shape[-2:]
    flat = g.reshape(-1, n, d)
    side = min(n, d)
    gram = np.empty((flat.shape[0], side, side))
    for i, mat in enumerate(flat):
        mat = np.ascontiguousarray(mat)  # contiguous operands let numpy use BLAS syrk for A·Aᵀ
        gram[i] = mat @ mat.T if n <= d else mat.T @ mat
    eig = np.linalg.eigvalsh(gram.reshape(*g.shape[:-2], side, side))[..., ::-1]
    return np.sqrt(np.clip(eig, 0.0, None))


def participation_ratio(energy: np.ndarray) -> np.ndarray:
    """(Σ e)² / Σ e² along the last axis for non-negative energies e; NaN where all are 0."""
    total = energy.sum(axis=-1)
    square = (energy**2).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(square > 0, total**2 / np.where(square > 0, square, 1.0), np.nan)


def entropy_rank(weights: np.ndarray) -> np.ndarray:
    """exp(−Σ p log p) with p = w / Σ w along the last axis (0 log 0 = 0); NaN where all weights are 0."""
    total = weights.sum(axis=-1, keepdims=True)
    p = weights / np.where(total > 0, total, 1.0)
    logs = np.log(np.where(p > 0, p, 1.0))
    return np.where(total[..., 0] > 0, np.exp(-(p * logs).sum(axis=-1)), np.nan)


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine along the last axis, clipped to [−1, 1] against rounding; NaN where either vector has zero norm."""
    na, nb = np.linalg.norm(a, axis=-1), np.linalg.norm(b, axis=-1)
    ok = (na > 0) & (nb > 0)
    dots = (a * b).sum(axis=-1)
    return np.where(ok, np.clip(dots / np.where(ok, na * nb, 1.0), -1.0, 1.0), np.nan)


def nullable(x: np.ndarray | float) -> Any:
    """NaN → None as Python floats: a float or None for a scalar, (nested) lists for arrays."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 0:
        return None if np.isnan(arr) else float(arr)
    return np.where(np.isnan(arr), None, arr.astype(object)).tolist()
