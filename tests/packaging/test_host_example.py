"""examples/wsgi_mount end to end: a host with its own users table as the subscriber store, its
own issue content, the newsletter app mounted under /newsletter and the sync runner beside it,
pushing to a local HTTPS receiver."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import falcon.testing
import httpx
import pytest
from sqlalchemy import delete, func, insert, select

from examples.wsgi_mount import host_content, host_site
from examples.wsgi_mount.host_db import host_articles, host_users
from examples.wsgi_mount.host_db import metadata as host_metadata
from examples.wsgi_mount.host_store import HOST_SUBSCRIBERS
from newsletter_connector.errors import NotMigrated
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store import outbox as sql_outbox
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.tables import subscribers as package_subscribers
from newsletter_connector.service import NewsletterService
from newsletter_connector.timeutil import utcnow
from tests.support.docblocks import ROOT
from tests.support.servers import wait_until_listening
from tests.support.tls_receiver import TlsReceiver
from tests.support.waiting import free_port, wait_until

pytestmark = pytest.mark.system

TOKEN = "host-platform-token-0123456789"
BASE_URL = "https://host.example/newsletter"
API = "/newsletter/api/newsletter/v1"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture
def receiver(tmp_path: Any) -> Iterator[TlsReceiver]:
    server = TlsReceiver(tmp_path)
    yield server
    server.close()


@pytest.fixture
def site(
    newsletter_settings: Any, newsletter_storage: Any, receiver: TlsReceiver
) -> Iterator[host_site.HostSite]:
    """The host site on the test database (``newsletter_storage`` empties the package's tables
    afterwards; this fixture empties the host's)."""
    settings = newsletter_settings.model_copy(
        update={"base_url": BASE_URL, "ca_bundle": str(receiver.ca_file)}
    )
    host_site.migrate(settings)
    site = host_site.make_site(settings)
    try:
        yield site
    finally:
        with site.engine.begin() as connection:
            for table in reversed(host_metadata.sorted_tables):
                connection.execute(delete(table))
        site.close()


@pytest.fixture
def client(site: host_site.HostSite) -> falcon.testing.TestClient:
    return falcon.testing.TestClient(site)


@pytest.fixture
def auth(site: host_site.HostSite) -> dict[str, str]:
    return {"Authorization": f"Bearer {site.service.admin.create_api_key('host-tests').key}"}


def host_row(site: host_site.HostSite, email: str) -> Any:
    with site.engine.connect() as connection:
        return connection.execute(select(host_users).where(host_users.c.email == email)).first()


def test_host_pages_and_the_mounted_app(
    client: falcon.testing.TestClient, auth: dict[str, str]
) -> None:
    home = client.simulate_get("/")
    assert home.status_code == 200 and "Host home" in home.text
    assert '<form method="post" action="/signup">' in client.simulate_get("/signup").text
    status = client.simulate_get(API + "/status", headers=auth)
    assert status.json == {"ok": True, "version": "v1", "key": "host-tests"}
    # Outside the prefix the newsletter app is not reachable; inside it, its own 404s apply.
    assert client.simulate_get("/api/newsletter/v1/status").status_code == 404
    assert client.simulate_get(API + "/missing").json["error"] == "not_found"


def test_signup_confirm_api_and_delivery_end_to_end(
    site: host_site.HostSite,
    client: falcon.testing.TestClient,
    auth: dict[str, str],
    receiver: TlsReceiver,
) -> None:
    # 1. A reader signs up on the host's own signup page.
    form = urlencode({"email": " Ada@Example.org ", "display_name": "Ada L.", "zip": "02134"})
    page = client.simulate_post("/signup", body=form, headers=FORM)
    assert page.status_code == 200 and "confirm" in page.text
    # 2. A CRM signs another up through the Newsletter API of the mounted app.
    created = client.simulate_post(
        API + "/subscribers", json={"email": "bob@example.org"}, headers=auth
    )
    assert created.status_code == 201, created.text

    # Both live in the host's table, under its own column names; the package's table is empty.
    ada = host_row(site, "ada@example.org")
    assert ada.display_name == "Ada L." and ada.newsletter_status == "pending"
    assert ada.zip == "02134" and ada.email_prefs["briefings"] == "daily"
    assert host_row(site, "bob@example.org").id > ada.id
    with site.engine.connect() as connection:
        assert connection.scalar(select(func.count()).select_from(package_subscribers)) == 0

    # 3. The confirmation link is built from base_url, which includes the mount prefix.
    contact = client.simulate_get(API + "/subscribers/ada@example.org", headers=auth).json
    assert contact["status"] == "pending"
    confirm_url = contact["confirm_url"]
    assert confirm_url.startswith(BASE_URL + "/confirm/")
    assert contact["unsubscribe_url"].startswith(BASE_URL + "/unsubscribe/")
    confirmed = site.service.subscribers.confirm_by_token(confirm_url.rsplit("/", 1)[1])
    assert confirmed.status == "confirmed"
    # save() wrote the newsletter columns only: the host's own column is untouched.
    assert host_row(site, "ada@example.org").display_name == "Ada L."

    # 4. The Newsletter API sees the subscriber store of the host.
    listed = client.simulate_get(API + "/subscribers", params={"status": "confirmed"}, headers=auth)
    assert [c["email"] for c in listed.json["data"]] == ["ada@example.org"]
    everyone = client.simulate_get(API + "/subscribers", params={"limit": "1"}, headers=auth).json
    rest = client.simulate_get(
        API + "/subscribers", params={"limit": "1", "cursor": everyone["next_cursor"]}, headers=auth
    ).json
    assert [c["email"] for c in everyone["data"] + rest["data"]] == [
        "ada@example.org",
        "bob@example.org",
    ]

    # 5. A digest run takes the host's articles (its content plugin).
    today = utcnow().date().isoformat()
    with site.engine.begin() as connection:
        connection.execute(
            insert(host_articles).values(
                published_on=today,
                section="health",
                title="Flu shots at the town library on Saturday",
                url="https://host.example/articles/flu-shots",
                summary="Free flu shots for residents over 60.",
            )
        )
    issue = site.service.issues.run_digest("manual")
    assert issue.sections["briefing"]["title"] == "Flu shots at the town library on Saturday"
    latest = client.simulate_get(API + "/issues/latest", headers=auth).json
    assert latest["sections"]["topics"][0]["items"][0]["source"] == site.service.settings.site_name

    # 6. The sync runner beside the site pushes everything to the platform over HTTPS.
    site.service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)
    sync = site.start_sync(poll_interval=0.05, periodic_tasks=[])
    try:
        assert wait_until(lambda: len(receiver.event_ids()) >= 4), receiver.received
    finally:
        assert sync.stop(timeout=30)
    events = [event for request in receiver.received for event in request.body]
    assert [(e["type"], e["payload"].get("email")) for e in events] == [
        ("newsletter.signup", "ada@example.org"),
        ("newsletter.signup", "bob@example.org"),
        ("newsletter.confirmed", "ada@example.org"),
        ("newsletter.issue", None),
    ]
    assert events[0]["confirm"] is True and events[0]["payload"]["confirm_url"] == confirm_url
    assert events[2]["payload"]["zip"] == "02134"
    assert all(r.path == "/v1/events" for r in receiver.received)
    assert all(r.headers["Authorization"] == f"Bearer {TOKEN}" for r in receiver.received)
    with site.service.storage.transaction(write=False) as uow:
        assert uow.outbox.status().undelivered_events == 0


