"""Encoder multiply-accumulates of a hierarchical SAE and of a flat SAE with as many latents, counted product by
product from the matrix shapes of one input row's encoding."""


def hierarchical_encoder_macs(d: int, n_parents: int, n_children: int, subspace: int, k: int) -> int:
    """The parent encoder (a d-vector times d × N), then for each of the k active parents only: the projection to its
    subspace (s × d) and its child encoder (m × s)."""
    parents = d * n_parents
    per_active = subspace * d + n_children * subspace
    return parents + k * per_active


def flat_encoder_macs(d: int, n_parents: int, n_children: int) -> int:
    """A flat encoder over the same N(1 + m) latents (every parent and every child): a d-vector times d × N(1 + m)."""
    return d * n_parents * (1 + n_children)
