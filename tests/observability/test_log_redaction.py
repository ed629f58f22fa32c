"""Access logs never carry link tokens, query strings, keys, credentials, email addresses or
client addresses."""

from __future__ import annotations

import base64
import datetime
import socket
from types import SimpleNamespace
from typing import Any

import pytest
from gunicorn.config import Config
from hypothesis import given
from hypothesis import strategies as st

from newsletter_connector.log_redaction import (
    redact_access_atoms,
    redact_path,
    redact_text,
    redact_tokens,
    redact_url,
)
from newsletter_connector.observability.gunicorn_logging import RedactingLogger


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/confirm/abcDEF123_-", "/confirm/[redacted]"),
        ("/newsletter/unsubscribe/tok?x=1", "/newsletter/unsubscribe/[redacted]"),
        ("/profile/tok/extra", "/profile/[redacted]/extra"),
        ("/api/newsletter/v1/subscribers?cursor=abc", "/api/newsletter/v1/subscribers"),
        ("/signup", "/signup"),
        ("/confirmation/page", "/confirmation/page"),
        (
            "/api/newsletter/v1/subscribers/alice%40example.org",
            "/api/newsletter/v1/subscribers/[redacted]",
        ),
        (
            "/site/news/api/v1/subscribers/Alice%40Example.ORG",
            "/site/news/api/v1/subscribers/[redacted]",
        ),
        ("/api/subscribers/alice@example.org/", "/api/subscribers/[redacted]/"),
        ("/api/subscribers/alice%2540example.org", "/api/subscribers/[redacted]"),
        ("/a/b#frag", "/a/b"),
    ],
)
def test_redact_path(path: str, expected: str) -> None:
    assert redact_path(path) == expected


def test_redact_url_drops_user_info_query_and_tokens() -> None:
    url = "https://user:pw@news.example/n/profile/TOKEN123?k=nlk_x#top"
    assert redact_url(url) == "https://news.example/n/profile/[redacted]"
    assert redact_url("-") == "-"


def test_redact_text_drops_addresses_keys_tokens_and_queries() -> None:
    text = "Bot/1.0 (+mailto:Ann@Example.org; ann%40example.org) nlk_abc /confirm/tok?x=y"
    assert (
        redact_text(text)
        == "Bot/1.0 (+mailto:[redacted]; [redacted]) [redacted] /confirm/[redacted]"
    )
    assert redact_text("Mozilla/5.0 (X11; Linux x86_64)") == "Mozilla/5.0 (X11; Linux x86_64)"


def test_the_gunicorn_runner_names_the_same_redacting_logger() -> None:
    """An operator's gunicorn.conf.py may name the text logger by either spelling
    (docs/security.md, "Logs"); both are one class, and ``serve`` names the JSON one beside it."""
    from newsletter_connector import gunicorn_app
    from newsletter_connector.settings import Settings

    assert gunicorn_app.RedactingLogger is RedactingLogger
    for log_format, name in (("text", "RedactingLogger"), ("json", "JsonRedactingLogger")):
        settings = Settings(database_url="sqlite://", log_format=log_format)
        options = gunicorn_app.observability_options(settings)
        assert options["logger_class"] == (
            f"newsletter_connector.observability.gunicorn_logging.{name}"
        )


def test_every_atom_gunicorn_offers_is_redacted() -> None:
    """Every atom of a real gunicorn ``atoms()`` call, including every header and environ
    variable (more than any one format can name)."""
    token, key, email, ip = (
        "tok0123456789abcdef",
        "nlk_" + "k" * 43,
        "ann@example.org",
        "198.51.100.7",
    )
    credentials = base64.b64encode(b"basic-user:basic-pass").decode()
    peer = socket.socket()
    headers = [
        ("AUTHORIZATION", f"Basic {credentials}"),
        ("X-API-KEY", key),
        ("COOKIE", f"nc_csrf={token}"),
        ("REFERER", f"https://u:p@x.example/profile/{token}?e={email}"),
        ("USER-AGENT", f"bot (+mailto:{email})"),
        ("X-FORWARDED-FOR", ip),
        ("FORWARDED", f"for={ip}"),
        ("X-ORIGINAL-URL", f"/confirm/{token}"),
    ]
    environ = {
        "REMOTE_ADDR": ip,
        "REMOTE_PORT": "50000",
        "REMOTE_USER": "basic-user",
        "REQUEST_METHOD": "GET",
        "RAW_URI": f"/api/subscribers/ann%40example.org?key={key}",
        "PATH_INFO": "/api/subscribers/ann@example.org",
        "QUERY_STRING": f"key={key}",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_AUTHORIZATION": f"Basic {credentials}",
        "HTTP_COOKIE": f"nc_csrf={token}",
        "HTTP_REFERER": f"https://x.example/unsubscribe/{token}",
        "HTTP_USER_AGENT": f"bot (+mailto:{email})",
        "HTTP_X_FORWARDED_FOR": ip,
        "gunicorn.socket": peer,
    }
    request = SimpleNamespace(headers=headers)
    response = SimpleNamespace(
        status="303 See Other",
        sent=0,
        headers=[("Location", f"/profile/{token}?saved=1"), ("Set-Cookie", f"nc_csrf={token}")],
    )
    try:
        atoms = RedactingLogger(Config()).atoms(
            response, request, environ, datetime.timedelta(seconds=1)
        )
    finally:
        peer.close()
    assert atoms["u"] == "-" and atoms["h"] == "-"
    assert atoms["r"] == "GET /api/subscribers/[redacted] HTTP/1.1"
    logged = "\n".join(f"{name}={value}" for name, value in atoms.items()).lower()
    for secret in (
        token,
        key,
        email,
        ip,
        credentials,
        "basic-user",
        "basic-pass",
        "u:p@",
        "ann%40",
    ):
        assert secret.lower() not in logged, secret


