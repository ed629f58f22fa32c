"""Per-client rate limits on the public POSTs: 429 with ``Retry-After`` and a reader page over
the limit, counts shared by every app (worker) on the database, ``X-Forwarded-For`` believed
only behind the configured number of trusted proxies, a 0 setting turning a limit off, and
neither the one-click unsubscribe, the Newsletter API nor the health probes ever refused for
volume."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

import falcon.testing
import pytest
from sqlalchemy import select

from newsletter_connector.plugins.sql_store.tables import subscribers
from newsletter_connector.service import NewsletterService
from newsletter_connector.web.app import create_app
from newsletter_connector.web.pages.csrf import COOKIE_NAME
from tests.support.analytics_helpers import Clock
from tests.support.pages_helpers import ORIGIN, open_form, path_of
from tests.support.subscriber_helpers import post as api_post

T0 = datetime(2026, 11, 23, 9, 0, 0)
CLIENT = "198.51.100.7"
OTHER = "203.0.113.9"


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
def make_client(
    newsletter_settings: Any, newsletter_storage: Any, clock: Clock
) -> Iterator[Callable[..., falcon.testing.TestClient]]:
    """A test client of a NEW app with its own service and storage engine (as a gunicorn
    worker has) on the test database, with ``settings`` changed."""
    services: list[NewsletterService] = []

    def make(**settings: Any) -> falcon.testing.TestClient:
        service = NewsletterService.build(
            type(newsletter_settings)(**{**newsletter_settings.model_dump(), **settings}),
            clock=clock,
        )
        services.append(service)
        client = falcon.testing.TestClient(create_app(service=service))
        client.service = service  # type: ignore[attr-defined]
        return client

    yield make
    for service in services:
        service.storage.close()


def signup(client: Any, email: str, remote_addr: str = CLIENT, **headers: str) -> Any:
    form = open_form(client, "/signup")
    return client.simulate_post(
        "/signup",
        body=f"email={email}&zip=&frequency=daily&csrf_token={form.token}",
        headers={"Content-Type": "application/x-www-form-urlencoded", "Origin": ORIGIN, **headers},
        cookies={COOKIE_NAME: form.cookie},
        remote_addr=remote_addr,
    )


def stored_emails(storage: Any) -> list[str]:
    with storage.engine.connect() as connection:
        return list(connection.scalars(select(subscribers.c.email).order_by(subscribers.c.id)))


def assert_refused(result: Any) -> int:
    assert result.status_code == 429, result.text[:300]
    retry_after = int(result.headers["retry-after"])
    assert 1 <= retry_after <= 60
    assert result.headers["content-type"].startswith("text/html")
    page = result.text
    assert "Please wait a moment" in page
    assert "Test News" in page and "reader.css" in page  # the reader pages' base template
    return retry_after


def test_signup_form_default_limit_is_20_a_minute_per_client(
    make_client: Callable[..., Any], newsletter_storage: Any
) -> None:
    client = make_client()
    for n in range(20):
        assert signup(client, f"r{n}@example.org").status_code == 303
    assert_refused(signup(client, "late@example.org"))
    assert "late@example.org" not in stored_emails(newsletter_storage)  # nothing changed
    # Another client address is counted apart.
    assert signup(client, "other@example.org", remote_addr=OTHER).status_code == 303


def test_the_window_ends_and_retry_after_says_when(
    make_client: Callable[..., Any], clock: Clock
) -> None:
    client = make_client(rate_limit_signup=2)
    assert signup(client, "a@example.org").status_code == 303
    clock.now = T0 + timedelta(seconds=20)
    assert signup(client, "b@example.org").status_code == 303
    assert assert_refused(signup(client, "c@example.org")) == 40  # the window began at T0
    clock.now = T0 + timedelta(seconds=60)
    assert signup(client, "c@example.org").status_code == 303


def test_two_apps_on_one_database_share_a_clients_count(
    make_client: Callable[..., Any],
) -> None:
    first, second = make_client(rate_limit_signup=4), make_client(rate_limit_signup=4)
    assert first.service.storage is not second.service.storage
    assert signup(first, "a@example.org").status_code == 303
    assert signup(second, "b@example.org").status_code == 303
    assert signup(first, "c@example.org").status_code == 303
    assert signup(second, "d@example.org").status_code == 303
    assert_refused(signup(first, "e@example.org"))
    assert_refused(signup(second, "e@example.org"))


def test_x_forwarded_for_is_ignored_without_trusted_proxies(
    make_client: Callable[..., Any],
) -> None:
    client = make_client(rate_limit_signup=3)
    for n in range(3):
        forwarded = {"X-Forwarded-For": f"192.0.2.{n}"}
        assert signup(client, f"x{n}@example.org", **forwarded).status_code == 303
    assert_refused(signup(client, "x9@example.org", **{"X-Forwarded-For": "192.0.2.99"}))


def test_x_forwarded_for_right_most_untrusted_hop_behind_one_proxy(
    make_client: Callable[..., Any],
) -> None:
    client = make_client(rate_limit_signup=2, trusted_proxies=1)
    proxy = "10.0.0.2"
    # The client puts anything it likes in front; the proxy appends the address it saw.
    for n in range(2):
        forwarded = {"X-Forwarded-For": f"192.0.2.{n}, {CLIENT}"}
        assert signup(client, f"y{n}@example.org", proxy, **forwarded).status_code == 303
    assert_refused(signup(client, "y9@example.org", proxy, **{"X-Forwarded-For": CLIENT}))
    # Another client behind the same proxy has its own count.
    assert signup(client, "z@example.org", proxy, **{"X-Forwarded-For": OTHER}).status_code == 303


def test_x_forwarded_for_behind_two_proxies(make_client: Callable[..., Any]) -> None:
    client = make_client(rate_limit_signup=1, trusted_proxies=2)
    edge, inner = "10.0.0.1", "10.0.0.2"
    chain = {"X-Forwarded-For": f"6.6.6.6, {CLIENT}, {edge}"}
    assert signup(client, "p@example.org", inner, **chain).status_code == 303
    spoofed = {"X-Forwarded-For": f"7.7.7.7, {CLIENT}, {edge}"}
    assert_refused(signup(client, "q@example.org", inner, **spoofed))
    other = {"X-Forwarded-For": f"{OTHER}, {edge}"}
    assert signup(client, "r@example.org", inner, **other).status_code == 303
    # A request that did not pass both proxies is counted by its connection's address.
    assert signup(client, "s@example.org", inner, **{"X-Forwarded-For": CLIENT}).status_code == 303
    assert_refused(signup(client, "t@example.org", inner, **{"X-Forwarded-For": OTHER}))


def test_contact_and_profile_forms_are_limited_too(
    make_client: Callable[..., Any],
) -> None:
    client = make_client(rate_limit_contact=1, rate_limit_profile=1)
    form = open_form(client, "/contact")
    fields = {"email": "c@example.org", "name": "C", "message": "Hello there"}
    assert form.post(client, "/contact", fields).status_code == 303
    assert_refused(form.post(client, "/contact", fields))
    record = client.service.subscribers.subscribe({"email": "prof@example.org"}).record
    page = path_of(client.service.subscribers.contact(record)["profile_url"])
    form = open_form(client, page)
    assert form.post(client, page, {"first_name": "Pat"}).status_code == 303
    assert_refused(form.post(client, page, {"first_name": "Pam"}))
    assert client.service.subscribers.get("prof@example.org").first_name == "Pat"


def test_a_zero_setting_turns_that_limit_off(make_client: Callable[..., Any]) -> None:
    client = make_client(rate_limit_signup=0, rate_limit_contact=1)
    for n in range(30):
        assert signup(client, f"free{n}@example.org").status_code == 303
    form = open_form(client, "/contact")
    fields = {"email": "c@example.org", "name": "C", "message": "Hello there"}
    assert form.post(client, "/contact", fields).status_code == 303
    assert_refused(form.post(client, "/contact", fields))


def test_one_click_unsubscribe_is_never_refused_for_volume(
    make_client: Callable[..., Any],
) -> None:
    client = make_client(rate_limit_signup=1, rate_limit_contact=1, rate_limit_profile=1)
    assert signup(client, "first@example.org").status_code == 303
    assert_refused(signup(client, "second@example.org"))  # this client is over its limit
    paths = []
    for n in range(30):
        record = client.service.subscribers.subscribe({"email": f"u{n}@example.org"}).record
        paths.append(path_of(client.service.subscribers.contact(record)["unsubscribe_url"]))
    for path in paths + paths:  # mail providers post for many readers, and may repeat
        result = client.simulate_post(
            path,
            body="List-Unsubscribe=One-Click",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            remote_addr=CLIENT,
        )
        assert result.status_code == 200
    assert client.service.subscribers.get("u29@example.org").status == "unsubscribed"


def test_the_newsletter_api_is_never_rate_limited(make_client: Callable[..., Any]) -> None:
    client = make_client(rate_limit_signup=1)
    assert signup(client, "first@example.org").status_code == 303
    assert_refused(signup(client, "second@example.org"))  # this client is over its limit
    key = client.service.admin.create_api_key("no-quota").key
    auth = {"Authorization": f"Bearer {key}"}
    for n in range(40):
        assert api_post(client, auth, {"email": f"api{n}@example.org"}).status_code == 201


def test_analytics_capture_has_its_own_limit(make_client: Callable[..., Any]) -> None:
    client = make_client(rate_limit_analytics=3)
    event = {"type": "pageview", "visitor_id": "v" * 16, "session_id": "s" * 16, "path": "/"}

    def collect() -> Any:
        return client.simulate_post(
            "/analytics/collect",
            body=json.dumps(event),
            headers={"Content-Type": "text/plain"},
            remote_addr=CLIENT,
        )

    for _ in range(3):
        assert collect().status_code == 204
    refused = collect()
    assert refused.status_code == 429
    assert refused.json["error"] == "rate_limited"
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    # The forms' limits are separate from analytics.
    assert signup(client, "still@example.org").status_code == 303


def test_client_addresses_are_stored_only_as_keyed_hashes(
    make_client: Callable[..., Any], newsletter_storage: Any
) -> None:
    from newsletter_connector.plugins.sql_store.tables import rate_limit_counters

    client = make_client(trusted_proxies=1)
    signup(client, "h@example.org", "10.0.0.2", **{"X-Forwarded-For": CLIENT})
    with newsletter_storage.engine.connect() as connection:
        keys = list(connection.scalars(select(rate_limit_counters.c.key)))
    assert len(keys) == 1
    assert CLIENT not in keys[0] and "10.0.0.2" not in keys[0]
    assert client.service.context.keyed_hash("rate-limit-client", CLIENT) in keys[0]


@pytest.fixture
def fresh_warning() -> Iterator[None]:
    """The untrusted-forwarding warning not yet logged, as in a fresh process."""
    from newsletter_connector.web import client_address

    client_address.forget_warning()
    yield
    client_address.forget_warning()


def forwarding_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if "X-Forwarded-For" in r.getMessage()]


def test_x_forwarded_for_without_trusted_proxies_warns_once_without_addresses(
    make_client: Callable[..., Any], caplog: pytest.LogCaptureFixture, fresh_warning: None
) -> None:
    client = make_client()
    caplog.set_level(logging.WARNING, logger="newsletter_connector")
    assert signup(client, "w0@example.org").status_code == 303
    assert forwarding_warnings(caplog) == []  # no header, no warning
    for n in range(3):
        forwarded = {"X-Forwarded-For": f"192.0.2.{n}, {OTHER}"}
        assert signup(client, f"w{n + 1}@example.org", **forwarded).status_code == 303
    [record] = forwarding_warnings(caplog)
    assert record.levelno == logging.WARNING
    message = record.getMessage()
    assert "trusted_proxies is 0" in message and "lock the admins out" in message
    assert "192.0.2." not in caplog.text and OTHER not in caplog.text and CLIENT not in caplog.text


def test_x_forwarded_for_behind_trusted_proxies_does_not_warn(
    make_client: Callable[..., Any], caplog: pytest.LogCaptureFixture, fresh_warning: None
) -> None:
    client = make_client(trusted_proxies=1)
    caplog.set_level(logging.WARNING, logger="newsletter_connector")
    forwarded = {"X-Forwarded-For": CLIENT}
    assert signup(client, "t@example.org", "10.0.0.2", **forwarded).status_code == 303
    assert forwarding_warnings(caplog) == []


def test_probes_are_never_limited_and_never_use_a_forms_quota(
    make_client: Callable[..., Any],
) -> None:
    client = make_client(rate_limit_signup=1, rate_limit_analytics=1)
    for _ in range(5):
        for path in ("/healthz", "/readyz"):
            assert client.simulate_get(path, remote_addr=CLIENT).status_code == 200
    assert signup(client, "probed@example.org").status_code == 303  # its one signup is left
    assert_refused(signup(client, "twice@example.org"))
    for path in ("/healthz", "/readyz"):  # a client over its limit is still answered
        assert client.simulate_get(path, remote_addr=CLIENT).status_code == 200
