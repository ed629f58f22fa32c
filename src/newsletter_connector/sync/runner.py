"""The sync runner: claim frozen batches, deliver them outside any transaction, settle them.

One loop (:meth:`SyncRunner.run_once`):

0. Run the periodic tasks, return expired leases to pending and delete delivered batches
   older than :data:`DELIVERED_RETENTION`.
1. In one short write transaction, lease :data:`CLAIM_AHEAD` requests' worth of batches (at
   least one): the oldest due batches, then new batches frozen from the oldest queued events
   (``claim_batches``). The lease covers every request of every batch in the claim (they are
   sent one after the other), so an expired lease means the runner died; expired leases return
   to pending on the next loop of any runner.
2. With no transaction open on the sending thread, hand the batches one by one to the
   connection's transport.
3. In the next claim's transaction, settle them (:mod:`.settle`): 2xx → delivered; anything
   else → the next rung of the ladder (:mod:`.schedule`), or failed after 20 attempts.
   Steps 1 to 3 repeat until nothing is due. For one-request batches the next claim is taken
   on a helper thread while the current claim is sent (:meth:`SyncRunner.deliver_due`).

Nothing is pushed while no connection is configured: events stay queued (unbatched) and go out
oldest first once one is. The connection is re-read at the start of every loop and at least
every :data:`CONNECTION_RECHECK_SECONDS` while batches are being sent; when it is removed or
changed, the claimed batches not yet sent are released. A stop request is honoured the same
way, between batches: the batch in flight is finished and settled, the rest released.

Delivery is at least once: a crash between a request and its settle resends the same batches
with the same event ids (up to a claim's worth), which the platform de-duplicates.
"""

