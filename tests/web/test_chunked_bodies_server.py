"""Chunked request bodies through real gunicorn (``newsletter-connector serve``).

gunicorn de-chunks a ``Transfer-Encoding: chunked`` body and hands it to the app without a
``Content-Length``. A form sent that way is ``411 Length Required`` (a multipart one was a 500:
falcon's multipart reader needs the length) and a JSON body is ``400 invalid_request`` naming
``body`` (it was read as empty: "body is required"); neither changes anything. The same requests
with a length still work.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.servers import running

pytestmark = pytest.mark.system

EMAIL = "chunked@example.org"
MULTIPART = (
    b'--xyz\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\n'
    b"One-Click\r\n--xyz--\r\n"
)


def _chunks(body: bytes) -> Iterator[bytes]:
    """A body httpx sends with ``Transfer-Encoding: chunked`` (it has no length up front)."""
    yield body[:10]
    yield body[10:]


def test_chunked_bodies_are_refused_with_a_4xx_and_change_nothing(
    newsletter_settings: Any, newsletter_service: Any
) -> None:
    key = newsletter_service.admin.create_api_key("chunked").key
    newsletter_service.subscribers.subscribe({"email": EMAIL})
    token = newsletter_service.subscribers.get(EMAIL).unsubscribe_token
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": "https://news.example.test",
        "NEWSLETTER_SITE_SECRET": "chunked-test-secret",
    }
    with running(["serve", "--workers", "1"], env=env) as (base, _process):
        form = httpx.post(
            f"{base}/unsubscribe/{token}",
            content=_chunks(MULTIPART),
            headers={"Content-Type": "multipart/form-data; boundary=xyz"},
        )
        assert form.request.headers["transfer-encoding"] == "chunked"
        assert form.status_code == 411
        assert form.headers["content-type"].startswith("text/html")
        assert newsletter_service.subscribers.get(EMAIL).status == "pending"

        api = httpx.post(
            f"{base}/api/newsletter/v1/subscribers",
            content=_chunks(json.dumps({"email": "new@example.org"}).encode()),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
        )
        assert api.status_code == 400
        assert api.json() == {
            "error": "invalid_request",
            "message": "body must be sent with a Content-Length, not chunked",
        }
        assert api.headers["cache-control"] == "no-store"

        with_length = httpx.post(
            f"{base}/unsubscribe/{token}",
            content=MULTIPART,
            headers={"Content-Type": "multipart/form-data; boundary=xyz"},
        )
        assert with_length.status_code == 200
    assert newsletter_service.subscribers.get(EMAIL).status == "unsubscribed"
    assert [record.email for record in newsletter_service.subscribers.list_page().items] == [EMAIL]
