"""The storage contract: what every backend (the built-in SQL store or a host's own) provides.

A backend is a :class:`Storage`. All work happens inside ``storage.transaction()``, a unit of
work that commits on success and rolls back on any exception, exposing small repositories.
Every state change and the outbox events it causes are written in one such transaction.

Backends raise :class:`~newsletter_connector.errors.DbUnavailable` when the database does not
answer and :class:`~newsletter_connector.errors.NotMigrated` when its schema is missing or old.
The conformance suite in :mod:`newsletter_connector.testing` checks a backend against this file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, overload

from .https_rule import without_credentials
from .json_encoding import dumps_text


@dataclass(frozen=True)
class ApiKeyRecord:
    """A Newsletter API key as stored: never the key itself, only its SHA-256 digest."""

    id: int
    label: str
    key_prefix: str
    created_at: datetime
    revoked_at: datetime | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class ConnectionRecord:
    """The operator-configured connection to the mailing platform.

    ``repr`` leaves the token out, and any credentials in ``platform_base``, so logging a
    connection never leaks them.
    """

    id: int
    platform_base: str
    transport: str
    token: str
    created_at: datetime
    disabled_at: datetime | None

    def __repr__(self) -> str:
        return (
            f"ConnectionRecord(id={self.id}, "
            f"platform_base={without_credentials(self.platform_base)!r}, "
            f"transport={self.transport!r}, token=<hidden>, disabled_at={self.disabled_at!r})"
        )


@dataclass(frozen=True)
class NewIssue:
    """An issue about to be recorded by a digest run (everything but the stored identity)."""

    uuid: str
    kind: str
    cadence: str
    issue_date: str
    subject: str
    site_url: str
    postal_address: str | None
    sections: dict[str, Any]
    html: str
    text: str | None
    period_key: str | None
    created_at: datetime


@dataclass(frozen=True)
class IssueRecord:
    """A recorded newsletter issue.

    ``html`` and ``text`` are ``None`` when the issue was listed without its bodies
    (``IssueRepository.list_recent(include_bodies=False)``); a loaded ``html`` is never empty.
    """

    id: int
    uuid: str
    kind: str
    cadence: str
    issue_date: str
    subject: str
    site_url: str
    postal_address: str | None
    sections: dict[str, Any]
    html: str | None
    text: str | None
    period_key: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class EmailPrefs:
    """Email cadences of a subscriber: each ``off``, ``daily`` or ``weekly``."""

    briefings: str
    puzzles: str
    on_this_day: str
    local: str


@dataclass(frozen=True, kw_only=True)
class SubscriberData:
    """Everything stored about a subscriber except its id (what ``add`` and ``save`` take).

    ``email`` is already normalised (trimmed, lowercased). Link tokens are secrets: they are
    left out of ``repr``, as is the phone number.
    """

    email: str
    first_name: str | None
    last_name: str | None
    zip: str | None
    phone: str | None = field(repr=False)
    sms_enabled: bool
    prefs: EmailPrefs
    status: str
    age_range: str | None
    gender: str | None
    gender_self: str | None = field(repr=False)
    categories: tuple[str, ...]
    consent_source: str | None
    consent_collected_at: datetime | None
    created_at: datetime
    updated_at: datetime
    confirmed_at: datetime | None
    unsubscribed_at: datetime | None
    bounced_at: datetime | None
    profile_completed_at: datetime | None
    confirm_token: str = field(repr=False)
    unsubscribe_token: str = field(repr=False)
    profile_token: str = field(repr=False)


@dataclass(frozen=True, kw_only=True)
class SubscriberRecord(SubscriberData):
    """A stored subscriber. ``id`` is its creation order: ids only ever increase."""

    id: int


@dataclass(frozen=True)
class DeletionRecord:
    """Evidence of an erasure: a keyed hash of the address, never the address itself, and
    what was erased: the subscriber's status before (``None`` when the address had no
    subscriber), how many of its outbox events were still undelivered and how many contact
    messages it had sent."""

    id: int
    email_hmac: str
    previous_status: str | None
    deleted_at: datetime
    discarded_events: int
    erased_messages: int


@dataclass(frozen=True)
class ContactMessageRecord:
    """One contact-form message, as received."""

    id: int
    email: str
    name: str | None
    message: str
    submitted_at: datetime


class ApiKeyRepository(Protocol):
    """Newsletter API keys, looked up by the SHA-256 hex digest of the presented key."""

    def add(self, *, label: str, key_prefix: str, key_digest: str, created_at: datetime) -> int:
        """Store a new key and return its id. Raises ``InvalidRequest`` if the label is taken."""

    def find_active_by_digest(self, key_digest: str) -> ApiKeyRecord | None:
        """The unrevoked key with this digest, or ``None``."""

    def list(self) -> list[ApiKeyRecord]:
        """Every key, revoked ones included, oldest first."""

    def revoke(self, label_or_id: str, *, at: datetime) -> ApiKeyRecord | None:
        """Revoke the key with this label (or numeric id); ``None`` when none matches.

        Revoking an already revoked key keeps its first revocation time.
        """


class SettingsRepository(Protocol):
    """Small JSON values stored by name (site secret, list-source credentials, ...)."""

    def get(self, name: str) -> Any | None:
        """The stored value, or ``None``."""

    def put(self, name: str, value: Any, *, at: datetime) -> None:
        """Store ``value`` under ``name``, replacing any previous value."""

    def put_if_absent(self, name: str, value: Any, *, at: datetime) -> Any:
        """Store ``value`` unless ``name`` exists; return the value that is stored now.

        Safe under concurrency: two callers racing get the same winner.
        """

    def delete(self, name: str) -> bool:
        """Remove ``name``; true if it existed."""


class ConnectionRepository(Protocol):
    """The platform connection; at most one is active at a time."""

    def active(self) -> ConnectionRecord | None:
        """The active connection, or ``None`` when none is configured."""

    def replace(
        self, *, platform_base: str, transport: str, token: str, at: datetime
    ) -> ConnectionRecord:
        """Disable any active connection and make a new one active."""

    def disable(self, *, at: datetime) -> bool:
        """Disable the active connection; true if there was one."""


class OutboxEvent:
    """One queued event as the runner hands it to a transport. ``event_id`` never changes.

    Immutable. ``payload`` is the event's JSON object. A store that keeps payloads as JSON text
    (written by ``json_encoding.dumps_text``) builds events with :meth:`from_stored_json`: then
    ``payload`` is decoded only when first read, and :attr:`payload_json` is the stored text,
    which a transport sending the payload unchanged splices into its body (decoding every
    payload on claim and encoding it again on send was about half of a claim's CPU time).
    """

    __slots__ = ("_payload", "_payload_json", "event_id", "event_type", "occurred_at", "seq")

    seq: int
    event_id: str
    event_type: str
    occurred_at: datetime
    _payload: dict[str, Any] | None
    _payload_json: str | None

    def __init__(
        self,
        seq: int,
        event_id: str,
        event_type: str,
        occurred_at: datetime,
        payload: dict[str, Any],
    ) -> None:
        _fill_event(self, seq, event_id, event_type, occurred_at, payload, None)

    @classmethod
    def from_stored_json(
        cls, seq: int, event_id: str, event_type: str, occurred_at: datetime, payload_json: str
    ) -> OutboxEvent:
        """An event whose payload is the JSON object text ``payload_json`` (not decoded yet)."""
        return stored_outbox_event(seq, event_id, event_type, occurred_at, payload_json)

    @property
    def payload(self) -> dict[str, Any]:
        payload = self._payload
        if payload is None:
            decoded = json.loads(self._payload_json or "{}")
            if not isinstance(decoded, dict):
                raise ValueError(f"the payload of event {self.event_id} is not a JSON object")
            payload = decoded
            _set_payload(self, payload)
        return payload

    @property
    def payload_json(self) -> str:
        """The payload as JSON text: as stored when there is one, else encoded now."""
        text = self._payload_json
        if text is None:
            text = dumps_text(self._payload)
            _set_payload_json(self, text)
        return text

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"OutboxEvent is immutable (cannot set {name})")

    def _key(self) -> tuple[Any, ...]:
        return (self.seq, self.event_id, self.event_type, self.occurred_at, self.payload)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OutboxEvent):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # the payload is a dict, like the fields before

    def __repr__(self) -> str:  # never the payload: it may carry a contact's data
        return (
            f"OutboxEvent(seq={self.seq!r}, event_id={self.event_id!r}, "
            f"event_type={self.event_type!r})"
        )


# The class refuses ordinary assignment; its slots are filled through their descriptors, which
# costs half as much as ``object.__setattr__`` by name (a claim builds 1,000 events; issue 10).
_new_event = object.__new__
_set_seq = OutboxEvent.__dict__["seq"].__set__
_set_event_id = OutboxEvent.__dict__["event_id"].__set__
_set_event_type = OutboxEvent.__dict__["event_type"].__set__
_set_occurred_at = OutboxEvent.__dict__["occurred_at"].__set__
_set_payload = OutboxEvent.__dict__["_payload"].__set__
_set_payload_json = OutboxEvent.__dict__["_payload_json"].__set__


def _fill_event(
    event: OutboxEvent,
    seq: int,
    event_id: str,
    event_type: str,
    occurred_at: datetime,
    payload: dict[str, Any] | None,
    payload_json: str | None,
) -> None:
    _set_seq(event, seq)
    _set_event_id(event, event_id)
    _set_event_type(event, event_type)
    _set_occurred_at(event, occurred_at)
    _set_payload(event, payload)
    _set_payload_json(event, payload_json)


def stored_outbox_event(
    seq: int, event_id: str, event_type: str, occurred_at: datetime, payload_json: str
) -> OutboxEvent:
    """:meth:`OutboxEvent.from_stored_json` without the class-method call (for stores that
    build events by the thousand)."""
    event: OutboxEvent = _new_event(OutboxEvent)
    _fill_event(event, seq, event_id, event_type, occurred_at, None, payload_json)
    return event


#: One stored event as a store fetched it: ``(seq, event_id, event_type, occurred_at,
#: payload_json)``.
StoredEventRow = tuple[int, str, str, datetime, str]


class StoredOutboxEvents(Sequence[OutboxEvent]):
    """Claimed events kept as the rows a store fetched them in (:data:`StoredEventRow`),
    each built into an :class:`OutboxEvent` only when it is read.

    A claim of 1,000 events building 1,000 objects that the ``events`` transport only turns
    into one request body was most of the sync runner's remaining gap to a bare HTTP loop
    (issue 10); that transport reads :attr:`rows` directly. Equal to any sequence of equal
    events; its ``repr`` never shows a payload.
    """

    __slots__ = ("rows",)

    def __init__(self, rows: Sequence[StoredEventRow]) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> OutboxEvent: ...

    @overload
    def __getitem__(self, index: slice) -> StoredOutboxEvents: ...

    def __getitem__(self, index: int | slice) -> OutboxEvent | StoredOutboxEvents:
        if isinstance(index, slice):
            return StoredOutboxEvents(self.rows[index])
        return stored_outbox_event(*self.rows[index])

    def __iter__(self) -> Iterator[OutboxEvent]:
        for row in self.rows:
            yield stored_outbox_event(*row)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are unhashable

    def __repr__(self) -> str:
        return f"StoredOutboxEvents({len(self.rows)} events)"


@dataclass(frozen=True)
class ClaimedBatch:
    """A frozen batch leased to one runner until ``lease_until``.

    ``attempts`` already counts the attempt this claim starts (1 on the first try).
    """

    id: str
    attempts: int
    lease_until: datetime
    events: Sequence[OutboxEvent]


@dataclass(frozen=True)
class OutboxBatchRecord:
    """A batch as the operator tools show it (no payloads)."""

    id: str
    state: str
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    created_at: datetime
    settled_at: datetime | None
    event_count: int


@dataclass(frozen=True)
class OutboxStatus:
    """The figures of ``outbox status`` and the Prometheus metrics.

    ``batches`` counts batches by state (every state present, zero when none); ``unbatched``
    counts queued events not yet frozen into a batch; ``oldest_pending_at`` is the
    ``occurred_at`` of the oldest event not yet delivered nor failed; ``last_error`` is the
    newest error of a batch still pending or failed.
    """

    batches: dict[str, int]
    unbatched: int
    undelivered_events: int
    failed_events: int
    oldest_pending_at: datetime | None
    last_error: str | None


class OutboxDeliveryRepository(Protocol):
    """What the sync runner needs from the outbox (part of :class:`OutboxRepository`)."""

    def claim_batches(
        self, *, now: datetime, lease_until: datetime, batch_size: int, max_batches: int
    ) -> list[ClaimedBatch]:
        """Lease up to ``max_batches`` batches to the caller until ``lease_until``, in the
        order they are to be sent.

        First the due pending batches (``next_attempt_at <= now``), oldest first; then, while
        there is room, the oldest unbatched events, frozen into new batches of at most
        ``batch_size`` (members and event ids never change afterwards) and leased at once.
        Every batch returned is sending with ``attempts + 1`` (1 for a new batch). Concurrent
        callers never claim the same batch or freeze the same event. Events come oldest first
        within a batch; a batch emptied by erasure has no events. ``[]`` when nothing is due
        and nothing is queued.

        ``lease_until`` must cover every request of every batch returned: the caller sends
        them one after the other.
        """

    def release_claims(self, batch_ids: Sequence[str], *, lease_until: datetime) -> int:
        """Return claimed batches the caller did not send (graceful stop) to pending, as if
        never claimed: ``attempts - 1``, due time unchanged. Only batches still sending under
        the claim ``lease_until``.

        :return: how many were returned.
        """

    # The settle methods act only on a batch still sending; with ``lease_until`` (the
    # claim's), only while that claim still holds, so a runner whose lease expired and was
    # re-claimed by another cannot settle the other's attempt.

    def settle_delivered(
        self, batch_ids: Sequence[str], *, at: datetime, lease_until: datetime | None = None
    ) -> int:
        """Mark sending batches delivered (clears their error).

        :return: how many were marked.
        """

    def schedule_retry(
        self,
        batch_id: str,
        *,
        error: str,
        next_attempt_at: datetime,
        lease_until: datetime | None = None,
    ) -> bool:
        """Return a sending batch to pending, due at ``next_attempt_at``, keeping ``error``;
        whether it acted."""

    def mark_failed(
        self, batch_id: str, *, error: str, at: datetime, lease_until: datetime | None = None
    ) -> bool:
        """Give up on a sending batch: state failed, kept with ``error`` for the operator;
        whether it acted."""

    def release_expired_leases(self, *, now: datetime) -> int:
        """Return sending batches whose lease ended before ``now`` to pending, due now.

        :return: how many were returned.
        """

    def prune_delivered(self, *, settled_before: datetime, limit: int = 1000) -> int:
        """Delete up to ``limit`` delivered batches settled before ``settled_before``, with
        their events (delivered contact records are not kept longer than needed).

        :return: how many batches were deleted.
        """

    def status(self) -> OutboxStatus:
        """Counts for the operator tools (set-based; never loads rows)."""

    def failed_batches(
        self, *, after: str | None = None, limit: int = 100
    ) -> list[OutboxBatchRecord]:
        """Failed batches ordered by id, strictly after the id ``after`` (keyset paging)."""

    def get_batch(self, batch_id: str) -> OutboxBatchRecord | None:
        """One batch, or ``None``."""

    def replay_failed(self, batch_id: str | None, *, at: datetime) -> int:
        """Give failed batches a fresh ladder: pending, attempts 0, due at ``at``.

        :param batch_id: one batch, or ``None`` for every failed batch.
        :return: how many batches were returned to the queue.
        """


@dataclass(frozen=True)
class NewEvent:
    """One event to queue, as :meth:`OutboxRepository.enqueue` takes it (fields by name).

    ``subscriber_key`` is the keyed hash of the address the payload carries, or ``None``."""

    event_id: str
    event_type: str
    occurred_at: datetime
    payload: dict[str, Any] = field(repr=False)  # it may carry a contact's data
    subscriber_key: str | None
    created_at: datetime

    def enqueue_in(self, outbox: OutboxRepository) -> None:
        """Queue this event in ``outbox`` (its unit of work's transaction)."""
        outbox.enqueue(
            event_id=self.event_id,
            event_type=self.event_type,
            occurred_at=self.occurred_at,
            payload=self.payload,
            subscriber_key=self.subscriber_key,
            created_at=self.created_at,
        )


class OutboxRepository(OutboxDeliveryRepository, Protocol):
    """Outbound events, written in the same transaction as the change that caused them."""

    def enqueue(
        self,
        *,
        event_id: str,
        event_type: str,
        occurred_at: datetime,
        payload: dict[str, Any],
        subscriber_key: str | None,
        created_at: datetime,
    ) -> None:
        """Queue one event (not yet in any batch). ``subscriber_key`` is the keyed hash of the
        address the payload carries, or ``None`` for events that carry no address."""

    def discard_for_subscriber(self, subscriber_key: str) -> int:
        """Erase every stored event carrying this subscriber's address, delivered or not.

        :return: how many of them had not been delivered yet (discarded from the queue).
        """


@dataclass(frozen=True)
class CampaignRecord:
    """A stored newsletter issue as the list-source surface reads it (a listmonk campaign).

    This is a read view of the same ``issues`` rows the Newsletter API serves; nothing is
    copied. ``text`` is the plain-text rendering when one was stored.
    """

    id: int
    uuid: str
    kind: str
    cadence: str
    issue_date: str
    subject: str
    html: str
    text: str | None
    created_at: datetime
    updated_at: datetime


class CampaignRepository(Protocol):
    """Read-only access to stored issues for the list-source surface (page-numbered, as the
    listmonk dialect is). Creation order is ``(created_at, id)``; ``id`` breaks ties."""

    def count(self) -> int:
        """How many issues are stored."""

    def page(self, *, descending: bool, offset: int, limit: int) -> list[CampaignRecord]:
        """At most ``limit`` issues in creation order (newest first when ``descending``),
        skipping the first ``offset`` of that order."""

    def get(self, campaign_id: int) -> CampaignRecord | None:
        """The issue with this id, or ``None``."""


class IssueRepository(Protocol):
    """Recorded newsletter issues, in recording order (ids increase)."""

    def add(self, issue: NewIssue) -> IssueRecord | None:
        """Record ``issue`` and return it with its id.

        :return: ``None``, storing nothing, when ``issue.period_key`` is not ``None`` and an
            issue with that key exists already: this is what makes a scheduled run happen once
            per period even when several runners race (the losers get ``None``).
        """

    def find_by_period(self, period_key: str) -> IssueRecord | None:
        """The issue recorded for this period key (with bodies), or ``None``."""

    def latest(self) -> IssueRecord | None:
        """The most recently recorded issue, with bodies, or ``None`` when there is none."""

    def list_recent(self, limit: int, *, include_bodies: bool) -> list[IssueRecord]:
        """Up to ``limit`` issues, most recently recorded first.

        :param include_bodies: false leaves ``html`` and ``text`` as ``None`` (and unread).
        """


TokenKind = Literal["confirm", "unsubscribe", "profile"]


class SubscriberRepository(Protocol):
    """The subscriber list. A host may supply its own store by implementing this (and the
    deletion repository); ``testing.conformance_subscribers`` checks it.

    Emails passed in are already normalised (lowercase). Ids grow with creation order, and
    :meth:`list_page` never returns an id while a smaller one may still appear (a concurrent
    transaction holding it has not committed yet), so keyset walks on id never skip or repeat
    anyone. (Concurrent inserts may run side by side; the SQL store's walks wait for the ones
    in flight, see ``commit_horizon``.)
    """

    def add(self, data: SubscriberData) -> SubscriberRecord | None:
        """Store a new subscriber and return it with its id; ``None`` (and nothing stored) when
        the address is already taken, also when a concurrent transaction just took it."""

    def get_by_email(self, email: str, *, lock: bool = False) -> SubscriberRecord | None:
        """The subscriber with this address, or ``None``.

        :param lock: hold a row lock until the transaction ends (for read-modify-write).
        """

    def get_by_token(
        self, kind: TokenKind, token: str, *, lock: bool = False
    ) -> SubscriberRecord | None:
        """The subscriber whose ``kind`` link token is ``token``, or ``None``."""

    def save(self, record: SubscriberRecord) -> None:
        """Write every field of ``record`` (looked up by id) except ``id`` and ``email``."""

    def delete(self, subscriber_id: int) -> bool:
        """Erase the row; true if it existed."""

    def list_page(
        self, *, status: str | None, after_id: int | None, limit: int
    ) -> list[SubscriberRecord]:
        """Up to ``limit`` subscribers with id greater than ``after_id`` (all when ``None``),
        in id order, only those with ``status`` when given. Keyset, never OFFSET."""

    def count(self, *, status: str | None = None) -> int:
        """How many subscribers there are, only those with ``status`` when given (the
        list-source list's ``subscriber_count`` is the confirmed count)."""

    def mark_announced(self, subscriber_id: int, *, at: datetime, unless_since: datetime) -> bool:
        """Record that the subscriber's signup is announced again at ``at``, unless its last
        announcement came after ``unless_since``: the last re-announcement recorded here, or,
        when there was none, the signup itself (``created_at``). True when recorded.

        One conditional write: of concurrent calls, however many, at most one recorded within
        any ``at - unless_since`` span gets true.
        """


class DeletionRepository(Protocol):
    """Erasure evidence."""

    def add(
        self,
        *,
        email_hmac: str,
        previous_status: str | None,
        deleted_at: datetime,
        discarded_events: int,
        erased_messages: int,
    ) -> DeletionRecord:
        """Record an erasure (``previous_status`` ``None``: the address had no subscriber)."""

    def find(self, email_hmac: str) -> list[DeletionRecord]:
        """Every erasure of the address with this keyed hash, oldest first."""


class ContactMessageRepository(Protocol):
    """The contact-form log: every message its own row, in arrival order, until its sender's
    address is erased."""

    def add(
        self, *, email: str, name: str | None, message: str, submitted_at: datetime
    ) -> ContactMessageRecord:
        """Append a message; ids grow with arrival order."""

    def list_page(self, *, after_id: int | None, limit: int) -> list[ContactMessageRecord]:
        """Up to ``limit`` messages with id greater than ``after_id``, in id order."""

    def delete_from(self, email: str) -> int:
        """Erase every message sent from ``email`` (normalised, as stored); how many."""


@dataclass(frozen=True)
class AnalyticsEventRecord:
    """One stored analytics event (SPEC 2.5), already sanitised at capture."""

    id: int
    occurred_at: datetime
    event_type: str
    visitor_id: str
    session_id: str
    path: str
    referrer: str
    props: dict[str, Any] | None
    engaged_seconds: float | None


@dataclass(frozen=True)
class DayTraffic:
    """Aggregates of one UTC day's analytics events (computed by the backend, set-based)."""

    pageviews: int = 0
    unique_visitors: int = 0
    sessions: int = 0
    link_clicks: int = 0
    new_visitors: int = 0
    avg_engagement_seconds: float | None = None
    issues: int = 0
    top_pages: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class ModelUsage:
    """One UTC day's LLM calls of one model."""

    model: str
    calls: int
    failures: int
    prompt_tokens: int
    completion_tokens: int


class AnalyticsRepository(Protocol):
    """Analytics events and first sightings of visitors; aggregates computed by the backend."""

    def add_event(
        self,
        *,
        occurred_at: datetime,
        event_type: str,
        visitor_id: str,
        session_id: str,
        path: str,
        referrer: str,
        props: dict[str, Any] | None,
        engaged_seconds: float | None,
    ) -> int:
        """Store one event and return its id (ids grow with insertion order). Records the
        visitor's first sighting at ``occurred_at`` unless the visitor was already seen."""

    def events_after(self, after_id: int, limit: int) -> list[AnalyticsEventRecord]:
        """At most ``limit`` events with id strictly greater than ``after_id``, by id."""

    def daily_traffic(
        self, start: datetime, end: datetime, *, top_pages: int
    ) -> dict[str, DayTraffic]:
        """Per UTC day (``YYYY-MM-DD``) in ``[start, end)``, the day's aggregates; days without
        any event, visitor or issue may be absent. ``top_pages`` bounds each day's top list,
        ordered by views descending then path ascending. ``issues`` counts issues recorded
        that day (kind ``test`` excluded)."""


class LlmUsageRepository(Protocol):
    """One row per LLM call of a digest run."""

    def add(
        self,
        *,
        occurred_at: datetime,
        model: str,
        ok: bool,
        prompt_tokens: int,
        completion_tokens: int,
    ) -> None:
        """Record one call."""

    def daily_usage(self, start: datetime, end: datetime) -> dict[str, list[ModelUsage]]:
        """Per UTC day in ``[start, end)``, usage by model ordered by model name."""


class JobRunsRepository(Protocol):
    """Once-only jobs, claimed by key across every runner."""

    def claim(self, job_key: str, *, at: datetime) -> bool:
        """Record ``job_key`` as run; true if this call claimed it, false if it already was.

        Safe under concurrency: of several transactions racing, exactly one gets true."""

    def latest(self, prefix: str) -> str | None:
        """The greatest claimed key starting with ``prefix`` (string order), or ``None``."""


class RateLimitRepository(Protocol):
    """Fixed-window hit counters by key, shared by every process using the store.

    A counter lives from its first hit until its ``expires_at``; at or after that moment it is
    expired: a hit starts it anew, and reads see none. Keys are opaque (at most 200
    characters); callers never put a client address in one, only a keyed hash of it.
    """

    def hit(self, key: str, *, now: datetime, expires_at: datetime, amount: int = 1) -> int:
        """Add ``amount`` to the counter of ``key`` and return its new count, atomically: a
        missing or expired counter starts at ``amount`` and expires at ``expires_at``; a live
        one keeps its expiry. Concurrent hits on one key never lose a count."""

    def peek(self, key: str, *, now: datetime) -> tuple[int, datetime | None]:
        """The live counter of ``key`` as ``(count, expires_at)``; ``(0, None)`` if none."""

    def clear(self, key: str) -> None:
        """Forget the counter of ``key``."""

    def prune(self, *, expired_by: datetime) -> int:
        """Delete the counters expired at ``expired_by``; how many were deleted. Never waits
        for a counter another transaction is writing (that one is left for a later prune)."""


class UnitOfWork(Protocol):
    """One transaction's view of the store."""

    @property
    def keys(self) -> ApiKeyRepository: ...

    @property
    def settings(self) -> SettingsRepository: ...

    @property
    def connections(self) -> ConnectionRepository: ...

    @property
    def outbox(self) -> OutboxRepository: ...

    @property
    def campaigns(self) -> CampaignRepository: ...

    @property
    def issues(self) -> IssueRepository: ...

    @property
    def subscribers(self) -> SubscriberRepository: ...

    @property
    def deletions(self) -> DeletionRepository: ...

    @property
    def messages(self) -> ContactMessageRepository: ...

    @property
    def analytics(self) -> AnalyticsRepository: ...

    @property
    def llm_usage(self) -> LlmUsageRepository: ...

    @property
    def jobs(self) -> JobRunsRepository: ...

    @property
    def rate_limits(self) -> RateLimitRepository: ...


class Storage(Protocol):
    """A storage backend."""

    def transaction(self, *, write: bool = True) -> AbstractContextManager[UnitOfWork]:
        """Open a unit of work; commit when the block ends, roll back if it raises.

        :param write: false for read-only work, which must not write: a backend may run it
            with lighter locking, or outside a transaction where each read is as consistent as
            in one (the SQL store runs it in autocommit on PostgreSQL, whose READ COMMITTED
            gives every statement its own snapshot anyway).
        """

    def find_active_api_key(self, key_digest: str) -> ApiKeyRecord | None:
        """The unrevoked API key with this digest, or ``None``: the same answer as
        ``keys.find_active_by_digest`` in a read-only unit of work, which a backend may give a
        lighter path (every authenticated request asks, and a revocation must be seen by the
        very next one). Raises ``DbUnavailable`` as a unit of work would."""

    def find_active_connection(self) -> ConnectionRecord | None:
        """The active connection, or ``None``: the same answer as ``connections.active()`` in
        a read-only unit of work, which a backend may give a lighter path (every export
        request asks, and a disabled or replaced connection must be refused by the very next
        one). Raises ``DbUnavailable`` as a unit of work would."""

    def add_subscriber(
        self, data: SubscriberData, events: Sequence[NewEvent]
    ) -> SubscriberRecord | None:
        """Store a new subscriber and queue ``events`` (in order) with it, all or nothing: the
        same as ``subscribers.add(data)`` and, when it stored the subscriber, ``outbox.enqueue``
        of each event in one unit of work, which a backend may give a lighter path (every
        signup takes it). ``None``, and nothing written, when the address is already taken.
        Raises ``DbUnavailable`` as a unit of work would."""

    def check_ready(self) -> None:
        """Raise ``NotMigrated`` (saying how to migrate) unless the schema is current, and
        ``DbUnavailable`` if the database does not answer."""

    def migrate(self) -> None:
        """Bring the schema up to date (``newsletter-connector db upgrade``)."""

    def close(self) -> None:
        """Release connections."""
