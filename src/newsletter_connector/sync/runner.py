"""The sync runner: claim a frozen batch, deliver it outside any transaction, settle it.

One step (:meth:`SyncRunner.deliver_next_batch`):

0. Each loop first runs the periodic tasks, returns expired leases to pending and deletes
   delivered batches older than :data:`DELIVERED_RETENTION`.
1. In a short write transaction, lease the oldest due batch; when none is due, freeze up to
   ``max_batch_size`` of the oldest queued events into a new batch and lease that. The lease
   lasts longer than every request the batch may need, so an expired lease means the runner
   died; expired leases return to pending on the next loop of any runner.
2. With no transaction open, hand the batch to the connection's transport.
3. In another short transaction: 2xx → delivered; anything else → the next rung of the ladder
   (:mod:`.schedule`), or failed after 20 attempts.

Nothing is pushed while no connection is configured: events stay queued (unbatched) and go out
oldest first once one is. Delivery is at least once: a crash between the request and the
settle resends the same batch with the same event ids, which the platform de-duplicates.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import httpx

from ..errors import NewsletterError
from ..plugin_manager import outbound_transports, pick
from ..storage import ClaimedBatch, ConnectionRecord
from .http import REQUEST_DEADLINE_SECONDS, build_http_client
from .periodic import PeriodicTask, default_periodic_tasks
from .schedule import MAX_ATTEMPTS, next_attempt_at
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


@dataclass(frozen=True)
class BatchOutcome:
    """What happened to one batch: ``delivered``, ``retry`` or ``failed``."""

    batch_id: str
    result: str
    events: int
    attempts: int
    error: str | None = None
    next_attempt_at: datetime | None = None


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
    ) -> None:
        self.service = service
        self.deadline = deadline
        self.clock = clock or service.context.clock
        self.periodic_tasks: list[PeriodicTask] = (
            default_periodic_tasks(service) if periodic_tasks is None else list(periodic_tasks)
        )
        self.http_transport = http_transport
        self.lease_margin = lease_margin
        self._cached: tuple[ConnectionRecord, Transport, httpx.Client] | None = None

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

    def transport(self) -> Transport | None:
        """The transport for the active connection, or ``None`` when none is configured
        (or it is not allowed: plain http without ``allow_insecure_http_delivery``)."""
        connection = self.service.admin.connection()
        if connection is None:
            self.close()
            return None
        if self._cached is not None and self._cached[0] == connection:
            return self._cached[1]
        self.close()
        settings = self.service.settings
        if not (
            connection.platform_base.startswith("https://") or settings.allow_insecure_http_delivery
        ):
            log.error("connection %s is not https; nothing is pushed", connection.platform_base)
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

    def lease_for(self, transport: Transport) -> timedelta:
        """How long a claim lasts: every request's deadline plus a margin."""
        requests = max(1, int(getattr(transport, "max_requests_per_batch", 1)))
        return timedelta(seconds=self.deadline * requests) + self.lease_margin

    def claim(self, transport: Transport) -> ClaimedBatch | None:
        """Lease the next batch in one short write transaction (see the module docstring)."""
        size = max(1, min(int(transport.max_batch_size), MAX_BATCH_SIZE))
        now = self.clock()
        lease_until = now + self.lease_for(transport)
        with self.service.storage.transaction() as uow:
            batch = uow.outbox.claim_due_batch(now=now, lease_until=lease_until)
            if batch is None and uow.outbox.freeze_batch(
                batch_id=str(uuid.uuid4()), max_events=size, at=now
            ):
                batch = uow.outbox.claim_due_batch(now=now, lease_until=lease_until)
        return batch

    def deliver_next_batch(self) -> BatchOutcome | None:
        """Claim, deliver and settle one batch; ``None`` when nothing is due or no
        connection is configured."""
        transport = self.transport()
        if transport is None:
            return None
        batch = self.claim(transport)
        if batch is None:
            return None
        error: str | None = None
        try:
            transport.deliver(batch.events)  # no transaction is open here
        except Exception as exc:
            error = describe_failure(exc)
        return self.settle(batch, error)

    def settle(self, batch: ClaimedBatch, error: str | None) -> BatchOutcome:
        now = self.clock()
        size = len(batch.events)
        with self.service.storage.transaction() as uow:
            if error is None:
                if not uow.outbox.settle_delivered(batch.id, at=now, lease_until=batch.lease_until):
                    log.warning("batch %s was delivered after its lease ended", batch.id)
                return BatchOutcome(batch.id, "delivered", size, batch.attempts)
            retry_at = next_attempt_at(batch.attempts, now)
            if retry_at is None:
                uow.outbox.mark_failed(batch.id, error=error, at=now, lease_until=batch.lease_until)
                log.error("batch %s failed after %d attempts: %s", batch.id, MAX_ATTEMPTS, error)
                return BatchOutcome(batch.id, "failed", size, batch.attempts, error)
            uow.outbox.schedule_retry(
                batch.id, error=error, next_attempt_at=retry_at, lease_until=batch.lease_until
            )
        log.warning(
            "batch %s attempt %d failed (%s); retry at %s",
            batch.id,
            batch.attempts,
            error,
            retry_at,
        )
        return BatchOutcome(batch.id, "retry", size, batch.attempts, error, retry_at)

    # -- loops -------------------------------------------------------------------------------

    def run_once(self, *, stop: threading.Event | None = None) -> RunReport:
        """One loop: periodic tasks, expired leases, then every batch due now.

        Stops early (between batches) when ``stop`` is set.
        """
        report = RunReport()
        report.task_errors = self.run_periodic_tasks()
        report.released_leases = self.release_expired_leases()
        report.pruned_batches = self.prune_delivered()
        report.connected = self.transport() is not None
        while report.connected and not (stop is not None and stop.is_set()):
            outcome = self.deliver_next_batch()
            if outcome is None:
                break
            report.outcomes.append(outcome)
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
        """Close the HTTP client (a new one is built on the next loop)."""
        if self._cached is not None:
            self._cached[2].close()
            self._cached = None


def describe_failure(exc: BaseException) -> str:
    """A short, secret-free description of a failed delivery for ``last_error``."""
    if isinstance(exc, DeliveryError):
        text = str(exc)
    elif isinstance(exc, httpx.TimeoutException):
        text = f"timeout: {exc}"
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return text[:MAX_ERROR_LENGTH]
