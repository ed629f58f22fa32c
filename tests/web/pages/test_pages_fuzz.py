"""Whatever a form carries, a reader page answers with the form again (400) or success (303),
never a server error."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.examples import examples
from tests.support.pages_helpers import open_form, path_of

pytestmark = pytest.mark.system  # generated cases

FIELD_NAMES = st.sampled_from(
    [
        "email",
        "zip",
        "frequency",
        "name",
        "message",
        "first_name",
        "last_name",
        "phone",
        "gender",
        "gender_self",
        "age_range",
        "categories",
        "sms",
        "cadence_local",
        "website",
        "other",
    ]
)
VALUES = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", "weekly", "off", "self_described", "55_64", "yes", "12345"]),
    st.emails().map(str),
)
FORMS = st.lists(st.tuples(FIELD_NAMES, VALUES), max_size=12)
FUZZ = settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ
@given(fields=FORMS, page=st.sampled_from(["/signup", "/contact", "profile"]))
def test_any_form_gets_a_page_never_a_server_error(
    newsletter_client: Any, newsletter_service: Any, fields: Any, page: str
) -> None:
    if page == "profile":
        record = newsletter_service.subscribers.subscribe({"email": "fuzz@example.org"}).record
        page = path_of(newsletter_service.subscribers.contact(record)["profile_url"])
    form = open_form(newsletter_client, page)
    result = form.post(newsletter_client, page, fields)
    assert result.status_code in (303, 400), (result.status_code, result.text[:500])
    assert result.headers["content-type"].startswith("text/html") or result.status_code == 303


@pytest.fixture
def newsletter_settings(newsletter_settings: Any) -> Any:
    """Every example posts from the same test client: this test is about what a form carries,
    not how many arrive, so the per-client limits are off."""
    limits_off = {"rate_limit_signup": 0, "rate_limit_contact": 0, "rate_limit_profile": 0}
    return type(newsletter_settings)(**{**newsletter_settings.model_dump(), **limits_off})
