"""One-parameter continuation of the zero state's spectral abscissa, with static and Hopf crossings by bisection."""

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from service.errors import InvalidInput
from service.estimators.hyperconnections_ode import System, attention_spectrum, block_matrices, grouped_eigenvalues

TARGET_PATTERN = r"^(a_r\[[0-3]\]\[[0-3]\]|alpha\[[0-3]\]|beta\[[0-3]\]|scale_v)$"
BISECTION_TOL = 1e-10
MAX_BISECTIONS = 200
UNSTABLE_TOL = 1e-12
"""The zero state counts as unstable once the spectral abscissa exceeds this (a zero plateau is not a crossing)."""
HOPF_IM_TOL = 1e-6


@dataclass(frozen=True)
class Crossing:
    value: float
    type: str
    omega: float | None


def family(system: System, target: str, loc: tuple[str, ...]) -> Callable[[float], System]:
    """The system with the named parameter set to a value (``scale_v``: V multiplied by the value); indices 0-based."""
    n = system.a_r.shape[0]
    idx = [int(i) for i in re.findall(r"\[(\d)\]", target)]
    if any(i >= n for i in idx):
        raise InvalidInput(f"index out of range for n_streams = {n}: {target}", loc=loc)
    if target == "scale_v":
        return lambda s: replace(system, v=s * system.v)
    if target.startswith("a_r"):

        def with_a_r(s: float) -> System:
            a_r = system.a_r.copy()
            a_r[idx[0], idx[1]] = s
            return replace(system, a_r=a_r)

        return with_a_r
    name = target.split("[")[0]

    def with_vector(s: float) -> System:
        vec = getattr(system, name).copy()
        vec[idx[0]] = s
        return replace(system, **{name: vec})

    return with_vector


def leading_eigenvalue(system: System, block_p: np.ndarray, block_mu: np.ndarray) -> complex:
    """An eigenvalue of largest real part over the closed-form blocks (largest |Im| among ties within 1e-12)."""
    values = np.linalg.eigvals(block_matrices(system, block_p, block_mu)).ravel()
    top = values[values.real >= values.real.max() - 1e-12]
    return complex(top[np.argmax(np.abs(top.imag))])


def continuation(
    system: System, target: str, grid: np.ndarray, loc: tuple[str, ...], progress: Callable[[float], None]
) -> tuple[np.ndarray, list[Crossing]]:
    """Spectral abscissa along ``grid`` and every crossing between neighbouring grid points, located by bisection to
    1e-10 in the parameter; a crossing is ``hopf`` (ω = |Im λ|) when the leading eigenvalue just past it is complex."""
    at = family(system, target, loc)
    p, _ = attention_spectrum(system.n_tokens, system.causal)
    mu, _ = grouped_eigenvalues(system.v)
    block_p = np.repeat(p, mu.size)

    def lead(s: float) -> complex:
        sys_s = at(s)
        scaled = mu * s if target == "scale_v" else mu
        return leading_eigenvalue(sys_s, block_p, np.tile(scaled, p.size))

    abscissa = np.empty(grid.size)
    for i, s in enumerate(grid):
        abscissa[i] = lead(float(s)).real
        progress(0.5 * (i + 1) / grid.size)
    unstable = abscissa > UNSTABLE_TOL
    crossings = []
    brackets = np.flatnonzero(unstable[:-1] != unstable[1:])
    for done, k in enumerate(brackets):
        stable_end, unstable_end = (grid[k], grid[k + 1]) if unstable[k + 1] else (grid[k + 1], grid[k])
        for _ in range(MAX_BISECTIONS):
            if abs(unstable_end - stable_end) <= BISECTION_TOL:
                break
            mid = 0.5 * (stable_end + unstable_end)
            if mid in (stable_end, unstable_end):
                break
            if lead(float(mid)).real > UNSTABLE_TOL:
                unstable_end = mid
            else:
                stable_end = mid
        eig = lead(float(unstable_end))
        hopf = abs(eig.imag) > HOPF_IM_TOL
        crossings.append(
            Crossing(
                value=float(0.5 * (stable_end + unstable_end)),
                type="hopf" if hopf else "static",
                omega=abs(eig.imag) if hopf else None,
            )
        )
        progress(0.5 + 0.5 * (done + 1) / brackets.size)
    return abscissa, crossings
