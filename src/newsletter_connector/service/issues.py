"""Newsletter issues: digest runs, scheduled runs, and reading recorded issues.

A digest run validates its content (given, or from the ``newsletter_issue_content`` hook),
renders it with ``settings.issue_renderer`` (every body must carry ``{{unsubscribe_url}}``) and
stores the issue, with its ``newsletter.issue`` event in ``connector`` delivery mode, in one
transaction. Every check happens before anything is written.
"""

from __future__ import annotations

import builtins
import json
import logging
import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import date as Date
from datetime import datetime
from typing import Any

from ..errors import InvalidRequest, NewsletterError, NotFound
from ..i18n import N_, edition_date, edition_translations
from ..model.issue import IssueContent, issue_object, parse_content, parse_date
from ..plugin_manager import has_issue_content, issue_renderers, pick
from ..storage.outbox_records import SubscriberEventRecord
from ..storage.records import IssueRecord, NewIssue
from ..timeutil import to_naive_utc
from .context import ServiceContext
from .digest_schedule import ALL_KINDS, due_kinds, period_key
from .events import queue_event

log = logging.getLogger(__name__)

UNSUBSCRIBE_PLACEHOLDER = "{{unsubscribe_url}}"
#: The mark a test issue's subject starts with (in the site's language).
TEST_SUBJECT_PREFIX = N_("[TEST] ")
#: An issue's default subject by kind: ``{site}`` the site's name, ``{date}`` its date spelled
#: out, both in the site's language.
_SUBJECTS = {
    "weekly": N_("{site} weekly: the week of {date}"),
    "manual": N_("{site} special edition: {date}"),
}
_DAILY_SUBJECT = N_("{site}: {date}")
MAX_LIST_LIMIT = 500
DEFAULT_LIST_LIMIT = 100
#: The keyed-hash purpose of :meth:`IssueService.draft_seal`.
DRAFT_SEAL_PURPOSE = "issue-draft"


class IssueAlreadyRecorded(InvalidRequest):
    """A daily or weekly run for a period whose issue (``existing``) is recorded already;
    nothing was recorded."""

    def __init__(self, message: str, *, existing: IssueRecord | None) -> None:
        super().__init__(message, field="date")
        self.existing = existing


def default_subject(
    site_name: str, kind: str, day: Date, language: str = "en", catalog_dir: str | None = None
) -> str:
    """The subject of an issue whose content gives none, in ``language``."""
    words = edition_translations(language, catalog_dir)
    subject = words.gettext(_SUBJECTS.get(kind, _DAILY_SUBJECT))
    return subject.format(site=site_name, date=edition_date(day, language))


def test_mark(language: str = "en", catalog_dir: str | None = None) -> str:
    """What a test issue's subject starts with, in ``language``."""
    return edition_translations(language, catalog_dir).gettext(TEST_SUBJECT_PREFIX)


