"""Nothing secret or personal in the access log, whatever atoms its format asks for.

A real gunicorn serves the standalone app with ``RedactingLogger`` and an access-log format
using every atom (and the headers and environ variables that carry credentials, cookies,
URLs and client addresses); requests carry link tokens, an API key, Basic credentials, a CSRF
cookie, a client address and an email address in paths, query strings and headers. The log
is then searched for each of them, also in its encoded forms.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
import textwrap
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from newsletter_connector.web.pages.csrf import COOKIE_NAME
from tests.support.paths import ROOT
from tests.support.servers import serving, serving_to_file
from tests.support.waiting import free_port

pytestmark = pytest.mark.system

API = "/api/newsletter/v1"
EMAIL = "Alice.Secret@Example.org"
CLIENT_IP = "203.0.113.9"
LISTSOURCE_USER = "platform-user-7"
LISTSOURCE_KEY = "listsource-key-0123456789"
#: Every one-letter atom gunicorn documents.
ATOMS = list("hlutrmUqHsBbfaTDLpM")
VARIABLES = [
    "{authorization}i",
    "{cookie}i",
    "{referer}i",
    "{user-agent}i",
    "{x-forwarded-for}i",
    "{x-original-url}i",
    "{set-cookie}o",
    "{location}o",
    "{http_authorization}e",
    "{http_cookie}e",
    "{http_referer}e",
    "{http_user_agent}e",
    "{http_x_forwarded_for}e",
    "{raw_uri}e",
    "{path_info}e",
    "{query_string}e",
    "{remote_addr}e",
    "{remote_port}e",
    "{gunicorn.socket}e",
    "{wsgi.input}e",
]
FORMAT = "ACCESS " + " ".join(f"{name}=%({name})s" for name in ATOMS + VARIABLES)
CONFIG = """
    bind = "127.0.0.1:{port}"
    workers = 1
    accesslog = {log!r}
    access_log_format = {format!r}
    logger_class = "newsletter_connector.observability.gunicorn_logging.RedactingLogger"
