"""Settings → list source and outbox, Settings → platform connection (with its test against a
real local TLS receiver) and the audit log, over HTTP: each act CSRF-checked, audited without
its secret, post/redirect/get, and bad input shown again with a clear message."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from click.testing import CliRunner

from newsletter_connector import hookimpl
from newsletter_connector.cli import cli
from newsletter_connector.descriptors import OutboundTransport
from newsletter_connector.service import NewsletterService
from newsletter_connector.service.admin import ListSourceStatus
from newsletter_connector.service.events import queue_event
from newsletter_connector.sync.runner import SyncRunner
from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL as BASE
from newsletter_connector.web.admin.gate import COOKIE_NAME
from tests.support import sync_payloads
from tests.support.admin import (
    PASSWORD,
    T0,
    audit_acts,
    csrf_token,
    followed,
    get_page,
    post_form,
    submit,
    without_token,
)
from tests.support.tls_receiver import TlsReceiver

LIST_KEY = "list-source-key-0123"
TOKEN = "platform-token-0123456789"
SETTINGS = "/admin/settings"
CONNECTION = "/admin/settings/connection"
NEW_POSTS = (
    "/admin/settings/list-source",
    "/admin/settings/list-source/off",
    "/admin/settings/outbox/retry-now",
    "/admin/settings/outbox/replay",
    "/admin/settings/connection",
    "/admin/settings/connection/disable",
    "/admin/settings/connection/test",
)


@pytest.fixture
def receiver(tmp_path: Any) -> Iterator[TlsReceiver]:
    server = TlsReceiver(tmp_path)
    yield server
    server.close()


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any, receiver: TlsReceiver) -> Any:
    settings = newsletter_settings.model_copy(update={"ca_bundle": str(receiver.ca_file)})
    return NewsletterService.build(settings, storage=newsletter_storage, clock=lambda: T0)


def _act(client: Any, path: str, session: str, fields: dict[str, str]) -> Any:
    """Post ``fields`` to ``path`` with the CSRF token of the settings page's forms."""
    return submit(client, path, session, fields, form=SETTINGS)


def _assert_nowhere(secret: str, service: Any, caplog: Any, *pages: Any) -> None:
    for page in pages:
        assert secret not in page.text
        assert all(secret not in value for value in page.headers.values())
    assert secret not in caplog.text
    assert all(secret not in repr(act) for act in service.admin_audit.latest(50))


# -- off until configured -----------------------------------------------------------------------


@pytest.mark.parametrize("path", (SETTINGS, CONNECTION, "/admin/audit", *NEW_POSTS))
def test_the_new_pages_are_the_unknown_path_404_until_configured(client: Any, path: str) -> None:
    unknown = client.simulate_get("/no-such-path")
    for method in ("GET", "POST"):
        result = client.simulate_request(method, path)
        assert (result.status_code, result.text) == (404, unknown.text)


def test_signed_out_visitors_are_sent_to_the_login_page(client: Any, service: Any) -> None:
    service.admin_access.create_user("ada", PASSWORD)
    for path in (SETTINGS, CONNECTION, "/admin/audit"):
        result = client.simulate_get(path)
        assert result.status_code == 303 and result.headers["location"].endswith("/admin/login")


# -- list source ----------------------------------------------------------------------------


def test_list_source_turned_on_shown_with_its_user_then_off(
    client: Any, service: Any, session: str, caplog: Any
) -> None:
    caplog.set_level(logging.DEBUG)
    page = get_page(client, SETTINGS, session)
    assert page.status_code == 200 and "Off: every list-source request is answered 404" in page.text
    result = _act(
        client, "/admin/settings/list-source", session, {"user": "platform", "key": LIST_KEY}
    )
    shown = followed(client, result, session)
    assert "List-source surface on for user &#39;platform&#39;." in shown.text
    assert "On, for user <strong>platform</strong>" in shown.text
    assert service.admin.verify_listsource_credentials("platform", LIST_KEY) is True
    assert audit_acts(service)[0] == ("listsource.set", "platform")
    _assert_nowhere(LIST_KEY, service, caplog, result, shown)

    off = followed(client, _act(client, "/admin/settings/list-source/off", session, {}), session)
    assert "List-source surface turned off." in off.text and "Off: every" in off.text
    assert service.admin.listsource_status().enabled is False
    assert audit_acts(service)[0] == ("listsource.disable", "turned off")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"user": "platform", "key": "short"}, "Key: it must be at least 12 characters long"),
        (
            {"user": "bad:user", "key": LIST_KEY},
            "User name: it is required, and may hold no spaces or colons",
        ),
        ({"user": "", "key": LIST_KEY}, "User name: it is required"),
    ],
    ids=["short-key", "colon-user", "blank-user"],
)
def test_bad_list_source_credentials_are_shown_again_with_the_reason(
    client: Any, service: Any, session: str, fields: dict[str, str], message: str
) -> None:
    result = _act(client, "/admin/settings/list-source", session, fields)
    assert result.status_code == 400 and message in result.text
    assert "must be non-blank" not in result.text and "key must" not in result.text
    assert 'role="alert"' in result.text
    assert (
        f'id="user" name="user" type="text" required autocomplete="off" value="{fields["user"]}"'
        in result.text
    )
    assert fields["key"] not in result.text
    assert service.admin.listsource_status().enabled is False
    assert [action for action, _ in audit_acts(service)] == ["login"]


