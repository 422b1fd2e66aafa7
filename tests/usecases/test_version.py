"""usecases/version.py: the version recorded on runs is the one ``pyproject.toml`` declares (the installed
distribution's), not the fallback for a missing installation."""

import tomllib
from pathlib import Path

from usecases.version import CODE_VERSION

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_code_version_is_the_declared_one() -> None:
    declared = tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    assert declared == CODE_VERSION
