"""Signed out, every admin address answers only the way in: the redirect to the login page
(built-in login) or the host's answer (host hook), whatever the method and whether or not the
address names a page. The login page and its stylesheet are the only ones open to visitors.

Every other spelling of an admin address the router would accept (``//admin``, ``/admin//x``,
``.`` and ``..`` segments, ``%2F`` decoded to ``/``), directly, under ``mount`` and in a Flask
host, is the unknown-path 404 before any admin resource runs, whatever the method, the area on
or off and the visitor signed in or out; a percent-encoded spelling of the canonical path
(``/%61dmin``) passes the same door as the canonical one."""

from __future__ import annotations

from typing import Any

import flask
import pytest

from newsletter_connector.mounting import mount
from newsletter_connector.service import NewsletterService
from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL as BASE
from newsletter_connector.web.admin import paths
from newsletter_connector.web.admin.door import OPEN_TO_VISITORS
from newsletter_connector.web.app import create_app
from tests.support.admin import COOKIE_NAME, sign_in
from tests.web.admin.test_admin_host_hook import host_site

PAGES = sorted(
    value for name, value in vars(paths).items() if name.isupper() and isinstance(value, str)
)
ADDRESSES = [
    *PAGES,
    "/admin/settings/api-keys/1/revoke",
    "/admin/issues/1/preview",
    "/admin/imports/1",
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


def other_spellings(address: str) -> list[str]:
    """Spellings of ``address`` (``/admin/...``) falcon's router or a WSGI server would take
    for it, none of them canonical."""
    rest = address[len("/admin") :]
    return [
        "/" + address,
        "///" + address.lstrip("/"),
        "/admin//" + rest.lstrip("/"),
        "/admin/." + (rest or "/"),
        "/./admin" + rest,
        "/x/../admin" + rest,
        "/admin/.." + address,
        address + "//",
        "/%2F" + address.lstrip("/"),  # decoded to //admin by the server
    ]


#: One address of each kind: the area's root, the pages open to visitors, a page, a page with a
#: path field, a page that takes a query, and an address naming no page.
KINDS_OF_ADDRESS = [
    paths.ROOT,
    *sorted(OPEN_TO_VISITORS),
    "/admin/settings",
    "/admin/settings/api-keys/1/revoke",
    "/admin/settings/outbox/failed",
    "/admin/no-such-page",
]
SPELLINGS = sorted(
    {spelling for address in KINDS_OF_ADDRESS for spelling in other_spellings(address)}
)


def unknown_path(client: Any) -> Any:
    return client.simulate_get("/no-such-path")


def assert_unknown_path(result: Any, expected: Any, what: Any) -> None:
    assert result.status_code == 404, (what, result.status_code, result.text[:200])
    assert "allow" not in result.headers, what
    assert "set-cookie" not in result.headers, what
    if what[0] not in ("HEAD", "OPTIONS"):
        assert result.text == expected.text, what


@pytest.mark.parametrize("signed_in", [False, True], ids=["signed-out", "signed-in"])
@pytest.mark.parametrize("area", ["off", "on"])
def test_every_other_spelling_of_an_admin_address_is_the_unknown_path(
    client: Any, service: Any, area: str, signed_in: bool
) -> None:
    cookies = {}
    if area == "on":
        service.admin_access.create_user("ada", "correct horse battery")
        if signed_in:
            cookies = {COOKIE_NAME: sign_in(client)}
    elif signed_in:
        cookies = {COOKIE_NAME: "a-session-cookie-of-no-session-at-all"}
    expected = unknown_path(client)
    before = service.admin_audit.latest(5)
    for spelling in SPELLINGS:
        for method in METHODS:
            result = client.simulate_request(method, spelling, cookies=cookies)
            assert_unknown_path(result, expected, (method, spelling))
    assert service.admin_audit.latest(5) == before


def test_a_control_character_behind_a_non_canonical_admin_path_is_no_500(
    client: Any, admin_user: str
) -> None:
    """PostgreSQL cannot compare a NUL: the input check must run for every spelling."""
    cookies = {COOKIE_NAME: sign_in(client)}
    failed = "/admin/settings/outbox/failed"
    for spelling in other_spellings(failed):
        result = client.simulate_get(spelling, query_string="after=%00", cookies=cookies)
        assert result.status_code == 404, (spelling, result.text[:200])
    canonical = client.simulate_get("/%61dmin/settings/outbox/failed?after=%00", cookies=cookies)
    assert canonical.status_code == 400
    assert "after must not contain control characters" in canonical.text


def test_a_percent_encoded_canonical_admin_path_passes_the_same_door(
    client: Any, admin_user: str
) -> None:
    for method in METHODS:
        result = client.simulate_request(method, "/%61dmin/settings")
        assert result.status_code == 303, method
        assert result.headers["location"] == BASE + paths.LOGIN


def site_page(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"the site"]


@pytest.mark.parametrize("area", ["off", "on"])
def test_other_spellings_under_a_mount_prefix_are_the_unknown_path(service: Any, area: str) -> None:
    import falcon.testing

    newsletter = create_app(service=service)
    site = falcon.testing.TestClient(mount("/newsletter", newsletter, site_page))
    cookies = {}
    if area == "on":
        service.admin_access.create_user("ada", "correct horse battery")
        direct = falcon.testing.TestClient(newsletter)
        cookies = {COOKIE_NAME: sign_in(direct)}
    expected = site.simulate_get("/newsletter/no-such-path")
    for spelling in SPELLINGS:
        for method in METHODS:
            result = site.simulate_request(method, "/newsletter" + spelling, cookies=cookies)
            assert_unknown_path(result, expected, (method, spelling))


@pytest.mark.parametrize("signed_in", [False, True], ids=["signed-out", "signed-in"])
def test_other_spellings_in_a_flask_host_are_the_unknown_path(
    host: flask.Flask, signed_in: bool
) -> None:
    client = host.test_client()
    if signed_in:
        client.post("/login", data={"name": "Grace"})
        assert client.get("/newsletter/admin/settings").status_code == 200
    for spelling in SPELLINGS:
        for method in METHODS:
            result = client.open("/newsletter" + spelling, method=method)
            assert result.status_code == 404, (method, spelling, result.status_code)
            assert "Allow" not in result.headers, (method, spelling)


def test_a_page_behind_no_door_is_an_error_not_an_open_page() -> None:
    """Pages take the admin the door found; reached without it they fail loudly."""
    import falcon.testing

    from newsletter_connector.web.admin.gate import signed_in

    with pytest.raises(RuntimeError, match="/admin/settings reached without the admin door"):
        signed_in(falcon.testing.create_req(path="/admin/settings"))
