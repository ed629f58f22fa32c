"""Acts on every subscriber matching the list's filter ("all N matching"): a confirm step
(erasing asks for the number shown to be typed), then a bulk job the sync runner works
through (:class:`~...service.subscriber_jobs.SubscriberJobService`), audited once when it is
asked for, with the filter and the number; its progress page, the recent jobs, and stopping
one.

The list's form posts its own query (``filter``); the confirm step counts the matches as the
list does (exact, or an estimate said as one) and the job keeps that number to show progress
against. A job acts only on subscribers who signed up before it was asked for. Exporting all
matching is no job: the CSV streams as the list is walked.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

import falcon

from ...errors import InvalidRequest, NotFound
from ...service import subscriber_jobs as bulk_kind
from ...service.subscriber_export import csv_chunks
from ...service.subscriber_list import MatchCount
from ...storage.bulk_jobs import BulkJobRecord
from .act import ActCall, Done, posted_id
from .base import AdminPages
from .gate import OutsideRole, signed_in
from .paths import SUBSCRIBER_JOB_STOP, SUBSCRIBER_JOBS, SUBSCRIBERS, SUBSCRIBERS_ALL
from .roles import may_stop
from .runner_words import runner_quiet
from .subscriber_bulk import chosen_columns, list_url, nothing_changed, owners_only
from .subscriber_filter import FILTER_PARAMS, ListRequest, parse_list_request, without_people
from .subscriber_words import when
from .subscribers import FILTER_CHOICES, answer_csv, how_many

#: act -> (the question, the button's words, what the job does, in the progress page's words).
ALL_WORDS = {
    "unsubscribe": ("Unsubscribe {n}?", "Unsubscribe them", "Unsubscribing"),
    "bounce": ("Mark {n} bounced?", "Mark them bounced", "Marking bounced"),
    "erase": ("Erase everything stored about {n}?", "Erase them", "Erasing"),
}
#: act -> what a finished job did, as its page's title says it.
DONE_WORDS = {"unsubscribe": "Unsubscribed", "bounce": "Marked bounced", "erase": "Erased"}
#: The filter's parameters in the words of the list's form.
FILTER_LABELS = {
    "address": "address begins with",
    "name": "first or last name begins with",
    "status": "status",
    "category": "topic they follow",
    "zip": "ZIP code begins with",
    "age": "age",
    "sms": "agreed to text messages",
    "from": "signed up on or after",
    "to": "signed up on or before",
    **{name: f"{label.lower()}" for name, label in FILTER_CHOICES["topics"]},
}
#: Where each parameter's values get their labels (the rest are shown as typed).
_VALUE_LABELS = {
    "status": "status",
    "category": "category",
    "age": "age",
    "sms": "sms",
    **{name: "cadence" for name, _label in FILTER_CHOICES["topics"]},
}


def job_path(job_id: int) -> str:
    """The app path of a job's progress page."""
    return f"{SUBSCRIBER_JOBS}/{job_id}"


def all_path(act: str) -> str:
    """The app path the confirm step of ``act`` on all matching posts to."""
    return f"{SUBSCRIBERS_ALL}/{act}"


def filter_words(values: dict[str, str]) -> list[str]:
    """The filter's set parameters as "label: value" phrases, in the form's order."""
    words = []
    for name in FILTER_PARAMS:
        value = values.get(name)
        if not value:
            continue
        choices = dict(FILTER_CHOICES.get(_VALUE_LABELS.get(name, ""), []))
        words.append(f"{FILTER_LABELS[name]}: {choices.get(value, value)}")
    return words


def _people(count: MatchCount | None, expected: int | None, exact: bool) -> str:
    """ "1,234 subscribers", "about 1,234 subscribers", "at least ...": the count, or the
    number kept from it."""
    if count is not None:
        words = how_many(count)
        one = count.exact and count.number == 1
    else:
        words = f"{expected:,}" if exact else f"about {expected:,}"
        one = exact and expected == 1
    return f"{words} subscriber{'' if one else 's'}"


def _wanted(call: ActCall) -> ListRequest:
    """The list's filter as posted back (``filter``); refused when it does not parse."""
    text = call.form.get("filter")[:2000]
    wanted = parse_list_request(dict(parse_qsl(text)))
    if wanted.errors:
        raise InvalidRequest("the list's filter is not valid: show the list again", field="filter")
    return wanted


