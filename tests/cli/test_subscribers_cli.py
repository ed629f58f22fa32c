"""``newsletter-connector subscribers show|bounce|unsubscribe|resend-confirmation``, through
click's runner against the test database."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from newsletter_connector.cli import cli
from newsletter_connector.json_encoding import json_values
from tests.support.analytics_helpers import connect
from tests.support.subscriber_helpers import outbox

CONSENT = {"source": "import", "collected_at": "2026-02-01T10:00:00Z"}


@pytest.fixture
def run(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": newsletter_settings.base_url,
        "NEWSLETTER_SITE_SECRET": newsletter_settings.site_secret.get_secret_value(),
        "NEWSLETTER_CONFIG": "",
    }

    def invoke(*args: str, **more_env: str) -> Any:
        return CliRunner().invoke(cli, list(args), env={**env, **more_env}, catch_exceptions=False)

    return invoke


def _types(service: Any) -> list[str]:
    return [event["type"] for event in outbox(service)]


def test_show_prints_the_api_contact_with_tokens_hidden(run: Any, newsletter_service: Any) -> None:
    record = newsletter_service.subscribers.subscribe({"email": "ann@example.org"}).record
    result = run("subscribers", "show", "Ann@Example.org")
    assert result.exit_code == 0, result.output
    printed, _, rest = result.output.partition("\n}\n")
    contact = json.loads(printed + "\n}")
    expected = json_values(newsletter_service.subscribers.contact(record))
    assert contact.keys() == expected.keys()
    for name in ("confirm_url", "unsubscribe_url", "profile_url"):
        assert contact[name].endswith("/<token hidden>")
        assert contact[name].rsplit("/", 1)[0] == expected[name].rsplit("/", 1)[0]
    for token in (record.confirm_token, record.unsubscribe_token, record.profile_token):
        assert token not in result.output
    assert {k: v for k, v in contact.items() if not k.endswith("_url")} == {
        k: v for k, v in expected.items() if not k.endswith("_url")
    }
    assert rest == "platform reports: none\n"


def test_show_lists_what_the_platform_reported(run: Any, newsletter_service: Any) -> None:
    newsletter_service.subscribers.subscribe({"email": "b@example.org", "consent": CONSENT})
    connect(newsletter_service)
    newsletter_service.feedback.apply(
        [
            {
                "id": "fb-1",
                "type": "bounce",
                "email": "b@example.org",
                "occurred_at": "2026-11-25T08:00:00Z",
                "reason": "550 5.1.1 user unknown",
            }
        ]
    )
    result = run("subscribers", "show", "b@example.org")
    assert '"status": "bounced"' in result.output
    assert "2026-11-25T08:00:00Z bounce (550 5.1.1 user unknown): bounced" in result.output


def test_show_of_an_unknown_or_suppressed_address_exits_1(
    run: Any, newsletter_service: Any
) -> None:
    unknown = run("subscribers", "show", "nobody@example.org")
    assert unknown.exit_code == 1
    assert unknown.output == "error: no subscriber with that address\n"
    newsletter_service.feedback.apply(
        [
            {
                "id": "fb-1",
                "type": "complaint",
                "email": "spam@example.org",
                "occurred_at": "2026-11-25T08:00:00Z",
            }
        ]
    )
    suppressed = run("subscribers", "show", "spam@example.org")
    assert suppressed.exit_code == 1
    assert "complaint on 2026-11-25T08:00:00Z" in suppressed.output
    assert "adding it stores it as unsubscribed" in suppressed.output
    bad = run("subscribers", "show", "not-an-address")
    assert bad.exit_code == 1
    assert "email is not a valid email address" in bad.output


def test_bounce_moves_a_confirmed_subscriber_once(run: Any, newsletter_service: Any) -> None:
    newsletter_service.subscribers.subscribe({"email": "b@example.org", "consent": CONSENT})
    first = run("subscribers", "bounce", "b@example.org")
    assert first.exit_code == 0
    assert first.output == "subscriber: confirmed -> bounced; newsletter.bounced queued\n"
    again = run("subscribers", "bounce", "b@example.org")
    assert again.output == "subscriber: already bounced; nothing changed\n"
    assert newsletter_service.subscribers.get("b@example.org").status == "bounced"
    assert _types(newsletter_service).count("newsletter.bounced") == 1
    assert "b@example.org" not in first.output + again.output


def test_unsubscribe_moves_any_status_once(run: Any, newsletter_service: Any) -> None:
    newsletter_service.subscribers.subscribe({"email": "p@example.org"})
    first = run("subscribers", "unsubscribe", "p@example.org")
    assert first.output == "subscriber: pending -> unsubscribed; newsletter.unsubscribed queued\n"
    again = run("subscribers", "unsubscribe", "p@example.org")
    assert again.output == "subscriber: already unsubscribed; nothing changed\n"
    assert _types(newsletter_service).count("newsletter.unsubscribed") == 1


def test_resend_confirmation_queues_a_signup_once_per_interval(
    run: Any, newsletter_service: Any
) -> None:
    newsletter_service.subscribers.subscribe({"email": "p@example.org"})
    soon = run("subscribers", "resend-confirmation", "P@example.org")
    assert soon.exit_code == 0
    assert soon.output == (
        "subscriber: announced less than confirmation_resend_interval ago; nothing queued\n"
    )
    assert _types(newsletter_service) == ["newsletter.signup"]
    every_time = {"NEWSLETTER_CONFIRMATION_RESEND_INTERVAL": "0"}
    queued = run("subscribers", "resend-confirmation", "p@example.org", **every_time)
    assert queued.output == "subscriber: pending; newsletter.signup queued\n"
    assert _types(newsletter_service) == ["newsletter.signup", "newsletter.signup"]
    acts = [(act.action, act.target) for act in newsletter_service.admin_audit.latest(5)]
    assert acts == [("subscriber.resend_confirmation", "p@example.org")] * 2
    newsletter_service.subscribers.unsubscribe("p@example.org")
    refused = run("subscribers", "resend-confirmation", "p@example.org", **every_time)
    assert refused.exit_code == 1
    assert refused.output == (
        "error: only a pending subscriber is sent a confirmation; this one is unsubscribed\n"
    )


@pytest.mark.parametrize("act", ["bounce", "unsubscribe", "resend-confirmation"])
def test_acts_on_an_unknown_address_exit_1_and_change_nothing(
    run: Any, newsletter_service: Any, act: str
) -> None:
    result = run("subscribers", act, "nobody@example.org")
    assert result.exit_code == 1
    assert result.output == "error: no subscriber with that address\n"
    assert _types(newsletter_service) == []
