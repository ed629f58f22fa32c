"""The operator's reason for a database failure (``plugins.sql_store.failure_reason``) and the
settings of the short deadline and PgBouncer: real driver errors, never a password."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url

from newsletter_connector.errors import DbUnavailable
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import DbTimeouts, make_engine, short_read_engine
from newsletter_connector.plugins.sql_store.failure_reason import failure_reason, is_lasting
from newsletter_connector.settings import Settings, SettingsError
from newsletter_connector.short_reads import in_short_reads, short_reads

BASE = {"NEWSLETTER_BASE_URL": "https://example.org"}


def test_the_reason_is_the_driver_words_on_one_line_with_the_password_masked() -> None:
    url = make_url("postgresql+psycopg://app:hunter2-secret@db.example:6432/news")
    quoted = sa_exc.OperationalError(
        "SELECT 1", None, Exception('FATAL:  no "hunter2-secret"\n\tplease check')
    )
    reason = failure_reason(quoted, url)
    assert reason == (
        'FATAL:  no "***" please check (database postgresql+psycopg://app:***@db.example:6432/news)'
    )
    assert "hunter2-secret" not in reason


def test_a_password_in_the_query_is_masked_in_the_url_and_the_words() -> None:
    url = make_url(
        "postgresql+psycopg://app@db.example/news"
        "?password=Query-Secret-1&sslpassword=Key-Secret-2&sslmode=require"
    )
    error = Exception('connection to server at "db.example" failed: got "Query-Secret-1"')
    reason = failure_reason(error, url)
    assert "Query-Secret-1" not in reason and "Key-Secret-2" not in reason
    assert reason == (
        'connection to server at "db.example" failed: got "***" (database '
        "postgresql+psycopg://app@db.example/news"
        "?password=***&sslmode=require&sslpassword=***)"
    )
    storage = SqlStorage(make_engine(url.render_as_string(hide_password=False)))
    try:
        assert "Secret" not in repr(storage) and "password=***" in repr(storage)
    finally:
        storage.close()


def test_a_password_equal_to_a_shown_part_or_inside_a_word_leaves_the_words_intact() -> None:
    same_as_user = make_url("postgresql+psycopg://u:u@127.0.0.1:9/x")
    refused = Exception('FATAL:  password authentication failed for user "u"')
    assert failure_reason(refused, same_as_user) == (
        'FATAL:  password authentication failed for user "u" '
        "(database postgresql+psycopg://u:***@127.0.0.1:9/x)"
    )
    short = make_url("postgresql+psycopg://app:or@127.0.0.1:9/x")
    words = "connection to server at 127.0.0.1 port 9 failed: server or network error"
    assert failure_reason(Exception(words), short) == (
        f"{words} (database postgresql+psycopg://app:***@127.0.0.1:9/x)"
    )
    # A short secret is still masked where a driver would quote it.
    quoted = failure_reason(Exception("""no 'or' nor "or", password=or"""), short)
    assert quoted.startswith("""no '***' nor "***", password=*** (database""")
    long_one = make_url("postgresql+psycopg://app:Longer-Secret@127.0.0.1:9/x")
    echoed = "bad option value Longer-Secret; Longer-Secrets-vault untouched"
    assert failure_reason(Exception(echoed), long_one).startswith(
        "bad option value ***; Longer-Secrets-vault untouched (database"
    )


def test_a_real_sqlite_failure_in_a_missing_folder_is_lasting_and_names_the_folder(
    tmp_path: Path,
) -> None:
    path = tmp_path / "gone" / "news.db"
    with pytest.raises(sqlite3.OperationalError) as raised:
        sqlite3.connect(path)
    reason = failure_reason(raised.value, make_url(f"sqlite:///{path}"))
    assert f"the folder {tmp_path / 'gone'} does not exist" in reason
    assert is_lasting(reason)


def test_check_ready_on_a_missing_sqlite_folder_is_a_lasting_failure(tmp_path: Path) -> None:
    storage = SqlStorage(make_engine(f"sqlite:///{tmp_path}/gone/news.db"))
    try:
        with pytest.raises(DbUnavailable) as raised:
            storage.check_ready()
    finally:
        storage.close()
    assert raised.value.lasting
    assert raised.value.reason is not None and "does not exist" in raised.value.reason
    assert not (tmp_path / "gone").exists()


@pytest.mark.parametrize(
    ("words", "lasting"),
    [
        ('FATAL:  database "x" does not exist', True),
        ('FATAL:  password authentication failed for user "app"', True),
        ("failed to resolve host 'db': Name or service not known", True),
        ("FATAL:  unsupported startup parameter: options", True),
        ("Connection refused Is the server running on that host", False),
        ("the database server did not reply within 3 s", False),
        ("FATAL:  sorry, too many clients already", False),
    ],
)
def test_what_waiting_cannot_cure(words: str, lasting: bool) -> None:
    assert is_lasting(words) is lasting


def test_short_reads_nest_and_end_with_their_block() -> None:
    assert not in_short_reads()
    with short_reads():
        assert in_short_reads()
        with short_reads():
            assert in_short_reads()
        assert in_short_reads()
    assert not in_short_reads()


def test_the_short_deadline_and_pgbouncer_are_settings() -> None:
    defaults = Settings.load(BASE)
    assert (defaults.db_short_reply_timeout, defaults.db_pgbouncer) == (3.0, False)
    tuned = Settings.load(
        {**BASE, "NEWSLETTER_DB_SHORT_REPLY_TIMEOUT": "1.5", "NEWSLETTER_DB_PGBOUNCER": "true"}
    )
    assert (tuned.db_short_reply_timeout, tuned.db_pgbouncer) == (1.5, True)
    with pytest.raises(SettingsError, match=r"db_short_reply_timeout.*db_reply_timeout"):
        Settings.load({**BASE, "NEWSLETTER_DB_SHORT_REPLY_TIMEOUT": "25"})


def test_the_engine_takes_the_short_deadline(newsletter_database_url: str) -> None:
    """PostgreSQL: each connection knows both bounds, and a round trip inside ``short_reads``
    has the shorter; MySQL and MariaDB: a transaction begun inside it runs on connections of
    the short bounds; SQLite: a transaction begun inside it has the short busy timeout."""
    engine = make_engine(newsletter_database_url, timeouts=DbTimeouts(lock=4.0, short_reply=1.5))
    try:
        with engine.connect() as connection:
            raw = connection.connection.dbapi_connection
            if engine.dialect.name == "postgresql":
                assert raw.current_reply_timeout() == 20.0  # type: ignore[union-attr]
                with short_reads():
                    assert raw.current_reply_timeout() == 1.5  # type: ignore[union-attr]
                return
        if engine.dialect.name in ("mysql", "mariadb"):
            # A socket's timeouts are fixed when it connects: short reads have a pool of theirs.
            short = short_read_engine(engine)
            assert short is not engine and short_read_engine(engine) is short
            with short.connect() as connection:
                raw = connection.connection.dbapi_connection
                assert (raw._read_timeout, raw._write_timeout) == (1.5, 1.5)  # type: ignore[union-attr]
                waits = connection.exec_driver_sql("SELECT @@innodb_lock_wait_timeout").scalar()
                assert waits == 2  # whole seconds, rounded up
            return
        with short_reads(), engine.begin() as connection:
            busy = connection.exec_driver_sql("PRAGMA busy_timeout").scalar()
        assert busy == 1500
        with engine.begin() as connection:
            assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 4000
    finally:
        engine.dispose()
