"""Leaderboard cost against the number of submissions: four stores, each with one film_mcq benchmark of 1,000
items holding 10, 100, 1,000 or 10,000 submissions (one model each); the p50 of the leaderboard's first 50-row
page, the 50-row page at rank 5,000 (when there are that many rows), the benchmark's web page, the CSV (100 rows)
and the plot (top 30, drawn anew each time), all over HTTP through the ASGI app with httpx; the anchor is a
hello-world FastAPI ``GET`` measured the same way in the same run. Up to 1,000 submissions of a store are posted
over HTTP (scored on arrival); the rest are seeded with the repositories in one transaction (copies of the scored
submissions' predictions and score rows, without per-item rows) and their boards built with ``rankings.rebuild``.

The stores are built first, then measured in rounds: each round times every operation once on every store (in a
shuffled order) with an anchor request before each, so a change of the machine's load (other processes) falls on
every size alike. Prints a table of p50 ms (and its ratio to the anchor's p50) per size and the exponent b of the
least-squares fit ms ~ a * n^b per operation, over every size and over the sizes where the operation's page is
full; the target for the page reads is b <= 0.075.

    .venv/bin/python bench/scale.py                     # SQLite
    .venv/bin/python bench/scale.py --postgres          # SQLite, then PostgreSQL (--postgres-url)
    .venv/bin/python bench/scale.py --submissions-only --postgres

Before the boards, one film_mcq submission of 10,000 items: the database growth per item (predictions included;
target <= 12 bytes), its p50 time over HTTP against the raw driver's executemany of the same 10,000 (item_id,
value) rows plus the predictions blob in one transaction, timed in the same run (target <= 4x), and the p50 of
comparing two such submissions against two of 100 items (target <= 2x).
"""

import argparse
import asyncio
import contextlib
import json
import math
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from api.app import create_app  # noqa: E402
from db.migrate import upgrade  # noqa: E402
from db.repositories import submissions as sub_repo  # noqa: E402
from db.repositories.submissions import SubmissionRow  # noqa: E402
from service.registry import SCORERS  # noqa: E402
from usecases import figures, rankings  # noqa: E402
from usecases.settings import Settings  # noqa: E402

SIZES = (10, 100, 1_000, 10_000)
HTTP_MAX = 1_000
N_ITEMS = 1_000
DEEP_RANK = 5_000
ADMIN = "ek_bench_scale_admin_key"
PG_DEFAULT = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
PAGE_ROWS = {
    "first page (50 rows)": 50,
    f"page at rank {DEEP_RANK:,}": 50,
    "benchmark page": 100,
    "CSV": 100,
    "plot": 30,
}
"""Rows an operation shows when the board has enough."""
PAGE_READS = ("first page (50 rows)", f"page at rank {DEEP_RANK:,}")
REPEATS = {"first page (50 rows)": 60, f"page at rank {DEEP_RANK:,}": 60, "benchmark page": 30, "CSV": 30, "plot": 4}


def hello_app() -> FastAPI:
    app = FastAPI()

    @app.get("/hello")
    async def hello() -> dict[str, str]:
        return {"hello": "world"}

    return app


def _nothing() -> None:
    return None


def key_items() -> list[dict[str, Any]]:
    return [
        {"item_id": f"q{i}", "num_options": 4, "answer_idx": i % 4, "film_id": f"f{i % 50}"} for i in range(N_ITEMS)
    ]


def predictions(j: int) -> dict[str, Any]:
    """Submission ``j``'s answers: right on a share of items that varies with ``j`` (accuracies tie often)."""
    right = (j * 37) % 100
    return {
        "items": [{"item_id": f"q{i}", "choice_idx": i % 4 if i % 100 < right else (i + 1) % 4} for i in range(N_ITEMS)]
    }


