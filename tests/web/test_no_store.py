"""Tokens are not cached: every Newsletter API, list-source and export response is
``Cache-Control: no-store``, errors included, under any mount prefix.

Contacts carry the unsubscribe, profile and confirm URLs (tokens); the routes walked come from
falcon's router (``route_walk.app_routes``), so a new route under those prefixes is covered.
"""

from __future__ import annotations

import base64
from typing import Any

import falcon.testing
import pytest

from newsletter_connector import NewsletterService, create_app
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.web.paths import surface_of
from tests.support.analytics_helpers import connect
from tests.support.route_walk import app_routes, call, sink_paths

EMAIL = "cached@example.org"
USER, KEY = "platform", "listsource-key-0123456789"
NO_STORE_SURFACES = {"newsletter", "listsource", "export"}


@pytest.fixture
def setup(newsletter_service: Any) -> dict[str, Any]:
    service = newsletter_service
    service.admin.set_listsource_credentials(USER, KEY)
    service.subscribers.subscribe({"email": EMAIL})
    basic = base64.b64encode(f"{USER}:{KEY}".encode()).decode()
    return {
        "app": create_app(service=service),
        "auth": {
            "newsletter": {"Authorization": f"Bearer {service.admin.create_api_key('c').key}"},
            "listsource": {"Authorization": f"Basic {basic}"},
            "export": connect(service),
        },
    }


def _paths(app: Any) -> list[tuple[str, tuple[str, ...]]]:
    """(path, methods) for every route of the no-store surfaces."""
    paths = []
    for route in app_routes(app):
        if surface_of(route.template) not in NO_STORE_SURFACES:
            continue
        if route.sink:
            paths += [(path, route.methods) for path in sink_paths(app, route.template)]
        else:
            path = route.template.replace("{email:path}", EMAIL.replace("@", "%40"))
            paths.append((path, route.methods))
    return paths


@pytest.mark.parametrize("root_path", ["", "/newsletter"])
@pytest.mark.parametrize("credentials", ["valid", "none", "wrong"])
def test_every_response_of_the_token_surfaces_is_no_store(
    setup: dict[str, Any], root_path: str, credentials: str
) -> None:
    app = setup["app"]
    paths = _paths(app)
    assert {surface_of(path) for path, _ in paths} == NO_STORE_SURFACES
    statuses: set[int] = set()
    missing = []
    for path, methods in paths:
        headers = {
            "valid": setup["auth"][surface_of(path)],
            "none": {},
            "wrong": {"Authorization": "Bearer nlk_wrong-key-0123456789"},
        }[credentials]
        for method in methods:
            for query in ("", "limit=0"):
                answer = call(app, method, path, query=query, headers=headers, root_path=root_path)
                statuses.add(answer.status)
                if answer.headers.get("cache-control") != "no-store":
                    missing.append(f"{answer.status} {method} {root_path}{path}?{query}")
    assert missing == []
    assert {200, 400, 401, 404, 405} & statuses
    # Only those surfaces: the capture script and the stylesheet keep their public caching.
    for path in ("/analytics.js", "/assets/reader.css"):
        assert call(app, "GET", path).headers["cache-control"] == "public, max-age=3600"


def test_a_503_of_the_token_surfaces_is_no_store(newsletter_settings: Any) -> None:
    settings = newsletter_settings.model_copy(
        update={"database_url": "postgresql://nobody@127.0.0.1:9/none"}
    )
    storage = SqlStorage(make_engine(settings.database_url, connect_args={"connect_timeout": 2}))
    service = NewsletterService.build(settings, storage=storage)
    try:
        client = falcon.testing.TestClient(create_app(service=service))
        bearer = {"Authorization": "Bearer nlk_some-key-value"}
        for path, headers in (
            ("/api/newsletter/v1/subscribers", bearer),
            ("/api/listsource/api/health", {"Authorization": "token platform:key"}),
        ):
            result = client.simulate_get(path, headers=headers)
            assert result.status_code == 503
            assert result.headers["cache-control"] == "no-store"
    finally:
        service.close()