def _number(count: MatchCount) -> int:
    return count.at_least if count.number is None else count.number


def confirm_all(call: ActCall) -> Done:
    """The list's "all matching" buttons: the confirm step of the chosen act on every
    subscriber matching the list's filter. Changes nothing (not audited); an editor choosing to
    erase gets the 403 page (erasing in bulk is for owners)."""
    act = call.form.get("act")
    if act not in ALL_WORDS:
        raise InvalidRequest("choose unsubscribe, mark bounced or erase", field="act")
    owners_only(call, all_path(act))
    wanted = _wanted(call)
    count = call.service.subscriber_list.count(wanted.filter)
    if _number(count) == 0:
        raise InvalidRequest("no subscriber matches this filter", field="filter")
    return Done(None, answer=lambda: _confirm_page(call, act, wanted, count))


def _confirm_page(
    call: ActCall,
    act: str,
    wanted: ListRequest,
    count: MatchCount | None = None,
    *,
    expected: int | None = None,
    exact: bool = True,
    error: str | None = None,
) -> None:
    question, button, _doing = ALL_WORDS[act]
    if count is not None:
        expected, exact = _number(count), count.exact
    assert expected is not None
    call.pages.show(
        call.req,
        call.resp,
        call.admin,
        "subscribers_all.html",
        status=falcon.HTTP_400 if error else falcon.HTTP_200,
        current="Subscribers",
        act=act,
        question=question.format(n=_people(count, expected, exact)),
        button=button,
        words=filter_words(wanted.values),
        filter=call.form.get("filter")[:2000],
        expected=expected,
        exact=exact,
        error=error,
        action_url=call.pages.url(all_path(act)),
        cancel_url=call.pages.url(list_url(call)),
    )


def _expected(call: ActCall) -> tuple[int, bool]:
    text = call.form.get("expected")
    expected = int(text) if text.isascii() and text.isdigit() and len(text) < 10 else 0
    if expected == 0:
        raise InvalidRequest("the number matching is missing: start again", field="expected")
    return expected, call.form.get("exact") == "yes"


def start_all(call: ActCall, act: str) -> Done:
    """Queue ``act`` on every subscriber matching the posted filter; erasing needs the number
    shown typed (``confirm_count``). Audited once: the number as target, the filter as
    detail; then the job's progress page."""
    wanted = _wanted(call)
    expected, exact = _expected(call)
    if act == "erase" and call.form.get("confirm_count").strip().replace(",", "") != str(expected):
        raise InvalidRequest(
            f"type {expected}, the number of subscribers to erase, to confirm",
            field="confirm_count",
        )
    kept = without_people(wanted.values) if act == "erase" else wanted.values
    job = call.service.subscriber_jobs.start(
        act,
        wanted.filter,
        filter_text=urlencode(kept),
        requested_by=call.admin.name,
        expected=expected,
        expected_exact=exact,
    )
    shown = "; ".join(filter_words(kept)) or "everyone"
    return Done(
        f"all {expected:,} matching" if exact else f"about {expected:,} matching",
        flash="Queued: the sync runner works through them; this page shows how far it got.",
        redirect_to=job_path(job.id),
        detail=f"bulk act {job.id}; filter: {shown}"[:500],
    )


def all_refused(call: ActCall, problem: InvalidRequest) -> None:
    """The confirm step again (400) with the reason; nothing changed. A filter or number
    that cannot be read has no confirm step: the message page says so."""
    act = call.req.path.rsplit("/", 1)[-1]
    if act not in ALL_WORDS or problem.field in ("filter", "expected", "act"):
        nothing_changed(call, problem)
        return
    expected, exact = _expected(call)
    _confirm_page(call, act, _wanted(call), expected=expected, exact=exact, error=problem.message)


def export_matching(call: ActCall) -> Done:
    """Every subscriber matching the posted filter, whatever their status, as a CSV
    attachment with the chosen ``columns``, streamed newest first. Audited once: the number
    matching as the list counts it as target, the filter in words and the columns as
    detail."""
    wanted = _wanted(call)
    columns = chosen_columns(call)
    subscribers = call.service.subscribers
    count = call.service.subscriber_list.count(wanted.filter)
    records = call.service.subscriber_list.walk(wanted.filter)
    shown = "; ".join(filter_words(wanted.values)) or "everyone"
    return Done(
        f"all {how_many(count)} matching",
        answer=lambda: answer_csv(
            call, "matching", csv_chunks(subscribers, records, columns=columns)
        ),
        detail=f"filter: {shown}; columns: {' '.join(columns)}"[:500],
    )