def seed(app: FastAPI, bench_id: str, start: int, stop: int) -> None:
    """Submissions ``start`` to ``stop - 1`` with the repositories in one transaction: copies of the HTTP-scored
    submissions' predictions and scores (one model each, a microsecond apart), then the boards rebuilt."""
    services = app.state.services
    engines = services.engines
    with engines.read.connect() as conn:
        scored = sub_repo.all_for_benchmark(conn, bench_id)[:HTTP_MAX]
        sources = []
        for sub in scored:
            scoring = sub_repo.latest_scoring(conn, sub.id, 1)
            assert scoring is not None
            sources.append(
                (
                    sub_repo.predictions(conn, sub.id),
                    scoring.details,
                    sub_repo.scores(conn, scoring.id, ["public", "private"]),
                )
            )
    now = datetime.now(UTC)
    with engines.write.begin() as conn:
        for j in range(start, stop):
            preds, details, scores = sources[j % len(sources)]
            sid = str(uuid.uuid4())
            row = SubmissionRow(0, sid, bench_id, f"seed-{j}", "{}", None, now + timedelta(microseconds=j), None)
            sub_repo.insert_submission(conn, row, preds)
            sub_repo.insert_scoring(
                conn,
                submission_id=sid,
                answer_key_version=1,
                scorer_version=SCORERS["film_mcq"].version,
                details=details,
                when=now,
                scores=scores,
                items=[],
            )
        rankings.rebuild(conn, bench_id, SCORERS["film_mcq"].metrics)


