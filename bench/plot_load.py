"""Health under hostile plot load (issue 24): a leaderboard of 100 submissions whose names are mathtext
(``$x_{i}$`` repeated), 8 parallel GETs of its plot (4 SVG, 4 PNG, cold cache) while one client polls
``/v1/health`` back to back; the health latencies are compared with the same poll on the idle server.

    .venv/bin/python bench/plot_load.py [--rows 100] [--parallel 8]

The API runs as in the reliability tests (``tests/reliability/procs.py``: uvicorn, one process, SQLite). Prints the
idle and loaded health p50 and max, the plot answers (status, X-Plot-Status, seconds) and the API's peak RSS growth
(``VmHWM``; the drawing happens in forked children, which are not counted). Goal: loaded p50 within 5x idle p50,
loaded max under 1 s, every plot 200.
"""

import argparse
import json
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from db.migrate import upgrade
from tests.reliability.procs import env_for, free_port, running

ADMIN = {"Authorization": "Bearer ek_admin_reliability_key"}
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "service" / "fixtures"


def rss_peak_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM")


def poll_health(base: str, stop: threading.Event, out: list[float], at_least: int = 0) -> None:
    with httpx.Client(base_url=base, timeout=30) as c:
        while not stop.is_set() or len(out) < at_least:
            t = time.perf_counter()
            assert c.get("/v1/health").status_code == 200
            out.append(time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--parallel", type=int, default=8)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="estibench-plot-load-"))
    url = f"sqlite:///{root / 'estibench.db'}"
    upgrade(url)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with running("api", env_for(url, root / "data"), port, root / "api.log") as proc:
        key = json.loads((FIXTURES / "film_mcq_key.json").read_text())
        preds = json.loads((FIXTURES / "film_mcq_predictions.json").read_text())
        with httpx.Client(base_url=base, timeout=120, headers=ADMIN) as c:
            bench = c.post(
                "/v1/benchmarks", json={"name": "films", "scorer": "film_mcq", "description": "d", "answer_key": key}
            ).json()["id"]
            for i in range(args.rows):
                name = f"{i:03d} " + "$x_{i}$" * 17
                r = c.post(f"/v1/benchmarks/{bench}/submissions", json={"model": name, "predictions": preds})
                assert r.status_code == 201, r.text
        idle: list[float] = []
        stop = threading.Event()
        stop.set()
        poll_health(base, stop, idle, at_least=200)
        rss_before = rss_peak_kb(proc.pid)
        loaded: list[float] = []
        stop = threading.Event()
        poller = threading.Thread(target=poll_health, args=(base, stop, loaded))
        poller.start()

        def plot(fmt: str) -> tuple[int, str, float]:
            t = time.perf_counter()
            r = httpx.get(f"{base}/v1/benchmarks/{bench}/leaderboard/plot", params={"format": fmt}, timeout=300)
            return r.status_code, r.headers.get("x-plot-status", "drawn"), time.perf_counter() - t

        with ThreadPoolExecutor(args.parallel) as pool:
            answers = list(pool.map(plot, ["svg", "png"] * (args.parallel // 2)))
        stop.set()
        poller.join()
        rss_after = rss_peak_kb(proc.pid)
    print(f"idle health   n={len(idle)} p50={1000 * statistics.median(idle):.1f} ms max={1000 * max(idle):.1f} ms")
    print(
        f"loaded health n={len(loaded)} p50={1000 * statistics.median(loaded):.1f} ms "
        f"max={1000 * max(loaded):.1f} ms (p50 ratio {statistics.median(loaded) / statistics.median(idle):.2f})"
    )
    for status, how, seconds in answers:
        print(f"plot {status} {how} {seconds:.1f} s")
    print(f"API peak RSS {rss_before / 1024:.0f} MB -> {rss_after / 1024:.0f} MB")


if __name__ == "__main__":
    main()
