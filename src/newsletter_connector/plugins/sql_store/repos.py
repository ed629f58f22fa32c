"""Repositories of the SQL store for keys, small settings and the platform connection."""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError

from ...errors import InvalidRequest
from ...storage.access_records import ApiKeyRecord, ConnectionRecord
from .record_builders import inserted_id, inserted_record, record_of, updated_row
from .repository import SqlRepository
from .tables import api_keys, connections, kv_settings
from .upserts import insert_or_update

# Every authenticated request runs this: built once, so only the bound digest changes.
_FIND_ACTIVE_KEY = select(api_keys).where(
    api_keys.c.key_digest == bindparam("digest"), api_keys.c.revoked_at.is_(None)
)


class SqlApiKeys(SqlRepository):
    """Newsletter API keys, looked up by the SHA-256 hex digest of the presented key."""

    def add(self, *, label: str, key_prefix: str, key_digest: str, created_at: Any) -> int:
        """Store a new key; its id. Raises ``InvalidRequest`` if the label is taken."""
        exists = self.connection.scalar(select(api_keys.c.id).where(api_keys.c.label == label))
        if exists is not None:
            raise InvalidRequest(f"a key labelled {label!r} already exists", field="label")
        statement = insert(api_keys).values(
            label=label, key_prefix=key_prefix, key_digest=key_digest, created_at=created_at
        )
        return inserted_id(self.connection, statement)

    def find_active_by_digest(self, key_digest: str) -> ApiKeyRecord | None:
        """The unrevoked key with this digest, or ``None``."""
        row = self.connection.execute(_FIND_ACTIVE_KEY, {"digest": key_digest}).mappings().first()
        return record_of(ApiKeyRecord, row) if row else None

    def list(self) -> list[ApiKeyRecord]:
        """Every key, revoked ones included, oldest first."""
        rows = self.connection.execute(select(api_keys).order_by(api_keys.c.id)).mappings()
        return [record_of(ApiKeyRecord, row) for row in rows]

    def revoke(self, label_or_id: str, *, at: Any) -> ApiKeyRecord | None:
        """Revoke the key with this label (or numeric id); ``None`` when none matches. A key
        revoked again keeps its first revocation time."""
        condition = api_keys.c.label == label_or_id
        if label_or_id.isdigit():
            condition = condition | (api_keys.c.id == int(label_or_id))
        row = self.connection.execute(select(api_keys).where(condition)).mappings().first()
        if row is None:
            return None
        if row["revoked_at"] is None:
            revoke = update(api_keys).where(api_keys.c.id == row["id"]).values(revoked_at=at)
            revoked = updated_row(self.connection, api_keys, revoke, row["id"])
            assert revoked is not None  # read in this transaction, and never deleted
            row = revoked
        return record_of(ApiKeyRecord, row)

    def mark_used(self, key_id: int, *, on: date) -> None:
        """Record that the key was used on the UTC day ``on``; a later day already recorded
        is kept (one conditional write)."""
        self.connection.execute(
            update(api_keys)
            .where(
                api_keys.c.id == key_id,
                (api_keys.c.last_used_on.is_(None)) | (api_keys.c.last_used_on < on),
            )
            .values(last_used_on=on)
        )


class SqlSettings(SqlRepository):
    """Small JSON values stored by name (site secret, list-source credentials, ...)."""

    def get(self, name: str) -> Any | None:
        """The stored value, or ``None``."""
        return self.connection.scalar(select(kv_settings.c.value).where(kv_settings.c.name == name))

    def put(self, name: str, value: Any, *, at: Any) -> None:
        """Store ``value`` under ``name``, replacing any previous value; callers racing on
        one name never fail, and the last to commit wins."""
        self.connection.execute(
            insert_or_update(
                self.connection.dialect.name,
                kv_settings,
                index_elements=[kv_settings.c.name],
                values={"name": name, "value": value, "updated_at": at},
            )
        )

    def put_if_absent(self, name: str, value: Any, *, at: Any) -> Any:
        """Store ``value`` unless ``name`` exists; the value stored now (racing callers get
        the same winner)."""
        current = self.get(name)
        if current is not None:
            return current
        savepoint = self.connection.begin_nested()
        try:
            self.connection.execute(
                insert(kv_settings).values(name=name, value=value, updated_at=at)
            )
            savepoint.commit()
        except IntegrityError:
            savepoint.rollback()
            return self.get(name)
        return value

    def delete(self, name: str) -> bool:
        """Remove ``name``; true if it existed."""
        result = self.connection.execute(kv_settings.delete().where(kv_settings.c.name == name))
        return bool(result.rowcount)


#: The active connection (the newest not disabled): every column, in the table's order.
ACTIVE_CONNECTION = (
    select(connections)
    .where(connections.c.disabled_at.is_(None))
    .order_by(connections.c.id.desc())
    .limit(1)
)


class SqlConnections(SqlRepository):
    """The platform connection; at most one is active at a time."""

    def active(self) -> ConnectionRecord | None:
        """The active connection, or ``None`` when none is configured."""
        row = self.connection.execute(ACTIVE_CONNECTION).mappings().first()
        return record_of(ConnectionRecord, row) if row else None

    def replace(
        self, *, platform_base: str, transport: str, token: str, at: Any
    ) -> ConnectionRecord:
        """Disable any active connection and make a new one active."""
        self.disable(at=at)
        return inserted_record(
            self.connection,
            connections,
            ConnectionRecord,
            platform_base=platform_base,
            transport=transport,
            token=token,
            created_at=at,
        )

    def disable(self, *, at: Any) -> bool:
        """Disable the active connection; true if there was one."""
        result = self.connection.execute(
            update(connections).where(connections.c.disabled_at.is_(None)).values(disabled_at=at)
        )
        return bool(result.rowcount)