# -- outbox ---------------------------------------------------------------------------------


def _waiting_and_failed(service: Any) -> tuple[str, str]:
    with service.storage.transaction() as uow:
        for n in range(3):
            queue_event(uow, service.context, "contact.message", {"n": n})
    before = T0 - timedelta(minutes=5)
    with service.storage.transaction() as uow:
        waiting, failed = uow.outbox.claim_batches(
            now=before, lease_until=before + timedelta(minutes=1), batch_size=1, max_batches=2
        )
        uow.outbox.schedule_retry(
            waiting.id, error="HTTP 503", next_attempt_at=T0 + timedelta(hours=6)
        )
        uow.outbox.mark_failed(failed.id, error="HTTP 400 from POST /v1/events", at=before)
    return waiting.id, failed.id


def _state(service: Any, batch_id: str) -> tuple[str, int, Any]:
    with service.storage.transaction(write=False) as uow:
        batch = uow.outbox.get_batch(batch_id)
    return batch.state, batch.attempts, batch.next_attempt_at


def test_outbox_counts_retry_now_and_replay(client: Any, service: Any, session: str) -> None:
    waiting, failed = _waiting_and_failed(service)
    page = get_page(client, SETTINGS, session)
    assert '<td id="outbox-unbatched">1 event(s)</td>' in page.text
    assert '<td id="outbox-waiting">1</td>' in page.text
    assert '<td id="outbox-failed">1 (1 event(s))</td>' in page.text
    last_error = service.admin.outbox_status().last_error
    assert last_error in ("HTTP 503", "HTTP 400 from POST /v1/events")
    assert f"<td>{last_error}</td>" in page.text

    retried = followed(
        client, _act(client, "/admin/settings/outbox/retry-now", session, {}), session
    )
    assert "1 batch(es) waiting for a retry are due now" in retried.text
    assert _state(service, waiting) == ("pending", 1, T0)
    assert _state(service, failed)[0] == "failed"
    assert audit_acts(service)[0] == ("outbox.retry_now", "1 batch(es)")

    replayed = followed(client, _act(client, "/admin/settings/outbox/replay", session, {}), session)
    assert "1 failed batch(es) replayed with a fresh retry ladder" in replayed.text
    assert _state(service, failed) == ("pending", 0, T0)
    assert '<td id="outbox-failed">0 (0 event(s))</td>' in replayed.text
    assert audit_acts(service)[0] == ("outbox.replay", "1 failed batch(es)")


def test_replay_of_one_batch_names_what_is_wrong(service: Any) -> None:
    waiting, failed = _waiting_and_failed(service)
    with pytest.raises(Exception, match="not failed; only failed batches replay"):
        service.admin.replay_failed_batches(waiting)
    with pytest.raises(Exception, match="no batch with id 'nope'"):
        service.admin.replay_failed_batches("nope")
    assert service.admin.replay_failed_batches(failed) == 1


# -- platform connection --------------------------------------------------------------------


def _set_connection(client: Any, session: str, base: str, **fields: str) -> Any:
    form = {"platform_base": base, "transport": "events", "token": TOKEN, **fields}
    return _act(client, CONNECTION, session, form)


