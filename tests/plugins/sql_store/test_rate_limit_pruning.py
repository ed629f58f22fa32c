"""Pruning ended rate-limit windows never waits for a counter another worker is writing, so
two workers each restarting a window and pruning cannot deadlock (PostgreSQL: SQLite's
writers take turns)."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Any

T0 = datetime(2026, 11, 23, 9, 0, 0)
MINUTE = timedelta(minutes=1)


def test_prune_skips_a_counter_held_by_another_transaction(server_storage: Any) -> None:
    with server_storage.transaction() as uow:
        uow.rate_limits.hit("held", now=T0, expires_at=T0 + MINUTE)
        uow.rate_limits.hit("ended", now=T0, expires_at=T0 + MINUTE)
    later = T0 + 2 * MINUTE
    pruned: list[int] = []
    with server_storage.transaction() as holder:
        # This worker restarts the ended window of "held" and has not committed yet.
        assert holder.rate_limits.hit("held", now=later, expires_at=later + MINUTE) == 1

        def prune() -> None:
            with server_storage.transaction() as uow:
                pruned.append(uow.rate_limits.prune(expired_by=later))

        other = threading.Thread(target=prune)
        other.start()
        other.join(timeout=10)
        assert not other.is_alive(), "prune waited for the counter another transaction holds"
    assert pruned == [1]  # "ended" only
    with server_storage.transaction(write=False) as uow:
        assert uow.rate_limits.peek("held", now=later) == (1, later + MINUTE)
