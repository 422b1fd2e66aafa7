"""The paired comparison read from the per-item arrays gives what a row-per-item computation gives: generated
submissions of a 60-item benchmark (some items without a value), stored through the repository, compared by the
use case and by a join of (item_id, value) rows on the common items written here."""

import random

import numpy as np
import pytest

from service.stats import mcnemar, paired_bootstrap
from tests.factories import admin, scored_submission, stored_benchmark
from usecases.benchmarks import compare
from usecases.services import Services

N = 60
KEY = [
    {
        "item_id": f"q{i:03d}",
        "num_options": 4,
        "answer_idx": 0,
        "film_id": "f",
        "split": "private" if i % 4 else "public",
    }
    for i in range(N)
]


def _store(services: Services, bench_id: str, rows: dict[str, dict[str, float]]) -> str:
    """A submission scored with ``rows`` ({split: {item_id: value}}) as its per-item accuracy."""
    items = {}
    for split in ("public", "private"):
        ids = sorted(k["item_id"] for k in KEY if k["split"] == split)
        items[split] = (ids, [rows[split].get(i, np.nan) for i in ids])
    return scored_submission(services, bench_id, items)


def _generated(rng: random.Random, graded: bool) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {"public": {}, "private": {}}
    for k in KEY:
        if rng.random() < 0.2:
            continue  # no value for this item
        out[k["split"]][k["item_id"]] = rng.choice([0.0, 0.25, 0.5, 1.0]) if graded else float(rng.random() < 0.6)
    return out


@pytest.mark.parametrize("graded", [False, True])
def test_compare_from_arrays_equals_a_row_per_item_computation(services: Services, graded: bool) -> None:
    root = admin(services)
    bench = stored_benchmark(services, root, items=KEY)
    rng = random.Random(7 + graded)
    subs = [_generated(rng, graded) for _ in range(3)]
    ids = [_store(services, bench.row.id, rows) for rows in subs]
    for (a, rows_a), (b, rows_b) in [((ids[0], subs[0]), (ids[1], subs[1])), ((ids[2], subs[2]), (ids[0], subs[0]))]:
        for split in ("public", "private"):
            got = compare(
                services, root, bench.row.id, a, b, split=split, metric=None, n_resamples=500, seed=3
            ).model_dump()
            common = sorted(rows_a[split].keys() & rows_b[split].keys())
            xa = np.array([rows_a[split][i] for i in common])
            xb = np.array([rows_b[split][i] for i in common])
            if graded:
                test, result = "paired_bootstrap", paired_bootstrap(xa, xb, 500, 3)
            else:
                test, result = "mcnemar_exact", mcnemar(xa, xb)
            assert got["n_common"] == len(common) > 0
            assert (got["test"], got["result"]) == (test, result)
            assert (got["mean_a"], got["mean_b"]) == (float(xa.mean()), float(xb.mean()))
