"""The ASGI guide works as written (docs/mounting/asgi.md): each snippet is a FastAPI or Starlette
site with the app mounted under ``/newsletter`` through a2wsgi, driven in process by the
framework's own test client as a browser would (cookies kept, ``Origin`` sent on posts). A real
uvicorn beside a real sync process: tests/web/test_asgi_server.py."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from newsletter_connector.errors import NotFound
from newsletter_connector.web.admin.gate import COOKIE_NAME as ADMIN_COOKIE
from newsletter_connector.web.pages.csrf import COOKIE_NAME as CSRF_COOKIE
from tests.support.admin import PASSWORD
from tests.support.docblocks import run_block, settings_environment

SITE = "https://example.org"  # the docs' base_url is https://example.org/newsletter
STATUS = "/newsletter/api/newsletter/v1/status"
_TOKEN_RE = re.compile(r'name="csrf_token" value="([^"]*)"')


@pytest.fixture
def environment(
    newsletter_settings: Any, newsletter_storage: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``NEWSLETTER_*`` variables a site would set (the test database, the site secret);
    ``newsletter_storage`` empties the tables afterwards."""
    settings_environment(monkeypatch, newsletter_settings)


@pytest.fixture
def fastapi_site(environment: None) -> Iterator[dict[str, Any]]:
    namespace = run_block("mount-fastapi")
    yield namespace
    namespace["newsletter"].service.close()


def form_token(page: Any) -> str:
    match = _TOKEN_RE.search(page.text)
    assert match, "page has no csrf_token field"
    return match.group(1)


def set_cookie(response: Any, name: str) -> str:
    """The ``Set-Cookie`` header that sets ``name``."""
    (header,) = [h for h in response.headers.get_list("set-cookie") if h.startswith(name + "=")]
    return str(header)


def sign_up(client: TestClient, site: str, email: str) -> Any:
    """The signup page fetched, then its form posted back as a browser posts it."""
    page = client.get("/newsletter/signup")
    assert page.status_code == 200
    fields = {"email": email, "zip": "", "frequency": "weekly", "website": ""}
    return client.post(
        "/newsletter/signup",
        data={**fields, "csrf_token": form_token(page)},
        headers={"Origin": site},
        follow_redirects=False,
    ), page


def sign_in_admin(client: TestClient, site: str) -> Any:
    """The admin login page fetched, then posted back with its token; the answer."""
    login = client.get("/newsletter/admin/login")
    assert login.status_code == 200
    return client.post(
        "/newsletter/admin/login",
        data={"username": "ada", "password": PASSWORD, "csrf_token": form_token(login)},
        headers={"Origin": site},
        follow_redirects=False,
    )


def test_fastapi_site_serves_its_own_routes_and_the_api_under_the_prefix(
    fastapi_site: dict[str, Any], auth: dict[str, str]
) -> None:
    client = TestClient(fastapi_site["app"], base_url=SITE)
    assert 'href="/newsletter/signup"' in client.get("/").text
    assert client.get(STATUS, headers=auth).json() == {"ok": True, "version": "v1", "key": "tests"}
    refused = client.get(STATUS)
    assert refused.status_code == 401 and refused.json()["error"] == "unauthorized"
    assert client.get("/newsletter/no-such-page").status_code == 404
    assert client.get("/elsewhere").status_code == 404  # FastAPI's own 404


def test_a_reader_signs_up_through_the_fastapi_mount(fastapi_site: dict[str, Any]) -> None:
    client = TestClient(fastapi_site["app"], base_url=SITE)
    posted, page = sign_up(client, SITE, "Reader@Example.org")
    cookie = set_cookie(page, CSRF_COOKIE)
    assert "Path=/newsletter;" in cookie + ";" and "Secure" in cookie and "HttpOnly" in cookie
    assert posted.status_code == 303, posted.text
    assert posted.headers["location"] == SITE + "/newsletter/signup/thanks"
    assert "Check your email" in client.get("/newsletter/signup/thanks").text
    service = fastapi_site["newsletter"].service
    assert service.subscribers.get("reader@example.org").status == "pending"


def test_a_form_without_its_cookie_or_from_another_site_is_not_acted_upon(
    fastapi_site: dict[str, Any],
) -> None:
    client = TestClient(fastapi_site["app"], base_url=SITE)
    page = client.get("/newsletter/signup")
    fields = {"email": "x@example.org", "frequency": "weekly", "csrf_token": form_token(page)}
    foreign = client.post(
        "/newsletter/signup", data=fields, headers={"Origin": "https://evil.test"}
    )
    assert foreign.status_code == 403
    client.cookies.clear()
    expired = client.post("/newsletter/signup", data=fields, headers={"Origin": SITE})
    assert expired.status_code == 400
    with pytest.raises(NotFound):
        fastapi_site["newsletter"].service.subscribers.get("x@example.org")


def test_an_admin_signs_in_through_the_fastapi_mount(fastapi_site: dict[str, Any]) -> None:
    fastapi_site["newsletter"].service.admin_access.create_user("ada", PASSWORD)
    client = TestClient(fastapi_site["app"], base_url=SITE)
    assert client.get("/newsletter/admin", follow_redirects=False).headers["location"] == (
        SITE + "/newsletter/admin/login"
    )
    signed_in = sign_in_admin(client, SITE)
    assert signed_in.status_code == 303, signed_in.text
    cookie = set_cookie(signed_in, ADMIN_COOKIE)
    assert "Path=/newsletter/admin" in cookie and "Secure" in cookie
    home = client.get("/newsletter/admin")
    assert home.status_code == 200
    assert "<h1>Dashboard</h1>" in home.text and "Signed in as <strong>ada</strong>" in home.text
    assert client.get("/newsletter/admin/settings/api-keys").status_code == 200


def test_starlette_site_mounts_the_app(environment: None, auth: dict[str, str]) -> None:
    namespace = run_block("mount-starlette")
    try:
        client = TestClient(namespace["app"], base_url=SITE)
        assert client.get("/").text == "the host site"
        assert client.get(STATUS, headers=auth).json()["key"] == "tests"
        posted, _ = sign_up(client, SITE, "starlette@example.org")
        assert posted.headers["location"] == SITE + "/newsletter/signup/thanks"
    finally:
        namespace["newsletter"].service.close()


def test_lifespan_runs_a_background_runner_while_the_site_serves(
    environment: None, auth: dict[str, str]
) -> None:
    namespace = run_block("mount-fastapi-background-sync")
    app = namespace["app"]
    try:
        with TestClient(app, base_url=SITE) as client:  # runs the lifespan
            sync = app.state.newsletter_sync
            assert sync.running and sync.runner.service is namespace["newsletter"].service
            assert client.get(STATUS, headers=auth).json()["key"] == "tests"
        assert not sync.running  # stopped at shutdown
    finally:
        namespace["newsletter"].service.close()
