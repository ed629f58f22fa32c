"""Keeping link tokens, keys, credentials, email addresses and client addresses out of logs.

Our gunicorn access log passes every atom through :func:`redact_access_atoms`; a host logging
paths itself uses :func:`redact_path`. :func:`redact_tokens`, the one recogniser of link tokens,
finds them anywhere in a text (any mount prefix, absolute URLs on any host).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from .https_rule import without_credentials

#: Path segments that are followed by a secret token.
TOKEN_SEGMENTS = ("confirm", "unsubscribe", "profile")
#: A token segment and the token after it, as a browser or the server would still route it: in
#: any case, with or without a slash before it, after one or more ``/`` (or ``\``, which
#: browsers read as ``/``). Matched on the percent-decoded text (``%2F``, ``%70rofile``).
_TOKEN_PATH = re.compile(
    r"(?<![A-Za-z0-9])(" + "|".join(TOKEN_SEGMENTS) + r")[/\\]+[^/\\?#\s]+", re.IGNORECASE
)
#: How many layers of percent-encoding are undone looking for a token (``%252F`` is two).
_DECODE_LAYERS = 3
REDACTED = "[redacted]"

#: An email address in free text, also percent-encoded once or twice (``%40``, ``%2540``).
_EMAIL = re.compile(r"[^\s@/?&=;,:\"'<>()\[\]]+(?:@|%40|%2540)[^\s@/?&=;,\"'<>()\[\]]+", re.I)
#: A Newsletter API key (``nlk_`` and its random part).
_API_KEY = re.compile(r"nlk_[A-Za-z0-9_-]+")
#: A query string (or fragment) in free text: everything up to the next blank.
_QUERY = re.compile(r"[?#]\S*")

#: Atoms that only ever hold what the server itself produced (time, status, sizes, pid ...).
_SAFE_ATOMS = frozenset("ltsmHbBTDMLp")  # one-letter atoms
#: Header and environ names (lowercase, ``-`` as ``_``, without ``http_``) whose whole value is
#: a secret or a credential.
_SECRET_NAME = re.compile(r"auth|cookie|token|secret|passw|session|signature|credential|api_?key")
_SECRET_NAMES = frozenset({"remote_user", "x_remote_user"})
#: ... that hold the client's address.
_CLIENT_ADDRESS_NAMES = frozenset(
    {
        "remote_addr",
        "remote_port",
        "forwarded",
        "x_forwarded_for",
        "x_real_ip",
        "x_client_ip",
        "client_ip",
        "true_client_ip",
        "cf_connecting_ip",
        "fastly_client_ip",
    }
)
#: ... that hold a URL or a path.
_URL_NAMES = frozenset(
    {
        "referer",
        "location",
        "content_location",
        "raw_uri",
        "request_uri",
        "path_info",
        "script_name",
        "x_original_url",
        "x_original_uri",
        "x_forwarded_uri",
        "x_rewrite_url",
    }
)


def _is_personal_segment(segment: str) -> bool:
    """Whether a path segment is an email address, however often percent-encoded."""
    decoded = segment
    for _ in range(3):
        if "@" in decoded:
            return True
        decoded = unquote(decoded)
    return "@" in decoded


def _percent_decoded(text: str) -> str:
    """``text`` with up to :data:`_DECODE_LAYERS` layers of percent-encoding undone."""
    for _ in range(_DECODE_LAYERS):
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
    return text


def redact_tokens(text: str, replacement: str = REDACTED) -> str:
    """``text`` with every token after ``confirm``, ``unsubscribe`` and ``profile`` (wherever
    it occurs, in any case, after ``/``, ``\\`` or their percent-encodings) replaced by
    ``replacement``. Without a token ``text`` comes back unchanged; with one it comes back
    percent-decoded (the form the token was found in), each token segment written
    ``{segment}/{replacement}``."""
    decoded = _percent_decoded(text)
    if not _TOKEN_PATH.search(decoded):
        return text
    return _TOKEN_PATH.sub(lambda m: f"{m.group(1)}/{replacement}", decoded)


def redact_path(path: str) -> str:
    """``path`` with any query string and fragment dropped, the token after ``/confirm/``,
    ``/unsubscribe/`` and ``/profile/`` and any segment holding an email address (plain or
    percent-encoded, any case) replaced by ``[redacted]``; under any mount prefix."""
    path = path.split("?", 1)[0].split("#", 1)[0]
    path = redact_tokens(path)
    return "/".join(REDACTED if _is_personal_segment(s) else s for s in path.split("/"))


def redact_url(value: str) -> str:
    """A URL or path as :func:`redact_path` leaves a path, and without user info."""
    parts = urlsplit(without_credentials(value))
    if not parts.scheme and not parts.netloc:
        return redact_path(value)
    return urlunsplit((parts.scheme, parts.netloc, redact_path(parts.path), "", ""))


def redact_text(value: str) -> str:
    """Free text (a user agent, a header) without query strings, link tokens, API keys or
    email addresses."""
    value = _QUERY.sub("", value)
    value = redact_tokens(value)
    value = _API_KEY.sub(REDACTED, value)
    return _EMAIL.sub(REDACTED, value)


def _redact_variable(key: str, value: Any) -> Any:
    """One ``{name}i`` (request header), ``{name}o`` (response header) or ``{name}e`` atom."""
    if not isinstance(value, str):
        return "-"  # objects such as the socket: their repr may name the client's address
    name = key[1:].rsplit("}", 1)[0].lower().replace("-", "_")
    if key.endswith("}e"):
        name = name.removeprefix("http_")
    if name in _SECRET_NAMES or _SECRET_NAME.search(name):
        return REDACTED
    if name in _CLIENT_ADDRESS_NAMES:
        return "-"
    if name == "query_string":
        return ""
    if name in _URL_NAMES:
        return redact_url(value)
    return redact_text(value)


def redact_access_atoms(atoms: Mapping[str, Any]) -> dict[str, Any]:
    """gunicorn access-log atoms with nothing secret or personal left in any of them.

    ``h`` and ``u`` are ``-``, ``q`` is empty; ``U`` and ``r``'s path are redacted as by
    :func:`redact_path`, ``f`` as by :func:`redact_url`, ``a`` as by :func:`redact_text`;
    ``{name}i/o/e`` atoms are ``[redacted]`` (credentials, cookies), ``-`` (client addresses,
    non-text values) or redacted as ``f`` (URLs) or ``a`` (the rest). Any other atom is left
    out, so one added by a later gunicorn is never logged unchecked.
    """
    path = redact_path(str(atoms.get("U") or ""))
    redacted: dict[str, Any] = {key: atoms[key] for key in _SAFE_ATOMS if key in atoms}
    redacted.update(
        {key: _redact_variable(key, value) for key, value in atoms.items() if key[:1] == "{"}
    )
    redacted.update(
        h="-",
        u="-",
        q="",
        U=path,
        r=f"{atoms.get('m') or ''} {path} {atoms.get('H') or ''}".strip(),
        f=redact_url(str(atoms.get("f") or "-")),
        a=redact_text(str(atoms.get("a") or "-")),
    )
    return redacted
