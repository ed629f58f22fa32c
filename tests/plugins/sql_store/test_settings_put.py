"""Two workers storing one new setting at once both succeed, and the later commit is kept
(PostgreSQL: SQLite's writers take turns)."""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any

T0 = datetime(2026, 11, 27, 9, 0, 0)


def test_two_workers_storing_one_new_name_both_succeed(server_storage: Any) -> None:
    errors: list[BaseException] = []
    with server_storage.transaction() as first:
        # This worker has inserted the name and not committed yet.
        first.settings.put("figures", {"by": "first"}, at=T0)

        def second_put() -> None:
            try:
                with server_storage.transaction() as uow:
                    uow.settings.put("figures", {"by": "second"}, at=T0)
            except BaseException as error:  # reported by the assert below
                errors.append(error)

        other = threading.Thread(target=second_put)
        other.start()
        other.join(timeout=0.5)
        assert other.is_alive(), "the second insert should wait for the first to commit"
    other.join(timeout=10)
    assert not other.is_alive()
    assert errors == []
    with server_storage.transaction(write=False) as uow:
        assert uow.settings.get("figures") == {"by": "second"}
