"""Settings from ``ESTIBENCH_*`` environment variables (ARCHITECTURE §2)."""

import secrets
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ESTIBENCH_", extra="ignore")

    env: Literal["development", "production", "test"] = "development"
    database_url: str = "sqlite:///./estibench.db"
    host: str = "127.0.0.1"
    port: int = 8000
    admin_key: str | None = None
    secret_key: str | None = None
    redis_url: str | None = None
    require_keys: bool = False
    data_dir: Path = Path("./data")
    sqlite_synchronous: Literal["OFF", "NORMAL", "FULL", "EXTRA"] = "NORMAL"
    max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    log_level: str = "INFO"
    log_json: bool = True

    @model_validator(mode="after")
    def _production_needs_secrets(self) -> "Settings":
        if self.env == "production" and not self.secret_key:
            raise ValueError("ESTIBENCH_SECRET_KEY is required when ESTIBENCH_ENV=production")
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
