"""Arbitrary JSON at every writable endpoint never yields a server error (docs/newsletter-api.md,
"Errors")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.examples import examples
from tests.support.subscriber_helpers import MESSAGES, SUBSCRIBERS, one

pytestmark = pytest.mark.system  # generated cases

FIELDS = [
    "email",
    "first_name",
    "last_name",
    "zip",
    "phone",
    "prefs",
    "categories",
    "consent",
    "status",
    "age_range",
    "gender",
    "gender_self",
    "created_at",
    "other",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=40),
    st.sampled_from(
        ["reader@example.org", "12345", "daily", "unsubscribed", "2025-01-01T00:00:00Z"]
    ),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(["email", "sms", "enabled", "local", "source", "collected_at", "x"]),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=12,
)
BODIES = st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=6)
FUZZ = settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _ok(result: Any) -> None:
    assert result.status_code < 500, result.text
    assert result.status_code in (200, 201, 400, 404), result.text
    if result.status_code >= 400:
        assert set(result.json) == {"error", "message"}


@FUZZ
@given(body=BODIES)
def test_post_and_patch_never_fail_on_any_json(
    newsletter_client: Any, auth: dict[str, str], body: dict[str, Any]
) -> None:
    raw = json.dumps(body)
    _ok(newsletter_client.simulate_post(SUBSCRIBERS, headers=auth, body=raw))
    newsletter_client.simulate_post(
        SUBSCRIBERS, headers=auth, body='{"email":"reader@example.org"}'
    )
    _ok(newsletter_client.simulate_patch(one("reader@example.org"), headers=auth, body=raw))


@FUZZ
@given(text=st.text(max_size=80), limit=st.text(max_size=6))
def test_paths_and_queries_never_fail(
    newsletter_client: Any, auth: dict[str, str], text: str, limit: str
) -> None:
    for method in ("GET", "PATCH", "DELETE"):
        _ok(newsletter_client.simulate_request(method, one(text), headers=auth, body="{}"))
    for path in (SUBSCRIBERS, MESSAGES):
        _ok(newsletter_client.simulate_get(path, headers=auth, params={"cursor": text or "x"}))
        _ok(newsletter_client.simulate_get(path, headers=auth, params={"limit": limit or "x"}))


@FUZZ
@given(email=JSON, name=JSON, message=JSON)
def test_recording_a_message_never_fails_unexpectedly(
    newsletter_service: Any, email: Any, name: Any, message: Any
) -> None:
    from newsletter_connector.errors import InvalidRequest

    try:
        newsletter_service.messages.record(email, name, message)
    except InvalidRequest as exc:
        assert exc.field in ("email", "name", "message")
