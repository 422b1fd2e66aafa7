"""Real server and worker processes for the reliability and scale-out tests (127.0.0.1 only, bounded in time).

``python -m tests.reliability.procs api PORT`` / ``... worker`` run uvicorn (``--factory``) / the Huey consumer
as ``make serve`` does, with the test estimator registered; settings come from ``ESTIBENCH_*`` variables.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env_for(database_url: str, data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ESTIBENCH_")}
    env.update(
        ESTIBENCH_ENV="test",
        ESTIBENCH_DATABASE_URL=database_url,
        ESTIBENCH_DATA_DIR=str(data_dir),
        ESTIBENCH_SECRET_KEY="reliability",
        ESTIBENCH_ADMIN_KEY="ek_admin_reliability_key",
        ESTIBENCH_LOG_LEVEL="WARNING",
        ESTIBENCH_RATE_LIMIT_PER_MINUTE="0",
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


def start(role: str, env: dict[str, str], port: int | None = None, log: Path | None = None) -> subprocess.Popen:
    """Start ``role`` ("api" or "worker") in its own process group."""
    args = [sys.executable, "-m", "tests.reliability.procs", role] + ([str(port)] if port else [])
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
    return subprocess.Popen(args, env=env, cwd=ROOT, stdout=out, stderr=out, start_new_session=True)


def wait_ready(port: int, proc: subprocess.Popen | None = None, timeout: float = 180.0) -> None:
    """Poll ``/v1/health`` until it answers 200: fail at once when ``proc`` has exited, else at the deadline (long:
    on a loaded machine the start-up alone, migrations and imports, can take a minute)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the API on port {port} exited with {proc.returncode} before it was ready")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"the API on port {port} did not become ready")


def kill(proc: subprocess.Popen, sig: int = signal.SIGKILL, timeout: float = 15.0) -> None:
    """Send ``sig`` to the process group of ``proc`` (it and the workers it forked) and reap it."""
    if proc.poll() is None:
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)


@contextmanager
def running(role: str, env: dict[str, str], port: int | None = None, log: Path | None = None) -> Iterator:
    proc = start(role, env, port, log)
    try:
        if role == "api":
            wait_ready(port, proc)  # type: ignore[arg-type]
        yield proc
    finally:
        kill(proc, signal.SIGTERM)


def _main() -> None:
    from tests import support_estimators

    support_estimators.register()
    role = sys.argv[1]
    if role == "api":
        import uvicorn

        uvicorn.run(
            "api.app:create_app",
            factory=True,
            host="127.0.0.1",
            port=int(sys.argv[2]),
            log_level="warning",
            timeout_keep_alive=5,
        )
    elif role == "worker":
        import worker

        worker.main()
    else:
        raise SystemExit(f"unknown role {role!r}")


if __name__ == "__main__":
    _main()
