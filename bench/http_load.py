"""HTTP load (issue 4): req/s, p50 and p99 at 32 concurrent clients, each scenario beside a hello-world FastAPI app
started the same way (uvicorn, uvloop/httptools, one process) on the same machine.

    .venv/bin/python bench/http_load.py [--seconds 5] [--repeats 3] [--concurrency 32]

The load generator is pure Python: asyncio streams speaking HTTP/1.1 keep-alive on 32 connections (no client
library in the hot path, so one core drives several thousand req/s). With ``taskset`` available the server runs
on CPU 0 and the generator on CPU 1. Only 127.0.0.1 is loaded; every run is bounded by ``--seconds``. Scenarios:
``/v1/health``; a cached estimator call (same params every time); an uncached small estimator (new params every
request, so each one computes and inserts a run); a benchmark submission (10 film_mcq items). The estibench
server runs with its defaults (SQLite WAL, JSON access log at INFO to /dev/null, rate limiter on with a limit too
high to trigger). The figures are the median over ``--repeats`` runs. Goals: cached ≥ 0.5 × hello-world req/s;
uncached p99 ≤ 5 × its p50; health p99 ≤ 5 × its p50.

Where ``wrk`` is installed (Debian package ``wrk``), the hello-world app, ``/v1/health`` and the cached estimator
are also loaded by it (one thread, the same connections and duration, ``--latency``), as a second table: an
external C load generator, so the figures do not rest on ours alone.
"""

import argparse
import asyncio
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from db.migrate import upgrade  # noqa: E402
from tests.reliability.procs import free_port, wait_ready  # noqa: E402

ADMIN = "ek_admin_bench_key"
HELLO = """
from fastapi import FastAPI
app = FastAPI()

@app.get("/v1/health")
async def health() -> dict:
    return {"status": "ok", "version": "hello", "database": "ok"}
"""

Request = Callable[[int], bytes]


