"""The browser tests' shared pieces: Debian's chromium through Playwright (no browser is downloaded), and a live
API server with a job worker on 127.0.0.1, one per test module."""

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from db.migrate import upgrade
from tests.conftest import REQUIRE_SERVICES
from tests.reliability.procs import env_for, free_port, running

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
