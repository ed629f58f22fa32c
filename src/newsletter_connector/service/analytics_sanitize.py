"""Capture-time sanitising of analytics events (docs/analytics.md, "What is stripped at capture"):
no personal data is ever stored.

- ``event_type`` must be one of :data:`EVENT_TYPES`; ids are opaque ``[A-Za-z0-9_-]{8,64}``
  and never a phone number.
- Paths and URLs lose query, fragment and user info; a path segment like an e-mail address or
  a phone number, and any action-link token, becomes ``redacted``.
- ``props`` values like an e-mail address or phone number are dropped; tokens in texts
  redacted, and so is a word that looks like a bare token (:func:`redact_bare_tokens`).
- An action-link token is found in every spelling a browser or the router would follow: the
  segment in any case, with or without the slash before it, ``%2F`` or ``\\`` for ``/``,
  percent-encoded any number of times (``log_redaction.redact_tokens``).
- Every size is bounded. Each helper raises :class:`InvalidRequest` naming the field.
"""

from __future__ import annotations

import math
import re
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from ..errors import InvalidRequest
from ..log_redaction import looks_random, redact_tokens, substitute_decoded

EVENT_TYPES = ("pageview", "link click", "engagement ping")
ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{8,64}")
PROP_KEY_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,39}")
MAX_PATH_LENGTH = 1024
MAX_URL_LENGTH = 1024
MAX_PROPS = 10
MAX_PROP_STRING = 200
MAX_ENGAGED_SECONDS = 86_400.0
REDACTED = "redacted"
#: Props set by the service itself; a client cannot supply them.
RESERVED_PROPS = ("href", "engaged_seconds")

#: An address: tried only from the start of a run of address characters (the look-behind), so
#: each run is scanned once and the search is linear.
_EMAIL = re.compile(r"(?<![^\s@/])[^\s@/]+@[^\s@/]+\.[^\s@/]+")
# A run of digits with the usual phone separators; counted and judged in _looks_like_phone.
_PHONE_CANDIDATE = re.compile(r"\+?\(?\d[\d\s().\-]*\d")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
#: A word of URL-safe characters as long as a link token (``secrets.token_urlsafe(16)`` and
#: longer); :func:`redact_bare_tokens` judges whether it is random.
_TOKEN_LIKE_WORD = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{22,}(?![A-Za-z0-9_-])")
#: Control characters (NUL included), DEL, C1 controls and line separators: dropped from props.
_PROP_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
#: The characters quoted paths keep as they are.
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"


def _looks_like_phone(text: str) -> bool:
    for match in _PHONE_CANDIDATE.finditer(text):
        candidate = match.group(0)
        digits = sum(c.isdigit() for c in candidate)
        if _ISO_DATE.fullmatch(candidate.strip()):
            continue
        formatted = candidate.startswith("+") or not candidate.isdigit()
        # Bare digit runs are ids or years more often than phones: only 10+ digits count.
        if (formatted and 7 <= digits <= 15) or (not formatted and 10 <= digits <= 15):
            return True
    return False


def _number_looks_like_phone(value: int | float) -> bool:
    """Whether a (finite) number would be phone-like written out: an integral one whose digits
    count as a bare digit run (10-15 digits). A fraction is a measurement, never a phone."""
    if isinstance(value, float):
        if not value.is_integer():
            return False
        value = int(value)
    return _looks_like_phone(str(abs(value)))


def _id_looks_like_phone(value: str) -> bool:
    """Whether an id is a phone number: only digits and ``-``/``_`` separators, as many digits
    as a phone number has. (A random id of the capture script is 32 hex digits: never.)"""
    if not value.replace("-", "").replace("_", "").isdigit():
        return False
    return _looks_like_phone(value.replace("_", "-"))


def looks_personal(text: str) -> bool:
    """Whether ``text`` (percent-decoded) contains something like an e-mail or phone number."""
    decoded = unquote(text)
    return bool(_EMAIL.search(decoded)) or _looks_like_phone(decoded)


def redact_path_tokens(path: str) -> str:
    """``path`` (quoted, or a URL with a quoted path) with every action-link token redacted,
    quoted again when one was found."""
    redacted = redact_tokens(path, REDACTED)
    return path if redacted == path else quote(redacted, safe=_PATH_SAFE)


def redact_prop_text(text: str) -> str:
    """A props text with action-link tokens redacted, after a token segment or bare."""
    return redact_bare_tokens(redact_tokens(text, REDACTED))


def _redact_path(path: str) -> str:
    """``path`` (quoted) with personal segments and link tokens redacted."""
    segments = "/".join(REDACTED if looks_personal(seg) else seg for seg in path.split("/"))
    return redact_path_tokens(segments)


def redact_bare_tokens(text: str) -> str:
    """``text`` with every word that could be a link token on its own (22 or more URL-safe
    characters mixing cases or letters and digits, found percent-decoded) replaced by
    ``redacted``, the rest of ``text`` left as given: a token copied into a prop without its
    path is still a live credential."""
    return substitute_decoded(
        text, _TOKEN_LIKE_WORD, lambda m: REDACTED if looks_random(m.group(0)) else None, 1
    )


