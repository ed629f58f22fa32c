"""Hostile values in admin forms, one plain case each beside the generated ones of
``test_admin_input_fuzz.py``: each is answered with a page or a refusal naming what was wrong,
never a server error, and a refused form stores nothing."""

from __future__ import annotations

from html import unescape
from typing import Any

import pytest

from newsletter_connector.web.admin.base import ERROR_WORDS
from tests.support.admin import COOKIE_NAME, audit_acts, csrf_token, get_page, submit
from tests.support.pages_helpers import ORIGIN, text_of

COMPOSE = "/admin/issues/compose"
URLENCODED = "application/x-www-form-urlencoded"
RECORD = "/admin/issues/compose/record"
#: Digits Python's ``str.isdigit`` takes that ``int`` refuses (superscript two), digits of
#: another script, and more digits than ``int`` converts.
ODD_NUMBERS = ["²", "١٢", "9" * 5000]


@pytest.mark.parametrize("count", ODD_NUMBERS, ids=["superscript", "arabic-indic", "5000-digits"])
def test_a_row_count_that_is_no_number_of_0_9_is_no_row(
    client: Any, service: Any, session: str, count: str
) -> None:
    for name in ("otd_rows", "topic_rows"):
        page = submit(client, COMPOSE, session, {"change": "add-otd", name: count}, form="/admin/")
        assert page.status_code == 200, page.text
        assert 'name="otd_rows" value="1"' in page.text  # the one row the button added
    assert service.issues.list(10) == []


@pytest.mark.parametrize("number", ODD_NUMBERS, ids=["superscript", "arabic-indic", "5000-digits"])
def test_a_row_button_naming_no_row_of_0_9_changes_nothing(
    client: Any, session: str, number: str
) -> None:
    fields = {"otd_rows": "1", "otd-0-text": "A walk on the moon"}
    for change in (f"remove-otd-{number}", f"remove-topic-{number}", f"add-item-{number}"):
        page = submit(client, COMPOSE, session, {**fields, "change": change}, form="/admin/")
        assert page.status_code == 200, page.text
        assert "A walk on the moon" in page.text


@pytest.mark.parametrize(
    "year",
    [*ODD_NUMBERS, "12345", "-"],
    ids=["superscript", "arabic-indic", "5000-digits", "5-digits", "dash"],
)
def test_a_year_that_is_no_number_of_0_9_is_named_and_nothing_is_recorded(
    client: Any, service: Any, session: str, year: str
) -> None:
    fields = {"otd_rows": "1", "otd-0-year": year, "otd-0-text": "A walk on the moon"}
    before = audit_acts(service)
    for path, extra in ((COMPOSE, {"change": "preview"}), (RECORD, {"record": "test"})):
        page = submit(client, path, session, {**fields, **extra}, form="/admin/")
        assert page.status_code == 400, page.text
        assert 'id="otd-0-year-error"' in page.text
        assert "the year must be a whole number of at most four digits" in unescape(page.text)
    assert service.issues.list(10) == []
    assert audit_acts(service) == before


@pytest.mark.parametrize(
    ("body", "content_type", "status", "words"),
    [
        ("label=%FF", URLENCODED, 400, "The form was not sent as UTF-8 text."),
        ("label=crm", "text/plain", 415, "The form must be sent as a web form."),
        ("label=" + "x" * 200_000, URLENCODED, 413, "The form is larger than this page accepts."),
        ("&".join(f"f{n}=1" for n in range(200)), URLENCODED, 400, "The form has too many fields."),
    ],
    ids=["not-utf-8", "not-a-form", "too-large", "too-many-fields"],
)
def test_a_form_that_cannot_be_read_is_refused_in_words_and_changes_nothing(
    client: Any, service: Any, session: str, body: str, content_type: str, status: int, words: str
) -> None:
    token = csrf_token(get_page(client, "/admin/settings/api-keys", session))
    before = (service.admin.list_api_keys(), audit_acts(service))
    result = client.simulate_post(
        "/admin/settings/api-keys",
        body=f"csrf_token={token}&{body}",
        headers={"Content-Type": content_type, "Origin": ORIGIN},
        cookies={COOKIE_NAME: session},
    )
    assert result.status_code == status
    shown = text_of(result.text)
    assert f"Not accepted {words} Nothing was changed." in shown, shown
    assert ERROR_WORDS[500][0] not in shown
    assert (service.admin.list_api_keys(), audit_acts(service)) == before
