"""listmonk's JSON shapes, written from its Go structs (knadh/listmonk v6.2.0), for tests.

- ``models.Campaign`` = ``Base`` + ``CampaignMeta`` + own fields (``models/campaigns.go``);
- ``models.List`` (``models/lists.go``); ``models.PageResults`` (``models/common.go``).

Go types map to strict JSON types: ``int`` -> int, ``null.Int`` -> int | None,
``null.String`` -> str | None, ``null.Time``/``time.Time`` -> RFC 3339 string (null when
nullable), ``pq.StringArray`` -> list[str], ``types.JSONText``/``json.RawMessage`` -> JSON.
Every model forbids extra keys except where the spec adds one (``campaign_id``), and
``*_FIELD_ORDER`` is the order Go's encoder emits.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr

# Go's time.Time.MarshalJSON: RFC 3339 with a trimmed nanosecond fraction; a UTC server
# emits "Z".
_GO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{0,8}[1-9])?(Z|[+-]\d\d:\d\d)")


def _go_time(value: str) -> str:
    if not _GO_TIME.fullmatch(value):
        raise ValueError(f"not a Go time.Time JSON value: {value!r}")
    return value


GoTime = Annotated[StrictStr, AfterValidator(_go_time)]
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class CampaignList(_Strict):
    id: StrictInt | None
    name: StrictStr


class CampaignMedia(_Strict):
    id: StrictInt | None
    filename: StrictStr


class Campaign(_Strict):
    """``models.Campaign`` (v6.2) plus the spec's ``campaign_id``."""

    id: StrictInt
    campaign_id: StrictInt  # docs/listsource.md (listmonk has it as json:"-")
    created_at: GoTime
    updated_at: GoTime
    views: StrictInt
    clicks: StrictInt
    bounces: StrictInt
    lists: list[CampaignList]
    media: list[CampaignMedia]
    started_at: GoTime | None
    to_send: StrictInt
    sent: StrictInt
    uuid: Annotated[StrictStr, AfterValidator(lambda v: _match(_UUID, v))]
    type: Literal["regular", "optin"]
    name: StrictStr
    subject: StrictStr
    from_email: StrictStr
    body: StrictStr
    body_source: StrictStr | None
    altbody: StrictStr | None
    send_at: GoTime | None
    status: Literal["draft", "running", "scheduled", "paused", "cancelled", "finished"]
    content_type: Literal["richtext", "html", "plain", "markdown", "visual"]
    tags: list[StrictStr]
    headers: list[dict[StrictStr, StrictStr]]
    attribs: dict[str, Any]
    template_id: StrictInt | None
    messenger: StrictStr
    archive: StrictBool
    archive_slug: StrictStr | None
    archive_template_id: StrictInt | None
    archive_meta: dict[str, Any]


CAMPAIGN_FIELD_ORDER = [name for name in Campaign.model_fields if name != "campaign_id"]


class MailingList(_Strict):
    """``models.List`` (v6.2) as ``GET /api/lists`` emits it."""

    id: StrictInt
    created_at: GoTime
    updated_at: GoTime
    uuid: Annotated[StrictStr, AfterValidator(lambda v: _match(_UUID, v))]
    name: StrictStr
    type: Literal["public", "private", "temporary"]
    optin: Literal["single", "double"]
    status: Literal["active", "archived"]
    tags: list[StrictStr]
    description: StrictStr
    subscriber_count: StrictInt
    subscriber_statuses: dict[Literal["confirmed", "unconfirmed", "unsubscribed"], StrictInt]
    subscription_created_at: None
    subscription_updated_at: None


LIST_FIELD_ORDER = list(MailingList.model_fields)


class CampaignPageResults(_Strict):
    """``models.PageResults`` (v5+: with ``search``)."""

    results: list[Campaign]
    search: StrictStr
    query: StrictStr
    total: StrictInt
    per_page: StrictInt
    page: StrictInt


class ListPageResults(_Strict):
    results: list[MailingList]
    search: StrictStr
    query: StrictStr
    total: StrictInt
    per_page: StrictInt
    page: StrictInt


class CampaignsResponse(_Strict):
    data: CampaignPageResults


class CampaignResponse(_Strict):
    data: Campaign


class ListsResponse(_Strict):
    data: ListPageResults


class ErrorResponse(_Strict):
    """echo's ``HTTPError`` body: ``{"message": ...}`` and nothing else."""

    message: StrictStr


def _match(pattern: str, value: str) -> str:
    if not re.fullmatch(pattern, value):
        raise ValueError(f"{value!r} does not match {pattern}")
    return value


def assert_campaign_field_order(campaign: dict[str, Any]) -> None:
    """Keys in listmonk's order, with ``campaign_id`` right after ``id``."""
    keys = list(campaign)
    assert keys[:2] == ["id", "campaign_id"]
    assert [k for k in keys if k != "campaign_id"] == CAMPAIGN_FIELD_ORDER
