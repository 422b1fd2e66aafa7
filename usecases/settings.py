"""Settings from ``ESTIBENCH_*`` environment variables, shared by the API and the worker."""

import secrets
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url


def sqlite_path(database_url: str) -> Path | None:
    """The file of a SQLite database URL (``sqlite:///./estibench.db``, ``sqlite:////data/x.db``); None for other
    databases and in-memory SQLite."""
    if not database_url.startswith("sqlite"):
        return None
    database = make_url(database_url).database
    return Path(database) if database and database != ":memory:" else None


def read_secret_file(path: Path, variable: str) -> str:
    """A secret kept in a file (a container secret such as ``/run/secrets/…``): the file's text without its trailing
    line break; an unreadable or empty file is an error naming ``variable``."""
    try:
        value = path.read_text().rstrip("\r\n")
    except OSError as e:
        raise ValueError(f"{variable}: cannot read {path} ({e.strerror})") from None
    if not value:
        raise ValueError(f"{variable}: {path} is empty")
    return value


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ESTIBENCH_", extra="ignore")

    env: Literal["development", "production", "test"] = "development"
    database_url: str = "sqlite:///./estibench.db"
    host: str = "127.0.0.1"
    port: int = 8000
    admin_key: str | None = None
    secret_key: str | None = None
    admin_key_file: Path | None = Field(default=None, description="A file holding the admin key, instead of ADMIN_KEY.")
    secret_key_file: Path | None = Field(
        default=None, description="A file holding the secret key, instead of SECRET_KEY."
    )
    database_password_file: Path | None = Field(
        default=None, description="A file holding the database password, put into database_url (which then has none)."
    )
    redis_url: str | None = None
    require_keys: bool = False
    data_dir: Path = Field(
        default=Path("./data"),
        description="The development secret key and the SQLite job queue; unset with a SQLite database: the "
        "database's directory.",
    )
    sqlite_synchronous: Literal["OFF", "NORMAL", "FULL", "EXTRA"] = "NORMAL"
    max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    log_level: str = "INFO"
    log_json: bool = True
    submissions_per_day: int = Field(default=100, ge=1, description="Default per-key daily quota per benchmark.")
    # Jobs (usecases/jobs.py, worker/): "auto" = Redis queue when REDIS_URL is set, else a SQLite queue file;
    # "immediate" runs jobs inside the request (tests); "memory" keeps them until a test runs them; "off" = no queue.
    queue: Literal["auto", "immediate", "memory", "off"] = "auto"
    queue_path: Path | None = Field(default=None, description="SQLite queue file (default data_dir/queue.db).")
    queue_name: str = Field(default="estibench", min_length=1, max_length=64, description="Huey queue name.")
    workers: int = Field(default=2, ge=1, le=64, description="Worker processes per `python -m worker`.")
    job_timeout_s: float = Field(default=900.0, gt=0)
    job_heartbeat_s: float = Field(default=1.0, gt=0)
    job_stale_after_s: float = Field(default=20.0, gt=0)
    job_max_attempts: int = Field(default=3, ge=1)
    job_requeue_after_s: float = Field(default=300.0, gt=0)
    job_reaper_interval_s: float = Field(default=5.0, ge=0, description="0 disables the reaper thread.")
    max_jobs_per_key: int = Field(default=8, ge=1, description="Queued + running jobs per key (or address).")
    # Arrays (api/arrays.py, usecases/arrays.py) and limits.
    max_array_elements: int = Field(default=16 * 1024 * 1024, ge=1)
    max_array_bytes: int = Field(default=128 * 1024 * 1024, ge=1024)
    rate_limit_per_minute: int = Field(default=6000, ge=0, description="Per key (or address); 0 disables.")
    rate_limit_burst: int = Field(default=1000, ge=1)
    # Resource bounds for anonymous callers (docs/security.md).
    upload_buffer_bytes: int = Field(
        default=256 * 1024 * 1024, ge=1024, description="Upload bytes held in memory across all in-flight uploads."
    )
    upload_timeout_s: float = Field(default=60.0, gt=0, description="An npy upload must arrive within this time.")
    sync_concurrency: int = Field(default=2, ge=1, le=64, description="Synchronous computations at once per process.")
    sync_wait_s: float = Field(
        default=2.0, ge=0, description="How long a synchronous call waits for a slot before a 503 with Retry-After."
    )
    trusted_proxies: str = Field(
        default="",
        description="Addresses whose X-Forwarded-For / X-Forwarded-Proto are trusted (uvicorn --forwarded-allow-ips; "
        "scripts/serve.sh); empty: proxy headers are ignored.",
    )

    @model_validator(mode="after")
    def _secrets_from_files(self) -> "Settings":
        """``ESTIBENCH_ADMIN_KEY_FILE``, ``ESTIBENCH_SECRET_KEY_FILE`` and ``ESTIBENCH_DATABASE_PASSWORD_FILE``: the
        values come from files (compose secrets), so they appear in no environment; a value given both ways is an
        error."""
        for name in ("admin_key", "secret_key"):
            path = getattr(self, f"{name}_file")
            if path is not None:
                variable = f"ESTIBENCH_{name.upper()}"
                if getattr(self, name):
                    raise ValueError(f"set {variable} or {variable}_FILE, not both")
                setattr(self, name, read_secret_file(path, f"{variable}_FILE"))
        if self.database_password_file is not None:
            url = make_url(self.database_url)
            if url.password is not None:
                raise ValueError("ESTIBENCH_DATABASE_URL has a password and ESTIBENCH_DATABASE_PASSWORD_FILE is set")
            password = read_secret_file(self.database_password_file, "ESTIBENCH_DATABASE_PASSWORD_FILE")
            self.database_url = url.set(password=password).render_as_string(hide_password=False)
        return self

    @model_validator(mode="after")
    def _production_needs_secrets(self) -> "Settings":
        if self.env == "production" and not self.secret_key:
            raise ValueError(
                "ESTIBENCH_SECRET_KEY is required when ESTIBENCH_ENV=production; make one with "
                "python -c 'import secrets; print(secrets.token_hex(32))' and keep it (API keys are hashed with it)"
            )
        return self

    @model_validator(mode="after")
    def _data_dir_beside_the_database(self) -> "Settings":
        """Without ``ESTIBENCH_DATA_DIR``, a SQLite database's files (secret key, queue) live in its directory, not
        in the directory the server happens to start in."""
        if "data_dir" not in self.model_fields_set:
            database = sqlite_path(self.database_url)
            if database is not None:
                self.data_dir = database.parent
        return self

    @model_validator(mode="after")
    def _one_upload_fits(self) -> "Settings":
        if self.upload_buffer_bytes < self.max_array_bytes:
            raise ValueError("ESTIBENCH_UPLOAD_BUFFER_BYTES must be at least ESTIBENCH_MAX_ARRAY_BYTES")
        return self

    def resolved_secret_key(self) -> str:
        """The HMAC secret; in development it is generated once into ``data_dir/secret_key``."""
        if self.secret_key:
            return self.secret_key
        path = self.data_dir / "secret_key"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(secrets.token_hex(32))
            path.chmod(0o600)
        return path.read_text().strip()
