"""``BuiltinSqlStorage``: the ``sql`` backend, :class:`.SqlStorage` with its speed paths
(:mod:`.fast`). The signup shortcut writes the built-in subscribers table directly, so with a
host's subscriber store a signup goes through the unit of work instead."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from functools import cached_property

from ...storage.access_records import ApiKeyRecord
from ...storage.outbox_records import NewEvent
from ...storage.records import SubscriberData, SubscriberRecord
from .fast.key_lookup import ActiveKeyLookup
from .fast.parallel_reads import read_all
from .fast.signup_insert import SignupInsert
from .fast.sqlite_signup import SqliteSignup
from .repos import SqlApiKeys
from .store import SqlStorage, translated_errors


class BuiltinSqlStorage(SqlStorage):
    """:class:`.SqlStorage` with the key check and the signup as single driver-level calls
    (bench: status_overhead, signup_cpu) and the analytics statements shared between two
    PostgreSQL connections (bench: rollups)."""

    read_all = staticmethod(read_all)

    @cached_property
    def _key_lookup(self) -> ActiveKeyLookup:
        return ActiveKeyLookup(self.engine)

    def find_active_api_key(self, key_digest: str) -> ApiKeyRecord | None:
        with translated_errors(self.engine.url):
            return self._key_lookup.find(key_digest)

    def record_api_key_use(self, key_id: int, *, on: date) -> None:
        # Its own short transaction, beside the key check (which opens no unit of work).
        with translated_errors(self.engine.url), self.engine.begin() as connection:
            SqlApiKeys(connection).mark_used(key_id, on=on)

    @cached_property
    def _signup(self) -> SignupInsert | SqliteSignup | None:
        """The one-round-trip signup of the dialect (none on MySQL and MariaDB)."""
        if self.dialect == "postgresql":
            return SignupInsert(self.engine)
        return SqliteSignup(self.engine) if self.dialect == "sqlite" else None

    def add_subscriber(
        self,
        data: SubscriberData,
        events: Sequence[NewEvent],
        *,
        unless_suppressed: str | None = None,
    ) -> SubscriberRecord | None:
        signup = self._signup
        if not self.builtin_subscribers or signup is None or not signup.handles(events):
            return super().add_subscriber(data, events, unless_suppressed=unless_suppressed)
        with translated_errors(self.engine.url):
            return signup.add(data, events, unless_suppressed=unless_suppressed)

    def close(self) -> None:
        if "_key_lookup" in self.__dict__:  # made on first use
            self._key_lookup.close()
        super().close()
