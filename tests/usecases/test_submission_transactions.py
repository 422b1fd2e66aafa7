"""A submission's writes (usecases/submissions.py): scored in memory, then one short transaction stores the
submission, its scoring and the completed idempotency record together, so a failure at any point leaves either
nothing or everything, and a retry never stores a second submission (docs/security.md, "Quotas under
concurrency"; docs/architecture.md, "A submission")."""

import json
import threading
from collections.abc import Iterator

import pytest
from sqlalchemy import func, select

from db.models import Submission
from tests.factories import film_predictions, principal, stored_benchmark
from usecases import benchmarks, runs, submissions
from usecases.api_keys import Principal
from usecases.services import Services
from usecases.settings import Settings


@pytest.fixture
def services(settings: Settings) -> Iterator[Services]:
    s = Services(settings.model_copy(update={"queue": "off"}))
    yield s
    s.dispose()


@pytest.fixture
def owner(services: Services) -> Principal:
    return principal(services, "benchmarks:write", "submissions:write")


def stored(services: Services) -> int:
    with services.engines.read.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(Submission)).scalar_one())


def new(correct: int = 4) -> submissions.NewSubmission:
    return submissions.NewSubmission("m", film_predictions(correct)["items"], {})


class Died(BaseException):
    """The process dying at a named point (a BaseException, as SIGKILL's effect on Python code is abrupt)."""


def test_dying_after_the_commit_leaves_the_answer_for_the_retry(
    services: Services, owner: Principal, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = stored_benchmark(services, owner)
    real = submissions._create

    def commits_then_dies(*args: object, **kw: object) -> str:
        real(*args, **kw)
        raise Died

    monkeypatch.setattr(submissions, "_create", commits_then_dies)
    with pytest.raises(Died):
        submissions.submit(services, owner, bench.row.id, new(), "k1")
    monkeypatch.undo()
    retry = submissions.submit(services, owner, bench.row.id, new(), "k1")
    assert retry.replayed and stored(services) == 1
    assert json.loads(retry.json)["model"] == "m"


def test_failing_before_the_commit_stores_nothing_and_frees_the_key(
    services: Services, owner: Principal, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = stored_benchmark(services, owner)

    def dies(*args: object) -> None:
        raise Died

    monkeypatch.setattr(submissions, "store_scoring", dies)
    with pytest.raises(Died):
        submissions.submit(services, owner, bench.row.id, new(), "k2")
    assert stored(services) == 0
    monkeypatch.undo()
    first = submissions.submit(services, owner, bench.row.id, new(), "k2")
    assert not first.replayed and stored(services) == 1


def test_dying_during_a_replay_changes_nothing(
    services: Services, owner: Principal, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = stored_benchmark(services, owner)
    first = submissions.submit(services, owner, bench.row.id, new(), "k3")

    def dies(*args: object) -> None:
        raise Died

    monkeypatch.setattr(submissions.idem_repo, "claim", dies)
    with pytest.raises(Died):
        submissions.submit(services, owner, bench.row.id, new(), "k3")
    monkeypatch.undo()
    again = submissions.submit(services, owner, bench.row.id, new(), "k3")
    assert again.replayed and again.json == first.json and stored(services) == 1


def test_scoring_holds_no_write_transaction(
    services: Services, owner: Principal, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a submission is being scored, another write (here a run stored) goes through at once: on SQLite a
    write transaction held during the scoring would make it wait for the database's one writer."""
    bench = stored_benchmark(services, owner)
    scoring, release = threading.Event(), threading.Event()
    real = benchmarks.score_submission

    def slow_scoring(*args: object) -> object:
        scoring.set()
        assert release.wait(60)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(submissions, "score_submission", slow_scoring)
    done: list[object] = []
    submitting = threading.Thread(
        target=lambda: done.append(submissions.submit(services, owner, bench.row.id, new(), None))
    )
    submitting.start()
    try:
        assert scoring.wait(60)
        key = ("estimator", "test.write", "1", runs.sha256_hex("{}"))
        row, inserted = runs.store_run(services.engines, key, "{}", runs.Computed('{"v":1}', 1.0, []), None)
        assert inserted and row.name == "test.write" and not done  # stored while the scoring still runs
    finally:
        release.set()
        submitting.join(60)
    assert len(done) == 1 and stored(services) == 1
