"""The total deadline of every request of the HTTP client (:mod:`newsletter_connector.http_client`).

Every operation of a request (resolution, connect, TLS handshake, each read and each send) is
bounded by the time left until the deadline armed on the calling thread, so a request ends by itself
on that thread and nothing is closed from another thread. Connections are kept alive between
requests. Why this design: docs/contributing/decisions/issues-and-delivery.md, "The 15-second
deadline is total".
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

from .workers import Job, RequestWorkers


class DeadlineStream(httpcore.NetworkStream):
    """A network stream whose every operation ends by the backend's deadline."""

    def __init__(self, inner: httpcore.NetworkStream, backend: DeadlineBackend) -> None:
        self.inner = inner
        self.backend = backend

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, self.backend.time_left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Send all of ``buffer`` by the deadline, each send given only the time left."""
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
    """httpcore's sync backend, TCP only, for a pool without retries: every operation ends by
    the deadline armed (:meth:`arm`) on its thread; host names resolve on helper threads
    waited for only until then (closed by :meth:`close`)."""

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
        :class:`httpcore.ConnectTimeout` without an answer by the deadline,
        :class:`httpcore.ConnectError` when the name does not resolve."""
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

    def close(self) -> None:
        """Let idle resolver threads exit (one still resolving exits when it is done)."""
        self.resolvers.close()


#: httpcore's exceptions as the httpx ones a client's caller expects, most specific first.
HTTPCORE_TO_HTTPX: tuple[tuple[type[Exception], type[httpx.RequestError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


def httpx_error_for(exc: Exception) -> type[httpx.RequestError] | None:
    """The httpx exception class standing for httpcore's ``exc`` (``None``: not httpcore's)."""
    for core_error, httpx_error in HTTPCORE_TO_HTTPX:
        if isinstance(exc, core_error):
            return httpx_error
    return None


class DeadlinePoolTransport(httpx.BaseTransport):
    """An HTTPS transport (keep-alive pool, no retries, trusting ``context``) whose every
    request, run on the caller's thread, ends with its whole body read by ``deadline``."""

    def __init__(self, context: ssl.SSLContext, deadline: float) -> None:
        if deadline <= 0:
            raise ValueError("deadline must be positive")
        self.deadline = deadline
        self.backend = DeadlineBackend()
        self.pool = httpcore.ConnectionPool(
            ssl_context=context, network_backend=self.backend, retries=0
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        self.backend.arm(self.deadline)
        try:
            core_response = self.pool.handle_request(core_request)
            try:
                content = core_response.read()  # the whole body, by the deadline
            finally:
                core_response.close()  # returns the connection to the pool
        except Exception as exc:
            httpx_error = httpx_error_for(exc)
            if httpx_error is None:
                raise
            raise httpx_error(str(exc), request=request) from exc
        return httpx.Response(
            status_code=core_response.status,
            headers=core_response.headers,
            stream=httpx.ByteStream(content),
            extensions=core_response.extensions,
        )

    def close(self) -> None:
        self.pool.close()
        self.backend.close()


class WorkerDeadlineTransport(httpx.BaseTransport):
    """Runs each request of ``inner`` (such as :class:`httpx.MockTransport`) on a reused worker
    thread that the caller stops waiting for at ``deadline`` (:class:`httpx.TimeoutException`);
    a timed-out request ends on its own thread."""

    def __init__(self, inner: httpx.BaseTransport, deadline: float) -> None:
        if deadline <= 0:
            raise ValueError("deadline must be positive")
        self.inner = inner
        self.deadline = deadline
        self.workers = RequestWorkers()
        self._lock = threading.Lock()
        self._in_flight = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
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
        """Close ``inner``, unless a timed-out request's worker still uses it: that worker
        ends by itself, and nothing must be closed under it."""
        self.workers.close()
        with self._lock:
            idle = self._in_flight == 0
        if idle:
            self.inner.close()
