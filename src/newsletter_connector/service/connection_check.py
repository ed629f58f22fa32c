"""Whether the platform answers the active connection: one request where the connection's
transport says it can be tested (its descriptor's ``check_path``: ``POST
{platform_base}{check_path}`` with an empty JSON array and the bearer token), through the
runner's own HTTP client (same trust, no redirects, a 15 s total deadline).

The outcome is said in plain words; it never contains the token. A transport without a
``check_path`` has no test request, and the outcome says so.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass

import httpx

from ..descriptors import OutboundTransport
from ..http_client import REQUEST_DEADLINE_SECONDS, build_http_client
from ..https_rule import carries_credentials, scheme_allowed, without_credentials
from ..settings import Settings
from ..storage.access_records import ConnectionRecord
from ..storage.transport import bearer_headers, header_safe_token

#: The outcome for a token stored before tokens had to be printable ASCII.
UNSENDABLE_OUTCOME = (
    "not tested: the token has characters an HTTP header cannot carry (only printable ASCII "
    "can), so nothing is pushed; set the connection again with a new token"
)


@dataclass(frozen=True)
class ConnectionCheck:
    """The outcome of a connection test: ``reachable`` only for a 2xx answer."""

    reachable: bool
    message: str


def check_connection(
    settings: Settings,
    connection: ConnectionRecord,
    transport: OutboundTransport | None,
    *,
    deadline: float = REQUEST_DEADLINE_SECONDS,
) -> ConnectionCheck:
    """POST ``[]`` to the address ``transport`` (the connection's, ``None`` when no installed
    plugin offers it) names for a test, and say what happened."""
    if transport is None or transport.check_path is None:
        return ConnectionCheck(
            False,
            f"the {connection.transport!r} transport cannot be tested from here; "
            "run a sync and check outbox status",
        )
    url = connection.platform_base + transport.check_path
    shown = without_credentials(url)
    # The runner pushes nothing to such an address (stored before the rules held), so
    # "reachable" would mislead.
    if not scheme_allowed(url, allow_http=settings.allow_insecure_http_delivery):
        return ConnectionCheck(False, f"not tested: {shown} is not https; nothing is pushed")
    if carries_credentials(url):
        return ConnectionCheck(
            False,
            f"not tested: the address {shown} carries credentials, so nothing is pushed; "
            "set the connection again without them",
        )
    if not header_safe_token(connection.token):
        return ConnectionCheck(False, UNSENDABLE_OUTCOME)
    try:
        with build_http_client(settings, deadline=deadline) as client:
            response = client.post(url, content=b"[]", headers=bearer_headers(connection.token))
    except httpx.TimeoutException:
        message = f"not reachable: no answer from {shown} within {deadline:g} s"
    except httpx.HTTPError as error:
        message = f"not reachable: {shown}: {_plain_reason(error)}"
    else:
        status = response.status_code
        if 200 <= status < 300:
            return ConnectionCheck(True, f"reachable: HTTP {status} from {shown}")
        message = f"not reachable: HTTP {status} from {shown}{_status_hint(status)}"
    return ConnectionCheck(False, message.replace(connection.token, "<token>"))


def _plain_reason(error: httpx.HTTPError) -> str:
    """A transport error in words (certificate trouble named as such)."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return (
                "its TLS certificate is not trusted (for a private CA, set ca_bundle): "
                f"{cause.verify_message}"
            )
        cause = cause.__cause__ or cause.__context__
    text = str(error) or type(error).__name__
    if "CERTIFICATE_VERIFY_FAILED" in text:
        return f"its TLS certificate is not trusted (for a private CA, set ca_bundle): {text}"
    return f"could not connect ({text})"


def _status_hint(status: int) -> str:
    if status in (401, 403):
        return " (the platform refused the token)"
    if 300 <= status < 400:
        return " (a redirect; pushes never follow redirects)"
    return ""
