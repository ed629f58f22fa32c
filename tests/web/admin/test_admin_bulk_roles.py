"""Roles on the acts on many subscribers at once: erasing in bulk (the ticked rows or all
matching) is for owners, the confirm steps included, and an editor's list offers no erase
button; a bulk act on all matching shows who asked for it, and only that admin or an owner
may stop it. A refused request changes nothing and is not audited."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest

from newsletter_connector.descriptors import EDITOR
from newsletter_connector.web.admin import paths
from newsletter_connector.web.admin.roles import BULK_ERASING
from tests.support.admin import PASSWORD, audit_acts, flash_of, followed, get_page, sign_in, submit
from tests.web.admin.test_admin_subscriber_jobs import FILTER, MATCHING, PEOPLE, people  # noqa: F401

OUTSIDE = "Not open to editors"


def _text(page: Any) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", page.text)).split())


@pytest.fixture
def editors(service: Any, admin_user: str) -> tuple[str, str]:
    """Two editors beside the owner ``ada``."""
    service.admin_access.create_user("eve", PASSWORD, role=EDITOR)
    service.admin_access.create_user("sam", PASSWORD, role=EDITOR)
    return "eve", "sam"


def _post(client: Any, session: str, path: str, fields: dict[str, str]) -> Any:
    return submit(client, path, session, fields, form=paths.SUBSCRIBERS)


def _stored(service: Any) -> dict[str, str]:
    return {email: service.subscribers.get(email).status for email in PEOPLE}


ERASE_REQUESTS = [
    (paths.SUBSCRIBERS_BULK, {"act": "erase", "pick": MATCHING[0]}),
    (paths.SUBSCRIBERS_BULK_ERASE, {"pick": MATCHING[0], "confirm_count": "1"}),
    (paths.SUBSCRIBERS_ALL, {"filter": FILTER, "act": "erase"}),
    (
        paths.SUBSCRIBERS_ALL_ERASE,
        {"filter": FILTER, "expected": "3", "exact": "yes", "confirm_count": "3"},
    ),
]


@pytest.mark.parametrize(("path", "fields"), ERASE_REQUESTS, ids=lambda v: str(v)[:30])
def test_an_editor_cannot_erase_in_bulk_even_with_a_valid_form(
    client: Any,
    service: Any,
    editors: tuple[str, str],
    people: None,  # noqa: F811
    path: str,
    fields: dict[str, str],
) -> None:
    session = sign_in(client, editors[0])
    before = _stored(service)
    result = _post(client, session, path, {"filter": FILTER, **fields})
    assert result.status_code == 403
    assert OUTSIDE in result.text and BULK_ERASING in unescape(result.text)
    assert _stored(service) == before
    assert service.subscriber_jobs.recent() == []
    assert [act for act, _ in audit_acts(service)] == ["login"]


def test_an_editors_list_offers_no_erase_but_the_other_acts(
    client: Any,
    editors: tuple[str, str],
    admin_user: str,
    people: None,  # noqa: F811
) -> None:
    address = f"{paths.SUBSCRIBERS}?{FILTER}"
    as_editor = get_page(client, address, sign_in(client, editors[0])).text
    as_owner = get_page(client, address, sign_in(client, admin_user)).text
    for words in ("Erase…", "Erase all…"):
        assert words in as_owner and words not in as_editor
    for words in ("Unsubscribe…", "Mark bounced…", "Unsubscribe all…", "Mark all bounced…"):
        assert words in as_editor


def test_an_owner_erases_in_bulk_once_the_number_is_typed(
    client: Any,
    service: Any,
    session: str,
    people: None,  # noqa: F811
) -> None:
    confirm = _post(client, session, paths.SUBSCRIBERS_BULK, {"act": "erase", "pick": MATCHING[0]})
    assert confirm.status_code == 200 and "Type 1 to confirm" in _text(confirm)
    fields = {"pick": MATCHING[0], "filter": FILTER}
    wrong = _post(client, session, paths.SUBSCRIBERS_BULK_ERASE, {**fields, "confirm_count": "2"})
    assert wrong.status_code == 400 and "type 1, the number" in unescape(wrong.text)
    assert MATCHING[0] in _stored(service)
    done = _post(client, session, paths.SUBSCRIBERS_BULK_ERASE, {**fields, "confirm_count": "1"})
    assert flash_of(followed(client, done, session)) == "1 subscriber erased."


def _start(client: Any, session: str) -> int:
    fields = {"filter": FILTER, "expected": "3", "exact": "yes"}
    started = _post(client, session, f"{paths.SUBSCRIBERS_ALL}/bounce", fields)
    assert started.status_code == 303, started.text[:300]
    return int(started.headers["location"].rsplit("/", 1)[-1])


def _stop(client: Any, session: str, job_id: int) -> Any:
    return _post(client, session, paths.SUBSCRIBER_JOB_STOP, {"job_id": str(job_id)})


def test_only_who_asked_for_a_job_or_an_owner_may_stop_it(
    client: Any,
    service: Any,
    editors: tuple[str, str],
    admin_user: str,
    people: None,  # noqa: F811
) -> None:
    eve, sam = (sign_in(client, name) for name in editors)
    ada = sign_in(client, admin_user)
    owners_job = _start(client, ada)
    eves_job, eves_second = _start(client, eve), _start(client, eve)

    page = get_page(client, f"{paths.SUBSCRIBER_JOBS}/{owners_job}", eve)
    assert "(by ada at" in _text(page)
    assert "Stop it" not in page.text
    assert "Only ada, who asked for this act, or one of the newsletter's owners can stop it." in (
        _text(page)
    )
    for session, job_id in ((eve, owners_job), (sam, eves_job)):
        refused = _stop(client, session, job_id)
        assert refused.status_code == 403 and OUTSIDE in refused.text
        assert "who asked for this act" in unescape(refused.text)
    assert all(job.stopped_by is None for job in service.subscriber_jobs.recent())
    assert "subscribers.job_stop" not in [act for act, _ in audit_acts(service)]

    assert "Stop it" in get_page(client, f"{paths.SUBSCRIBER_JOBS}/{eves_job}", eve).text
    assert flash_of(followed(client, _stop(client, eve, eves_job), eve)) == "Stopped."
    assert "Stop it" in get_page(client, f"{paths.SUBSCRIBER_JOBS}/{eves_second}", ada).text
    assert flash_of(followed(client, _stop(client, ada, eves_second), ada)) == "Stopped."
    stopped = {job.id: job.stopped_by for job in service.subscriber_jobs.recent()}
    assert stopped == {owners_job: None, eves_job: "eve", eves_second: "ada"}
