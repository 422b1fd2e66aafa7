"""Shared fixtures: a database migrated once per session (template), copied or truncated per test.

``ESTIBENCH_TEST_DATABASE_URL`` selects PostgreSQL (``make test-postgres``); the default is SQLite files.
Tests needing PostgreSQL or Redis skip when those are unreachable, unless ``ESTIBENCH_REQUIRE_SERVICES=1``.
"""

import fcntl
import functools
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from db.base import Base
from db.migrate import alembic_config, upgrade
from service.registry import ESTIMATORS, SCORERS, load_all
from tests import support_estimators
from tests.factories import ADMIN_KEY, serving
from usecases.settings import Settings

PG_URL = os.environ.get("ESTIBENCH_TEST_DATABASE_URL", "")
REQUIRE_SERVICES = os.environ.get("ESTIBENCH_REQUIRE_SERVICES") == "1"
DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
DEFAULT_REDIS = "redis://127.0.0.1:6379/0"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under ``tests/browser/`` carries the ``browser`` marker (``make test-browser``)."""
    browser_dir = Path(__file__).parent / "browser"
    for item in items:
        if browser_dir in item.path.parents:
            item.add_marker(pytest.mark.browser)


def service_unavailable(what: str, reason: str) -> None:
    """Skip, or fail when CI requires the services."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{what} is required (ESTIBENCH_REQUIRE_SERVICES=1) but unavailable: {reason}")
    pytest.skip(f"{what} unavailable: {reason}")


def _pg_admin_engine(url: str):
    return create_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")


@pytest.fixture(scope="session")
def postgres_server_url() -> str:
    """URL of a reachable PostgreSQL server's admin database (skip or fail when absent)."""
    url = PG_URL or os.environ.get("ESTIBENCH_POSTGRES_URL", DEFAULT_PG)
    try:
        eng = _pg_admin_engine(url)
        with eng.connect() as conn:
            conn.execute(text("SELECT 1"))
        eng.dispose()
    except Exception as exc:
        service_unavailable("PostgreSQL", str(exc).splitlines()[0])
    return url


@pytest.fixture(scope="session")
def redis_url() -> str:
    url = os.environ.get("ESTIBENCH_TEST_REDIS_URL", DEFAULT_REDIS)
    try:
        import redis

        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except Exception as exc:
        service_unavailable("Redis", str(exc).splitlines()[0])
    return url


def create_pg_database(server_url: str, prefix: str) -> str:
    """Create an empty database next to ``server_url``'s and return its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    eng = _pg_admin_engine(server_url)
    with eng.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    eng.dispose()
    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


def drop_pg_database(server_url: str, url: str) -> None:
    name = make_url(url).database
    eng = _pg_admin_engine(server_url)
    with eng.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    eng.dispose()


@pytest.fixture(scope="session")
def template_db(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[str]:
    """The migrated template: a SQLite file, or (with ESTIBENCH_TEST_DATABASE_URL) a PostgreSQL database."""
    if PG_URL:
        server = request.getfixturevalue("postgres_server_url")
        url = create_pg_database(server, "estibench_test")
        upgrade(url)
        yield url
        drop_pg_database(server, url)
        return
    path = tmp_path_factory.mktemp("template") / "template.db"
    url = f"sqlite:///{path}"
    upgrade(url)
    yield url


def _truncate_all(url: str) -> None:
    eng = create_engine(url, poolclass=NullPool)
    tables = ", ".join(f'"{t.name}"' for t in Base.metadata.sorted_tables)
    with eng.begin() as conn:
        conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    eng.dispose()


@functools.cache
def _head_revision() -> str:
    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


def _restore_head(url: str) -> None:
    """Rebuild the shared PG database at the head revision after a test that migrated it elsewhere (a migration
    test, even one that failed half-way, with whatever rows it left): the next test's truncation then finds every
    table."""
    eng = create_engine(url, poolclass=NullPool)
    with eng.connect() as conn:
        current = conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one_or_none()
    if current != _head_revision():
        with eng.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE"))
            conn.execute(text("CREATE SCHEMA public"))
        upgrade(url)
    eng.dispose()


@pytest.fixture
def db_url(template_db: str, tmp_path: Path) -> Iterator[str]:
    """A fresh migrated database for one test: a copy of the SQLite template, or the truncated PG database."""
    if template_db.startswith("postgresql"):
        _truncate_all(template_db)
        yield template_db
        _restore_head(template_db)
        return
    src = Path(template_db.removeprefix("sqlite:///"))
    dst = tmp_path / "estibench.db"
    shutil.copyfile(src, dst)
    yield f"sqlite:///{dst}"


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return Settings(
        env="test",
        database_url=db_url,
        data_dir=tmp_path / "data",
        secret_key="test-secret",
        admin_key=ADMIN_KEY,
        log_json=True,
        log_level="WARNING",
    )


@pytest.fixture
def client(settings: Settings) -> Iterator[Any]:
    """A ``TestClient`` over the app with the test settings."""
    with serving(settings) as c:
        yield c


@pytest.fixture
def isolated_registry() -> Iterator[None]:
    """The estimator and scorer registries as ``load_all()`` builds them, restored after the test: what the test
    registers, replaces or removes is undone."""
    load_all()
    saved = dict(ESTIMATORS), dict(SCORERS)
    yield
    for live, snapshot in zip((ESTIMATORS, SCORERS), saved, strict=True):
        live.clear()
        live.update(snapshot)


@pytest.fixture
def test_estimator(isolated_registry: None) -> str:
    """The registry with tests/support_estimators.py's ``test.slow_sum`` in it (for this test only); its name."""
    ESTIMATORS[support_estimators.NAME] = support_estimators.SPEC
    return support_estimators.NAME


@pytest.fixture(scope="session")
def suite_lock_file(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., AbstractContextManager[None]]:
    """A lock shared by the pytest-xdist processes of one run: every test holds it shared, the reliability tests
    (real servers under latency and memory bounds) exclusively, so those run with no other test beside them."""
    workers = os.environ.get("PYTEST_XDIST_WORKER") is not None
    path = tmp_path_factory.getbasetemp().parent / "suite.lock"

    @contextmanager
    def held(exclusive: bool) -> Iterator[None]:
        if not workers:
            yield
            return
        with path.open("a") as f:
            fcntl.flock(f, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    return held


@pytest.fixture(autouse=True)
def suite_lock(suite_lock_file: Callable[..., AbstractContextManager[None]]) -> Iterator[None]:
    with suite_lock_file(exclusive=False):
        yield
