"""``newsletter-connector sync`` and ``newsletter-connector outbox ...``: the runner and its
operator tools, registered on the main click group by :mod:`newsletter_connector.cli`."""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType

import click

from .cli import CliState, fail, pass_state, reports_errors
from .sync.http import REQUEST_DEADLINE_SECONDS
from .sync.metrics import render_metrics
from .sync.runner import SyncRunner
from .timeutil import isoformat_z


@click.command("sync")
@click.option("--once", is_flag=True, help="Deliver what is due now, then exit.")
@click.option(
    "--poll-interval",
    default=5.0,
    show_default=True,
    type=click.FloatRange(0.05, 3600),
    help="Seconds between loops when idle.",
)
@click.option(
    "--request-deadline",
    default=REQUEST_DEADLINE_SECONDS,
    type=click.FloatRange(0.1, REQUEST_DEADLINE_SECONDS),
    hidden=True,
    help="Total seconds per request (tests shorten it; the contract is 15).",
)
@click.option(
    "--lease-margin",
    default=30.0,
    type=click.FloatRange(0.0, 3600),
    hidden=True,
    help="Seconds a lease outlives the requests' deadlines.",
)
@pass_state
@reports_errors
def sync(
    state: CliState, once: bool, poll_interval: float, request_deadline: float, lease_margin: float
) -> None:
    """Deliver queued events to the platform. Runs until SIGTERM/SIGINT, which finish the
    batch in flight and exit; with --once, delivers what is due and exits. Refuses to start
    without an https base_url, unless the development setting allow_insecure_http_links
    allows http."""
    from datetime import timedelta

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    service = state.service()
    runner = SyncRunner(
        service, deadline=request_deadline, lease_margin=timedelta(seconds=lease_margin)
    )
    if once:
        report = runner.run_once()
        runner.close()
        if not report.connected:
            click.echo("no connection configured: nothing pushed, events stay queued")
            return
        retried = sum(1 for o in report.outcomes if o.result != "delivered")
        click.echo(
            f"delivered {report.delivered_events} event(s) in "
            f"{len(report.outcomes) - retried} batch(es); {retried} batch(es) failed this attempt"
        )
        return
    stop = threading.Event()

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        logging.getLogger(__name__).info("signal %d: finishing the batch in flight", signum)
        stop.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    click.echo("sync runner started", err=True)
    runner.run_forever(stop, poll_interval=poll_interval)
    click.echo("sync runner stopped", err=True)


@click.group("outbox")
def outbox() -> None:
    """The outbound event queue: status, failed batches, replay, metrics."""


@outbox.command("status")
@pass_state
@reports_errors
def outbox_status(state: CliState) -> None:
    """Counts by state, age of the oldest pending event, last error."""
    service = state.service()
    with service.storage.transaction(write=False) as uow:
        status = uow.outbox.status()
    now = service.context.clock()
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
    service = state.service()
    with service.storage.transaction(write=False) as uow:
        records = uow.outbox.failed_batches(after=after, limit=limit)
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
    service = state.service()
    with service.storage.transaction() as uow:
        if batch_id is not None:
            record = uow.outbox.get_batch(batch_id)
            if record is None:
                fail(f"no batch with id {batch_id!r}")
            elif record.state != "failed":
                fail(f"batch {batch_id} is {record.state}, not failed; only failed batches replay")
        count = uow.outbox.replay_failed(batch_id, at=service.context.clock())
    click.echo(f"replayed {count} batch(es); they go out on the next sync")


@outbox.command("metrics")
@pass_state
@reports_errors
def outbox_metrics(state: CliState) -> None:
    """Print the status figures in Prometheus text format."""
    service = state.service()
    with service.storage.transaction(write=False) as uow:
        status = uow.outbox.status()
    click.echo(render_metrics(status, service.context.clock()), nl=False)


COMMANDS = (sync, outbox)