#: Percent-encoded line breaks, NUL, ESC and a line separator around a token.
CONTROLS = "%0A%0D%00%1B%E2%80%A8"
DECODED_CONTROLS = "\n\r\x00\x1b\u2028"


@pytest.mark.parametrize(
    ("redact", "value", "expected"),
    [
        (
            redact_text,
            "Mozilla profile/abc%0A127.0.0.1 - - GET /admin 200%0D%1B[31m",
            "Mozilla profile/[redacted]%0A127.0.0.1 - - GET /admin 200%0D%1B[31m",
        ),
        (
            redact_text,
            f"bot {CONTROLS}%70rofile%2Ftok{CONTROLS}x",
            f"bot {CONTROLS}profile/[redacted]{CONTROLS}x",
        ),
        (
            redact_path,
            f"/n{CONTROLS}/profile%252Ftok{CONTROLS}",
            f"/n{CONTROLS}/profile/[redacted]{CONTROLS}",
        ),
        (
            redact_url,
            f"https://news.example/n{CONTROLS}/Confirm%5Ctok{CONTROLS}/x",
            f"https://news.example/n{CONTROLS}/Confirm/[redacted]{CONTROLS}/x",
        ),
        # Already decoded (gunicorn's PATH_INFO, a header): written back encoded.
        (redact_path, f"/n{DECODED_CONTROLS}/profile/tok", f"/n{CONTROLS}/profile/[redacted]"),
        (redact_text, f"UA\x1b[31m\x7f\x85{DECODED_CONTROLS}", f"UA%1B[31m%7F%C2%85{CONTROLS}"),
    ],
)
def test_encoded_control_characters_next_to_a_token_stay_encoded(
    redact: Any, value: str, expected: str
) -> None:
    assert redact(value) == expected


def test_no_control_character_reaches_an_access_log_atom() -> None:
    redacted = redact_access_atoms(
        {
            "m": "GET",
            "U": f"/profile/tok{DECODED_CONTROLS}127.0.0.1 - - GET /admin",
            "H": "HTTP/1.1",
            "f": f"https://news.example/profile%2Ftok{CONTROLS}",
            "a": f"Mozilla profile/abc{CONTROLS}",
            "{x-custom}i": f"v{CONTROLS}profile/tok{DECODED_CONTROLS}",
        }
    )
    for name, value in redacted.items():
        assert not any(c in str(value) for c in DECODED_CONTROLS), (name, value)
        assert "tok" not in str(value), (name, value)


@given(st.text(alphabet=st.sampled_from(list("%0aAfF2E5cC/\\ \n\x1bprofile8")), max_size=60))
def test_redacting_writes_no_character_the_text_did_not_hold(text: str) -> None:
    """Only the redaction itself is new: decoding to find a token adds nothing else."""
    for redacted in (redact_tokens(text), redact_tokens(f"/profile/{text}")):
        assert set(redacted) <= set(text) | set("/profile[redacted]")


@pytest.mark.parametrize(
    ("message", "redacted"),
    [
        (
            "Invalid request from ip=192.0.2.17: Invalid HTTP method: 'GET'",
            "Invalid request from ip=-: Invalid HTTP method: 'GET'",
        ),
        (
            "Invalid request from ip=2001:db8::1: Invalid HTTP Version",
            "Invalid request from ip=-: Invalid HTTP Version",
        ),
        ("Invalid request from ip=::1", "Invalid request from ip=-"),
    ],
)
def test_an_error_log_message_keeps_no_client_address(message: str, redacted: str) -> None:
    """gunicorn names the client in a refused request's message; the access log never does."""
    from newsletter_connector.log_redaction import redact_message

    assert redact_message(message) == redacted
