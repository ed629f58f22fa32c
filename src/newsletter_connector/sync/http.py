"""The runner's HTTP client: who it trusts, and a total deadline per request.

httpx timeouts apply per phase (connect, each read, each write), so a receiver that drips one
byte at a time never trips them. :class:`DeadlineTransport` runs each request (connect, TLS,
headers and the whole body) on a worker thread and gives up when the monotonic deadline
passes: the caller gets :class:`httpx.TimeoutException` at the deadline, and the request's
connection is closed so the worker ends too. Connections are not reused between requests.
"""

from __future__ import annotations

import os
import ssl
import threading
from collections.abc import Callable

import httpx

from ..settings import Settings

#: SPEC 8: the ingest request timeout, total, in seconds.
REQUEST_DEADLINE_SECONDS = 15.0


def trusted_ssl_context(settings: Settings) -> ssl.SSLContext:
    """Verify the platform against the system CA store, ``SSL_CERT_FILE`` (and
    ``SSL_CERT_DIR``) when set, and ``settings.ca_bundle`` when set."""
    context = ssl.create_default_context()  # system store; OpenSSL honours SSL_CERT_FILE/DIR
    cert_file = os.environ.get("SSL_CERT_FILE")
    if cert_file and os.path.isfile(cert_file):
        context.load_verify_locations(cafile=cert_file)
    if settings.ca_bundle:
        context.load_verify_locations(cafile=settings.ca_bundle)
    return context


class DeadlineTransport(httpx.BaseTransport):
    """Wraps a fresh inner transport per request and enforces a total deadline on it.

    :param make_inner: builds the transport one request uses (closed afterwards).
    :param deadline: seconds from the start of the request to the last byte of the body.
    """

    def __init__(self, make_inner: Callable[[], httpx.BaseTransport], deadline: float) -> None:
        if deadline <= 0:
            raise ValueError("deadline must be positive")
        self.make_inner = make_inner
        self.deadline = deadline

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        inner = self.make_inner()
        result: list[httpx.Response] = []
        errors: list[BaseException] = []
        done = threading.Event()

        def run() -> None:
            try:
                response = inner.handle_request(request)
                try:
                    body = b"".join(response.stream)  # type: ignore[arg-type]
                finally:
                    response.close()
                result.append(
                    httpx.Response(
                        response.status_code,
                        headers=response.headers,
                        content=body,
                        request=request,
                    )
                )
            except BaseException as exc:  # handed to the caller below
                errors.append(exc)
            finally:
                done.set()

        worker = threading.Thread(target=run, name="newsletter-sync-request", daemon=True)
        worker.start()
        finished = done.wait(self.deadline)
        inner.close()  # on expiry this closes the socket under the worker, which then ends
        if not finished:
            raise httpx.TimeoutException(
                f"no complete response within the {self.deadline:g}-second deadline",
                request=request,
            )
        if errors:
            raise errors[0]
        return result[0]


def build_http_client(
    settings: Settings,
    *,
    deadline: float = REQUEST_DEADLINE_SECONDS,
    inner: Callable[[], httpx.BaseTransport] | None = None,
) -> httpx.Client:
    """The client every transport sends through: no redirects, total ``deadline`` per
    request, TLS verified against :func:`trusted_ssl_context`.

    :param inner: build the per-request transport yourself (tests pass an
        :class:`httpx.MockTransport`); the deadline still applies.
    """
    if inner is None:
        context = trusted_ssl_context(settings)

        def inner() -> httpx.BaseTransport:
            return httpx.HTTPTransport(verify=context, retries=0)

    return httpx.Client(
        transport=DeadlineTransport(inner, deadline),
        follow_redirects=False,
        timeout=httpx.Timeout(deadline),
        trust_env=False,
    )
