"""Signed out, every admin address answers only the way in: the redirect to the login page
(built-in login) or the host's answer (host hook), whatever the method and whether or not the
address names a page. The login page and its stylesheet are the only ones open to visitors."""

from __future__ import annotations

from typing import Any

import flask
import pytest

from newsletter_connector.service import NewsletterService
from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL as BASE
from newsletter_connector.web.admin import paths
from newsletter_connector.web.admin.door import OPEN_TO_VISITORS

from .test_admin_host_hook import host_site

PAGES = sorted(
    value for name, value in vars(paths).items() if name.isupper() and isinstance(value, str)
)
ADDRESSES = [
    *PAGES,
    "/admin/settings/api-keys/1/revoke",
    "/admin/issues/1/preview",
    "/admin/issues/x/preview",
    "/admin/no-such-page",
]
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
CLOSED = [address for address in ADDRESSES if address not in OPEN_TO_VISITORS]


def test_the_addresses_cover_every_page() -> None:
    assert len(PAGES) >= 29 and set(OPEN_TO_VISITORS) == {paths.LOGIN, paths.STYLESHEET}


@pytest.mark.parametrize("address", CLOSED)
def test_a_signed_out_visitor_is_only_sent_to_the_login(
    client: Any, service: Any, admin_user: str, address: str
) -> None:
    for method in METHODS:
        result = client.simulate_request(method, address)
        assert result.status_code == 303, (method, result.text)
        assert result.headers["location"] == BASE + paths.LOGIN
        assert "allow" not in result.headers
    assert [user.username for user in service.admin_access.list_users()] == [admin_user]
    assert service.admin_audit.latest(5) == []


def test_the_login_page_and_its_stylesheet_are_open(client: Any, admin_user: str) -> None:
    assert client.simulate_get(paths.LOGIN).status_code == 200
    assert client.simulate_get(paths.STYLESHEET).status_code == 200


@pytest.fixture
def host(newsletter_settings: Any, newsletter_storage: Any) -> flask.Flask:
    return host_site(
        lambda plugin: NewsletterService.build(
            newsletter_settings, storage=newsletter_storage, plugins=[plugin]
        )
    )


@pytest.mark.parametrize("address", CLOSED)
def test_a_host_visitor_gets_only_the_hosts_answer(host: flask.Flask, address: str) -> None:
    for method in METHODS:
        result = host.test_client().open("/newsletter" + address, method=method)
        assert result.status_code == 403, method
        assert "Allow" not in result.headers
        if method != "HEAD":
            assert "Sign in to the site first" in result.get_data(as_text=True)
