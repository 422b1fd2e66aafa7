"""Calibration of every estimator's synchronous budget: for each one, the largest params its ``sync_budget`` admits
along one size knob (found by bisection on the ``cost`` function), then the time of that computation with its params
validated from Python objects (JSON parsing and HTTP not included).

Run: ``.venv/bin/python bench/sync_budgets.py [name ...]`` (about a minute for all). The target is about 1 s or less
per call on the machine it runs on, in a warm process (a small call first, so one-time set-up is not
counted); the printed table (the knob's value at the budget, its cost, wall and CPU seconds) is the record the
``sync_budget`` constants in ``service/estimators/`` follow.
"""

import sys
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import numpy as np

from service.errors import DomainError
from service.registry import ESTIMATORS, load_all, no_progress

Builder = Callable[[int], dict[str, Any]]


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _matrix(rows: int, cols: int) -> list[list[float]]:
    return _rng().normal(size=(rows, cols)).round(4).tolist()


def _ints(n: int) -> list[int]:
    return list(range(n))


def _sketch(k: int) -> dict[str, Any]:
    from service.estimators.minhash import SketchParams, sketch_fn

    out = sketch_fn(SketchParams(items=_ints(1000), num_perm=k), no_progress)
    return out.sketch.model_dump(mode="json") if hasattr(out, "sketch") else out.model_dump(mode="json")


