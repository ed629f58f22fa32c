"""What an operator is told when the database cannot be used: the driver's own words on one
line, the database URL with its password masked, and whether waiting can help.

A client is never told any of it (it gets ``503 db_unavailable``); a command and the app
starting up print it (:class:`~newsletter_connector.errors.DbUnreachable`).
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import URL

from .engine import is_in_memory

#: Driver words of a failure that waiting does not cure: the URL or the credentials are wrong.
_LASTING = (
    "does not exist",  # the database or the role
    "authentication failed",
    "no password supplied",
    "no pg_hba.conf entry",
    "failed to resolve host",
    "could not translate host name",
    "name or service not known",
    "unable to open database file",
    "unsupported startup parameter",
)
#: Driver words, and what to do about them.
_HINTS = {
    "unsupported startup parameter: options": "behind PgBouncer, set db_pgbouncer = true",
}


def failure_reason(error: BaseException, url: URL) -> str:
    """``error``'s driver message, on one line, followed by the database ``url`` (password
    masked); the password never appears, even if the driver quoted it."""
    original = getattr(error, "orig", None) or error
    words = " ".join(line.strip() for line in str(original).splitlines() if line.strip())
    missing_folder = _missing_sqlite_folder(url)
    if missing_folder is not None:
        words = f"{words} (the folder {missing_folder} does not exist)"
    for marker, hint in _HINTS.items():
        if marker in words:
            words = f"{words} ({hint})"
    if url.password:
        words = words.replace(str(url.password), "***")
    shown = url.render_as_string(hide_password=True)
    return f"{words or type(original).__name__} (database {shown})"


def is_lasting(reason: str) -> bool:
    """Whether the failure ``reason`` describes stays until the settings are corrected."""
    lowered = reason.lower()
    return any(marker in lowered for marker in _LASTING)


def _missing_sqlite_folder(url: URL) -> Path | None:
    if url.get_backend_name() != "sqlite" or is_in_memory(url) or "uri" in url.query:
        return None
    folder = Path(str(url.database)).parent
    return None if folder.is_dir() else folder
