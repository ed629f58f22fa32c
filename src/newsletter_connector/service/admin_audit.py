"""The record of admin acts: who did what to what, from which client (a keyed hash). Targets
are labels and names, never a key, token, password or other credential."""

from __future__ import annotations

from ..storage.access_records import AdminAuditRecord
from .context import ServiceContext

MAX_ACTOR_LENGTH = 200
MAX_TARGET_LENGTH = 200
MAX_DETAIL_LENGTH = 500


class AdminAuditService:
    """Appends to and reads the admin audit record."""

    def __init__(self, context: ServiceContext) -> None:
        self.context = context

    def record(
        self,
        actor: str,
        action: str,
        target: str | None,
        *,
        client_hash: str | None = None,
        detail: str | None = None,
    ) -> int:
        """Append one act now (actor and target cut to 200 characters, ``detail`` to 500);
        its id."""
        with self.context.storage.transaction() as uow:
            return uow.admin_audit.add(
                at=self.context.clock(),
                actor=actor[:MAX_ACTOR_LENGTH],
                action=action,
                target=None if target is None else target[:MAX_TARGET_LENGTH],
                client_hash=client_hash,
                detail=None if detail is None else detail[:MAX_DETAIL_LENGTH],
            )

    def latest(self, limit: int = 50, *, before_id: int | None = None) -> list[AdminAuditRecord]:
        """Up to ``limit`` acts, newest first; ``before_id`` (the last id of a page) pages on."""
        with self.context.storage.transaction(write=False) as uow:
            return uow.admin_audit.latest(limit, before_id=before_id)

    def latest_about(self, target: str, limit: int = 20) -> list[AdminAuditRecord]:
        """Up to ``limit`` acts on ``target`` (an address, a key label), newest first."""
        with self.context.storage.transaction(write=False) as uow:
            return uow.admin_audit.latest_about(target[:MAX_TARGET_LENGTH], limit=limit)
