"""The SQL store's admin users, sessions and audit record."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime

from sqlalchemy import delete, func, insert, select, update

from ...errors import InvalidRequest
from ...storage.access_records import (
    AdminAuditRecord,
    AdminSessionRecord,
    AdminUserRecord,
    MessageHandlingRecord,
)
from ...storage.records import ContactMessageRecord
from .record_builders import inserted_id, inserted_row, record_of
from .repository import SqlRepository
from .tables import admin_audit, admin_sessions, admin_users, contact_messages, message_handling
from .upserts import insert_unless_stored


class SqlAdminUsers(SqlRepository):
    """Users of the built-in admin login, by unique username.

    Kept in ``nc_admin_users``."""

    def add(
        self, *, username: str, password_hash: str, role: str, created_at: datetime
    ) -> AdminUserRecord:
        """Store a new user with ``role`` (``owner`` or ``editor``). Raises ``InvalidRequest``
        (field ``username``) if it is taken."""
        if self.get(username) is not None:
            raise InvalidRequest(f"an admin user {username!r} already exists", field="username")
        values = {"username": username, "password_hash": password_hash, "role": role}
        statement = insert(admin_users).values(**values, created_at=created_at)
        row = inserted_row(self.connection, admin_users, statement)
        return record_of(AdminUserRecord, row)

    def get(self, username: str) -> AdminUserRecord | None:
        """The user with this username, or ``None``."""
        row = (
            self.connection.execute(select(admin_users).where(admin_users.c.username == username))
            .mappings()
            .first()
        )
        return record_of(AdminUserRecord, row) if row else None

    def list(self) -> list[AdminUserRecord]:
        """Every user, oldest first."""
        rows = self.connection.execute(select(admin_users).order_by(admin_users.c.id)).mappings()
        return [record_of(AdminUserRecord, row) for row in rows]

    def count(self, *, role: str | None = None) -> int:
        """How many users exist (with ``role``: how many have it, and in a write transaction
        those users stay held until it ends, so a concurrent write transaction counting them
        waits and then sees what this one left: two admins cannot each take away one of the
        last two owners)."""
        if role is None:
            return int(self.connection.scalar(select(func.count()).select_from(admin_users)) or 0)
        # Locked (PostgreSQL), so two admins each taking away one of the last two owners take
        # turns and the second sees one owner left; SQLite's writers take turns anyway.
        holders = select(admin_users.c.id).where(admin_users.c.role == role).with_for_update()
        return len(self.connection.execute(holders).all())

    def set_password_hash(self, username: str, password_hash: str) -> bool:
        """Replace the user's password hash; whether the user exists."""
        result = self.connection.execute(
            update(admin_users)
            .where(admin_users.c.username == username)
            .values(password_hash=password_hash)
        )
        return bool(result.rowcount)

    def set_role(self, username: str, role: str) -> bool:
        """Give the user ``role``; whether the user exists."""
        result = self.connection.execute(
            update(admin_users).where(admin_users.c.username == username).values(role=role)
        )
        return bool(result.rowcount)

    def delete(self, username: str) -> bool:
        """Delete the user; whether it existed. Its sessions are left to the caller."""
        result = self.connection.execute(
            delete(admin_users).where(admin_users.c.username == username)
        )
        return bool(result.rowcount)


class SqlAdminSessions(SqlRepository):
    """Signed-in admin sessions, by the SHA-256 hex digest of their cookie token.

    Kept in ``nc_admin_sessions``."""

    def add(self, record: AdminSessionRecord) -> None:
        """Store a new session (its digest is new)."""
        self.connection.execute(insert(admin_sessions).values(**asdict(record)))

    def get(self, token_digest: str) -> AdminSessionRecord | None:
        """The session with this digest, or ``None``."""
        row = (
            self.connection.execute(
                select(admin_sessions).where(admin_sessions.c.token_digest == token_digest)
            )
            .mappings()
            .first()
        )
        return record_of(AdminSessionRecord, row) if row else None

    def touch(self, token_digest: str, *, at: datetime) -> None:
        """Set the session's ``last_seen_at``."""
        self.connection.execute(
            update(admin_sessions)
            .where(admin_sessions.c.token_digest == token_digest)
            .values(last_seen_at=at)
        )

    def delete(self, token_digest: str) -> bool:
        """Delete the session; whether it existed."""
        result = self.connection.execute(
            delete(admin_sessions).where(admin_sessions.c.token_digest == token_digest)
        )
        return bool(result.rowcount)

    def delete_for_user(self, username: str) -> int:
        """Delete every session of ``username``; how many."""
        result = self.connection.execute(
            delete(admin_sessions).where(admin_sessions.c.username == username)
        )
        return int(result.rowcount)

    def prune(self, *, seen_before: datetime, created_before: datetime) -> int:
        """Delete sessions last seen before ``seen_before`` or created before
        ``created_before``; how many."""
        result = self.connection.execute(
            delete(admin_sessions).where(
                (admin_sessions.c.last_seen_at < seen_before)
                | (admin_sessions.c.created_at < created_before)
            )
        )
        return int(result.rowcount)


