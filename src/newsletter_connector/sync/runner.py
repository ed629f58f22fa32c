"""The sync runner: claim frozen batches, deliver them outside any transaction, settle them.

Guarantees (the whole story: docs/delivery.md):

- One sender per batch: a claim leases its batches for every request's deadline (the batches
  are sent one after the other) plus :data:`LEASE_MARGIN`; an expired lease (a dead runner)
  returns them to pending, due at once, on any runner's next loop.
- At least once, with stable event ids: a crash between a request and its settle resends up
  to a claim's worth of batches, which the platform de-duplicates.
- 2xx settles a batch as delivered; anything else takes the next rung of the retry ladder
  (:mod:`.schedule`), failed after 20 attempts. Settling is fenced by the claim's lease.
- Nothing is pushed without a connection (events stay queued). A stop request, or a removed or
  changed connection (re-read every loop and every :data:`CONNECTION_RECHECK_SECONDS` while
  sending), finishes the batch in flight and releases the unsent rest with no attempt counted.

With the ``tracing`` setting on, each loop is a ``newsletter.sync.run`` span and each of its
steps (periodic task, lease release, prune, claim, deliver, settle) a child span
(docs/operations.md, "Tracing").
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import httpx

from ..errors import NewsletterError
from ..http_client import REQUEST_DEADLINE_SECONDS, build_http_client
from ..https_rule import carries_credentials, scheme_allowed, without_credentials
from ..observability.instruments import record_connected, record_outcomes
from ..plugin_manager import outbound_transports, pick
from ..storage.access_records import ConnectionRecord
from ..storage.outbox_records import ClaimedBatch
from ..storage.transport import MAX_BATCH_SIZE, DeliveryError, Transport, header_safe_token
from ..tracing import error_type, mark_error, span, tracer_for
from .periodic import PeriodicTask, default_periodic_tasks
from .settle import BatchOutcome, SentBatch, settle

if TYPE_CHECKING:
    from ..service import NewsletterService

log = logging.getLogger(__name__)

#: Extra lease time beyond the requests' deadlines (settling, clock skew between runners).
LEASE_MARGIN = timedelta(seconds=30)
#: Delivered batches (and the contact records they carry) are deleted this long after delivery.
DELIVERED_RETENTION = timedelta(days=7)
#: Stored errors are cut to this length.
MAX_ERROR_LENGTH = 500
#: Requests' worth of batches leased by one claim (one transaction, which also settles the
#: previous one): more amortises the database work, fewer shortens a dead runner's leases.
CLAIM_AHEAD = 10
#: Seconds between re-reads of the connection while sending (not per batch: bench.sync).
CONNECTION_RECHECK_SECONDS = 1.0


@dataclass
class RunReport:
    """What one :meth:`SyncRunner.run_once` did."""

    connected: bool = False
    released_leases: int = 0
    pruned_batches: int = 0
    outcomes: list[BatchOutcome] = field(default_factory=list)
    task_errors: int = 0

    @property
    def delivered_events(self) -> int:
        return sum(o.events for o in self.outcomes if o.result == "delivered")


class SyncRunner:
    """Delivers the outbox of ``service`` to its configured platform connection.

    :param deadline: total seconds per HTTP request.
    :param http_transport: builds the httpx transport (tests: :class:`httpx.MockTransport`).
    :param connection_recheck: 0 re-reads the connection before every batch.
    """

    def __init__(
        self,
        service: NewsletterService,
        *,
        deadline: float = REQUEST_DEADLINE_SECONDS,
        clock: Callable[[], datetime] | None = None,
        periodic_tasks: Iterable[PeriodicTask] | None = None,
        http_transport: Callable[[], httpx.BaseTransport] | None = None,
        lease_margin: timedelta = LEASE_MARGIN,
        claim_ahead: int = CLAIM_AHEAD,
        connection_recheck: float = CONNECTION_RECHECK_SECONDS,
    ) -> None:
        """:raises SettingsError: ``base_url`` is unset, or http while
        ``allow_insecure_http_links`` is off (queued records carry links built from it), or
        ``scheduled_digests`` is on without a content plugin.
        :raises PluginNotFound: the issue renderer the settings name is not installed."""
        service.settings.require_https_links()
        service.check_plugins()
        self.service = service
        self.deadline = deadline
        self.clock = clock or service.context.clock
        self.periodic_tasks: list[PeriodicTask] = (
            default_periodic_tasks(service) if periodic_tasks is None else list(periodic_tasks)
        )
        self.http_transport = http_transport
        self.lease_margin = lease_margin
        self.claim_ahead = max(1, claim_ahead)
        self.connection_recheck = connection_recheck
        self._cached: tuple[ConnectionRecord, Transport, httpx.Client] | None = None
        self._claims_thread: ThreadPoolExecutor | None = None
        self._checked_at = float("-inf")  # time.monotonic() of the last connection read
        self._tracer = tracer_for(service.settings)
        self._unconnected_said = False

    def __repr__(self) -> str:
        return f"SyncRunner(service={self.service!r}, deadline={self.deadline:g})"

    # -- pieces of a loop ----------------------------------------------------------------------

    def run_periodic_tasks(self) -> int:
        """Call every periodic task once; return how many raised (each is logged)."""
        errors = 0
        for task in self.periodic_tasks:
            try:
                with span(
                    self._tracer,
                    "newsletter.sync.periodic",
                    {"code.function.name": task_name(task)},
                ):
                    task(self.clock())
            except Exception:
                errors += 1
                log.exception("periodic task %r failed", task)
        return errors

    def release_expired_leases(self) -> int:
        with (
            span(self._tracer, "newsletter.sync.release_leases") as current,
            self.service.storage.transaction() as uow,
        ):
            released = uow.outbox.release_expired_leases(now=self.clock())
            if current is not None:
                current.set_attribute("newsletter.sync.released_batches", released)
        if released:
            log.warning("%d batch lease(s) expired (a runner died?); returned to pending", released)
        return released

    def prune_delivered(self) -> int:
        """Delete delivered batches older than :data:`DELIVERED_RETENTION` (bounded per loop)."""
        with (
            span(self._tracer, "newsletter.sync.prune") as current,
            self.service.storage.transaction() as uow,
        ):
            pruned = uow.outbox.prune_delivered(settled_before=self.clock() - DELIVERED_RETENTION)
            if current is not None:
                current.set_attribute("newsletter.sync.pruned_batches", pruned)
            return pruned

    def transport(self, *, max_age: float = 0.0) -> Transport | None:
        """The transport for the active connection; ``None`` when none is configured or it
        is not allowed (plain http without ``allow_insecure_http_delivery``, credentials
        in its address, or a token no HTTP header can carry).

        :param max_age: reuse the last answer if the connection was read within these seconds.
        """
        if max_age > 0 and time.monotonic() - self._checked_at < max_age:
            return self._cached[1] if self._cached is not None else None
        connection = self.service.admin.connection()
        self._checked_at = time.monotonic()
        if connection is None:
            self._close_client()
            return None
        if self._cached is not None and self._cached[0] == connection:
            return self._cached[1]
        self._close_client()
        settings = self.service.settings
        shown = without_credentials(connection.platform_base)
        if not scheme_allowed(
            connection.platform_base, allow_http=settings.allow_insecure_http_delivery
        ):
            log.error("connection %s is not https; nothing is pushed", shown)
            return None
        if carries_credentials(connection.platform_base):
            log.error(
                "connection %s carries credentials in its address; nothing is pushed "
                "(set the connection again without them)",
                shown,
            )
            return None
        if not header_safe_token(connection.token):
            log.error(
                "the token of connection %s has characters an HTTP header cannot carry; "
                "nothing is pushed (set the connection again with a new token)",
                shown,
            )
            return None
        descriptor = pick(
            "outbound transport",
            outbound_transports(self.service.context.plugins),
            connection.transport,
        )
        client = build_http_client(settings, deadline=self.deadline, inner=self.http_transport)
        transport: Transport = descriptor.factory(connection, client)
        configure = getattr(transport, "configure", None)
        if callable(configure):
            configure(settings)
        self._cached = (connection, transport, client)
        return transport

    def lease_for(self, transport: Transport, batches: int = 1) -> timedelta:
        """How long a claim of ``batches`` (sent one after the other) lasts."""
        return timedelta(seconds=self.deadline * requests_per_batch(transport) * batches) + (
            self.lease_margin
        )

    def batches_per_claim(self, transport: Transport) -> int:
        """How many batches one claim takes: :attr:`claim_ahead` requests' worth, at least one."""
        return max(1, self.claim_ahead // requests_per_batch(transport))

    def deliver_due(
        self, transport: Transport, *, stop: threading.Event | None = None
    ) -> list[BatchOutcome]:
        """Claim, deliver and settle batches until none is due, ``stop`` is set, or the
        connection goes away; the outcomes in sending order. For one-request batches the next
        claim is taken on a helper thread while the current one is sent (its lease covering
        the batches ahead of it); otherwise claims take turns.
        """
        outcomes: list[BatchOutcome] = []
        pipelined = requests_per_batch(transport) == 1
        claimed = self._step(transport, [], [], claim=True, ahead=0)[1]
        sent: list[SentBatch] = []  # sent, not yet settled
        while claimed or sent:
            stopping = stop is not None and stop.is_set()
            if not claimed:  # settle the last claim; take what was queued meanwhile
                settled, claimed = self._step(transport, sent, [], claim=not stopping, ahead=0)
                outcomes += settled
                sent = []
                continue
            if pipelined:
                following = self._helper().submit(
                    contextvars.copy_context().run,  # its spans belong to this loop's trace
                    self._step,
                    transport,
                    sent,
                    [],
                    claim=not stopping,
                    ahead=len(claimed),
                )
                sent, unsent = self._send_claim(transport, claimed, stop)
                settled, claimed = following.result()
                outcomes += settled
            else:
                sent, unsent = self._send_claim(transport, claimed, stop)
                claimed = []
            if unsent or (stop is not None and stop.is_set()):
                # stopping: settle what was sent, release everything claimed but not sent
                outcomes += self._step(transport, sent, unsent + claimed, claim=False, ahead=0)[0]
                return outcomes
        return outcomes

    def _send_claim(
        self, transport: Transport, claimed: list[ClaimedBatch], stop: threading.Event | None
    ) -> tuple[list[SentBatch], list[ClaimedBatch]]:
        """Send the batches of one claim in order; stop (returning the rest unsent) when
        ``stop`` is set or the connection went away."""
        sent: list[SentBatch] = []
        for index, batch in enumerate(claimed):
            if (stop is not None and stop.is_set()) or self._connection_changed(transport):
                return sent, claimed[index:]
            sent.append(SentBatch(batch, self._send(transport, batch)))
        return sent, []

    def _connection_changed(self, transport: Transport) -> bool:
        return self.transport(max_age=self.connection_recheck) is not transport

    def _send(self, transport: Transport, batch: ClaimedBatch) -> str | None:
        attributes: dict[str, str | int] = {
            "newsletter.sync.batch_id": batch.id,
            "newsletter.sync.events": len(batch.events),
        }
        with span(self._tracer, "newsletter.sync.deliver", attributes) as current:
            try:
                transport.deliver(batch.events)  # no transaction is open on this thread
            except Exception as exc:
                if current is not None:
                    mark_error(current, error_type(exc))
                return describe_failure(exc)
        return None

    def _step(
        self,
        transport: Transport,
        sent: list[SentBatch],
        unsent: list[ClaimedBatch],
        *,
        claim: bool,
        ahead: int,
    ) -> tuple[list[BatchOutcome], list[ClaimedBatch]]:
        """One transaction: settle ``sent`` (their outcomes returned), release ``unsent``, and
        with ``claim`` claim the next batches (returned), leased for ``ahead`` batches more."""
        size = max(1, min(int(transport.max_batch_size), MAX_BATCH_SIZE))
        batches = self.batches_per_claim(transport)
        now = self.clock()
        lease_until = now + self.lease_for(transport, ahead + batches)
        attributes = {
            "newsletter.sync.settled_batches": len(sent),
            "newsletter.sync.released_batches": len(unsent),
        }
        with (
            span(
                self._tracer,
                "newsletter.sync.claim" if claim else "newsletter.sync.settle",
                attributes,
            ) as current,
            self.service.storage.transaction() as uow,
        ):
            outcomes = settle(uow.outbox, sent, now=now)
            claims: dict[datetime, list[str]] = {}
            for batch in unsent:
                claims.setdefault(batch.lease_until, []).append(batch.id)
            for claim_lease, ids in claims.items():
                uow.outbox.release_claims(ids, lease_until=claim_lease)
            if not claim:
                return outcomes, []
            claimed = uow.outbox.claim_batches(
                now=now, lease_until=lease_until, batch_size=size, max_batches=batches
            )
            if current is not None:
                current.set_attribute("newsletter.sync.claimed_batches", len(claimed))
            return outcomes, claimed

    def _helper(self) -> ThreadPoolExecutor:
        """The thread that takes the next claim while batches are sent (built on first use)."""
        if self._claims_thread is None:
            self._claims_thread = ThreadPoolExecutor(1, thread_name_prefix="newsletter-sync-claim")
        return self._claims_thread

    # -- loops -------------------------------------------------------------------------------

    def run_once(self, *, stop: threading.Event | None = None) -> RunReport:
        """One loop: periodic tasks, expired leases, pruning, then every batch due now (until
        ``stop`` is set)."""
        report = RunReport()
        with span(self._tracer, "newsletter.sync.run") as current:
            report.task_errors = self.run_periodic_tasks()
            report.released_leases = self.release_expired_leases()
            report.pruned_batches = self.prune_delivered()
            transport = self.transport()
            report.connected = transport is not None
            record_connected(report.connected)
            self._say_when_unconnected(report.connected)
            if transport is not None and not (stop is not None and stop.is_set()):
                report.outcomes = self.deliver_due(transport, stop=stop)
                record_outcomes(report.outcomes)
            if current is not None:
                current.set_attribute("newsletter.sync.connected", report.connected)
                current.set_attribute("newsletter.sync.delivered_events", report.delivered_events)
        return report

    def _say_when_unconnected(self, connected: bool) -> None:
        """Log a warning on the first loop that finds no platform connection (at start, or
        after one was disabled), so queued events are never stuck without a word."""
        if connected:
            self._unconnected_said = False
        elif not self._unconnected_said:
            log.warning(
                "no platform connection configured: events stay queued until one is set "
                "(newsletter-connector connection set)"
            )
            self._unconnected_said = True

    def run_forever(self, stop: threading.Event, *, poll_interval: float = 5.0) -> None:
        """Loop until ``stop`` is set; a failing loop (a database outage) is logged and
        retried."""
        while not stop.is_set():
            try:
                self.run_once(stop=stop)
            except NewsletterError as exc:
                log.warning("sync loop: %s", exc)
            except Exception:
                log.exception("sync loop failed")
            stop.wait(poll_interval)
        self.close()

    def close(self) -> None:
        """Close the HTTP client and the claim thread (both are rebuilt when needed)."""
        if self._claims_thread is not None:
            self._claims_thread.shutdown(wait=True)
            self._claims_thread = None
        self._close_client()

    def _close_client(self) -> None:
        if self._cached is not None:
            self._cached[2].close()
            self._cached = None


def task_name(task: PeriodicTask) -> str:
    """A periodic task's name for its span: the function's qualified name."""
    function = getattr(task, "__func__", task)  # a bound method: its function
    name = getattr(function, "__qualname__", None) or type(task).__qualname__
    module = getattr(function, "__module__", None)
    return f"{module}.{name}" if module else str(name)


def requests_per_batch(transport: Transport) -> int:
    """How many requests a full batch of ``transport`` takes at most (at least 1)."""
    return max(1, int(getattr(transport, "max_requests_per_batch", 1)))


def describe_failure(exc: BaseException) -> str:
    """A short, secret-free description of a failed delivery for ``last_error``."""
    if isinstance(exc, DeliveryError):
        text = str(exc)
    elif isinstance(exc, httpx.TimeoutException):
        text = f"timeout: {exc}"
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return text[:MAX_ERROR_LENGTH]
