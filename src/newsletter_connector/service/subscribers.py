"""The subscriber lifecycle (SPEC 2.1, 3): every rule about subscribers lives here.

Used by the Newsletter API, the reader pages, the CLI and host code. Each operation runs in one
storage transaction together with the outbox events it causes (``events.queue_event``), and
returns stored :class:`SubscriberRecord` objects; :meth:`SubscriberService.contact` turns one
into the wire contact (the same serializer the event payloads use).

Input mappings have the JSON shapes of the Newsletter API bodies (``subscribe`` takes the
``POST /subscribers`` body, ``update`` the ``PATCH`` body); every problem raises
``InvalidRequest`` naming the field, or ``ConsentRequired``, before anything is changed.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from ..errors import ConsentRequired, DbUnavailable, InvalidRequest, NotFound
from ..model.contact import (
    AGE_RANGES,
    DEFAULT_PREFS,
    GENDERS,
    STATUSES,
    categories_value,
    contact_payload,
    merge_prefs,
    normalise_email,
    optional_enum,
    optional_phone,
    optional_text,
    optional_zip,
    require_object,
)
from ..storage import DeletionRecord, SubscriberData, SubscriberRecord, TokenKind, UnitOfWork
from ..timeutil import to_naive_utc
from .context import ServiceContext
from .cursors import DEFAULT_LIMIT, Page, check_limit, decode_cursor, encode_cursor
from .events import new_event, queue_event, subscriber_key

#: Inserts a signup tries when its address is taken and then erased before it is looked up
#: (each time): a race, not a loop to spin in.
SIGNUP_ATTEMPTS = 3

SIGNUP_FIELDS = (
    "email",
    "first_name",
    "last_name",
    "zip",
    "phone",
    "prefs",
    "categories",
    "consent",
)
#: Contact fields a PATCH may set (``status`` only to ``unsubscribed``).
PATCH_FIELDS = (
    "first_name",
    "last_name",
    "zip",
    "phone",
    "prefs",
    "status",
    "age_range",
    "gender",
    "gender_self",
    "categories",
)
#: Contact fields only the service sets. A PATCH may carry them back with their current values
#: (what GET gave), which changes nothing; any other value is ``invalid_request`` naming the field.
READ_ONLY_FIELDS = (
    "email",
    "profile_completed_at",
    "created_at",
    "confirmed_at",
    "unsubscribed_at",
    "unsubscribe_url",
    "profile_url",
    "confirm_url",
)
#: Read-only fields holding a timestamp: an echo is compared as an instant, in any offset.
_TIMESTAMP_FIELDS = frozenset(name for name in READ_ONLY_FIELDS if name.endswith("_at"))
#: What the reader's profile page may change.
PROFILE_FIELDS = tuple(name for name in PATCH_FIELDS if name != "status")

MAX_CONSENT_SOURCE_LENGTH = 200
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")


@dataclass(frozen=True)
class SubscribeResult:
    """What ``subscribe`` did: ``created`` is false when the address already existed."""

    record: SubscriberRecord
    created: bool


@dataclass(frozen=True)
class ErasureResult:
    """What an erasure did. The address is returned to the caller, never stored.

    ``previous_status`` is ``None`` when the address had no subscriber; ``discarded_events``
    counts its outbox events still undelivered (delivered ones are deleted too, uncounted);
    ``erased_messages`` the contact messages sent from it. A deletion record with the same
    counts is kept for every erasure."""

    email: str
    previous_status: str | None
    discarded_events: int
    erased_messages: int


def new_token() -> str:
    """A link token: 192 random bits, URL-safe."""
    return secrets.token_urlsafe(24)


def parse_timestamp(value: str) -> datetime | None:
    """An ISO-8601 timestamp with an explicit offset (``Z`` or ``±hh:mm``) as naive UTC, or
    ``None`` when it does not parse or carries no offset."""
    text = value.strip()
    if text[-1:] in ("Z", "z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None or "T" not in text.upper():
        return None
    try:
        return to_naive_utc(parsed)
    except OverflowError:  # e.g. 0001-01-01T00:00:00+01:00 is before datetime.min in UTC
        return None


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
        """The wire contact of ``record`` (SPEC 2.1); identical to event payloads."""
        return contact_payload(record, self.context.settings)

    def _queue(self, uow: UnitOfWork, event_type: str, record: SubscriberRecord) -> None:
        queue_event(
            uow, self.context, event_type, self.contact(record), subscriber_email=record.email
        )

    # -- reads -------------------------------------------------------------------------------

    def get(self, email: str) -> SubscriberRecord:
        """The subscriber with this address (any case).

        :raises InvalidRequest: not a valid address (field ``email``).
        :raises NotFound: no such subscriber.
        """
        address = normalise_email(email)
        with self.context.storage.transaction(write=False) as uow:
            record = uow.subscribers.get_by_email(address)
        if record is None:
            raise NotFound("no subscriber with that email address")
        return record

    def find_by_token(self, kind: TokenKind, token: str) -> SubscriberRecord | None:
        """The subscriber a ``confirm``/``unsubscribe``/``profile`` link token belongs to, or
        ``None`` (also for anything that is not shaped like a token)."""
        if not isinstance(token, str) or not _TOKEN_RE.match(token):
            return None
        with self.context.storage.transaction(write=False) as uow:
            return uow.subscribers.get_by_token(kind, token)

    def list_page(
        self, status: str | None = None, cursor: str | None = None, limit: int = DEFAULT_LIMIT
    ) -> Page[SubscriberRecord]:
        """One page of subscribers in creation order, optionally only one status.

        :raises InvalidRequest: naming ``status``, ``cursor`` or ``limit``.
        """
        status = optional_enum(status, "status", STATUSES)
        check_limit(limit)
        after_id = decode_cursor(cursor, "subscribers", status)
        with self.context.storage.transaction(write=False) as uow:
            rows = uow.subscribers.list_page(status=status, after_id=after_id, limit=limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        next_cursor = encode_cursor("subscribers", rows[-1].id, status) if more else None
        return Page(items=rows, next_cursor=next_cursor)

    # -- signup ------------------------------------------------------------------------------

    def subscribe(self, body: Mapping[str, Any]) -> SubscribeResult:
        """Sign an address up (``POST /subscribers``).

        A new address becomes ``pending`` (queues ``newsletter.signup``), or ``confirmed`` when
        a valid consent ``{source, collected_at}`` is given (queues ``newsletter.signup`` then
        ``newsletter.confirmed``). An existing address is returned unchanged, whatever its
        status (an unsubscribed address is never resubscribed this way); a still pending one
        queues ``newsletter.signup`` again so the platform can resend its confirmation mail,
        with the same ``confirm_url``, but at most once per ``confirmation_resend_interval``
        counted from its last announcement (the signup itself included): within it nothing is
        queued, so re-submitting an address cannot make us mail it over and over.

        :raises InvalidRequest: naming the field (unknown fields included).
        :raises ConsentRequired: consent partial, unparseable or in the future.
        """
        body = require_object(body)
        for name in body:
            if name not in SIGNUP_FIELDS:
                raise InvalidRequest(f"unknown field {name}", field=str(name))
        if "email" not in body:
            raise InvalidRequest("email is required", field="email")
        email = normalise_email(body["email"])
        now = self.context.clock()
        consent = self._parse_consent(body.get("consent"), now)
        prefs, sms_enabled = DEFAULT_PREFS, False
        if body.get("prefs") is not None:
            prefs, sms_enabled = merge_prefs(prefs, sms_enabled, body["prefs"])
        phone = optional_phone(body.get("phone"))
        if sms_enabled and phone is None:
            raise InvalidRequest(
                "prefs.sms.enabled needs a phone number", field="prefs.sms.enabled"
            )
        status = "confirmed" if consent else "pending"
        data = SubscriberData(
            email=email,
            first_name=optional_text(body.get("first_name"), "first_name"),
            last_name=optional_text(body.get("last_name"), "last_name"),
            zip=optional_zip(body.get("zip")),
            phone=phone,
            sms_enabled=sms_enabled,
            prefs=prefs,
            status=status,
            age_range=None,
            gender=None,
            gender_self=None,
            categories=categories_value(body.get("categories")),
            consent_source=consent[0] if consent else None,
            consent_collected_at=consent[1] if consent else None,
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
        # The events' payload is the contact of the record to be stored (a contact has no id).
        payload = contact_payload(data, self.context.settings)
        events = [new_event(self.context, "newsletter.signup", payload, subscriber_email=email)]
        if status == "confirmed":
            events.append(
                new_event(self.context, "newsletter.confirmed", payload, subscriber_email=email)
            )
        storage = self.context.storage
        for _attempt in range(SIGNUP_ATTEMPTS):
            # Insert first: a new address (the common case) needs no look-up before it.
            created = storage.add_subscriber(data, events)
            if created is not None:
                return SubscribeResult(created, created=True)
            with storage.transaction() as uow:
                existing = uow.subscribers.get_by_email(email, lock=True)
                if existing is None:
                    continue  # erased since the insert found it taken: the address is free
                if existing.status == "pending" and self._may_announce_again(uow, existing, now):
                    self._queue(uow, "newsletter.signup", existing)
                return SubscribeResult(existing, created=False)
        raise DbUnavailable(
            "the address was taken and erased again while this signup ran; try again"
        )

    def _may_announce_again(self, uow: UnitOfWork, record: SubscriberRecord, now: datetime) -> bool:
        """Claim the re-announcement of a pending ``record`` at ``now``: false while its last
        announcement is younger than the resend interval (the claim is one conditional write,
        so of concurrent re-submits at most one wins)."""
        interval = timedelta(seconds=self.context.settings.confirmation_resend_interval)
        return uow.subscribers.mark_announced(record.id, at=now, unless_since=now - interval)

    @staticmethod
    def _parse_consent(value: Any, now: datetime) -> tuple[str, datetime] | None:
        """``(source, collected_at)`` of a valid consent object; ``None`` when absent/null."""
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise ConsentRequired("consent must be an object {source, collected_at}")
        unknown = [key for key in value if key not in ("source", "collected_at")]
        if unknown:
            raise ConsentRequired(f"consent has an unknown field {unknown[0]}")
        source, collected = value.get("source"), value.get("collected_at")
        if source is None or collected is None:
            raise ConsentRequired("consent needs both source and collected_at")
        if not isinstance(source, str) or not source.strip():
            raise ConsentRequired("consent.source must be a non-blank string")
        if len(source.strip()) > MAX_CONSENT_SOURCE_LENGTH:
            raise ConsentRequired(
                f"consent.source must be at most {MAX_CONSENT_SOURCE_LENGTH} characters"
            )
        if any(ord(c) < 32 or ord(c) == 127 or 0xD800 <= ord(c) <= 0xDFFF for c in source):
            raise ConsentRequired("consent.source must be printable Unicode text")
        collected_at = parse_timestamp(collected) if isinstance(collected, str) else None
        if collected_at is None:
            raise ConsentRequired(
                "consent.collected_at must be an ISO-8601 timestamp with a time zone"
            )
        if collected_at > now:
            raise ConsentRequired("consent.collected_at is in the future")
        return source.strip(), collected_at

    # -- transitions -------------------------------------------------------------------------

    def confirm_by_token(self, token: str) -> SubscriberRecord:
        """The confirm link was followed: ``pending`` becomes ``confirmed`` (queues
        ``newsletter.confirmed``). Any other status is left as it is (an unsubscribed or
        bounced subscriber is not revived by an old link); following it twice is harmless.

        :raises NotFound: no subscriber has this confirm token.
        """
        with self.context.storage.transaction() as uow:
            record = self._by_token(uow, "confirm", token)
            if record.status != "pending":
                return record
            now = self.context.clock()
            record = replace(record, status="confirmed", confirmed_at=now, updated_at=now)
            uow.subscribers.save(record)
            self._queue(uow, "newsletter.confirmed", record)
            return record

    def unsubscribe(self, email: str) -> SubscriberRecord:
        """Suppress an address: any status becomes ``unsubscribed`` (queues
        ``newsletter.unsubscribed``); already unsubscribed keeps its first time, no event.

        :raises NotFound: no such subscriber.
        """
        address = normalise_email(email)
        with self.context.storage.transaction() as uow:
            record = self._by_email(uow, address)
            return self._unsubscribe(uow, record)

    def unsubscribe_by_token(self, token: str) -> SubscriberRecord:
        """As :meth:`unsubscribe`, from the unsubscribe link.

        :raises NotFound: no subscriber has this unsubscribe token.
        """
        with self.context.storage.transaction() as uow:
            return self._unsubscribe(uow, self._by_token(uow, "unsubscribe", token))

    def _unsubscribe(self, uow: UnitOfWork, record: SubscriberRecord) -> SubscriberRecord:
        if record.status == "unsubscribed":
            return record
        now = self.context.clock()
        record = replace(record, status="unsubscribed", unsubscribed_at=now, updated_at=now)
        uow.subscribers.save(record)
        self._queue(uow, "newsletter.unsubscribed", record)
        return record

    def mark_bounced(self, email: str) -> SubscriberRecord:
        """The platform reported a hard bounce: ``pending`` or ``confirmed`` becomes
        ``bounced`` (queues ``newsletter.bounced``). Bounced stays bounced and unsubscribed
        stays unsubscribed (already suppressed), without an event.

        :raises NotFound: no such subscriber.
        """
        address = normalise_email(email)
        with self.context.storage.transaction() as uow:
            record = self._by_email(uow, address)
            if record.status in ("bounced", "unsubscribed"):
                return record
            now = self.context.clock()
            record = replace(record, status="bounced", bounced_at=now, updated_at=now)
            uow.subscribers.save(record)
            self._queue(uow, "newsletter.bounced", record)
            return record

    # -- edits -------------------------------------------------------------------------------

    def update(self, email: str, patch: Mapping[str, Any]) -> SubscriberRecord:
        """``PATCH /subscribers/{email}``: omitted fields unchanged, null clears, ``prefs``
        merged, ``status`` only ``unsubscribed`` (queues ``newsletter.unsubscribed``).

        Read-only fields (:data:`READ_ONLY_FIELDS`) are accepted with their current values, so
        a contact from GET can be sent back with some fields changed; ``status`` keeps its own
        rule (only ``unsubscribed``) whatever the subscriber's current status.

        :raises InvalidRequest: naming an unknown or invalid field, or a read-only one whose
            value differs from the current one.
        :raises NotFound: no such subscriber.
        """
        address = normalise_email(email)
        patch = require_object(patch)
        self._check_fields(patch, PATCH_FIELDS, echoes=True)
        if "status" in patch and patch["status"] != "unsubscribed":
            raise InvalidRequest(
                "status can only be set to unsubscribed (nothing skips double opt-in); "
                "leave it out to keep the current status",
                field="status",
            )
        with self.context.storage.transaction() as uow:
            record = self._by_email(uow, address)
            self._check_echoes(record, patch)
            changed = self._apply(record, patch)
            if changed != record:
                changed = replace(changed, updated_at=self.context.clock())
                uow.subscribers.save(changed)
            if "status" in patch:
                changed = self._unsubscribe(uow, changed)
            return changed

    def update_profile_by_token(self, token: str, fields: Mapping[str, Any]) -> SubscriberRecord:
        """The reader saved the profile page: apply ``fields`` as a PATCH without ``status``.
        The first save sets ``profile_completed_at``; every save queues
        ``newsletter.profile_completed`` with the contact, so the platform stays current.

        :raises InvalidRequest: naming an unknown or invalid field.
        :raises NotFound: no subscriber has this profile token.
        """
        fields = require_object(fields)
        self._check_fields(fields, PROFILE_FIELDS)
        with self.context.storage.transaction() as uow:
            record = self._by_token(uow, "profile", token)
            now = self.context.clock()
            changed = replace(self._apply(record, fields), updated_at=now)
            if changed.profile_completed_at is None:
                changed = replace(changed, profile_completed_at=now)
            uow.subscribers.save(changed)
            self._queue(uow, "newsletter.profile_completed", changed)
            return changed

    @staticmethod
    def _check_fields(
        changes: Mapping[str, Any], allowed: tuple[str, ...], *, echoes: bool = False
    ) -> None:
        """:param echoes: let read-only fields through (``_check_echoes`` compares them)."""
        for name in changes:
            if name in READ_ONLY_FIELDS and echoes:
                continue
            if name in READ_ONLY_FIELDS or (name == "status" and name not in allowed):
                raise InvalidRequest(f"{name} is read-only", field=str(name))
            if name not in allowed:
                raise InvalidRequest(f"unknown field {name}", field=str(name))

    def _check_echoes(self, record: SubscriberRecord, changes: Mapping[str, Any]) -> None:
        """:raises InvalidRequest: naming a read-only field of ``changes`` whose value is not
        the one ``record``'s contact holds (an absent ``confirm_url`` is ``null``)."""
        current = self.contact(record)
        for name in READ_ONLY_FIELDS:
            if name in changes and not _same_echo(name, changes[name], current.get(name)):
                raise InvalidRequest(
                    f"{name} is read-only: send its current value or leave it out", field=name
                )

    @staticmethod
    def _apply(record: SubscriberRecord, changes: Mapping[str, Any]) -> SubscriberRecord:
        """``record`` with the (already allowed) contact fields of ``changes`` applied."""
        values: dict[str, Any] = {}
        for name in ("first_name", "last_name", "gender_self"):
            if name in changes:
                values[name] = optional_text(changes[name], name)
        if "zip" in changes:
            values["zip"] = optional_zip(changes["zip"])
        if "phone" in changes:
            values["phone"] = optional_phone(changes["phone"])
        if "age_range" in changes:
            values["age_range"] = optional_enum(changes["age_range"], "age_range", AGE_RANGES)
        if "gender" in changes:
            values["gender"] = optional_enum(changes["gender"], "gender", GENDERS)
        if "categories" in changes:
            values["categories"] = categories_value(changes["categories"])
        sms_requested = False
        if "prefs" in changes:
            if changes["prefs"] is None:
                raise InvalidRequest(
                    "prefs cannot be cleared; set each cadence instead", field="prefs"
                )
            values["prefs"], values["sms_enabled"] = merge_prefs(
                record.prefs, record.sms_enabled, changes["prefs"]
            )
            sms_requested = values["sms_enabled"] and not record.sms_enabled
        updated = replace(record, **values)
        if updated.phone is None and updated.sms_enabled:
            if sms_requested or "phone" not in changes:
                raise InvalidRequest(
                    "prefs.sms.enabled needs a phone number", field="prefs.sms.enabled"
                )
            updated = replace(updated, sms_enabled=False)  # clearing the phone ends SMS
        if updated.gender != "self_described":
            if "gender_self" in changes and updated.gender_self is not None:
                raise InvalidRequest(
                    "gender_self is only kept with gender self_described", field="gender_self"
                )
            updated = replace(updated, gender_self=None)
        return updated

    # -- erasure -----------------------------------------------------------------------------

    def erase(self, email: str) -> ErasureResult:
        """``DELETE /subscribers/{email}``: the subscriber must exist; then everything about
        the address is erased, as :meth:`erase_address` does.

        :raises NotFound: no such subscriber.
        """
        return self._erase(email, subscriber_required=True)

    def erase_address(self, email: str) -> ErasureResult:
        """Erase everything stored about an address, subscriber or not: the subscriber row
        (gone for good; the address may sign up again as new), the contact messages sent
        from it and every outbox event carrying it, delivered or not.
        A deletion record (keyed hash of the address, time, previous status and the counts of
        :class:`ErasureResult`) is kept as evidence that the erasure was carried out, also
        when nothing was stored; it never holds the address.

        :raises InvalidRequest: naming ``email`` when it is not an address.
        """
        return self._erase(email, subscriber_required=False)

    def _erase(self, email: str, *, subscriber_required: bool) -> ErasureResult:
        address = normalise_email(email)
        key = subscriber_key(self.context, address)
        with self.context.storage.transaction() as uow:
            if subscriber_required:
                record: SubscriberRecord | None = self._by_email(uow, address)
            else:
                record = uow.subscribers.get_by_email(address, lock=True)
            if record is not None:
                uow.subscribers.delete(record.id)
            previous_status = record.status if record is not None else None
            discarded = uow.outbox.discard_for_subscriber(key)
            messages = uow.messages.delete_from(address)
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
    def _by_email(uow: UnitOfWork, address: str) -> SubscriberRecord:
        record = uow.subscribers.get_by_email(address, lock=True)
        if record is None:
            raise NotFound("no subscriber with that email address")
        return record

    @staticmethod
    def _by_token(uow: UnitOfWork, kind: TokenKind, token: str) -> SubscriberRecord:
        record = None
        if isinstance(token, str) and _TOKEN_RE.match(token):
            record = uow.subscribers.get_by_token(kind, token, lock=True)
        if record is None:
            raise NotFound(f"this {kind} link is not valid")
        return record
