"""Speed of the count-level MOEA/D simulator against pymoo's MOEAD and against numpy's raw binomial draws.

Run: ``.venv/bin/python bench/moead.py`` (about 30 s). Measures simulated evaluations per second:

* ours: ``omm_runtimes`` (own parent, ``<=``, Tchebycheff, standard bit mutation) run to completion,
  R replicates in lockstep; evaluations of replicates still running / wall time (best of 3);
* limit: numpy's ``Generator.binomial`` at the same batch shape, two R-length draws (ones and zeros
  flipped) per evaluation step, the floor of any binomial-based simulator of this process;
* pymoo 0.6 ``MOEAD`` (bench-only dependency) on OneMinMax: bit-flip mutation at rate 1/n, a copying
  pass-through crossover, 2r+1 nearest weight vectors, archive tracked inside the problem's
  ``_evaluate``; run in a subprocess with a timeout for a bounded number of generations.

pymoo pitfall found here: ``NoCrossover`` returns the parent *individuals themselves*; ``Mutation.do``
then mutates them in place and the evaluator skips them as already evaluated, so the population drifts
without evaluations and an evaluation-count termination never fires. The copying crossover below avoids it.
Prints a markdown table (wall clock on the machine it runs on).
"""

import json
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

from service.estimators.moead import default_max_evals
from service.estimators.moead_sim import omm_runtimes

PYMOO_TIMEOUT = 300.0


def best_of(fn: Callable[[], float], repeat: int) -> float:
    """Maximum of ``repeat`` rate measurements (the least disturbed run on a shared machine)."""
    return max(fn() for _ in range(repeat))


def ours_rate(n: int, r: int, reps: int) -> float:
    t0 = time.perf_counter()
    _, work = omm_runtimes(n, n + 1, r, reps, np.random.default_rng(0), max_evals=default_max_evals(n))
    return work / (time.perf_counter() - t0)


def binomial_limit(n: int, reps: int, steps: int = 20_000) -> float:
    """Evaluations/s if each evaluation step cost only two ``rng.binomial`` calls on R-length arrays."""
    rng = np.random.default_rng(0)
    ones = rng.binomial(n, 0.5, size=reps)
    zeros = n - ones
    p = 1.0 / n
    t0 = time.perf_counter()
    for _ in range(steps):
        rng.binomial(ones, p)
        rng.binomial(zeros, p)
    return steps * reps / (time.perf_counter() - t0)


def pymoo_run(n: int, r: int, n_gen: int) -> dict[str, float | int | None]:
    """One pymoo MOEAD run on OneMinMax (called in a subprocess)."""
    from pymoo.algorithms.moo.moead import MOEAD
    from pymoo.core.crossover import Crossover
    from pymoo.core.problem import Problem
    from pymoo.operators.mutation.bitflip import BitflipMutation
    from pymoo.operators.sampling.rnd import BinaryRandomSampling
    from pymoo.optimize import minimize

    class CopyCrossover(Crossover):
        def __init__(self) -> None:
            super().__init__(1, 1, prob=1.0)

        def _do(self, problem: Problem, x: np.ndarray, **kwargs: object) -> np.ndarray:
            return x.copy()

    class OneMinMax(Problem):
        """Minimise (|x|₁, n − |x|₁); records the archive of |x|₁ over every evaluation."""

        def __init__(self) -> None:
            super().__init__(n_var=n, n_obj=2, xl=0, xu=1, vtype=bool)
            self.seen: set[int] = set()
            self.evals = 0
            self.covered_at: int | None = None

        def _evaluate(self, x: np.ndarray, out: dict, *args: object, **kwargs: object) -> None:
            ones = x.sum(axis=1)
            for k in ones.tolist():
                self.evals += 1
                self.seen.add(k)
                if self.covered_at is None and len(self.seen) == n + 1:
                    self.covered_at = self.evals
            out["F"] = np.column_stack([ones, n - ones]).astype(float)

    w = np.linspace(0.0, 1.0, n + 1)
    algorithm = MOEAD(
        ref_dirs=np.column_stack([w, 1.0 - w]),
        n_neighbors=2 * r + 1,
        prob_neighbor_mating=1.0,
        sampling=BinaryRandomSampling(),
        crossover=CopyCrossover(),
        mutation=BitflipMutation(prob=1.0, prob_var=1.0 / n),
    )
    problem = OneMinMax()
    t0 = time.perf_counter()
    minimize(problem, algorithm, ("n_gen", n_gen), seed=1, verbose=False)
    seconds = time.perf_counter() - t0
    return {"evals": problem.evals, "seconds": seconds, "covered_at": problem.covered_at}


def pymoo_rate(n: int, r: int, n_gen: int) -> tuple[float | None, str]:
    cmd = [sys.executable, __file__, "--pymoo", str(n), str(r), str(n_gen)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=PYMOO_TIMEOUT, check=True)
    except subprocess.TimeoutExpired:
        return None, f"no result within {PYMOO_TIMEOUT:.0f} s"
    res = json.loads(out.stdout.strip().splitlines()[-1])
    covered = f"front covered at {res['covered_at']} evals" if res["covered_at"] else "front not covered"
    return res["evals"] / res["seconds"], f"{res['evals']} evals in {res['seconds']:.1f} s, {covered}"


def main() -> None:
    r = 1
    rows = []
    for n, n_gen in ((16, 400), (64, 200)):
        py_rate, py_note = pymoo_rate(n, r, n_gen)
        for reps in (1, 30, 100, 1000):
            ours = best_of(lambda n=n, reps=reps: ours_rate(n, r, reps), 3)
            limit = best_of(lambda n=n, reps=reps: binomial_limit(n, reps, 20_000 if reps < 1000 else 4000), 3)
            rows.append(
                (
                    f"n={n}, r={r}, R={reps}",
                    f"{ours / 1e6:.2f} M/s",
                    f"{limit / 1e6:.2f} M/s",
                    f"{ours / limit:.2f}",
                    f"{py_rate / 1e3:.1f} k/s" if py_rate else "—",
                    f"{ours / py_rate:,.0f}x" if py_rate else "—",
                )
            )
        print(f"pymoo n={n}: {py_note}", flush=True)
    print()
    print("| configuration | ours (evals/s) | binomial limit (evals/s) | ours / limit | pymoo MOEAD | ours / pymoo |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print("\nGoals: ours / pymoo >= 100; ours / limit >= 0.5.")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--pymoo":
        print(json.dumps(pymoo_run(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))))
    else:
        main()
