"""usecases/health.py: the probe's answer is reused for ``ttl`` seconds (then stale: the next ``status`` asks the
database again), a failed answer as much as a good one; concurrent callers of a stale probe share one check."""

import threading
from types import SimpleNamespace

import pytest

from usecases import health
from usecases.health import DatabaseProbe


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock(100.0)
    monkeypatch.setattr(health, "time", SimpleNamespace(monotonic=c.monotonic))
    return c


class Check:
    def __init__(self, *answers: bool) -> None:
        self.answers = list(answers)
        self.calls = 0

    def __call__(self) -> bool:
        self.calls += 1
        return self.answers.pop(0)


def test_a_new_probe_has_no_fresh_answer(clock: Clock) -> None:
    assert DatabaseProbe(Check(True)).fresh() is None


def test_an_answer_is_reused_for_ttl_seconds_then_asked_again(clock: Clock) -> None:
    check = Check(True, False, True)
    probe = DatabaseProbe(check, ttl=2.0)
    assert probe.status() is True and check.calls == 1
    clock.now = 101.5
    assert probe.fresh() is True
    assert probe.status() is True and check.calls == 1
    clock.now = 102.0  # exactly ttl later: stale
    assert probe.fresh() is None
    assert probe.status() is False and check.calls == 2
    clock.now = 103.9
    assert probe.status() is False and check.calls == 2  # a failed answer is reused too
    assert probe.fresh() is False
    clock.now = 104.0
    assert probe.status() is True and check.calls == 3


def test_the_default_ttl_is_one_second(clock: Clock) -> None:
    assert health.PROBE_TTL_S == 1.0
    check = Check(True, True)
    probe = DatabaseProbe(check)
    probe.status()
    clock.now = 100.75
    assert probe.fresh() is True
    clock.now = 101.0
    assert probe.fresh() is None
    probe.status()
    assert check.calls == 2


def test_concurrent_callers_of_a_stale_probe_share_one_check() -> None:
    entered = threading.Event()
    release = threading.Event()
    calls = []

    def slow_check() -> bool:
        calls.append(1)
        entered.set()
        assert release.wait(5)
        return True

    probe = DatabaseProbe(slow_check, ttl=60.0)
    answers: list[bool] = []
    first = threading.Thread(target=lambda: answers.append(probe.status()))
    first.start()
    assert entered.wait(5)
    others = [threading.Thread(target=lambda: answers.append(probe.status())) for _ in range(3)]
    for t in others:
        t.start()
    release.set()
    for t in [first, *others]:
        t.join(5)
    assert answers == [True] * 4 and len(calls) == 1
