"""Admin → Import a list: every line of the file is accounted for (added, unchanged, blank or
refused with its number and why, in an editor's words); a line the CSV rules cannot read never
hides the lines after it, nor keeps the import's page from opening."""

from __future__ import annotations

from typing import Any

from tests.support.admin import get_page
from tests.web.admin.test_admin_imports import _choose, _job_id, _text, _upload

CONSENT = {"consent_source": "Spring fair", "consent_collected_at": "2024-03-05T14:22:10Z"}


def _checked(client: Any, service: Any, session: str, data: bytes, **fields: str) -> str:
    """The page of ``data`` uploaded and checked (its dry run done), as text."""
    job_id = _job_id(_upload(client, session, "list.csv", data))
    assert _job_id(_choose(client, session, job_id, **fields)) == job_id
    service.import_jobs.work()
    page = get_page(client, f"/admin/imports/{job_id}", session)
    assert page.status_code == 200
    return _text(page)


def test_a_quote_left_open_names_every_line_it_swallowed(
    client: Any, service: Any, session: str
) -> None:
    data = (
        b"email,first_name\n"
        b"ann@example.org,Ann\n"
        b"bob@example.org,Bob\n"
        b'cy@example.org,"Cy\n'
        b"dee@example.org,Dee\n"
        b"eve@example.org,Eve\n"
    )
    text = _checked(client, service, session, data, **CONSENT)
    assert "Added, confirmed 2" in text and "Refused 3" in text  # 2 + 3: the 5 lines read
    assert (
        "4 to 6 The whole line A quote opened on line 4 never closes, so lines 4 to 6 "
        "(to the end of the file) could not be read"
    ) in text
    assert "All 3 refused lines;" in text  # the span's lines, not the table's one row


def test_the_refused_table_says_how_many_lines_it_leaves_out(
    client: Any, service: Any, session: str
) -> None:
    data = b"email\n" + b"".join(b"no-address-%d\n" % n for n in range(102)) + b'"open\nx\n'
    text = _checked(client, service, session, data, **CONSENT)
    assert "Refused 104" in text
    assert "The first 100 refused lines (4 more);" in text


def test_blank_lines_are_counted_and_every_line_after_a_bad_one_is_read(
    client: Any, service: Any, session: str
) -> None:
    data = b'email,first_name\nann@example.org,"A"nn\n\nbob@example.org,Bob\n'
    text = _checked(client, service, session, data, **CONSENT)
    assert "Added, confirmed 1" in text and "Blank, skipped 1" in text and "Refused 1" in text
    assert "2 The whole line A quote inside a field that does not start with one" in text


def test_a_field_over_the_csv_limit_is_a_refused_line_and_the_page_opens(
    client: Any, service: Any, session: str
) -> None:
    data = (
        b"email,first_name\n"
        b"ann@example.org,Ann\n"
        b"bob@example.org," + b"x" * 140_000 + b"\n"
        b"cy@example.org,Cy\n"
    )
    text = _checked(client, service, session, data, **CONSENT)
    assert "Added, confirmed 2" in text and "Refused 1" in text
    assert "3 The whole line A field holds more than 131,072 characters" in text


def test_a_header_over_the_csv_limit_is_refused_and_the_page_opens(
    client: Any, service: Any, session: str
) -> None:
    data = b"email," + b"x" * 140_000 + b"\nann@example.org,Ann\n"
    job_id = _job_id(_upload(client, session, "list.csv", data))
    page = get_page(client, f"/admin/imports/{job_id}", session)
    assert page.status_code == 200
    result = _choose(client, session, job_id, **CONSENT)
    assert result.status_code == 400
    assert "more than 131,072 characters" in _text(result)
    with service.storage.transaction(write=False) as uow:
        assert uow.subscribers.count() == 0


def test_refused_lines_are_said_in_words(client: Any, service: Any, session: str) -> None:
    data = (
        b"email,zip,consent_source,consent_collected_at\n"
        b"ann@example.org,123,Fair,2024-03-05T14:22:10Z\n"
        b"not-an-address,,Fair,2024-03-05T14:22:10Z\n"
        b"bob@example.org,,Fair,\n"
    )
    text = _checked(client, service, session, data)
    assert "2 ZIP code Must be exactly 5 digits" in text
    assert "3 Email address Not a valid email address" in text
    assert "4 Where and when they agreed Both where and when they agreed are needed" in text
    assert "collected_at" not in text.split("Lines refused")[1].split("Nothing to import")[0]


