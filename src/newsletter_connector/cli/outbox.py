"""``newsletter-connector outbox ...``: the operator's tools for the outbound event queue."""

from __future__ import annotations

import click

from ..https_rule import without_credentials
from ..observability.exposition import render
from ..observability.outbox_collector import OutboxCollector
from ..timeutil import isoformat_z
from .context import CliState, fail, pass_state, reports_errors


@click.group("outbox")
def outbox() -> None:
    """The outbound event queue: status, failed batches, replay, retry-now, metrics."""


@outbox.command("status")
@pass_state
@reports_errors
def outbox_status(state: CliState) -> None:
    """The platform connection, counts by state, age of the oldest pending event, last
    error."""
    service = state.service()
    status = service.admin.outbox_status()
    now = service.context.clock()
    connection = service.admin.connection()
    if connection is None:
        click.echo(
            "platform connection: none configured: events stay queued until one is set "
            "(newsletter-connector connection set)"
        )
    else:
        shown = without_credentials(connection.platform_base)
        click.echo(f"platform connection: {shown} via {connection.transport}")
    click.echo(f"queued (not yet batched): {status.unbatched} event(s)")
    for name in ("pending", "sending", "delivered", "failed"):
        click.echo(f"{name}: {status.batches.get(name, 0)} batch(es)")
    click.echo(f"undelivered events: {status.undelivered_events}")
    click.echo(f"failed events: {status.failed_events}")
    if status.oldest_pending_at is None:
        click.echo("oldest pending event: none")
    else:
        age = int((now - status.oldest_pending_at).total_seconds())
        click.echo(f"oldest pending event: {isoformat_z(status.oldest_pending_at)} ({age} s old)")
    click.echo(f"last error: {status.last_error or 'none'}")


@outbox.command("failed")
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 1000))
@click.option("--after", help="Show batches after this batch id (keyset paging).")
@pass_state
@reports_errors
def outbox_failed(state: CliState, limit: int, after: str | None) -> None:
    """List failed batches: id, events, attempts, when it gave up, last error."""
    records = state.service().admin.failed_batches(after=after, limit=limit)
    if not records:
        click.echo("no failed batches")
        return
    for record in records:
        click.echo(
            f"{record.id}\t{record.event_count} event(s)\t{record.attempts} attempt(s)\t"
            f"failed {isoformat_z(record.settled_at)}\t{record.last_error or ''}"
        )
    if len(records) == limit:
        click.echo(f"more: outbox failed --after {records[-1].id}", err=True)


@outbox.command("replay")
@click.argument("batch_id", required=False)
@click.option("--all", "replay_all", is_flag=True, help="Replay every failed batch.")
@pass_state
@reports_errors
def outbox_replay(state: CliState, batch_id: str | None, replay_all: bool) -> None:
    """Put a failed batch (or --all) back in the queue with a fresh retry ladder.

    The batch keeps its events and their ids, so the platform can de-duplicate.
    """
    if bool(batch_id) == replay_all:
        fail("give exactly one of BATCH_ID or --all")
    count = state.service().admin.replay_failed_batches(batch_id)
    state.audit("outbox.replay", batch_id or f"{count} failed batch(es)")
    click.echo(f"replayed {count} batch(es); they go out on the next sync")


@outbox.command("retry-now")
@pass_state
@reports_errors
def outbox_retry_now(state: CliState) -> None:
    """Send batches waiting for their next attempt on the next sync, keeping their attempts.

    For when the platform is back before the retry ladder's next rung. Failed batches are not
    touched (that is outbox replay).
    """
    count = state.service().admin.retry_outbox_now()
    state.audit("outbox.retry_now", f"{count} batch(es)")
    click.echo(f"{count} waiting batch(es) are due now; they go out on the next sync")


@outbox.command("metrics")
@pass_state
@reports_errors
def outbox_metrics(state: CliState) -> None:
    """Print the status figures in Prometheus text format."""
    collector = OutboxCollector(state.service())
    click.echo(render(collector).decode(), nl=False)