class SqlAdminAudit(SqlRepository):
    """The append-only record of admin acts, in ``id`` order.

    Kept in ``nc_admin_audit``."""

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
        statement = insert(admin_audit).values(
            at=at,
            actor=actor,
            action=action,
            target=target,
            client_hash=client_hash,
            detail=detail,
        )
        return inserted_id(self.connection, statement)

    def latest(self, limit: int, *, before_id: int | None = None) -> list[AdminAuditRecord]:
        """Up to ``limit`` acts, newest first, only those with ``id < before_id`` when given
        (the keyset of the next page)."""
        query = select(admin_audit).order_by(admin_audit.c.id.desc()).limit(limit)
        if before_id is not None:
            query = query.where(admin_audit.c.id < before_id)
        rows = self.connection.execute(query).mappings()
        return [record_of(AdminAuditRecord, row) for row in rows]

    def latest_about(self, target: str, *, limit: int) -> list[AdminAuditRecord]:
        """Up to ``limit`` acts whose target is ``target``, newest first (one range read of
        the target index)."""
        query = (
            select(admin_audit)
            .where(admin_audit.c.target == target)
            .order_by(admin_audit.c.id.desc())
            .limit(limit)
        )
        rows = self.connection.execute(query).mappings()
        return [record_of(AdminAuditRecord, row) for row in rows]

    def replace_target(self, target: str, replacement: str) -> int:
        """Make every act whose target is ``target`` name ``replacement`` instead, its
        ``detail`` cleared (an erasure: the address becomes its keyed hash, and nothing said
        about it stays); how many acts changed."""
        statement = (
            update(admin_audit)
            .where(admin_audit.c.target == target)
            .values(target=replacement, detail=None)
        )
        return int(self.connection.execute(statement).rowcount)


class SqlMessageHandling(SqlRepository):
    """Which contact messages an admin marked handled, by whom and when: kept beside the
    contact-message log, which never changes. A message's mark goes with it when its sender's
    address is erased.

    Kept in ``nc_message_handling``."""

    def mark(self, message_id: int, *, by: str, at: datetime) -> MessageHandlingRecord | None:
        # Locked (PostgreSQL), so an erasure of the message waits for this mark's transaction.
        """Mark the message handled; its mark (the earlier one when it already had one), or
        ``None`` when there is no such message."""
        exists = select(contact_messages.c.id).where(contact_messages.c.id == message_id)
        if self.connection.scalar(exists.with_for_update()) is None:
            return None
        # Two admins marking at once: the first mark stays, the second adds nothing.
        insert_unless_stored(
            self.connection,
            message_handling,
            {"message_id": message_id, "handled_by": by, "handled_at": at},
        )
        return self.of([message_id])[message_id]

    def clear(self, message_id: int) -> bool:
        """Take the message's mark away; whether it had one."""
        result = self.connection.execute(
            delete(message_handling).where(message_handling.c.message_id == message_id)
        )
        return bool(result.rowcount)

    def of(self, message_ids: Sequence[int]) -> dict[int, MessageHandlingRecord]:
        """The marks of those of ``message_ids`` that have one, by message id."""
        if not message_ids:
            return {}
        rows = self.connection.execute(
            select(message_handling).where(message_handling.c.message_id.in_(list(message_ids)))
        ).mappings()
        return {row["message_id"]: record_of(MessageHandlingRecord, row) for row in rows}

    def unhandled_page_desc(
        self, *, before_id: int | None, limit: int
    ) -> list[ContactMessageRecord]:
        """Up to ``limit`` messages without a mark, with id below ``before_id`` (``None``: from
        the newest), newest first. Keyset on the primary key, never OFFSET."""
        marked = select(message_handling.c.message_id).where(
            message_handling.c.message_id == contact_messages.c.id
        )
        query = (
            select(contact_messages)
            .where(~marked.exists())
            .order_by(contact_messages.c.id.desc())
            .limit(limit)
        )
        if before_id is not None:
            query = query.where(contact_messages.c.id < before_id)
        rows = self.connection.execute(query).mappings()
        return [record_of(ContactMessageRecord, row) for row in rows]
