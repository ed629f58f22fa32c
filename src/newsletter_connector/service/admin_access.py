"""Who may use the admin area: the built-in login's users (argon2id password hashes), their
server-side sessions, and the throttling of sign-in attempts. The web pages and the CLI both go
through this; it knows no HTTP.

A session's cookie token is 32 random bytes (urlsafe); only its SHA-256 is stored. A session
ends 2 hours after its last use or 12 hours after sign-in, whichever comes first.

Sign-in attempts are counted before the password is checked, per username *and* client (5 per
15 minutes) and per client whatever the username (20 per 15 minutes); a client is its keyed
hash, never an address. An attempt over either limit is refused without a password check, so
parallel requests get no more checks than serial ones, and one client's failures never lock
another client out. A successful sign-in takes its attempt back and clears that client's count
for the username.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from ..descriptors import ADMIN_ROLES, OWNER
from ..errors import InvalidRequest, NewsletterError, NotFound, Unauthorized
from ..plugins.sql_store.store import SqlUnitOfWork
from ..short_reads import short_reads
from ..storage.access_records import AdminSessionRecord, AdminUserRecord
from .admin_audit import AdminAuditService
from .context import ServiceContext, sha256_hex

MIN_PASSWORD_LENGTH = 12
MAX_USERNAME_LENGTH = 100
IDLE_TIMEOUT = timedelta(hours=2)
ABSOLUTE_TIMEOUT = timedelta(hours=12)
#: A session's last use is written at most this often (each write is a commit per page view).
TOUCH_AFTER = timedelta(minutes=1)
LOGIN_WINDOW = timedelta(minutes=15)
MAX_FAILURES_PER_USER = 5
MAX_FAILURES_PER_CLIENT = 20
WRONG_CREDENTIALS = "wrong username or password"
#: The actor of a failed login whose username is no user's: what was typed may be a password.
#: No username can take it (usernames have no spaces).
UNKNOWN_USER_ACTOR = "(unknown user)"
_USERNAME_PURPOSE = "admin-login-username"


class LoginThrottled(NewsletterError):
    """Too many sign-in attempts for this username from this client, or from this client;
    ``retry_after`` in seconds."""

    code = "rate_limited"

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"too many failed sign-ins; try again in {retry_after} seconds")
        self.retry_after = retry_after


@dataclass(frozen=True)
class NewSession:
    """A session just signed in. ``token`` (the cookie value) exists only here."""

    token: str = field(repr=False)
    username: str
    csrf_token: str = field(repr=False)


@dataclass(frozen=True)
class ActiveSession:
    """A live session, found by its cookie token, with its user's role as it is now."""

    username: str
    role: str
    csrf_token: str = field(repr=False)
    token_digest: str = field(repr=False)


def checked_role(role: str) -> str:
    """``role`` when it is one of :data:`~newsletter_connector.descriptors.ADMIN_ROLES`.

    :raises InvalidRequest: any other value (field ``role``)."""
    if role not in ADMIN_ROLES:
        raise InvalidRequest(f"role must be one of {', '.join(ADMIN_ROLES)}", field="role")
    return role


