"""Idempotent submissions survive SIGKILL at each named point: a real uvicorn process (tests/reliability/
crash_points.py) is killed before the commit, after the commit before its answer, and during a replay, three times
each, on a SQLite file and on PostgreSQL; after each restart the same ``Idempotency-Key`` request is sent again.
No submission is stored twice, every acknowledged one is kept, and a replay answers the original response."""

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from db.engine import make_single_engine
from db.migrate import upgrade
from db.models import Submission
from tests.conftest import create_pg_database, drop_pg_database
from tests.factories import film_key_items, film_predictions
from tests.reliability import procs
from tests.reliability.crash_points import POINTS

pytestmark = [pytest.mark.slow, pytest.mark.processes]

ADMIN = {"X-API-Key": "ek_admin_reliability_key"}
ROUNDS = 3
STALE_S = 1.0
"""Age after which the API process counts an in-flight idempotency record as abandoned (120 s in the service)."""


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A migrated database: a SQLite file, or a new database on the PostgreSQL server (skip or fail when absent)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'idempotency.db'}"
        upgrade(url)
        yield url
        return
    server = request.getfixturevalue("postgres_server_url")
    url = create_pg_database(server, "estibench_idem_crash")
    try:
        upgrade(url)
        yield url
    finally:
        drop_pg_database(server, url)


class Api:
    """API processes forked one after another by the crash-point process (tests/reliability/crash_points.py, which
    has imported the app once), so a restart after a kill costs no imports."""

    def __init__(self, env: dict[str, str], arm: Path, log: Path) -> None:
        self.arm = arm
        args = [sys.executable, "-m", "tests.reliability.crash_points", str(arm)]
        with log.open("ab") as out:
            self.parent = subprocess.Popen(
                args,
                env=env,
                cwd=procs.ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=out,
                start_new_session=True,
            )
        self.pid, self.base = self.serve()

    def ask(self, command: str) -> str:
        assert self.parent.stdin is not None and self.parent.stdout is not None
        self.parent.stdin.write(f"{command}\n".encode())
        self.parent.stdin.flush()
        answer = self.parent.stdout.readline().decode().strip()
        assert answer, f"the crash-point process ended (exit {self.parent.poll()})"
        return answer

    def serve(self) -> tuple[int, str]:
        """A new API process on a free port, once it answers."""
        port = procs.free_port()
        pid = int(self.ask(f"serve {port}"))
        procs.wait_ready(port, self.parent)
        return pid, f"http://127.0.0.1:{port}"

    def killed_at(self, point: str, client: httpx.Client, key: str, body: dict) -> None:
        """Arm ``point``, send the request that dies there (no answer), check the SIGKILL, restart."""
        self.arm.write_text(point)
        with pytest.raises(httpx.TransportError):
            post(client, self.base, key, body)
        assert int(self.ask(f"wait {self.pid}")) == -signal.SIGKILL and not self.arm.exists()
        self.pid, self.base = self.serve()

    def stop(self) -> None:
        """SIGKILL the crash-point process and its API process (one process group)."""
        procs.kill(self.parent)


def post(client: httpx.Client, base: str, key: str, body: dict) -> httpx.Response:
    url = f"{base}/v1/benchmarks/{body['bench']}/submissions"
    return client.post(url, json=body["json"], headers={**ADMIN, "Idempotency-Key": key})


def retried(client: httpx.Client, base: str, key: str, body: dict) -> httpx.Response:
    """The request sent again until it is no longer refused as in flight (409: a claim younger than STALE_S)."""
    deadline = time.monotonic() + 30
    while (r := post(client, base, key, body)).status_code == 409:
        assert time.monotonic() < deadline, r.text
        time.sleep(0.2)
    return r


@pytest.mark.timeout(600)
def test_sigkill_at_each_point_of_an_idempotent_submission(database_url: str, tmp_path: Path) -> None:
    env = procs.env_for(
        database_url, tmp_path, ESTIBENCH_SUBMISSIONS_PER_DAY="1000", ESTIBENCH_TEST_IDEMPOTENCY_STALE_S=str(STALE_S)
    )
    api = Api(env, tmp_path / "crash-at", tmp_path / "api.log")
    acked: dict[str, dict] = {}
    try:
        with httpx.Client(timeout=30) as c:
            bench = {"name": "idem", "scorer": "film_mcq", "answer_key": {"items": film_key_items()}}
            r = c.post(f"{api.base}/v1/benchmarks", json=bench, headers=ADMIN)
            assert r.status_code == 201, r.text
            bench_id = r.json()["id"]
            for n in range(ROUNDS):
                for point in POINTS:
                    key = f"{point}-{n}"
                    body = {"bench": bench_id, "json": {"model": key, "predictions": film_predictions(n + 1)}}
                    if point == "during_replay":
                        first = post(c, api.base, key, body)
                        assert first.status_code == 201 and "idempotent-replayed" not in first.headers, first.text
                        acked[key] = first.json()
                    api.killed_at(point, c, key, body)
                    r = retried(c, api.base, key, body)
                    assert r.status_code == 201, r.text
                    # killed before its commit, the request stored nothing: the retry gives the first answer
                    replayed = r.headers.get("idempotent-replayed") == "true"
                    assert replayed == (point != "before_commit"), (point, dict(r.headers))
                    if point == "during_replay":
                        assert r.json() == acked[key]
                    assert r.json()["model"] == key and r.json()["scores"]["accuracy"]["value"] == (n + 1) / 10
                    acked[key] = r.json()
                    again = post(c, api.base, key, body)
                    assert again.headers.get("idempotent-replayed") == "true" and again.json() == acked[key]
            for key, view in acked.items():
                got = c.get(f"{api.base}/v1/submissions/{view['id']}", headers=ADMIN)
                assert got.status_code == 200 and got.json()["model"] == key
    finally:
        api.stop()
    eng = make_single_engine(database_url)
    with eng.connect() as conn:
        stored = sorted(conn.execute(select(Submission.model, Submission.id)).all())
    eng.dispose()
    assert stored == sorted((key, view["id"]) for key, view in acked.items())
    assert len(stored) == ROUNDS * len(POINTS)