BUILDERS: dict[str, tuple[str, int, int, Builder]] = {
    # name: (knob, lowest, highest, params for a knob value)
    "axial_slr.pgd": ("iterations", 1, 20_000, lambda s: {"m": 8, "n": 8, "d": 64, "iterations": s}),
    "axial_slr.risk": ("n_mc", 100, 100_000, lambda s: {"m": 16, "n": 16, "d": 128, "n_mc": s}),
    "compression.batch_regret": (
        "features p (n = m = 200)",
        1,
        500,
        lambda s: {"model": "gaussian_linear", "X": _matrix(200, s), "X_test": _matrix(200, s)},
    ),
    "compression.codelength": ("K", 1, 100_000, lambda s: {"counts": [100] * s, "method": "nml"}),
    "compression.double_descent": (
        "n_test (n = 100, widths 10-100, 1 rep)",
        1,
        10_000,
        lambda s: {"n": 100, "widths": [10 * (i + 1) for i in range(10)], "reps": 1, "n_test": s},
    ),
    "compression.nml_regret": ("n", 0, 10_000_000, lambda s: {"num_symbols": 100_000, "n": s}),
    "fdslm.perception_vector": (
        "samples (16 layers × 256)",
        1,
        100_000,
        lambda s: {"hidden_states": _rng().normal(size=(s, 16, 256)), "labels": np.resize([1, -1], s)},
    ),
    "fdslm.state_lag": (
        "sequences (scores, 200 frames each)",
        1,
        100_000,
        lambda s: {"scores": _rng().normal(size=(s, 200)), "onset": 100},
    ),
    "hyperconnections.token_dynamics": (
        "t_max",
        1,
        1000,
        lambda s: {
            "n_streams": 4,
            "n_tokens": 64,
            "dim": 32,
            "a_r": np.eye(4).tolist(),
            "alpha": [1.0, 0.5, 0.25, 0.1],
            "beta": [1.0, 1.0, 1.0, 1.0],
            "t_max": float(s),
            "dt": 0.05,
        },
    ),
    "layer_patching.plan": (
        "layers M (table mode)",
        2,
        16,
        lambda s: {"cost_model": {"kind": "table", "loss": _rng().random(2**s).tolist()}, "block_sizes": [1] * s},
    ),
    "minhash.jaccard": (
        "items per set (K = 4096)",
        1,
        100_000,
        lambda s: {"items_a": _ints(s), "items_b": _ints(2 * s)[s // 2 :][:s], "num_perm": 4096},
    ),
    "minhash.minner": (
        "items (K = 4096)",
        1,
        100_000,
        lambda s: {"items": _ints(s), "sketch": _sketch(4096)},
    ),
    "minhash.simulate": (
        "trials",
        2,
        20_000,
        lambda s: {"intersection": 1000, "union": 4000, "universe": 1_048_576, "num_perm": 1024, "trials": s},
    ),
    "minhash.sketch": ("items (K = 4096)", 1, 100_000, lambda s: {"items": _ints(s), "num_perm": 4096}),
    "minhash.variance": (
        "union (universe = 2 × union)",
        2,
        10**12,
        lambda s: {"intersection": s // 3, "union": s, "universe": 2 * s, "num_perm": 4096},
    ),
    "moead.omm_runtime": ("n", 2, 512, lambda s: {"n": s, "reps": 30}),
    "moead.omm_scaling": ("largest n", 4, 512, lambda s: {"ns": [2, max(3, s // 2), s], "reps": 10}),
    "predictive_coding.target_alignment": (
        "n_draws (dims 256³)",
        1,
        10_000,
        lambda s: {"dims": [256, 256, 256, 256], "batch": 64, "n_draws": s},
    ),
    "sae.hierarchical_recovery": ("steps", 1, 5000, lambda s: {"steps": s}),
    "sae.hierarchical_train": ("steps", 1, 5000, lambda s: {"steps": s, "x": _rng().normal(size=(20_000, 64))}),
    "snn.gradient_mismatch": (
        "batch_size (sizes 128-256-256-10, T = 32)",
        1,
        150,
        lambda s: {"sizes": [128, 256, 256, 10], "time_steps": 32, "batch_size": s, "eps": [0.1, 0.5, 1.0]},
    ),
    "snn.threshold_tail": (
        "batch (T = 64, 256 neurons)",
        1,
        600,
        lambda s: {"v": [_rng().normal(size=(64, s, 256))], "eps": [0.1, 0.5, 1.0]},
    ),
    "steering.gradient_signature": (
        "n (L = 8, d = 1024)",
        1,
        4096,
        lambda s: {
            "grads": {"method": _rng().normal(size=(s, 8, 1024))},
            "axis": _rng().normal(size=(8, 1024)),
            "baseline": "method",
        },
    ),
    "steering.persona_vector": (
        "n (L = 32, d = 1024)",
        1,
        256,
        lambda s: {
            "pos": _rng().normal(size=(s, 32, 1024)),
            "neg": _rng(1).normal(size=(s, 32, 1024)),
        },
    ),
    "ubench.friedman_nemenyi": ("datasets (200 models)", 2, 500, lambda s: {"scores": _rng().normal(size=(s, 200))}),
    "ubench.paired_significance": (
        "n",
        3,
        100_000,
        lambda s: {"model": _rng().normal(size=s), "baseline": _rng(1).normal(size=s)},
    ),
    "ubench.seg_metrics": (
        "cases of 256²",
        1,
        64,
        lambda s: {
            "pred": [(_rng().random((256, 256)) > 0.5).astype(float)] * s,
            "gt": [(_rng(1).random((256, 256)) > 0.5).astype(np.int64)] * s,
        },
    ),
    "ubench.uscore": (
        "calls",
        1,
        1,
        lambda s: {
            "iou": 0.8,
            "params_m": 10.0,
            "gflops": 5.0,
            "fps": 30.0,
            "log_params_quantiles": {"q10": 0.0, "q90": 3.0},
            "log_gflops_quantiles": {"q10": 0.0, "q90": 3.0},
            "fps_quantiles": {"q10": 1.0, "q90": 100.0},
            "weights": [1.0, 1.0, 1.0],
            "iou_quantiles": {"q10": 0.5, "q90": 0.9},
        },
    ),
    "unrolling.jacobian_error": (
        "iterations (p = 500)",
        1,
        20_000,
        lambda s: {
            "problem": {
                "kind": "quadratic",
                "h": np.diag(np.linspace(1, 10, 500)).tolist(),
                "dh": np.eye(500).tolist(),
                "b": [1.0] * 500,
                "db": [0.5] * 500,
            },
            "step_rule": "1/L",
            "iterations": s,
            "k0_list": [0, s // 2],
        },
    ),
}


REF = {"array": "sha256:" + "0" * 64}


def instantiate(name: str, raw: dict[str, Any]) -> Any:
    """Validated params of ``name``; numpy arrays (alone, in a list or as dict values) stand for uploaded arrays:
    validated as references, then put in place as the API's reference resolution does."""
    spec = ESTIMATORS[name]
    plain: dict[str, Any] = {}
    arrays: dict[str, Any] = {}
    for key, value in raw.items():
        if isinstance(value, np.ndarray):
            plain[key], arrays[key] = REF, value
        elif isinstance(value, list) and value and isinstance(value[0], np.ndarray):
            plain[key], arrays[key] = [REF] * len(value), value
        elif isinstance(value, dict) and value and all(isinstance(v, np.ndarray) for v in value.values()):
            plain[key], arrays[key] = dict.fromkeys(value, REF), value
        else:
            plain[key] = value
    return spec.params_model.model_validate(plain).model_copy(update=arrays)


def cost_of(name: str, build: Builder, s: int) -> float:
    return float(ESTIMATORS[name].cost(instantiate(name, build(s))))


def largest_within_budget(name: str, lo: int, hi: int, build: Builder) -> int | None:
    """The largest knob value in [lo, hi] whose cost is within the sync budget (None if even ``lo`` is over)."""
    budget = ESTIMATORS[name].sync_budget
    if cost_of(name, build, lo) > budget:
        return None
    if cost_of(name, build, hi) <= budget:
        return hi
    while hi - lo > max(1, lo // 100):
        mid = (lo + hi) // 2
        if cost_of(name, build, mid) <= budget:
            lo = mid
        else:
            hi = mid
    return lo


def time_call(name: str, params: Any) -> tuple[float, float]:
    """(wall, CPU) seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    ESTIMATORS[name].fn(params, no_progress)
    return time.perf_counter() - wall, time.process_time() - cpu


def main(names: list[str]) -> None:
    load_all()
    print("| estimator | sync_budget | knob | value | cost | wall s | CPU s |")
    print("|---|---|---|---|---|---|---|")
    for name in names or sorted(ESTIMATORS):
        spec = ESTIMATORS[name]
        knob, lo, hi, build = BUILDERS[name]
        size = largest_within_budget(name, lo, hi, build)
        if size is None:
            print(f"| {name} | {spec.sync_budget:.3g} | {knob} | below {lo} | | | |", flush=True)
            continue
        params = instantiate(name, build(size))
        try:
            with suppress(DomainError, ValueError):  # first-call set-up (imports, tables) is not the call's
                time_call(name, instantiate(name, build(lo)))
            wall, cpu = time_call(name, params)
        except (DomainError, ValueError) as exc:
            print(f"| {name} | {spec.sync_budget:.3g} | {knob} | {size} | refused: {exc} | | |", flush=True)
            continue
        cost = float(spec.cost(params))
        print(
            f"| {name} | {spec.sync_budget:.3g} | {knob} | {size} | {cost:.3g} | {wall:.2f} | {cpu:.2f} |", flush=True
        )


if __name__ == "__main__":
    main(sys.argv[1:])
