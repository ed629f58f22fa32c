"""Keeping link tokens, keys, credentials, email addresses and client addresses out of logs.

Our gunicorn access log passes every atom through :func:`redact_access_atoms`; a host logging
paths itself uses :func:`redact_path`. :func:`redact_tokens`, the one recogniser of link tokens,
finds them anywhere in a text (any mount prefix, absolute URLs on any host), after a token
segment or by their shape alone. Every function here runs in time linear in its input: no
pattern retries a long run from each of its characters, and values are cut to
:data:`MAX_VALUE_LENGTH` before the access log reads them.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

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
_DECODE_LAYERS = 6
#: The shape of the service's own link tokens (``secrets.token_urlsafe(24)``: 32 URL-safe
#: characters), as a whole word, or a longer word a token is glued into. A start inside a word
#: fails at once on the look-behind, so the search is linear.
_TOKEN_SHAPE = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{32,}")
#: The most characters of one value any pattern here reads; the rest is cut, so the cost of
#: redacting a value is bounded whatever its size.
MAX_VALUE_LENGTH = 2048
REDACTED = "[redacted]"

#: The spellings of ``@`` an email address is found by: plain, percent-encoded once or twice.
_AT_SIGNS = ("@", "%40", "%2540")
#: Characters that end an address's local part (before ``@``) and its domain (after it).
_LOCAL_STOP = frozenset(" \t\n\r\f\v@/?&=;,:\"'<>()[]")
_DOMAIN_STOP = _LOCAL_STOP - {":"}
#: The longest local part and domain an address has (RFC 5321): the scans stop there.
_MAX_LOCAL, _MAX_DOMAIN = 64, 255
#: A Newsletter API key (``nlk_`` and its random part).
_API_KEY = re.compile(r"nlk_[A-Za-z0-9_-]+")
#: A query string (or fragment) in free text: everything up to the next blank.
_QUERY = re.compile(r"[?#]\S*")

#: Characters that end or rewrite a log line in a terminal or a line-reading tool: C0 and C1
#: controls, DEL and the Unicode line and paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")

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


_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _unquote_mapped(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``text`` percent-decoded once, as :func:`urllib.parse.unquote` decodes it, and for each
    decoded character the ``(start, end)`` of the part of ``text`` it was decoded from."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    done = 0
    for run in _PERCENT_RUN.finditer(text):
        for i in range(done, run.start()):
            out.append(text[i])
            spans.append((i, i + 1))
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pending = run.start()
        for at in range(run.start(), run.end(), 3):
            chars = decoder.decode(bytes([int(text[at + 1 : at + 3], 16)]))
            if chars:
                out.extend(chars)
                spans.extend([(pending, at + 3)] * len(chars))
                pending = at + 3
        if chars := decoder.decode(b"", final=True):
            out.extend(chars)
            spans.extend([(pending, run.end())] * len(chars))
        done = run.end()
    for i in range(done, len(text)):
        out.append(text[i])
        spans.append((i, i + 1))
    return "".join(out), spans


def substitute_decoded(
    text: str,
    pattern: re.Pattern[str],
    replace: Callable[[re.Match[str]], str | None],
    layers: int = _DECODE_LAYERS,
) -> str:
    """``text`` with each match of ``pattern`` in its percent-decoded form (up to ``layers``
    layers undone) replaced by ``replace(match)`` (``None`` keeps it). Only the part of the
    ORIGINAL text a match was decoded from is replaced: the rest stays as it came, so decoding
    never turns an encoded line break or control character into a real one."""
    decoded = text
    # spans[i]: the part of ``text`` the i-th character of ``decoded`` comes from.
    spans = [(i, i + 1) for i in range(len(text))]
    for _ in range(layers):
        once, layer = _unquote_mapped(decoded)
        if once == decoded:
            break
        decoded = once
        spans = [(spans[a][0], spans[b - 1][1]) for a, b in layer]
    pieces: list[str] = []
    done = 0
    for match in pattern.finditer(decoded):
        replacement = replace(match)
        if replacement is None or match.end() == match.start():
            continue
        start, end = spans[match.start()][0], spans[match.end() - 1][1]
        if start < done:
            continue  # decoded from the same escapes as the previous match: already replaced
        pieces += [text[done:start], replacement]
        done = end
    return "".join(pieces) + text[done:] if pieces else text


def _cut(value: str) -> str:
    """``value`` cut to :data:`MAX_VALUE_LENGTH` characters."""
    return value[:MAX_VALUE_LENGTH]


def _email_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds an email address: each ``@`` (or ``%40``, ``%2540``, any case) is
    found with ``str.find`` and grown left and right over address characters, at most
    :data:`_MAX_LOCAL` and :data:`_MAX_DOMAIN` of them, so the time is linear in ``text``."""
    lowered = text.lower()
    spans: list[tuple[int, int]] = []
    for sign in _AT_SIGNS:
        at = lowered.find(sign)
        while at != -1:
            start = at
            while start > 0 and at - start < _MAX_LOCAL and text[start - 1] not in _LOCAL_STOP:
                start -= 1
            end = at + len(sign)
            while end < len(text) and end - at < _MAX_DOMAIN and text[end] not in _DOMAIN_STOP:
                end += 1
            if start < at and end > at + len(sign):
                spans.append((start, end))
            at = lowered.find(sign, at + len(sign))
    return sorted(spans)


