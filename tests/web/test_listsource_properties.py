"""Property-based: no campaigns query string causes a 500, and the envelope is always valid."""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.examples import examples
from tests.support.listmonk_shapes import CampaignsResponse
from tests.support.listsource_fixtures import insert_issues

pytestmark = pytest.mark.system  # generated cases

USER, KEY = "platform", "property-key-0123456789"
HEADERS = {"Authorization": "Basic " + base64.b64encode(f"{USER}:{KEY}".encode()).decode()}
ISSUES = 7

KEYS = st.sampled_from(["page", "per_page", "order", "status", "query", "order_by", "tag", "x"])
NUMBERS = st.integers(min_value=-(2**70), max_value=2**70).map(str)
VALUES = st.one_of(
    NUMBERS,
    st.sampled_from(["all", "ALL", "asc", "DESC", "finished", "draft", "", " ", "1.5", "+3"]),
    st.text(max_size=30),
)
PAIRS = st.lists(st.tuples(KEYS, VALUES), max_size=8)
RAW = st.text(
    alphabet=st.characters(codec="ascii", exclude_characters="#"), max_size=60
)  # arbitrary bytes of a query string, percent signs and ampersands included


def _check(client: Any, ids: list[int], query_string: str) -> None:
    result = client.simulate_get(
        "/api/listsource/api/campaigns", headers=HEADERS, query_string=query_string
    )
    assert result.status_code == 200, result.text
    data = CampaignsResponse.model_validate(result.json).data
    assert 1 <= data.per_page <= 100
    assert data.page >= 1
    assert data.total in (0, ISSUES)
    assert len(data.results) <= data.per_page
    got = [c.id for c in data.results]
    assert got in (
        [],
        sorted(got),
        sorted(got, reverse=True),
    )
    assert set(got) <= set(ids)
    if data.total and data.page == 1:
        assert len(data.results) == min(ISSUES, data.per_page)


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(pairs=PAIRS)
def test_any_parameters_answer_a_valid_page(
    newsletter_client: Any, newsletter_service: Any, pairs: list[tuple[str, str]]
) -> None:
    ids = _setup(newsletter_client, newsletter_service)
    _check(newsletter_client, ids, urlencode(pairs))


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(raw=RAW)
def test_any_raw_query_string_answers_a_valid_page(
    newsletter_client: Any, newsletter_service: Any, raw: str
) -> None:
    ids = _setup(newsletter_client, newsletter_service)
    _check(newsletter_client, ids, raw.lstrip("?"))  # the test client refuses a leading ?


def _setup(client: Any, service: Any) -> list[int]:
    """Switch the surface on and store the issues once per test function (examples reuse it)."""
    cached: list[int] | None = getattr(client, "_property_ids", None)
    if cached is None:
        service.admin.set_listsource_credentials(USER, KEY)
        cached = insert_issues(service.storage, ISSUES, same_time_every=2)
        client._property_ids = cached
    return cached


HEADER_TEXT = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=80)


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    header=st.one_of(
        HEADER_TEXT,
        HEADER_TEXT.map(lambda v: "Basic " + v),
        HEADER_TEXT.map(lambda v: "token " + v),
        HEADER_TEXT.map(lambda v: "Basic " + base64.b64encode(v.encode()).decode()),
    )
)
def test_any_authorization_header_is_401_or_accepted(
    newsletter_client: Any, newsletter_service: Any, header: str
) -> None:
    _setup(newsletter_client, newsletter_service)
    result = newsletter_client.simulate_get(
        "/api/listsource/api/health", headers={"Authorization": header}
    )
    if result.status_code == 200:  # only the real credentials, in either form
        scheme, _, value = header.strip().partition(" ")
        b64 = HEADERS["Authorization"].split(" ")[1]
        assert (scheme.lower(), value.strip()) in {("basic", b64), ("token", f"{USER}:{KEY}")}
    else:
        assert result.status_code == 401
        assert result.headers["www-authenticate"].startswith("Basic realm=")
        assert set(result.json) == {"message"}
