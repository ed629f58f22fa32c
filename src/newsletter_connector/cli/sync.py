"""``newsletter-connector sync``: the runner delivering queued events to the platform."""

from __future__ import annotations

import logging
import os
import signal
import threading
from datetime import timedelta
from types import FrameType
from wsgiref.simple_server import WSGIServer

import click

from ..http_client import REQUEST_DEADLINE_SECONDS
from ..observability.exposition import MULTIPROC_ENV
from ..observability.json_logs import configure_logging, json_active
from ..observability.runner_endpoint import serve_metrics
from ..settings import Settings
from ..sync.runner import SyncRunner
from .context import CliState, fail, pass_state, reports_errors

log = logging.getLogger(__name__)


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
@click.option(
    "--metrics-bind",
    metavar="HOST:PORT",
    help="Serve the runner's Prometheus metrics at http://HOST:PORT/metrics (bearer: the "
    "metrics_token setting, which must be set).",
)
@pass_state
@reports_errors
def sync(
    state: CliState,
    once: bool,
    poll_interval: float,
    request_deadline: float,
    lease_margin: float,
    metrics_bind: str | None,
) -> None:
    """Deliver queued events to the platform. Runs until SIGTERM/SIGINT, which finish the
    batch in flight and exit; with --once, delivers what is due and exits: status 0 when every
    batch sent was delivered (or nothing was due, or no connection is configured), 1 when a
    batch failed this attempt or the runner could not start. Refuses to start without an https
    base_url, unless the development setting allow_insecure_http_links allows http."""
    # Before prometheus_client is imported: the runner's counters stay in this process, out of
    # a web server's multiprocess directory it may have inherited (its /metrics would sum them).
    os.environ.pop(MULTIPROC_ENV, None)
    configure_logging(state.settings().log_format)
    service = state.service()
    metrics_server = start_metrics(service.settings, metrics_bind) if metrics_bind else None
    service.check_plugins(connection=True)
    runner = SyncRunner(
        service, deadline=request_deadline, lease_margin=timedelta(seconds=lease_margin)
    )
    if once:
        report = runner.run_once()
        runner.close()
        if not report.connected:
            say("no connection configured: nothing pushed, events stay queued")
            return
        retried = sum(1 for o in report.outcomes if o.result != "delivered")
        say(
            f"delivered {report.delivered_events} event(s) in "
            f"{len(report.outcomes) - retried} batch(es); {retried} batch(es) failed this attempt"
        )
        if retried:
            fail(f"{retried} batch(es) failed this attempt (newsletter-connector outbox status)")
        return
    stop = threading.Event()

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        log.info("signal %d: finishing the batch in flight", signum)
        stop.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    log.info("sync runner started")
    runner.run_forever(stop, poll_interval=poll_interval)
    if metrics_server is not None:
        metrics_server.shutdown()
    log.info("sync runner stopped")


def say(message: str) -> None:
    """The command's report: a line on stdout, or a log record with ``log_format = json``
    (so every line the command writes is JSON)."""
    if json_active():
        log.info(message)
    else:
        click.echo(message)


def start_metrics(settings: Settings, bind: str) -> WSGIServer:
    """Serve the runner's metrics on ``bind``, or exit 1 saying why not."""
    if settings.metrics_token is None:
        source = settings.source_of("metrics_token")
        fail(f"--metrics-bind needs the metrics_token setting ({source}), which is not set")
    try:
        return serve_metrics(bind, settings.metrics_token.get_secret_value())
    except ValueError as exc:
        fail(f"--metrics-bind {exc}")
    except OSError as exc:
        fail(f"--metrics-bind: cannot listen on {bind} ({exc.strerror})")