def redact_emails(text: str, replacement: str = REDACTED) -> str:
    """``text`` with every email address (``@`` plain or percent-encoded once or twice)
    replaced by ``replacement``; linear in the length of ``text``."""
    pieces: list[str] = []
    done = 0
    for start, end in _email_spans(text):
        if end <= done:
            continue
        pieces += [text[done : max(start, done)], replacement]
        done = end
    return "".join(pieces) + text[done:] if pieces else text


def looks_random(word: str) -> bool:
    """Whether ``word`` mixes at least two of upper case, lower case and digits, as a random
    token does (a slug or a snake_case label keeps to lower case and separators)."""
    kinds = (
        any(c.isupper() for c in word),
        any(c.islower() for c in word),
        any(c.isdigit() for c in word),
    )
    return sum(kinds) >= 2


def redact_token_shapes(text: str, replacement: str = REDACTED) -> str:
    """``text`` with every word that could hold one of the service's link tokens (32 or more
    URL-safe characters mixing cases or letters and digits, found percent-decoded) replaced,
    wherever it stands: a token is redacted even where no ``/profile/`` comes before it,
    whatever stands between them or is glued to it."""
    return substitute_decoded(
        text, _TOKEN_SHAPE, lambda m: replacement if looks_random(m.group(0)) else None
    )


def redact_tokens(text: str, replacement: str = REDACTED) -> str:
    """``text`` with every token after ``confirm``, ``unsubscribe`` and ``profile`` (wherever
    it occurs, in any case, after ``/``, ``\\`` or their percent-encodings, percent-encoded up
    to three times) replaced: the part of ``text`` spelling the segment and its token becomes
    ``{segment}/{replacement}``. Everything else comes back exactly as it was given, still
    percent-encoded (without a token, ``text`` itself)."""
    text = substitute_decoded(text, _TOKEN_PATH, lambda m: f"{m.group(1)}/{replacement}")
    return redact_token_shapes(text, replacement)


def quote_controls(text: str) -> str:
    """``text`` with every control character, DEL and line or paragraph separator
    percent-encoded (UTF-8), so that it is one line wherever it is written."""
    return _CONTROL.sub(lambda m: quote(m.group(0), safe=""), text)


def redact_path(path: str) -> str:
    """``path`` with any query string and fragment dropped, the token after ``/confirm/``,
    ``/unsubscribe/`` and ``/profile/`` and any segment holding an email address (plain or
    percent-encoded, any case) replaced by ``[redacted]``; under any mount prefix. Control
    characters (a decoded ``PATH_INFO`` holds them) come back percent-encoded."""
    path = _cut(path.split("?", 1)[0].split("#", 1)[0])
    path = redact_tokens(path)
    segments = path.split("/")
    return quote_controls("/".join(REDACTED if _is_personal_segment(s) else s for s in segments))


