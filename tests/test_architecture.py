"""Layering rules (docs/architecture.md), checked on every module's imports, and imports free of side effects.

``service/`` imports nothing of the project but itself; ``db/`` neither ``service``, ``usecases`` nor ``api``;
the use-case layer and the worker entry never the web stack; routers never repositories or SQLAlchemy.
"""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT = {"service", "db", "usecases", "api", "worker", "client", "scripts", "tests", "bench"}
WEB = {"fastapi", "starlette", "uvicorn"}
FORBIDDEN: dict[str, set[str]] = {
    "service": (PROJECT - {"service"}) | WEB | {"sqlalchemy", "alembic"},
    "db": {"service", "usecases", "api", "worker", "client"} | WEB,
    "usecases": {"api", "worker", "client"} | WEB,
    "worker": {"api", "client"} | WEB,
    "api/routers": {"db.repositories", "sqlalchemy"},
    "client": {"service", "usecases", "api", "db", "worker", "sqlalchemy"} | WEB,
}


def imported_modules(path: Path) -> set[str]:
    """Every absolute module an import statement names (``from a.b import c`` names ``a.b`` and ``a.b.c``)."""
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module)
            modules.update(f"{node.module}.{alias.name}" for alias in node.names)
    return modules


def violations(path: Path, forbidden: set[str]) -> list[str]:
    return sorted(m for m in imported_modules(path) for f in forbidden if m == f or m.startswith(f + "."))


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_respects_import_rule(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"{package}/ has no modules"
    bad = {str(f.relative_to(ROOT)): violations(f, FORBIDDEN[package]) for f in files}
    assert {k: v for k, v in bad.items() if v} == {}


def test_checker_sees_violations(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text(
        "import numpy as np\nfrom sqlalchemy.orm import Session\nfrom db import repositories\nfrom . import m\n"
    )
    assert violations(f, FORBIDDEN["api/routers"]) == ["db.repositories", "sqlalchemy.orm", "sqlalchemy.orm.Session"]
    assert violations(f, FORBIDDEN["service"]) == ["db", "db.repositories", "sqlalchemy.orm", "sqlalchemy.orm.Session"]
    assert violations(f, FORBIDDEN["usecases"]) == []


def _project_modules() -> list[str]:
    """Every importable project module (alembic's migration scripts and ``__main__`` entry scripts excluded)."""
    names = []
    for package in ("service", "db", "usecases", "api", "worker", "client", "scripts"):
        for f in sorted((ROOT / package).rglob("*.py")):
            rel = f.relative_to(ROOT).with_suffix("")
            if "migrations" in rel.parts or rel.name == "__main__":
                continue
            names.append(".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts))
    return names


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_importing_every_module_creates_no_file(tmp_path: Path) -> None:
    modules = _project_modules()
    assert {"api.app", "usecases.services", "worker", "db.engine"} <= set(modules)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ESTIBENCH_")}
    env["PYTHONPATH"] = str(ROOT)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    code = "import importlib, sys\nfor m in sys.argv[1:]:\n    importlib.import_module(m)\n"
    done = subprocess.run(
        [sys.executable, "-c", code, *modules], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=110
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == []
