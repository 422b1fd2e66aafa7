"""usecases/logs.py: a record becomes one JSON line (UTC time to the millisecond, level, logger, message, every
``extra`` field, the traceback); ``configure`` sends ``estibench.*`` to stderr alone, at the given level."""

import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from usecases.logs import JsonFormatter, configure


def _record(**fields: object) -> logging.LogRecord:
    base: dict[str, object] = {
        "name": "estibench.api",
        "levelno": logging.WARNING,
        "levelname": "WARNING",
        "msg": "job %s failed after %d attempts",
        "args": ("j1", 3),
        "created": 1_000_000_000.0,  # 2001-09-09T01:46:40Z
        "msecs": 7.9,
    }
    return logging.makeLogRecord(base | fields)


def test_a_record_is_one_json_object_with_utc_millisecond_time() -> None:
    line = JsonFormatter().format(_record())
    assert "\n" not in line
    assert json.loads(line) == {
        "ts": "2001-09-09T01:46:40.007Z",
        "level": "WARNING",
        "logger": "estibench.api",
        "msg": "job j1 failed after 3 attempts",
    }


def test_extra_fields_are_kept_and_unserializable_ones_printed() -> None:
    out = json.loads(JsonFormatter().format(_record(request_id="req-9", path=Path("/tmp/x"), msecs=999.0)))
    assert out["request_id"] == "req-9" and out["path"] == "/tmp/x"
    assert out["ts"] == "2001-09-09T01:46:40.999Z"
    assert "args" not in out and "created" not in out and "levelno" not in out


def test_an_exception_is_logged_with_its_traceback() -> None:
    try:
        raise KeyError("missing-item")
    except KeyError:
        record = _record(exc_info=sys.exc_info())
    out = json.loads(JsonFormatter().format(record))
    assert out["exc"].startswith("Traceback (most recent call last):")
    assert "KeyError: 'missing-item'" in out["exc"]
    assert "exc" not in json.loads(JsonFormatter().format(_record()))


@pytest.fixture
def restored_logger() -> Iterator[logging.Logger]:
    root = logging.getLogger("estibench")
    saved = (root.handlers[:], root.level, root.propagate)
    yield root
    root.handlers[:], root.level, root.propagate = saved[0], saved[1], saved[2]


def test_configure_sends_estibench_logs_to_stderr_as_json_lines_at_the_level(
    restored_logger: logging.Logger, capsys: pytest.CaptureFixture[str]
) -> None:
    configure("warning")
    assert restored_logger.level == logging.WARNING and restored_logger.propagate is False
    assert len(restored_logger.handlers) == 1
    log = logging.getLogger("estibench.worker")
    log.info("not shown")
    log.warning("shown %d", 5, extra={"job_id": "j7"})
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    out = json.loads(lines[0])
    assert (out["level"], out["logger"], out["msg"], out["job_id"]) == ("WARNING", "estibench.worker", "shown 5", "j7")


def test_configure_plain_text_and_again_replaces_the_handler(
    restored_logger: logging.Logger, capsys: pytest.CaptureFixture[str]
) -> None:
    configure("DEBUG", as_json=False)
    configure("DEBUG", as_json=False)
    assert len(restored_logger.handlers) == 1 and restored_logger.level == logging.DEBUG
    logging.getLogger("estibench.api").debug("hello %s", "there")
    assert capsys.readouterr().err == "DEBUG estibench.api hello there\n"


def test_configure_defaults_to_info_json(restored_logger: logging.Logger, capsys: pytest.CaptureFixture[str]) -> None:
    configure()
    assert restored_logger.level == logging.INFO
    log = logging.getLogger("estibench.db")
    log.debug("not shown")
    log.info("started")
    (line,) = capsys.readouterr().err.splitlines()
    assert json.loads(line)["msg"] == "started"
