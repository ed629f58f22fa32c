"""A real HTTPS receiver on 127.0.0.1 for delivery tests (certificates from ``trustme``).

Each request is answered by the next action of ``script`` (then ``default``):
``ok`` (200), ``500``, ``302``, ``drip`` (status line one byte per ``drip_interval`` s, never
finishing), ``reset`` (TCP RST after reading the request), ``hang`` (read, record, never
answer until the receiver stops), ``hold`` (read, record, set ``held``, then close without an
answer once ``release`` is set), ``slow`` (200 after ``slow_seconds``).
Every request that arrives whole is recorded (path, headers, parsed JSON body) before it is
answered; one whose body is cut short (its client killed mid-send) is not.
"""

from __future__ import annotations

import json
import socket
import ssl
import struct
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import trustme


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any


class TlsReceiver:
    def __init__(self, tmp_path: Path) -> None:
        self.ca = trustme.CA()
        cert = self.ca.issue_cert("127.0.0.1", "localhost")
        self.ca_file = tmp_path / "receiver-ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        cert.configure_cert(self.context)
        self.received: list[Received] = []
        self.in_flight: set[str] = set()
        self.overlaps: list[str] = []  # event ids received while already being received
        self.concurrent = 0  # requests being answered now
        self.peak_concurrent = 0  # the most requests ever answered at once
        self.script: list[str] = []
        self.default = "ok"
        self.drip_interval = 0.05
        self.slow_seconds = 1.0
        self.stopping = threading.Event()
        self.held = threading.Event()  # a ``hold`` request has arrived and is being held
        self.release = threading.Event()  # lets every held request go, unanswered
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                if len(raw) < length:  # the client died mid-body: nothing arrived
                    self.close_connection = True
                    return
                body = json.loads(raw or b"null")
                ids = {e["id"] for e in body} if isinstance(body, list) else set()
                with receiver.lock:
                    action = receiver.script.pop(0) if receiver.script else receiver.default
                    receiver.received.append(Received(self.path, dict(self.headers.items()), body))
                    receiver.overlaps.extend(sorted(ids & receiver.in_flight))
                    receiver.in_flight |= ids
                    receiver.concurrent += 1
                    receiver.peak_concurrent = max(receiver.peak_concurrent, receiver.concurrent)
                    receiver.arrived.notify_all()
                try:
                    receiver.answer(self, action)
                finally:
                    with receiver.lock:
                        receiver.in_flight -= ids
                        receiver.concurrent -= 1

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.socket = self.context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.base = f"https://127.0.0.1:{self.port}"
        # a short poll interval, so close() (server.shutdown) returns at once rather than in 0.5 s
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def answer(self, handler: BaseHTTPRequestHandler, action: str) -> None:
        if action in ("ok", "500", "302"):
            status = {"ok": 200, "500": 500, "302": 302}[action]
            body = b'{"accepted": true}' if status == 200 else b'{"error": "x"}'
            handler.send_response(status)
            if status == 302:
                handler.send_header("Location", "https://elsewhere.example/")
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
        elif action == "slow":
            self.stopping.wait(self.slow_seconds)
            self.answer(handler, "ok")
        elif action == "drip":
            deadline = time.monotonic() + 30
            try:
                for byte in b"HTTP/1.1 200 OK\r\nX-Padding: " + b"a" * 100000:
                    if self.stopping.is_set() or time.monotonic() > deadline:
                        break
                    handler.wfile.write(bytes([byte]))
                    handler.wfile.flush()
                    time.sleep(self.drip_interval)
            except OSError:
                pass
            handler.close_connection = True
        elif action == "reset":
            sock = handler.connection
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            handler.close_connection = True
            sock.close()
        elif action == "hold":
            self.held.set()
            while not (self.release.wait(0.05) or self.stopping.is_set()):
                pass
            handler.close_connection = True
        elif action == "hang":
            self.stopping.wait(60)
            handler.close_connection = True
        else:  # pragma: no cover
            raise ValueError(action)

    def wait_for(self, count: int, timeout: float = 20.0) -> None:
        with self.arrived:
            if not self.arrived.wait_for(lambda: len(self.received) >= count, timeout):
                raise AssertionError(f"expected {count} requests, got {len(self.received)}")

    def event_ids(self) -> list[str]:
        with self.lock:
            return [e["id"] for r in self.received for e in r.body]

    def close(self) -> None:
        self.stopping.set()
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