async def deep_cursor(c: httpx.AsyncClient, url: str, rank: int) -> str:
    """The cursor after row ``rank`` (walking 100-row pages)."""
    cursor = None
    for _ in range(rank // 100):
        r = await c.get(url, params={"limit": 100, **({"cursor": cursor} if cursor else {})})
        r.raise_for_status()
        cursor = r.json()["next_cursor"]
    assert cursor is not None
    return cursor


def _settings(url: str, tmp: Path) -> Settings:
    return Settings(
        env="test",
        database_url=url,
        data_dir=tmp / "data",
        secret_key="bench-secret",
        admin_key=ADMIN,
        log_level="WARNING",
        rate_limit_per_minute=0,
        queue="off",
    )


async def build(c: httpx.AsyncClient, app: FastAPI, size: int) -> dict[str, Callable[[], Awaitable[httpx.Response]]]:
    """A benchmark with ``size`` submissions in the app's store; the timed operations on it."""
    admin = {"Authorization": f"Bearer {ADMIN}"}
    t0 = time.perf_counter()
    body = {
        "name": "scale",
        "scorer": "film_mcq",
        "max_submissions_per_day": 100_000,
        "answer_key": {"items": key_items()},
    }
    r = await c.post("/v1/benchmarks", json=body, headers=admin)
    r.raise_for_status()
    bench_id = r.json()["id"]
    for j in range(min(size, HTTP_MAX)):
        body = {"model": f"model-{j}", "predictions": predictions(j)}
        (await c.post(f"/v1/benchmarks/{bench_id}/submissions", json=body, headers=admin)).raise_for_status()
    if size > HTTP_MAX:
        await asyncio.to_thread(seed, app, bench_id, HTTP_MAX, size)
    print(f"  {size:>6,} submissions stored ({time.perf_counter() - t0:.1f} s)", flush=True)
    board = f"/v1/benchmarks/{bench_id}/leaderboard"
    ops: dict[str, Callable[[], Awaitable[httpx.Response]]] = {
        "first page (50 rows)": lambda: c.get(board, params={"limit": 50}),
        "benchmark page": lambda: c.get(f"/benchmarks/{bench_id}"),
        "CSV": lambda: c.get(f"{board}.csv"),
        "plot": lambda: c.get(f"{board}/plot"),
    }
    if size > DEEP_RANK:
        cursor = await deep_cursor(c, board, DEEP_RANK)
        deep = f"page at rank {DEEP_RANK:,}"
        ops[deep] = lambda: c.get(board, params={"limit": 50, "cursor": cursor})
        assert (await ops[deep]()).json()["items"][0]["rank"] == DEEP_RANK + 1
    return ops


async def measure(urls: dict[int, str], tmp: Path) -> dict[int, dict[str, tuple[float, float]]]:
    """(p50 ms, p50 of the anchor timed before each request) per size and operation; store ``n`` at ``urls[n]``."""
    apps = {}
    for n, url in urls.items():
        upgrade(url)
        apps[n] = create_app(_settings(url, tmp / str(n)))
    async with contextlib.AsyncExitStack() as stack:
        hello = await stack.enter_async_context(
            httpx.AsyncClient(transport=httpx.ASGITransport(app=hello_app()), base_url="http://hello")
        )
        ops = {}
        for n, app in apps.items():
            await stack.enter_async_context(app.router.lifespan_context(app))
            c = await stack.enter_async_context(
                httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench", timeout=300)
            )
            ops[n] = await build(c, app, n)
        samples: dict[tuple[int, str], list[tuple[float, float]]] = {}
        rng = random.Random(0)
        for name, repeats in REPEATS.items():
            stores = [n for n in ops if name in ops[n]]
            for n in stores:  # two untimed warm-up calls
                for _ in range(2):
                    figures._CACHE.clear()
                    (await ops[n][name]()).raise_for_status()
            for _ in range(repeats):
                rng.shuffle(stores)
                for n in stores:
                    figures._CACHE.clear()  # a plot is drawn anew; nothing else is cached
                    t0 = time.perf_counter()
                    (await hello.get("/hello")).raise_for_status()
                    t1 = time.perf_counter()
                    r = await ops[n][name]()
                    t2 = time.perf_counter()
                    r.raise_for_status()
                    assert r.headers.get("x-plot-status") != "placeholder", "a plot was answered with a placeholder"
                    samples.setdefault((n, name), []).append((1000 * (t2 - t1), 1000 * (t1 - t0)))
    return {
        n: {
            name: (statistics.median(t for t, _ in xs), statistics.median(a for _, a in xs))
            for (m, name), xs in samples.items()
            if m == n
        }
        for n in urls
    }


SUB_ITEMS = 10_000
SUB_REPEATS = 7


def _film_key(n: int) -> list[dict[str, Any]]:
    return [{"item_id": f"q{i:06d}", "num_options": 4, "answer_idx": i % 4, "film_id": f"f{i % 50}"} for i in range(n)]


def _film_body(n: int, j: int) -> bytes:
    """Submission ``j`` of ``n`` items as JSON bytes: right on a share of items that varies with ``j``."""
    items = [{"item_id": f"q{i:06d}", "choice_idx": i % 4 if (i * 7 + j) % 10 < 6 else (i + 1) % 4} for i in range(n)]
    return json.dumps({"model": f"m{j}", "predictions": {"items": items}}).encode()


def _stored_bytes(engine: Any) -> int:
    """Bytes the database's tables and indexes take (SQLite: pages in use after a checkpoint)."""
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            pages = conn.exec_driver_sql("PRAGMA page_count").scalar_one()
            free = conn.exec_driver_sql("PRAGMA freelist_count").scalar_one()
            return (pages - free) * conn.exec_driver_sql("PRAGMA page_size").scalar_one()
        return conn.exec_driver_sql(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname NOT IN ('raw_item', 'raw_blob')"
        ).scalar_one()


def _raw_anchor(url: str, tmp: Path, body: bytes) -> float:
    """Seconds of the driver's executemany of ``SUB_ITEMS`` (item_id, value) rows plus the predictions blob in one
    transaction (sqlite3 or psycopg, no ORM), on a table of the same database server."""
    rows = [(f"q{i:06d}", float(i % 2)) for i in range(SUB_ITEMS)]
    if url.startswith("sqlite"):
        con = sqlite3.connect(tmp / "anchor.db", isolation_level=None)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=NORMAL")
        con.execute("CREATE TABLE IF NOT EXISTS raw_item (item_id TEXT, value REAL)")
        con.execute("CREATE TABLE IF NOT EXISTS raw_blob (data BLOB)")
        t0 = time.perf_counter()
        con.execute("BEGIN IMMEDIATE")
        con.executemany("INSERT INTO raw_item VALUES (?, ?)", rows)
        con.execute("INSERT INTO raw_blob VALUES (?)", (body,))
        con.execute("COMMIT")
        elapsed = time.perf_counter() - t0
        con.close()
        return elapsed
    import psycopg

    with psycopg.connect(make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)) as con:
        con.execute("CREATE TABLE IF NOT EXISTS raw_item (item_id text, value float8)")
        con.execute("CREATE TABLE IF NOT EXISTS raw_blob (data bytea)")
        con.commit()
        t0 = time.perf_counter()
        with con.cursor() as cur:
            cur.executemany("INSERT INTO raw_item VALUES (%s, %s)", rows)
            cur.execute("INSERT INTO raw_blob VALUES (%s)", (body,))
        con.commit()
        return time.perf_counter() - t0


