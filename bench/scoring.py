"""Scoring benchmarks (issue 3). Parts 1-2 (pure scoring and statistics); parts 3-4 live in platform_store.py.

(1) score 1,000,000 film_mcq predictions (mixed K = 4/5, 5,000 films, 7 narrative elements): the pure
    ``score()`` from already-built item lists, and separately the array path ``score_arrays`` (target < 2 s);
(2) percentile-bootstrap CI of a mean over 100,000 graded items (judge scores 0-5 rescaled (s/5)²·100),
    B = 1,000, ours vs ``scipy.stats.bootstrap(vectorized=True, method='percentile')``: target >= 5x faster,
    endpoints within 0.1 SE of scipy's. One run of B = 1,000 carries Monte Carlo noise of ~0.085 SE per
    endpoint (sd of a 2.5% quantile), so the endpoint check is made on the mean endpoints over 10 seeds;
    the single-seed gap is printed too. A continuous-valued sample (index resampling) is shown for contrast.

    .venv/bin/python bench/scoring.py
"""

import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.stats import bootstrap

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import platform_store

from service.scoring import film_mcq as fm
from service.stats import bootstrap_mean_ci, factorize

Row = tuple[str, str, str, str, str, str]


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """Minimum wall time of ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def film_items(shuffle: bool, n: int = 1_000_000) -> tuple[list[fm.AnswerKeyItem], list[fm.PredictionItem]]:
    """Already-validated item lists (``model_construct``: validation is the API layer's cost).

    With ``shuffle`` the predictions come in a random order, each object allocated in that order (as when a
    JSON body is parsed), so the matching cannot use the in-key-order shortcut.
    """
    rng = np.random.default_rng(0)
    k = rng.integers(4, 6, n).tolist()
    ans = rng.integers(0, 4, n)
    choice = np.where(rng.random(n) < 0.6, ans, rng.integers(0, 4, n)).tolist()
    ans = ans.tolist()
    elements = ["character", "event/plot", "causality", "emotion", "setting", "temporal order", "dialogue"]
    key = [
        fm.AnswerKeyItem.model_construct(
            item_id=f"item-{i:07d}",
            split="public",
            num_options=k[i],
            answer_idx=ans[i],
            film_id=f"film-{i % 5000:04d}",
            narrative_element=elements[i % 7],
            release_year=1922 + i % 58,
            modality_needed=None,
        )
        for i in range(n)
    ]
    order = rng.permutation(n).tolist() if shuffle else range(n)
    pred = [fm.PredictionItem.model_construct(item_id=f"item-{i:07d}", choice_idx=choice[i]) for i in order]
    return key, pred


def _budget_row(case: str, seconds: float) -> Row:
    shown = f"{seconds:.2f} s" if seconds >= 0.1 else f"{seconds * 1e3:.0f} ms"
    return ("1", case, shown, "2 s budget", f"{seconds / 2:.3f}× budget", "PASS" if seconds < 2 else "MISS")


def bench_film() -> list[Row]:
    params = fm.Params()
    rows = []
    for shuffle in (False, True):
        key, pred = film_items(shuffle)
        t = best_of(lambda key=key, pred=pred: fm.score(key, pred, params), 3)
        order = "shuffled" if shuffle else "in key order"
        rows.append(_budget_row(f"film_mcq score(), 10⁶ items, predictions {order}", t))
    key, pred = film_items(False)
    num_options = np.array([it.num_options for it in key])
    answer_idx = np.array([it.answer_idx for it in key])
    films, _ = factorize([it.film_id for it in key])
    pred_index = np.arange(len(pred))
    choice = np.array([p.choice_idx for p in pred])
    t = best_of(lambda: fm.score_arrays(num_options, answer_idx, films, pred_index, choice, params), 5)
    rows.append(_budget_row("film_mcq score_arrays(), 10⁶ items", t))
    return rows


def scipy_ci(x: np.ndarray, seed: int) -> tuple[float, float]:
    ci = bootstrap(
        (x,), np.mean, vectorized=True, method="percentile", n_resamples=1_000, rng=np.random.default_rng(seed)
    ).confidence_interval
    return float(ci.low), float(ci.high)


def bench_bootstrap() -> list[Row]:
    rng = np.random.default_rng(1)
    graded = (rng.integers(0, 6, 100_000) / 5.0) ** 2 * 100.0
    continuous = rng.random(100_000)
    rows = []
    for name, x in (("graded (6 values)", graded), ("continuous", continuous)):
        scipy_ci(x, 0)  # warm-up (page faults of the first large allocation)
        t_ours = best_of(lambda x=x: bootstrap_mean_ci(x, 1_000, seed=0), 5)
        t_scipy = best_of(lambda x=x: scipy_ci(x, 0), 3)
        low, high, se = bootstrap_mean_ci(x, 1_000, seed=0)
        s_low, s_high = scipy_ci(x, 0)
        single = max(abs(low - s_low), abs(high - s_high)) / se
        seeds = range(10)
        ours = np.mean([bootstrap_mean_ci(x, 1_000, seed=s)[:2] for s in seeds], axis=0)
        ref = np.mean([scipy_ci(x, 100 + s) for s in seeds], axis=0)
        averaged = float(np.max(np.abs(ours - ref)) / se)
        speed = t_scipy / t_ours
        rows.append(
            (
                "2",
                f"bootstrap B=1000, n=10⁵, {name}",
                f"{t_ours * 1e3:.1f} ms",
                f"scipy {t_scipy * 1e3:.0f} ms",
                f"{speed:.0f}× faster; Δ endpoints {single:.2f} SE (1 seed), {averaged:.3f} SE (10-seed mean)",
                ("PASS" if speed >= 5 and averaged <= 0.1 else "MISS") if name.startswith("graded") else "contrast",
            )
        )
    return rows


def main() -> None:
    rows = bench_film() + bench_bootstrap()
    print("| part | case | ours | anchor | result | target |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    platform_store.main()


if __name__ == "__main__":
    main()
