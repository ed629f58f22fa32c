"""Admin → Import a list (owners): upload a file, choose how to read it (columns matched by
name, the mode, the consent), read what the dry run says in words, confirm the mails pending
lines cause, import; each step audited, the file forgotten at the end, and nothing stored by a
refused step."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest

from newsletter_connector.descriptors import EDITOR
from tests.support.admin import (
    COOKIE_NAME,
    PASSWORD,
    csrf_token,
    flash_of,
    followed,
    get_page,
    post_upload,
    sign_in,
    submit,
)

MAILCHIMP = (
    b'"Email Address","First Name","Last Name",CONFIRM_TIME,MEMBER_RATING\n'
    b'ann@example.org,Ann,Lee,"2024-03-05 14:22:10",4\n'
    b"bob@example.org,Bob,Ray,,2\n"
    b"not-an-address,Cy,Do,,1\n"
)


def _text(page: Any) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", page.text)).split())


def _upload(client: Any, session: str, name: str, data: bytes | None) -> Any:
    token = csrf_token(get_page(client, "/admin/imports", session))
    file = None if data is None else (name, data)
    return post_upload(
        client, "/admin/imports/upload", {"csrf_token": token}, file, cookies={COOKIE_NAME: session}
    )


def _job_id(result: Any) -> int:
    assert result.status_code == 303, result.text[:300]
    return int(result.headers["location"].rsplit("/", 1)[1])


def _choose(client: Any, session: str, job_id: int, **fields: str) -> Any:
    page = get_page(client, f"/admin/imports/{job_id}", session)
    columns = dict(re.findall(r'name="(column_name_\d+)" value="([^"]*)"', page.text))
    for field, value in re.findall(
        r'<select id="(column_\d+)".*?<option value="([^"]*)" selected', page.text, re.S
    ):
        columns[field] = value
    form = {"job": str(job_id), "mode": "add", "without_consent": "refuse", **columns, **fields}
    return submit(client, "/admin/imports/choose", session, form, form=f"/admin/imports/{job_id}")


def test_a_mailchimp_export_is_checked_then_imported(
    client: Any, service: Any, session: str
) -> None:
    page = get_page(client, "/admin/subscribers", session)
    assert "import a list" in _text(page)
    job_id = _job_id(_upload(client, session, "subscribed_members.csv", MAILCHIMP))
    page = get_page(client, f"/admin/imports/{job_id}", session)
    text = _text(page)
    assert "Uploaded: say how to read it" in text and "subscribed_members.csv" in text
    assert "Column “Email Address”" in text and "MEMBER_RATING" in text
    assert re.search(r'id="column_0".*?value="email" selected', page.text, re.S)
    assert re.search(r'id="column_4".*?value="" selected', page.text, re.S)  # MEMBER_RATING

    result = _choose(client, session, job_id, consent_source="Mailchimp signup form")
    assert _job_id(result) == job_id
    assert "Waiting for the sync runner" in _text(
        get_page(client, f"/admin/imports/{job_id}", session)
    )
    service.import_jobs.work()
    text = _text(get_page(client, f"/admin/imports/{job_id}", session))
    assert "What importing it would do" in text
    assert "Added, confirmed 1" in text and "Refused 2" in text
    assert "3 Where and when they agreed Both where and when they agreed are needed" in text
    assert "4 Email address Not a valid email address" in text  # line, column, why
    assert "{" not in text  # words and tables, never raw JSON
    with service.storage.transaction(write=False) as uow:
        assert uow.subscribers.count() == 0

    result = submit(
        client,
        "/admin/imports/start",
        session,
        {"job": str(job_id)},
        form=f"/admin/imports/{job_id}",
    )
    assert _job_id(result) == job_id
    service.import_jobs.work()
    text = _text(get_page(client, f"/admin/imports/{job_id}", session))
    assert "Imported at" in text and "What the dry run said" in text
    with service.storage.transaction(write=False) as uow:
        ann = uow.subscribers.get_by_email("ann@example.org")
    assert (ann.status, ann.first_name, ann.consent_source) == (
        "confirmed",
        "Ann",
        "Mailchimp signup form",
    )
    actions = [entry.action for entry in service.admin_audit.latest(10)]
    assert actions[:3] == [
        "subscribers.import",
        "subscribers.import_check",
        "subscribers.import_upload",
    ]
    assert "Discard" not in text and "Stop it" not in text


def test_pending_lines_need_the_mails_confirmed(client: Any, service: Any, session: str) -> None:
    job_id = _job_id(
        _upload(client, session, "members.txt", b"ann@example.org\nBo <bo@example.org>\n")
    )
    page = get_page(client, f"/admin/imports/{job_id}", session)
    assert "plain list" in _text(page)
    _choose(client, session, job_id, without_consent="pending")
    service.import_jobs.work()
    page = get_page(client, f"/admin/imports/{job_id}", session)
    assert "pending readers a confirmation (2 mails)" in _text(page)
    refused = submit(
        client,
        "/admin/imports/start",
        session,
        {"job": str(job_id)},
        form=f"/admin/imports/{job_id}",
    )
    assert refused.status_code == 400 and 'aria-invalid="true"' in refused.text
    assert service.import_jobs.get(job_id).phase == "checked"
    done = submit(
        client,
        "/admin/imports/start",
        session,
        {"job": str(job_id), "confirm_mails": "yes"},
        form=f"/admin/imports/{job_id}",
    )
    assert done.status_code == 303
    service.import_jobs.work()
    with service.storage.transaction(write=False) as uow:
        assert uow.subscribers.count(status="pending") == 2


def test_choices_that_do_not_read_the_file_are_shown_again(
    client: Any, service: Any, session: str
) -> None:
    job_id = _job_id(_upload(client, session, "list.csv", b"E-Mail,Name\nann@example.org,Ann\n"))
    result = _choose(client, session, job_id)
    assert result.status_code == 400
    assert "no column holds the email address" in _text(result)
    assert service.import_jobs.get(job_id).phase == "uploaded"
    result = _choose(client, session, job_id, column_0="email", consent_source="x")
    assert result.status_code == 400 and "consent" in _text(result)  # source without a time


def test_refused_uploads_store_nothing(client: Any, service: Any, session: str) -> None:
    for data in (None, b""):
        result = _upload(client, session, "empty.csv", data)
        assert result.status_code == 400 and "Nothing was stored" in _text(result)
    assert service.import_jobs.recent() == []
    token = csrf_token(get_page(client, "/admin/imports", session))
    urlencoded = client.simulate_post(
        "/admin/imports/upload",
        body=f"csrf_token={token}",
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": "https://news.example.test",
        },
        cookies={COOKIE_NAME: session},
    )
    assert urlencoded.status_code in (403, 415)
    assert service.import_jobs.recent() == []


def test_discarding_an_upload_forgets_its_file(client: Any, service: Any, session: str) -> None:
    job_id = _job_id(_upload(client, session, "list.csv", MAILCHIMP))
    result = submit(
        client,
        "/admin/imports/stop",
        session,
        {"job": str(job_id)},
        form=f"/admin/imports/{job_id}",
    )
    page = followed(client, result, session)
    assert flash_of(page) == "Stopped; the file is deleted."
    assert "Discarded by ada" in _text(page)
    assert service.import_jobs.part(job_id, 0) is None


@pytest.mark.parametrize("address", ["/admin/imports", "/admin/imports/1"])
def test_editors_may_not_import(client: Any, service: Any, admin_user: str, address: str) -> None:
    service.admin_access.create_user("eve", PASSWORD, role=EDITOR)
    session = sign_in(client, "eve")
    assert get_page(client, address, session).status_code == 403
    assert "import a list" not in _text(get_page(client, "/admin/subscribers", session))