def _strip_query(value: str) -> str:
    return value.split("#", 1)[0].split("?", 1)[0]


def _printable(value: str, field: str) -> str:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        raise InvalidRequest(f"{field} must not contain control characters", field=field)
    return value


def clean_path(value: Any, field: str = "path") -> str:
    """A site path: ``/...`` (an absolute URL gives its path), no query or fragment."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidRequest(f"{field} is required and must be a string", field=field)
    text = _printable(value.strip(), field)
    if "://" in text.split("?", 1)[0]:
        text = urlsplit(_strip_query(text)).path or "/"
    text = _strip_query(text)
    if not text.startswith("/"):
        raise InvalidRequest(f"{field} must start with '/'", field=field)
    text = quote(text, safe=_PATH_SAFE)
    if len(text) > MAX_PATH_LENGTH:
        raise InvalidRequest(f"{field} must be at most {MAX_PATH_LENGTH} characters", field=field)
    return _redact_path(text)


def clean_url(value: Any, field: str, *, allow_empty: bool) -> str:
    """An absolute http(s) URL reduced to scheme, host and (redacted) path; another scheme
    keeps only the scheme (``mailto:``)."""
    if value is None or value == "":
        if allow_empty:
            return ""
        raise InvalidRequest(f"{field} is required", field=field)
    if not isinstance(value, str):
        raise InvalidRequest(f"{field} must be a string", field=field)
    text = _printable(value.strip(), field)
    if len(text) > 4 * MAX_URL_LENGTH:
        raise InvalidRequest(f"{field} must be at most {MAX_URL_LENGTH} characters", field=field)
    try:
        parts = urlsplit(_strip_query(text))
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:
        raise InvalidRequest(f"{field} must be an absolute URL", field=field) from None
    scheme = parts.scheme.lower()
    if scheme and scheme not in ("http", "https") and re.fullmatch(r"[a-z][a-z0-9+.-]*", scheme):
        return f"{scheme}:"
    if scheme not in ("http", "https") or not host:
        raise InvalidRequest(f"{field} must be an absolute http(s) URL", field=field)
    netloc = host if port is None else f"{host}:{port}"
    path = quote(parts.path, safe=_PATH_SAFE) or "/"
    url = f"{scheme}://{netloc}{_redact_path(path)}"
    if len(url) > MAX_URL_LENGTH:
        raise InvalidRequest(f"{field} must be at most {MAX_URL_LENGTH} characters", field=field)
    return url


def clean_id(value: Any, field: str) -> str:
    """A visitor or session id: an opaque random string, never anything personal."""
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise InvalidRequest(f"{field} must match [A-Za-z0-9_-]{{8,64}}", field=field)
    if _id_looks_like_phone(value):
        raise InvalidRequest(
            f"{field} must be a random id, not something personal like a phone number",
            field=field,
        )
    return value


def clean_event_type(value: Any) -> str:
    if value not in EVENT_TYPES:
        raise InvalidRequest("type must be one of: " + ", ".join(EVENT_TYPES), field="type")
    return str(value)


def clean_seconds(value: Any) -> float:
    """Engaged seconds of an engagement ping: a finite number in ``[0, 86400]``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 <= value <= MAX_ENGAGED_SECONDS
    ):
        raise InvalidRequest(
            f"seconds must be a number from 0 to {MAX_ENGAGED_SECONDS:g}", field="seconds"
        )
    return round(float(value), 3)


def clean_props(value: Any) -> dict[str, Any]:
    """Free-form props: up to ten scalar values under short snake_case keys. Values that look
    personal are dropped silently (the event is still recorded); control characters (NUL
    included) are dropped from texts; tokens in texts redacted, after a token segment or bare
    (:func:`redact_bare_tokens`)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidRequest("props must be an object", field="props")
    if len(value) > MAX_PROPS:
        raise InvalidRequest(f"props may have at most {MAX_PROPS} keys", field="props")
    cleaned: dict[str, Any] = {}
    for key, item in value.items():
        field = f"props.{key}"[:60]
        if not isinstance(key, str) or not PROP_KEY_PATTERN.fullmatch(key):
            raise InvalidRequest("props keys must match [a-z][a-z0-9_]{0,39}", field="props")
        if key in RESERVED_PROPS:
            raise InvalidRequest(f"props.{key} is set by the service", field=field)
        if item is None or isinstance(item, bool):
            cleaned[key] = item
        elif isinstance(item, int):
            if abs(item) > 2**53:
                raise InvalidRequest(f"{field} is out of range", field=field)
            if not _number_looks_like_phone(item):
                cleaned[key] = item
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise InvalidRequest(f"{field} must be finite", field=field)
            if not _number_looks_like_phone(item):
                cleaned[key] = item
        elif isinstance(item, str):
            item = _PROP_CONTROLS.sub("", item)
            if len(item) > MAX_PROP_STRING:
                raise InvalidRequest(
                    f"{field} must be at most {MAX_PROP_STRING} characters", field=field
                )
            if not looks_personal(item):
                cleaned[key] = redact_prop_text(item)
        else:
            raise InvalidRequest(f"{field} must be a string, number, boolean or null", field=field)
    return cleaned
