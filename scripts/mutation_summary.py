"""Per-module counts of a mutmut 3 run: killed, timed out, survived, reached by no test, not run.

Usage: ``python scripts/mutation_summary.py [MUTATION_DIR] [NAME_PREFIX]``. Reads the ``mutants/**/*.meta`` files
mutmut writes (one exit code per mutant: 1 or 3 = a test failed, 0 = every test passed, 33 or 5 = no test reaches
the function, None = not run yet, anything else = killed by the timeout) and prints one row per module, then the
surviving mutants' names (``mutmut show <name>`` prints the edit).
"""

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

KIND = {1: "killed", 3: "killed", 0: "survived", 33: "no_tests", 5: "no_tests", None: "not_run"}
COLUMNS = ("killed", "timeout", "survived", "no_tests", "not_run")


def module_of(mutant: str) -> str:
    """``service.stats.tails.x_binom_tail_ge__mutmut_3`` → ``service.stats.tails`` (methods: ``xǁClassǁm``)."""
    return mutant.split(".x_")[0].split(".xǁ")[0]


def collect(root: Path, prefix: str) -> tuple[dict[str, Counter[str]], list[str]]:
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    survivors: list[str] = []
    for meta in sorted((root / "mutants").rglob("*.meta")):
        for name, code in json.loads(meta.read_text()).get("exit_code_by_key", {}).items():
            if not name.startswith(prefix):
                continue
            kind = KIND.get(code, "timeout")
            counts[module_of(name)][kind] += 1
            if kind in ("survived", "no_tests"):
                survivors.append(name)
    return counts, survivors


def main(argv: list[str]) -> None:
    root = Path(argv[1]) if len(argv) > 1 else Path("/tmp/estibench-mutation")
    counts, survivors = collect(root, argv[2] if len(argv) > 2 else "")
    print(f"{'module':<44}" + "".join(f"{c:>10}" for c in COLUMNS) + f"{'raw kill':>10}")
    for module, c in sorted(counts.items()):
        run = sum(c.values()) - c["not_run"]
        rate = f"{(c['killed'] + c['timeout']) / run:.1%}" if run else "-"
        print(f"{module:<44}" + "".join(f"{c[k]:>10}" for k in COLUMNS) + f"{rate:>10}")
    print("\nnot killed:", *survivors, sep="\n  ")


if __name__ == "__main__":
    main(sys.argv)
