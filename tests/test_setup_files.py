"""Files in the right place and the container layout: ``make backup`` without a database, what git and Docker
ignore, the SQLite data directory, production mode without a secret key, the Dockerfile's layers and health check,
and compose.yaml."""

import fnmatch
import ipaddress
import os
import re
import shutil
import subprocess
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from pydantic import ValidationError
from sqlalchemy.engine import make_url

from tests.conftest import REQUIRE_SERVICES
from tests.factories import serving
from usecases.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
LOCK_ENTRY = re.compile(
    r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+?)(?: ;[^\\]*)? \\$((?:\n +--hash=sha256:[0-9a-f]{64}(?: \\)?)+)", re.M
)


def lock_pins(path: Path) -> dict[str, set[str]]:
    """Every pinned version of each distribution in a uv/pip-tools lock, by canonical name (a universal lock may
    pin two versions under different markers). Fails when an entry is not pinned with ``==`` and hashed."""
    text = path.read_text()
    pins: dict[str, set[str]] = {}
    for name, version, _ in LOCK_ENTRY.findall(text):
        pins.setdefault(canonicalize_name(name), set()).add(version)
    entries = [line for line in text.splitlines() if line and not line.startswith((" ", "#"))]
    assert len(entries) == sum(len(v) for v in pins.values()), f"{path.name}: an entry without == or hashes"
    return pins


def _check_lock_covers(requirements: list[str], pins: dict[str, set[str]], lock: str) -> None:
    """Each requirement's distribution is in the lock at versions satisfying its range, and so is every distribution
    its extras ask for (read from the installed metadata, markers evaluated for Linux and this Python)."""
    for line in requirements:
        req = Requirement(line)
        versions = pins.get(canonicalize_name(req.name))
        assert versions, f"{req.name} is in pyproject.toml but not in {lock}"
        assert all(req.specifier.contains(v, prereleases=True) for v in versions), f"{lock}: {req.name} {versions}"
        for extra in req.extras:
            for dep in map(Requirement, metadata.requires(req.name) or []):
                if dep.marker is not None and dep.marker.evaluate({"extra": extra}) and not dep.marker.evaluate():
                    assert canonicalize_name(dep.name) in pins, f"{req.name}[{extra}] needs {dep.name}: not in {lock}"


@pytest.mark.slow
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
    with serving(settings) as c:
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


def test_dockerfile_installs_the_lock_before_the_sources_and_ships_no_sources_tree() -> None:
    steps = _dockerfile_instructions()
    froms = [i for i, (op, _) in enumerate(steps) if op == "FROM"]
    assert len(froms) == 2 and all(steps[i][1].split()[0] == "${BASE_IMAGE}" for i in froms)
    assert ("ARG", "BASE_IMAGE=python:3.11-slim") in steps[: froms[0]]
    build, runtime = steps[froms[0] : froms[1]], steps[froms[1] :]
    runs = [arg for op, arg in build if op in ("COPY", "RUN")]
    assert runs[-4:] == [
        "scripts/install.sh /src/scripts/install.sh",
        'sh scripts/install.sh /app/.venv "" deps',
        ". /src",
        'sh scripts/install.sh /app/.venv "" package',
    ]
    assert runs[0] == "requirements/ /src/requirements/"
    copies = [arg for op, arg in runtime if op == "COPY"]
    assert copies == ["--from=build /app/.venv /app/.venv", "scripts/serve.sh /app/serve.sh"]
    assert ("USER", "10001") in runtime and "default-jre-headless" in " ".join(a for op, a in runtime if op == "RUN")
    assert ("ENV", "ESTIBENCH_ENV=production") in [(op, a) for op, arg in steps for a in arg.split() if op == "ENV"]
    assert not re.search(r"(^|[\s;&|'\"])python\s", " ".join(arg for _, arg in steps))  # Debian's base: python3


