"""MySQL's and MariaDB's error numbers read as the store's domain errors: a missing table
(1146) is "not migrated", and only a duplicate key (1062) counts as "already stored"."""

from __future__ import annotations

import pymysql
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url

from newsletter_connector.errors import DbUnavailable, NotMigrated
from newsletter_connector.plugins.sql_store.store import translate_db_error
from newsletter_connector.plugins.sql_store.upserts import is_duplicate_key

URL = make_url("mysql+pymysql://app:secret@db.internal/newsletter")


def test_a_missing_table_reads_as_not_migrated() -> None:
    missing = pymysql.err.ProgrammingError(1146, "Table 'newsletter.nc_settings' doesn't exist")
    error = translate_db_error(sa_exc.ProgrammingError("SELECT", None, missing), URL)
    assert isinstance(error, NotMigrated)


def test_a_wrong_password_is_lasting_and_masks_the_url() -> None:
    denied = pymysql.err.OperationalError(1045, "Access denied for user 'app'@'10.0.0.2'")
    error = translate_db_error(sa_exc.OperationalError("connect", None, denied), URL)
    assert isinstance(error, DbUnavailable) and error.lasting
    assert "secret" not in str(error.reason) and "***" in str(error.reason)


def test_only_a_duplicate_key_counts_as_already_stored() -> None:
    duplicate = pymysql.err.IntegrityError(1062, "Duplicate entry 'a' for key 'PRIMARY'")
    broken_key = pymysql.err.IntegrityError(1452, "Cannot add or update a child row")
    assert is_duplicate_key(sa_exc.IntegrityError("INSERT", None, duplicate))
    assert not is_duplicate_key(sa_exc.IntegrityError("INSERT", None, broken_key))
    assert not is_duplicate_key(sa_exc.OperationalError("INSERT", None, duplicate))
