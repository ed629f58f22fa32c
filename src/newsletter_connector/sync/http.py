"""The runner's HTTP client: who it trusts, and a total deadline per request.

httpx timeouts apply per phase (connect, each read, each write), so a receiver that drips one
byte at a time never trips them. The deadline is made total by the connection pool's network
backend (:class:`DeadlineBackend`): every operation of a request — name resolution, connect,
the TLS handshake, every read and every write — is bounded by the time left until the deadline
armed for the request on the thread that runs it, so a request ends by itself once its deadline
passes:

- reads, the TLS handshake and connects are single socket operations given the time left
  (since Python 3.5 an SSL socket's timeout bounds a whole handshake or read, not each byte);
- a write is a loop of sends, each given the time that is left (a platform reading a byte at a
  time cannot stretch it);
- name resolution (``getaddrinfo`` has no timeout) runs on a helper thread that the request
  stops waiting for at the deadline; an IP address needs none.

So requests run on the caller's thread (issue 10: handing each one to a worker thread cost
more CPU than the whole HTTP exchange of a bare client). A transport whose sockets the backend
does not bound (tests pass an :class:`httpx.MockTransport`) is instead run on a worker thread
that the caller stops waiting for at the deadline (:class:`DeadlineTransport`). Nothing is ever
closed from another thread (closing a socket under a blocked reader can let its file
descriptor be reused by an unrelated file).

Connections are kept alive and reused between requests, so a batch costs one request on an
open connection rather than a new TCP and TLS handshake (httpcore discards a connection the
platform has closed before reusing it).
"""

from __future__ import annotations

import http.cookiejar
import ipaddress
import os
import socket
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
        """Send all of ``buffer`` by the deadline: each send is given only the time left
        (httpcore's own loop gives every send the whole timeout again)."""
        sock = self.inner.get_extra_info("socket")
        if sock is None:  # not a socket stream: one bounded write is all we can do
            self.inner.write(buffer, self.backend.time_left(timeout, httpcore.WriteTimeout))
            return
        left = memoryview(buffer)
        try:
            while left:
                sock.settimeout(self.backend.time_left(timeout, httpcore.WriteTimeout))
                left = left[sock.send(left) :]
        except TimeoutError as exc:
            raise httpcore.WriteTimeout(exc) from exc
        except OSError as exc:
            raise httpcore.WriteError(exc) from exc

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
    """httpcore's sync backend whose operations end by the deadline armed (with :meth:`arm`)
    on the thread that performs them. Host names are resolved on helper threads
    (:class:`~.workers.RequestWorkers` named :data:`RESOLVER_THREAD_NAME`), waited for only
    until the deadline; close them with :meth:`close`."""

    RESOLVER_THREAD_NAME = "newsletter-sync-resolve"

    def __init__(self) -> None:
        self.inner = httpcore.SyncBackend()
        self.resolvers = RequestWorkers(thread_name=self.RESOLVER_THREAD_NAME)
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

    def resolve(self, host: str, port: int, timeout: float | None = None) -> list[str]:
        """The addresses to try for ``host``, in the resolver's order; an IP address as is.

        :raises httpcore.ConnectTimeout: the resolver did not answer by the deadline.
        :raises httpcore.ConnectError: the name does not resolve.
        """
        try:
            ipaddress.ip_address(host)
        except ValueError:
            pass
        else:
            return [host]
        found: list[list[str]] = []
        errors: list[OSError] = []

        def run() -> None:
            try:
                answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
                found.append(list(dict.fromkeys(str(answer[4][0]) for answer in answers)))
            except OSError as exc:
                errors.append(exc)
            finally:
                job.done.set()

        job = Job(run)
        self.resolvers.submit(job)
        if not job.done.wait(self.time_left(timeout, httpcore.ConnectTimeout)):
            job.abandoned = True
            raise httpcore.ConnectTimeout(f"{host} did not resolve by the request deadline")
        if errors or not found or not found[0]:
            raise httpcore.ConnectError(f"{host} does not resolve: {errors[0] if errors else ''}")
        return found[0]

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        failure: Exception | None = None
        for address in self.resolve(host, port, timeout):
            left = self.time_left(timeout, httpcore.ConnectTimeout)
            try:
                stream = self.inner.connect_tcp(address, port, left, local_address, socket_options)
            except httpcore.ConnectError as exc:  # the next address, as create_connection does
                failure = exc
                continue
            return DeadlineStream(stream, self)
        raise failure or httpcore.ConnectError(f"{host} has no address")

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        left = self.time_left(timeout, httpcore.ConnectTimeout)
        return DeadlineStream(self.inner.connect_unix_socket(path, left, socket_options), self)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)

    def close(self) -> None:
        """Let idle resolver threads exit (one still resolving exits when it is done)."""
        self.resolvers.close()


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
    """Runs each request of ``inner`` with a total deadline.

    :param inner: the transport every request goes through (kept, not rebuilt per request).
    :param deadline: seconds from the start of the request to the last byte of the body.
    :param backend: the :class:`DeadlineBackend` under ``inner``'s connection pool, when it has
        one. Then every operation of a request ends by the deadline armed on the caller's
        thread, and the request runs there. Without one, ``inner`` is run on a worker thread
        (:mod:`.workers`, reused between requests), which the caller stops waiting for at the
        deadline with :class:`httpx.TimeoutException`.
    """

    def __init__(
        self,
        inner: httpx.BaseTransport,
        deadline: float,
        *,
        backend: DeadlineBackend | None = None,
    ) -> None:
        if deadline <= 0:
            raise ValueError("deadline must be positive")
        self.inner = inner
        self.deadline = deadline
        self.backend = backend
        self.workers = RequestWorkers()
        self._lock = threading.Lock()
        self._in_flight = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.backend is None:
            return self._on_worker(request)
        self.backend.arm(self.deadline)
        response = self.inner.handle_request(request)
        try:
            response.read()  # the whole body, by the deadline; returns the connection
        finally:
            response.close()
        return response

    def _on_worker(self, request: httpx.Request) -> httpx.Response:
        result: list[httpx.Response] = []
        errors: list[BaseException] = []

        def run() -> None:
            try:
                response = self.inner.handle_request(request)
                try:
                    response.read()
                finally:
                    response.close()  # on this thread: returns the connection to the pool
                result.append(response)
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
        if self.backend is not None:
            self.backend.close()
        with self._lock:
            idle = self._in_flight == 0
        if idle:
            self.inner.close()


