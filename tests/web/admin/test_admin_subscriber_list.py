"""Admin → Subscribers, the list: newest first with the number matching, every filter and the
sort in the address bar, pages both ways, a walk that runs out of budget searching further,
and a mistake in any parameter named with a 400 (nothing listed)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from html import unescape
from typing import Any
from urllib.parse import urlencode

import pytest

from newsletter_connector.service import subscriber_list
from newsletter_connector.storage.records import EmailPrefs
from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL as BASE
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from newsletter_connector.web.admin import subscribers as subscribers_page
from tests.support.admin import get_page

T0 = datetime(2026, 3, 1, 12, 0)
_ROW_LINK = re.compile(r'<td[^>]*><a href="[^"]*">([^<]*)</a></td>')
_LINK = re.compile(r'<a href="([^"]*)" rel="(next|prev)">([^<]*)</a>')


def _add(service: Any, email: str, **fields: Any) -> Any:
    with service.storage.transaction() as uow:
        return uow.subscribers.add(make_subscriber_data(email, **fields))


def _list(client: Any, session: str, **params: str) -> Any:
    return get_page(client, "/admin/subscribers?" + urlencode(params), session)


def _listed(page: Any) -> list[str]:
    return [unescape(email) for email in _ROW_LINK.findall(page.text)]


def _links(page: Any) -> dict[str, tuple[str, str]]:
    """rel -> (app path, words) of the pager's links."""
    return {
        rel: (unescape(url).removeprefix(BASE), words)
        for url, rel, words in _LINK.findall(page.text)
    }


def _count(page: Any) -> str:
    found = re.search(r'<p class="count">(.*?)</p>', page.text, re.S)
    assert found, page.text
    return unescape(found[1]).strip()


@pytest.fixture
def readers(service: Any) -> list[str]:
    """Six readers, one a day from T0 (the last the newest)."""
    people = [
        ("ann@example.org", "Ann", "Lee", "confirmed", "02134", ("health",), True),
        ("bob@example.org", "Bob", "Marsh", "bounced", "02199", ("money",), False),
        ("cy@example.org", "Cy", "Ng", "bounced", "10001", ("health", "money"), False),
        ("dee@example.org", "Élodie", "Doe", "pending", "02101", (), True),
        ("eve@example.org", None, None, "bounced", "02155", ("health",), False),
        ("fay@example.org", "Fay", "Lee", "unsubscribed", None, ("food",), False),
    ]
    for day, (email, first, last, status, zip_code, categories, sms) in enumerate(people):
        _add(
            service,
            email,
            first_name=first,
            last_name=last,
            status=status,
            zip=zip_code,
            categories=categories,
            sms_enabled=sms,
            age_range="75_84" if day % 2 else "65_74",
            prefs=EmailPrefs(
                briefings="daily", puzzles="weekly" if day < 3 else "off", on_this_day="daily",
                local="daily",
            ),
            created_at=T0 + timedelta(days=day),
        )  # fmt: skip
    return [person[0] for person in people]


def test_the_page_opens_on_everyone_newest_first_with_the_number(
    client: Any, session: str, readers: list[str]
) -> None:
    page = _list(client, session)
    assert page.status_code == 200
    assert _listed(page) == readers[::-1]
    assert _count(page) == "6 subscribers."
    assert "Clear the filter" not in page.text and _links(page) == {}


