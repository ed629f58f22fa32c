"""``newsletter-connector subscribers ...``: the operator's acts on one subscriber."""

from __future__ import annotations

import json

import click

from ..errors import NotFound
from ..service import NewsletterService
from ..service.feedback import SUPPRESSION_WORDS
from ..service.subscribers import STATUS_AFTER
from ..storage.records import SubscriberRecord
from ..timeutil import isoformat_z
from .context import CliState, fail, pass_state, reports_errors
from .subscriber_import import subscribers_import


@click.group("subscribers")
def subscribers() -> None:
    """Subscribers: import a list; show, mark bounced, unsubscribe or resend the confirmation
    of one."""


@subscribers.command("show")
@click.argument("email")
@pass_state
@reports_errors
def subscribers_show(state: CliState, email: str) -> None:
    """Print EMAIL's contact as the Newsletter API returns it (link tokens hidden), then what
    the platform reported about the address. Exit status 1 when no subscriber has EMAIL."""
    service = state.service()
    reports = service.feedback.about(email)
    record = _find(service, email)
    if record is None:
        if reports.suppression is not None:
            kind = reports.suppression.kind
            fail(
                f"no subscriber with that address; suppressed after {SUPPRESSION_WORDS[kind]} "
                f"on {isoformat_z(reports.suppression.occurred_at)}, reported by the platform or "
                f"imported (adding it stores it as {STATUS_AFTER[kind]})"
            )
        fail("no subscriber with that address")
    contact = service.subscribers.shown_contact(record)
    click.echo(json.dumps(contact, indent=2, ensure_ascii=False))
    if not reports.items:
        click.echo("platform reports: none")
        return
    click.echo("platform reports:")
    for item in reports.items:
        reason = f" ({item.reason})" if item.reason else ""
        click.echo(
            f"  {isoformat_z(item.occurred_at)} {item.kind}{reason}: {item.outcome}, "
            f"received {isoformat_z(item.received_at)}"
        )


@subscribers.command("bounce")
@click.argument("email")
@pass_state
@reports_errors
def subscribers_bounce(state: CliState, email: str) -> None:
    """Mark EMAIL hard-bounced: a pending or confirmed subscriber becomes bounced and
    ``newsletter.bounced`` is queued; bounced or unsubscribed stays as it is. Exit status 1
    when no subscriber has EMAIL."""
    service = state.service()
    before = _existing(service, email)
    after = service.subscribers.mark_bounced(email)
    state.audit("subscriber.bounce", after.email)
    _report(before, after, "newsletter.bounced")


@subscribers.command("unsubscribe")
@click.argument("email")
@pass_state
@reports_errors
def subscribers_unsubscribe(state: CliState, email: str) -> None:
    """Unsubscribe EMAIL: any status becomes unsubscribed and ``newsletter.unsubscribed`` is
    queued; already unsubscribed stays as it is. Exit status 1 when no subscriber has EMAIL."""
    service = state.service()
    before = _existing(service, email)
    after = service.subscribers.unsubscribe(email)
    state.audit("subscriber.unsubscribe", after.email)
    _report(before, after, "newsletter.unsubscribed")


@subscribers.command("resend-confirmation")
@click.argument("email")
@pass_state
@reports_errors
def subscribers_resend_confirmation(state: CliState, email: str) -> None:
    """Ask the platform to send pending EMAIL's confirmation email again: queues
    ``newsletter.signup``, at most once per ``confirmation_resend_interval`` since the last
    announcement (a signup, a re-submitted signup or a resend). Exit status 1 when no
    subscriber has EMAIL or it is not pending."""
    service = state.service()
    result = service.subscribers.resend_confirmation(_existing(service, email).email)
    state.audit("subscriber.resend_confirmation", result.record.email)
    if not result.queued:
        click.echo(
            "subscriber: announced less than confirmation_resend_interval ago; nothing queued"
        )
        return
    click.echo("subscriber: pending; newsletter.signup queued")


def _find(service: NewsletterService, email: str) -> SubscriberRecord | None:
    try:
        return service.subscribers.get(email)
    except NotFound:
        return None


def _existing(service: NewsletterService, email: str) -> SubscriberRecord:
    record = _find(service, email)
    if record is None:
        fail("no subscriber with that address")
    return record


def _report(before: SubscriberRecord, after: SubscriberRecord, event: str) -> None:
    """One line, without the address (the output may be logged)."""
    if after.status == before.status:
        click.echo(f"subscriber: already {after.status}; nothing changed")
    else:
        click.echo(f"subscriber: {before.status} -> {after.status}; {event} queued")


subscribers.add_command(subscribers_import)
