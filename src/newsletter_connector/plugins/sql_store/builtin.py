"""``BuiltinSqlStorage``: the ``sql`` backend. Its two per-request shortcuts use the built-in
tables directly, so a host that swaps a repository in subclasses :class:`.SqlStorage` instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from ...storage import ApiKeyRecord, NewEvent, SubscriberData, SubscriberRecord
from .key_lookup import ActiveKeyLookup
from .signup_insert import SignupInsert
from .sqlite_signup import SqliteSignup
from .store import SqlStorage, translated_errors


class BuiltinSqlStorage(SqlStorage):
    """:class:`.SqlStorage` with the key check and the signup as single driver-level calls
    (bench: status_overhead, signup_cpu)."""

    @cached_property
    def _key_lookup(self) -> ActiveKeyLookup:
        return ActiveKeyLookup(self.engine)

    def find_active_api_key(self, key_digest: str) -> ApiKeyRecord | None:
        with translated_errors():
            return self._key_lookup.find(key_digest)

    @cached_property
    def _signup(self) -> SignupInsert | SqliteSignup:
        return (
            SignupInsert(self.engine) if self.dialect == "postgresql" else SqliteSignup(self.engine)
        )

    def add_subscriber(
        self,
        data: SubscriberData,
        events: Sequence[NewEvent],
        *,
        unless_suppressed: str | None = None,
    ) -> SubscriberRecord | None:
        if not self._signup.handles(events):
            return super().add_subscriber(data, events, unless_suppressed=unless_suppressed)
        with translated_errors():
            return self._signup.add(data, events, unless_suppressed=unless_suppressed)

    def close(self) -> None:
        if "_key_lookup" in self.__dict__:  # made on first use
            self._key_lookup.close()
        super().close()