def test_bad_signup_names_the_field_and_stores_nothing(
    site: host_site.HostSite, client: falcon.testing.TestClient
) -> None:
    form = urlencode({"email": "not-an-address", "display_name": "<b>x</b>"})
    page = client.simulate_post("/signup", body=form, headers=FORM)
    assert page.status_code == 400 and "email:" in page.text
    with site.engine.connect() as connection:
        assert connection.scalar(select(func.count()).select_from(host_users)) == 0
    with site.service.storage.transaction(write=False) as uow:
        assert uow.outbox.status().unbatched == 0


def test_a_subscriber_change_and_its_event_commit_together(
    site: host_site.HostSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host's repository runs on the transaction's connection: when queuing the event
    fails, the change to host_users rolls back with it."""
    record = site.service.subscribers.subscribe({"email": "carol@example.org"}).record

    def broken_enqueue(self: Any, **kwargs: Any) -> None:
        raise RuntimeError("outbox unavailable")

    monkeypatch.setattr(sql_outbox.SqlOutbox, "enqueue", broken_enqueue)
    with pytest.raises(RuntimeError):
        site.service.subscribers.confirm_by_token(record.confirm_token)
    assert host_row(site, "carol@example.org").newsletter_status == "pending"


def test_an_unprepared_database_names_the_host_migration(newsletter_database_url: str) -> None:
    storage = SqlStorage(make_engine(newsletter_database_url), HOST_SUBSCRIBERS)
    try:
        with storage.engine.begin() as connection:
            host_metadata.drop_all(connection)
        with pytest.raises(NotMigrated, match="host_site migrate"):
            storage.check_ready()
    finally:
        storage.close()


def test_the_example_runs_as_documented_in_its_own_processes(
    newsletter_settings: Any, newsletter_storage: Any, receiver: TlsReceiver
) -> None:
    """`python -m examples.wsgi_mount.host_site migrate`, then `serve`: the site answers and its
    runner thread pushes a signup made on the host's page."""
    port = free_port()
    env = {
        **os.environ,
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": f"http://127.0.0.1:{port}/newsletter",
        "NEWSLETTER_ALLOW_INSECURE_HTTP_LINKS": "true",  # a local run, as the README says
        "NEWSLETTER_SITE_SECRET": "host-example-secret",
        "NEWSLETTER_CA_BUNDLE": str(receiver.ca_file),
        "NEWSLETTER_CONFIG": "",
        "HOST_SITE_PORT": str(port),
        "HOST_SITE_POLL_INTERVAL": "0.1",
    }
    module = [sys.executable, "-m", "examples.wsgi_mount.host_site"]
    subprocess.run([*module, "migrate"], cwd=ROOT, env=env, check=True, timeout=120)
    service = NewsletterService.build(newsletter_settings, storage=newsletter_storage)
    service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)
    process = subprocess.Popen(
        [*module, "serve"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_listening(base + "/", process)
        assert "Host home" in httpx.get(base + "/").text
        page = httpx.post(base + "/signup", data={"email": "dora@example.org"})
        assert page.status_code == 200
        assert wait_until(lambda: "newsletter.signup" in str(receiver.received)), receiver.received
    finally:
        process.terminate()
        process.communicate(timeout=30)
        storage = SqlStorage(make_engine(newsletter_settings.database_url), HOST_SUBSCRIBERS)
        with storage.engine.begin() as connection:
            for table in reversed(host_metadata.sorted_tables):
                connection.execute(delete(table))
        storage.close()
    payload = receiver.received[0].body[0]["payload"]
    assert payload["email"] == "dora@example.org"
    assert payload["confirm_url"].startswith(f"http://127.0.0.1:{port}/newsletter/confirm/")


def test_signing_up_an_existing_address_never_renames_its_account(
    site: host_site.HostSite, client: falcon.testing.TestClient
) -> None:
    first = urlencode({"email": "erin@example.org", "display_name": "Erin"})
    assert client.simulate_post("/signup", body=first, headers=FORM).status_code == 200
    again = urlencode({"email": "ERIN@example.org", "display_name": "Mallory"})
    assert client.simulate_post("/signup", body=again, headers=FORM).status_code == 200
    assert host_row(site, "erin@example.org").display_name == "Erin"


def test_host_content_plugin_reads_the_host_articles(site: host_site.HostSite) -> None:
    content = host_content.HostContent(site.engine)
    settings = site.service.settings
    assert content.newsletter_issue_content("daily", "2026-11-20", settings) is None  # none yet
    with site.engine.begin() as connection:
        connection.execute(
            insert(host_articles),
            [
                {
                    "published_on": day,
                    "section": section,
                    "title": f"{section} on {day}",
                    "url": f"https://host.example/{section}/{day}",
                    "summary": "s",
                }
                for day, section in [
                    ("2026-11-13", "money"),  # outside the week
                    ("2026-11-14", "money"),
                    ("2026-11-19", "health"),
                    ("2026-11-20", "health"),
                ]
            ],
        )
    daily = content.newsletter_issue_content("daily", "2026-11-20", settings)
    weekly = content.newsletter_issue_content("weekly", "2026-11-20", settings)
    assert daily is not None and weekly is not None
    assert [item["title"] for t in daily["topics"] for item in t["items"]] == [
        "health on 2026-11-20"
    ]
    assert daily["briefing"]["title"] == "health on 2026-11-20"
    assert {t["slug"]: len(t["items"]) for t in weekly["topics"]} == {"health": 2, "money": 1}
    # What the plugin returns is valid issue content: a weekly digest records it.
    issue = site.service.issues.run_digest("weekly", "2026-11-20")
    assert [t["label"] for t in issue.sections["topics"]] == ["Health", "Money"]
