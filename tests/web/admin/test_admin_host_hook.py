"""The admin area behind a host's own sign-in: a Flask site whose session marks its admins,
answering the ``newsletter_admin_user`` hook; the built-in login is then never used."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

import flask
import pytest
from werkzeug.middleware.dispatcher import DispatcherMiddleware

from newsletter_connector import hookimpl
from newsletter_connector.descriptors import AdminUser
from newsletter_connector.service import NewsletterService
from newsletter_connector.web.app import create_app
from tests.support.admin import PASSWORD, T0, csrf_token
from tests.support.docblocks import run_block, settings_environment


def host_site(service_for: Any, *, role: str = "owner") -> flask.Flask:
    """A Flask site with ``/login`` and ``/logout`` of its own, the newsletter app mounted at
    ``/newsletter``, and a plugin reading the site's session from the request's environ (its
    admins have ``role``)."""
    site = flask.Flask("host_site")
    site.secret_key = "host-site-secret-for-tests"

    @site.post("/login")
    def login() -> str:
        flask.session["admin"] = flask.request.form["name"]
        return "signed in"

    @site.post("/logout")
    def logout() -> str:
        flask.session.clear()
        return "signed out"

    class HostAdmins:
        @hookimpl
        def newsletter_admin_user(self, environ: dict[str, Any]) -> AdminUser | None:
            session = site.session_interface.open_session(site, flask.Request(environ))
            name = session.get("admin") if session is not None else None
            return AdminUser(name=name, role=role) if name else None

    newsletter = create_app(service=service_for(HostAdmins()))
    site.wsgi_app = DispatcherMiddleware(site.wsgi_app, {"/newsletter": newsletter})  # type: ignore[method-assign]
    return site


@pytest.fixture
def build(newsletter_settings: Any, newsletter_storage: Any, now: list[datetime]) -> Any:
    def service_for(plugin: Any, **settings: Any) -> NewsletterService:
        return NewsletterService.build(
            newsletter_settings.model_copy(update=settings),
            storage=newsletter_storage,
            plugins=[plugin],
            clock=lambda: now[0],
        )

    return service_for


@pytest.fixture
def services() -> list[NewsletterService]:
    return []


@pytest.fixture
def site(build: Any, services: list[NewsletterService]) -> flask.Flask:
    def service_for(plugin: Any) -> NewsletterService:
        services.append(build(plugin))
        return services[-1]

    return host_site(service_for)


def test_a_signed_out_visitor_is_asked_to_sign_in_to_the_site(site: flask.Flask) -> None:
    client = site.test_client()
    for path in ("/newsletter/admin", "/newsletter/admin/settings/api-keys"):
        page = client.get(path)
        assert page.status_code == 403
        assert "Sign in to the site first" in page.get_data(as_text=True)
    assert (
        client.post("/newsletter/admin/settings/api-keys", data={"label": "x"}).status_code == 403
    )


def test_a_signed_out_visitor_goes_to_the_hosts_login_when_named(build: Any) -> None:
    site = host_site(lambda plugin: build(plugin, admin_login_url="/login?next=/newsletter/admin"))
    page = site.test_client().get("/newsletter/admin")
    assert page.status_code == 303
    assert page.headers["Location"] == "/login?next=/newsletter/admin"


def test_the_built_in_login_is_not_used(site: flask.Flask, services: list[Any]) -> None:
    services[0].admin_access.create_user("ada", PASSWORD)
    client = site.test_client()
    assert client.get("/newsletter/admin/login").status_code == 403
    posted = client.post("/newsletter/admin/login", data={"username": "ada", "password": PASSWORD})
    assert posted.status_code == 403 and "newsletter_admin=" not in posted.headers.get(
        "Set-Cookie", ""
    )
    client.post("/login", data={"name": "Grace"})
    assert client.get("/newsletter/admin/login").status_code == 303


def test_a_host_admin_issues_and_revokes_keys_audited_under_their_name(
    site: flask.Flask, services: list[Any]
) -> None:
    service = services[0]
    client = site.test_client()
    client.post("/login", data={"name": "Grace"})
    home = client.get("/newsletter/admin")
    assert home.status_code == 200
    text = home.get_data(as_text=True)
    assert "<h1>Dashboard</h1>" in text and "Signed in as <strong>Grace</strong>" in text
    assert "Sign out" not in text  # the host signs its admins out
    form = client.get("/newsletter/admin/settings/api-keys")
    created = client.post(
        "/newsletter/admin/settings/api-keys",
        data={"label": "host backend", "csrf_token": csrf_token(form)},
    )
    assert created.status_code == 200 and created.headers["Cache-Control"] == "no-store"
    key = re.search(r'value="(nlk_[^"]+)"', created.get_data(as_text=True)).group(1)
    assert service.admin.authenticate_api_key(key).label == "host backend"
    [record] = service.admin.list_api_keys()
    revoke_path = f"/newsletter/admin/settings/api-keys/{record.id}/revoke"
    revoked = client.post(revoke_path, data={"csrf_token": csrf_token(client.get(revoke_path))})
    assert revoked.status_code == 303 and not service.admin.list_api_keys()[0].active
    acts = [(a.actor, a.action, a.target) for a in service.admin_audit.latest(5)]
    assert acts == [
        ("Grace", "api_key.revoke", "host backend"),
        ("Grace", "api_key.create", "host backend"),
    ]
    client.post("/logout")
    assert client.get("/newsletter/admin").status_code == 403


def test_host_admin_forms_need_a_token_signed_for_that_admin(
    site: flask.Flask, services: list[Any], now: list[datetime]
) -> None:
    service = services[0]
    client = site.test_client()
    client.post("/login", data={"name": "Grace"})
    graces = csrf_token(client.get("/newsletter/admin/settings/api-keys"))
    client.post("/login", data={"name": "Mallory"})
    path = "/newsletter/admin/settings/api-keys"
    assert client.post(path, data={"label": "a", "csrf_token": graces}).status_code == 403
    assert client.post(path, data={"label": "a", "csrf_token": "1.ab"}).status_code == 403
    assert client.post(path, data={"label": "a"}).status_code == 403
    mallorys = csrf_token(client.get(path))
    now[0] = T0 + timedelta(hours=12, seconds=1)
    assert client.post(path, data={"label": "a", "csrf_token": mallorys}).status_code == 403
    now[0] = T0 + timedelta(hours=1)
    cross = client.post(
        path, data={"label": "a", "csrf_token": mallorys}, headers={"Sec-Fetch-Site": "cross-site"}
    )
    assert cross.status_code == 403
    assert service.admin.list_api_keys() == []
    assert client.post(path, data={"label": "a", "csrf_token": mallorys}).status_code == 200


def test_the_guides_flask_host_lets_its_admins_in(
    newsletter_settings: Any, newsletter_storage: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_environment(monkeypatch, newsletter_settings)
    client = run_block("admin-flask-host")["app"].test_client()
    signed_out = client.get("/newsletter/admin")
    assert signed_out.status_code == 303 and signed_out.headers["Location"] == "/login"
    client.post("/login", data={"name": "Grace"})
    home = client.get("/newsletter/admin")
    assert home.status_code == 200 and "Signed in as <strong>Grace</strong>" in home.get_data(
        as_text=True
    )


def test_the_plugin_guides_hook_reads_the_environ() -> None:
    hook = run_block("plugin-admin-user")["newsletter_admin_user"]
    assert hook({"example.admin_name": "Grace"}) == AdminUser(name="Grace", role="editor")
    owner = {"example.admin_name": "Ada", "example.admin_is_owner": True}
    assert hook(owner) == AdminUser(name="Ada", role="owner")
    assert hook({}) is None
