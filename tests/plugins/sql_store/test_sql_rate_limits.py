"""The built-in store's rate-limit counters, shared by every process."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.testing.threads import run_together

T0 = datetime(2026, 1, 2, 3, 4, 5)
MINUTE = timedelta(minutes=1)


@pytest.fixture
def storage(newsletter_storage: BuiltinSqlStorage) -> BuiltinSqlStorage:
    """The built-in store on the run's database (SQLite, or PostgreSQL when
    ``NEWSLETTER_TEST_DATABASE_URL`` names one), emptied after each test."""
    return newsletter_storage


class TestSqlRateLimits:
    """The rate-limit counters (``uow.rate_limits``)."""

    def _hit(self, storage: Any, key: str, now: datetime, amount: int = 1) -> int:
        with storage.transaction() as uow:
            return int(uow.rate_limits.hit(key, now=now, expires_at=now + MINUTE, amount=amount))

    def test_rate_limits_count_within_a_window_and_restart_after_it(self, storage: Any) -> None:
        assert self._hit(storage, "form/a", T0) == 1
        assert self._hit(storage, "form/a", T0 + timedelta(seconds=30)) == 2
        assert self._hit(storage, "form/a", T0 + timedelta(seconds=59), amount=3) == 5
        assert self._hit(storage, "form/b", T0 + timedelta(seconds=59)) == 1  # keys apart
        with storage.transaction(write=False) as uow:
            almost = T0 + timedelta(seconds=59)
            assert uow.rate_limits.peek("form/a", now=almost) == (5, T0 + MINUTE)  # first expiry
            assert uow.rate_limits.peek("form/c", now=T0) == (0, None)
            assert uow.rate_limits.peek("form/a", now=T0 + MINUTE) == (0, None)  # expired
        # At its expiry the window is over: a hit starts a new one.
        assert self._hit(storage, "form/a", T0 + MINUTE) == 1
        with storage.transaction(write=False) as uow:
            assert uow.rate_limits.peek("form/a", now=T0 + MINUTE) == (1, T0 + 2 * MINUTE)

    def test_rate_limits_clear_and_prune(self, storage: Any) -> None:
        self._hit(storage, "old", T0)
        self._hit(storage, "new", T0 + MINUTE / 2)
        self._hit(storage, "gone", T0 + MINUTE / 2)
        with storage.transaction() as uow:
            uow.rate_limits.clear("gone")
            assert uow.rate_limits.peek("gone", now=T0 + MINUTE / 2) == (0, None)
            assert uow.rate_limits.prune(expired_by=T0 + MINUTE) == 1  # "old" only
            assert uow.rate_limits.prune(expired_by=T0 + MINUTE) == 0
            assert uow.rate_limits.peek("new", now=T0 + MINUTE) == (1, T0 + MINUTE * 3 / 2)

    def test_rate_limits_concurrent_hits_are_all_counted(self, storage: Any) -> None:
        threads_count, hits_each = 4, 10

        def hammer() -> None:
            for _ in range(hits_each):
                self._hit(storage, "shared", T0)

        assert run_together(hammer, threads_count) == []
        expected = (threads_count * hits_each, T0 + MINUTE)
        with storage.transaction(write=False) as uow:
            assert uow.rate_limits.peek("shared", now=T0) == expected
