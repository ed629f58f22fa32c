"""A client written for listmonk reads our campaigns from a running server (docs/listsource.md).

The server is the real thing: credentials set with the CLI, the app served by
``newsletter-connector serve`` (gunicorn) in a subprocess on a free loopback port. The client
is ``listmonk`` from PyPI (typed pydantic models of listmonk's campaign and list), driven only
through its public functions; raw responses are also validated over the wire with httpx
against models written from listmonk's Go structs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx
import httpx2
import listmonk
import pytest

from tests.support.listmonk_shapes import (
    CampaignResponse,
    CampaignsResponse,
    ErrorResponse,
    ListsResponse,
)
from tests.support.listsource_fixtures import insert_issue, insert_issues, insert_subscriber
from tests.support.servers import running

pytestmark = pytest.mark.system

USER = "platform"
KEY = "server-listsource-key:0123456789"
LIST_NAME = "Senior News Daily"
FROM = "Senior News <news@news.example.test>"


def _env(database_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    env.update(
        NEWSLETTER_DATABASE_URL=database_url,
        NEWSLETTER_SITE_SECRET="server-test-site-secret",
        NEWSLETTER_LIST_NAME=LIST_NAME,
        NEWSLETTER_FROM_ADDRESS=FROM,
    )
    return env


def _cli(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "newsletter_connector", *args],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


@pytest.fixture
def server(newsletter_database_url: str, newsletter_storage: Any) -> Iterator[str]:
    """``newsletter-connector serve`` on a free port with list-source credentials set;
    yields the list-source root ``http://127.0.0.1:PORT/api/listsource``."""
    env = _env(newsletter_database_url)
    _cli(env, "listsource", "set-credentials", "--user", USER, stdin=KEY + "\n")
    # With the development setting, serve's base URL defaults to http://<bind>, the address
    # the client uses.
    env["NEWSLETTER_ALLOW_INSECURE_HTTP_LINKS"] = "true"
    with running(["serve", "--workers", "1"], env=env, probe_path="/api/listsource/api/health") as (
        root,
        _process,
    ):
        yield f"{root}/api/listsource"


def test_listmonk_client_lists_reads_and_reads_the_list(
    server: str, newsletter_storage: Any
) -> None:
    ids = insert_issues(newsletter_storage, 104)
    weekly = insert_issue(
        newsletter_storage,
        created_at=datetime(2030, 1, 1, 12, 0),
        kind="weekly",
        subject="The week",
    )
    for status in ("confirmed", "confirmed", "pending", "unsubscribed"):
        insert_subscriber(newsletter_storage, status=status)

    listmonk.set_url_base(server)
    assert listmonk.login(USER, KEY) is True
    assert listmonk.is_healthy() is True

    # The client asks for per_page=1000000; the spec caps a page at 100, newest first.
    campaigns = listmonk.campaigns()
    assert len(campaigns) == 100
    assert [c.id for c in campaigns] == [weekly, *reversed(ids)][:100]
    assert {c.status for c in campaigns} == {"finished"}
    assert all(c.lists == [{"id": 1, "name": LIST_NAME}] for c in campaigns)

    one = listmonk.campaign_by_id(weekly)
    assert one is not None
    assert (one.id, one.subject, one.type, one.content_type) == (
        weekly,
        "The week",
        "regular",
        "html",
    )
    assert one.from_email == FROM
    assert one.body and "{{unsubscribe_url}}" in one.body
    assert one.tags == ["weekly"]

    (the_list,) = listmonk.lists()
    assert (the_list.id, the_list.name, the_list.subscriber_count) == (1, LIST_NAME, 2)
    assert the_list.optin == "double"


def test_listmonk_client_is_refused_with_wrong_credentials(server: str) -> None:
    listmonk.set_url_base(server)
    assert listmonk.login(USER, "not-the-right-key-0000") is False


def test_unknown_campaign_reaches_the_client_as_404(server: str) -> None:
    listmonk.set_url_base(server)
    assert listmonk.login(USER, KEY) is True
    with pytest.raises(httpx2.HTTPStatusError) as raised:
        listmonk.campaign_by_id(424242)
    assert raised.value.response.status_code == 404


def test_wire_responses_match_listmonk_shapes(server: str, newsletter_storage: Any) -> None:
    ids = insert_issues(newsletter_storage, 3)
    insert_subscriber(newsletter_storage, status="confirmed")
    token = {"Authorization": f"token {USER}:{KEY}"}
    with httpx.Client(base_url=server, headers=token, timeout=10) as client:
        assert client.get("/api/health").json() == {"data": True}
        page = CampaignsResponse.model_validate(client.get("/api/campaigns?order=asc").json())
        assert [c.id for c in page.data.results] == ids
        one = CampaignResponse.model_validate(client.get(f"/api/campaigns/{ids[0]}").json())
        assert one.data.campaign_id == ids[0]
        lists = ListsResponse.model_validate(client.get("/api/lists").json())
        assert lists.data.results[0].subscriber_count == 1

        for method, path, status in [
            ("GET", "/api/campaigns/999999", 404),
            ("GET", "/api/nope", 404),
            ("POST", "/api/campaigns", 405),
            ("DELETE", f"/api/campaigns/{ids[0]}", 405),
        ]:
            response = client.request(method, path)
            assert response.status_code == status
            ErrorResponse.model_validate(response.json())

    unauthorised = httpx.get(f"{server}/api/campaigns", timeout=10)
    assert unauthorised.status_code == 401
    assert unauthorised.headers["www-authenticate"].startswith("Basic realm=")
    ErrorResponse.model_validate(unauthorised.json())
