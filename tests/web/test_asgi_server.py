"""The FastAPI guide's site under a real uvicorn (two worker processes) on loopback, with the
recommended ``newsletter-connector sync`` process beside it: a browser-like client signs up
through the mounted reader form and signs in to the admin area, and the separate runner pushes
the signup to the platform with a confirm link that leads back through the mount."""

from __future__ import annotations

import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.admin import PASSWORD
from tests.support.docblocks import docblock
from tests.support.servers import serving, started
from tests.support.tls_receiver import TlsReceiver
from tests.support.waiting import free_port

pytestmark = pytest.mark.system

DOCS_BASE_URL = "https://example.org/newsletter"
STATUS = "/newsletter/api/newsletter/v1/status"
TOKEN = "platform-token-0123456789"


def site_environment(site: str, database_url: str, receiver: TlsReceiver) -> dict[str, str]:
    """What the site's processes share: the public address of the mount, the database, the
    site secret, plain http on loopback (development only), and the receiver's CA."""
    return {
        "NEWSLETTER_CONFIG": "",
        "NEWSLETTER_BASE_URL": site + "/newsletter",
        "NEWSLETTER_DATABASE_URL": database_url,
        "NEWSLETTER_SITE_SECRET": "asgi-site-secret",
        "NEWSLETTER_ALLOW_INSECURE_HTTP_LINKS": "true",
        "SSL_CERT_FILE": str(receiver.ca_file),
    }


def form_token(page: httpx.Response) -> str:
    marker = 'name="csrf_token" value="'
    start = page.text.index(marker) + len(marker)
    return page.text[start : page.text.index('"', start)]


def test_fastapi_site_under_uvicorn_with_a_sync_process_beside_it(
    tmp_path: Path, newsletter_settings: Any, newsletter_service: Any, api_key: str
) -> None:
    port = free_port()
    site = f"http://127.0.0.1:{port}"
    source = docblock("mount-fastapi")
    assert source.count(DOCS_BASE_URL) == 1
    # The guide's site, its base_url the address this test's "browser" really uses.
    (tmp_path / "mysite.py").write_text(source.replace(DOCS_BASE_URL, site + "/newsletter"))
    newsletter_service.admin_access.create_user("ada", PASSWORD)
    uvicorn = [
        sys.executable, "-m", "uvicorn", "mysite:app",
        "--host", "127.0.0.1", "--port", str(port), "--workers", "2",
    ]  # fmt: skip
    sync = [sys.executable, "-m", "newsletter_connector", "sync", "--poll-interval", "0.2"]
    receiver = TlsReceiver(tmp_path)
    env = site_environment(site, newsletter_settings.database_url, receiver)
    newsletter_service.admin.set_connection(
        platform_base=receiver.base, transport="events", token=TOKEN
    )
    with (
        closing(receiver),
        started(sync, env=env) as sync_process,
        serving(uvicorn, probe_url=site + "/", env=env, cwd=tmp_path),
        httpx.Client(base_url=site, timeout=20) as browser,
    ):
        assert "/newsletter/signup" in browser.get("/").text
        status = browser.get(STATUS, headers={"Authorization": f"Bearer {api_key}"})
        assert status.json() == {"ok": True, "version": "v1", "key": "tests"}

        page = browser.get("/newsletter/signup")
        assert browser.cookies.jar and all(c.path == "/newsletter" for c in browser.cookies.jar)
        fields = {"email": "reader@example.org", "frequency": "weekly", "website": ""}
        posted = browser.post(
            "/newsletter/signup",
            data={**fields, "csrf_token": form_token(page)},
            headers={"Origin": site},
        )
        assert posted.status_code == 303, posted.text
        assert posted.headers["location"] == site + "/newsletter/signup/thanks"
        assert browser.get(posted.headers["location"]).status_code == 200

        login = browser.get("/newsletter/admin/login")
        signed_in = browser.post(
            "/newsletter/admin/login",
            data={"username": "ada", "password": PASSWORD, "csrf_token": form_token(login)},
            headers={"Origin": site},
        )
        assert signed_in.status_code == 303, signed_in.text
        home = browser.get("/newsletter/admin")
        assert home.status_code == 200 and "Signed in as <strong>ada</strong>" in home.text

        try:
            receiver.wait_for(1, timeout=30)  # pushed by the sync process, not by uvicorn
        except AssertionError:
            sync_process.terminate()
            raise AssertionError(sync_process.communicate(timeout=30)[0]) from None
        (event,) = [e for r in receiver.received for e in r.body]
        assert event["type"] == "newsletter.signup" and event["confirm"] is True
        confirm_url = event["payload"]["confirm_url"]
        assert confirm_url.startswith(site + "/newsletter/confirm/")
        confirm_page = browser.get(confirm_url.removeprefix(site))
        assert confirm_page.status_code == 200
    assert newsletter_service.subscribers.get("reader@example.org").status == "confirmed"