def test_a_connection_is_set_shown_without_its_token_and_disabled(
    client: Any, service: Any, session: str, receiver: TlsReceiver, caplog: Any
) -> None:
    caplog.set_level(logging.DEBUG)
    empty = get_page(client, CONNECTION, session)
    assert "No connection: nothing is pushed" in empty.text
    assert '<option value="events" selected>' in empty.text
    assert '<option value="platform"' in empty.text
    result = _set_connection(client, session, receiver.base + "/")
    shown = followed(client, result, session)
    assert f"Connection set: {receiver.base} via events." in shown.text
    assert f"<code>{receiver.base}</code>" in shown.text and "Set (not shown)" in shown.text
    record = service.admin.connection()
    assert (record.platform_base, record.transport, record.token) == (
        receiver.base,
        "events",
        TOKEN,
    )
    assert audit_acts(service)[0] == ("connection.set", f"{receiver.base} via events")
    _assert_nowhere(TOKEN, service, caplog, result, shown)

    off = followed(client, _act(client, "/admin/settings/connection/disable", session, {}), session)
    assert "Connection disabled." in off.text and "No connection" in off.text
    assert service.admin.connection() is None
    assert audit_acts(service)[0] == ("connection.disable", "disabled")


@pytest.mark.parametrize(
    ("base", "fields", "message"),
    [
        ("http://mail.example.org", {}, "platform_base must be an absolute https:// URL"),
        ("https://[broken", {}, "platform_base is not a valid URL"),
        ("https://mail.example.org:99999", {}, "platform_base is not a valid URL"),
        ("https://mail.example.org", {"token": "short"}, "token must be at least 16 characters"),
        ("https://mail.example.org", {"transport": "pigeon"}, "unknown outbound transport"),
        (
            "https://mail.example.org",
            {"token": "t\u00f6ken-1234567890abcdef"},
            "token must be at least 16 characters of printable ASCII",
        ),
    ],
    ids=["http", "unparsable", "bad-port", "short-token", "unknown-transport", "non-ascii"],
)
def test_a_bad_connection_is_shown_again_with_the_reason(
    client: Any, service: Any, session: str, base: str, fields: dict[str, str], message: str
) -> None:
    result = _set_connection(client, session, base, **fields)
    assert result.status_code == 400 and message in result.text, result.text
    assert 'role="alert"' in result.text and fields.get("token", TOKEN) not in result.text
    assert service.admin.connection() is None
    assert [action for action, _ in audit_acts(service)] == ["login"]


def test_credentials_in_the_address_are_refused_and_never_shown_again(
    client: Any, service: Any, session: str
) -> None:
    result = _set_connection(client, session, "https://user:hunter2pass@mail.example.org")
    assert result.status_code == 400 and "must not carry a user name or password" in result.text
    assert "hunter2pass" not in result.text
    assert 'value="https://mail.example.org"' in result.text


def test_the_connection_test_reaches_the_receiver_with_an_empty_batch(
    client: Any, service: Any, session: str, receiver: TlsReceiver, caplog: Any
) -> None:
    caplog.set_level(logging.DEBUG)
    _set_connection(client, session, receiver.base)
    result = _act(client, "/admin/settings/connection/test", session, {})
    shown = followed(client, result, session)
    expected = f"reachable: HTTP 200 from {receiver.base}/v1/events"
    assert f"Connection test: {expected}." in shown.text
    [request] = receiver.received
    assert (request.path, request.body) == ("/v1/events", [])
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert audit_acts(service)[0] == ("connection.test", expected)
    _assert_nowhere(TOKEN, service, caplog, result, shown)


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("500", "not reachable: HTTP 500 from"),
        ("302", "(a redirect; pushes never follow redirects)"),
    ],
)
def test_the_connection_test_names_a_refusal(
    service: Any, receiver: TlsReceiver, action: str, expected: str
) -> None:
    service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)
    receiver.script = [action]
    check = service.admin.test_connection()
    assert not check.reachable and expected in check.message and TOKEN not in check.message


def test_the_connection_test_names_an_untrusted_certificate(
    newsletter_settings: Any, newsletter_storage: Any, receiver: TlsReceiver, monkeypatch: Any
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    service = NewsletterService.build(newsletter_settings, storage=newsletter_storage)
    service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)
    check = service.admin.test_connection()
    assert not check.reachable and "TLS certificate is not trusted" in check.message
    assert receiver.received == []


def test_the_connection_test_names_a_closed_port(service: Any, receiver: TlsReceiver) -> None:
    base = receiver.base
    receiver.close()
    service.admin.set_connection(platform_base=base, transport="events", token=TOKEN)
    check = service.admin.test_connection()
    assert not check.reachable and check.message.startswith(f"not reachable: {base}/v1/events:")
    assert "could not connect" in check.message


def test_a_transport_without_a_test_says_so(service: Any) -> None:
    service.admin.set_connection(
        platform_base="https://mail.example.org", transport="platform", token=TOKEN
    )
    check = service.admin.test_connection()
    assert not check.reachable
    assert check.message.startswith("the 'platform' transport cannot be tested from here")


