"""The listmonk v6 wire shapes of the list-source surface (campaign, list, page envelope), with
truthful values for a service that sends nothing itself; ``docs/listsource.md`` describes each
field."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..service.listsource import CAMPAIGN_STATUS, CampaignPage, ListInfo
from ..settings import Settings
from ..storage.records import IssueRecord
from ..timeutil import isoformat_z

# No listmonk template renders our campaigns; typed clients need an integer, and 0 is no real id.
NO_TEMPLATE_ID = 0


def go_time(value: datetime) -> str:
    """A UTC time as Go's ``time.Time`` marshals it (``2026-11-21T09:30:00.12345Z``)."""
    text = isoformat_z(value) or ""
    if "." not in text:
        return text
    whole, fraction = text[:-1].split(".")
    fraction = fraction.rstrip("0")
    return f"{whole}.{fraction}Z" if fraction else f"{whole}Z"


def campaign_name(record: IssueRecord) -> str:
    """The campaign's internal name, e.g. ``Daily issue 2026-11-21``."""
    return f"{record.kind.capitalize()} issue {record.issue_date}"


def campaign_tags(record: IssueRecord) -> list[str]:
    """The cadence, then the kind when it differs (so ``test`` and ``manual`` issues can be
    told apart by tag)."""
    tags = [record.cadence]
    if record.kind != record.cadence:
        tags.append(record.kind)
    return tags


def campaign_object(record: IssueRecord, settings: Settings) -> dict[str, Any]:
    """One campaign, in listmonk's field order, with the spec's ``campaign_id`` after ``id``."""
    return {
        "id": record.id,
        "campaign_id": record.id,
        "created_at": go_time(record.created_at),
        "updated_at": go_time(record.updated_at),
        "views": 0,
        "clicks": 0,
        "bounces": 0,
        "lists": [{"id": 1, "name": settings.list_name}],
        "media": [],
        "started_at": None,
        "to_send": 0,
        "sent": 0,
        "uuid": record.uuid,
        "type": "regular",
        "name": campaign_name(record),
        "subject": record.subject,
        "from_email": settings.from_address,
        "body": record.html,
        "body_source": None,
        "altbody": record.text,
        "send_at": None,
        "status": CAMPAIGN_STATUS,
        "content_type": "html",
        "tags": campaign_tags(record),
        "headers": [],
        "attribs": {},
        "template_id": NO_TEMPLATE_ID,
        "messenger": "email",
        "archive": False,
        "archive_slug": None,
        "archive_template_id": None,
        "archive_meta": {},
    }


def list_object(info: ListInfo) -> dict[str, Any]:
    """The single list, in listmonk's field order (v6)."""
    created = go_time(info.created_at)
    count = info.confirmed_subscribers
    return {
        "id": info.id,
        "created_at": created,
        "updated_at": created,
        "uuid": info.uuid,
        "name": info.name,
        "type": "public",
        "optin": "double",
        "status": "active",
        "tags": [],
        "description": "",
        "subscriber_count": count,
        # listmonk lists only the subscription statuses present; ours counts confirmed only.
        "subscriber_statuses": {"confirmed": count} if count else {},
        "subscription_created_at": None,
        "subscription_updated_at": None,
    }


def page_envelope(results: list[dict[str, Any]], *, total: int, per_page: int, page: int) -> Any:
    """listmonk's ``PageResults`` inside ``{"data": ...}``. No search is applied, so
    ``search`` and ``query`` are always empty strings."""
    return {
        "data": {
            "results": results,
            "search": "",
            "query": "",
            "total": total,
            "per_page": per_page,
            "page": page,
        }
    }


def campaigns_envelope(page: CampaignPage, settings: Settings) -> Any:
    """``GET /api/campaigns``: a page of campaigns with the true total (no empty-page quirk)."""
    return page_envelope(
        [campaign_object(record, settings) for record in page.results],
        total=page.total,
        per_page=page.per_page,
        page=page.page,
    )
