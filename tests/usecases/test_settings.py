"""usecases/settings.py: ``ESTIBENCH_*`` settings. Secrets may come from files (the text without its trailing line
break; a value given both ways, an empty or unreadable file is an error); production needs a secret key; a SQLite
database's files live beside it unless ``data_dir`` is set; one upload must fit the upload buffer; the development
secret key is generated once into ``data_dir``."""

import os
import re
import stat
from pathlib import Path

import pytest
from pydantic import ValidationError
from sqlalchemy.engine import make_url

from usecases.settings import Settings, read_secret_file, sqlite_path


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``ESTIBENCH_*`` variable of the machine running the tests reaches ``Settings``."""
    for name in list(os.environ):
        if name.startswith("ESTIBENCH_"):
            monkeypatch.delenv(name)


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:///./estibench.db", Path("estibench.db")),
        ("sqlite:////data/x.db", Path("/data/x.db")),
        ("sqlite+pysqlite:///rel/dir/y.db", Path("rel/dir/y.db")),
        ("sqlite://", None),
        ("sqlite:///:memory:", None),
        ("postgresql+psycopg://u:p@h:5432/estibench", None),
    ],
)
def test_the_file_of_a_sqlite_url(url: str, path: Path | None) -> None:
    assert sqlite_path(url) == path


def test_a_secret_file_loses_its_line_break_only(tmp_path: Path) -> None:
    f = tmp_path / "s"
    cases = [("abc\n", "abc"), ("abc\r\n", "abc"), ("abc", "abc"), (" a b \n\n", " a b "), ("x\ny\n", "x\ny")]
    for text, value in cases:
        f.write_text(text)
        assert read_secret_file(f, "ESTIBENCH_X_FILE") == value


def test_an_empty_or_unreadable_secret_file_is_an_error_naming_the_variable(tmp_path: Path) -> None:
    (tmp_path / "empty").write_text("\r\n")
    with pytest.raises(ValueError, match="ESTIBENCH_X_FILE"):
        read_secret_file(tmp_path / "empty", "ESTIBENCH_X_FILE")
    with pytest.raises(ValueError, match="ESTIBENCH_Y_FILE") as missing:
        read_secret_file(tmp_path / "missing", "ESTIBENCH_Y_FILE")
    assert missing.value.__cause__ is None and missing.value.__suppress_context__


def test_the_defaults_keep_files_beside_the_default_database() -> None:
    s = Settings()
    assert (s.env, s.database_url, s.secret_key, s.admin_key) == ("development", "sqlite:///./estibench.db", None, None)
    assert s.data_dir == Path(".")


def test_secret_and_admin_keys_come_from_files(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("s3cret\n")
    (tmp_path / "admin").write_text("ek_admin_file\r\n")
    s = Settings(secret_key_file=tmp_path / "secret", admin_key_file=tmp_path / "admin")
    assert (s.secret_key, s.admin_key) == ("s3cret", "ek_admin_file")
    only_admin = Settings(admin_key_file=tmp_path / "admin", secret_key="direct")
    assert (only_admin.secret_key, only_admin.admin_key) == ("direct", "ek_admin_file")
    only_secret = Settings(secret_key_file=tmp_path / "secret", admin_key="ek_direct")
    assert (only_secret.secret_key, only_secret.admin_key) == ("s3cret", "ek_direct")


@pytest.mark.parametrize("name", ["secret_key", "admin_key"])
def test_a_key_given_both_ways_is_refused(tmp_path: Path, name: str) -> None:
    (tmp_path / "f").write_text("from-file")
    with pytest.raises(ValidationError, match=f"ESTIBENCH_{name.upper()}_FILE"):
        Settings(**{name: "direct", f"{name}_file": tmp_path / "f"})
    assert getattr(Settings(**{name: "", f"{name}_file": tmp_path / "f"}), name) == "from-file"  # empty: not set


@pytest.mark.parametrize("name", ["secret_key", "admin_key"])
def test_an_unreadable_key_file_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValidationError, match=f"ESTIBENCH_{name.upper()}_FILE"):
        Settings(**{f"{name}_file": tmp_path / "missing"})


def test_the_database_password_comes_from_a_file(tmp_path: Path) -> None:
    (tmp_path / "pg").write_text("p@ss:w/rd\n")
    s = Settings(database_url="postgresql+psycopg://est@db:5432/estibench", database_password_file=tmp_path / "pg")
    # RFC 3986 percent-encoding of the password's @ : / (0x40 0x3A 0x2F)
    assert s.database_url == "postgresql+psycopg://est:p%40ss%3Aw%2Frd@db:5432/estibench"
    assert make_url(s.database_url).password == "p@ss:w/rd"
    assert Settings(database_url="postgresql+psycopg://est@db/e").database_url == "postgresql+psycopg://est@db/e"
    with pytest.raises(ValidationError, match="ESTIBENCH_DATABASE_PASSWORD_FILE"):
        Settings(database_url="postgresql+psycopg://est:pw@db/e", database_password_file=tmp_path / "pg")
    with pytest.raises(ValidationError, match="ESTIBENCH_DATABASE_PASSWORD_FILE"):
        Settings(database_url="postgresql+psycopg://est@db/e", database_password_file=tmp_path / "missing")


def test_production_needs_a_secret_key() -> None:
    for secret in (None, ""):
        with pytest.raises(ValidationError, match="ESTIBENCH_SECRET_KEY is required"):
            Settings(env="production", secret_key=secret)
    assert Settings(env="production", secret_key="k").secret_key == "k"
    assert Settings(env="test").secret_key is None
    assert Settings(env="development").secret_key is None


def test_a_sqlite_databases_files_live_beside_it_unless_data_dir_is_set(tmp_path: Path) -> None:
    assert Settings(database_url=f"sqlite:///{tmp_path}/db/x.db").data_dir == tmp_path / "db"
    assert Settings(database_url="sqlite:///rel/x.db").data_dir == Path("rel")
    chosen = Settings(database_url=f"sqlite:///{tmp_path}/db/x.db", data_dir=tmp_path / "chosen")
    assert chosen.data_dir == tmp_path / "chosen"
    # set, even to the default's value
    assert Settings(database_url="sqlite:///x.db", data_dir=Path("data")).data_dir == Path("data")
    assert Settings(database_url="sqlite:///:memory:").data_dir == Path("data")
    assert Settings(database_url="postgresql+psycopg://u@h/d").data_dir == Path("data")


def test_one_upload_must_fit_the_upload_buffer() -> None:
    fits = Settings(max_array_bytes=4096, upload_buffer_bytes=4096)
    assert (fits.max_array_bytes, fits.upload_buffer_bytes) == (4096, 4096)
    with pytest.raises(ValidationError, match="ESTIBENCH_UPLOAD_BUFFER_BYTES"):
        Settings(max_array_bytes=4097, upload_buffer_bytes=4096)


def test_a_given_secret_key_is_used_as_is(tmp_path: Path) -> None:
    assert Settings(secret_key="mine", data_dir=tmp_path / "d").resolved_secret_key() == "mine"
    assert not (tmp_path / "d").exists()


def test_the_development_secret_key_is_generated_once_private_to_the_owner(tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path / "new" / "dir")
    key = s.resolved_secret_key()
    assert re.fullmatch(r"[0-9a-f]{64}", key)  # 32 random bytes in hex
    path = tmp_path / "new" / "dir" / "secret_key"
    assert path.read_text() == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert s.resolved_secret_key() == key
    assert Settings(data_dir=tmp_path / "new" / "dir").resolved_secret_key() == key
    assert Settings(data_dir=tmp_path / "other").resolved_secret_key() != key


def test_a_kept_secret_key_file_is_read_without_surrounding_whitespace(tmp_path: Path) -> None:
    (tmp_path / "secret_key").write_text("  kept-by-hand\n")
    assert Settings(data_dir=tmp_path).resolved_secret_key() == "kept-by-hand"
    assert (tmp_path / "secret_key").read_text() == "  kept-by-hand\n"  # not rewritten


def test_a_secret_ending_in_any_other_character_keeps_it(tmp_path: Path) -> None:
    for text in ("keyX\n", "keyXX", "key=\n", "key\t\n"):
        (tmp_path / "s").write_text(text)
        assert read_secret_file(tmp_path / "s", "ESTIBENCH_X_FILE") == text.removesuffix("\n")


def test_the_development_secret_key_is_generated_into_an_existing_empty_data_dir(tmp_path: Path) -> None:
    key = Settings(data_dir=tmp_path).resolved_secret_key()
    assert (tmp_path / "secret_key").read_text() == key and len(key) == 64
