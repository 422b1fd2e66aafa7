"""Files in the right place and the container layout: ``make backup`` without a database, what git and Docker
ignore, the SQLite data directory, production mode without a secret key, the Dockerfile's layers and health check,
and compose.yaml."""

import fnmatch
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient
from pydantic import ValidationError

from api.app import create_app
from tests.conftest import REQUIRE_SERVICES
from usecases.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"


def test_make_backup_without_a_database_fails_clearly_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "estibench.db"
    r = subprocess.run(
        ["make", "-s", "-o", "install", "backup", f"VENV={ROOT / '.venv'}", f"BACKUP={tmp_path / 'backups' / 'b.db'}"],
        cwd=ROOT,
        env={**os.environ, "ESTIBENCH_DATABASE_URL": f"sqlite:///{missing}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode != 0
    assert f"no database at {missing}" in r.stderr and "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_backups_secret_and_queue_files_are_ignored_by_git() -> None:
    paths = ["backups/estibench-20260101.db", "secret_key", "queue.db", "estibench.db", ".env"]
    r = subprocess.run(["git", "check-ignore", *paths], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert r.stdout.split() == paths


def _dockerignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule: a path is left out when it or one of its parent directories matches a pattern."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(
        fnmatch.fnmatch(prefix, p) or (p.startswith("**/") and fnmatch.fnmatch(prefix.split("/")[-1], p[3:]))
        for p in patterns
        for prefix in prefixes
    )


def test_dockerignore_leaves_out_local_state_and_keeps_the_sources() -> None:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    for left_out in [
        "backups/estibench-1.db",
        "estibench.egg-info/PKG-INFO",
        "build/lib/estibench.egg-info/PKG-INFO",
        ".hypothesis/examples/x",
        ".env",
        "estibench.db",
        "estibench.db-wal",
        "data/queue.db",
        "secret_key",
        ".venv/bin/python",
        "venv/bin/python",
        ".git/HEAD",
    ]:
        assert _dockerignored(left_out, patterns), left_out
    for kept in ["pyproject.toml", "api/app.py", "service/reproductions/data/vimu_published_rows.json", "db/env.py"]:
        assert not _dockerignored(kept, patterns), kept


def test_sqlite_files_live_beside_the_database(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    database = Path(db_url.removeprefix("sqlite:///"))
    elsewhere = tmp_path / "started-here"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("ESTIBENCH_DATA_DIR", raising=False)
    settings = Settings(database_url=db_url, admin_key="ek_admin_test_bootstrap_key", log_level="WARNING")
    assert settings.data_dir == database.parent
    admin = {"Authorization": "Bearer ek_admin_test_bootstrap_key"}
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        assert (
            c.post("/v1/api-keys", json={"name": "k", "scopes": ["estimators:run"]}, headers=admin).status_code == 201
        )
        job = {"kind": "estimator", "name": "compression.nml_regret", "params": {"num_symbols": 2, "n": 5}}
        assert c.post("/v1/jobs", json=job).status_code in (201, 202)
    assert (database.parent / "secret_key").is_file() and (database.parent / "queue.db").is_file()
    assert list(elsewhere.iterdir()) == []
    assert Settings(database_url="postgresql+psycopg://u@h/d").data_dir == Path("data")
    monkeypatch.setenv("ESTIBENCH_DATA_DIR", str(tmp_path / "chosen"))
    assert Settings(database_url=db_url).data_dir == tmp_path / "chosen"


def test_production_without_a_secret_key_says_how_to_make_one() -> None:
    with pytest.raises(ValidationError, match=r"ESTIBENCH_SECRET_KEY is required .*secrets\.token_hex\(32\)"):
        Settings(env="production", secret_key=None)


def _dockerfile_instructions() -> list[tuple[str, str]]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0], line.split(None, 1)[1]) for line in lines]


def test_dockerfile_installs_dependencies_before_the_sources() -> None:
    steps = _dockerfile_instructions()
    copies = [i for i, (op, _) in enumerate(steps) if op == "COPY"]
    first, sources = copies[0], copies[-1]
    assert steps[first][1].split()[-2:] == ["pyproject.toml", "/app/"]
    assert steps[sources][1].split()[-2:] == [".", "/app"]
    between = " ".join(arg for op, arg in steps[first:sources] if op == "RUN")
    assert "pip install --quiet -r /tmp/requirements.txt" in between
    assert ("ENV", "ESTIBENCH_ENV=production") in [(op, a) for op, arg in steps for a in arg.split() if op == "ENV"]


def test_dockerfile_healthcheck_follows_the_port(monkeypatch: pytest.MonkeyPatch) -> None:
    (health,) = [arg for op, arg in _dockerfile_instructions() if op == "HEALTHCHECK"]
    code = yaml.safe_load(health[health.index("CMD") + 3 :])[-1]
    seen = []
    monkeypatch.setenv("ESTIBENCH_PORT", "8123")
    monkeypatch.setattr(
        "urllib.request.urlopen", lambda url, timeout: seen.append(url) or type("R", (), {"status": 200})
    )
    with pytest.raises(SystemExit) as done:
        exec(code, {})
    assert done.value.code == 0 and seen == ["http://127.0.0.1:8123/v1/health"]


def test_container_refuses_to_start_without_a_secret_key() -> None:
    (cmd,) = [arg for op, arg in _dockerfile_instructions() if op == "CMD"]
    env = {k: v for k, v in os.environ.items() if k != "ESTIBENCH_SECRET_KEY"}
    r = subprocess.run(["sh", "-c", cmd], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 78 and r.stdout == ""
    assert re.fullmatch(r"estibench: ESTIBENCH_SECRET_KEY is not set .*token_hex\(32\).*\n", r.stderr)
    given = subprocess.run(["sh", "-c", cmd], env=env | {"ESTIBENCH_SECRET_KEY": "x"}, capture_output=True, timeout=30)
    assert given.returncode == 127  # past the check: /app/.venv exists only in the image


def test_compose_runs_api_replicas_workers_postgres_and_redis() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    assert {"api", "worker", "postgres", "redis", "migrate"} <= set(services)
    for name in ("api", "worker", "migrate"):
        env = services[name]["environment"]
        assert (
            env["ESTIBENCH_DATABASE_URL"].startswith("postgresql+psycopg://")
            and "@postgres:5432/" in env["ESTIBENCH_DATABASE_URL"]
        )
        assert env["ESTIBENCH_REDIS_URL"] == "redis://redis:6379/0" and env["ESTIBENCH_ENV"] == "production"
    assert services["api"]["deploy"]["replicas"] >= 2 and services["worker"]["deploy"]["replicas"] >= 2
    assert "worker" not in " ".join(services["api"]["command"]) and services["worker"]["command"][-1] == "worker"
    for name in ("api", "worker"):
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert "db.migrate" in " ".join(services["migrate"]["command"])


def test_compose_validates_with_docker_compose() -> None:
    if shutil.which("docker-compose") is None:
        if REQUIRE_SERVICES:
            pytest.fail("docker-compose is required (ESTIBENCH_REQUIRE_SERVICES=1)")
        pytest.skip("docker-compose is not installed")
    run = ["docker-compose", "-f", str(ROOT / "compose.yaml"), "config", "-q"]
    env = {k: v for k, v in os.environ.items() if k != "ESTIBENCH_SECRET_KEY"}
    assert subprocess.run(run, env=env | {"ESTIBENCH_SECRET_KEY": "s"}, capture_output=True, timeout=60).returncode == 0
    missing = subprocess.run(run, env=env, capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0 and "set ESTIBENCH_SECRET_KEY" in missing.stderr
