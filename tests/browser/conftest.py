"""The browser tests' shared pieces: Debian's chromium through Playwright (no browser is downloaded), a live API
server with a job worker on 127.0.0.1, one per test module, and a server whose clock the test sets."""

import os
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from db.migrate import upgrade
from tests.conftest import REQUIRE_SERVICES
from tests.factories import wait_until
from tests.reliability.procs import env_for, free_port, running
from usecases.clock import utcnow
from usecases.settings import Settings

FIXTURES = Path(__file__).resolve().parent.parent / "service" / "fixtures"
ADMIN = {"Authorization": "Bearer ek_admin_reliability_key"}


def chromium_path() -> str | None:
    return os.environ.get("ESTIBENCH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser() -> Iterator:
    path = chromium_path()
    if path is None:
        if REQUIRE_SERVICES:
            pytest.fail("Debian's chromium is required (ESTIBENCH_REQUIRE_SERVICES=1) but not installed")
        pytest.skip("chromium is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("web")
    url = f"sqlite:///{root / 'estibench.db'}"
    upgrade(url)
    env = env_for(url, root / "data")
    port = free_port()
    with running("api", env, port, root / "api.log"), running("worker", env, log=root / "worker.log"):
        yield f"http://127.0.0.1:{port}"


class Clock:
    """The app's clock (``Services.clock``), set by hand."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@dataclass(frozen=True)
class ClockedServer:
    url: str
    clock: Clock


@pytest.fixture
def clocked_server(settings: Settings) -> Iterator[ClockedServer]:
    """The app on 127.0.0.1, served by uvicorn in a thread of this process so that the test sets its clock (the
    returned ``clock.now``; it starts at the real time), with jobs run inside their requests; the admin key is the
    test settings' one (``tests.factories.ADMIN``)."""
    import uvicorn

    from api.app import create_app

    app = create_app(settings.model_copy(update={"queue": "immediate", "rate_limit_per_minute": 0}))
    clock = Clock(utcnow())
    app.state.services.clock = clock
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning"))
    thread = threading.Thread(target=server.run, name="clocked-server", daemon=True)
    thread.start()
    wait_until(lambda: server.started or not thread.is_alive(), 60, "the server's start")
    assert server.started, "uvicorn did not start"
    try:
        yield ClockedServer(f"http://127.0.0.1:{server.config.port}", clock)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
