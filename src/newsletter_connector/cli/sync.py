"""``newsletter-connector sync``: the runner delivering queued events to the platform."""

from __future__ import annotations

import logging
import signal
import threading
from datetime import timedelta
from types import FrameType

import click

from ..sync.http import REQUEST_DEADLINE_SECONDS
from ..sync.runner import SyncRunner
from .context import CliState, fail, pass_state, reports_errors


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
    batch in flight and exit; with --once, delivers what is due and exits: status 0 when every
    batch sent was delivered (or nothing was due, or no connection is configured), 1 when a
    batch failed this attempt or the runner could not start. Refuses to start without an https
    base_url, unless the development setting allow_insecure_http_links allows http."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    service = state.service()
    service.check_plugins(connection=True)
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
        if retried:
            fail(f"{retried} batch(es) failed this attempt (newsletter-connector outbox status)")
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
