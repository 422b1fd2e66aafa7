"""usecases/embedded.py: the embedded store is a migrated SQLite file of its own, used anonymously without a job
queue; a temporary one is removed on ``close`` (or when the store is collected), a given one is kept."""

import gc
import sqlite3
from pathlib import Path

import pytest

from usecases.embedded import EmbeddedStore


def _tables(database: Path) -> set[str]:
    with sqlite3.connect(database) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


SERVER_ENVIRONMENT = {
    "ENV": "production",
    "REQUIRE_KEYS": "true",
    "REDIS_URL": "redis://localhost:6379/0",
    "QUEUE": "auto",
    "ADMIN_KEY": "ek_admin_from_env",
    "DATA_DIR": "server-data",
    "LOG_JSON": "true",
    "DATABASE_URL": "postgresql+psycopg://u@h/d",
}
"""A server's ``ESTIBENCH_*`` variables, which an embedded store (the caller's own) must not take."""


def test_a_store_at_a_path_is_migrated_anonymous_without_queue_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, value in SERVER_ENVIRONMENT.items():
        monkeypatch.setenv(f"ESTIBENCH_{name}", value)
    store = EmbeddedStore(Path("nested/dir/local.db"))  # relative, in directories that do not exist yet
    database = tmp_path / "nested" / "dir" / "local.db"
    assert store.path == database and store.path.is_absolute()
    assert {"api_key", "run", "job", "benchmark", "alembic_version"} <= _tables(database)
    settings = store.services.settings
    assert settings.database_url == f"sqlite:///{database}"
    assert settings.data_dir == database.parent
    assert (settings.env, settings.queue, settings.redis_url) == ("development", "off", None)
    assert (settings.require_keys, settings.admin_key, settings.log_json) == (False, None, False)
    assert store.services.database_ok() is True
    store.close()
    assert database.is_file()  # a given file is the caller's
    store.close()  # closing twice is harmless
    assert not (tmp_path / "server-data").exists()


def test_a_temporary_store_is_removed_on_close(tmp_path: Path) -> None:
    store = EmbeddedStore(None)
    database = store.path
    assert database.name == "estibench.db" and database.parent.name.startswith("estibench-local-")
    assert database.is_file() and "run" in _tables(database)
    assert store.services.settings.data_dir == database.parent
    assert store.services.database_ok() is True
    engines = store.services.engines
    assert engines.read.pool.checkedin() == 1
    store.close()
    assert not database.parent.exists()
    assert engines.read.pool.checkedin() == 0  # the engines were disposed


def test_a_temporary_store_is_removed_when_collected() -> None:
    store = EmbeddedStore(None)
    directory = store.path.parent
    assert directory.is_dir()
    del store
    gc.collect()
    assert not directory.exists()