async def submission_costs(url: str, tmp: Path) -> dict[str, float]:
    """A film_mcq submission of ``SUB_ITEMS`` items: the database growth per item (predictions included), its p50
    time over HTTP against the raw driver anchor (p50 of as many runs, interleaved), and the p50 of a compare of
    two such submissions against two of 100 items."""
    upgrade(url)
    app = create_app(_settings(url, tmp / "sub"))
    admin = {"Authorization": f"Bearer {ADMIN}", "content-type": "application/json"}
    engine = create_engine(url, poolclass=NullPool)
    out: dict[str, float] = {}
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://b", timeout=300) as c,
    ):
        benches = {}
        for n in (100, SUB_ITEMS):
            body = {"name": f"sub-{n}", "scorer": "film_mcq", "max_submissions_per_day": 10_000}
            r = await c.post("/v1/benchmarks", json={**body, "answer_key": {"items": _film_key(n)}}, headers=admin)
            r.raise_for_status()
            benches[n] = r.json()["id"]
        subs: dict[int, list[str]] = {100: [], SUB_ITEMS: []}
        for j in range(2):
            r = await c.post(f"/v1/benchmarks/{benches[100]}/submissions", content=_film_body(100, j), headers=admin)
            subs[100].append(r.raise_for_status().json()["id"])
        bodies = [_film_body(SUB_ITEMS, j) for j in range(SUB_REPEATS + 1)]
        url_sub = f"/v1/benchmarks/{benches[SUB_ITEMS]}/submissions"
        r = await c.post(url_sub, content=bodies[0], headers=admin)  # warm-up (answer-key cache, item order)
        subs[SUB_ITEMS].append(r.raise_for_status().json()["id"])
        before = _stored_bytes(engine)
        ours, raw = [], []
        for body in bodies[1:]:
            raw.append(_raw_anchor(url, tmp, body))
            t0 = time.perf_counter()
            r = await c.post(url_sub, content=body, headers=admin)
            ours.append(time.perf_counter() - t0)
            subs[SUB_ITEMS].append(r.raise_for_status().json()["id"])
        out["bytes_per_item"] = (_stored_bytes(engine) - before) / (SUB_REPEATS * SUB_ITEMS)
        out["submit_ms"] = 1000 * statistics.median(ours)
        out["anchor_ms"] = 1000 * statistics.median(raw)
        for n in (100, SUB_ITEMS):
            a, b = subs[n][:2]
            times = []
            for _ in range(30):
                t0 = time.perf_counter()
                r = await c.get(f"/v1/benchmarks/{benches[n]}/compare", params={"a": a, "b": b})
                times.append(time.perf_counter() - t0)
                r.raise_for_status()
            out[f"compare_{n}_ms"] = 1000 * statistics.median(times)
    engine.dispose()
    return out


def report_submissions(backend: str, r: dict[str, float]) -> None:
    print(f"\n{backend}: one film_mcq submission of {SUB_ITEMS:,} items\n")
    print("| figure | value | target |")
    print("|---|---|---|")
    print(f"| database growth per item (predictions included) | {r['bytes_per_item']:.2f} bytes | <= 12 |")
    ratio = r["submit_ms"] / r["anchor_ms"]
    print(
        f"| submission over HTTP, p50 | {r['submit_ms']:.1f} ms ({1000 * r['submit_ms'] / SUB_ITEMS:.2f} us/item; "
        f"{ratio:.1f}x the raw executemany anchor, {r['anchor_ms']:.1f} ms) | <= 4x |"
    )
    cmp = r[f"compare_{SUB_ITEMS}_ms"] / r["compare_100_ms"]
    print(
        f"| compare, p50 | {r[f'compare_{SUB_ITEMS}_ms']:.2f} ms at {SUB_ITEMS:,} items vs "
        f"{r['compare_100_ms']:.2f} ms at 100 ({cmp:.2f}x) | <= 2x |"
    )


