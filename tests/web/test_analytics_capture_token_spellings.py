"""Link tokens never reach stored analytics, however they are spelled (docs/analytics.md), and
control characters never reach stored props."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from urllib.parse import quote

import pytest

from tests.support.analytics_helpers import client_for, clocked_service

T0 = datetime(2026, 5, 4, 10, 0, 0)
COLLECT = "/analytics/collect"
IDS = {"visitor_id": "v_0123456789abcdef", "session_id": "s-0123456789"}
#: Shaped as the service mints link tokens (``secrets.token_urlsafe(24)``).
TOKEN = "Q3vX9kLm2Pq7Rt4Wz8Yb1Nc5Hd6Jf0Ga"


def _encoded(text: str, layers: int) -> str:
    """``text`` with its first character percent-encoded ``layers`` times."""
    first = f"%{ord(text[0]):02X}"
    for _ in range(layers - 1):
        first = quote(first, safe="")
    return first + text[1:]


SPELLINGS = [
    f"/profile/%20{TOKEN}",
    f"/profile/%09{TOKEN}",
    f"/profile/%0A{TOKEN}",
    f"/profile;a=b/{TOKEN}",
    f"/profile/./{TOKEN}",
    f"/profile/{_encoded(TOKEN, 4)}",
    f"/{_encoded('profile', 4)}/{_encoded(TOKEN, 4)}",
    f"/{TOKEN}",
    f"/news/{TOKEN}/read",
]


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    return clocked_service(newsletter_settings, newsletter_storage, T0)[0]


@pytest.fixture
def client(service: Any) -> Any:
    return client_for(service)


def post(client: Any, body: Any) -> Any:
    return client.simulate_post(
        COLLECT, body=json.dumps(body), headers={"Content-Type": "application/json"}
    )


def stored_text(service: Any) -> str:
    events = service.analytics.events_page(0, 1000).events
    return repr([(e.path, e.referrer, e.props) for e in events])


def assert_no_token(text: str) -> None:
    assert TOKEN[1:] not in text
    assert TOKEN[:-1] not in text


def test_encoding_helper_spells_four_layers() -> None:
    assert _encoded("Q", 4) == "%25252551"


@pytest.mark.parametrize("path", SPELLINGS)
def test_a_token_in_the_path_is_redacted_in_every_spelling(
    client: Any, service: Any, path: str
) -> None:
    result = post(client, {"type": "pageview", **IDS, "path": path})
    assert result.status_code == 204, result.text
    assert "redacted" in stored_text(service)
    assert_no_token(stored_text(service))


@pytest.mark.parametrize("path", SPELLINGS)
def test_a_token_in_the_referrer_is_redacted_in_every_spelling(
    client: Any, service: Any, path: str
) -> None:
    referrer = "https://site.example" + path
    result = post(client, {"type": "pageview", **IDS, "path": "/", "referrer": referrer})
    assert result.status_code == 204, result.text
    assert_no_token(stored_text(service))


@pytest.mark.parametrize("path", SPELLINGS)
def test_a_token_in_a_link_target_is_redacted_in_every_spelling(
    client: Any, service: Any, path: str
) -> None:
    href = "https://site.example" + path
    result = post(client, {"type": "link click", **IDS, "path": "/", "href": href})
    assert result.status_code == 204, result.text
    assert_no_token(stored_text(service))


def test_a_bare_token_in_a_prop_is_redacted(client: Any, service: Any) -> None:
    result = post(client, {"type": "pageview", **IDS, "path": "/", "props": {"ref": TOKEN}})
    assert result.status_code == 204, result.text
    assert_no_token(stored_text(service))


def test_control_characters_in_props_are_dropped(client: Any, service: Any) -> None:
    result = post(
        client,
        {"type": "pageview", **IDS, "path": "/", "props": {"label": "a\x00b\x07c\nd\x9fe\u2028f"}},
    )
    assert result.status_code == 204, result.text
    (event,) = service.analytics.events_page(0, 10).events
    assert event.props == {"label": "abcdef"}
