"""usecases/services.py: building ``Services`` opens no connection and creates no file; its engines are made on
first use with the settings' database and SQLite ``synchronous`` level, kept, and made again in a forked process;
the secret key and the health probe are made once; the job queue runs the four kinds of job (estimator and scorer
runs re-run after a crash, rescore and reproduction not) and freezes ended phases on each reaper pass."""

import os
from functools import partial
from pathlib import Path

import pytest

from usecases import services as services_module
from usecases.benchmarks import run_rescore_job
from usecases.clock import utcnow
from usecases.health import DatabaseProbe
from usecases.phases import freeze_due
from usecases.reproductions import run_reproduction_job
from usecases.run_requests import run_job
from usecases.services import Services, job_kinds
from usecases.settings import Settings


def _settings(tmp_path: Path, **fields: object) -> Settings:
    values: dict[str, object] = {
        "env": "test",
        "database_url": f"sqlite:///{tmp_path}/db/est.db",
        "data_dir": tmp_path / "data",
        "queue": "off",
    }
    return Settings(**(values | fields))


def test_building_services_opens_nothing_and_creates_no_file(tmp_path: Path) -> None:
    s = Services(_settings(tmp_path))
    assert list(tmp_path.iterdir()) == []
    assert s.clock is utcnow
    s.dispose()  # nothing was opened: nothing to dispose, still no file
    assert list(tmp_path.iterdir()) == []


def test_the_engines_are_made_once_per_process_on_the_settings_database(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    engines = services.engines
    assert services.engines is engines
    assert str(engines.write.url) == services.settings.database_url
    assert str(engines.read.url) == services.settings.database_url
    assert services.jobs.engines is engines  # the job queue reads the same engines
    pid = os.getpid()
    monkeypatch.setattr(services_module.os, "getpid", lambda: pid + 1)  # as in a forked worker process
    forked = services.engines
    assert forked is not engines and services.engines is forked and services.jobs.engines is forked
    engines.dispose()


@pytest.mark.parametrize(("level", "pragma"), [("OFF", 0), ("FULL", 2), ("EXTRA", 3)])
def test_the_engines_use_the_settings_sqlite_synchronous_level(services: Services, level: str, pragma: int) -> None:
    # PRAGMA synchronous reads 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA (SQLite documentation)
    s = Services(services.settings.model_copy(update={"sqlite_synchronous": level}))
    try:
        with s.engines.read.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == pragma
    finally:
        s.dispose()


def test_the_database_answers_or_not(services: Services, tmp_path: Path) -> None:
    assert services.database_ok() is True
    unreachable = Services(_settings(tmp_path, database_url=f"sqlite:///{tmp_path}/missing/dir/x.db"))
    assert unreachable.database_ok() is False
    unreachable.dispose()


def test_the_health_probe_is_one_cached_probe_of_the_database(services: Services, tmp_path: Path) -> None:
    probe = services.database_probe
    assert isinstance(probe, DatabaseProbe) and services.database_probe is probe
    assert probe.status() is True
    unreachable = Services(_settings(tmp_path, database_url=f"sqlite:///{tmp_path}/missing/dir/x.db"))
    assert unreachable.database_probe.status() is False
    unreachable.dispose()


def test_the_secret_key_is_resolved_once(tmp_path: Path) -> None:
    s = Services(_settings(tmp_path, secret_key=None))
    key = s.secret_key
    assert (tmp_path / "data" / "secret_key").read_text() == key
    (tmp_path / "data" / "secret_key").write_text("changed")
    assert s.secret_key == key
    assert Services(_settings(tmp_path, secret_key="given")).secret_key == "given"


def test_dispose_closes_the_pooled_connections(services: Services) -> None:
    assert services.database_ok() is True
    engines = services.engines
    assert engines.read.pool.checkedin() == 1
    services.dispose()
    assert engines.read.pool.checkedin() == 0


def test_the_four_kinds_of_job(services: Services) -> None:
    kinds = job_kinds(services)
    assert set(kinds) == {"estimator", "scorer", "rescore", "reproduction"}
    expected = {
        "estimator": (run_job, True),
        "scorer": (run_job, True),
        "rescore": (run_rescore_job, False),
        "reproduction": (run_reproduction_job, False),
    }
    for name, (function, idempotent) in expected.items():
        kind = kinds[name]
        assert isinstance(kind.run, partial) and kind.run.func is function and kind.run.args == (services,)
        assert kind.run.keywords == {} and kind.idempotent is idempotent


def test_the_job_queue_runs_the_kinds_and_freezes_phases(services: Services) -> None:
    queue = services.jobs
    assert queue.settings is services.settings
    assert set(queue.kinds) == {"estimator", "scorer", "rescore", "reproduction"}
    assert all(kind.run.args == (services,) for kind in queue.kinds.values())
    assert [kind.idempotent for kind in queue.kinds.values()] == [True, True, False, False]
    (freeze,) = queue.passes
    assert isinstance(freeze, partial) and freeze.func is freeze_due and freeze.args == (services,)
