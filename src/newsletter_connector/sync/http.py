"""The runner's HTTP client: who it trusts, and a total deadline per request.

httpx timeouts apply per phase (connect, each read, each write), so a receiver that drips one
byte at a time never trips them. Two layers make the deadline total:

- the connection pool's network backend (:class:`DeadlineBackend`) bounds each socket
  operation (connect, TLS, every read and write) by the time left until the deadline of the
  request the current thread is running, so a request ends by itself once its deadline passes
  (one TLS handshake that is itself dripped is the only per-operation exception; the caller is
  still released on time by the second layer);
- :class:`DeadlineTransport` runs the request (headers and the whole body) on a worker thread
  (reused between requests, :mod:`.workers`),
  arms that thread's deadline, and releases the caller with :class:`httpx.TimeoutException` at
  the deadline whatever the inner transport does. Nothing is ever closed from another thread
  (closing a socket under a blocked reader can let its file descriptor be reused by an
  unrelated file): the pool is closed only when no request is in flight.

Connections are kept alive and reused between requests, so a batch costs one request on an
open connection rather than a new TCP and TLS handshake (httpcore discards a connection the
platform has closed before reusing it).
"""

from __future__ import annotations

import os
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import httpcore
import httpx

from ..settings import Settings
from .workers import Job, RequestWorkers

#: SPEC 8: the ingest request timeout, total, in seconds.
REQUEST_DEADLINE_SECONDS = 15.0


class DeadlineStream(httpcore.NetworkStream):
    """A network stream whose every operation ends by the backend's deadline."""

    def __init__(self, inner: httpcore.NetworkStream, backend: DeadlineBackend) -> None:
        self.inner = inner
        self.backend = backend

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, self.backend.time_left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, self.backend.time_left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        left = self.backend.time_left(timeout, httpcore.ConnectTimeout)
        return DeadlineStream(
            self.inner.start_tls(ssl_context, server_hostname, left), self.backend
        )

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's sync backend whose socket operations end by the deadline armed (with
    :meth:`arm`) on the thread that performs them."""

    def __init__(self) -> None:
        self.inner = httpcore.SyncBackend()
        self._local = threading.local()

    def arm(self, seconds: float) -> None:
        """Give the current thread's request a deadline ``seconds`` from now."""
        self._local.deadline_at = time.monotonic() + seconds

    def time_left(self, timeout: float | None, error: type[Exception]) -> float:
        deadline_at: float | None = getattr(self._local, "deadline_at", None)
        if deadline_at is None:
            raise error("no request deadline is armed on this thread")
        left = deadline_at - time.monotonic()
        if left <= 0:
            raise error("the request deadline has passed")
        return left if timeout is None else min(timeout, left)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        left = self.time_left(timeout, httpcore.ConnectTimeout)
        stream = self.inner.connect_tcp(host, port, left, local_address, socket_options)
        return DeadlineStream(stream, self)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        left = self.time_left(timeout, httpcore.ConnectTimeout)
        return DeadlineStream(self.inner.connect_unix_socket(path, left, socket_options), self)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def deadline_http_transport(
    context: ssl.SSLContext, backend: DeadlineBackend
) -> httpx.HTTPTransport:
    """A keep-alive HTTPS transport whose socket operations end by the deadline armed on
    ``backend`` for the calling thread."""
    transport = httpx.HTTPTransport(verify=context, retries=0)
    # httpx offers no public way to pass a network backend; its pool is a plain httpcore
    # ConnectionPool, replaced here by one built with the public httpcore API.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=context, network_backend=backend, retries=0
    )
    return transport


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
    """Runs each request of ``inner`` on a worker thread with a total deadline.

    :param inner: the transport every request goes through (kept, not rebuilt per request).
    :param deadline: seconds from the start of the request to the last byte of the body.
    :param arm: called on the worker thread before the request with ``deadline``, so the
        inner transport's socket operations end by it too (see :class:`DeadlineBackend`).
    """

    def __init__(
        self,
        inner: httpx.BaseTransport,
        deadline: float,
        *,
        arm: Callable[[float], None] | None = None,
    ) -> None:
        if deadline <= 0:
            raise ValueError("deadline must be positive")
        self.inner = inner
        self.deadline = deadline
        self.arm = arm
        self.workers = RequestWorkers()
        self._lock = threading.Lock()
        self._in_flight = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        result: list[httpx.Response] = []
        errors: list[BaseException] = []

        def run() -> None:
            try:
                if self.arm is not None:
                    self.arm(self.deadline)
                response = self.inner.handle_request(request)
                try:
                    body = b"".join(response.stream)  # type: ignore[arg-type]
                finally:
                    response.close()  # on this thread: returns the connection to the pool
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
                with self._lock:
                    self._in_flight -= 1
                job.done.set()

        job = Job(run)
        with self._lock:
            self._in_flight += 1
        self.workers.submit(job)
        if not job.done.wait(self.deadline):
            job.abandoned = True
            raise httpx.TimeoutException(
                f"no complete response within the {self.deadline:g}-second deadline",
                request=request,
            )
        if errors:
            raise errors[0]
        return result[0]

    def close(self) -> None:
        """Close the pool, unless a timed-out request's worker still holds a connection: that
        worker ends by its own deadline, and its connection must not be closed under it."""
        self.workers.close()
        with self._lock:
            idle = self._in_flight == 0
        if idle:
            self.inner.close()


def build_http_client(
    settings: Settings,
    *,
    deadline: float = REQUEST_DEADLINE_SECONDS,
    inner: Callable[[], httpx.BaseTransport] | None = None,
) -> httpx.Client:
    """The client every transport sends through: no redirects, total ``deadline`` per
    request, TLS verified against :func:`trusted_ssl_context`.

    :param inner: build the transport yourself (tests pass an :class:`httpx.MockTransport`);
        it is built once and the total deadline still applies.
    """
    if inner is None:
        backend = DeadlineBackend()
        transport = DeadlineTransport(
            deadline_http_transport(trusted_ssl_context(settings), backend),
            deadline,
            arm=backend.arm,
        )
    else:
        transport = DeadlineTransport(inner(), deadline)

    return httpx.Client(
        transport=transport,
        follow_redirects=False,
        timeout=httpx.Timeout(deadline),
        trust_env=False,
    )
