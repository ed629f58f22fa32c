"""The admin area's repositories: built-in login users, their sessions, and the append-only
audit record of admin acts. Always the built-in tables."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from .access_records import (
    AdminAuditRecord,
    AdminSessionRecord,
    AdminUserRecord,
    MessageHandlingRecord,
)
from .records import ContactMessageRecord


class AdminUserRepository(Protocol):
    """Users of the built-in admin login, by unique username."""

    def add(
        self, *, username: str, password_hash: str, role: str, created_at: datetime
    ) -> AdminUserRecord:
        """Store a new user with ``role`` (``owner`` or ``editor``). Raises ``InvalidRequest``
        (field ``username``) if it is taken."""

    def get(self, username: str) -> AdminUserRecord | None:
        """The user with this username, or ``None``."""

    def list(self) -> list[AdminUserRecord]:
        """Every user, oldest first."""

    def count(self, *, role: str | None = None) -> int:
        """How many users exist (with ``role``: how many have it, and in a write transaction
        those users stay held until it ends, so a concurrent write transaction counting them
        waits and then sees what this one left: two admins cannot each take away one of the
        last two owners)."""

    def set_password_hash(self, username: str, password_hash: str) -> bool:
        """Replace the user's password hash; whether the user exists."""

    def set_role(self, username: str, role: str) -> bool:
        """Give the user ``role``; whether the user exists."""

    def delete(self, username: str) -> bool:
        """Delete the user; whether it existed. Its sessions are left to the caller."""


class AdminSessionRepository(Protocol):
    """Signed-in admin sessions, by the SHA-256 hex digest of their cookie token."""

    def add(self, record: AdminSessionRecord) -> None:
        """Store a new session (its digest is new)."""

    def get(self, token_digest: str) -> AdminSessionRecord | None:
        """The session with this digest, or ``None``."""

    def touch(self, token_digest: str, *, at: datetime) -> None:
        """Set the session's ``last_seen_at``."""

    def delete(self, token_digest: str) -> bool:
        """Delete the session; whether it existed."""

    def delete_for_user(self, username: str) -> int:
        """Delete every session of ``username``; how many."""

    def prune(self, *, seen_before: datetime, created_before: datetime) -> int:
        """Delete sessions last seen before ``seen_before`` or created before
        ``created_before``; how many."""


class AdminAuditRepository(Protocol):
    """The append-only record of admin acts, in ``id`` order."""

    def add(
        self,
        *,
        at: datetime,
        actor: str,
        action: str,
        target: str | None,
        client_hash: str | None,
        detail: str | None = None,
    ) -> int:
        """Append one act; its id (greater than every earlier act's)."""

    def latest(self, limit: int, *, before_id: int | None = None) -> list[AdminAuditRecord]:
        """Up to ``limit`` acts, newest first, only those with ``id < before_id`` when given
        (the keyset of the next page)."""

    def latest_about(self, target: str, *, limit: int) -> list[AdminAuditRecord]:
        """Up to ``limit`` acts whose target is ``target``, newest first (one range read of
        the target index)."""

    def replace_target(self, target: str, replacement: str) -> int:
        """Make every act whose target is ``target`` name ``replacement`` instead, its
        ``detail`` cleared (an erasure: the address becomes its keyed hash, and nothing said
        about it stays); how many acts changed."""


class MessageHandlingRepository(Protocol):
    """Which contact messages an admin marked handled, by whom and when: kept beside the
    contact-message log, which never changes. A message's mark goes with it when its sender's
    address is erased."""

    def mark(self, message_id: int, *, by: str, at: datetime) -> MessageHandlingRecord | None:
        """Mark the message handled; its mark (the earlier one when it already had one), or
        ``None`` when there is no such message."""

    def clear(self, message_id: int) -> bool:
        """Take the message's mark away; whether it had one."""

    def of(self, message_ids: Sequence[int]) -> dict[int, MessageHandlingRecord]:
        """The marks of those of ``message_ids`` that have one, by message id."""

    def unhandled_page_desc(
        self, *, before_id: int | None, limit: int
    ) -> list[ContactMessageRecord]:
        """Up to ``limit`` messages without a mark, with id below ``before_id`` (``None``: from
        the newest), newest first. Keyset on the primary key, never OFFSET."""