@pytest.mark.parametrize(
    ("params", "expected", "count"),
    [
        ({"status": "bounced"}, ["eve", "cy", "bob"], "3 subscribers match."),
        ({"category": "health"}, ["eve", "cy", "ann"], "3 subscribers match."),
        ({"puzzles": "weekly"}, ["cy", "bob", "ann"], "3 subscribers match."),
        ({"sms": "yes"}, ["dee", "ann"], "2 subscribers match."),
        ({"sms": "no"}, ["fay", "eve", "cy", "bob"], "4 subscribers match."),
        ({"zip": "021"}, ["eve", "dee", "bob", "ann"], "4 subscribers match."),
        ({"age": "75_84"}, ["fay", "dee", "bob"], "3 subscribers match."),
        ({"from": "2026-03-02", "to": "2026-03-03"}, ["cy", "bob"], "2 subscribers match."),
        ({"address": "C"}, ["cy"], "1 subscriber matches."),
        ({"name": "lee"}, ["fay", "ann"], "2 subscribers match."),
        ({"name": "élo"}, ["dee"], "1 subscriber matches."),
        ({"status": "bounced", "zip": "021"}, ["eve", "bob"], "2 subscribers match."),
        (
            {"status": "bounced", "category": "money", "sms": "no"}, ["cy", "bob"],
            "2 subscribers match.",
        ),
        ({"status": "pending", "zip": "9"}, [], "0 subscribers match."),
    ],
)  # fmt: skip
def test_each_filter_and_their_combinations_list_the_matches(
    client: Any, session: str, readers: list[str], params: dict[str, str], expected: list[str],
    count: str,
) -> None:  # fmt: skip
    page = _list(client, session, **params)
    assert page.status_code == 200, page.text
    assert _listed(page) == [f"{name}@example.org" for name in expected]
    assert _count(page) == count
    if not expected:
        assert "No subscriber matches." in page.text
    # The form shows the filter it applied, and offers to clear it.
    for name, value in params.items():
        assert re.search(rf'name="{name}"[^>]*value="{re.escape(value)}"', page.text) or re.search(
            rf'<option value="{re.escape(value)}" selected>', page.text
        ), name
    assert "Clear the filter" in page.text


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("oldest", ["ann", "bob", "cy", "dee", "eve", "fay"]),
        ("address", ["ann", "bob", "cy", "dee", "eve", "fay"]),
        ("address_desc", ["fay", "eve", "dee", "cy", "bob", "ann"]),
        ("newest", ["fay", "eve", "dee", "cy", "bob", "ann"]),
    ],
)
def test_the_list_sorts_by_signup_or_address(
    client: Any, session: str, readers: list[str], sort: str, expected: list[str]
) -> None:
    assert _listed(_list(client, session, sort=sort)) == [f"{n}@example.org" for n in expected]


