"""The reliability tests start real server and worker processes and bound their latency and memory: under
pytest-xdist each holds the suite's lock exclusively, so no other test runs beside it (see tests/conftest.py)."""

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import pytest


@pytest.fixture(autouse=True)
def suite_lock(suite_lock_file: Callable[..., AbstractContextManager[None]]) -> Iterator[None]:
    with suite_lock_file(exclusive=True):
        yield