def exponent(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(ms) on log(n)."""
    if len(points) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(ms) for _, ms in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def report(backend: str, results: dict[int, dict[str, tuple[float, float]]]) -> None:
    """The table: p50 ms and its ratio to the anchor's p50 timed alongside; b fitted on the p50s over every size
    and over the sizes where the operation's page is full (a store of 10 submissions shows 10 rows, not 50)."""
    sizes = sorted(results)
    anchors = [a for n in sizes for _, a in results[n].values()]
    print(f"\n{backend}: p50 ms (÷ hello-world anchor p50; anchor p50 {min(anchors):.2f}-{max(anchors):.2f} ms)\n")
    print(
        "| operation | "
        + " | ".join(f"{n:,}" for n in sizes)
        + " | b (all sizes) | b (full pages) | target b <= 0.075 |"
    )
    print("|---|" + "---|" * len(sizes) + "---|---|---|")
    for name in REPEATS:
        cells, points = [], []
        for n in sizes:
            if name not in results[n]:
                cells.append("")
                continue
            ms, anchor = results[n][name]
            cells.append(f"{ms:.2f} ({ms / anchor:.0f}x)")
            points.append((n, ms))
        b_all = exponent(points)
        b_full = exponent([(n, ms) for n, ms in points if n >= PAGE_ROWS[name]])
        target = ""
        if name in PAGE_READS:
            target = "one size only" if b_full is None else ("met" if b_full <= 0.075 else "missed") + " (full pages)"
        shown = ["" if b is None else f"{b:.3f}" for b in (b_all, b_full)]
        print(f"| {name} | " + " | ".join(cells) + f" | {shown[0]} | {shown[1]} | {target} |")


def _pg_databases(server: str, n: int) -> tuple[list[str], Callable[[], None]]:
    """``n`` new databases on the server at ``server``, and a function dropping them."""
    admin = create_engine(server, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    names = [f"estibench_scale_{uuid.uuid4().hex[:8]}" for _ in range(n)]
    with admin.connect() as conn:
        for name in names:
            conn.execute(text(f'CREATE DATABASE "{name}"'))

    def drop() -> None:
        with admin.connect() as conn:
            for name in names:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return [make_url(server).set(database=name).render_as_string(hide_password=False) for name in names], drop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres", action="store_true", help="also run on PostgreSQL")
    parser.add_argument("--postgres-url", default=PG_DEFAULT, help="a server URL the bench may create databases on")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="submissions per store, comma-separated")
    parser.add_argument(
        "--submissions-only", action="store_true", help="only the submission figures (storage, time, compare)"
    )
    args = parser.parse_args()
    sizes = [int(n) for n in args.sizes.split(",")]
    for backend in ["SQLite"] + (["PostgreSQL"] if args.postgres else []):
        print(f"{backend}:", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            if backend == "SQLite":
                sub = asyncio.run(submission_costs(f"sqlite:///{tmp}/submissions.db", Path(tmp)))
            else:
                (sub_url,), drop_sub = _pg_databases(args.postgres_url, 1)
                try:
                    sub = asyncio.run(submission_costs(sub_url, Path(tmp)))
                finally:
                    drop_sub()
            report_submissions(backend, sub)
            if args.submissions_only:
                continue
            if backend == "SQLite":
                results = asyncio.run(measure({n: f"sqlite:///{tmp}/scale-{n}.db" for n in sizes}, Path(tmp)))
            else:
                urls, drop = _pg_databases(args.postgres_url, len(sizes))
                try:
                    results = asyncio.run(measure(dict(zip(sizes, urls, strict=True)), Path(tmp)))
                finally:
                    drop()
        report(backend, results)


if __name__ == "__main__":
    main()
