"""scripts/backup.py on PostgreSQL: pg_dump of a live store, pg_restore into an empty database, every row and the
leaderboard equal after the round trip; the refusals (existing file, non-empty target, pg_dump older than the
server)."""

import subprocess
from pathlib import Path

import pytest
from sqlalchemy import select

from db.base import Base
from db.engine import make_single_engine
from db.migrate import upgrade
from scripts import backup
from tests.conftest import create_pg_database, drop_pg_database
from tests.factories import film_key_items, film_predictions, serving
from usecases.settings import Settings

ADMIN = {"Authorization": "Bearer ek_admin_pg_backup_key"}


def app_settings(url: str, tmp_path: Path) -> Settings:
    return Settings(
        env="test",
        database_url=url,
        data_dir=tmp_path / "data",
        secret_key="s",
        admin_key="ek_admin_pg_backup_key",
        queue="immediate",
        log_level="WARNING",
    )


def all_rows(url: str) -> dict[str, list[tuple]]:
    engine = make_single_engine(url)
    with engine.connect() as conn:
        out = {
            t.name: [tuple(r) for r in conn.execute(select(t).order_by(*t.primary_key.columns))]
            for t in Base.metadata.sorted_tables
        }
    engine.dispose()
    return out


@pytest.fixture
def databases(postgres_server_url: str):
    source = create_pg_database(postgres_server_url, "estibench_dump_src")
    target = create_pg_database(postgres_server_url, "estibench_dump_dst")
    yield source, target
    drop_pg_database(postgres_server_url, source)
    drop_pg_database(postgres_server_url, target)


@pytest.mark.slow
def test_pg_dump_and_restore_round_trip(databases: tuple[str, str], tmp_path: Path) -> None:
    if backup.tool_major("pg_dump") < backup.server_major(databases[0]):
        pytest.skip("this machine's pg_dump is older than the PostgreSQL server (docs/deploy.md)")
    source, target = databases
    upgrade(source)
    with serving(app_settings(source, tmp_path)) as c:
        runs = [
            c.post(
                "/v1/estimators/minhash.variance",
                json={"intersection": i, "union": 40, "universe": 101, "num_perm": 16},
            ).json()["id"]
            for i in range(1, 6)
        ]
        body = {"name": "films", "scorer": "film_mcq", "answer_key": {"items": film_key_items()}}
        bench = c.post("/v1/benchmarks", json=body, headers=ADMIN).json()["id"]
        for model, right in (("a", 7), ("b", 9), ("c", 4)):
            sub = {"model": model, "predictions": film_predictions(right)}
            assert c.post(f"/v1/benchmarks/{bench}/submissions", json=sub, headers=ADMIN).status_code == 201
        board = c.get(f"/v1/benchmarks/{bench}/leaderboard").json()
    assert [row["model"] for row in board["items"]] == ["b", "a", "c"]
    dump = tmp_path / "backups" / "estibench.dump"
    backup.pg_snapshot(source, dump)
    assert dump.read_bytes()[:5] == b"PGDMP"  # pg_dump's custom format
    backup.pg_restore(dump, target)
    before = all_rows(source)
    assert len(before["run"]) == 5 and len(before["submission"]) == 3
    assert all_rows(target) == before
    with serving(app_settings(target, tmp_path)) as c:
        assert c.get(f"/v1/benchmarks/{bench}/leaderboard").json() == board
        assert [c.get(f"/v1/runs/{i}").json()["id"] for i in runs] == runs
        new = c.post(
            f"/v1/benchmarks/{bench}/submissions",
            json={"model": "d", "predictions": film_predictions(10)},
            headers=ADMIN,
        )
        assert new.status_code == 201  # the sequences and constraints came back with the tables
    with pytest.raises(SystemExit, match="exists"):
        backup.pg_snapshot(source, dump)
    with pytest.raises(SystemExit, match="restore into an empty one"):
        backup.pg_restore(dump, target)


def test_a_pg_dump_older_than_the_server_is_refused(databases: tuple[str, str], monkeypatch, tmp_path: Path) -> None:
    server = backup.server_major(databases[0])
    monkeypatch.setattr(backup, "tool_major", lambda tool: server - 1)
    with pytest.raises(SystemExit, match=rf"pg_dump {server - 1} is older than the PostgreSQL {server} server"):
        backup.pg_snapshot(databases[0], tmp_path / "x.dump")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_make_backup_dumps_a_postgres_url(databases: tuple[str, str], tmp_path: Path) -> None:
    source, _ = databases
    upgrade(source)
    root = Path(__file__).resolve().parents[2]
    dest = tmp_path / "b.dump"
    r = subprocess.run(
        [
            "make",
            "-s",
            "-o",
            "install",
            "backup",
            f"VENV={root / '.venv'}",
            f"BACKUP={dest}",
            f"ESTIBENCH_DATABASE_URL={source}",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    listing = subprocess.run(["pg_restore", "--list", str(dest)], capture_output=True, text=True, check=True).stdout
    assert "TABLE public run " in listing and "TABLE DATA public alembic_version " in listing