"""


def basic(user: str, key: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{key}".encode()).decode()


def encodings(secret: str) -> set[str]:
    """``secret`` as it could appear in a log line: as is, percent-encoded once and twice."""
    once = quote(secret, safe="")
    return {secret, once, quote(once, safe=""), secret.replace("@", "%40")}


def test_the_access_log_holds_no_secret_in_any_atom(
    newsletter_service: Any, newsletter_settings: Any, tmp_path: Path
) -> None:
    api_key = newsletter_service.admin.create_api_key("log-test").key
    newsletter_service.admin.set_listsource_credentials(LISTSOURCE_USER, LISTSOURCE_KEY)
    record = newsletter_service.subscribers.subscribe({"email": EMAIL}).record
    tokens = [record.confirm_token, record.unsubscribe_token, record.profile_token]

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "access.log"
    config = tmp_path / "gunicorn.conf.py"
    config.write_text(textwrap.dedent(CONFIG.format(port=port, log=str(log), format=FORMAT)))
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": base,
        "NEWSLETTER_ALLOW_INSECURE_HTTP_LINKS": "true",  # served on loopback, as a local trial
        "NEWSLETTER_SITE_SECRET": newsletter_settings.site_secret.get_secret_value(),
    }
    command = [sys.executable, "-m", "gunicorn", "-c", str(config), "examples.standalone.wsgi:app"]
    bearer = {"Authorization": f"Bearer {api_key}"}
    profile = f"/profile/{record.profile_token}"
    statuses = []
    with (
        serving(command, probe_url=base + API + "/openapi.json", env=env, cwd=ROOT),
        httpx.Client(base_url=base, follow_redirects=False, timeout=10) as client,
    ):
        noisy = {
            "Referer": f"https://lurker:pw-in-referer@news.example{profile}?k={api_key}",
            "User-Agent": f"MailBot/1.0 (+mailto:{EMAIL})",
            "X-Forwarded-For": CLIENT_IP,
            "X-Original-URL": f"/unsubscribe/{record.unsubscribe_token}?email={EMAIL}",
        }
        requests = [
            ("GET", f"/confirm/{record.confirm_token}?t={record.confirm_token}", noisy),
            ("GET", f"{API}/subscribers/{quote(EMAIL, safe='')}", bearer),
            ("GET", f"{API}/subscribers/{quote(EMAIL.lower(), safe='')}?x={EMAIL}", bearer),
            ("GET", f"{API}/subscribers/{EMAIL}", bearer),
            ("GET", f"{API}/subscribers/{EMAIL.upper().replace('@', '%40')}", bearer),
            ("GET", f"{API}/subscribers/{quote(quote(EMAIL, safe=''), safe='')}", bearer),
            (
                "GET",
                "/api/listsource/api/lists",
                {"Authorization": basic(LISTSOURCE_USER, LISTSOURCE_KEY)},
            ),
            ("GET", f"/unsubscribe/{record.unsubscribe_token}", {}),
        ]
        for method, path, headers in requests:
            statuses.append(client.request(method, path, headers=headers).status_code)
        page = client.get(profile)  # sets the CSRF cookie ({set-cookie}o)
        cookie = page.cookies[COOKIE_NAME]
        csrf = re.search(r'name="csrf_token" value="([^"]*)"', page.text)
        assert csrf
        saved = client.post(  # redirects to the profile with its token ({location}o)
            profile,
            data={"csrf_token": csrf.group(1), "first_name": "Alice"},
            headers={"Origin": base},
        )
        statuses += [page.status_code, saved.status_code]
    assert statuses == [200, 200, 200, 200, 200, 400, 200, 200, 200, 303], statuses
    assert saved.headers["location"].endswith(f"{profile}?saved=1")

    text = log.read_text()
    lines = [line for line in text.splitlines() if line.startswith("ACCESS ")]
    assert len(lines) >= len(statuses), text  # every request was logged, with every atom
    assert "/confirm/[redacted]" in text and "/subscribers/[redacted]" in text
    assert all(" u=- " in line and line.startswith("ACCESS h=- ") for line in lines)
    secrets = [
        *tokens,
        api_key,
        api_key[:12],
        LISTSOURCE_USER,
        LISTSOURCE_KEY,
        basic(LISTSOURCE_USER, LISTSOURCE_KEY).split()[1],
        "lurker",
        "pw-in-referer",
        cookie,
        CLIENT_IP,
    ]
    lowered = text.lower()
    for secret in secrets:
        for form in encodings(secret):
            assert form not in text, f"{form!r} is in the access log"
    for form in encodings(EMAIL.lower()):
        assert form.lower() not in lowered, f"{form!r} is in the access log"
    assert "alice.secret" not in lowered


#: Line breaks, NUL, ESC and a line separator, percent-encoded, around link tokens.
CONTROLS = "%0A%0D%00%1B%E2%80%A8"
FORGED = "127.0.0.1 - - [27/Nov/2026] GET /admin 200"


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_encoded_control_characters_never_split_or_rewrite_an_access_line(
    newsletter_settings: Any, tmp_path: Path, log_format: str
) -> None:
    """``serve``'s access log, as text and as JSON: a user agent, referer and path carrying a
    token with encoded line breaks and escapes around it are logged on one line each, the
    token redacted and not one control character written."""
    token = "tok3nSECRET0123456789abcdefXYZ"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")},
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": base,
        "NEWSLETTER_ALLOW_INSECURE_HTTP_LINKS": "true",  # served on loopback, as a local trial
        "NEWSLETTER_SITE_SECRET": newsletter_settings.site_secret.get_secret_value(),
        "NEWSLETTER_LOG_FORMAT": log_format,
    }
    command = [sys.executable, "-m", "newsletter_connector", "serve", "--workers", "1"]
    headers = {
        "User-Agent": f"Mozilla profile/{token}%0A{FORGED}%0D%1B[31m{CONTROLS}",
        "Referer": f"https://news.example/n{CONTROLS}/profile%2F{token}{CONTROLS}x",
    }
    paths = [f"/n{CONTROLS}/profile%2F{token}{CONTROLS}{FORGED.replace(' ', '%20')}", "/healthz"]
    with (
        serving_to_file(
            [*command, "--bind", f"127.0.0.1:{port}"],
            probe_url=base + "/healthz",
            env=env,
            log_path=log,
        ),
        httpx.Client(base_url=base, timeout=10) as client,
    ):
        for path in paths:
            client.get(path, headers=headers)
    text = log.read_text()
    assert token not in text
    for control in ("\r", "\x00", "\x1b", "\u2028", "\x85"):
        assert control not in text, (control, text)
    lines = text.splitlines()
    assert not [line for line in lines if line.startswith("127.0.0.1")], text
    if log_format == "json":
        records = [json.loads(line) for line in lines]
        access = [r for r in records if r.get("user_agent", "").startswith("Mozilla")]
        assert len(access) == len(paths), text
        fields = json.dumps(access, ensure_ascii=False)
        assert not any(c in fields for c in "\n\r\x00\x1b\u2028"), fields
        (first, _) = access
        assert first["path"] == f"/n{CONTROLS}/profile/[redacted]{CONTROLS}{FORGED}"
        assert first["user_agent"].startswith(f"Mozilla profile/[redacted]%0A{FORGED}")
    else:
        access = [line for line in lines if "Mozilla profile/[redacted]%0A" in line]
        assert len(access) == len(paths), text
        assert all(f"/profile/[redacted]{CONTROLS}" in line for line in access), access