def http_request(method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: keep-alive"]
    for k, v in (headers or {}).items():
        lines.append(f"{k}: {v}")
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


async def connection(port: int, make: Request, counter: itertools.count, stop: float, out: list, bad: list) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.perf_counter() < stop:
            req = make(next(counter))
            t0 = time.perf_counter()
            writer.write(req)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            out.append(time.perf_counter() - t0)
            if not 200 <= status < 300:
                bad.append(status)
    finally:
        writer.close()


async def load(port: int, make: Request, seconds: float, concurrency: int) -> dict:
    counter = itertools.count()
    warm: list[float] = []
    await asyncio.gather(
        *(connection(port, make, counter, time.perf_counter() + 1.0, warm, []) for _ in range(concurrency))
    )
    latencies: list[float] = []
    bad: list[int] = []
    start = time.perf_counter()
    await asyncio.gather(
        *(connection(port, make, counter, start + seconds, latencies, bad) for _ in range(concurrency))
    )
    elapsed = time.perf_counter() - start
    latencies.sort()
    return {
        "rps": len(latencies) / elapsed,
        "p50": latencies[len(latencies) // 2] * 1000,
        "p99": latencies[int(len(latencies) * 0.99)] * 1000,
        "non2xx": len(bad),
    }


def start_server(app: str, env: dict[str, str], port: int, log: Path, factory: bool = False) -> subprocess.Popen:
    cmd = [str(ROOT / ".venv/bin/uvicorn"), app, "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--timeout-keep-alive", "5", "--no-access-log"] + (["--factory"] if factory else [])
    if shutil.which("taskset"):
        cmd = ["taskset", "-c", "0", *cmd]
    return subprocess.Popen(
        cmd, env=env, cwd=env.get("BENCH_CWD", ROOT), stdout=log.open("wb"), stderr=subprocess.STDOUT
    )


def scenarios(port: int) -> dict[str, Request]:
    base = f"http://127.0.0.1:{port}"
    cached_body = json.dumps({"num_symbols": 10, "n": 1000}).encode()
    assert (
        httpx.post(
            f"{base}/v1/estimators/compression.nml_regret",
            content=cached_body,
            headers={"content-type": "application/json"},
        ).status_code
        == 200
    )
    key_items = [{"item_id": f"q{i}", "num_options": 4, "answer_idx": i % 4, "film_id": f"f{i % 3}"} for i in range(10)]
    bench = httpx.post(
        f"{base}/v1/benchmarks",
        json={
            "name": "load",
            "scorer": "film_mcq",
            "answer_key": {"items": key_items},
            "max_submissions_per_day": 0,
        },
        headers={"X-API-Key": ADMIN},
    )
    out: dict[str, Request] = {
        "GET /v1/health": lambda i: http_request("GET", "/v1/health"),
        "cached estimator (compression.nml_regret)": lambda i: http_request(
            "POST", "/v1/estimators/compression.nml_regret", cached_body
        ),
        "uncached small estimator (compression.nml_regret, new n)": lambda i: http_request(
            "POST",
            "/v1/estimators/compression.nml_regret",
            json.dumps({"num_symbols": 10, "n": 2000 + i}).encode(),
        ),
    }
    if bench.status_code == 201:
        bid = bench.json()["id"]
        preds = [{"item_id": f"q{i}", "choice_idx": (i * 7) % 4} for i in range(10)]
        out["benchmark submission (film_mcq, 10 items)"] = lambda i: http_request(
            "POST",
            f"/v1/benchmarks/{bid}/submissions",
            json.dumps({"model": f"m{i}", "predictions": {"items": preds}}).encode(),
            {"X-API-Key": ADMIN},
        )
    else:
        print(f"benchmark routes unavailable ({bench.status_code}): submission scenario missing", file=sys.stderr)
    return out


WRK_SCRIPT = """wrk.method = "POST"
wrk.body = '{body}'
wrk.headers["Content-Type"] = "application/json"
"""
WRK_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def wrk_run(port: int, path: str, args: argparse.Namespace, script: Path | None = None) -> dict:
    """One ``wrk --latency`` run: req/s and the p50 and p99 latency in ms (non-2xx counted by wrk)."""
    cmd = ["wrk", "-t1", f"-c{args.concurrency}", f"-d{args.seconds:g}s", "--latency"]
    cmd += ["-s", str(script)] if script else []
    if shutil.which("taskset"):
        cmd = ["taskset", "-c", str(1 % os.cpu_count()), *cmd]
    out = subprocess.run([*cmd, f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True, check=True).stdout
    lat = {q: float(v) * WRK_UNITS[u] for q, v, u in re.findall(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)$", out, re.M)}
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    return {"rps": rps, "p50": lat["50"], "p99": lat["99"], "non2xx": int(bad.group(1)) if bad else 0}


def wrk_median(port: int, path: str, args: argparse.Namespace, script: Path | None = None) -> dict:
    runs = [wrk_run(port, path, args, script) for _ in range(args.repeats)]
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def print_table(title: str, hello_res: dict, rows: list[tuple[str, dict]]) -> None:
    print(f"\n{title}\n")
    print("| scenario | req/s | p50 ms | p99 ms | non-2xx | req/s ÷ hello-world | p99 ÷ p50 |")
    print("|---|---|---|---|---|---|---|")
    for name, r in [("hello-world FastAPI `GET` (anchor)", hello_res), *rows]:
        print(
            f"| {name} | {r['rps']:.0f} | {r['p50']:.1f} | {r['p99']:.1f} | {r['non2xx']:.0f} | "
            f"{r['rps'] / hello_res['rps']:.2f} | {r['p99'] / r['p50']:.1f} |"
        )


def median_run(port: int, make: Request, args: argparse.Namespace) -> dict:
    runs = [asyncio.run(load(port, make, args.seconds, args.concurrency)) for _ in range(args.repeats)]
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--env", action="append", default=[], help="extra KEY=VALUE for the estibench server")
    args = parser.parse_args()
    if shutil.which("taskset"):
        os.sched_setaffinity(0, {1 % os.cpu_count()})
    tmp = Path(tempfile.mkdtemp(prefix="estibench-load-"))
    url = f"sqlite:///{tmp / 'load.db'}"
    upgrade(url)
    (tmp / "hello_app.py").write_text(HELLO)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ESTIBENCH_")}
    env.update(
        ESTIBENCH_DATABASE_URL=url,
        ESTIBENCH_DATA_DIR=str(tmp),
        ESTIBENCH_ADMIN_KEY=ADMIN,
        ESTIBENCH_RATE_LIMIT_PER_MINUTE=str(10**9),
        ESTIBENCH_SUBMISSIONS_PER_DAY="1000000",
    )
    env.update(kv.split("=", 1) for kv in args.env)
    rows, wrk_rows = [], []
    use_wrk = shutil.which("wrk") is not None
    script = tmp / "cached.lua"
    script.write_text(WRK_SCRIPT.format(body=json.dumps({"num_symbols": 10, "n": 1000})))
    hello_port, port = free_port(), free_port()
    hello = start_server("hello_app:app", {**env, "BENCH_CWD": str(tmp)}, hello_port, tmp / "hello.log")
    try:
        wait_ready(hello_port)
        hello_res = median_run(hello_port, lambda i: http_request("GET", "/v1/health"), args)
        hello_wrk = wrk_median(hello_port, "/v1/health", args) if use_wrk else None
    finally:
        hello.terminate()
        hello.wait()
    server = start_server("api.app:create_app", env, port, tmp / "api.log", factory=True)
    try:
        wait_ready(port)
        for name, make in scenarios(port).items():
            rows.append((name, median_run(port, make, args)))
        if use_wrk:
            wrk_rows.append(("GET /v1/health", wrk_median(port, "/v1/health", args)))
            wrk_rows.append(
                (
                    "cached estimator (compression.nml_regret)",
                    wrk_median(port, "/v1/estimators/compression.nml_regret", args, script),
                )
            )
    finally:
        server.terminate()
        server.wait()
    print_table(
        f"Own load generator ({args.concurrency} connections, {args.seconds:g} s, median of {args.repeats})",
        hello_res,
        rows,
    )
    if hello_wrk is not None:
        print_table(
            f"wrk ({args.concurrency} connections, {args.seconds:g} s, median of {args.repeats})", hello_wrk, wrk_rows
        )
    else:
        print("\nwrk not installed: external load generator table skipped", file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
