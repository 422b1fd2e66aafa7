"""The embedded store of in-process use (``estibench.Local``): the use cases over a SQLite file of their own,
migrated on first use, anonymous, without a job queue (work over the synchronous budget runs in the caller)."""

import weakref
from pathlib import Path
from tempfile import TemporaryDirectory

from db.migrate import upgrade
from usecases.services import Services
from usecases.settings import Settings


class EmbeddedStore:
    """``services`` over the SQLite file at ``path``, or over a file in a temporary directory removed on
    ``close`` (or when the store is collected) when ``path`` is None."""

    def __init__(self, path: Path | None) -> None:
        self._tmp = TemporaryDirectory(prefix="estibench-local-") if path is None else None
        database = Path(self._tmp.name) / "estibench.db" if self._tmp is not None else Path(path).resolve()
        database.parent.mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{database}"
        upgrade(url)
        self.path = database
        self.services = Services(
            Settings(
                env="development",
                database_url=url,
                data_dir=database.parent,
                queue="off",
                redis_url=None,
                require_keys=False,
                admin_key=None,
                log_json=False,
            )
        )
        self._finalizer = weakref.finalize(self, _close, self.services, self._tmp)

    def close(self) -> None:
        """Dispose of the engines (and remove the temporary database)."""
        self._finalizer()


def _close(services: Services, tmp: TemporaryDirectory | None) -> None:
    services.dispose()
    if tmp is not None:
        tmp.cleanup()
