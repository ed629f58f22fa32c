"""An API key's last day of use: recorded by authentication once a day per process, and shown
by `keys list` and the admin API keys page."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

import pytest
from click.testing import CliRunner

from newsletter_connector.cli import cli
from tests.support.admin import PASSWORD, get_page, sign_in
from tests.support.analytics_helpers import client_for, clocked_service

NOW = datetime(2026, 11, 25, 9, 30)
STATUS = "/api/newsletter/v1/status"


@pytest.fixture
def clocked(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    return clocked_service(newsletter_settings, newsletter_storage, NOW)


def _last_used(service: Any, label: str) -> date | None:
    return {k.label: k.last_used_on for k in service.admin.list_api_keys()}[label]


def test_a_request_records_the_day_and_later_requests_that_day_write_nothing(
    clocked: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    service, clock = clocked
    key = service.admin.create_api_key("platform").key
    unused = service.admin.create_api_key("unused")
    client = client_for(service)
    headers = {"Authorization": f"Bearer {key}"}
    assert client.simulate_get(STATUS, headers=headers).status_code == 200
    assert _last_used(service, "platform") == NOW.date()
    assert _last_used(service, "unused") is None and unused.record.last_used_on is None

    writes: list[date] = []
    record_use = service.storage.record_api_key_use

    def counting(key_id: int, *, on: date) -> None:
        writes.append(on)
        record_use(key_id, on=on)

    monkeypatch.setattr(service.storage, "record_api_key_use", counting)
    for _ in range(3):
        assert client.simulate_get(STATUS, headers=headers).status_code == 200
    assert writes == []  # the same day: no write
    clock.now = NOW + timedelta(days=1)
    for _ in range(2):
        assert client.simulate_get(STATUS, headers=headers).status_code == 200
    assert writes == [NOW.date() + timedelta(days=1)]
    monkeypatch.undo()
    assert _last_used(service, "platform") == NOW.date() + timedelta(days=1)


def test_a_refused_key_records_nothing(clocked: Any) -> None:
    service, _ = clocked
    record = service.admin.create_api_key("revoked").record
    key = service.admin.create_api_key("kept").key
    service.admin.revoke_api_key("revoked")
    client = client_for(service)
    assert (
        client.simulate_get(STATUS, headers={"Authorization": "Bearer nlk_wrong"}).status_code
        == 401
    )
    assert _last_used(service, "revoked") is None and record.id
    assert _last_used(service, "kept") is None
    assert (
        client.simulate_get(STATUS, headers={"Authorization": f"Bearer {key}"}).status_code == 200
    )


def test_keys_list_shows_the_last_day_of_use(clocked: Any, newsletter_settings: Any) -> None:
    service, _ = clocked
    key = service.admin.create_api_key("platform").key
    service.admin.create_api_key("spare")
    service.admin.authenticate_api_key(key)
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_SITE_SECRET": newsletter_settings.site_secret.get_secret_value(),
        "NEWSLETTER_CONFIG": "",
    }
    result = CliRunner().invoke(cli, ["keys", "list"], env=env, catch_exceptions=False)
    lines = {line.split("\t")[1]: line for line in result.output.splitlines()}
    assert f"last used {NOW.date().isoformat()}" in lines["platform"]
    assert "never used" in lines["spare"]


def test_the_admin_api_keys_page_shows_the_last_day_of_use(clocked: Any) -> None:
    service, _ = clocked
    key = service.admin.create_api_key("platform").key
    service.admin.create_api_key("spare")
    service.admin.authenticate_api_key(key)
    service.admin_access.create_user("ada", PASSWORD)
    client = client_for(service)
    page = get_page(client, "/admin/settings/api-keys", sign_in(client))
    assert page.status_code == 200
    assert '<th scope="col">Last used</th>' in page.text
    rows = page.text.split("<tr>")
    platform = next(row for row in rows if '<td class="key">platform</td>' in row)
    spare = next(row for row in rows if '<td class="key">spare</td>' in row)
    assert f'<td data-label="Last used">{NOW.date().isoformat()}</td>' in platform
    assert '<td data-label="Last used">Never</td>' in spare
