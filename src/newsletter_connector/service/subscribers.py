"""The subscriber lifecycle (docs/newsletter-api.md, docs/reader-pages.md): every rule about
subscribers lives here.

Each operation runs in one storage transaction with the outbox events it causes. Input is a
request model of ``model.requests`` or a mapping of the same JSON shape; every problem raises
``InvalidRequest`` naming the field, or ``ConsentRequired``, before anything is changed.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from ..errors import ConsentRequired, DbUnavailable, InvalidRequest, NotFound
from ..json_encoding import json_values
from ..model.contact import (
    DEFAULT_PREFS,
    MAX_EMAIL_LENGTH,
    STATUSES,
    contact_payload,
    enum_value,
    hide_link_tokens,
    normalise_email,
    optional_enum,
)
from ..model.requests import (
    READ_ONLY_FIELDS,
    ContactChange,
    PatchRequest,
    SignupRequest,
    parse_request,
)
from ..plugins.sql_store.store import SqlUnitOfWork
from ..short_reads import short_reads
from ..storage.records import (
    DeletionRecord,
    SubscriberData,
    SubscriberRecord,
    SuppressionRecord,
    TokenKind,
)
from ..timeutil import parse_timestamp
from .context import ServiceContext
from .cursors import DEFAULT_LIMIT, Page, check_limit, decode_cursor, encode_cursor
from .events import new_event, queue_event, subscriber_key

#: The status a suppressed address is stored with, by what the platform reported.
STATUS_AFTER = {"bounce": "bounced", "complaint": "unsubscribed", "unsubscribe": "unsubscribed"}
#: Inserts a signup tries when its address is taken and then erased before it is looked up
#: (each time): a race, not a loop to spin in.
SIGNUP_ATTEMPTS = 3
#: Subscribers read per page by :meth:`SubscriberService.walk`.
EXPORT_PAGE_SIZE = 1000

#: Read-only fields holding a timestamp: an echo is compared as an instant, in any offset.
_TIMESTAMP_FIELDS = frozenset(name for name in READ_ONLY_FIELDS if name.endswith("_at"))
#: Contact fields whose validated value is stored as it is.
_PLAIN_FIELDS = (
    "first_name",
    "last_name",
    "gender_self",
    "zip",
    "phone",
    "age_range",
    "gender",
    "categories",
)
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
#: A subscriber record, or the data of one not stored yet.
Data = TypeVar("Data", bound=SubscriberData)


def stored_as_reported(data: SubscriberData, suppression: SuppressionRecord) -> SubscriberData:
    """``data`` stored as the platform reported the address: bounced or unsubscribed since
    the report, never confirmed."""
    status = STATUS_AFTER[suppression.kind]
    return replace(
        data,
        status=status,
        confirmed_at=None,
        unsubscribed_at=suppression.occurred_at if status == "unsubscribed" else None,
        bounced_at=suppression.occurred_at if status == "bounced" else None,
    )


def new_signup_data(request: SignupRequest, now: datetime) -> SubscriberData:
    """The subscriber a valid signup stores at ``now``: ``confirmed`` with its consent, else
    ``pending``; new link tokens.

    :raises ConsentRequired: the consent is dated after ``now``.
    :raises InvalidRequest: SMS enabled without a phone number.
    """
    consent, phone = request.consent, request.phone
    if consent is not None and consent.collected_at > now:
        raise ConsentRequired("consent.collected_at is in the future")
    prefs, sms_enabled = DEFAULT_PREFS, False
    if request.prefs is not None:
        prefs, sms_enabled = request.prefs.applied_to(prefs, sms_enabled)
    if sms_enabled and phone is None:
        raise InvalidRequest("prefs.sms.enabled needs a phone number", field="prefs.sms.enabled")
    return SubscriberData(
        email=request.email,
        first_name=request.first_name,
        last_name=request.last_name,
        zip=request.zip,
        phone=phone,
        sms_enabled=sms_enabled,
        prefs=prefs,
        status="confirmed" if consent else "pending",
        age_range=None,
        gender=None,
        gender_self=None,
        categories=request.categories or (),
        consent_source=consent.source if consent else None,
        consent_collected_at=consent.collected_at if consent else None,
        created_at=now,
        updated_at=now,
        confirmed_at=now if consent else None,
        unsubscribed_at=None,
        bounced_at=None,
        profile_completed_at=None,
        confirm_token=new_token(),
        unsubscribe_token=new_token(),
        profile_token=new_token(),
    )


@dataclass(frozen=True)
class SubscribeResult:
    """What ``subscribe`` did: ``created`` is false when the address already existed."""

    record: SubscriberRecord
    created: bool


@dataclass(frozen=True)
class ResendResult:
    """What ``resend_confirmation`` did: ``queued`` is false when the last announcement was
    too recent to announce again."""

    record: SubscriberRecord
    queued: bool


@dataclass(frozen=True)
class ErasureResult:
    """What an erasure did (the address is returned to the caller, never stored);
    ``previous_status`` is ``None`` when the address had no subscriber; ``discarded_events``
    counts its undelivered outbox events (delivered ones are deleted uncounted)."""

    email: str
    previous_status: str | None
    discarded_events: int
    erased_messages: int


def _address_part(value: Any, field: str) -> str:
    """``value`` as the start of a stored (lowercase) address; :class:`InvalidRequest` naming
    ``field`` unless it is printable text of at most ``MAX_EMAIL_LENGTH`` characters."""
    if not isinstance(value, str):
        raise InvalidRequest(f"{field} must be text", field=field)
    text = value.strip().lower()
    if len(text) > MAX_EMAIL_LENGTH:
        raise InvalidRequest(f"{field} must be at most {MAX_EMAIL_LENGTH} characters", field=field)
    if not text.isprintable():
        raise InvalidRequest(f"{field} must not contain control characters", field=field)
    return text


def new_token() -> str:
    """A link token: 192 random bits, URL-safe."""
    return secrets.token_urlsafe(24)


def _same_echo(name: str, sent: Any, current: str | datetime | None) -> bool:
    """Whether ``sent`` is the read-only field's ``current`` contact value: the email in any
    letter case, a timestamp as the same instant (``Z`` or any offset, any fraction digits),
    a URL exactly; ``null`` only for ``null``."""
    if sent is None or current is None:
        return sent is None and current is None
    if not isinstance(sent, str):
        return False
    if name == "email":
        try:
            return normalise_email(sent) == current
        except InvalidRequest:
            return False
    if name in _TIMESTAMP_FIELDS:
        return parse_timestamp(sent) == current
    return sent == current


class SubscriberService:
    """``service.subscribers``."""

    def __init__(self, context: ServiceContext) -> None:
        self.context = context

    # -- representation ----------------------------------------------------------------------

    def contact(self, record: SubscriberRecord) -> dict[str, Any]:
        """The wire contact of ``record`` (docs/newsletter-api.md, "Sign up"); identical to event
        payloads."""
        return contact_payload(record, self.context.settings)

    def shown_contact(self, record: SubscriberRecord) -> dict[str, Any]:
        """The contact as the Newsletter API returns it (JSON values), link tokens hidden: what
        ``subscribers show`` prints and the admin subscriber page shows."""
        return hide_link_tokens(json_values(self.contact(record)))

    def _queue(self, uow: SqlUnitOfWork, event_type: str, record: SubscriberRecord) -> None:
        queue_event(
            uow, self.context, event_type, self.contact(record), subscriber_email=record.email
        )

    # -- reads -------------------------------------------------------------------------------

    def get(self, email: str) -> SubscriberRecord:
        """The subscriber with this address (any case); :class:`InvalidRequest` naming
        ``email`` for an invalid address, :class:`NotFound` for no such subscriber."""
        address = normalise_email(email)
        with short_reads(), self.context.storage.transaction(write=False) as uow:
            return self._by_email(uow, address, lock=False)

    def find_by_token(self, kind: TokenKind, token: str) -> SubscriberRecord | None:
        """The subscriber a ``confirm``/``unsubscribe``/``profile`` link token belongs to, or
        ``None`` (also for anything that is not shaped like a token)."""
        if not isinstance(token, str) or not _TOKEN_RE.match(token):
            return None
        with short_reads(), self.context.storage.transaction(write=False) as uow:
            return uow.subscribers.get_by_token(kind, token)

    def list_page(
        self, status: str | None = None, cursor: str | None = None, limit: int = DEFAULT_LIMIT
    ) -> Page[SubscriberRecord]:
        """One page of subscribers in creation order, optionally of one status;
        :class:`InvalidRequest` names a bad ``status``, ``cursor`` or ``limit``."""
        status = optional_enum(status, "status", STATUSES)
        check_limit(limit)
        after_id = decode_cursor(cursor, "subscribers", status)
        with self.context.storage.transaction(write=False) as uow:
            rows = uow.subscribers.list_page(status=status, after_id=after_id, limit=limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        next_cursor = encode_cursor("subscribers", rows[-1].id, status) if more else None
        return Page(items=rows, next_cursor=next_cursor)

    def find_by_prefix(
        self, prefix: str, after: str | None = None, limit: int = DEFAULT_LIMIT
    ) -> Page[SubscriberRecord]:
        """One page of the subscribers whose address starts with ``prefix`` (any case, taken
        literally; ``""`` finds everyone), in address order. ``next_cursor`` is the page's
        last address: pass it as ``after`` for the next page. :class:`InvalidRequest` names a
        bad ``prefix``, ``after`` or ``limit``."""
        check_limit(limit)
        start = _address_part(prefix, "prefix")
        after_email = None if after is None else _address_part(after, "after")
        with self.context.storage.transaction(write=False) as uow:
            rows = uow.subscribers.find_by_prefix(start, after_email=after_email, limit=limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        return Page(items=rows, next_cursor=rows[-1].email if more else None)

    def walk(self, status: str, page_size: int = EXPORT_PAGE_SIZE) -> Iterator[SubscriberRecord]:
        """Every subscriber of ``status`` in creation order, read lazily in keyset pages of
        ``page_size``, each in its own short read transaction (an export streams it)."""
        status = enum_value(status, "status", STATUSES)
        after_id: int | None = None
        while True:
            with self.context.storage.transaction(write=False) as uow:
                rows = uow.subscribers.list_page(status=status, after_id=after_id, limit=page_size)
            yield from rows
            if len(rows) < page_size:
                return
            after_id = rows[-1].id

    # -- signup ------------------------------------------------------------------------------

    def subscribe(
        self, body: SignupRequest | Mapping[str, Any], *, by_reader: bool = False
    ) -> SubscribeResult:
        """Sign an address up (``POST /subscribers``, or with ``by_reader`` the public form).

        A new address becomes ``pending`` (queues ``newsletter.signup``), or ``confirmed`` with
        a valid consent (queues ``newsletter.signup`` then ``newsletter.confirmed``). An
        existing address is returned unchanged, whatever its status; a pending one queues
        ``newsletter.signup`` again at most once per ``confirmation_resend_interval`` since its
        last announcement, so re-submitting cannot make the platform mail it over and over.

        A new address the platform suppressed (see :class:`~.feedback.FeedbackService`) is
        stored ``bounced`` or ``unsubscribed`` as reported, queuing nothing, unless the reader
        signs up ``by_reader``: then it becomes ``pending`` as usual, and the suppression is
        lifted only when the reader follows the confirm link.

        :raises InvalidRequest: naming the field (unknown fields included).
        :raises ConsentRequired: consent partial, unparseable or in the future.
        """
        request = parse_request(SignupRequest, body)
        now = self.context.clock()
        data = new_signup_data(request, now)
        email = data.email
        # The events' payload is the contact of the record to be stored (a contact has no id).
        payload = contact_payload(data, self.context.settings)
        events = [new_event(self.context, "newsletter.signup", payload, subscriber_email=email)]
        if data.status == "confirmed":
            events.append(
                new_event(self.context, "newsletter.confirmed", payload, subscriber_email=email)
            )
        storage = self.context.storage
        guard = None if by_reader else subscriber_key(self.context, email)
        for _attempt in range(SIGNUP_ATTEMPTS):
            # Insert first: a new address (the common case) needs no look-up before it.
            created = storage.add_subscriber(data, events, unless_suppressed=guard)
            if created is not None:
                return SubscribeResult(created, created=True)
            with storage.transaction() as uow:
                existing = uow.subscribers.get_by_email(email, lock=True)
                if existing is None:
                    suppression = uow.feedback.suppression(guard) if guard else None
                    if suppression is None:
                        continue  # erased since the insert found it taken: the address is free
                    stored = uow.subscribers.add(stored_as_reported(data, suppression))
                    if stored is None:
                        continue  # taken since the look-up
                    return SubscribeResult(stored, created=True)  # nothing to announce
                if existing.status == "pending" and self._may_announce_again(uow, existing, now):
                    self._queue(uow, "newsletter.signup", existing)
                return SubscribeResult(existing, created=False)
        raise DbUnavailable(
            "the address was taken and erased again while this signup ran; try again"
        )

    def _may_announce_again(
        self, uow: SqlUnitOfWork, record: SubscriberRecord, now: datetime
    ) -> bool:
        """Claim the re-announcement of a pending ``record`` at ``now``: false while its last
        announcement is younger than the resend interval (the claim is one conditional write,
        so of concurrent re-submits at most one wins)."""
        interval = timedelta(seconds=self.context.settings.confirmation_resend_interval)
        return uow.subscribers.mark_announced(record.id, at=now, unless_since=now - interval)

    def resend_confirmation(self, email: str) -> ResendResult:
        """Ask the platform to send a pending reader's confirmation email again (the admin's
        "Resend the confirmation email", CLI ``subscribers resend-confirmation``): queues
        ``newsletter.signup`` as a re-submitted signup does, under the same rule, at most once
        per ``confirmation_resend_interval`` since the last announcement.

        :raises InvalidRequest: naming ``status`` when the subscriber is not pending.
        :raises NotFound: no such subscriber.
        """
        address = normalise_email(email)
        with self.context.storage.transaction() as uow:
            record = self._by_email(uow, address)
            if record.status != "pending":
                raise InvalidRequest(
                    f"only a pending subscriber is sent a confirmation; this one is "
                    f"{record.status}",
                    field="status",
                )
            queued = self._may_announce_again(uow, record, self.context.clock())
            if queued:
                self._queue(uow, "newsletter.signup", record)
            return ResendResult(record, queued=queued)

    # -- transitions -------------------------------------------------------------------------

    def confirm_by_token(self, token: str) -> SubscriberRecord:
        """The confirm link was followed: ``pending`` becomes ``confirmed`` (queues
        ``newsletter.confirmed``); any other status is left as it is (an old link revives no
        one). :class:`NotFound` when no subscriber has this token."""
        with self.context.storage.transaction() as uow:
            record = self._by_token(uow, "confirm", token)
            if record.status != "pending":
                return record
            uow.feedback.lift(subscriber_key(self.context, record.email))
            return self.set_status(uow, record, "confirmed")

    def unsubscribe(self, email: str) -> SubscriberRecord:
        """Suppress an address: any status becomes ``unsubscribed`` (queues
        ``newsletter.unsubscribed``); already unsubscribed keeps its first time, no event.
        :class:`NotFound` when there is no such subscriber."""
        address = normalise_email(email)
        with self.context.storage.transaction() as uow:
            record = self._by_email(uow, address)
            return self.unsubscribe_record(uow, record)

    def unsubscribe_by_token(self, token: str) -> SubscriberRecord:
        """As :meth:`unsubscribe`, from the unsubscribe link (:class:`NotFound`: no such token)."""
        with self.context.storage.transaction() as uow:
            return self.unsubscribe_record(uow, self._by_token(uow, "unsubscribe", token))

    def unsubscribe_record(self, uow: SqlUnitOfWork, record: SubscriberRecord) -> SubscriberRecord:
        """:meth:`unsubscribe` of ``record`` (read with its lock) in ``uow``."""
        if record.status == "unsubscribed":
            return record
        return self.set_status(uow, record, "unsubscribed")

    def mark_bounced(self, email: str) -> SubscriberRecord:
        """A hard bounce: ``pending`` or ``confirmed`` becomes ``bounced`` (queues
        ``newsletter.bounced``); bounced or unsubscribed stays as it is, without an event.
        :class:`NotFound` when there is no such subscriber."""
        address = normalise_email(email)
        with self.context.storage.transaction() as uow:
            return self.bounce_record(uow, self._by_email(uow, address))

    def bounce_record(self, uow: SqlUnitOfWork, record: SubscriberRecord) -> SubscriberRecord:
        """:meth:`mark_bounced` of ``record`` (read with its lock) in ``uow``."""
        if record.status in ("bounced", "unsubscribed"):
            return record
        return self.set_status(uow, record, "bounced")

    def set_status(
        self, uow: SqlUnitOfWork, record: SubscriberRecord, status: str
    ) -> SubscriberRecord:
        """``record`` moved to ``status`` now (stamping ``<status>_at``), saved, and its
        ``newsletter.<status>`` event queued."""
        now = self.context.clock()
        stamp: dict[str, Any] = {f"{status}_at": now}
        record = replace(record, status=status, updated_at=now, **stamp)
        uow.subscribers.save(record)
        self._queue(uow, f"newsletter.{status}", record)
        return record

    # -- edits -------------------------------------------------------------------------------

    def update(self, email: str, patch: PatchRequest | Mapping[str, Any]) -> SubscriberRecord:
        """``PATCH /subscribers/{email}``: omitted fields unchanged, null clears, ``prefs``
        merged, ``status`` only ``unsubscribed`` (queues ``newsletter.unsubscribed``).
        Read-only fields (:data:`READ_ONLY_FIELDS`) are accepted with their current values.

        :raises InvalidRequest: naming an unknown or invalid field, or a changed read-only one.
        :raises NotFound: no such subscriber.
        """
        address = normalise_email(email)
        request = parse_request(PatchRequest, patch)
        with self.context.storage.transaction() as uow:
            record = self._by_email(uow, address)
            self._check_echoes(record, request.echoes())
            changed = self.apply_change(record, request)
            if changed != record:
                changed = replace(changed, updated_at=self.context.clock())
                uow.subscribers.save(changed)
            if "status" in request.model_fields_set:
                changed = self.unsubscribe_record(uow, changed)
            return changed

    def update_profile_by_token(
        self, token: str, fields: ContactChange | Mapping[str, Any]
    ) -> SubscriberRecord:
        """The reader saved the profile page: apply ``fields`` as a PATCH without ``status``;
        the first save sets ``profile_completed_at``, every save queues the contact as
        ``newsletter.profile_completed``.

        :raises InvalidRequest: naming an unknown or invalid field.
        :raises NotFound: no subscriber has this profile token.
        """
        change = parse_request(ContactChange, fields)
        with self.context.storage.transaction() as uow:
            record = self._by_token(uow, "profile", token)
            now = self.context.clock()
            changed = replace(self.apply_change(record, change), updated_at=now)
            if changed.profile_completed_at is None:
                changed = replace(changed, profile_completed_at=now)
            uow.subscribers.save(changed)
            self._queue(uow, "newsletter.profile_completed", changed)
            return changed

    def _check_echoes(self, record: SubscriberRecord, echoes: Mapping[str, str | None]) -> None:
        """:raises InvalidRequest: naming a read-only field of ``echoes`` whose value is not
        the one ``record``'s contact holds (an absent ``confirm_url`` is ``null``)."""
        current = self.contact(record)
        for name, sent in echoes.items():
            if not _same_echo(name, sent, current.get(name)):
                raise InvalidRequest(
                    f"{name} is read-only: send its current value or leave it out", field=name
                )

    @staticmethod
    def apply_change(record: Data, change: ContactChange) -> Data:
        """``record`` with the contact fields ``change`` sets applied, and the rules between
        them and the stored ones kept: SMS needs a phone (clearing the phone ends SMS), and
        ``gender_self`` is kept only with gender ``self_described``."""
        sent = change.model_fields_set
        values: dict[str, Any] = {
            name: getattr(change, name) for name in _PLAIN_FIELDS if name in sent
        }
        sms_requested = False
        if "prefs" in sent:
            values["prefs"], values["sms_enabled"] = change.prefs.applied_to(
                record.prefs, record.sms_enabled
            )
            sms_requested = values["sms_enabled"] and not record.sms_enabled
        updated = replace(record, **values)
        if updated.phone is None and updated.sms_enabled:
            if sms_requested or "phone" not in sent:
                raise InvalidRequest(
                    "prefs.sms.enabled needs a phone number", field="prefs.sms.enabled"
                )
            updated = replace(updated, sms_enabled=False)  # clearing the phone ends SMS
        if updated.gender != "self_described":
            if "gender_self" in sent and updated.gender_self is not None:
                raise InvalidRequest(
                    "gender_self is only kept with gender self_described", field="gender_self"
                )
            updated = replace(updated, gender_self=None)
        return updated

    # -- erasure -----------------------------------------------------------------------------

    def erase(self, email: str) -> ErasureResult:
        """``DELETE /subscribers/{email}``: :meth:`erase_address` of an existing subscriber
        (:class:`NotFound` otherwise)."""
        return self._erase(email, subscriber_required=True)

    def erase_address(self, email: str) -> ErasureResult:
        """Erase everything stored about an address, subscriber or not: the subscriber row,
        the contact messages sent from it, every outbox event carrying it and every upload
        waiting in the admin's Import page that holds it (the import is ended, its file
        deleted); admin audit acts that named it name its keyed hash instead. A deletion
        record (keyed hash of the address, time, previous status, counts) is always kept as
        evidence; it never holds the address. :class:`InvalidRequest` for a bad address."""
        return self._erase(email, subscriber_required=False)

    def _erase(self, email: str, *, subscriber_required: bool) -> ErasureResult:
        address = normalise_email(email)
        with self.context.storage.transaction() as uow:
            if subscriber_required:
                record: SubscriberRecord | None = self._by_email(uow, address)
            else:
                record = uow.subscribers.get_by_email(address, lock=True)
            return self.erase_record(uow, address, record)

    def erase_record(
        self, uow: SqlUnitOfWork, address: str, record: SubscriberRecord | None
    ) -> ErasureResult:
        """:meth:`erase_address` in ``uow`` of the normalised ``address``, whose subscriber
        is ``record`` (read with its lock; ``None``: none)."""
        key = subscriber_key(self.context, address)
        if record is not None:
            uow.subscribers.delete(record.id)
        previous_status = record.status if record is not None else None
        discarded = uow.outbox.discard_for_subscriber(key)
        messages = uow.messages.delete_from(address)
        uow.feedback.forget(key)
        uow.import_jobs.discard_holding(
            address.encode(), by="the erasure of an address", at=self.context.clock()
        )
        uow.admin_audit.replace_target(address, key)
        uow.deletions.add(
            email_hmac=key,
            previous_status=previous_status,
            deleted_at=self.context.clock(),
            discarded_events=discarded,
            erased_messages=messages,
        )
        return ErasureResult(
            email=address,
            previous_status=previous_status,
            discarded_events=discarded,
            erased_messages=messages,
        )

    def erasure_evidence(self, email: str) -> list[DeletionRecord]:
        """The deletion records of an address (found by its keyed hash), oldest first."""
        key = subscriber_key(self.context, normalise_email(email))
        with self.context.storage.transaction(write=False) as uow:
            return uow.deletions.find(key)

    # -- helpers -----------------------------------------------------------------------------

    @staticmethod
    def _by_email(uow: SqlUnitOfWork, address: str, *, lock: bool = True) -> SubscriberRecord:
        record = uow.subscribers.get_by_email(address, lock=lock)
        if record is None:
            raise NotFound("no subscriber with that email address")
        return record

    @staticmethod
    def _by_token(uow: SqlUnitOfWork, kind: TokenKind, token: str) -> SubscriberRecord:
        record = None
        if isinstance(token, str) and _TOKEN_RE.match(token):
            record = uow.subscribers.get_by_token(kind, token, lock=True)
        if record is None:
            raise NotFound(f"this {kind} link is not valid")
        return record