LISTMONK = (
    b"uuid,email,name,status\n"
    b"6f1c,ann@example.org,Ann Lee,enabled\n"
    b"7a2d,bob@example.org,Bob Ray,blocklisted\n"
)


def test_leaving_out_an_opt_out_column_is_said_and_must_be_confirmed(
    client: Any, service: Any, session: str
) -> None:
    job_id = _job_id(_upload(client, session, "subscribers.csv", LISTMONK))
    text = _text(get_page(client, f"/admin/imports/{job_id}", session))
    assert (
        "If it is set to “Not imported”: “status” marks the readers who unsubscribed, were "
        "blocklisted or bounced; not imported, those readers would be imported as subscribed "
        "although they opted out."
    ) in text
    status_column = {"column_3": ""}  # uuid, email, name, status
    refused = _choose(client, session, job_id, **CONSENT, **status_column)
    assert refused.status_code == 400
    assert "Nothing was changed" in _text(refused)
    assert 'id="confirm_opt_outs-error"' in refused.text
    assert "would be imported as subscribed although they opted out" in _text(refused)
    assert service.import_jobs.get(job_id).phase == "uploaded"

    confirmed = _choose(client, session, job_id, **CONSENT, **status_column, confirm_opt_outs="yes")
    assert _job_id(confirmed) == job_id
    check = service.admin_audit.latest(1)[0]
    assert check.action == "subscribers.import_check"
    assert "an opt-out column may be left out (confirmed)" in check.detail
    service.import_jobs.work()
    text = _text(get_page(client, f"/admin/imports/{job_id}", session))
    assert "Added, confirmed 2" in text  # the blocklisted reader too, as confirmed


def test_an_opt_out_column_read_as_such_needs_no_confirmation(
    client: Any, service: Any, session: str
) -> None:
    text = _checked(client, service, session, LISTMONK, **CONSENT)
    assert "Added, confirmed 1" in text and "Suppressed" in text


def test_a_file_with_nothing_to_import_offers_no_import_button(
    client: Any, service: Any, session: str
) -> None:
    text = _checked(client, service, session, b"email\nnot-an-address\n", **CONSENT)
    assert "Nothing to import" in text and "Import 0" not in text
    one = _checked(client, service, session, b"email\nann@example.org\nnope\n", **CONSENT)
    assert "Import 1 line " in one and "Import 1 lines" not in one


MAILCHIMP_WITHOUT_SOURCE = (
    b'"Email Address","First Name",OPTIN_TIME\npriya@example.com,Priya,"2021-09-14 16:02:51"\n'
)


def test_the_page_says_what_consent_the_file_lacks_before_any_dry_run(
    client: Any, service: Any, session: str
) -> None:
    job_id = _job_id(_upload(client, session, "members.csv", MAILCHIMP_WITHOUT_SOURCE))
    text = _text(get_page(client, f"/admin/imports/{job_id}", session))
    assert (
        "No column of this file says where its readers agreed to get the newsletter, so as it "
        "stands every line would be refused. Say where they agreed for the whole file under "
        "Consent below"
    ) in text
    plain = _job_id(_upload(client, session, "list.txt", b"ann@example.org\n"))
    assert "says where and when its readers agreed" in _text(
        get_page(client, f"/admin/imports/{plain}", session)
    )
    refused = _choose(client, session, job_id, consent_collected_at="yesterday")
    assert "says where its readers agreed" in _text(refused)  # shown again with the choices
    given = _choose(client, session, job_id, consent_source="Spring fair")
    assert _job_id(given) == job_id
    service.import_jobs.work()
    checked = _text(get_page(client, f"/admin/imports/{job_id}", session))
    assert "No column of this file says" not in checked
    assert "Added, confirmed 1" in checked
    assert _job_id(_choose(client, session, job_id, without_consent="pending")) == job_id
    service.import_jobs.work()
    as_pending = _text(get_page(client, f"/admin/imports/{job_id}", session))
    assert "Or change how it is read" in as_pending and "No column of this file says" not in (
        as_pending
    )


def test_the_size_says_when_the_first_line_is_a_header(
    client: Any, service: Any, session: str
) -> None:
    def size(name: str, data: bytes) -> str:
        job_id = _job_id(_upload(client, session, name, data))
        text = _text(get_page(client, f"/admin/imports/{job_id}", session))
        return text.split("Size ", 1)[1].split(" Uploaded by", 1)[0]

    assert size("list.csv", b"email\nann@example.org\n").endswith("2 lines, the first a header")
    assert size("list.txt", b"ann@example.org\n").endswith("bytes, 1 line")