class AdminAccessService:
    """Admin users, sessions and login throttling; acts are audited through ``audit``."""

    def __init__(self, context: ServiceContext, audit: AdminAuditService) -> None:
        self.context = context
        self.audit = audit
        #: argon2id with the library's current parameters; a stored hash made with others is
        #: replaced at the user's next sign-in.
        self.hasher = PasswordHasher()

    @cached_property
    def _decoy_hash(self) -> str:
        # Verified against when the username is unknown, so both cases cost one argon2 check.
        return self.hasher.hash(secrets.token_urlsafe(16))

    # -- Users ---------------------------------------------------------------------------

    def create_user(self, username: str, password: str, *, role: str = OWNER) -> AdminUserRecord:
        """Add a user with ``role`` (:class:`InvalidRequest`: blank or too long a username, one
        taken, a password shorter than :data:`MIN_PASSWORD_LENGTH`, or an unknown role)."""
        role = checked_role(role)
        username = username.strip()
        if (
            not username
            or len(username) > MAX_USERNAME_LENGTH
            or any(c.isspace() for c in username)
        ):
            raise InvalidRequest(
                f"username must be 1-{MAX_USERNAME_LENGTH} characters without spaces",
                field="username",
            )
        if len(password) < MIN_PASSWORD_LENGTH:
            raise InvalidRequest(
                f"password must be at least {MIN_PASSWORD_LENGTH} characters", field="password"
            )
        password_hash = self.hasher.hash(password)
        with self.context.storage.transaction() as uow:
            return uow.admin_users.add(
                username=username,
                password_hash=password_hash,
                role=role,
                created_at=self.context.clock(),
            )

    def list_users(self) -> list[AdminUserRecord]:
        """Every admin user, oldest first."""
        with self.context.storage.transaction(write=False) as uow:
            return uow.admin_users.list()

    def delete_user(self, username: str, *, acting_user: str | None = None) -> None:
        """Delete a user and end its sessions (:class:`NotFound`: no such user;
        :class:`InvalidRequest`: the last owner while other users remain).

        :param acting_user: the admin asking (the admin pages pass it): deleting that user
            itself is refused with :class:`InvalidRequest`, so nobody signs themselves out of
            the area for good by mistake.
        """
        if acting_user is not None and username == acting_user:
            raise InvalidRequest("you cannot delete your own admin user", field="username")
        with self.context.storage.transaction() as uow:
            user = self._existing_user(uow, username)
            if uow.admin_users.count() > 1:  # deleting the only user turns the area off
                self._keep_an_owner(uow, user)
            uow.admin_users.delete(username)
            uow.admin_sessions.delete_for_user(username)

    def set_role(self, username: str, role: str, *, acting_user: str | None = None) -> None:
        """Give a user ``role``; its sessions keep going with the new role from their next
        request (:class:`NotFound`: no such user).

        :param acting_user: the admin asking (the admin pages pass it): changing that user's
            own role is refused with :class:`InvalidRequest`.
        :raises InvalidRequest: an unknown role, or the last owner made an editor.
        """
        role = checked_role(role)
        if acting_user is not None and username == acting_user:
            raise InvalidRequest("you cannot change your own role", field="username")
        with self.context.storage.transaction() as uow:
            user = self._existing_user(uow, username)
            if role != OWNER:
                self._keep_an_owner(uow, user)
            uow.admin_users.set_role(username, role)

    @staticmethod
    def _existing_user(uow: SqlUnitOfWork, username: str) -> AdminUserRecord:
        """:raises NotFound: no admin user ``username``."""
        user = uow.admin_users.get(username)
        if user is None:
            raise NotFound(f"no admin user {username!r}")
        return user

    @staticmethod
    def _keep_an_owner(uow: SqlUnitOfWork, leaving: AdminUserRecord) -> None:
        """:raises InvalidRequest: ``leaving`` is the last owner, so nobody would be left to
        manage the admin area."""
        if leaving.role == OWNER and uow.admin_users.count(role=OWNER) <= 1:
            raise InvalidRequest(
                f"{leaving.username!r} is the last owner; make another user an owner first",
                field="username",
            )

    def has_users(self) -> bool:
        """Whether any admin user exists (the built-in login is configured)."""
        with short_reads(), self.context.storage.transaction(write=False) as uow:
            return uow.admin_users.count() > 0

    # -- Sign-in -------------------------------------------------------------------------

    def login(self, username: str, password: str, *, client_hash: str) -> NewSession:
        """Sign in: a new session, audited as ``login``.

        The attempt is counted before the password is checked (see the module's docstring).

        :raises LoginThrottled: too many recent attempts for this username from this client, or
            from this client; the password is not checked.
        :raises Unauthorized: wrong username or password (the same message and cost for both;
            audited as ``login.failed`` by the username, or :data:`UNKNOWN_USER_ACTOR` when it
            is no user's).
        """
        now = self.context.clock()
        keys = self._throttle_keys(username, client_hash)
        with self.context.storage.transaction() as uow:
            user = uow.admin_users.get(username)
            retry_after = self._count_attempt(uow, keys, now)
            if retry_after is not None:
                # Rolls the counts back: a refused attempt checked no password.
                raise LoginThrottled(retry_after)
        if not self._password_matches(user, password):
            actor = user.username if user is not None else UNKNOWN_USER_ACTOR
            self.audit.record(actor, "login.failed", None, client_hash=client_hash)
            raise Unauthorized(WRONG_CREDENTIALS)
        assert user is not None  # a match implies a user
        session = NewSession(
            token=secrets.token_urlsafe(32),
            username=user.username,
            csrf_token=secrets.token_urlsafe(32),
        )
        with self.context.storage.transaction() as uow:
            if self.hasher.check_needs_rehash(user.password_hash):
                uow.admin_users.set_password_hash(user.username, self.hasher.hash(password))
            self._forgive_attempt(uow, keys, now)
            uow.admin_sessions.prune(
                seen_before=now - IDLE_TIMEOUT, created_before=now - ABSOLUTE_TIMEOUT
            )
            uow.admin_sessions.add(
                AdminSessionRecord(
                    token_digest=sha256_hex(session.token),
                    username=user.username,
                    csrf_token=session.csrf_token,
                    created_at=now,
                    last_seen_at=now,
                )
            )
        self.audit.record(user.username, "login", None, client_hash=client_hash)
        return session

    def session(self, token: str) -> ActiveSession | None:
        """The live session of cookie ``token``, or ``None`` when there is none, it expired
        (then it is deleted), or its user is gone. Its last use is moved to now when it is
        :data:`TOUCH_AFTER` old or more: a page view is a read, and the idle timeout is kept
        to within that much."""
        now = self.context.clock()
        digest = sha256_hex(token)
        with short_reads(), self.context.storage.transaction(write=False) as uow:
            record = uow.admin_sessions.get(digest)
            if record is None:
                return None
            expired = (
                now - record.last_seen_at >= IDLE_TIMEOUT
                or now - record.created_at >= ABSOLUTE_TIMEOUT
            )
            user = None if expired else uow.admin_users.get(record.username)
        if user is None:
            with short_reads(), self.context.storage.transaction() as uow:
                uow.admin_sessions.delete(digest)
            return None
        if now - record.last_seen_at >= TOUCH_AFTER:
            with short_reads(), self.context.storage.transaction() as uow:
                uow.admin_sessions.touch(digest, at=now)
        return ActiveSession(
            username=record.username,
            role=user.role,
            csrf_token=record.csrf_token,
            token_digest=digest,
        )

    def logout(self, session: ActiveSession, *, client_hash: str | None) -> None:
        """End ``session`` (its row deleted), audited as ``logout``."""
        with self.context.storage.transaction() as uow:
            uow.admin_sessions.delete(session.token_digest)
        self.audit.record(session.username, "logout", None, client_hash=client_hash)

    # -- Internals -----------------------------------------------------------------------

    def _password_matches(self, user: AdminUserRecord | None, password: str) -> bool:
        try:
            matched = self.hasher.verify(user.password_hash if user else self._decoy_hash, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False
        return bool(matched) and user is not None

    def _throttle_keys(self, username: str, client_hash: str) -> tuple[str, str]:
        """The counters of an attempt: this username from this client, and this client."""
        pair_key = self.context.keyed_hash(_USERNAME_PURPOSE, f"{username}\x00{client_hash}")
        return (f"admin-login-user-client:{pair_key}", f"admin-login-client:{client_hash}")

    def _count_attempt(
        self, uow: SqlUnitOfWork, keys: tuple[str, str], now: datetime
    ) -> int | None:
        """Count one attempt on each of ``keys``; the seconds to wait if it is over a limit.

        Each count comes from the store's atomic hit, so of any number of attempts at once at
        most the limit's number get through."""
        limits = (MAX_FAILURES_PER_USER, MAX_FAILURES_PER_CLIENT)
        waits = []
        for key, limit in zip(keys, limits, strict=True):
            if uow.rate_limits.hit(key, now=now, expires_at=now + LOGIN_WINDOW) > limit:
                expires_at = uow.rate_limits.peek(key, now=now)[1] or now + LOGIN_WINDOW
                waits.append(max(1, math.ceil((expires_at - now).total_seconds())))
        return max(waits, default=None)

    def _forgive_attempt(self, uow: SqlUnitOfWork, keys: tuple[str, str], now: datetime) -> None:
        """After a successful sign-in: forget the username's count from this client, and take
        this attempt back from the client's count (signing in is not a failure)."""
        pair_key, client_key = keys
        uow.rate_limits.clear(pair_key)
        # ``now`` is the attempt's own time, so the counter it hit is the one found live here.
        if uow.rate_limits.peek(client_key, now=now)[0] > 0:
            uow.rate_limits.hit(client_key, now=now, expires_at=now + LOGIN_WINDOW, amount=-1)