def stop_job(call: ActCall) -> Done:
    """Stop the form's job (a 404 for no such job): the chunk in flight is undone, the
    subscribers done stay done. Only the admin who asked for it or an owner may stop it (the
    403 page for anyone else)."""
    job_id = posted_id(call, "job_id")
    try:
        job = call.service.subscriber_jobs.get(job_id)
    except NotFound:
        raise falcon.HTTPNotFound() from None
    if not may_stop(call.admin, job.requested_by):
        raise OutsideRole(call.admin, stop_words(job))
    stopped = call.service.subscriber_jobs.stop(job_id, by=call.admin.name)
    return Done(
        f"bulk act {job_id}",
        flash="Stopped." if stopped else "It had already ended.",
        redirect_to=job_path(job_id),
    )


def stop_words(job: BulkJobRecord) -> str:
    """Who may stop ``job``, for an admin who may not."""
    return (
        f"Only {job.requested_by}, who asked for this act, or one of the newsletter's owners "
        "can stop it."
    )


def _title(job: BulkJobRecord) -> str:
    """ "Unsubscribing 7 subscribers" while it runs, "Unsubscribed 7 subscribers" once done,
    and "Unsubscribing 7 subscribers: stopped" when it was stopped."""
    people = _people(None, job.expected, job.expected_exact)
    if job.stopped_by:
        return f"{ALL_WORDS[job.act][2]} {people}: stopped"
    if job.finished_at:
        return f"{DONE_WORDS[job.act]} {people}"
    return f"{ALL_WORDS[job.act][2]} {people}"


def job_words(job: BulkJobRecord) -> dict[str, object]:
    """A job as its pages show it."""
    wanted = parse_list_request(dict(parse_qsl(job.filter_text)))
    if job.stopped_by:
        state = f"Stopped by {job.stopped_by} at {when(job.finished_at)}."
    elif job.finished_at:
        state = f"Finished at {when(job.finished_at)}."
    elif job.started_at:
        state = "Under way."
    else:
        state = "Waiting for the sync runner to start it."
    return {
        "id": job.id,
        "doing": ALL_WORDS[job.act][2],
        "title": _title(job),
        "words": filter_words(wanted.values) or ["everyone"],
        "expected": job.expected if job.expected_exact else None,
        "about": job.expected,
        "done": job.done,
        "progress": bulk_kind.progress(job),
        "changed": job.changed,
        "unchanged": job.unchanged,
        "missing": job.missing,
        "requested": f"{job.requested_by} at {when(job.requested_at)}",
        "state": state,
        "finished": job.finished_at is not None,
    }


class SubscriberJobPage:
    """GET: one job's progress, in words, with a way to stop it while it runs for the admin
    who asked for it and for owners, and who else may stop it for the rest (404 for no such
    job)."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response, job_id: int) -> None:
        try:
            job = self.pages.service.subscriber_jobs.get(job_id)
        except NotFound:
            raise falcon.HTTPNotFound() from None
        admin = signed_in(req)
        self.pages.show(
            req,
            resp,
            admin,
            "subscriber_job.html",
            current="Subscribers",
            job=job_words(job),
            stop_refused=None if may_stop(admin, job.requested_by) else stop_words(job),
            runner_quiet=None
            if job.finished_at
            else runner_quiet(self.pages.service.runner_status.seen()),
            page_url=self.pages.url(job_path(job_id)),
            stop_url=self.pages.url(SUBSCRIBER_JOB_STOP),
            jobs_url=self.pages.url(SUBSCRIBER_JOBS),
        )


class SubscriberJobsPage:
    """GET: the recent bulk acts on all matching, newest first."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        jobs = self.pages.service.subscriber_jobs.recent(20)
        self.pages.show(
            req,
            resp,
            signed_in(req),
            "subscriber_jobs.html",
            current="Subscribers",
            jobs=[{**job_words(job), "url": self.pages.url(job_path(job.id))} for job in jobs],
            list_url=self.pages.url(SUBSCRIBERS),
        )