class IssueService:
    """Digest runs and recorded issues. Each operation is one transaction."""

    def __init__(self, context: ServiceContext) -> None:
        self.context = context

    # -- digest runs ---------------------------------------------------------------------------

    def run_digest(
        self,
        kind: str,
        date: str | Date | None = None,
        content: Any = None,
    ) -> IssueRecord:
        """Record one issue of ``kind`` and return it as stored.

        :param date: ``YYYY-MM-DD`` or a ``date``; today (UTC) by default.
        :param content: as the ``newsletter_issue_content`` hook returns it (asked when ``None``).
        :raises InvalidRequest: naming the bad field (``sections.topics[0].url``, ...) or
            ``issue_renderer``; nothing is recorded.
        :raises IssueAlreadyRecorded: a daily or weekly run for a period that has its issue.
        :raises PluginNotFound: ``settings.issue_renderer`` names no installed renderer.
        """
        if kind not in ALL_KINDS:
            raise InvalidRequest(f"kind must be one of {', '.join(ALL_KINDS)}", field="kind")
        issue_date = self._issue_date(date)
        period = period_key(kind, issue_date)
        if period is not None:
            self._refuse_if_recorded(kind, issue_date, period)
        parsed = parse_content(self._content(kind, issue_date, content))
        new_issue = self._build(kind, issue_date, parsed, period)
        pushed = self.context.settings.delivery_mode == "connector"
        if pushed:
            new_issue = replace(new_issue, event_id=str(uuid.uuid4()))
        with self.context.storage.transaction() as uow:
            record = uow.issues.add(new_issue)
            if record is None:
                existing = uow.issues.find_by_period(period) if period else None
                raise self._already(kind, issue_date, existing)
            if pushed:
                payload = issue_object(record, include_id=False, include_html=True)
                queue_event(
                    uow, self.context, "newsletter.issue", payload, event_id=record.event_id
                )
        log.info("recorded %s issue %s for %s", record.kind, record.id, record.issue_date)
        return record

    def deliveries(self, records: Sequence[IssueRecord]) -> dict[int, SubscriberEventRecord | None]:
        """What became of the ``newsletter.issue`` event queued with each of ``records``, by
        issue id: its delivery state, or ``None`` when the event is no longer stored (it was
        delivered and then pruned). Issues queued with no event are left out."""
        wanted = {record.id: record.event_id for record in records if record.event_id}
        with self.context.storage.transaction(write=False) as uow:
            found = uow.outbox.events_by_id(list(wanted.values()))
        return {issue_id: found.get(event_id) for issue_id, event_id in wanted.items()}

    def preview(self, kind: str, date: str | Date | None, content: Any) -> NewIssue:
        """The issue :meth:`run_digest` would record from ``content`` (rendered), recording
        nothing and queuing nothing. Raises as :meth:`run_digest` does, but for a period that
        already has its issue (a preview of that day's issue is still a preview)."""
        if kind not in ALL_KINDS:
            raise InvalidRequest(f"kind must be one of {', '.join(ALL_KINDS)}", field="kind")
        issue_date = self._issue_date(date)
        parsed = parse_content(content)
        return self._build(kind, issue_date, parsed, period_key(kind, issue_date))

    def suggested_content(self, kind: str, date: str | Date | None = None) -> Any:
        """What the content plugin offers for an issue of ``kind`` on ``date`` (to start a
        composed issue from), or ``None`` when no plugin answers."""
        issue_date = self._issue_date(date)
        return self.context.plugins.hook.newsletter_issue_content(
            kind=kind, date=issue_date.isoformat(), settings=self.context.settings
        )

    def draft_seal(self, kind: str, content: Any) -> str:
        """A keyed seal of an issue's ``content`` (and ``kind``): the composer carries it from
        the test issue it recorded to the real one, which it records only for the same content."""
        canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return self.context.keyed_hash(DRAFT_SEAL_PURPOSE, f"{kind}\n{canonical}")

    def run_scheduled_digests(self, now: datetime | None = None) -> builtins.list[IssueRecord]:
        """Record the daily and weekly issues due at ``now`` (UTC; default the service clock)
        whose period has none yet; return them, daily before weekly. Never raises, and is safe
        to call often from several runners: each period's issue is recorded once; a failed
        kind is logged and retried on the next call.
        """
        now = to_naive_utc(now) if now is not None else self.context.clock()
        recorded: builtins.list[IssueRecord] = []
        for kind in due_kinds(now):
            try:
                recorded.append(self.run_digest(kind, now.date()))
            except IssueAlreadyRecorded:
                continue  # recorded earlier, or by another runner just now
            except NewsletterError as exc:  # bad content, missing plugin, database down
                log.error(
                    "scheduled %s digest for %s failed: %s; will retry",
                    kind,
                    now.date(),
                    exc.message,
                )
            except Exception:  # a plugin's bug must not stop the runner
                log.exception("scheduled %s digest for %s failed; will retry", kind, now.date())
        return recorded

    # -- reading ---------------------------------------------------------------------------------

    def latest(self) -> IssueRecord:
        """The most recently recorded issue, with its bodies (:class:`NotFound`: none yet)."""
        with self.context.storage.transaction(write=False) as uow:
            record = uow.issues.latest()
        if record is None:
            raise NotFound("no issue has been built yet")
        return record

    def get(self, issue_id: int) -> IssueRecord:
        """The issue with ``issue_id``, with its bodies (:class:`NotFound`: no such issue)."""
        with self.context.storage.transaction(write=False) as uow:
            record = uow.issues.get(issue_id)
        if record is None:
            raise NotFound("no issue with that id")
        return record

    def content_plugin_installed(self) -> bool:
        """Whether a plugin supplies issue content (else a run needs the content passed)."""
        return has_issue_content(self.context.plugins)

    def list(
        self,
        limit: int = DEFAULT_LIST_LIMIT,
        include_html: bool = False,
        *,
        before_id: int | None = None,
    ) -> builtins.list[IssueRecord]:
        """Up to ``limit`` (1-500, else :class:`InvalidRequest`) issues, most recently recorded
        first, only those older than the issue ``before_id`` when given (the next page);
        ``html``/``text`` only with ``include_html``."""
        if (
            isinstance(limit, bool)
            or not isinstance(limit, int)
            or not 1 <= limit <= MAX_LIST_LIMIT
        ):
            raise InvalidRequest(f"limit must be between 1 and {MAX_LIST_LIMIT}", field="limit")
        with self.context.storage.transaction(write=False) as uow:
            return uow.issues.list_recent(limit, include_bodies=include_html, before_id=before_id)

    # -- steps of a run --------------------------------------------------------------------------

    def _issue_date(self, value: str | Date | None) -> Date:
        if value is None:
            return self.context.clock().date()
        if isinstance(value, datetime):
            return to_naive_utc(value).date()
        if isinstance(value, Date):
            return value
        if not isinstance(value, str):
            raise InvalidRequest("date must be a date in YYYY-MM-DD form", field="date")
        try:
            return parse_date(value.strip())
        except ValueError as exc:
            raise InvalidRequest(f"date {exc}", field="date") from None

    def _refuse_if_recorded(self, kind: str, issue_date: Date, period: str) -> None:
        with self.context.storage.transaction(write=False) as uow:
            existing = uow.issues.find_by_period(period)
        if existing is not None:
            raise self._already(kind, issue_date, existing)

    @staticmethod
    def _already(kind: str, issue_date: Date, existing: IssueRecord | None) -> IssueAlreadyRecorded:
        period = "week" if kind == "weekly" else "day"
        which = f" (issue {existing.id})" if existing is not None else ""
        return IssueAlreadyRecorded(
            f"the {kind} issue for the {period} of {issue_date.isoformat()} is already "
            f"recorded{which}; nothing was recorded (use kind manual for an extra edition)",
            existing=existing,
        )

    def _content(self, kind: str, issue_date: Date, content: Any) -> Any:
        if content is not None:
            return content
        supplied = self.context.plugins.hook.newsletter_issue_content(
            kind=kind, date=issue_date.isoformat(), settings=self.context.settings
        )
        if supplied is None:
            raise InvalidRequest(
                "no issue content: no plugin answered newsletter_issue_content for "
                f"kind {kind!r}; install a content plugin or pass the content explicitly "
                "(newsletter-connector digest --content FILE.json)",
                field="content",
            )
        return supplied

    def _build(
        self, kind: str, issue_date: Date, content: IssueContent, period: str | None
    ) -> NewIssue:
        settings = self.context.settings
        subject = content.subject.strip() if content.subject else None
        language, catalogs = settings.language, settings.catalog_dir
        subject = subject or default_subject(
            settings.site_name, kind, issue_date, language, catalogs
        )
        mark = test_mark(language, catalogs)
        if kind == "test" and not subject.startswith(mark):
            subject = mark + subject
        unrendered: dict[str, Any] = {
            "kind": kind,
            "cadence": kind,
            "date": issue_date.isoformat(),
            "subject": subject,
            "site_url": settings.effective_site_url,
            "postal_address": settings.postal_address,
            "sections": content.sections(),
        }
        html, text = self._render(unrendered)
        return NewIssue(
            uuid=str(uuid.uuid4()),
            kind=kind,
            cadence=unrendered["cadence"],
            issue_date=unrendered["date"],
            subject=subject,
            site_url=unrendered["site_url"],
            postal_address=unrendered["postal_address"],
            sections=unrendered["sections"],
            html=html,
            text=text,
            period_key=period,
            created_at=self.context.clock(),
        )

    def _render(self, issue: dict[str, Any]) -> tuple[str, str | None]:
        settings = self.context.settings
        renderer = pick(
            "issue renderer", issue_renderers(self.context.plugins), settings.issue_renderer
        )
        html = renderer.render(dict(issue), settings)
        _check_body(renderer.name, "HTML", html)
        text = None
        if renderer.render_text is not None:
            text = renderer.render_text(dict(issue), settings)
            _check_body(renderer.name, "plain text", text)
        return html, text


def _check_body(renderer: str, what: str, body: Any) -> None:
    if not isinstance(body, str) or not body.strip():
        raise InvalidRequest(
            f"issue renderer {renderer!r} returned no {what}", field="issue_renderer"
        )
    if UNSUBSCRIBE_PLACEHOLDER not in body:
        raise InvalidRequest(
            f"issue renderer {renderer!r} returned {what} without the literal "
            f"{UNSUBSCRIBE_PLACEHOLDER} placeholder, so no recipient could unsubscribe",
            field="issue_renderer",
        )
