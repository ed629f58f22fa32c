"""A local OTLP/HTTP trace receiver (protobuf), standing in for a site's collector: it decodes
every export it is sent and keeps the spans, each as a plain dict, and the raw bodies."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

_KINDS = {1: "internal", 2: "server", 3: "client"}


def _value(any_value: Any) -> Any:
    field = any_value.WhichOneof("value")
    return getattr(any_value, field) if field else None


class OtlpReceiver:
    """Listens on 127.0.0.1 at :attr:`endpoint` (``/v1/traces``) until :meth:`close`."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.bodies: list[bytes] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.add(body, request)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def add(self, body: bytes, request: ExportTraceServiceRequest) -> None:
        found = [
            {
                "name": span.name,
                "kind": _KINDS.get(span.kind, str(span.kind)),
                "service": {a.key: _value(a.value) for a in resource.resource.attributes}.get(
                    "service.name"
                ),
                "attributes": {a.key: _value(a.value) for a in span.attributes},
            }
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]
        with self.lock:
            self.bodies.append(body)
            self.spans.extend(found)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