class CookiesNeverKept(http.cookiejar.CookieJar):
    """A cookie jar that keeps nothing: a push carries its body and headers, never state a
    platform asked to be sent back."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        pass

    def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:
        pass


class RunnerClient(httpx.Client):
    """The runner's :class:`httpx.Client` (what every transport is given): no redirects, no
    cookies kept (:class:`CookiesNeverKept`), and :meth:`push`, one request handed straight to
    the deadline transport.

    A push skips the client's cookie, auth and redirect handling, none of which it needs:
    redirects are failures anyway, no auth is configured, and no cookie is ever kept. Those
    layers were a fifth of a push's CPU (issue 10). The client's default headers are sent as
    with :meth:`post`.
    """

    def __init__(self, transport: DeadlineTransport, deadline: float) -> None:
        super().__init__(
            transport=transport,
            cookies=CookiesNeverKept(),
            follow_redirects=False,
            timeout=httpx.Timeout(deadline),
            trust_env=False,
        )
        self.deadline_transport = transport
        self._default_headers = dict(self.headers)
        self._extensions = {"timeout": self.timeout.as_dict()}

    def push(self, url: httpx.URL, *, content: bytes, headers: dict[str, str]) -> httpx.Response:
        """``POST`` ``content`` to ``url`` with ``headers`` (added to the client's defaults);
        the whole response, read by the deadline."""
        if self.is_closed:
            raise RuntimeError("cannot push: the runner's HTTP client has been closed")
        request = httpx.Request(
            "POST",
            url,
            content=content,
            headers={**self._default_headers, **headers},
            extensions=self._extensions,
        )
        response = self.deadline_transport.handle_request(request)
        response.request = request
        return response


def build_http_client(
    settings: Settings,
    *,
    deadline: float = REQUEST_DEADLINE_SECONDS,
    inner: Callable[[], httpx.BaseTransport] | None = None,
) -> RunnerClient:
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
            backend=backend,
        )
    else:
        transport = DeadlineTransport(inner(), deadline)
    return RunnerClient(transport, deadline)
