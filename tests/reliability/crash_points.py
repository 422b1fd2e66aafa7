"""An API process that SIGKILLs itself at a named point of an idempotent submission (the crash test
tests/reliability/test_idempotency_crash.py; docs/testing.md).

``python -m tests.reliability.crash_points ARM_FILE`` imports the app (most of a start; no database is opened), wraps
three steps of ``usecases.submissions`` in this process only (the points the in-process fault tests of
tests/usecases/test_submission_transactions.py name), then answers commands on its standard input: ``serve PORT``
forks an API process serving on PORT as ``python -m tests.reliability.procs api PORT`` does (its app, database
connections and server are made in the child, after any earlier child's death) and answers its pid; ``wait PID``
reaps it and answers its exit status (``-9`` for SIGKILL). The points:

- ``before_commit``: the submission and its scoring are written inside the write transaction, not committed;
- ``after_commit``: that transaction has committed (with the completed idempotency record), no answer is sent;
- ``during_replay``: a retry's claim has read the completed record of its key, inside its own write transaction.

A request that reaches a point while ``ARM_FILE`` holds that point's name removes the file and kills its process
with SIGKILL, so exactly one request dies there; without the file the wrappers only pass through. Nothing in the
service reads the file or knows the wrappers. ``ESTIBENCH_TEST_IDEMPOTENCY_STALE_S`` sets the age after which an
in-flight ``Idempotency-Key`` record counts as abandoned (``IDEMPOTENCY_STALE``, 120 s in the service), so a retry
of a request killed before its commit is let through within the test's time.
"""

import os
import signal
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

POINTS = ("before_commit", "after_commit", "during_replay")


def die_if_armed(point: str, arm: Path) -> None:
    """SIGKILL this process when ``arm`` names ``point`` (removing ``arm`` first)."""
    try:
        armed = arm.read_text().strip()
    except FileNotFoundError:
        return
    if armed == point:
        arm.unlink()
        os.kill(os.getpid(), signal.SIGKILL)


def install(arm: Path) -> None:
    """Wrap the three steps of ``usecases.submissions`` (module attributes, looked up at each call)."""
    from usecases import submissions

    store_scoring, create, claim = submissions.store_scoring, submissions._create, submissions.idem_repo.claim

    def storing_then_dying(*args: Any, **kw: Any) -> None:
        store_scoring(*args, **kw)
        die_if_armed("before_commit", arm)

    def committing_then_dying(*args: Any, **kw: Any) -> str:
        text = create(*args, **kw)
        die_if_armed("after_commit", arm)
        return text

    def claiming_then_dying(*args: Any, **kw: Any) -> Any:
        existing = claim(*args, **kw)
        if existing is not None and existing.status_code is not None:
            die_if_armed("during_replay", arm)
        return existing

    submissions.store_scoring = storing_then_dying
    submissions._create = committing_then_dying
    submissions.idem_repo.claim = claiming_then_dying
    stale = os.environ.get("ESTIBENCH_TEST_IDEMPOTENCY_STALE_S")
    if stale:
        submissions.IDEMPOTENCY_STALE = timedelta(seconds=float(stale))


def _serve(port: int) -> None:
    """In a forked child: serve on ``port`` as ``tests.reliability.procs`` does (output to the log), then end."""
    from tests.reliability import procs

    os.dup2(2, 1)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    try:
        sys.argv = [sys.argv[0], "api", str(port)]
        procs._main()
    finally:
        os._exit(0)


def _main() -> None:
    import api.app  # noqa: F401  (the imports are most of a start; they open no database)

    install(Path(sys.argv[1]))
    for line in sys.stdin:
        command, arg = line.split()
        if command == "serve":
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                _serve(int(arg))
            answer = pid
        else:
            _, status = os.waitpid(int(arg), 0)
            answer = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        print(answer, flush=True)


if __name__ == "__main__":
    _main()
