"""Layering rules (docs/architecture.md), checked on the imports of every module of every top-level package, and
imports free of side effects.

Each rule names what a package must never import and why. ``tests/`` has none: tests may reach any layer.
"""

import ast
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVER = {"service", "db", "usecases", "api"}
"""The service's layers, bottom to top."""
OUTSIDE = {"worker", "client", "scripts", "bench", "tests", "estibench"}
"""Entry points, tools and the test suite: nothing of the service imports them."""
WEB = {"fastapi", "starlette", "uvicorn"}
SQL = {"sqlalchemy", "alembic"}


class Rule(NamedTuple):
    forbidden: set[str]
    reason: str
    allowed: frozenset[str] = frozenset()
    """Modules under a forbidden name that are allowed all the same."""


RULES: dict[str, Rule] = {
    "service": Rule(
        (SERVER | OUTSIDE) - {"service"} | WEB | SQL,
        "the papers' pure functions run anywhere (numpy, scipy, pydantic), so a notebook or a worker can call them",
    ),
    "db": Rule(
        {"service", "usecases", "api"} | OUTSIDE | WEB,
        "repositories speak SQL over the caller's connection; what a row means is the use cases' business",
    ),
    "usecases": Rule(
        {"api"} | OUTSIDE | WEB,
        "a use case is called alike from a route, a job, a command or a test, so it knows no HTTP and no caller",
    ),
    "api": Rule(
        {"db"} | OUTSIDE | SQL,
        "the HTTP edge translates and calls use cases; storage goes through them (SQLAlchemy's error types only, "
        "to map an unreachable database to 503)",
        allowed=frozenset({"sqlalchemy.exc"}),
    ),
    "api/routers": Rule(
        {"db", "sqlalchemy", "api.routers"},
        "a route parses, calls one use case and shapes the answer: no statement, no repository, no row type; "
        "shared request and response models live in api/schemas/, so no router imports another",
    ),
    "worker": Rule(
        {"api", "db", "client", "scripts", "bench", "tests", "estibench"} | WEB | SQL,
        "the job worker is an entry point of its own: it runs use cases, never the HTTP layer",
    ),
    "client": Rule(
        (SERVER | OUTSIDE) - {"client"} | WEB | SQL,
        "the client is shipped to researchers alone: it speaks HTTP to the service and imports none of it",
    ),
    "scripts": Rule(
        {"tests", "bench", "worker", "client", "estibench"},
        "operator commands run on an installed service, where neither the test suite nor the benchmarks exist",
    ),
    "bench": Rule(
        {"worker", "client", "scripts", "estibench"},
        "benchmarks measure the layers directly (the test suite's process helpers included) and no entry point",
    ),
    "estibench": Rule(
        {"api", "db", "worker", "client", "scripts", "bench", "tests"} | WEB | SQL,
        "the researchers' in-process package runs use cases and pure functions; never the HTTP layer or SQL (it "
        "shares the client's notebook display, which is pure Python)",
        allowed=frozenset({"client.display"}),
    ),
}
UNRULED = {"tests": "tests reach every layer: a use case, a repository, the app"}


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


def violations(path: Path, rule: Rule) -> list[str]:
    return sorted(
        m
        for m in imported_modules(path)
        for f in rule.forbidden
        if (m == f or m.startswith(f + ".")) and not any(m == a or m.startswith(a + ".") for a in rule.allowed)
    )


def _packages() -> set[str]:
    """The top-level directories holding Python modules."""
    return {
        p.name
        for p in ROOT.iterdir()
        if p.is_dir() and not p.name.startswith(".") and next(p.rglob("*.py"), None) is not None
    }


def test_every_package_has_a_rule() -> None:
    assert _packages() - set(RULES) - set(UNRULED) == set()
    assert all(rule.reason for rule in RULES.values())


@pytest.mark.parametrize("package", sorted(RULES))
def test_package_respects_import_rule(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    if not files and package not in _packages():
        pytest.skip(f"{package}/ does not exist yet")
    bad = {str(f.relative_to(ROOT)): violations(f, RULES[package]) for f in files}
    assert {k: v for k, v in bad.items() if v} == {}, RULES[package].reason


def test_checker_sees_violations(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text(
        "import numpy as np\nfrom sqlalchemy.orm import Session\nfrom sqlalchemy.exc import OperationalError\n"
        "from db import repositories\nfrom . import m\n"
    )
    assert violations(f, RULES["api/routers"]) == [
        "db",
        "db.repositories",
        "sqlalchemy.exc",
        "sqlalchemy.exc.OperationalError",
        "sqlalchemy.orm",
        "sqlalchemy.orm.Session",
    ]
    assert violations(f, RULES["api"]) == ["db", "db.repositories", "sqlalchemy.orm", "sqlalchemy.orm.Session"]
    assert violations(f, RULES["usecases"]) == []


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
