"""What the descriptor hooks return: named plugin offerings, one of each kind picked by ``name``
(settings ``storage_backend`` and ``issue_renderer``, a connection's ``transport``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx
    from sqlalchemy.engine import Connection, Engine

    from .settings import Settings
    from .storage.host import SubscriberRepository


@dataclass(frozen=True)
class SubscriberStore:
    """A storage backend (hook ``newsletter_storage_backends``, setting ``storage_backend``):
    where the built-in store keeps subscribers. ``factory(connection)`` returns the
    :class:`~.storage.host.SubscriberRepository` of one unit of work, built on its own
    SQLAlchemy ``connection`` so that its writes commit or roll back with the outbox events
    they cause. ``check_ready(engine)``, when given, raises
    :class:`~newsletter_connector.errors.NotMigrated` (saying how to migrate) unless the
    store's own tables are ready; ``migrate(engine)`` creates or upgrades them (``db
    upgrade`` runs it after the package's migrations)."""

    name: str
    description: str
    factory: Callable[[Connection], SubscriberRepository]
    check_ready: Callable[[Engine], None] | None = None
    migrate: Callable[[Engine], None] | None = None


@dataclass(frozen=True)
class IssueRenderer:
    """An issue renderer: ``render(issue, settings)`` returns the edition's HTML, holding the
    literal placeholder ``{{unsubscribe_url}}``; ``render_text``, when given, a plain-text
    alternative. ``issue`` is a mapping: kind, cadence, date, subject, site_url,
    postal_address, sections."""

    name: str
    description: str
    render: Callable[[dict[str, Any], Settings], str]
    render_text: Callable[[dict[str, Any], Settings], str] | None = None


@dataclass(frozen=True)
class OutboundTransport:
    """A way to push events to the platform: ``factory(connection, http_client)`` returns an
    object with ``deliver(events)`` (contract: :mod:`newsletter_connector.storage.transport`).
    ``check_path``, when given, makes the transport testable ("Test connection"): the test
    POSTs an empty JSON array there, under the connection's ``platform_base``, with the bearer
    token, and a 2xx answer means reachable; ``None`` says the transport cannot be tested."""

    name: str
    description: str
    factory: Callable[[Any, httpx.Client], Any]
    extras: dict[str, Any] = field(default_factory=dict)
    check_path: str | None = None


#: An admin's role: ``owner`` may do everything; ``editor`` runs the newsletter (dashboard,
#: subscribers, contact messages, issues, analytics) but not the settings (API keys, list-source
#: credentials, the platform connection, the outbox, admin users) or the audit log.
OWNER = "owner"
EDITOR = "editor"
ADMIN_ROLES = (OWNER, EDITOR)


@dataclass(frozen=True)
class AdminUser:
    """A host's signed-in admin, as the ``newsletter_admin_user`` hook reports it: ``name`` is
    shown in the admin area and recorded as the actor of every act in the audit record;
    ``role`` (one of :data:`ADMIN_ROLES`, ``owner`` unless said) decides which pages it may
    use.

    :raises ValueError: a role that is not one of :data:`ADMIN_ROLES`.
    """

    name: str
    role: str = OWNER

    def __post_init__(self) -> None:
        if self.role not in ADMIN_ROLES:
            raise ValueError(f"role must be one of {', '.join(ADMIN_ROLES)}, not {self.role!r}")
