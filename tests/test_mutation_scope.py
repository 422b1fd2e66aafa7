"""scripts/mutation_scope.py: a family's mutation run mutates and selects only its own files and tests, the rest of
the config unchanged."""

import tomllib
from pathlib import Path

import pytest

from scripts.mutation_scope import main, narrow

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
SELECTION = "pytest_add_cli_args_test_selection"


def test_the_selection_and_the_mutated_files_are_replaced_and_everything_else_is_kept(tmp_path: Path) -> None:
    copy = tmp_path / "pyproject.toml"
    copy.write_text(PYPROJECT.read_text())
    tests = ["tests/service/test_snn.py", "tests/test_result_fields.py"]
    main([str(copy), "--tests", *tests, "--mutate", "service/estimators/snn*"])
    before, after = tomllib.loads(PYPROJECT.read_text()), tomllib.loads(copy.read_text())
    assert after["tool"]["mutmut"][SELECTION] == tests
    assert after["tool"]["mutmut"]["only_mutate"] == ["service/estimators/snn*"]
    assert (
        len(before["tool"]["mutmut"][SELECTION]) > len(tests) and "service/*" in before["tool"]["mutmut"]["only_mutate"]
    )
    for config in (before, after):
        del config["tool"]["mutmut"][SELECTION], config["tool"]["mutmut"]["only_mutate"]
    assert after == before


def test_without_mutate_the_mutated_files_stay(tmp_path: Path) -> None:
    copy = tmp_path / "pyproject.toml"
    copy.write_text(PYPROJECT.read_text())
    main([str(copy), "--tests", "tests/service/test_snn.py"])
    after = tomllib.loads(copy.read_text())["tool"]["mutmut"]
    assert after[SELECTION] == ["tests/service/test_snn.py"]
    assert after["only_mutate"] == tomllib.loads(PYPROJECT.read_text())["tool"]["mutmut"]["only_mutate"]


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("[tool.mutmut]\nonly_mutate = []\n", ["tests/a.py"]),
        (f"[tool.mutmut]\n{SELECTION} = []\n", []),
    ],
)
def test_no_array_or_no_values_is_refused(text: str, values: list[str]) -> None:
    with pytest.raises(ValueError):
        narrow(text, SELECTION, values)