class _RelayTransports:
    """A third-party transport that says where a connection test may knock."""

    def __init__(self, check_path: str | None) -> None:
        self.check_path = check_path

    @hookimpl
    def newsletter_outbound_transports(self) -> list[OutboundTransport]:
        return [
            OutboundTransport(
                name="relay", description="a relay", factory=object, check_path=self.check_path
            )
        ]


def test_a_third_party_transport_is_tested_where_its_descriptor_says(
    service: Any, newsletter_storage: Any, receiver: TlsReceiver
) -> None:
    relay = NewsletterService.build(
        service.context.settings,
        plugins=[_RelayTransports("/relay/ping")],
        storage=newsletter_storage,
        clock=lambda: T0,
    )
    relay.admin.set_connection(platform_base=receiver.base, transport="relay", token=TOKEN)
    check = relay.admin.test_connection()
    assert (
        check.reachable and check.message == f"reachable: HTTP 200 from {receiver.base}/relay/ping"
    )
    [request] = receiver.received
    assert request.path == "/relay/ping" and request.body == []
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"


def test_a_third_party_transport_without_a_check_path_is_not_tested(
    service: Any, newsletter_storage: Any, receiver: TlsReceiver
) -> None:
    relay = NewsletterService.build(
        service.context.settings, plugins=[_RelayTransports(None)], storage=newsletter_storage
    )
    relay.admin.set_connection(platform_base=receiver.base, transport="relay", token=TOKEN)
    check = relay.admin.test_connection()
    assert not check.reachable
    assert check.message.startswith("the 'relay' transport cannot be tested from here")
    assert receiver.received == []


def test_testing_without_a_connection_says_there_is_none(
    client: Any, service: Any, session: str
) -> None:
    token = csrf_token(get_page(client, CONNECTION, session))
    result = post_form(
        client,
        "/admin/settings/connection/test",
        {"csrf_token": token},
        cookies={COOKIE_NAME: session},
    )
    assert result.status_code == 400 and "no connection is configured" in result.text
    assert [action for action, _ in audit_acts(service)] == ["login"]


def _cli_env(settings: Any, receiver: TlsReceiver) -> dict[str, str]:
    """The environment of a CLI run on the test database that trusts ``receiver``'s CA."""
    return {
        "NEWSLETTER_DATABASE_URL": settings.database_url,
        "NEWSLETTER_SITE_SECRET": "cli-test-secret",
        "NEWSLETTER_CA_BUNDLE": str(receiver.ca_file),
        "NEWSLETTER_CONFIG": "",
    }


def test_the_cli_twin_tests_the_connection(
    newsletter_settings: Any, service: Any, receiver: TlsReceiver
) -> None:
    env = _cli_env(newsletter_settings, receiver)
    none = CliRunner().invoke(cli, ["connection", "test"], env=env)
    assert none.exit_code == 1 and "no connection is configured" in none.stderr
    service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)
    ok = CliRunner().invoke(cli, ["connection", "test"], env=env)
    assert ok.exit_code == 0, ok.output
    assert ok.stdout == f"reachable: HTTP 200 from {receiver.base}/v1/events\n"
    receiver.script = ["500"]
    refused = CliRunner().invoke(cli, ["connection", "test"], env=env)
    assert refused.exit_code == 1 and "not reachable: HTTP 500" in refused.stderr
    assert TOKEN not in refused.output + ok.output


# -- audit log ------------------------------------------------------------------------------


def test_the_audit_log_pages_newest_first_by_id(client: Any, service: Any, session: str) -> None:
    for n in range(60):
        service.admin_audit.record("bob", "api_key.create", f"key-{n:02d}")
    first = get_page(client, "/admin/audit", session)
    assert first.status_code == 200
    assert first.text.index("key-59") < first.text.index("key-58")
    assert "key-10" in first.text and "key-09" not in first.text
    older = service.admin_audit.latest(50)[-1].id
    assert f'href="{BASE}/admin/audit?before={older}"' in first.text
    second = get_page(client, f"/admin/audit?before={older}", session)
    assert "key-09" in second.text and "key-00" in second.text and "key-10" not in second.text
    assert ">login<" in second.text.replace("<code>", ">").replace("</code>", "<")
    assert "Older acts" not in second.text and "Newest acts" in second.text


@pytest.mark.parametrize(
    "before", ["abc", "-1", "0", "9" * 40, "\u00b2", "%C2%B2", "9223372036854775808", "+5"]
)
def test_a_bad_audit_page_is_a_clear_400(client: Any, session: str, before: str) -> None:
    result = get_page(client, f"/admin/audit?before={before}", session)
    assert result.status_code == 400 and "before must be a positive whole number" in result.text


