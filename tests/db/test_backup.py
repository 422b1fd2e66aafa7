"""scripts/backup.py: a consistent snapshot of a live SQLite store restores; a SQLite store copies into PostgreSQL."""

import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import func, select

from db.base import Base
from db.engine import make_single_engine
from db.migrate import upgrade
from scripts.backup import snapshot, to_postgres
from tests import support_estimators
from tests.conftest import create_pg_database, drop_pg_database
from tests.factories import NPY, npy, serving
from usecases.settings import Settings

NAME = support_estimators.NAME


def app_settings(url: str, tmp_path: Path) -> Settings:
    return Settings(
        env="test",
        database_url=url,
        data_dir=tmp_path / "data",
        secret_key="s",
        admin_key="ek_admin_backup_key",
        queue="immediate",
        log_level="WARNING",
    )


@pytest.fixture
def populated(tmp_path: Path, test_estimator: str):
    """A SQLite store with runs, a job, an uploaded array and API keys, written through the API."""
    url = f"sqlite:///{tmp_path / 'live.db'}"
    upgrade(url)
    with serving(app_settings(url, tmp_path)) as c:
        ids = [c.post(f"/v1/estimators/{NAME}", json={"values": [100 + i]}).json()["id"] for i in range(30)]
        c.post("/v1/jobs", json={"kind": "estimator", "name": NAME, "params": {"values": [99]}})
        c.post("/v1/arrays", content=npy(np.arange(5.0)), headers=NPY)
        c.post(
            "/v1/api-keys",
            json={"name": "k", "scopes": ["estimators:run"]},
            headers={"X-API-Key": "ek_admin_backup_key"},
        )
        yield url, c, ids


def counts(url: str) -> dict[str, int]:
    eng = make_single_engine(url)
    with eng.connect() as conn:
        out = {
            t.name: conn.execute(select(func.count()).select_from(t)).scalar_one() for t in Base.metadata.sorted_tables
        }
    eng.dispose()
    return out


@pytest.mark.slow
def test_snapshot_of_a_live_store_restores(populated, tmp_path: Path) -> None:
    url, client, ids = populated
    stop = threading.Event()

    def writer() -> None:  # keeps writing while the snapshot is taken
        i = 1000
        while not stop.is_set():
            client.post(f"/v1/estimators/{NAME}", json={"values": [i]})
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        dest = tmp_path / "backup" / "copy.db"
        snapshot(url, dest)
    finally:
        stop.set()
        thread.join()
    assert sqlite3.connect(dest).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    restored = tmp_path / "restored.db"
    restored.write_bytes(dest.read_bytes())
    with serving(app_settings(f"sqlite:///{restored}", tmp_path)) as c:
        for run_id in ids:
            assert c.get(f"/v1/runs/{run_id}").status_code == 200
        assert len(c.get("/v1/jobs").json()["items"]) == 1
    with pytest.raises(SystemExit):
        snapshot(url, dest)  # never overwrites


@pytest.mark.slow
def test_copy_sqlite_store_into_postgres(populated, postgres_server_url: str, tmp_path: Path) -> None:
    url, _, ids = populated
    target = create_pg_database(postgres_server_url, "estibench_copy")
    try:
        copied = to_postgres(url, target, chunk=7)
        assert copied == {k: v for k, v in counts(url).items()} == counts(target)
        assert copied["run"] == 31 and copied["array_blob"] == 1 and copied["job"] == 1
        with serving(app_settings(target, tmp_path)) as c:
            assert all(c.get(f"/v1/runs/{i}").status_code == 200 for i in ids)
            first = c.get(f"/v1/runs/{ids[0]}").json()
            assert first["result"] == {"total": 100.0, "n": 1, "steps": 1}
            new = c.post(f"/v1/estimators/{NAME}", json={"values": [12345]})  # sequences moved past copied ids
            assert new.status_code == 200 and new.json()["cached"] is False
            assert c.get("/v1/runs", params={"limit": 1}).json()["items"][0]["id"] == new.json()["id"]
        with pytest.raises(SystemExit):
            to_postgres(url, target)  # refuses a non-empty target
    finally:
        drop_pg_database(postgres_server_url, target)
