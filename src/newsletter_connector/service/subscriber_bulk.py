"""Acts on many subscribers at once (the admin's subscriber list): each address gets exactly
what the single act does to it (:meth:`SubscriberService.unsubscribe`, ``mark_bounced``,
``erase``), in its own transaction with the events that act queues, so a bulk act queues no
event a single act would not, and an address already changed or gone is counted, not
refused."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ..errors import InvalidRequest
from ..model.contact import normalise_email
from ..plugins.sql_store.store import SqlUnitOfWork
from .subscribers import SubscriberService

#: The acts, by the name the admin's forms and the audit log give them.
BulkAct = Literal["unsubscribe", "bounce", "erase"]
BULK_ACTS: tuple[BulkAct, ...] = ("unsubscribe", "bounce", "erase")
#: What one act did to one address.
BulkResult = Literal["changed", "unchanged", "missing"]
#: The most addresses one call takes: a page of the list.
MAX_ADDRESSES = 50


@dataclass(frozen=True)
class BulkOutcome:
    """What a bulk act did: how many subscribers it ``changed``, how many it found already so
    (``unchanged``: already unsubscribed, or bounced or unsubscribed for "bounce"), and how
    many addresses had no subscriber any more (``missing``)."""

    changed: int
    unchanged: int
    missing: int

    @property
    def total(self) -> int:
        return self.changed + self.unchanged + self.missing


class SubscriberBulkService:
    """``service.subscriber_bulk``."""

    def __init__(self, subscribers: SubscriberService) -> None:
        self.subscribers = subscribers

    def apply(self, act: str, emails: Iterable[str]) -> BulkOutcome:
        """Do ``act`` to each of ``emails`` (at most :data:`MAX_ADDRESSES`, repeats counted
        once). :class:`InvalidRequest` names ``act`` or ``emails`` (a malformed address among
        them, too) before anything changes."""
        if act not in BULK_ACTS:
            raise InvalidRequest(f"act must be one of: {', '.join(BULK_ACTS)}", field="act")
        addresses = list(dict.fromkeys(emails))
        if not addresses:
            raise InvalidRequest("select at least one subscriber", field="emails")
        if len(addresses) > MAX_ADDRESSES:
            raise InvalidRequest(f"at most {MAX_ADDRESSES} subscribers at once", field="emails")
        addresses = list(dict.fromkeys(_checked(email) for email in addresses))
        found: Counter[BulkResult] = Counter()
        for address in addresses:
            with self.subscribers.context.storage.transaction() as uow:
                found[self.act_in(uow, act, address)] += 1
        return BulkOutcome(
            changed=found["changed"], unchanged=found["unchanged"], missing=found["missing"]
        )

    def act_in(self, uow: SqlUnitOfWork, act: str, address: str) -> BulkResult:
        """Do ``act`` (one of :data:`BULK_ACTS`) in ``uow`` to the normalised ``address``,
        as its single act does; what became of it."""
        record = uow.subscribers.get_by_email(address, lock=True)
        if record is None:
            return "missing"
        if act == "erase":
            self.subscribers.erase_record(uow, address, record)
            return "changed"
        change = (
            self.subscribers.unsubscribe_record
            if act == "unsubscribe"
            else self.subscribers.bounce_record
        )
        return "unchanged" if change(uow, record).status == record.status else "changed"


def _checked(email: str) -> str:
    try:
        return normalise_email(email)
    except InvalidRequest:
        raise InvalidRequest(f"{email[:80]!r} is not an email address", field="emails") from None
