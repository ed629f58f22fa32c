"""The admin area as a Python API (the CLI and the admin pages are thin edges over it): API
keys and the list-source key are stored as SHA-256 digests only (the list-source user name is
kept too, to be shown); the connection token is stored, as every push sends it.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import date
from urllib.parse import urlsplit

from ..errors import DbUnavailable, InvalidRequest, Unauthorized
from ..https_rule import carries_credentials, scheme_allowed, with_lowercase_scheme
from ..model.contact import normalise_email
from ..plugin_manager import outbound_transports, pick
from ..short_reads import short_reads
from ..storage.access_records import ApiKeyRecord, ConnectionRecord
from ..storage.outbox_records import OutboxBatchRecord, OutboxStatus, SubscriberEventRecord
from ..storage.transport import header_safe_token
from .connection_check import ConnectionCheck, check_connection
from .context import ServiceContext, digests_equal, sha256_hex
from .events import subscriber_key

log = logging.getLogger(__name__)

API_KEY_PREFIX = "nlk_"
LISTSOURCE_CREDENTIALS = "listsource_credentials"
MAX_LABEL_LENGTH = 100


@dataclass(frozen=True)
class IssuedKey:
    """A freshly created API key. ``key`` is the only copy that will ever exist."""

    record: ApiKeyRecord
    key: str

    def __repr__(self) -> str:
        return f"IssuedKey(record={self.record!r}, key=<hidden>)"


@dataclass(frozen=True)
class ListSourceStatus:
    """Whether the list-source surface is on, and for which user (``None`` when off, or when
    the credentials were stored before the user name was kept)."""

    enabled: bool
    user: str | None


class AdminService:
    """Operator actions; each runs in its own transaction."""

    def __init__(self, context: ServiceContext) -> None:
        self.context = context
        #: Key id -> the last UTC day this process recorded its use: one write a day per key.
        self._recorded_use: dict[int, date] = {}

    # -- Newsletter API keys -------------------------------------------------------------

    def create_api_key(self, label: str) -> IssuedKey:
        """Issue a key labelled ``label``: returned once, only its digest stored
        (:class:`InvalidRequest`: the label is blank, too long, or already used)."""
        label = label.strip()
        if not label or len(label) > MAX_LABEL_LENGTH or label.isdigit():
            raise InvalidRequest(
                f"label must be 1-{MAX_LABEL_LENGTH} characters and not only digits",
                field="label",
            )
        key = API_KEY_PREFIX + secrets.token_urlsafe(32)
        key_prefix = key[: len(API_KEY_PREFIX) + 4]
        now = self.context.clock()
        with self.context.storage.transaction() as uow:
            key_id = uow.keys.add(
                label=label,
                key_prefix=key_prefix,
                key_digest=sha256_hex(key),
                created_at=now,
            )
        record = ApiKeyRecord(
            id=key_id, label=label, key_prefix=key_prefix, created_at=now, revoked_at=None
        )
        return IssuedKey(record=record, key=key)

    def list_api_keys(self) -> list[ApiKeyRecord]:
        """Every key, revoked included, oldest first (no secrets: only labels and prefixes)."""
        with self.context.storage.transaction(write=False) as uow:
            return uow.keys.list()

    def revoke_api_key(self, label_or_id: str) -> ApiKeyRecord:
        """Revoke a key by label or id, for the very next request (:class:`InvalidRequest`:
        no key has it)."""
        with self.context.storage.transaction() as uow:
            record = uow.keys.revoke(label_or_id.strip(), at=self.context.clock())
        if record is None:
            raise InvalidRequest(f"no API key with label or id {label_or_id!r}", field="key")
        return record

    def authenticate_api_key(self, presented: str) -> ApiKeyRecord:
        """The active key matching ``presented`` (looked up on every call, so a revocation
        holds on every worker's next request); :class:`Unauthorized` otherwise."""
        with short_reads():
            record = self.context.storage.find_active_api_key(sha256_hex(presented))
        if record is None:
            raise Unauthorized("the API key is unknown or revoked")
        self._record_use(record.id)
        return record

    def _record_use(self, key_id: int) -> None:
        """Note the key's use today, once a day per process; a failed write is only logged
        (the request it authenticated goes on)."""
        today = self.context.clock().date()
        if self._recorded_use.get(key_id) == today:
            return
        try:
            self.context.storage.record_api_key_use(key_id, on=today)
        except DbUnavailable as exc:
            log.warning("could not record the use of API key %s: %s", key_id, exc.message)
            return
        self._recorded_use[key_id] = today

    # -- List-source credentials ---------------------------------------------------------

    def set_listsource_credentials(self, user: str, key: str) -> None:
        """Turn the list-source surface on with these credentials (stored as digests);
        :class:`InvalidRequest` names a bad ``user`` or ``key``."""
        if not user or ":" in user or user.strip() != user:
            raise InvalidRequest("user must be non-blank, without ':' or spaces", field="user")
        if len(key) < 12:
            raise InvalidRequest("key must be at least 12 characters", field="key")
        with self.context.storage.transaction() as uow:
            uow.settings.put(
                LISTSOURCE_CREDENTIALS,
                {"user": user, "user_sha256": sha256_hex(user), "key_sha256": sha256_hex(key)},
                at=self.context.clock(),
            )

    def disable_listsource(self) -> bool:
        """Turn the list-source surface off (every request then answers 404)."""
        with self.context.storage.transaction() as uow:
            return uow.settings.delete(LISTSOURCE_CREDENTIALS)

    def listsource_enabled(self) -> bool:
        """Whether both list-source credentials are set."""
        with self.context.storage.transaction(write=False) as uow:
            return uow.settings.get(LISTSOURCE_CREDENTIALS) is not None

    def listsource_status(self) -> ListSourceStatus:
        """On or off, with the user name (never the key, of which only a digest exists)."""
        with self.context.storage.transaction(write=False) as uow:
            stored = uow.settings.get(LISTSOURCE_CREDENTIALS)
        if stored is None:
            return ListSourceStatus(enabled=False, user=None)
        return ListSourceStatus(enabled=True, user=stored.get("user"))

    def verify_listsource_credentials(self, user: str, key: str) -> bool | None:
        """``None`` while the surface is off, else whether user and key both match (both
        always compared, in constant time)."""
        with self.context.storage.transaction(write=False) as uow:
            stored = uow.settings.get(LISTSOURCE_CREDENTIALS)
        if stored is None:
            return None
        user_ok = digests_equal(user, stored["user_sha256"])
        key_ok = digests_equal(key, stored["key_sha256"])
        return user_ok and key_ok

    # -- Platform connection -------------------------------------------------------------

    def set_connection(self, *, platform_base: str, transport: str, token: str) -> ConnectionRecord:
        """Configure (or replace) the connection to the mailing platform.

        :raises InvalidRequest: naming ``platform_base`` (not https, or carrying credentials,
            which the message never repeats) or ``token``.
        :raises PluginNotFound: no installed plugin offers ``transport``.
        """
        platform_base = with_lowercase_scheme(platform_base.strip().rstrip("/"))
        try:
            parts = urlsplit(platform_base)
            parts.port  # noqa: B018 - a malformed port raises here, not at the first push
            carries = carries_credentials(platform_base)
        except ValueError:
            raise InvalidRequest(
                "platform_base is not a valid URL", field="platform_base"
            ) from None
        allow_http = self.context.settings.allow_insecure_http_delivery
        if (
            not scheme_allowed(platform_base, allow_http=allow_http)
            or not parts.netloc
            or parts.query
            or parts.fragment
        ):
            raise InvalidRequest(
                "platform_base must be an absolute https:// URL without query or fragment "
                "(plain http only with allow_insecure_http_delivery)",
                field="platform_base",
            )
        if carries:
            raise InvalidRequest(
                "platform_base must not carry a user name or password; the connection's "
                "token is the only credential, read from standard input",
                field="platform_base",
            )
        if len(token) < 16 or not header_safe_token(token):
            raise InvalidRequest(
                "token must be at least 16 characters of printable ASCII, with no whitespace",
                field="token",
            )
        pick("outbound transport", outbound_transports(self.context.plugins), transport)
        with self.context.storage.transaction() as uow:
            return uow.connections.replace(
                platform_base=platform_base,
                transport=transport,
                token=token,
                at=self.context.clock(),
            )

    def connection_transports(self) -> list[tuple[str, str]]:
        """The installed outbound transports, as (name, description), by name."""
        offered = outbound_transports(self.context.plugins)
        return sorted((d.name, d.description) for d in offered)

    def test_connection(self) -> ConnectionCheck:
        """Ask the platform whether it accepts the active connection (see
        :mod:`.connection_check`); :class:`InvalidRequest` when none is configured."""
        connection = self.connection()
        if connection is None:
            raise InvalidRequest("no connection is configured", field="connection")
        offered = outbound_transports(self.context.plugins)
        transport = next((d for d in offered if d.name == connection.transport), None)
        return check_connection(self.context.settings, connection, transport)

    def connection(self) -> ConnectionRecord | None:
        """The active connection, or ``None``."""
        with short_reads():
            return self.context.storage.find_active_connection()

    def disable_connection(self) -> bool:
        """Disable the connection: export endpoints answer 404 and nothing is pushed."""
        with self.context.storage.transaction() as uow:
            return uow.connections.disable(at=self.context.clock())

    def verify_connection_token(self, presented: str) -> bool:
        """Whether ``presented`` is the token of an active connection (constant time)."""
        connection = self.connection()
        if connection is None:
            return False
        return digests_equal(presented, sha256_hex(connection.token))

    # -- Outbox --------------------------------------------------------------------------

    def retry_outbox_now(self) -> int:
        """Make every batch waiting for its next attempt due now, keeping its attempt count
        (the retry ladder continues from its rung); how many. Failed batches are left to
        replay."""
        with self.context.storage.transaction() as uow:
            return uow.outbox.retry_waiting_now(now=self.context.clock())

    def outbox_status(self) -> OutboxStatus:
        """The queue's counts (``outbox status``, the metrics and the admin page)."""
        with self.context.storage.transaction(write=False) as uow:
            return uow.outbox.status()

    def events_about(self, email: str, limit: int = 20) -> list[SubscriberEventRecord]:
        """The newest ``limit`` events about ``email`` still stored (undelivered, or delivered
        within the runner's retention), newest first, with their delivery state.
        :class:`InvalidRequest` for a bad address."""
        key = subscriber_key(self.context, normalise_email(email))
        with self.context.storage.transaction(write=False) as uow:
            return uow.outbox.events_about(key, limit=limit)

    def failed_batches(
        self, *, after: str | None = None, limit: int = 100
    ) -> list[OutboxBatchRecord]:
        """Up to ``limit`` failed batches ordered by id, strictly after the id ``after``
        (keyset paging: pass the last id of a page to get the next)."""
        with self.context.storage.transaction(write=False) as uow:
            return uow.outbox.failed_batches(after=after, limit=limit)

    def replay_failed_batches(self, batch_id: str | None = None) -> int:
        """Put the failed batch ``batch_id`` (``None``: every failed batch) back in the queue
        with a fresh retry ladder, keeping its events and their ids; how many.

        :raises InvalidRequest: no batch ``batch_id``, or it has not failed.
        """
        with self.context.storage.transaction() as uow:
            if batch_id is not None:
                record = uow.outbox.get_batch(batch_id)
                if record is None:
                    raise InvalidRequest(f"no batch with id {batch_id!r}", field="batch_id")
                if record.state != "failed":
                    raise InvalidRequest(
                        f"batch {batch_id} is {record.state}, not failed; only failed batches "
                        "replay",
                        field="batch_id",
                    )
            return uow.outbox.replay_failed(batch_id, at=self.context.clock())