from __future__ import annotations

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
from ..https_rule import carries_credentials, scheme_allowed, without_credentials
from ..plugin_manager import outbound_transports, pick
from ..storage import ClaimedBatch, ConnectionRecord
from .http import REQUEST_DEADLINE_SECONDS, build_http_client
from .periodic import PeriodicTask, default_periodic_tasks
from .settle import BatchOutcome, SentBatch, settle
from .transport import MAX_BATCH_SIZE, DeliveryError, Transport

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
#: previous claim): 10 batches of the one-request ``events`` transport, one batch of
#: ``platform``. More amortises the database work over more requests; fewer shortens how long
#: a dead runner's unsent batches wait for their lease to end, and how long claimed events wait
#: to be sent.
CLAIM_AHEAD = 10
#: While batches are being sent, the connection is re-read at least this often (seconds), so a
#: removed or disabled connection stops pushes within it (not once per batch: ``bench.sync``).
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

    :param deadline: total seconds per HTTP request (SPEC: 15).
    :param clock: the time used for scheduling (defaults to the service's clock).
    :param periodic_tasks: called with ``now`` at the start of every loop; defaults to
        :func:`~.periodic.default_periodic_tasks`.
    :param http_transport: build the httpx transport requests go through (tests pass a
        :class:`httpx.MockTransport`); default: real HTTPS with the trusted CAs.
    :param claim_ahead: requests' worth of batches leased per claim (:data:`CLAIM_AHEAD`).
    :param connection_recheck: seconds between re-reads of the connection while sending
        (:data:`CONNECTION_RECHECK_SECONDS`; 0 re-reads it before every batch).
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
        ``allow_insecure_http_links`` is off (scheduled digests and queued contact records
        carry links built from it)."""
        service.settings.require_https_links()
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

    def __repr__(self) -> str:
        return f"SyncRunner(service={self.service!r}, deadline={self.deadline:g})"

    # -- pieces of a loop ----------------------------------------------------------------------

    def run_periodic_tasks(self) -> int:
        """Call every periodic task once; return how many raised (each is logged)."""
        errors = 0
        for task in self.periodic_tasks:
            try:
                task(self.clock())
            except Exception:
                errors += 1
                log.exception("periodic task %r failed", task)
        return errors

    def release_expired_leases(self) -> int:
        with self.service.storage.transaction() as uow:
            released = uow.outbox.release_expired_leases(now=self.clock())
        if released:
            log.warning("%d batch lease(s) expired (a runner died?); returned to pending", released)
        return released

    def prune_delivered(self) -> int:
        """Delete delivered batches older than :data:`DELIVERED_RETENTION` (bounded per loop)."""
        with self.service.storage.transaction() as uow:
            return uow.outbox.prune_delivered(settled_before=self.clock() - DELIVERED_RETENTION)

    def transport(self, *, max_age: float = 0.0) -> Transport | None:
        """The transport for the active connection, or ``None`` when none is configured
        (or it is not allowed: plain http without ``allow_insecure_http_delivery``, or an
        address stored with credentials in it).

        :param max_age: reuse the last answer if the connection was read from the database
            less than this many seconds ago (default: always read it).
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
        """How long a claim of ``batches`` lasts: every request's deadline, for each batch
        (sent one after the other), plus a margin."""
        return timedelta(seconds=self.deadline * requests_per_batch(transport) * batches) + (
            self.lease_margin
        )

    def batches_per_claim(self, transport: Transport) -> int:
        """How many batches one claim takes: :attr:`claim_ahead` requests' worth, at least one
        (``events``: 10 batches; ``platform``, 20 requests a batch: one)."""
        return max(1, self.claim_ahead // requests_per_batch(transport))

    def deliver_due(
        self, transport: Transport, *, stop: threading.Event | None = None
    ) -> list[BatchOutcome]:
        """Claim, deliver and settle batches until none is due, ``stop`` is set, or the
        connection goes away (see the module docstring); the outcomes in sending order.

        When a batch is one request, the next claim (which settles the previous one) runs on a
        helper thread while the current claim's batches are sent, so its database work
        overlaps the requests; its lease also covers the batches still to be sent ahead of it.
        A transport making a request per event spends far longer in HTTP than in the claim, so
        its claims are taken in turn (and its leases stay as short as one batch needs).
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
                    self._step, transport, sent, [], claim=not stopping, ahead=len(claimed)
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
        try:
            transport.deliver(batch.events)  # no transaction is open on this thread
        except Exception as exc:
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
        """One transaction: settle ``sent``, release ``unsent``, and with ``claim`` claim the
        next batches, leased long enough for ``ahead`` batches sent before them and their own.

        :return: the outcomes of ``sent`` and the batches claimed.
        """
        size = max(1, min(int(transport.max_batch_size), MAX_BATCH_SIZE))
        batches = self.batches_per_claim(transport)
        now = self.clock()
        lease_until = now + self.lease_for(transport, ahead + batches)
        with self.service.storage.transaction() as uow:
            outcomes = settle(uow.outbox, sent, now=now)
            claims: dict[datetime, list[str]] = {}
            for batch in unsent:
                claims.setdefault(batch.lease_until, []).append(batch.id)
            for claim_lease, ids in claims.items():
                uow.outbox.release_claims(ids, lease_until=claim_lease)
            if not claim:
                return outcomes, []
            return outcomes, uow.outbox.claim_batches(
                now=now, lease_until=lease_until, batch_size=size, max_batches=batches
            )

    def _helper(self) -> ThreadPoolExecutor:
        """The thread that takes the next claim while batches are sent (built on first use)."""
        if self._claims_thread is None:
            self._claims_thread = ThreadPoolExecutor(1, thread_name_prefix="newsletter-sync-claim")
        return self._claims_thread

    # -- loops -------------------------------------------------------------------------------

    def run_once(self, *, stop: threading.Event | None = None) -> RunReport:
        """One loop: periodic tasks, expired leases, then every batch due now.

        Stops early (between batches, releasing claimed batches not yet sent) when ``stop``
        is set.
        """
        report = RunReport()
        report.task_errors = self.run_periodic_tasks()
        report.released_leases = self.release_expired_leases()
        report.pruned_batches = self.prune_delivered()
        transport = self.transport()
        report.connected = transport is not None
        if transport is not None and not (stop is not None and stop.is_set()):
            report.outcomes = self.deliver_due(transport, stop=stop)
        return report

    def run_forever(self, stop: threading.Event, *, poll_interval: float = 5.0) -> None:
        """Loop until ``stop`` is set; the batch in flight is always finished and settled.

        A database outage is logged and retried on the next loop.
        """
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
