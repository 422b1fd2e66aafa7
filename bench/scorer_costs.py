"""Calibration of every scorer's cost model: seconds per cost unit of ``score`` on large inputs, and the cost one
second buys (the ``sync_budget`` a scorer should declare so that its largest synchronous call takes about 1 s).

Inputs are the scorers' test fixtures tiled to the sizes below (item ids suffixed), and for U-Bench 1024 × 1024
masks as resolved npy uploads with HD95 on: lesion-like cases, and random masks (the worst case, surfaces filling
the image). Each row scores the items as the platform does (``usecases.scoring.score_all``: item_id order, then
``spec.score``), best CPU time of ``--repeat`` runs.

    .venv/bin/python bench/scorer_costs.py [--repeat 3] [--only film_mcq,zbb,ubench_noise]
"""

import argparse
import json
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import TypeAdapter

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.registry import SCORERS, load_all  # noqa: E402
from usecases.scoring import score_all  # noqa: E402

FIXTURES = ROOT / "tests" / "service" / "fixtures"


def tiled(stem: str, n: int) -> tuple[list[Any], list[Any]]:
    """Scorer ``stem``'s fixture answer key and predictions repeated to about ``n`` key items (ids made unique)."""
    spec = SCORERS[stem]
    key = TypeAdapter(dict[str, list[spec.answer_key_item_model]]).validate_json(
        (FIXTURES / f"{stem}_key.json").read_bytes()
    )["items"]
    preds = TypeAdapter(dict[str, list[spec.prediction_item_model]]).validate_json(
        (FIXTURES / f"{stem}_predictions.json").read_bytes()
    )["items"]
    reps = max(1, n // len(key))

    def copies(items: list[Any]) -> list[Any]:
        return [i.model_copy(update={"item_id": f"{i.item_id}-{r}"}) for r in range(reps) for i in items]

    return copies(key), copies(preds)


def zbb_items(n: int) -> tuple[list[Any], list[Any]]:
    from service.scoring import zbb
    from tests.service.test_scoring_zbb import FIXTURE

    reps = max(1, n // len(FIXTURE))
    key = [
        zbb.AnswerKeyItem(item_id=f"{r[0]}-{k}", user_text=r[1], reference=r[2], aliases=r[3])
        for k in range(reps)
        for r in FIXTURE
    ]
    preds = [
        zbb.PredictionItem(item_id=f"{r[0]}-{k}", response_text=r[6], judge_correct=r[7])
        for k in range(reps)
        for r in FIXTURE
    ]
    return key, preds


def raven_items(n: int) -> tuple[list[Any], list[Any]]:
    """RAVEN-Bench videos of 12 questions (the synthetic table's groups), answered as its eo_ir row, with raw
    responses to parse."""
    from service.scoring import raven
    from tests.service.test_scoring_raven import TABLE, video_key

    flags = "".join(TABLE["eo_ir"][:2])
    key = [k for v in range(max(1, n // len(flags))) for k in video_key(f"v{v}")]
    preds = [
        raven.PredictionItem(item_id=k.item_id, raw_response=f"The answer is {k.correct if f == '1' else 'D'}.")
        for k, f in zip(key, flags * (len(key) // len(flags)), strict=True)
    ]
    return key, preds


def ubench_items(n: int) -> tuple[list[Any], list[Any]]:
    from bench.scorers import lesion_masks
    from service.scoring import ubench

    preds, gts = lesion_masks(n=n)
    key = [ubench.AnswerKeyItem(item_id=f"c{i}", mask=[[0]]) for i in range(n)]
    pred = [ubench.PredictionItem(item_id=f"c{i}", mask=[[0.0]]) for i in range(n)]
    for k, p, g, q in zip(key, pred, gts, preds, strict=True):
        k.mask = g.astype(np.uint8)  # as resolved from an npy upload
        p.mask = q.astype(np.float32)
    return key, pred


def ubench_noise(n: int) -> tuple[list[Any], list[Any]]:
    """U-Bench's worst case: random 1024 × 1024 masks, whose surfaces fill the image (the cost model's bound)."""
    from service.scoring import ubench

    rng = np.random.default_rng(0)
    key = [ubench.AnswerKeyItem(item_id=f"c{i}", mask=[[0]]) for i in range(n)]
    pred = [ubench.PredictionItem(item_id=f"c{i}", mask=[[0.0]]) for i in range(n)]
    for k, p in zip(key, pred, strict=True):
        k.mask = (rng.random((1024, 1024)) < 0.5).astype(np.uint8)
        p.mask = rng.random((1024, 1024)).astype(np.float32)
    return key, pred


Builder = Callable[[int], tuple[list[Any], list[Any]]]
CASES: dict[str, tuple[str, Builder, list[int], dict[str, Any]]] = {
    "film_mcq": ("film_mcq", partial(tiled, "film_mcq"), [20_000, 100_000], {}),
    "stakebench": ("stakebench", partial(tiled, "stakebench"), [20_000, 100_000], {}),
    "vimu": ("vimu", partial(tiled, "vimu"), [20_000, 50_000], {}),
    "televal": ("televal", partial(tiled, "televal"), [20_000, 50_000], {}),
    "zbb": ("zbb", zbb_items, [5_000, 20_000], {}),
    "raven": ("raven", raven_items, [4_800, 19_200], {}),
    "ubench": ("ubench", ubench_items, [2, 6], {"n_resamples": 0}),
    "ubench_noise": ("ubench", ubench_noise, [1, 2], {"n_resamples": 0}),
}
"""Case -> (scorer, item builder, key sizes, params overrides). vimu and televal stop at 50,000 items, the largest
answer key their default bootstrap (B = 1000, B·n ≤ 5e7) accepts; zbb and raven near their 20,000-item limit.
The scene3d scorers' budgets were measured by their module (see their ``SYNC_BUDGET`` docstrings)."""


def best_of(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(wall, CPU) seconds of the fastest of ``repeat`` runs. The CPU time is the figure calibrated on: the shared
    machine's load inflates the wall clock several times."""
    runs = []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        runs.append((time.perf_counter() - w0, time.process_time() - c0))
    return min(runs, key=lambda r: r[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="Comma-separated scorer names (default: all).")
    args = parser.parse_args()
    load_all()
    chosen = [s for s in args.only.split(",") if s] or list(CASES)
    print("| scorer | key items | cost | cost unit | wall s | CPU s | units per CPU s | sync_budget | its CPU s |")
    print("|---|---|---|---|---|---|---|---|---|")
    summary = {}
    for name in chosen:
        scorer, build, sizes, overrides = CASES[name]
        spec = SCORERS[scorer]
        params = spec.params_model(**overrides)
        for n in sizes:
            key, preds = build(n)
            cost = float(spec.cost(key, preds, params))
            wall, cpu = best_of(partial(score_all, spec, key, preds, params), args.repeat)
            rate = cost / cpu
            summary[name] = rate
            print(
                f"| {name} | {len(key)} | {cost:.4g} | {spec.cost_unit} | {wall:.3f} | {cpu:.3f} | {rate:.3g} | "
                f"{spec.sync_budget:.3g} | {spec.sync_budget / rate:.2f} |"
            )
    print(json.dumps({k: f"{v:.3g} units per CPU second" for k, v in summary.items()}))


if __name__ == "__main__":
    main()
