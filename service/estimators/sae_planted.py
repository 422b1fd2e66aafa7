"""Planted-hierarchy data for the hierarchical SAE and the scores of how well a trained model recovers it.

Parents are orthonormal directions; the children of each parent form a centred regular simplex of unit vectors in a
(C − 1)-dimensional subspace private to that parent and orthogonal to every parent direction (centring keeps the
parent direction identifiable). A sample switches each parent on independently, adds it with a uniform amplitude
and one uniformly chosen child of it with its own amplitude, plus isotropic Gaussian noise.
"""

from dataclasses import dataclass

import numpy as np

from service.estimators.sae_model import HSAEWeights


@dataclass(frozen=True)
class PlantedHierarchy:
    """Ground truth: parents (P, d) and children (P, C, d), all unit vectors."""

    parents: np.ndarray
    children: np.ndarray


def regular_simplex(n_vertices: int) -> np.ndarray:
    """Vertices (C, C − 1) of a centred regular simplex with unit-norm vertices (e_j − 1/C in an orthonormal basis
    of the sum-zero subspace)."""
    centred = np.eye(n_vertices) - 1.0 / n_vertices
    basis = np.linalg.svd(centred)[0][:, : n_vertices - 1]
    coords = centred @ basis
    return coords / np.linalg.norm(coords, axis=1, keepdims=True)


def planted_hierarchy(rng: np.random.Generator, dim: int, n_parents: int, n_children: int) -> PlantedHierarchy:
    """Orthonormal basis from the QR of a Gaussian (d, d) draw: the first P columns are the parents, the next
    P(C − 1) the private child subspaces (needs P·C ≤ d)."""
    basis = np.linalg.qr(rng.standard_normal((dim, dim)))[0]
    parents = basis[:, :n_parents].T
    private = basis[:, n_parents : n_parents * n_children].T.reshape(n_parents, n_children - 1, dim)
    children = np.einsum("cj,pjd->pcd", regular_simplex(n_children), private)
    return PlantedHierarchy(parents=parents, children=children)


def sample_planted(
    rng: np.random.Generator,
    truth: PlantedHierarchy,
    n: int,
    p_active: float,
    parent_amplitude: tuple[float, float],
    child_amplitude: tuple[float, float],
    noise: float,
) -> np.ndarray:
    """n samples: x = Σ_p on_p(a_p·parent_p + b_p·child_{p, j_p}) + noise·ε, drawing on, a, j, b, ε in this order."""
    n_parents, n_children, dim = truth.children.shape
    on = rng.random((n, n_parents)) < p_active
    a = rng.uniform(*parent_amplitude, size=(n, n_parents)) * on
    which = rng.integers(0, n_children, size=(n, n_parents))
    b = rng.uniform(*child_amplitude, size=(n, n_parents)) * on
    child_weights = np.zeros((n, n_parents * n_children))
    np.put_along_axis(child_weights, np.arange(n_parents) * n_children + which, b, axis=1)
    x = a @ truth.parents + child_weights @ truth.children.reshape(-1, dim)
    return x + noise * rng.standard_normal((n, dim))


@dataclass(frozen=True)
class Recovery:
    """Recovery scores of one model against the planted truth."""

    parent_cos: np.ndarray
    parent_match: np.ndarray
    child_cos: np.ndarray
    consistent: np.ndarray

    @property
    def unique_parent_matches(self) -> int:
        return int(np.unique(self.parent_match).size)


def child_atoms(w: HSAEWeights) -> np.ndarray:
    """Ambient child atoms W_up,i D_c,i[:, j], shape (N, m, d)."""
    return np.matmul(w.W_up, w.D_c).transpose(0, 2, 1)


def recovery(w: HSAEWeights, truth: PlantedHierarchy) -> Recovery:
    """Per true parent the max cosine to a learned decoder column D_:,i and its argmax i; per true child the max
    cosine to an ambient child atom, and whether that atom's parent is the one matched to the child's parent."""
    dec = w.D / np.linalg.norm(w.D, axis=0, keepdims=True)
    parent_sim = truth.parents @ dec
    match = parent_sim.argmax(axis=1)
    atoms = child_atoms(w)
    n_children, dim = atoms.shape[1:]
    flat = atoms.reshape(-1, dim)
    norms = np.linalg.norm(flat, axis=1, keepdims=True)
    flat = np.divide(flat, norms, out=np.zeros_like(flat), where=norms > 0)
    child_sim = truth.children.reshape(-1, dim) @ flat.T
    best = child_sim.argmax(axis=1)
    true_parent = np.repeat(np.arange(truth.parents.shape[0]), truth.children.shape[1])
    return Recovery(
        parent_cos=parent_sim.max(axis=1),
        parent_match=match,
        child_cos=child_sim.max(axis=1),
        consistent=best // n_children == match[true_parent],
    )
