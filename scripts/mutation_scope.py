"""Narrow a mutation copy to one family: the files it mutates and the tests it runs.

Usage: ``python scripts/mutation_scope.py PYPROJECT --tests PATH... [--mutate GLOB...]``. Rewrites
``pytest_add_cli_args_test_selection`` (and, with ``--mutate``, ``only_mutate``) of ``[tool.mutmut]`` in PYPROJECT
(the copy's ``pyproject.toml``, never the working tree's), so that a family's run generates only its own mutants and
reruns only its own tests for each (``make mutation FAMILY=...`` passes the ``FAMILY_TESTS_*`` and
``FAMILY_FILES_*`` lists of the Makefile). The file is read back with ``tomllib`` to check the result.
"""

import argparse
import json
import re
import tomllib
from pathlib import Path


def _array(key: str) -> re.Pattern[str]:
    return re.compile(rf"^{key}\s*=\s*\[[^\]]*\]", re.MULTILINE)


def narrow(text: str, key: str, values: list[str]) -> str:
    """The pyproject text with ``[tool.mutmut]``'s array ``key`` replaced by ``values`` (basic TOML strings)."""
    if not values:
        raise ValueError(f"no value given for {key}")
    replaced, count = _array(key).subn(f"{key} = " + json.dumps(values, ensure_ascii=True), text)
    if count != 1:
        raise ValueError(f"expected one {key}, found {count}")
    if tomllib.loads(replaced)["tool"]["mutmut"][key] != values:
        raise ValueError(f"the rewritten {key} does not read back")
    return replaced


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pyproject", type=Path)
    parser.add_argument("--tests", nargs="+", required=True)
    parser.add_argument("--mutate", nargs="+", default=[])
    args = parser.parse_args(argv)
    text = narrow(args.pyproject.read_text(), "pytest_add_cli_args_test_selection", args.tests)
    if args.mutate:
        text = narrow(text, "only_mutate", args.mutate)
    args.pyproject.write_text(text)


if __name__ == "__main__":
    main()