def test_package_data_ships_every_data_file_of_the_packages() -> None:
    """A regular install (the image's) carries the packages' non-Python files: templates, static files, tables."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = project["tool"]["setuptools"]["package-data"]
    packages = ["service", "usecases", "api", "db", "client", "worker"]
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", *packages],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout.split()
    data = [f for f in files if not f.endswith(".py") and "__pycache__" not in f]
    assert "api/web/templates/index.html" in data
    for path in data:
        package, inner = path.split("/", 1)
        assert any(fnmatch.fnmatch(inner, g) for g in globs.get(package, [])), f"{path} is not in package-data"


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


def _compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def _default(value: str) -> str:
    """The default of a ``${VARIABLE:-default}`` value."""
    match = re.fullmatch(r"\$\{\w+:-(.+)\}", value)
    assert match, value
    return match.group(1)


def test_compose_runs_api_replicas_workers_postgres_and_redis() -> None:
    services = _compose()["services"]
    assert {"api", "worker", "postgres", "redis", "migrate", "proxy", "backup"} <= set(services)
    for name in ("api", "worker", "migrate"):
        env = services[name]["environment"]
        assert env["ESTIBENCH_DATABASE_URL"] == "postgresql+psycopg://estibench@postgres:5432/estibench"
        assert env["ESTIBENCH_REDIS_URL"] == "redis://redis:6379/0" and env["ESTIBENCH_ENV"] == "production"
    assert services["api"]["deploy"]["replicas"] >= 2 and services["worker"]["deploy"]["replicas"] >= 2
    assert "worker" not in " ".join(services["api"]["command"]) and services["worker"]["command"][-1] == "worker"
    for name in ("api", "worker"):
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert "upgrade(Settings().database_url)" in services["migrate"]["command"][-1]


def test_compose_networks_let_only_the_proxy_reach_the_api() -> None:
    compose = _compose()
    services, networks = compose["services"], compose["networks"]
    joined = {name: set(service["networks"]) for name, service in services.items()}

    def peers(name: str) -> set[str]:
        return {other for other, nets in joined.items() if other != name and nets & joined[name]}

    assert peers("api") == {"proxy", "postgres", "redis"}
    for database in ("postgres", "redis"):
        assert peers(database) - {"postgres", "redis"} == {"api", "worker", "migrate", "backup"}
    assert peers("proxy") == {"api"} and {"edge"} == {n for n, nets in joined.items() for n in nets} - {
        n for n, spec in networks.items() if (spec or {}).get("internal")
    }
    proxy_address = services["proxy"]["networks"]["frontend"]["ipv4_address"]
    assert services["api"]["environment"]["ESTIBENCH_TRUSTED_PROXIES"] == proxy_address
    # The replicas start before the proxy: their addresses come from an IP range that leaves the proxy's out.
    ipam = networks["frontend"]["ipam"]["config"][0]
    subnet, dynamic = (ipaddress.ip_network(_default(ipam[key])) for key in ("subnet", "ip_range"))
    address = ipaddress.ip_address(_default(proxy_address))
    assert address in subnet and address not in dynamic and dynamic.subnet_of(subnet)
    assert '--forwarded-allow-ips "$$ESTIBENCH_TRUSTED_PROXIES"' in services["api"]["command"][-1]


def test_compose_secrets_come_from_files_and_processes_are_bounded() -> None:
    compose = _compose()
    services = compose["services"]
    for name, service in services.items():
        env = service.get("environment") or {}
        assert not {"ESTIBENCH_SECRET_KEY", "ESTIBENCH_ADMIN_KEY", "POSTGRES_PASSWORD"} & set(env), name
        assert "PASSWORD" not in str(env.get("ESTIBENCH_DATABASE_URL", "")).upper(), name
        for variable, path in env.items():
            if variable.endswith("_FILE"):
                assert path.removeprefix("/run/secrets/") in service["secrets"], (name, variable)
    assert services["api"]["environment"]["ESTIBENCH_ADMIN_KEY_FILE"] == "/run/secrets/admin_key"
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD_FILE"] == "/run/secrets/postgres_password"
    assert all("file" in secret for secret in compose["secrets"].values())
    for name in ("api", "worker", "migrate"):
        env = services[name]["environment"]
        assert all(env[v] == "1" for v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")), name
        assert "volumes" not in services[name], name
    assert services["api"]["cpus"] > 0 and services["worker"]["cpus"] > 0
    assert services["proxy"]["depends_on"]["api"]["condition"] == "service_healthy" and services["proxy"]["healthcheck"]
    redis = services["redis"]["command"]
    assert redis[redis.index("--appendonly") + 1] == "yes" and "/data" in services["redis"]["volumes"][0]
    assert not [arg for op, arg in _dockerfile_instructions() if op == "VOLUME"]


@pytest.mark.slow
def test_compose_validates_with_docker_compose() -> None:
    if shutil.which("docker-compose") is None:
        if REQUIRE_SERVICES:
            pytest.fail("docker-compose is required (ESTIBENCH_REQUIRE_SERVICES=1)")
        pytest.skip("docker-compose is not installed")
    run = ["docker-compose", "-f", str(ROOT / "compose.yaml"), "config"]
    moved = {
        "ESTIBENCH_FRONTEND_SUBNET": "10.77.0.0/24",
        "ESTIBENCH_FRONTEND_IP_RANGE": "10.77.0.128/25",
        "ESTIBENCH_PROXY_ADDRESS": "10.77.0.9",
    }
    r = subprocess.run(run, env=os.environ | moved, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rendered = yaml.safe_load(r.stdout)
    assert rendered["networks"]["frontend"]["ipam"]["config"] == [
        {"subnet": "10.77.0.0/24", "ip_range": "10.77.0.128/25"}
    ]
    assert rendered["services"]["api"]["environment"]["ESTIBENCH_TRUSTED_PROXIES"] == "10.77.0.9"
    assert rendered["services"]["proxy"]["networks"]["frontend"]["ipv4_address"] == "10.77.0.9"


def test_locks_cover_pyproject_with_hashes_and_agree() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    runtime = project["project"]["dependencies"]
    extras = project["project"]["optional-dependencies"]
    locks = {name: lock_pins(ROOT / "requirements" / f"{name}.lock") for name in ("runtime", "dev", "bench", "build")}
    _check_lock_covers(runtime, locks["runtime"], "runtime.lock")
    _check_lock_covers(runtime + extras["dev"], locks["dev"], "dev.lock")
    _check_lock_covers(runtime + extras["dev"] + extras["bench"], locks["bench"], "bench.lock")
    _check_lock_covers(project["build-system"]["requires"], locks["build"], "build.lock")
    for name, versions in locks["runtime"].items():  # one set of runtime versions, tested by make test
        assert locks["dev"][name] == versions == locks["bench"][name], name
    for name, versions in locks["dev"].items():
        assert locks["bench"][name] == versions, name


def test_lock_check_fails_on_a_missing_or_out_of_range_pin(tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    entry = "numpy==1.26.4 \\\n    --hash=sha256:" + "a" * 64 + "\n"
    lock.write_text(entry)
    pins = lock_pins(lock)
    assert pins == {"numpy": {"1.26.4"}}
    with pytest.raises(AssertionError, match="numpy"):
        _check_lock_covers(["numpy>=2.0"], pins, "x.lock")
    with pytest.raises(AssertionError, match=r"scipy is in pyproject\.toml but not in x\.lock"):
        _check_lock_covers(["scipy>=1.13"], pins, "x.lock")
    lock.write_text(entry + "scipy==1.13.0\n")
    with pytest.raises(AssertionError, match="without == or hashes"):
        lock_pins(lock)


def test_secrets_and_database_password_read_from_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "secret").write_text("s3cret value\n")
    (tmp_path / "admin").write_text("ek_admin_from_a_file")
    (tmp_path / "pg").write_text("p@ss:w/rd\n")
    (tmp_path / "empty").write_text("\n")
    for name in ("ESTIBENCH_SECRET_KEY", "ESTIBENCH_ADMIN_KEY", "ESTIBENCH_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ESTIBENCH_ENV", "production")
    monkeypatch.setenv("ESTIBENCH_SECRET_KEY_FILE", str(tmp_path / "secret"))
    monkeypatch.setenv("ESTIBENCH_ADMIN_KEY_FILE", str(tmp_path / "admin"))
    monkeypatch.setenv("ESTIBENCH_DATABASE_URL", "postgresql+psycopg://estibench@postgres:5432/estibench")
    monkeypatch.setenv("ESTIBENCH_DATABASE_PASSWORD_FILE", str(tmp_path / "pg"))
    settings = Settings()
    assert settings.secret_key == "s3cret value" and settings.admin_key == "ek_admin_from_a_file"
    assert settings.database_url == "postgresql+psycopg://estibench:p%40ss%3Aw%2Frd@postgres:5432/estibench"
    assert make_url(settings.database_url).password == "p@ss:w/rd"
    for variable, value, message in [
        ("ESTIBENCH_SECRET_KEY", "also", r"set ESTIBENCH_SECRET_KEY or ESTIBENCH_SECRET_KEY_FILE, not both"),
        ("ESTIBENCH_SECRET_KEY_FILE", str(tmp_path / "empty"), r"ESTIBENCH_SECRET_KEY_FILE: .*empty is empty"),
        ("ESTIBENCH_ADMIN_KEY_FILE", str(tmp_path / "missing"), r"ESTIBENCH_ADMIN_KEY_FILE: cannot read .*missing"),
        ("ESTIBENCH_DATABASE_URL", "postgresql+psycopg://u:pw@h/d", "has a password and .*PASSWORD_FILE is set"),
    ]:
        with monkeypatch.context() as m:
            m.setenv(variable, value)
            with pytest.raises(ValidationError, match=message):
                Settings()