def redact_url(value: str) -> str:
    """A URL or path as :func:`redact_path` leaves a path, and without user info."""
    value = _cut(value)
    parts = urlsplit(without_credentials(value))
    if not parts.scheme and not parts.netloc:
        return redact_path(value)
    url = urlunsplit((parts.scheme, parts.netloc, redact_path(parts.path), "", ""))
    return quote_controls(url)


def redact_text(value: str) -> str:
    """Free text (a user agent, a header) without query strings, link tokens, API keys or
    email addresses, and with control characters percent-encoded."""
    value = _QUERY.sub("", _cut(value))
    value = redact_tokens(value)
    value = _API_KEY.sub(REDACTED, value)
    return quote_controls(redact_emails(value))


#: The client's address in gunicorn's messages (``Invalid request from ip=192.0.2.1: ...``);
#: hex digits, dots and colons only, so no run of it holds another ``ip=``.
_CLIENT_IP = re.compile(r"\bip=[0-9A-Fa-f.:]+")


def _without_client_ip(match: re.Match[str]) -> str:
    return "ip=-:" if match.group(0).endswith(":") else "ip=-"


def redact_message(text: str) -> str:
    """A log message (gunicorn's error log: ``Invalid request from ip=...: Invalid HTTP method:
    '...'``, a traceback) with link tokens, API keys, email addresses and the client's address
    redacted; its line breaks kept. Linear in the length of ``text``."""
    text = _CLIENT_IP.sub(_without_client_ip, text)
    return redact_emails(_API_KEY.sub(REDACTED, redact_tokens(text)))


def _redact_variable(key: str, value: Any) -> Any:
    """One ``{name}i`` (request header), ``{name}o`` (response header) or ``{name}e`` atom."""
    if not isinstance(value, str):
        return "-"  # objects such as the socket: their repr may name the client's address
    value = _cut(value)
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


def _wsgi_text(value: str) -> str:
    """A WSGI environ string (its bytes read as Latin-1) as the UTF-8 text it spells, so a
    decoded ``%E2%80%A8`` is seen as the line separator it is."""
    try:
        return value.encode("latin-1").decode("utf-8", "replace")
    except UnicodeEncodeError:
        return value


#: The atoms the JSON access log writes as fields, whatever the format says.
JSON_ATOMS = frozenset("mUHsBLfap")
_FORMAT_ATOM = re.compile(r"%\(([^()]{1,200})\)s")


def format_atoms(access_log_format: str) -> frozenset[str]:
    """The atoms an access-log format uses (``%(U)s`` gives ``U``), with :data:`JSON_ATOMS`."""
    return JSON_ATOMS | frozenset(_FORMAT_ATOM.findall(access_log_format))


def redact_access_atoms(
    atoms: Mapping[str, Any], used: frozenset[str] | None = None
) -> dict[str, Any]:
    """gunicorn access-log atoms with nothing secret or personal left in any of them.

    ``h`` and ``u`` are ``-``, ``q`` is empty; ``U`` and ``r``'s path (``U`` read as UTF-8)
    are redacted as by :func:`redact_path`, ``f`` as by :func:`redact_url`, ``a`` as by
    :func:`redact_text`;
    ``{name}i/o/e`` atoms are ``[redacted]`` (credentials, cookies), ``-`` (client addresses,
    non-text values) or redacted as ``f`` (URLs) or ``a`` (the rest). Any other atom is left
    out, so one added by a later gunicorn is never logged unchecked. With ``used`` (the atoms
    the format asks for, :func:`format_atoms`), only those ``{name}`` atoms are redacted and
    kept: a request's other headers cost nothing. Each value is cut to
    :data:`MAX_VALUE_LENGTH` characters before it is read, so the time is bounded per atom.
    """
    path = redact_path(_wsgi_text(_cut(str(atoms.get("U") or ""))))
    redacted: dict[str, Any] = {key: atoms[key] for key in _SAFE_ATOMS if key in atoms}
    redacted.update(
        {
            key: _redact_variable(key, value)
            for key, value in atoms.items()
            if key[:1] == "{" and (used is None or key in used)
        }
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
