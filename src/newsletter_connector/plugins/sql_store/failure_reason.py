"""What an operator is told when the database cannot be used: the driver's own words on one
line, the database URL with its secrets masked, and whether waiting can help.

A client is never told any of it (it gets ``503 db_unavailable``); a command and the app
starting up print it (:class:`~newsletter_connector.errors.DbUnreachable`).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote_plus

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
    "access denied for user",  # MySQL and MariaDB: 1045
    "unknown database",  # 1049
    "unknown mysql server host",  # 2005
)
#: Query keys whose value is a secret (libpq takes ``password`` and ``sslpassword`` there too);
#: matched as parts of a lower-cased key name.
_SECRET_KEY_PARTS = ("password", "passwd", "secret", "token")
MASK = "***"
#: A secret this long is masked in a driver's words wherever it stands as a whole token.
WHOLE_TOKEN_LENGTH = 8
#: Driver words, and what to do about them.
_HINTS = {
    "unsupported startup parameter: options": "behind PgBouncer, set db_pgbouncer = true",
}


def failure_reason(error: BaseException, url: URL) -> str:
    """``error``'s driver message, on one line, followed by the database ``url`` with its
    secrets masked (the password, and the value of every password-like query parameter).

    A driver does not normally quote a secret, but if it does it is masked in its words too:
    where it stands quoted or after ``=``, and, when it is at least :data:`WHOLE_TOKEN_LENGTH`
    characters long, wherever it stands as a whole token (not next to a letter or digit). A
    shorter one is left alone in prose, where it is likely an ordinary word ("or") and masking
    would mangle the message and point at the secret; so is one equal to a part the URL shows
    anyway (user name, host, database)."""
    original = getattr(error, "orig", None) or error
    words = " ".join(line.strip() for line in str(original).splitlines() if line.strip())
    missing_folder = _missing_sqlite_folder(url)
    if missing_folder is not None:
        words = f"{words} (the folder {missing_folder} does not exist)"
    for marker, hint in _HINTS.items():
        if marker in words:
            words = f"{words} ({hint})"
    shown_parts = {str(part) for part in (url.username, url.host, url.database) if part}
    for secret in sorted(_secrets(url) - shown_parts, key=len, reverse=True):
        words = _secret_pattern(secret).sub(MASK, words)
    return f"{words or type(original).__name__} (database {masked_url(url)})"


def masked_url(url: URL) -> str:
    """``url`` as text with its password and password-like query values replaced by ``***``."""
    shown = url.set(query={}).render_as_string(hide_password=True)
    pairs = [
        f"{quote_plus(key)}={MASK if _is_secret_key(key) else quote_plus(value)}"
        for key in sorted(url.query)
        for value in _values(url.query[key])
    ]
    return f"{shown}?{'&'.join(pairs)}" if pairs else shown


def _values(value: str | tuple[str, ...]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else value


def _secret_pattern(secret: str) -> re.Pattern[str]:
    quoted = re.escape(secret)
    bounded = (rf'(?<="){quoted}(?=")', rf"(?<='){quoted}(?=')", rf"(?<==){quoted}(?![^\W_])")
    pattern = "|".join(bounded)
    if len(secret) >= WHOLE_TOKEN_LENGTH:
        pattern = rf"(?<![^\W_]){quoted}(?![^\W_])"
    return re.compile(pattern)


def _is_secret_key(key: str) -> bool:
    lowered = key.lower()
    return any(part in lowered for part in _SECRET_KEY_PARTS)


def _secrets(url: URL) -> set[str]:
    found = {str(url.password)} if url.password else set()
    for key, value in url.query.items():
        if _is_secret_key(key):
            found.update(v for v in _values(value) if v)
    return found


def is_lasting(reason: str) -> bool:
    """Whether the failure ``reason`` describes stays until the settings are corrected."""
    lowered = reason.lower()
    return any(marker in lowered for marker in _LASTING)


def _missing_sqlite_folder(url: URL) -> Path | None:
    if url.get_backend_name() != "sqlite" or is_in_memory(url) or "uri" in url.query:
        return None
    folder = Path(str(url.database)).parent
    return None if folder.is_dir() else folder