def test_no_secret_reaches_the_audit_log_page(
    client: Any, service: Any, session: str, receiver: TlsReceiver
) -> None:
    _act(client, "/admin/settings/list-source", session, {"user": "platform", "key": LIST_KEY})
    _set_connection(client, session, receiver.base)
    _act(client, "/admin/settings/connection/test", session, {})
    page = get_page(client, "/admin/audit", session)
    assert "listsource.set" in page.text and "connection.test" in page.text
    assert LIST_KEY not in page.text and TOKEN not in page.text


# -- CSRF -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", NEW_POSTS)
@without_token
def test_the_new_forms_without_their_token_change_nothing(
    client: Any,
    service: Any,
    session: str,
    receiver: TlsReceiver,
    path: str,
    fields: dict[str, str],
    headers: dict[str, str],
) -> None:
    service.admin.set_listsource_credentials("platform", LIST_KEY)
    service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)
    token = csrf_token(get_page(client, SETTINGS, session))
    form = {"csrf_token": token, "user": "other", "key": "another-key-0123"}
    form.update(platform_base="https://other.example", transport="events", token="x" * 20)
    result = post_form(
        client, path, {**form, **fields}, cookies={COOKIE_NAME: session}, headers=headers
    )
    assert result.status_code == 403 and "nothing was changed" in result.text
    assert service.admin.listsource_status().user == "platform"
    assert service.admin.connection().platform_base == receiver.base
    assert receiver.received == []
    assert [action for action, _ in audit_acts(service)] == ["login"]


def test_credentials_stored_without_the_user_name_show_as_not_recorded(
    client: Any, service: Any, session: str
) -> None:
    service.admin.set_listsource_credentials("platform", LIST_KEY)
    with service.storage.transaction() as uow:
        stored = uow.settings.get("listsource_credentials")
        del stored["user"]
        uow.settings.put("listsource_credentials", stored, at=T0)
    assert service.admin.listsource_status() == ListSourceStatus(enabled=True, user=None)
    assert (
        "On, for user <strong>(name not recorded)</strong>"
        in get_page(client, SETTINGS, session).text
    )
    assert service.admin.verify_listsource_credentials("platform", LIST_KEY) is True


def test_turning_off_an_off_list_source_says_so(client: Any, service: Any, session: str) -> None:
    off = followed(client, _act(client, "/admin/settings/list-source/off", session, {}), session)
    assert "List-source surface already off." in off.text
    assert audit_acts(service)[0] == ("listsource.disable", "already off")


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ("http://{host}", "not tested: http://{host}/v1/events is not https"),
        ("https://u:secretpass@{host}", "not tested: the address https://{host}/v1/events carries"),
    ],
    ids=["http", "credentials"],
)
def test_an_address_the_runner_would_not_use_is_not_tested(
    service: Any, receiver: TlsReceiver, stored: str, expected: str
) -> None:
    host = receiver.base.removeprefix("https://")
    with service.storage.transaction() as uow:
        uow.connections.replace(
            platform_base=stored.format(host=host), transport="events", token=TOKEN, at=T0
        )
    check = service.admin.test_connection()
    assert not check.reachable and check.message.startswith(expected.format(host=host))
    assert "secretpass" not in check.message and receiver.received == []


def test_a_stored_token_no_header_can_carry_is_named_not_sent(
    newsletter_settings: Any, service: Any, receiver: TlsReceiver, caplog: Any
) -> None:
    """A connection stored while only whitespace was refused in a token."""
    with service.storage.transaction() as uow:
        uow.connections.replace(
            platform_base=receiver.base, transport="events", token="t\u00f6ken" * 4, at=T0
        )
        queue_event(uow, service.context, "contact.message", sync_payloads.message())
    env = _cli_env(newsletter_settings, receiver)
    tested = CliRunner().invoke(cli, ["connection", "test"], env=env)
    assert tested.exit_code == 1 and "an HTTP header cannot carry" in tested.stderr
    caplog.set_level(logging.DEBUG)
    settings = newsletter_settings.model_copy(update={"ca_bundle": str(receiver.ca_file)})
    runner_service = NewsletterService.build(settings, storage=service.storage)
    report = SyncRunner(runner_service, periodic_tasks=[]).run_once()
    assert report.delivered_events == 0 and receiver.received == []
    assert "an HTTP header cannot carry" in caplog.text and "\u00f6" not in caplog.text
