"""Typed domain errors raised by the service layer, mapped to a wire shape by each surface
(``web/errors.py``). Messages are written for humans and never contain secrets or tokens."""

from __future__ import annotations


class NewsletterError(Exception):
    """Base class of every error the service raises on purpose."""

    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidRequest(NewsletterError):
    """Input failed validation; ``field`` names what was wrong."""

    code = "invalid_request"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class ConsentRequired(NewsletterError):
    """Consent was partial, unparseable or dated in the future."""

    code = "consent_required"


class NotFound(NewsletterError):
    """No record matched."""

    code = "not_found"


class Unauthorized(NewsletterError):
    """Missing, malformed, unknown or revoked credentials."""

    code = "unauthorized"


class DbUnavailable(NewsletterError):
    """The database did not answer; temporary, safe to retry.

    ``reason`` is for the operator, never for a client: the driver's own words and the
    database URL with its password masked (``None``: no more is known). ``lasting``: the
    reason does not go away by waiting (a wrong password, database name or host, a SQLite
    folder that does not exist).
    """

    code = "db_unavailable"

    def __init__(self, message: str, *, reason: str | None = None, lasting: bool = False) -> None:
        super().__init__(message)
        self.reason = reason
        self.lasting = lasting


class DbUnreachable(DbUnavailable):
    """A command or the app starting up could not use the database; the message is the
    operator's reason (:attr:`DbUnavailable.reason`)."""


class NotMigrated(NewsletterError):
    """The database schema is missing or older than this version of the package."""

    code = "not_migrated"


class PluginNotFound(NewsletterError):
    """A setting names a plugin (backend, renderer, transport) that no installed plugin offers."""

    code = "plugin_not_found"
