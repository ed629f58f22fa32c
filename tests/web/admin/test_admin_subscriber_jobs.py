"""Admin → Subscribers, acts on all matching: a confirm step naming the filter in words and
the number (erasing asks for it typed), then a bulk job audited once with the filter and the
number; its progress page, the recent jobs, and stopping one. The job does to each match what
the single act does, once."""

from __future__ import annotations

import csv
import io
import re
from html import unescape
from typing import Any

import pytest

from newsletter_connector.errors import NotFound
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from tests.support.admin import flash_of, followed, get_page, queued_events, submit

FILTER = "status=bounced&zip=021"
PEOPLE = {
    "ann@example.org": ("bounced", "02134"),
    "bob@example.org": ("bounced", "02199"),
    "cy@example.org": ("bounced", "02101"),
    "dee@example.org": ("confirmed", "02134"),
    "eve@example.org": ("bounced", "10001"),
}
MATCHING = ["ann@example.org", "bob@example.org", "cy@example.org"]


@pytest.fixture
def people(service: Any) -> None:
    with service.storage.transaction() as uow:
        for email, (status, zip_code) in PEOPLE.items():
            uow.subscribers.add(make_subscriber_data(email, status=status, zip=zip_code))


def _post(client: Any, session: str, path: str, fields: dict[str, Any]) -> Any:
    return submit(client, path, session, fields, form="/admin/subscribers")


def _audit(service: Any) -> list[tuple[str, str | None, str | None]]:
    return [(a.action, a.target, a.detail) for a in service.admin_audit.latest(10)]


def _text(page: Any) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", page.text)).split())


def test_the_list_offers_the_acts_on_all_matching(client: Any, session: str, people: None) -> None:
    page = get_page(client, f"/admin/subscribers?{FILTER}", session)
    assert "With all 3 matching this filter" in _text(page)
    for words in ("Unsubscribe all…", "Mark all bounced…", "Erase all…"):
        assert words in page.text


def test_unsubscribe_all_matching_as_a_job_with_a_progress_page(
    client: Any, service: Any, session: str, people: None
) -> None:
    confirm = _post(
        client, session, "/admin/subscribers/all", {"filter": FILTER, "act": "unsubscribe"}
    )
    assert confirm.status_code == 200
    words = _text(confirm)
    assert "Unsubscribe 3 subscribers?" in words
    assert "status: Bounced" in words and "ZIP code begins with: 021" in words
    assert _audit(service)[0][0] == "login"  # the confirm step changes nothing
    fields = dict(re.findall(r'name="(filter|expected|exact)" value="([^"]*)"', confirm.text))
    assert fields["expected"] == "3" and fields["exact"] == "yes"
    fields["filter"] = unescape(fields["filter"])
    done = _post(client, session, "/admin/subscribers/all/unsubscribe", fields)
    assert re.search(r"/admin/subscribers/jobs/\d+$", done.headers["location"])
    page = followed(client, done, session)
    assert flash_of(page).startswith("Queued")
    assert "Waiting for the sync runner to start it." in _text(page)
    assert "Stop it" in page.text
    action, target, detail = _audit(service)[0]
    assert (action, target) == ("subscribers.all_unsubscribe", "all 3 matching")
    assert detail is not None and "status: Bounced; ZIP code begins with: 021" in detail
    assert service.subscribers.get("ann@example.org").status == "bounced"  # not yet

    assert service.subscriber_jobs.work() == 3
    path = done.headers["location"].split("/admin/", 1)[1]
    finished = _text(get_page(client, f"/admin/{path}", session))
    assert "Finished at" in finished and "Changed 3" in finished and "Stop it" not in finished
    assert "Unsubscribed 3 subscribers" in finished and "Unsubscribing" not in finished
    for email in MATCHING:
        assert service.subscribers.get(email).status == "unsubscribed"
        assert queued_events(service, email) == ["newsletter.unsubscribed"]
    assert service.subscribers.get("dee@example.org").status == "confirmed"
    assert service.subscribers.get("eve@example.org").status == "bounced"
    assert [entry[0] for entry in _audit(service)].count("subscribers.all_unsubscribe") == 1
    listing = _text(get_page(client, "/admin/subscribers/jobs", session))
    assert "Unsubscribing" in listing and "3 of 3" in listing


def test_erasing_all_matching_asks_for_the_number(
    client: Any, service: Any, session: str, people: None
) -> None:
    confirm = _post(client, session, "/admin/subscribers/all", {"filter": FILTER, "act": "erase"})
    assert "Type 3 to confirm" in confirm.text
    fields = {"filter": FILTER, "expected": "3", "exact": "yes"}
    wrong = _post(client, session, "/admin/subscribers/all/erase", {**fields, "confirm_count": "2"})
    assert wrong.status_code == 400
    assert "type 3, the number of subscribers to erase, to confirm" in unescape(wrong.text)
    assert service.subscriber_jobs.recent() == []
    assert _audit(service)[0][0] == "login"
    done = _post(client, session, "/admin/subscribers/all/erase", {**fields, "confirm_count": "3"})
    assert done.status_code == 303
    service.subscriber_jobs.work()
    for email in MATCHING:
        with pytest.raises(NotFound):
            service.subscribers.get(email)
    action, target, detail = _audit(service)[0]
    assert (action, target) == ("subscribers.all_erase", "all 3 matching")
    assert "@" not in (detail or "")


