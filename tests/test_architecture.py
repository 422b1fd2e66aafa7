"""Import rule (ARCHITECTURE §1): service/ never imports fastapi, sqlalchemy, api or db; db/ never imports service/."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "service": {"fastapi", "starlette", "sqlalchemy", "alembic", "api", "db"},
    "db": {"service", "api", "fastapi", "starlette"},
    "client": {"service", "api", "db", "fastapi", "starlette", "sqlalchemy"},
}


def imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_respects_import_rule(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"{package}/ has no modules"
    bad = {
        str(f.relative_to(ROOT)): sorted(imported_roots(f) & FORBIDDEN[package])
        for f in files
        if imported_roots(f) & FORBIDDEN[package]
    }
    assert bad == {}


def test_checker_sees_a_violation(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("import numpy as np\nfrom sqlalchemy.orm import Session\nfrom . import sibling\n")
    assert imported_roots(f) == {"numpy", "sqlalchemy"}
