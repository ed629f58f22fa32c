"""The confirm link: GET confirms a pending subscriber (docs/reader-pages.md, "Confirm"), once;
prefetches change nothing."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.pages_helpers import ORIGIN, open_form, path_of, text_of
from tests.support.subscriber_helpers import events_of


@pytest.fixture
def pending(newsletter_service: Any) -> dict[str, Any]:
    record = newsletter_service.subscribers.subscribe({"email": "new@example.org"}).record
    return dict(newsletter_service.subscribers.contact(record))


def _status(service: Any) -> str:
    return str(service.subscribers.get("new@example.org").status)


def test_visiting_confirms_once_and_only_that_visit_offers_the_profile(
    newsletter_client: Any, newsletter_service: Any, pending: dict[str, Any]
) -> None:
    path = path_of(pending["confirm_url"])
    first = newsletter_client.simulate_get(path)
    assert first.status_code == 200
    assert "your subscription is confirmed" in text_of(first.text)
    assert f'href="{pending["profile_url"]}"' in first.text
    assert _status(newsletter_service) == "confirmed"
    [event] = events_of(newsletter_service, "newsletter.confirmed")
    assert event["payload"]["status"] == "confirmed"
    second = newsletter_client.simulate_get(path)
    assert second.status_code == 200
    assert "already confirmed" in text_of(second.text)
    # a later visit (a link scanner's, or a leaked link's) does not hand out the profile token
    assert path_of(pending["profile_url"]).split("/")[-1] not in second.text
    assert "preferences link" in text_of(second.text)
    assert len(events_of(newsletter_service, "newsletter.confirmed")) == 1
    assert first.headers["cache-control"] == "no-store"
    assert first.headers["referrer-policy"] == "no-referrer"


@pytest.mark.parametrize(
    "token", ["x" * 32, "short", "a" * 65, "not a token!", "%00%00%00%00%00%00%00%00%00"]
)
def test_unknown_token_gets_the_friendly_not_found_page(
    newsletter_client: Any, newsletter_service: Any, pending: dict[str, Any], token: str
) -> None:
    for method in ("GET", "POST"):
        result = newsletter_client.simulate_request(method, f"/confirm/{token}")
        assert result.status_code == 404
        assert "recognise this link" in text_of(result.text)
        assert "Set-Cookie" not in result.headers
    assert _status(newsletter_service) == "pending"


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Purpose": "prefetch"},
        {"Sec-Purpose": "prefetch;prerender"},
        {"Purpose": "prefetch"},
        {"X-Purpose": "preview"},
        {"X-Moz": "prefetch"},
    ],
)
def test_prefetch_changes_nothing_and_offers_a_button(
    newsletter_client: Any, newsletter_service: Any, pending: dict[str, Any], headers: Any
) -> None:
    result = newsletter_client.simulate_get(path_of(pending["confirm_url"]), headers=headers)
    assert result.status_code == 200
    assert "Confirm my subscription" in text_of(result.text)
    assert _status(newsletter_service) == "pending"
    assert events_of(newsletter_service, "newsletter.confirmed") == []


def test_head_changes_nothing(
    newsletter_client: Any, newsletter_service: Any, pending: dict[str, Any]
) -> None:
    assert newsletter_client.simulate_head(path_of(pending["confirm_url"])).status_code == 200
    assert newsletter_client.simulate_head("/confirm/" + "x" * 32).status_code == 404
    assert _status(newsletter_service) == "pending"


def test_the_button_confirms_with_a_valid_token_only(
    newsletter_client: Any, newsletter_service: Any, pending: dict[str, Any]
) -> None:
    path = path_of(pending["confirm_url"])
    form = open_form(newsletter_client, path, headers={"Sec-Purpose": "prefetch"})
    stale = form.post(newsletter_client, path, {}, with_token=False)
    assert stale.status_code == 400
    assert _status(newsletter_service) == "pending"
    cross = form.post(newsletter_client, path, {}, headers={"Origin": "https://evil.example"})
    assert cross.status_code == 403
    assert _status(newsletter_service) == "pending"
    done = form.post(newsletter_client, path, {}, headers={"Origin": ORIGIN})
    assert done.status_code == 200
    assert "your subscription is confirmed" in text_of(done.text)
    assert f'href="{pending["profile_url"]}"' in done.text
    assert _status(newsletter_service) == "confirmed"


@pytest.mark.parametrize("how", ["unsubscribed", "bounced"])
def test_an_old_link_does_not_restart_a_stopped_subscription(
    newsletter_client: Any, newsletter_service: Any, pending: dict[str, Any], how: str
) -> None:
    if how == "unsubscribed":
        newsletter_service.subscribers.unsubscribe("new@example.org")
    else:
        newsletter_service.subscribers.mark_bounced("new@example.org")
    result = newsletter_client.simulate_get(path_of(pending["confirm_url"]))
    assert result.status_code == 200
    assert "not active" in text_of(result.text)
    assert path_of(pending["profile_url"]).split("/")[-1] not in result.text
    assert _status(newsletter_service) == how
    assert events_of(newsletter_service, "newsletter.confirmed") == []
