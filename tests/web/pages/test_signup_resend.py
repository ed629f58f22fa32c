"""Re-submitting a pending address re-announces it (queues ``newsletter.signup``, so the
platform mails a confirmation) at most once per ``confirmation_resend_interval``, through the
API and the signup form alike; within it the answer is unchanged and nothing is queued."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import falcon.testing
import pytest

from newsletter_connector.service import NewsletterService
from newsletter_connector.testing.threads import run_together
from newsletter_connector.web.app import create_app
from tests.support.analytics_helpers import Clock
from tests.support.pages_helpers import open_form, path_of
from tests.support.subscriber_helpers import events_of, post

T0 = datetime(2026, 11, 23, 9, 0, 0)
DAY = timedelta(days=1)


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
def make_service(
    newsletter_settings: Any, newsletter_storage: Any, clock: Clock
) -> Callable[..., NewsletterService]:
    def make(**settings: Any) -> NewsletterService:
        return NewsletterService.build(
            type(newsletter_settings)(**{**newsletter_settings.model_dump(), **settings}),
            storage=newsletter_storage,
            clock=clock,
        )

    return make


def _api(service: NewsletterService) -> tuple[falcon.testing.TestClient, dict[str, str]]:
    key = service.admin.create_api_key("resend-tests").key
    return falcon.testing.TestClient(create_app(service=service)), {
        "Authorization": f"Bearer {key}"
    }


def test_api_resubmit_within_the_interval_answers_200_and_queues_nothing(
    make_service: Callable[..., NewsletterService],
) -> None:
    service = make_service()
    client, auth = _api(service)
    first = post(client, auth, {"email": "dora@example.org"})
    assert first.status_code == 201
    for _ in range(5):
        again = post(client, auth, {"email": "Dora@example.org"})
        assert again.status_code == 200
        assert again.json == first.json  # the same contact, confirm_url included
    assert len(events_of(service, "newsletter.signup")) == 1


def test_signup_form_resubmit_within_the_interval_shows_check_your_email_and_queues_nothing(
    make_service: Callable[..., NewsletterService],
) -> None:
    service = make_service()
    client = falcon.testing.TestClient(create_app(service=service))
    for _ in range(3):
        form = open_form(client, "/signup")
        result = form.post(client, "/signup", {"email": "eve@example.org", "zip": ""})
        assert result.status_code == 303
        assert path_of(result.headers["location"]) == "/signup/thanks"
        done = client.simulate_get("/signup/thanks")
        assert "check your email" in done.text.lower()
    assert len(events_of(service, "newsletter.signup")) == 1


def test_a_pending_address_is_announced_again_once_per_interval(
    make_service: Callable[..., NewsletterService], clock: Clock
) -> None:
    service = make_service()
    client, auth = _api(service)
    assert post(client, auth, {"email": "fay@example.org"}).status_code == 201
    signups = lambda: len(events_of(service, "newsletter.signup"))  # noqa: E731

    clock.now = T0 + DAY - timedelta(seconds=1)
    assert post(client, auth, {"email": "fay@example.org"}).status_code == 200
    assert signups() == 1  # a day has not passed since the signup announced it
    clock.now = T0 + DAY
    assert post(client, auth, {"email": "fay@example.org"}).status_code == 200
    assert signups() == 2  # the platform may resend the confirmation mail
    clock.now = T0 + 2 * DAY - timedelta(seconds=1)
    post(client, auth, {"email": "fay@example.org"})
    assert signups() == 2  # counted from the re-announcement
    clock.now = T0 + 2 * DAY
    post(client, auth, {"email": "fay@example.org"})
    assert signups() == 3
    payloads = [event["payload"] for event in events_of(service, "newsletter.signup")]
    assert payloads[0]["confirm_url"] == payloads[1]["confirm_url"] == payloads[2]["confirm_url"]
    # A confirmed address is never announced again, however long after.
    record = service.subscribers.get("fay@example.org")
    service.subscribers.confirm_by_token(record.confirm_token)
    clock.now = T0 + 9 * DAY
    assert post(client, auth, {"email": "fay@example.org"}).status_code == 200
    assert signups() == 3


def test_the_interval_is_a_setting_and_zero_announces_every_resubmit(
    make_service: Callable[..., NewsletterService], clock: Clock
) -> None:
    service = make_service(confirmation_resend_interval=60)
    service.subscribers.subscribe({"email": "hal@example.org"})
    clock.now = T0 + timedelta(seconds=59)
    service.subscribers.subscribe({"email": "hal@example.org"})
    assert len(events_of(service, "newsletter.signup")) == 1
    clock.now = T0 + timedelta(seconds=60)
    service.subscribers.subscribe({"email": "hal@example.org"})
    assert len(events_of(service, "newsletter.signup")) == 2
    # 0: every re-submit is announced (no mail-bombing protection; an operator's choice).
    service = make_service(confirmation_resend_interval=0)
    for _ in range(3):
        service.subscribers.subscribe({"email": "hal@example.org"})
    assert len(events_of(service, "newsletter.signup")) == 5


def test_concurrent_resubmits_queue_one_announcement(
    make_service: Callable[..., NewsletterService], clock: Clock
) -> None:
    service = make_service()
    service.subscribers.subscribe({"email": "jon@example.org"})
    clock.now = T0 + 2 * DAY

    def resubmit() -> None:
        assert service.subscribers.subscribe({"email": "jon@example.org"}).created is False

    assert run_together(resubmit, 6) == []
    assert len(events_of(service, "newsletter.signup")) == 2  # the signup and ONE resend
