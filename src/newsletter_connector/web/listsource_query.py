"""Lenient query parsing for the list-source surface: like listmonk, a bad ``page``, ``per_page``
or ``order`` falls back to a default, so no query value causes an error."""

from __future__ import annotations

from collections.abc import Mapping

from ..service.listsource import DEFAULT_PER_PAGE, MAX_PER_PAGE, CampaignQuery
from .params import decimal_integer

_INT64_MAX = 2**63 - 1
_INT64_MIN = -(2**63)

QueryParams = Mapping[str, "str | list[str]"]


def go_atoi(text: str) -> int | None:
    """``strconv.Atoi`` on a 64-bit platform: the number, or ``None`` where Go would return an
    error."""
    value = decimal_integer(text, plus_sign=True)
    return value if value is not None and _INT64_MIN <= value <= _INT64_MAX else None


def all_values(params: QueryParams, name: str) -> list[str]:
    """Every value given for ``name``, in order (empty when absent)."""
    raw = params.get(name)
    if raw is None:
        return []
    return [raw] if isinstance(raw, str) else list(raw)


def first_value(params: QueryParams, name: str) -> str | None:
    """The first value of ``name`` (echo's ``QueryParam``), or ``None`` when absent."""
    values = all_values(params, name)
    return values[0] if values else None


def parse_page(params: QueryParams) -> int:
    """``page``: an integer >= 1; anything else (absent, not an integer, < 1) is 1."""
    value = go_atoi(first_value(params, "page") or "")
    return value if value is not None and value >= 1 else 1


def parse_per_page(params: QueryParams) -> int:
    """``per_page``: 1-100. ``all`` and negatives (listmonk's "all") are 100, larger numbers
    are capped at 100, and 0, blank or non-integers are the default 20."""
    raw = first_value(params, "per_page")
    if raw is None:
        return DEFAULT_PER_PAGE
    if raw == "all":
        return MAX_PER_PAGE
    value = go_atoi(raw)
    if value is None or value == 0:
        return DEFAULT_PER_PAGE
    if value < 0:
        return MAX_PER_PAGE
    return min(value, MAX_PER_PAGE)


def parse_campaign_query(params: QueryParams) -> CampaignQuery:
    """A :class:`CampaignQuery` from raw query parameters; never raises. ``order`` is ``asc``
    in any case, else ``desc``; non-blank ``status`` values filter (OR-combined); other listmonk
    parameters are ignored."""
    ascending = (first_value(params, "order") or "").lower() == "asc"
    statuses = tuple(value for value in all_values(params, "status") if value.strip())
    return CampaignQuery(
        page=parse_page(params),
        per_page=parse_per_page(params),
        order="asc" if ascending else "desc",
        statuses=statuses,
    )
