"""The list-source surface's rules: stored issues read as listmonk campaigns (status always
``finished``) of one list (id 1), whose count is the confirmed subscribers. No HTTP here.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from ..errors import NotFound
from ..storage.records import IssueRecord
from ..timeutil import isoformat_z, to_naive_utc
from .context import ServiceContext

CAMPAIGN_STATUS = "finished"
LIST_ID = 1
LIST_IDENTITY_SETTING = "listsource_list"
MAX_PER_PAGE = 100
DEFAULT_PER_PAGE = 20
# Ids are 64-bit in storage; a larger number names no campaign.
MAX_ID = 2**63 - 1


@dataclass(frozen=True)
class CampaignQuery:
    """A normalised campaigns query; empty ``statuses`` means no filter."""

    page: int = 1
    per_page: int = DEFAULT_PER_PAGE
    order: Literal["asc", "desc"] = "desc"
    statuses: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.page < 1 or not 1 <= self.per_page <= MAX_PER_PAGE:
            raise ValueError("page must be >= 1 and per_page within 1-100")


@dataclass(frozen=True)
class CampaignPage:
    """One page of campaigns; ``total`` counts every match, not only this page."""

    results: list[IssueRecord]
    total: int
    page: int
    per_page: int


@dataclass(frozen=True)
class ListInfo:
    """The single list; ``uuid`` and ``created_at`` are stored when it is first served."""

    id: int
    uuid: str
    name: str
    created_at: datetime
    confirmed_subscribers: int


class ListSourceService:
    """Read-only queries behind ``/api/listsource``."""

    def __init__(self, context: ServiceContext) -> None:
        self.context = context

    def campaigns(self, query: CampaignQuery) -> CampaignPage:
        """A page of campaigns ordered by ``(created_at, id)``. A status filter without
        ``finished`` gives an empty page with ``total`` 0; a page past the end is empty."""
        if query.statuses and CAMPAIGN_STATUS not in query.statuses:
            return CampaignPage(results=[], total=0, page=query.page, per_page=query.per_page)
        offset = (query.page - 1) * query.per_page
        with self.context.storage.transaction(write=False) as uow:
            total = uow.issues.count()
            results = (
                uow.issues.list_by_creation(
                    descending=query.order == "desc", offset=offset, limit=query.per_page
                )
                if offset < total
                else []
            )
        return CampaignPage(results=results, total=total, page=query.page, per_page=query.per_page)

    def campaign(self, campaign_id: int) -> IssueRecord:
        """The campaign with this id; :class:`NotFound` when no stored issue has it."""
        record = None
        if 1 <= campaign_id <= MAX_ID:
            with self.context.storage.transaction(write=False) as uow:
                record = uow.issues.get(campaign_id)
        if record is None:
            raise NotFound("Campaign not found")
        return record

    def subscriber_count(self) -> int:
        """Confirmed subscribers: the only ones a campaign is ever sent to
        (docs/listsource.md, "3. What the platform will see")."""
        with self.context.storage.transaction(write=False) as uow:
            return uow.subscribers.count(status="confirmed")

    def the_list(self) -> ListInfo:
        """The single list every campaign belongs to."""
        identity = self._list_identity()
        return ListInfo(
            id=LIST_ID,
            uuid=identity[0],
            name=self.context.settings.list_name,
            created_at=identity[1],
            confirmed_subscribers=self.subscriber_count(),
        )

    def _list_identity(self) -> tuple[str, datetime]:
        with self.context.storage.transaction(write=False) as uow:
            stored = uow.settings.get(LIST_IDENTITY_SETTING)
        if stored is None:
            now = self.context.clock()
            fresh = {"uuid": str(uuid.uuid4()), "created_at": isoformat_z(now)}
            with self.context.storage.transaction() as uow:
                stored = uow.settings.put_if_absent(LIST_IDENTITY_SETTING, fresh, at=now)
        created = datetime.fromisoformat(str(stored["created_at"]).replace("Z", "+00:00"))
        return str(stored["uuid"]), to_naive_utc(created)
