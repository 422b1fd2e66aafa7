"""Platform benchmarks (issue 3, parts 3 and 4), run by ``bench/scoring.py`` or alone:

(3) store a scoring's 1,000,000 per-item values through our repository (one array per split and metric) against
    raw sqlite3 ``executemany`` of the same (item_id, value) rows into a plain table (anchor measured in the same
    run);
(4) 200 submissions of 1,000 film_mcq items each through HTTP to a real uvicorn process: submissions/s.

    .venv/bin/python bench/platform_store.py
"""

import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from db.engine import make_engines  # noqa: E402
from db.migrate import upgrade  # noqa: E402
from db.repositories import submissions as sub_repo  # noqa: E402
from db.repositories.submissions import SplitItems  # noqa: E402

N_ROWS = 1_000_000


def _setup(path: Path) -> int:
    """A migrated database with one benchmark, submission and scoring to hang item scores on."""
    url = f"sqlite:///{path}"
    upgrade(url)
    con = sqlite3.connect(path)
    now = datetime.now(UTC).isoformat(" ")
    con.execute("INSERT INTO benchmark VALUES ('b','b','film_mcq','', '{}', 10, NULL, 1, ?)", (now,))
    con.execute(
        "INSERT INTO submission (id, benchmark_id, model, meta, api_key_id, created_at) "
        "VALUES ('s','b','m','{}',NULL,?)",
        (now,),
    )
    con.execute(
        "INSERT INTO answer_key_version (benchmark_id, version, sha256, items, n_public, n_private, created_at) "
        "VALUES ('b', 1, '', '[]', 0, 0, ?)",
        (now,),
    )
    con.execute("CREATE TABLE raw_item (scoring_id INTEGER, item_id TEXT, value REAL)")
    con.execute(
        "INSERT INTO scoring (submission_id, answer_key_version, scorer_version, details, created_at) "
        "VALUES ('s', 1, '1', '{}', ?)",
        (now,),
    )
    con.commit()
    scoring_id = con.execute("SELECT id FROM scoring").fetchone()[0]
    con.close()
    return scoring_id


def store_bench() -> dict[str, float]:
    ids = [f"item-{i:07d}" for i in range(N_ROWS)]
    values = np.arange(N_ROWS) % 3 / 2.0
    with tempfile.TemporaryDirectory() as tmp:
        ours_path, raw_path = Path(tmp) / "ours.db", Path(tmp) / "raw.db"
        _setup(ours_path)
        raw_sid = _setup(raw_path)
        engines = make_engines(f"sqlite:///{ours_path}")
        t0 = time.perf_counter()
        with engines.write.begin() as conn:
            sub_repo.insert_scoring(
                conn,
                submission_id="s",
                answer_key_version=1,
                scorer_version="1",
                details="{}",
                when=datetime.now(UTC),
                scores=[],
                items=[SplitItems("public", ids, {"accuracy": values})],
            )
        ours = time.perf_counter() - t0
        engines.dispose()
        con = sqlite3.connect(raw_path, isolation_level=None)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=NORMAL")
        t0 = time.perf_counter()
        con.execute("BEGIN IMMEDIATE")
        con.executemany(
            "INSERT INTO raw_item (scoring_id, item_id, value) VALUES (?, ?, ?)",
            zip([raw_sid] * N_ROWS, ids, values.tolist(), strict=True),
        )
        con.execute("COMMIT")
        raw = time.perf_counter() - t0
        assert con.execute("SELECT count(*) FROM raw_item").fetchone()[0] == N_ROWS
        con.close()
    return {"ours_rows_per_s": N_ROWS / ours, "raw_rows_per_s": N_ROWS / raw, "ratio": raw / ours}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_bench(n_submissions: int = 200, n_items: int = 1000) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/http.db"
        upgrade(url)
        port = _free_port()
        admin = "ek_bench_admin_key"
        env = {
            **os.environ,
            "ESTIBENCH_DATABASE_URL": url,
            "ESTIBENCH_ADMIN_KEY": admin,
            "ESTIBENCH_DATA_DIR": tmp,
            "ESTIBENCH_LOG_LEVEL": "WARNING",
        }
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "api.app:create_app",
                "--factory",
                "--port",
                str(port),
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=env,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            with httpx.Client(base_url=base, timeout=60) as c:
                for _ in range(100):
                    try:
                        if c.get("/v1/health").status_code == 200:
                            break
                    except httpx.TransportError:
                        time.sleep(0.1)
                h = {"Authorization": f"Bearer {admin}"}
                key = [
                    {"item_id": f"q{i}", "num_options": 4, "answer_idx": i % 4, "film_id": f"f{i % 50}"}
                    for i in range(n_items)
                ]
                b = c.post(
                    "/v1/benchmarks",
                    json={
                        "name": "bench",
                        "scorer": "film_mcq",
                        "max_submissions_per_day": 100_000,
                        "answer_key": {"items": key},
                    },
                    headers=h,
                ).json()
                bodies = [
                    {
                        "model": f"m{j}",
                        "predictions": {
                            "items": [{"item_id": f"q{i}", "choice_idx": (i * (j + 1)) % 4} for i in range(n_items)]
                        },
                    }
                    for j in range(n_submissions)
                ]
                t0 = time.perf_counter()
                for body in bodies:
                    r = c.post(f"/v1/benchmarks/{b['id']}/submissions", json=body, headers=h)
                    assert r.status_code == 201, r.text
                elapsed = time.perf_counter() - t0
        finally:
            proc.terminate()
            proc.wait(10)
    return {"submissions_per_s": n_submissions / elapsed, "items_per_s": n_submissions * n_items / elapsed}


def main() -> None:
    s = store_bench()
    print("| (3) store 1,000,000 per-item values | ours (repository) | raw sqlite3 executemany | ratio |")
    print("|---|---|---|---|")
    print(f"| values/s | {s['ours_rows_per_s']:,.0f} | {s['raw_rows_per_s']:,.0f} | {s['ratio']:.2f} |")
    h = http_bench()
    print()
    print("| (4) 200 film_mcq submissions x 1,000 items over HTTP | submissions/s | items/s |")
    print("|---|---|---|")
    print(f"| uvicorn, 1 process, SQLite | {h['submissions_per_s']:.1f} | {h['items_per_s']:,.0f} |")


if __name__ == "__main__":
    main()