@pytest.mark.parametrize(
    ("path", "fields", "message"),
    [
        ("/admin/subscribers/all", {"filter": FILTER, "act": "delete"}, "choose unsubscribe"),
        ("/admin/subscribers/all", {"filter": "zip=abc", "act": "bounce"}, "filter is not valid"),
        ("/admin/subscribers/all", {"filter": "zip=999", "act": "bounce"}, "no subscriber matches"),
        (
            "/admin/subscribers/all/bounce",
            {"filter": FILTER, "expected": "many"},
            "the number matching is missing",
        ),
    ],
)
def test_a_refused_act_on_all_matching_changes_nothing(
    client: Any,
    service: Any,
    session: str,
    people: None,
    path: str,
    fields: dict[str, str],
    message: str,
) -> None:
    result = _post(client, session, path, fields)
    assert result.status_code == 400
    assert message in unescape(result.text)
    assert service.subscriber_jobs.recent() == []
    assert _audit(service)[0][0] == "login"


def test_a_job_can_be_stopped_from_its_page(
    client: Any, service: Any, session: str, people: None
) -> None:
    fields = {"filter": FILTER, "expected": "3", "exact": "yes"}
    done = _post(client, session, "/admin/subscribers/all/bounce", fields)
    [job] = service.subscriber_jobs.recent()
    stopped = _post(client, session, "/admin/subscribers/job-stop", {"job_id": str(job.id)})
    page = followed(client, stopped, session)
    assert flash_of(page) == "Stopped."
    assert "Stopped by ada" in _text(page)
    assert "Marking bounced 3 subscribers: stopped" in _text(page)
    assert _audit(service)[0][:2] == ("subscribers.job_stop", f"bulk act {job.id}")
    assert service.subscriber_jobs.work() == 0
    again = _post(client, session, "/admin/subscribers/job-stop", {"job_id": str(job.id)})
    assert flash_of(followed(client, again, session)) == "It had already ended."
    assert done.status_code == 303
    for bad in ("0", "x", str(job.id + 1)):
        missing = _post(client, session, "/admin/subscribers/job-stop", {"job_id": bad})
        assert missing.status_code == 404
    assert get_page(client, f"/admin/subscribers/jobs/{job.id + 1}", session).status_code == 404
    assert get_page(client, "/admin/subscribers/jobs/0", session).status_code == 404


def test_erasing_all_matching_an_address_keeps_no_trace_of_it(
    client: Any, service: Any, session: str, people: None
) -> None:
    fields = {"filter": "address=ann%40example", "expected": "1", "exact": "yes"}
    done = _post(client, session, "/admin/subscribers/all/erase", {**fields, "confirm_count": "1"})
    assert done.status_code == 303
    [job] = service.subscriber_jobs.recent()
    assert "ann" not in job.filter_text and job.filter.address_prefix == "ann@example"
    assert service.subscriber_jobs.work() == 1
    finished = service.subscriber_jobs.get(job.id)
    assert finished.changed == 1 and "ann" not in repr(finished)
    action, _target, detail = _audit(service)[0]
    assert action == "subscribers.all_erase"
    assert detail is not None and "address begins with: (not kept)" in detail
    assert "ann" not in detail
    page = _text(get_page(client, f"/admin/subscribers/jobs/{job.id}", session))
    assert "address begins with: (not kept)" in page and "ann@" not in page


def test_erasing_the_ticked_keeps_no_address_of_the_filter(
    client: Any, service: Any, session: str, people: None
) -> None:
    fields = {"pick": "bob@example.org", "filter": "address=bob&status=bounced"}
    done = _post(client, session, "/admin/subscribers/bulk/erase", {**fields, "confirm_count": "1"})
    assert done.status_code == 303
    detail = _audit(service)[0][2] or ""
    assert "bob" not in detail and "status=bounced" in detail


def test_export_all_matching_with_the_chosen_columns(
    client: Any, service: Any, session: str, people: None
) -> None:
    fields = {"filter": FILTER, "columns": ["status", "email"]}
    result = _post(client, session, "/admin/subscribers/export-matching", fields)
    assert result.status_code == 200
    assert result.headers["content-type"] == "text/csv; charset=utf-8"
    assert "subscribers-matching-" in result.headers["content-disposition"]
    rows = list(csv.reader(io.StringIO(result.text)))
    assert rows == [["email", "status"], *([email, "bounced"] for email in reversed(MATCHING))]
    action, target, detail = _audit(service)[0]
    assert (action, target) == ("subscribers.export_matching", "all 3 matching")
    assert detail == ("filter: status: Bounced; ZIP code begins with: 021; columns: email status")
    page = get_page(client, f"/admin/subscribers?{FILTER}", session)
    assert "Export all matching as CSV" in page.text


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"filter": FILTER, "columns": "confirm_token"}, "no such column: confirm_token"),
        ({"filter": "status=gone"}, "filter is not valid"),
    ],
)
def test_a_refused_export_of_all_matching_sends_nothing(
    client: Any, service: Any, session: str, people: None, fields: dict[str, str], message: str
) -> None:
    result = _post(client, session, "/admin/subscribers/export-matching", fields)
    assert result.status_code == 400
    assert message in unescape(result.text)
    assert _audit(service)[0][0] == "login"
