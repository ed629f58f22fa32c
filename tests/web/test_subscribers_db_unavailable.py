"""``db_unavailable`` (docs/newsletter-api.md, "Errors"): a database that does not answer is a 503,
never a 500 or a traceback."""

from __future__ import annotations

import json
from typing import Any

import falcon.testing
import pytest

from newsletter_connector import NewsletterService, create_app
from newsletter_connector.errors import DbUnavailable
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from tests.support.docblocks import docblock
from tests.support.subscriber_helpers import MESSAGES, SUBSCRIBERS, one


@pytest.fixture
def down_service(newsletter_settings: Any) -> Any:
    settings = newsletter_settings.model_copy(
        update={"database_url": "postgresql://nobody@127.0.0.1:9/none"}
    )
    storage = SqlStorage(make_engine(settings.database_url, connect_args={"connect_timeout": 2}))
    service = NewsletterService.build(settings, storage=storage)
    yield service
    service.close()


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", SUBSCRIBERS, None),
        ("GET", f"{SUBSCRIBERS}?status=pending&limit=5", None),
        ("POST", SUBSCRIBERS, '{"email": "a@example.org"}'),
        ("GET", one("a@example.org"), None),
        ("PATCH", one("a@example.org"), '{"zip": "12345"}'),
        ("DELETE", one("a@example.org"), None),
        ("GET", MESSAGES, None),
    ],
)
def test_every_endpoint_answers_503_db_unavailable(
    down_service: Any, method: str, path: str, body: str | None
) -> None:
    client = falcon.testing.TestClient(create_app(service=down_service))
    result = client.simulate_request(
        method, path, headers={"Authorization": "Bearer nlk_some-key-value"}, body=body
    )
    assert result.status_code == 503
    assert result.json == {"error": "db_unavailable", "message": result.json["message"]}
    assert result.headers["retry-after"]
    assert "Traceback" not in result.text and "nobody" not in result.text


def test_service_operations_raise_db_unavailable(down_service: Any) -> None:
    subscribers = down_service.subscribers
    for call in (
        lambda: subscribers.subscribe({"email": "a@example.org"}),
        lambda: subscribers.get("a@example.org"),
        lambda: subscribers.list_page(),
        lambda: subscribers.unsubscribe("a@example.org"),
        lambda: subscribers.confirm_by_token("A" * 32),
        lambda: subscribers.erase("a@example.org"),
        lambda: down_service.messages.record("a@example.org", None, "hi"),
        lambda: down_service.messages.list_page(),
    ):
        with pytest.raises(DbUnavailable):
            call()


def test_the_documented_answer_is_the_one_given(down_service: Any) -> None:
    """docs/newsletter-api.md's ``curl -i`` example: its status line, ``Retry-After`` and body
    are the real answer's, word for word."""
    block = docblock("newsletter-api-unavailable")
    command, status_line, retry_after, body = [line for line in block.splitlines() if line]
    assert command.startswith('curl -sS -i "$API/subscribers"')
    client = falcon.testing.TestClient(create_app(service=down_service))
    result = client.simulate_get(SUBSCRIBERS, headers={"Authorization": "Bearer nlk_some-key"})
    assert status_line == f"HTTP/1.1 {result.status}"
    assert retry_after == f"Retry-After: {result.headers['retry-after']}"
    assert json.loads(body) == result.json
