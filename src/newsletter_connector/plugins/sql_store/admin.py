"""The SQL store's admin users, sessions and audit record."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime

from sqlalchemy import delete, func, insert, select, update

from ...errors import InvalidRequest
from ...storage.access_records import AdminAuditRecord, AdminSessionRecord, AdminUserRecord
from .record_builders import record_of
from .repository import SqlRepository
from .tables import admin_audit, admin_sessions, admin_users


class SqlAdminUsers(SqlRepository):
    """``AdminUserRepository`` on ``nc_admin_users``."""

    def add(
        self, *, username: str, password_hash: str, role: str, created_at: datetime
    ) -> AdminUserRecord:
        if self.get(username) is not None:
            raise InvalidRequest(f"an admin user {username!r} already exists", field="username")
        values = {"username": username, "password_hash": password_hash, "role": role}
        row = (
            self.connection.execute(
                insert(admin_users)
                .values(**values, created_at=created_at)
                .returning(*admin_users.c)
            )
            .mappings()
            .one()
        )
        return record_of(AdminUserRecord, row)

    def get(self, username: str) -> AdminUserRecord | None:
        row = (
            self.connection.execute(select(admin_users).where(admin_users.c.username == username))
            .mappings()
            .first()
        )
        return record_of(AdminUserRecord, row) if row else None

    def list(self) -> list[AdminUserRecord]:
        rows = self.connection.execute(select(admin_users).order_by(admin_users.c.id)).mappings()
        return [record_of(AdminUserRecord, row) for row in rows]

    def count(self, *, role: str | None = None) -> int:
        query = select(func.count()).select_from(admin_users)
        if role is not None:
            query = query.where(admin_users.c.role == role)
        return int(self.connection.scalar(query) or 0)

    def set_password_hash(self, username: str, password_hash: str) -> bool:
        result = self.connection.execute(
            update(admin_users)
            .where(admin_users.c.username == username)
            .values(password_hash=password_hash)
        )
        return bool(result.rowcount)

    def set_role(self, username: str, role: str) -> bool:
        result = self.connection.execute(
            update(admin_users).where(admin_users.c.username == username).values(role=role)
        )
        return bool(result.rowcount)

    def delete(self, username: str) -> bool:
        result = self.connection.execute(
            delete(admin_users).where(admin_users.c.username == username)
        )
        return bool(result.rowcount)


class SqlAdminSessions(SqlRepository):
    """``AdminSessionRepository`` on ``nc_admin_sessions``."""

    def add(self, record: AdminSessionRecord) -> None:
        self.connection.execute(insert(admin_sessions).values(**asdict(record)))

    def get(self, token_digest: str) -> AdminSessionRecord | None:
        row = (
            self.connection.execute(
                select(admin_sessions).where(admin_sessions.c.token_digest == token_digest)
            )
            .mappings()
            .first()
        )
        return record_of(AdminSessionRecord, row) if row else None

    def touch(self, token_digest: str, *, at: datetime) -> None:
        self.connection.execute(
            update(admin_sessions)
            .where(admin_sessions.c.token_digest == token_digest)
            .values(last_seen_at=at)
        )

    def delete(self, token_digest: str) -> bool:
        result = self.connection.execute(
            delete(admin_sessions).where(admin_sessions.c.token_digest == token_digest)
        )
        return bool(result.rowcount)

    def delete_for_user(self, username: str) -> int:
        result = self.connection.execute(
            delete(admin_sessions).where(admin_sessions.c.username == username)
        )
        return int(result.rowcount)

    def prune(self, *, seen_before: datetime, created_before: datetime) -> int:
        result = self.connection.execute(
            delete(admin_sessions).where(
                (admin_sessions.c.last_seen_at < seen_before)
                | (admin_sessions.c.created_at < created_before)
            )
        )
        return int(result.rowcount)


class SqlAdminAudit(SqlRepository):
    """``AdminAuditRepository`` on ``nc_admin_audit``."""

    def add(
        self,
        *,
        at: datetime,
        actor: str,
        action: str,
        target: str | None,
        client_hash: str | None,
    ) -> int:
        statement = insert(admin_audit).values(
            at=at, actor=actor, action=action, target=target, client_hash=client_hash
        )
        return int(self.connection.execute(statement.returning(admin_audit.c.id)).scalar_one())

    def latest(self, limit: int, *, before_id: int | None = None) -> list[AdminAuditRecord]:
        query = select(admin_audit).order_by(admin_audit.c.id.desc()).limit(limit)
        if before_id is not None:
            query = query.where(admin_audit.c.id < before_id)
        rows = self.connection.execute(query).mappings()
        return [record_of(AdminAuditRecord, row) for row in rows]

    def replace_target(self, target: str, replacement: str) -> int:
        statement = (
            update(admin_audit).where(admin_audit.c.target == target).values(target=replacement)
        )
        return int(self.connection.execute(statement).rowcount)