@pytest.mark.parametrize("sort", ["newest", "address"])
def test_pages_go_forward_and_back_keeping_the_filter(
    client: Any, session: str, readers: list[str], sort: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(subscribers_page, "PAGE_SIZE", 2)
    everyone = _listed(_list(client, session, sort=sort))
    full = sorted(readers, reverse=sort == "newest")
    assert everyone == full[:2]
    seen, page = [], _list(client, session, sort=sort, status="")
    pages = []
    while True:
        pages.append(_listed(page))
        seen.extend(_listed(page))
        links = _links(page)
        if "next" not in links:
            break
        assert links["next"][1] == "Next page"
        assert f"sort={sort}" in links["next"][0]
        page = get_page(client, links["next"][0], session)
    assert seen == full and len(pages) == 3
    # ... and back, page by page, to the first.
    back = []
    while "prev" in (links := _links(page)):
        assert links["prev"][1] == "Previous page"
        page = get_page(client, links["prev"][0], session)
        back.insert(0, _listed(page))
    assert back == pages[:-1]
    assert (
        "prev" not in _links(page)
        or _listed(get_page(client, _links(page)["prev"][0], session)) == []
    )


def test_a_filtered_walk_keeps_its_filter_on_every_page(
    client: Any, session: str, readers: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(subscribers_page, "PAGE_SIZE", 1)
    page = _list(client, session, status="bounced")
    seen = _listed(page)
    while "next" in _links(page):
        assert "status=bounced" in _links(page)["next"][0]
        page = get_page(client, _links(page)["next"][0], session)
        seen.extend(_listed(page))
    assert seen == ["eve@example.org", "cy@example.org", "bob@example.org"]


def test_a_walk_out_of_budget_shows_what_it_found_and_searches_further(
    client: Any, session: str, readers: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(subscriber_list, "BUDGET", 2)
    page = _list(client, session, status="bounced")
    assert _listed(page) == ["eve@example.org"]  # of fay and eve, the two looked through
    assert _count(page).startswith("About ") and "an estimate from the newest 2" in _count(page)
    assert _links(page)["next"][1] == "Search further"
    assert "looks through at most 2 subscribers at a time" in page.text
    further = get_page(client, _links(page)["next"][0], session)
    assert _listed(further) == ["cy@example.org"]  # dee and cy
    last = get_page(client, _links(further)["next"][0], session)
    assert _listed(last) == ["bob@example.org"] and "next" not in _links(last)
    nobody = _list(client, session, status="pending", zip="9")
    assert _listed(nobody) == [] and "None of the subscribers looked through so far" in nobody.text
    assert _count(nobody) == (
        "None of the newest 2 subscribers match; older ones were not looked through, "
        "to keep this page quick."
    )


def test_an_estimated_count_scales_the_share_among_the_newest(
    client: Any, session: str, readers: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(subscriber_list, "BUDGET", 3)
    # Of the newest three (fay, eve, dee) one is bounced: a third of six.
    assert _count(_list(client, session, status="bounced")).startswith("About 2 subscribers match")


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"status": "gone"}, "status must be one of: pending, confirmed"),
        ({"category": "cats"}, "category must be one of"),
        ({"puzzles": "hourly"}, "puzzles must be one of: off, daily, weekly"),
        ({"sms": "maybe"}, "sms must be yes or no"),
        ({"zip": "0213x"}, "zip must be the first 1 to 5 digits of a ZIP code"),
        ({"zip": "021345"}, "zip must be the first 1 to 5 digits"),
        ({"age": "old"}, "age must be one of"),
        ({"from": "2026-02-30"}, "from must be a date (YYYY-MM-DD)"),
        ({"from": "2026-03-05", "to": "2026-03-01"}, "to must be on or after from"),
        ({"address": "x" * 255}, "address must be at most 254 characters"),
        ({"name": "y" * 255}, "name must be at most 254 characters"),
        ({"sort": "random"}, "sort must be one of: newest, oldest, address, address_desc"),
        ({"after": "yesterday"}, "after is not a place in this list"),
        ({"before": "2026-01-01T00:00:00~0"}, "before is not a place in this list"),
        ({"after": "2026-01-01T00:00:00+02:00~3"}, "after is not a place in this list"),
        ({"after": "a", "before": "b"}, "give after or before, not both"),
        ({"address": "a\x01"}, "address must not contain control characters"),
    ],
)
def test_a_mistake_in_any_parameter_is_a_400_naming_it(
    client: Any, session: str, readers: list[str], params: dict[str, str], named: str
) -> None:
    page = _list(client, session, **params)
    assert page.status_code == 400
    assert named in unescape(page.text)
    assert _listed(page) == []


@pytest.mark.parametrize(
    "params",
    [{"to": "9999-12-31"}, {"from": "0001-01-01", "to": "9999-12-31"}, {"from": "9999-12-31"}],
)
def test_the_first_and_last_days_there_are_filter_without_an_error(
    client: Any, session: str, readers: list[str], params: dict[str, str]
) -> None:
    """``to=9999-12-31`` has no day after it to end the range at: it means no end."""
    page = _list(client, session, **params)
    assert page.status_code == 200, page.text
    expected = [] if params.get("from") == "9999-12-31" else readers[::-1]
    assert _listed(page) == expected


def test_the_list_is_a_search_landmark_with_labelled_fields(
    client: Any, session: str, readers: list[str]
) -> None:
    page = _list(client, session, zip="x")
    assert 'role="search"' in page.text
    assert 'id="f-zip" name="zip"' in page.text and 'aria-invalid="true"' in page.text
    assert 'aria-describedby="zip-error"' in page.text and 'id="zip-error"' in page.text
    for field in ("address", "name", "status", "category", "zip", "age", "sms", "from", "to"):
        assert f'<label for="f-{field}">' in page.text, field


def test_an_address_range_too_large_to_count_says_at_least(
    client: Any, service: Any, session: str, readers: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(4):
        _add(service, f"bo{n}@example.org", status="bounced" if n % 2 else "confirmed")
    monkeypatch.setattr(subscriber_list, "BUDGET", 3)
    assert _count(_list(client, session, address="cy")) == "1 subscriber matches."
    count = _count(_list(client, session, address="bo", status="bounced"))
    # bo0, bo1 and bo2 looked through, of whom bo1 is bounced; bob and bo3 are not counted.
    assert count == (
        "At least 1 subscriber matches: counting stopped after the first 3 addresses, "
        "to keep this page quick."
    )
